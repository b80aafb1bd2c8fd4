"""A causal LM's tokenizer as GGUF metadata, in the llama.cpp tokenizer model that tokenizes as it does.

transformers runs ``tokenizer.json``; two kinds of it are written:

- byte-level BPE (GPT-2, Llama 3, Qwen): llama.cpp's ``gpt2`` model, with the merges and the name of
  the pre-tokenizer (which llama.cpp knows by name only, so it comes with the architecture);
- BPE with byte fallback, what transformers makes of a SentencePiece model (Llama 2, Mistral 7B,
  Gemma, Phi-3): llama.cpp's ``llama`` model, SentencePiece's algorithm. Its tokens carry scores and
  types: ``<0xNN>`` are BYTE tokens (the fallback for text no token covers), special tokens CONTROL.

llama.cpp's SentencePiece tokenizer repeatedly joins the adjacent pair whose joined token scores
highest; transformers applies the merge of lowest rank in ``tokenizer.json``. A token's score is
therefore minus the rank of the first merge that makes it: llama.cpp then merges in transformers'
order. A ``tokenizer.model`` beside it is not read: an export folder has none (transformers 5 saves
``tokenizer.json`` alone), and where the two disagree transformers, which the model was trained with,
goes by ``tokenizer.json`` (Llama 2's ``tokenizer.model`` scores its whitespace pieces -1e9, last,
while transformers 5, converting it, ranks merges by token id).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.core.system.errors import InputError
from desktop.core.system.messages import msg

BYTE_TOKEN = re.compile(r"<0x[0-9A-F]{2}>")
PHI3_NAME = re.compile(r"phi-?3", re.IGNORECASE)
NOT_RSTRIPPED = frozenset({"<unk>", "<s>", "<|endoftext|>"})  # llama.cpp's Phi-3 rule leaves these alone


@dataclass(frozen=True)
class VocabInfo:
    """What the rest of the file needs from the tokenizer: the chat template, the end token, and whether
    its special tokens eat the whitespace after them (Phi-3's do)."""

    chat_template: str
    eos_token: str
    rstrips_specials: bool


def tokenizer_kind(model_dir: Path) -> str:
    """``"bpe"`` (byte-level BPE) or ``"spm"`` (BPE with byte fallback, from SentencePiece).

    Raises:
        InputError: There is no ``tokenizer.json``, or it holds a tokenizer neither kind describes.
    """
    path = model_dir / "tokenizer.json"
    if not path.is_file():
        raise InputError(
            msg("GGUF export needs the model's tokenizer.json (a fast tokenizer)."),
            msg("SentencePiece-only tokenizers are not written as GGUF yet: export this one as a folder."),
        )
    model = json.loads(path.read_text(encoding="utf-8")).get("model") or {}
    if model.get("type") != "BPE":
        raise InputError(
            msg(
                "GGUF export writes BPE tokenizers (byte-level or SentencePiece); this model's is {kind}.",
                kind=str(model.get("type")),
            ),
            msg("Export it as a folder."),
        )
    if not model.get("byte_fallback"):
        return "bpe"
    vocab = model.get("vocab") or {}
    if any(f"<0x{byte:02X}>" not in vocab for byte in range(256)):
        raise InputError(
            msg("This model's tokenizer falls back to bytes but lacks some of the 256 byte tokens."),
            msg("Export it as a folder: llama.cpp needs every byte token."),
        )
    return "spm"


def write_vocab(writer: Any, model_dir: Path, kind: str, pre: str, vocab_size: int) -> VocabInfo:
    """Write the tokenizer in ``model_dir`` (of :func:`tokenizer_kind` ``kind``) to the GGUF ``writer``:
    tokens, their types, merges or scores, special tokens, the chat template.

    Args:
        pre: llama.cpp's name of the byte-level pre-tokenizer (``bpe`` only).
        vocab_size: The model's embedding rows; tokens past the tokenizer's are written as unused.
    """
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    backend = json.loads(tokenizer.backend_tokenizer.to_str())  # as transformers loaded it, which it runs
    merges = [m.split(" ", 1) if isinstance(m, str) else m for m in backend["model"].get("merges", [])]
    vocab = tokenizer.get_vocab()
    size = max(max(vocab.values()) + 1, vocab_size)
    tokens, types, scores = _tokens(tokenizer, vocab, size, kind, merges)
    if kind == "spm":
        writer.add_tokenizer_model("llama")
        writer.add_tokenizer_pre("default")
        writer.add_token_scores(scores)
        writer.add_add_space_prefix(_space_prefix(backend))
    else:
        writer.add_tokenizer_model("gpt2")
        writer.add_tokenizer_pre(pre)
        writer.add_token_merges([" ".join(m) for m in merges])
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    for name in ("bos", "eos", "unk", "pad"):
        token_id = getattr(tokenizer, f"{name}_token_id", None)
        if token_id is not None:
            getattr(writer, f"add_{name}_token_id")(int(token_id))
    add_bos, add_eos = _added_tokens(tokenizer)
    writer.add_add_bos_token(add_bos)
    writer.add_add_eos_token(add_eos)
    template = getattr(tokenizer, "chat_template", None) or ""
    if template:
        writer.add_chat_template(template)
    added = getattr(tokenizer, "added_tokens_decoder", {}).values()
    rstrips = any(t.rstrip for t in added if str(t) not in NOT_RSTRIPPED)
    return VocabInfo(template, tokenizer.eos_token or "", rstrips)


def gguf_name(name: str, arch: str, rstrips_specials: bool) -> str:
    """The GGUF's ``general.name``. llama.cpp makes the special tokens of a model whose name says Phi-3
    eat the whitespace after them (Phi-3's tokenizer.json says so per token; GGUF has no place for it),
    so the name says Phi-3 exactly when the tokenizer does that."""
    if rstrips_specials and arch == "phi3" and not PHI3_NAME.search(name):
        return f"{name} (Phi-3)"
    if not rstrips_specials:
        return PHI3_NAME.sub("Phi 3", name)
    return name


def _tokens(
    tokenizer: Any, vocab: dict[str, int], size: int, kind: str, merges: list[list[str]]
) -> tuple[list[str], list[int], list[float]]:
    """Each id's token, GGUF token type and score (the scores matter to ``spm`` only)."""
    import gguf

    by_id = {i: t for t, i in vocab.items()}
    added = dict(getattr(tokenizer, "added_tokens_decoder", {}))  # id -> AddedToken
    unk = getattr(tokenizer, "unk_token_id", None)
    rank: dict[str, int] = {}
    for number, (left, right) in enumerate(merges):
        rank.setdefault(left + right, number)
    tokens, types, scores = [], [], []
    for i in range(size):
        token = by_id.get(i)
        score = 0.0
        if token is None:
            token, kind_of = f"[PAD{i}]", gguf.TokenType.UNUSED
        elif i in added:
            kind_of = gguf.TokenType.CONTROL if added[i].special else gguf.TokenType.USER_DEFINED
            if kind == "spm" and i == unk:
                kind_of = gguf.TokenType.UNKNOWN
        elif kind == "spm" and BYTE_TOKEN.fullmatch(token):
            kind_of = gguf.TokenType.BYTE
        else:
            kind_of = gguf.TokenType.NORMAL
            # Tokens no merge makes (single characters) rank after all that one does, as in SentencePiece.
            score = -float(rank[token] if token in rank else len(merges) + i)
        tokens.append(token)
        types.append(kind_of)
        scores.append(score)
    return tokens, types, scores


def _space_prefix(backend: dict[str, Any]) -> bool:
    """Whether llama.cpp should put a space before the text at its start and after each special token.

    transformers' legacy ``Prepend("▁")`` normaliser and ``Metaspace(prepend_scheme="always")`` do that
    (the second, on a text that begins with a space there, writes one ``▁`` where llama.cpp writes two).
    ``"first"`` (transformers 5's default for Llama tokenizers, Phi-3's) prefixes the text's first word
    only, which llama.cpp cannot say: no prefix is right for every chat-templated prompt (they begin
    with a special token), and wrong for plain text, where transformers writes ``▁Hello``. Gemma's
    tokenizer prefixes nothing.
    """
    parts = [backend.get("normalizer"), backend.get("pre_tokenizer")]
    while parts:
        part = parts.pop() or {}
        parts += part.get("normalizers", []) + part.get("pretokenizers", [])
        if part.get("type") == "Prepend" and part.get("prepend") == "▁":
            return True
        if part.get("type") == "Metaspace":
            return part.get("prepend_scheme", "always") == "always" and part.get("add_prefix_space", True)
    return False


def _added_tokens(tokenizer: Any) -> tuple[bool, bool]:
    """Whether the tokenizer puts its BOS token before a text, and its EOS token after it (seen, not
    read from a flag: transformers' flags and its post-processor have disagreed)."""
    bos, eos = tokenizer.bos_token_id, tokenizer.eos_token_id
    plain = tokenizer("a", add_special_tokens=False)["input_ids"]
    full = tokenizer("a")["input_ids"]
    if len(full) <= len(plain):
        return False, False
    return bos is not None and full[0] == bos, eos is not None and full[-1] == eos
