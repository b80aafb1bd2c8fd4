"""Sequence-to-sequence: source text in, target text out (translation, summarisation, rewriting)."""

from __future__ import annotations

import functools
from typing import Any

from desktop.core.data.tables import Table
from desktop.core.data.tasks import Prepared, Tokenizing
from desktop.core.hub.models import load_model
from desktop.core.settings.config import Columns, RunConfig


def texts(table: Table, columns: Columns, tokenizer: Any = None) -> dict[str, list[str]]:
    """Source and target texts, for token statistics."""
    return {
        "source": [str(v) for v in table.column(columns.source)],
        "target": [str(v) for v in table.column(columns.target)],
    }


def encode(table: Table, columns: Columns, tokenizer: Any, max_length: int) -> list[dict]:
    """Tokenized sources with tokenized targets as labels."""
    pair = texts(table, columns)
    enc = tokenizer(pair["source"], text_target=pair["target"], truncation=True, max_length=max_length)
    return [{k: enc[k][i] for k in ("input_ids", "attention_mask", "labels")} for i in range(len(table))]


def prepare(
    config: RunConfig,
    tokenizer: Any,
    train: Table,
    eval_: Table | None,
    columns: Columns,
    model_kwargs: dict[str, Any] | None = None,
    tokenizing: Tokenizing | None = None,
) -> Prepared:
    """Load an encoder-decoder model and tokenize the rows."""
    from transformers import AutoModelForSeq2SeqLM, DataCollatorForSeq2Seq

    model = load_model(AutoModelForSeq2SeqLM, config.model, "sequence-to-sequence", **(model_kwargs or {}))
    max_length = config.training.max_length
    tokenizing = tokenizing or Tokenizing()

    # A partial of a module-level function: it pickles, so large data is tokenized in several processes.
    rows = functools.partial(encode, columns=columns, tokenizer=tokenizer, max_length=max_length)

    from desktop.core.data.tasks import SCORED_ROWS

    sample = texts(eval_.take(range(min(SCORED_ROWS, len(eval_)))), columns) if eval_ is not None else None
    return Prepared(
        eval_pairs=list(zip(sample["source"], sample["target"], strict=True)) if sample else [],
        model=model,
        train=tokenizing.rows("train", train, columns, rows),
        eval=tokenizing.rows("eval", eval_, columns, rows) if eval_ is not None else None,
        # Without model=: the model makes its decoder inputs from the labels itself, and a collator
        # that holds the model cannot be sent to data loader workers (Windows spawns them).
        collator=DataCollatorForSeq2Seq(tokenizer, label_pad_token_id=-100),
        seq2seq=True,
    )
