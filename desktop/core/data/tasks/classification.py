"""Text classification: string or integer labels, accuracy and macro-F1."""

from __future__ import annotations

import functools
from typing import Any

from desktop.core.data.columns import label_key, unique_values
from desktop.core.data.tables import Table
from desktop.core.data.tasks import Prepared, Tokenizing
from desktop.core.hub.models import load_model
from desktop.core.settings.config import Columns, RunConfig


def label_maps(labels: list[Any]) -> tuple[dict[str, int], dict[int, str]]:
    """``label2id`` and ``id2label`` for the labels seen; numbers sort as numbers."""
    keys = {label_key(v) for v in labels}
    numeric = all(k.lstrip("-").isdigit() for k in keys)
    ordered = sorted(keys, key=int) if numeric else sorted(keys)
    return {k: i for i, k in enumerate(ordered)}, dict(enumerate(ordered))


def texts(table: Table, columns: Columns, tokenizer: Any = None) -> dict[str, list[str]]:
    """The texts the model reads, for token statistics."""
    out = {"text": [str(v) for v in table.column(columns.text)]}
    if columns.text_pair:
        out["text_pair"] = [str(v or "") for v in table.column(columns.text_pair)]
    return out


def _encode(
    table: Table, columns: Columns, tokenizer: Any, max_length: int, label2id: dict[str, int]
) -> list[dict]:
    inputs = texts(table, columns)
    enc = tokenizer(inputs["text"], inputs.get("text_pair"), truncation=True, max_length=max_length)
    labels = [label2id[label_key(v)] for v in table.column(columns.label)]
    keys = list(enc.keys())
    return [{**{k: enc[k][i] for k in keys}, "labels": labels[i]} for i in range(len(labels))]


def prepare(
    config: RunConfig,
    tokenizer: Any,
    train: Table,
    eval_: Table | None,
    columns: Columns,
    model_kwargs: dict[str, Any] | None = None,
    tokenizing: Tokenizing | None = None,
) -> Prepared:
    """Load a sequence-classification model and tokenize the rows."""
    from transformers import AutoModelForSequenceClassification, DataCollatorWithPadding

    label2id, id2label = label_maps(unique_values(train.column(columns.label)))  # checked by load_and_check
    model = load_model(
        AutoModelForSequenceClassification,
        config.model,
        "text classification",
        num_labels=len(label2id),
        label2id=label2id,
        id2label=id2label,
        **(model_kwargs or {}),
    )
    if model.config.pad_token_id is None:
        model.config.pad_token_id = tokenizer.pad_token_id
    max_length = config.training.max_length
    tokenizing = tokenizing or Tokenizing()

    # A partial of a module-level function: it pickles, so large data is tokenized in several processes.
    encode = functools.partial(
        _encode, columns=columns, tokenizer=tokenizer, max_length=max_length, label2id=label2id
    )
    from desktop.core.data.columns import label_counts

    counts = {"train": label_counts(train.column(columns.label))}
    eval_texts = None
    if eval_ is not None:
        counts["eval"] = label_counts(eval_.column(columns.label))
        parts = texts(eval_, columns)
        eval_texts = [
            f"{a}\n{b}" if b else a
            for a, b in zip(parts["text"], parts.get("text_pair") or [""] * len(parts["text"]), strict=True)
        ]
    return Prepared(
        model=model,
        train=tokenizing.rows("train", train, columns, encode),
        eval=tokenizing.rows("eval", eval_, columns, encode) if eval_ is not None else None,
        collator=DataCollatorWithPadding(tokenizer),
        compute_metrics=compute_metrics,
        eval_texts=eval_texts,
        label_counts=counts,
    )


def compute_metrics(prediction: Any) -> dict[str, float]:
    """Accuracy and macro-F1 from logits and label ids."""
    import numpy as np

    logits = (
        prediction.predictions[0] if isinstance(prediction.predictions, tuple) else prediction.predictions
    )
    predicted = np.asarray(logits).argmax(-1)
    labels = np.asarray(prediction.label_ids)
    f1s = []
    for c in np.union1d(labels, predicted):
        tp = np.sum((predicted == c) & (labels == c))
        fp = np.sum((predicted == c) & (labels != c))
        fn = np.sum((predicted != c) & (labels == c))
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0)
    return {"accuracy": float(np.mean(predicted == labels)), "macro_f1": float(np.mean(f1s))}
