"""Answers held to a JSON schema: OpenAI's ``response_format`` (``json_schema``, ``json_object``), by
llguidance's constrained decoding.

At each token, llguidance's matcher (fed the answer's tokens so far) says which tokens keep the text a
prefix of a document the schema accepts; the others are set to minus infinity before the model's next
token is chosen, greedy or sampled. Once the document is whole, only the tokens that end an answer are
left. llguidance (guidance-ai; the structured-output engine behind vLLM's, SGLang's and llama.cpp's
optional JSON-schema support) was chosen because it has no dependencies of its own (one ~3 MB wheel
per platform, Windows included), covers most of JSON Schema, and builds a tokenizer's token tables in
milliseconds; xgrammar needs triton and a TVM runtime on Linux, Outlines a dozen packages.

Such an answer is made alone (not batched with others): each row would need a matcher of its own.
"""

from __future__ import annotations

import json
import threading
from typing import Any

JSON_OPTIONS = {"whitespace_flexible": False}
"""Compact JSON (``{"a":1}``): the model is not given room to wander in whitespace."""


class SchemaRefused(ValueError):
    """The ``response_format`` cannot be followed: its sentence says why and what to send."""


def grammar_for(response_format: dict[str, Any] | None) -> str | None:
    """llguidance's grammar for a request's ``response_format`` (``None``: plain text).

    Raises:
        SchemaRefused: An unknown type, or a schema that is not a JSON object.
    """
    import llguidance

    kind = (response_format or {}).get("type", "text")
    if kind == "text":
        return None
    if kind == "json_object":
        schema: Any = {"type": "object"}
    elif kind == "json_schema":
        spec = (response_format or {}).get("json_schema")
        schema = spec.get("schema") if isinstance(spec, dict) else None
        if not isinstance(schema, dict):
            raise SchemaRefused(
                "'response_format.json_schema.schema' must be a JSON Schema object, as in "
                '{"type": "json_schema", "json_schema": {"name": "...", "schema": {"type": "object", ...}}}.'
            )
    else:
        raise SchemaRefused(
            f"'response_format' type '{kind}' is not known here: use 'text', 'json_object' or 'json_schema'."
        )
    try:
        return str(llguidance.LLMatcher.grammar_from_json_schema(json.dumps(schema), defaults=JSON_OPTIONS))
    except ValueError as exc:
        raise SchemaRefused(f"The JSON schema could not be read: {exc}.") from exc


class Grammars:
    """The served model's token tables for llguidance (made once, on the first such request), the check
    of a grammar against them, and the processor that holds an answer to one.

    Args:
        tokenizer: The model's tokenizer (a fast one: llguidance reads its tokens through it).
        vocab_size: The model's output size (may exceed the tokenizer's: those ids are never allowed).
        eos: The tokens that end an answer (the only ones left once the document is whole).
    """

    def __init__(self, tokenizer: Any, vocab_size: int, eos: set[int]) -> None:
        self._tokenizer, self._vocab_size, self._eos = tokenizer, vocab_size, sorted(eos)
        self._tables: Any = None
        self._lock = threading.Lock()

    def tables(self) -> Any:
        """llguidance's ``LLTokenizer`` for the model.

        Raises:
            SchemaRefused: The tokenizer is not one llguidance reads (a slow, Python-only tokenizer).
        """
        with self._lock:
            if self._tables is None:
                import llguidance.hf

                if not getattr(self._tokenizer, "is_fast", False) or not self._eos:
                    raise SchemaRefused(
                        "This model's tokenizer cannot be read for answers held to a JSON schema (it has no "
                        "fast tokenizer, or no token that ends an answer): leave out 'response_format'."
                    )
                self._tables = llguidance.hf.from_tokenizer(
                    self._tokenizer, n_vocab=self._vocab_size, eos_token=self._eos
                )
            return self._tables

    def check(self, grammar: str) -> None:
        """Raises :class:`SchemaRefused` with llguidance's own sentence when the schema cannot be
        followed (a type it does not know, a reference it cannot resolve, ...)."""
        import llguidance

        problem = llguidance.LLMatcher.validate_grammar(grammar, self.tables())
        if problem:
            raise SchemaRefused(f"The JSON schema cannot be followed: {problem}")

    def processor(self, grammar: str, prompt_length: int) -> Any:
        """A ``LogitsProcessor`` that holds one answer (batch of one) to ``grammar``; the answer's tokens
        start at ``prompt_length``."""
        import llguidance
        import llguidance.torch
        import torch
        from transformers import LogitsProcessor

        tables = self.tables()
        matcher = llguidance.LLMatcher(tables, grammar, log_level=0)
        mask = llguidance.torch.allocate_token_bitmask(1, tables.vocab_size)
        bits = torch.arange(32, dtype=torch.int32)
        seen = [prompt_length]
        ends = self._eos

        class Held(LogitsProcessor):
            def __call__(self, input_ids: Any, scores: Any) -> Any:
                for token in input_ids[0, seen[0] :].tolist():
                    matcher.consume_token(token)
                seen[0] = input_ids.shape[1]
                if matcher.is_error():  # a token outside the mask was forced (a decoder's own rules)
                    allowed = torch.zeros(scores.shape[-1], dtype=torch.bool)
                    allowed[[end for end in ends if end < scores.shape[-1]]] = True  # the answer ends
                else:
                    llguidance.torch.fill_next_token_bitmask(matcher, mask, 0)
                    # The bits unpacked in plain torch: llguidance's own kernel is compiled by
                    # torch.compile on its first call (2.3 s here; on Windows it needs a C++ compiler).
                    allowed = ((mask[0].unsqueeze(-1) >> bits) & 1).flatten().bool()
                    allowed = torch.nn.functional.pad(allowed, (0, max(0, scores.shape[-1] - len(allowed))))
                scores[:, ~allowed[: scores.shape[-1]].to(scores.device)] = float("-inf")
                return scores

        return Held()
