"""Vision-language fine-tuning: a model that reads a picture and a question learns the answers.

Data: a picture, a question about it and the answer (``columns.image``, ``columns.prompt``,
``columns.completion``). The model is loaded with ``AutoModelForImageTextToText`` and reads each example
through its processor and chat template: the user's turn holds the picture and the question, the
assistant's the answer. The loss is on the answer only: every token up to the assistant's turn (the
picture's tokens, the question, the template's headers) is masked, as in causal-LM training on prompts.

The vision tower is frozen unless ``images.train_vision``; with LoRA the adapters go on the language
model's layers only. Pictures are decoded, scaled to ``images.resolution`` where the model allows it, and
put through the processor as each batch is made (in the data loader's workers when the run has some).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.core.data.images import Source, decode, source_of
from desktop.core.data.tables import Table
from desktop.core.data.tasks import SAMPLE_ROWS, Prepared, Tokenizing
from desktop.core.hub.models import load_model
from desktop.core.settings.config import Columns, RunConfig
from desktop.core.settings.options import VISION_PARTS
from desktop.core.system.messages import msg

__all__ = [
    "VISION_PARTS",
    "VisionCollator",
    "VisionExamples",
    "apply_resolution",
    "conversation",
    "freeze_vision",
    "picture_tokens",
    "prepare",
    "texts",
]

VISION_PATTERN = re.compile(r"(^|\.)(" + "|".join(VISION_PARTS) + r")(\.|$)")
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
    """The examples of a run: each row's picture, question and answer; the picture decoded (and scaled to
    ``longest`` pixels a side when given) only when its batch is made."""

    sources: list[Source]
    prompts: list[str]
    answers: list[str]
    longest: int = 0

    def __len__(self) -> int:
        return len(self.answers)

    def __getitem__(self, index: int) -> dict[str, Any]:  # type: ignore[override]
        return {
            "images": [decode(self.sources[index], self.longest)],
            "messages": conversation(self.prompts[index], self.answers[index]),
        }


class VisionCollator:
    """Examples into a batch through the processor, with labels on the answers only.

    Each example is read twice by the processor: whole, and up to the assistant's turn (its length is
    where the answer starts: the picture's tokens before it are the processor's to count).
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
        labels[batch["attention_mask"] == 0] = IGNORE
        for row, feature in enumerate(features):
            asked = processor.apply_chat_template(
                feature["messages"][:-1], tokenize=False, add_generation_prompt=True
            )
            start = len(processor(text=[asked], images=[feature["images"]])["input_ids"][0])
            labels[row, :start] = IGNORE
        batch["labels"] = labels
        return dict(batch)


def answer_picture(
    model: Any, processor: Any, device: Any, picture: Any, question: str, max_new_tokens: int = 128
) -> str:
    """The model's answer to ``question`` about ``picture`` (a source or a Pillow picture), greedy."""
    import torch

    image = picture if hasattr(picture, "convert") else decode(picture)
    asked = processor.apply_chat_template(conversation(question), tokenize=False, add_generation_prompt=True)
    inputs = processor(text=[asked], images=[[image.convert("RGB")]], return_tensors="pt").to(device)
    tokenizer = getattr(processor, "tokenizer", processor)
    with torch.no_grad():
        written = model.generate(
            **inputs, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=tokenizer.pad_token_id
        )
    return tokenizer.decode(written[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True).strip()


def freeze_vision(model: Any) -> int:
    """Freeze the vision tower's parameters; the number frozen."""
    frozen = 0
    for name, parameter in model.named_parameters():
        if VISION_PATTERN.search(name):
            parameter.requires_grad_(False)
            frozen += parameter.numel()
    return frozen


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
    sources: list[Source]
    prompts: list[str]
    answers: list[str]
    left_out: list[int] = field(default_factory=list)


def _rows(table: Table, columns: Columns) -> _Rows:
    sources = [source_of(v) for v in table.column(columns.image)]
    prompts = [str(v) for v in table.column(columns.prompt)]
    answers = [str(v) for v in table.column(columns.completion)]
    return _Rows([s if s is not None else b"" for s in sources], prompts, answers)


def _fitting(rows: _Rows, processor: Any, max_length: int, per_picture: int) -> _Rows:
    """The rows whose conversation (text, and the picture's tokens) fits ``max_length``; the others are
    left out (cutting one would cut its picture's tokens or its answer)."""
    tokenizer = getattr(processor, "tokenizer", processor)
    whole = [
        processor.apply_chat_template(conversation(p, a), tokenize=False)
        for p, a in zip(rows.prompts, rows.answers, strict=True)
    ]
    lengths = [len(ids) for ids in tokenizer(whole, add_special_tokens=False)["input_ids"]]
    keep = [i for i, n in enumerate(lengths) if n - 1 + per_picture <= max_length]
    left = [i for i, n in enumerate(lengths) if n - 1 + per_picture > max_length]
    return _Rows(
        [rows.sources[i] for i in keep],
        [rows.prompts[i] for i in keep],
        [rows.answers[i] for i in keep],
        left,
    )


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
    first = _rows(train.head(1), columns).sources[0]
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
    if not parts["train"].answers:
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
        for i in range(min(SAMPLE_ROWS, len(eval_rows.answers))):
            source = eval_rows.sources[i]
            name = Path(source).name if isinstance(source, Path) else msg("picture {number}", number=i + 1)
            pairs.append((f"[{name}] {eval_rows.prompts[i]}", eval_rows.answers[i]))
            pictures.append(source)
    return Prepared(
        model=model,
        train=VisionExamples(train_rows.sources, train_rows.prompts, train_rows.answers, longest),
        eval=(
            VisionExamples(eval_rows.sources, eval_rows.prompts, eval_rows.answers, longest)
            if eval_rows is not None and eval_rows.answers
            else None
        ),
        collator=VisionCollator(processor),
        notes=notes,
        eval_pairs=pairs,
        chat=True,
        pictures=pictures,
    )
