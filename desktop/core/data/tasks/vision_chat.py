"""Vision-language fine-tuning: a model that reads a picture and a question learns the answers.

Data: a picture, a question about it and the answer (``columns.image``, ``columns.prompt``,
``columns.completion``), or conversations holding pictures (``columns.messages``, and an images column
they take their pictures from in order: :mod:`desktop.core.data.picture_chats`). The model is loaded
with ``AutoModelForImageTextToText`` and reads each example through its processor and chat template.
The loss is on the assistant's turns only: every other token (the pictures' tokens, the questions, the
template's headers) is masked, as in causal-LM training on prompts.

The vision tower is frozen unless ``images.train_vision``; with LoRA the adapters go on the language
model's layers only. Pictures are decoded, scaled to ``images.resolution`` where the model allows it, and
put through the processor as each batch is made (in the data loader's workers when the run has some).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.core.data.images import Source, decode, source_of
from desktop.core.data.tables import Table
from desktop.core.data.tasks import SAMPLE_ROWS, Prepared, Tokenizing
from desktop.core.hub.models import load_model
from desktop.core.settings.config import Columns, RunConfig
from desktop.core.settings.options import freeze_vision
from desktop.core.system.messages import msg

__all__ = [
    "VisionCollator",
    "VisionExamples",
    "apply_resolution",
    "conversation",
    "picture_tokens",
    "prepare",
    "texts",
]

IGNORE = -100


def texts(table: Table, columns: Columns, tokenizer: Any = None) -> dict[str, list[str]]:
    """No token statistics for pictures and text together (the picture's tokens are the processor's)."""
    return {}


def conversation(prompt: str, answer: str | None = None) -> list[dict[str, Any]]:
    """One picture and its question as the user's turn, and the answer as the assistant's (when given),
    in the layout processors' chat templates read."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": prompt}]}
    ]
    if answer is not None:
        messages.append({"role": "assistant", "content": [{"type": "text", "text": answer}]})
    return messages


@dataclass
class VisionExamples(Sequence):
    """The examples of a run: each row's conversation (image parts as placeholders) and its pictures;
    the pictures decoded (and scaled to ``longest`` pixels a side when given) only when the row's batch
    is made."""

    messages: list[list[dict[str, Any]]]
    sources: list[list[Source]]
    longest: int = 0

    def __len__(self) -> int:
        return len(self.messages)

    def __getitem__(self, index: int) -> dict[str, Any]:  # type: ignore[override]
        return {
            "images": [decode(source, self.longest) for source in self.sources[index]],
            "messages": self.messages[index],
        }


class VisionCollator:
    """Examples into a batch through the processor, with labels on the assistant's turns only.

    For each assistant turn the processor also reads the conversation up to it and through it (with the
    pictures shown so far): the lengths say where the turn's tokens are, the picture's tokens before them
    counted as the processor counts them.
    """

    def __init__(self, processor: Any) -> None:
        self.processor = processor
        tokenizer = getattr(processor, "tokenizer", processor)
        tokenizer.padding_side = "right"  # the answer's positions are counted from the left
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, Any]:
        processor = self.processor
        whole = [processor.apply_chat_template(f["messages"], tokenize=False) for f in features]
        images = [f["images"] for f in features]
        batch = processor(text=whole, images=images, padding=True, return_tensors="pt")
        labels = batch["input_ids"].clone()
        learned = labels.new_zeros(labels.shape, dtype=bool)
        for row, feature in enumerate(features):
            for start, end in self._answers(feature):
                learned[row, start:end] = True
        labels[~learned | (batch["attention_mask"] == 0)] = IGNORE
        batch["labels"] = labels
        return dict(batch)

    def _answers(self, feature: dict[str, Any]) -> list[tuple[int, int]]:
        """(start, end) token positions of each assistant turn of an example."""
        processor, messages, images = self.processor, feature["messages"], feature["images"]
        spans = []
        for turn, message in enumerate(messages):
            if message["role"] != "assistant":
                continue
            shown = sum(1 for m in messages[:turn] for part in m["content"] if part.get("type") == "image")
            asked = processor.apply_chat_template(messages[:turn], tokenize=False, add_generation_prompt=True)
            through = processor.apply_chat_template(messages[: turn + 1], tokenize=False)
            pictures = [images[:shown]] if shown else None
            start = len(processor(text=[asked], images=pictures)["input_ids"][0])
            end = len(processor(text=[through], images=pictures)["input_ids"][0])
            spans.append((start, end))
        return spans


def answer_picture(
    model: Any,
    processor: Any,
    device: Any,
    picture: Any,
    question: str,
    max_new_tokens: int = 128,
    on_text: Callable[[str], None] | None = None,
    stop: threading.Event | None = None,
) -> str:
    """The model's answer to ``question`` about ``picture`` (a source or a Pillow picture), greedy;
    ``on_text`` and ``stop`` as :func:`answer_conversation`'s."""
    messages = conversation(question)
    return answer_conversation(
        model, processor, device, messages, [picture], max_new_tokens, on_text=on_text, stop=stop
    )[0]


def answer_conversation(
    model: Any,
    processor: Any,
    device: Any,
    messages: list[dict[str, Any]],
    pictures: list[Any],
    max_new_tokens: int = 128,
    temperature: float = 0.0,
    top_p: float = 1.0,
    on_text: Callable[[str], None] | None = None,
    stop: threading.Event | None = None,
) -> tuple[str, int, int, str]:
    """The next assistant turn of a conversation holding pictures (image parts as placeholders, taking
    ``pictures`` in order: sources or Pillow pictures): its text, the prompt's and the answer's tokens,
    and why it ended (``stop`` or ``length``). ``on_text`` gets each new piece of the text as it is
    written; ``stop`` set ends it after the current token."""
    import torch

    from desktop.core.data.tasks.generation import sampling_args, streaming

    images = [p.convert("RGB") if hasattr(p, "convert") else decode(p) for p in pictures]
    asked = processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    inputs = processor(text=[asked], images=[images] if images else None, return_tensors="pt").to(device)
    tokenizer = getattr(processor, "tokenizer", processor)
    streamed, _ = streaming(tokenizer, on_text, stop)
    with torch.no_grad():
        written = model.generate(
            **inputs,
            max_new_tokens=max_new_tokens,
            pad_token_id=tokenizer.pad_token_id,
            **streamed,
            **sampling_args(temperature, top_p),
        )
    prompt = inputs["input_ids"].shape[1]
    answer = written[0, prompt:]
    ended = tokenizer.eos_token_id is not None and tokenizer.eos_token_id in answer.tolist()
    text = tokenizer.decode(answer, skip_special_tokens=True).strip()
    return text, prompt, len(answer), "stop" if ended or len(answer) < max_new_tokens else "length"


def apply_resolution(processor: Any, longest: int) -> str:
    """Scale pictures to at most ``longest`` pixels a side where the model's processor lets the size
    change (Qwen2-VL's pixel budget, SmolVLM's and Idefics 3's longest edge); "" when done or not asked,
    else a note that the model keeps its own size."""
    if not longest:
        return ""
    images = getattr(processor, "image_processor", processor)
    if getattr(images, "max_pixels", None):
        images.max_pixels = longest * longest
        images.min_pixels = min(getattr(images, "min_pixels", 0) or 0, images.max_pixels)
        return ""
    size = getattr(images, "size", None)
    if isinstance(size, dict) and "longest_edge" in size:
        images.size = {**size, "longest_edge": longest}
        return ""
    return msg(
        "This model reads pictures at one size of its own; images.resolution ({pixels} pixels) is not used.",
        pixels=longest,
    )


def picture_tokens(processor: Any, picture: Any) -> int:
    """The tokens one picture adds to a conversation, as the processor counts them (a picture's
    placeholder expanded into its image tokens)."""
    asked = processor.apply_chat_template(conversation("?"), tokenize=False, add_generation_prompt=True)
    tokenizer = getattr(processor, "tokenizer", processor)
    with_picture = len(processor(text=[asked], images=[[picture]])["input_ids"][0])
    alone = len(tokenizer(asked, add_special_tokens=False)["input_ids"])
    return with_picture - alone + 1  # the placeholder the plain tokenizer read as one token


@dataclass
class _Rows:
    messages: list[list[dict[str, Any]]]
    sources: list[list[Source]]
    left_out: list[int] = field(default_factory=list)


def _rows(table: Table, columns: Columns) -> _Rows:
    """Each row's conversation and pictures: from its messages (and images column), or its picture,
    question and answer. Rows are checked before (``check_rows``, the picture checks)."""
    if columns.messages:
        from desktop.core.data.picture_chats import parse_picture_chat

        listed = table.column(columns.image) if columns.image else [None] * len(table)
        values = table.column(columns.messages)
        chats = [parse_picture_chat(v, p) for v, p in zip(values, listed, strict=True)]
        return _Rows([c.messages for c in chats if c], [c.pictures for c in chats if c])
    sources = [source_of(v) for v in table.column(columns.image)]
    prompts = [str(v) for v in table.column(columns.prompt)]
    answers = [str(v) for v in table.column(columns.completion)]
    return _Rows(
        [conversation(p, a) for p, a in zip(prompts, answers, strict=True)],
        [[s if s is not None else b""] for s in sources],
    )


def _question(messages: list[dict[str, Any]]) -> tuple[str, str]:
    """The first user turn's text and the first answer (the evaluation's samples)."""
    user = next((m for m in messages if m["role"] == "user"), messages[0])
    answer = next((m for m in messages if m["role"] == "assistant"), messages[-1])

    def text(message: dict[str, Any]) -> str:
        return " ".join(p["text"] for p in message["content"] if p.get("type") == "text")

    return text(user), text(answer)


def _fitting(rows: _Rows, processor: Any, max_length: int, per_picture: int) -> _Rows:
    """The rows whose conversation (text, and the pictures' tokens) fits ``max_length``; the others are
    left out (cutting one would cut a picture's tokens or an answer)."""
    tokenizer = getattr(processor, "tokenizer", processor)
    whole = [processor.apply_chat_template(m, tokenize=False) for m in rows.messages]
    ids = tokenizer(whole, add_special_tokens=False)["input_ids"]
    lengths = [len(i) + len(p) * (per_picture - 1) for i, p in zip(ids, rows.sources, strict=True)]
    keep = [i for i, n in enumerate(lengths) if n <= max_length]
    left = [i for i, n in enumerate(lengths) if n > max_length]
    return _Rows([rows.messages[i] for i in keep], [rows.sources[i] for i in keep], left)


def prepare(
    config: RunConfig,
    processor: Any,
    train: Table,
    eval_: Table | None,
    columns: Columns,
    model_kwargs: dict[str, Any] | None = None,
    tokenizing: Tokenizing | None = None,
) -> Prepared:
    """Load a vision-language model, freeze its vision tower, and make the examples."""
    from transformers import AutoModelForImageTextToText

    notes = []
    if note := apply_resolution(processor, config.images.resolution):
        notes.append(note)
    model = load_model(
        AutoModelForImageTextToText, config.model, "vision-language fine-tuning", **(model_kwargs or {})
    )
    if not config.images.train_vision:
        freeze_vision(model)
    longest = config.images.resolution
    first = next(s for row in _rows(train.head(50), columns).sources for s in row)
    per_picture = picture_tokens(processor, decode(first, longest))
    parts = {}
    for part, table in (("train", train), ("eval", eval_)):
        if table is None:
            continue
        rows = _fitting(_rows(table, columns), processor, config.training.max_length, per_picture)
        if rows.left_out:
            notes.append(
                msg(
                    "Left out {count} of {total} {part} rows longer than the max length of {limit} tokens "
                    "with their picture ({where}).",
                    count=len(rows.left_out),
                    total=len(table),
                    part=part,
                    limit=config.training.max_length,
                    where=table.locate_many(rows.left_out),
                )
            )
        parts[part] = rows
    if not parts["train"].messages:
        from desktop.core.system.errors import DataError

        raise DataError(
            msg(
                "Every training row is longer than the max length of {limit} tokens with its picture "
                "({tokens} tokens a picture).",
                limit=config.training.max_length,
                tokens=per_picture,
            ),
            msg("Raise the max length on Memory & speed, or lower images.resolution."),
        )
    train_rows, eval_rows = parts["train"], parts.get("eval")
    pairs: list[tuple[str, str]] = []
    pictures: list[Source] = []
    if eval_rows is not None:
        for i in range(min(SAMPLE_ROWS, len(eval_rows.messages))):
            if not eval_rows.sources[i]:
                continue
            source = eval_rows.sources[i][0]
            name = Path(source).name if isinstance(source, Path) else msg("picture {number}", number=i + 1)
            question, answer = _question(eval_rows.messages[i])
            pairs.append((f"[{name}] {question}", answer))
            pictures.append(source)
    return Prepared(
        model=model,
        train=VisionExamples(train_rows.messages, train_rows.sources, longest),
        eval=(
            VisionExamples(eval_rows.messages, eval_rows.sources, longest)
            if eval_rows is not None and eval_rows.messages
            else None
        ),
        collator=VisionCollator(processor),
        notes=notes,
        eval_pairs=pairs,
        chat=True,
        pictures=pictures,
    )
