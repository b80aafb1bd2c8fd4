"""Causal-LM fine-tuning: plain text, or prompts and chats with loss on the responses only.

Rows with messages, Alpaca-style instructions or prompt/completion pairs are rendered as text
with known character spans for the parts the model should learn (the assistant's replies).
Instructions and chats go through the tokenizer's chat template; a tokenizer without one gets
:data:`FALLBACK_CHAT_TEMPLATE`, which is saved with the model so inference uses it too::

    <|user|>
    What is 2 + 2?<eos>
    <|assistant|>
    4<eos>
"""

from __future__ import annotations

import functools
from typing import Any

from desktop.core.data.chats import parse_messages
from desktop.core.data.columns import causal_format
from desktop.core.data.tables import Table
from desktop.core.data.tasks import Prepared, Tokenizing
from desktop.core.hub.models import load_model
from desktop.core.settings.config import Columns, RunConfig
from desktop.core.system.errors import DataError
from desktop.core.system.messages import msg

FALLBACK_CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>\n' + message['content'] + eos_token + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}"
)
IGNORE = -100


def ensure_chat_template(tokenizer: Any) -> None:
    """Give a tokenizer without a chat template the documented fallback one."""
    if not getattr(tokenizer, "chat_template", None):
        tokenizer.chat_template = FALLBACK_CHAT_TEMPLATE


def _messages(row: dict[str, Any], columns: Columns, fmt: str) -> list[dict[str, str]]:
    if fmt == "chat":
        return parse_messages(row[columns.messages]) or []
    user = str(row[columns.instruction]).strip()
    extra = row.get(columns.input) if columns.input else None
    if isinstance(extra, str) and extra.strip():
        user = f"{user}\n\n{extra.strip()}"
    return [{"role": "user", "content": user}, {"role": "assistant", "content": str(row[columns.output])}]


def render_chat(tokenizer: Any, messages: list[dict[str, str]]) -> tuple[str, list[tuple[int, int]]]:
    """The conversation as text, and the character spans of the assistant's replies."""
    full = tokenizer.apply_chat_template(messages, tokenize=False)
    spans, search_from = [], 0
    for i, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        prefix = tokenizer.apply_chat_template(messages[:i], tokenize=False, add_generation_prompt=True)
        upto = tokenizer.apply_chat_template(messages[: i + 1], tokenize=False)
        if full.startswith(upto) and upto.startswith(prefix):
            spans.append((len(prefix), len(upto)))
        else:  # templates that rewrite earlier turns: find the reply itself
            start = full.find(message["content"], search_from)
            if start < 0:
                continue
            spans.append((start, start + len(message["content"])))
        search_from = spans[-1][1]
    return full, spans


def render(table: Table, columns: Columns, tokenizer: Any) -> list[tuple[str, list[tuple[int, int]]]]:
    """Each row as (text, trainable character spans)."""
    fmt = causal_format(columns)
    eos = tokenizer.eos_token or ""
    out = []
    for row in table.records():
        if fmt == "text":
            text = str(row[columns.text])
            out.append((text + eos, [(0, len(text) + len(eos))]))
        elif fmt == "prompt":
            prompt, completion = str(row[columns.prompt]), str(row[columns.completion])
            out.append((prompt + completion + eos, [(len(prompt), len(prompt) + len(completion) + len(eos))]))
        else:
            out.append(render_chat(tokenizer, _messages(row, columns, fmt)))
    return out


def pairs(table: Table, columns: Columns, limit: int) -> tuple[list[tuple[str, str]], bool]:
    """Up to ``limit`` (prompt, reference) pairs for the evaluation's samples, and whether prompts go
    through the chat template: the last reply of a chat with the user turn before it, an instruction
    with its output, a prompt with its completion. Plain text has none."""
    fmt = causal_format(columns)
    if fmt not in ("prompt", "chat", "instruction"):
        return [], False
    out = []
    for row in table.records(limit):
        if fmt == "prompt":
            out.append((str(row[columns.prompt]), str(row[columns.completion])))
            continue
        messages = _messages(row, columns, fmt)
        last = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=-1)
        if last > 0 and messages[last - 1]["role"] == "user":
            out.append((messages[last - 1]["content"], messages[last]["content"]))
    return out, fmt != "prompt"


def texts(table: Table, columns: Columns, tokenizer: Any) -> dict[str, list[str]]:
    """The rendered texts the model reads, for token statistics."""
    if causal_format(columns) in ("chat", "instruction"):
        ensure_chat_template(tokenizer)
    return {"text": [text for text, _ in render(table, columns, tokenizer)]}


def length_note(table: Table, columns: Columns, tokenizer: Any, max_length: int, of_rows: int) -> str | None:
    """Before training: how many rows the max length will leave out (their prompt alone fills it, so
    no response is left to learn) and the max length that keeps 95% of them; ``None`` when none is.

    ``table`` is the rows measured (the first few thousand); ``of_rows`` how many the data has.
    """
    import numpy as np

    fmt = causal_format(columns)
    if fmt == "text" or not len(table):
        return None
    if fmt in ("chat", "instruction"):
        ensure_chat_template(tokenizer)
    rendered = render(table, columns, tokenizer)
    enc = tokenizer([text for text, _ in rendered], return_offsets_mapping=True, add_special_tokens=False)
    needed = []  # per row: the length that keeps its first trained token (0: a row with nothing to learn)
    for (_, spans), offsets in zip(rendered, enc["offset_mapping"], strict=True):
        first = next(
            (
                i
                for i, (start, end) in enumerate(offsets)
                if end > start and any(s <= start < e for s, e in spans)
            ),
            None,
        )
        needed.append(0 if first is None else first + 1)
    lengths = np.asarray([n for n in needed if n])
    dropped = int((lengths > max_length).sum())
    if not dropped:
        return None
    keep = int(np.ceil(np.percentile(lengths, 95)))
    measured, share = len(needed), f"{dropped / len(needed):.0%}"
    if measured >= of_rows:
        return msg(
            "With max length {length}, {dropped} of {total} rows ({share}) will be left out: their prompt "
            "alone fills it, so no response is left to learn. A max length of {keep} keeps 95% of the rows.",
            length=max_length,
            dropped=dropped,
            total=measured,
            share=share,
            keep=keep,
        )
    return msg(
        "With max length {length}, {dropped} of the first {measured} rows ({share}) will be left out: "
        "their prompt alone fills it, so no response is left to learn. A max length of {keep} keeps 95% "
        "of them.",
        length=max_length,
        dropped=dropped,
        measured=measured,
        share=share,
        keep=keep,
    )


def _encode_spans(
    rendered: list[tuple[str, list[tuple[int, int]]]], tokenizer: Any, max_length: int
) -> list[dict]:
    """One example a row, its labels masked outside its trainable spans; none for a row whose spans
    are cut off (the prompt alone fills the max length)."""
    enc = tokenizer(
        [t for t, _ in rendered],
        truncation=True,
        max_length=max_length,
        return_offsets_mapping=True,
        add_special_tokens=False,
    )
    examples = []
    for i, (_, spans) in enumerate(rendered):
        ids, offsets = enc["input_ids"][i], enc["offset_mapping"][i]
        labels = [
            tok if end > start and any(s <= start < e for s, e in spans) else IGNORE
            for tok, (start, end) in zip(ids, offsets, strict=True)
        ]
        if all(label == IGNORE for label in labels):
            continue
        examples.append({"input_ids": ids, "attention_mask": [1] * len(ids), "labels": labels})
    return examples


def _encode_blocks(
    rendered: list[tuple[str, list[tuple[int, int]]]], tokenizer: Any, max_length: int
) -> list[dict]:
    # Plain text is joined and cut into blocks of max_length tokens, as transformers' run_clm does.
    ids = [
        tok
        for row in tokenizer([t for t, _ in rendered], add_special_tokens=False)["input_ids"]
        for tok in row
    ]
    blocks = [ids[i : i + max_length] for i in range(0, len(ids), max_length)]
    return [{"input_ids": b, "attention_mask": [1] * len(b), "labels": list(b)} for b in blocks if len(b) > 1]


def _examples(rows: Table, columns: Columns, tokenizer: Any, max_length: int) -> list[dict]:
    """The examples of some rows: their trainable spans, or plain text's blocks."""
    rendered = render(rows, columns, tokenizer)
    if causal_format(columns) == "text":
        return _encode_blocks(rendered, tokenizer, max_length)
    return _encode_spans(rendered, tokenizer, max_length)


def encode(
    table: Table,
    columns: Columns,
    tokenizer: Any,
    max_length: int,
    tokenizing: Tokenizing | None = None,
    part: str = "train",
) -> tuple[Any, list[str]]:
    """Tokenized examples with labels masked outside the trainable spans, and notes."""
    fmt = causal_format(columns)
    if fmt in ("chat", "instruction"):
        ensure_chat_template(tokenizer)
    # A partial of a module-level function: it pickles, so large data is tokenized in several processes.
    # Plain text runs across rows (blocks of max_length tokens): the table is tokenized in one piece.
    examples_of = functools.partial(_examples, columns=columns, tokenizer=tokenizer, max_length=max_length)
    examples = (tokenizing or Tokenizing()).rows(part, table, columns, examples_of, chunked=fmt != "text")
    dropped = len(table) - len(examples)  # every other format: one example a row, or none
    if fmt == "text":
        return examples, []
    notes = []
    if dropped:
        notes.append(
            msg(
                "{dropped} of {total} rows of {source} were left out: their prompt alone fills {length} "
                "tokens, so no response is left to learn. Raise training.max_length to keep them.",
                dropped=dropped,
                total=len(table),
                source=table.source,
                length=max_length,
            )
        )
    if not examples:
        raise DataError(
            msg(
                "No row of {source} has a response within {length} tokens.",
                source=table.source,
                length=max_length,
            ),
            msg("Raise training.max_length, or shorten the prompts."),
        )
    return examples, notes


def prepare(
    config: RunConfig,
    tokenizer: Any,
    train: Table,
    eval_: Table | None,
    columns: Columns,
    model_kwargs: dict[str, Any] | None = None,
    tokenizing: Tokenizing | None = None,
) -> Prepared:
    """Load a causal LM and tokenize the rows."""
    from transformers import AutoModelForCausalLM, DataCollatorForSeq2Seq

    max_length = config.training.max_length
    train_examples, notes = encode(train, columns, tokenizer, max_length, tokenizing, "train")
    eval_examples = None
    if eval_ is not None:
        eval_examples, eval_notes = encode(eval_, columns, tokenizer, max_length, tokenizing, "eval")
        notes += eval_notes
    model = load_model(AutoModelForCausalLM, config.model, "causal-LM fine-tuning", **(model_kwargs or {}))
    if model.config.pad_token_id is None:
        model.config.pad_token_id = tokenizer.pad_token_id
    # Pads input ids with the pad token and labels with -100, which is what a causal LM needs.
    collator: Any = DataCollatorForSeq2Seq(tokenizer, label_pad_token_id=IGNORE)
    if config.performance.padding_free:
        from desktop.core.data.tasks.packing import PaddingFreeCollator, keeps_examples_apart

        if keeps_examples_apart(model):
            collator = PaddingFreeCollator(tokenizer.pad_token_id, max_length)
        else:
            notes.append(
                msg(
                    "Batches are padded: {model} would let each example of a padding-free batch see the one "
                    "before it.",
                    model=config.model.name,
                )
            )
    from desktop.core.data.tasks import SAMPLE_ROWS

    eval_pairs, chat = pairs(eval_, columns, SAMPLE_ROWS) if eval_ is not None else ([], False)
    return Prepared(
        model=model,
        train=train_examples,
        eval=eval_examples,
        eval_pairs=eval_pairs,
        chat=chat,
        collator=collator,
        notes=notes,
    )
