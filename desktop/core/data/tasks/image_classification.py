"""Image classification: pictures sorted into the user's classes; accuracy and macro-F1, as for text.

The pictures are not turned into tensors ahead of the run (100,000 pictures of 224 x 224 would be 60 GB
of floats): each example is the picture's source and its class, decoded, optionally varied
(``images.augment``) and put through the model's image processor as its batch is made, in the data
loader's worker processes when the run has some.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from desktop.core.data.columns import label_counts, label_key, unique_values
from desktop.core.data.images import Source, decode, reading_side, source_of
from desktop.core.data.tables import Table
from desktop.core.data.tasks import Prepared, Tokenizing
from desktop.core.data.tasks.classification import compute_metrics, label_maps
from desktop.core.hub.models import load_model
from desktop.core.settings.config import Columns, RunConfig

__all__ = ["ImageCollator", "ImageExamples", "compute_metrics", "prepare", "texts"]


def texts(table: Table, columns: Columns, tokenizer: Any = None) -> dict[str, list[str]]:
    """No texts: the model reads pictures (nothing for token statistics)."""
    return {}


@dataclass
class ImageExamples(Sequence):
    """The examples of a run: each row's picture and class id, decoded only when its batch is made.

    ``augment``: each picture varied a little every time it is read (training only); ``at_least``: the
    side a photo may be decoded down to (:func:`~desktop.core.data.images.reading_side`).
    """

    sources: list[Source]
    labels: list[int]
    augment: bool = False
    at_least: int = 0

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> dict[str, Any]:  # type: ignore[override]
        picture = decode(self.sources[index], at_least=self.at_least)
        if self.augment:
            picture = varied(picture)
        return {"image": picture, "labels": self.labels[index]}


def varied(picture: Any, rng: random.Random | None = None) -> Any:
    """The picture mirrored half the time, cropped by up to a tenth of each side, its brightness and
    contrast varied by up to 15% (torchvision's usual light augmentation, with Pillow alone)."""
    from PIL import ImageEnhance, ImageOps

    rng = rng or random
    if rng.random() < 0.5:
        picture = ImageOps.mirror(picture)
    width, height = picture.size
    keep = rng.uniform(0.9, 1.0)
    w, h = max(1, round(width * keep)), max(1, round(height * keep))
    left, top = rng.randint(0, width - w), rng.randint(0, height - h)
    picture = picture.crop((left, top, left + w, top + h))
    picture = ImageEnhance.Brightness(picture).enhance(rng.uniform(0.85, 1.15))
    return ImageEnhance.Contrast(picture).enhance(rng.uniform(0.85, 1.15))


class ImageCollator:
    """Pictures into the model's ``pixel_values`` through its image processor, with their classes."""

    def __init__(self, processor: Any) -> None:
        self.processor = processor

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, Any]:
        import torch

        batch = self.processor(images=[f["image"] for f in features], return_tensors="pt")
        return {
            "pixel_values": batch["pixel_values"],
            "labels": torch.tensor([f["labels"] for f in features], dtype=torch.long),
        }


def examples(
    table: Table, columns: Columns, label2id: dict[str, int], augment: bool = False, at_least: int = 0
) -> ImageExamples:
    """The rows of ``table`` as :class:`ImageExamples` (sources read once, nothing decoded)."""
    sources = [source_of(v) for v in table.column(columns.image)]  # none blank: checked by check_rows
    labels = [label2id[label_key(v)] for v in table.column(columns.label)]
    return ImageExamples([s if s is not None else b"" for s in sources], labels, augment, at_least)


def picture_names(table: Table, columns: Columns) -> list[str]:
    """Each evaluation row's picture as the report keeps it: its path, or where it is in the data (a hub
    dataset's picture has no file of its own)."""
    names = []
    for index, value in enumerate(table.column(columns.image)):
        source = source_of(value)
        names.append(str(source) if not isinstance(source, bytes) else table.locate(index))
    return names


def prepare(
    config: RunConfig,
    processor: Any,
    train: Table,
    eval_: Table | None,
    columns: Columns,
    model_kwargs: dict[str, Any] | None = None,
    tokenizing: Tokenizing | None = None,
) -> Prepared:
    """Load an image-classification model with a new head for the classes of ``train``."""
    from transformers import AutoModelForImageClassification

    label2id, id2label = label_maps(unique_values(train.column(columns.label)))
    kwargs = {k: v for k, v in (model_kwargs or {}).items() if k != "attn_implementation"}
    model = load_model(
        AutoModelForImageClassification,
        config.model,
        "image classification",
        num_labels=len(label2id),
        label2id=label2id,
        id2label=id2label,
        ignore_mismatched_sizes=True,  # a checkpoint's own head (ImageNet's 1,000 classes) is replaced
        **kwargs,
    )
    counts = {"train": label_counts(train.column(columns.label))}
    eval_examples, eval_texts = None, None
    if eval_ is not None:
        counts["eval"] = label_counts(eval_.column(columns.label))
        eval_examples = examples(eval_, columns, label2id, at_least=reading_side(processor))
        eval_texts = picture_names(eval_, columns)
    return Prepared(
        model=model,
        train=examples(train, columns, label2id, config.images.augment, reading_side(processor)),
        eval=eval_examples,
        collator=ImageCollator(processor),
        compute_metrics=compute_metrics,
        eval_texts=eval_texts,
        label_counts=counts,
    )
