"""A look at the data before training: first rows, column mapping and token-length statistics."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from desktop.core.columns import Guess, check_rows, guess_columns
from desktop.core.config import RunConfig
from desktop.core.data import Table, load_train_eval


@dataclass(frozen=True)
class TokenStats:
    """Token lengths of one kind of text.

    Attributes:
        count: Texts measured.
        min, median, p95, max: Lengths in tokens.
        over_limit: Texts longer than the max length (they are truncated).
    """

    count: int
    min: int
    median: int
    p95: int
    max: int
    over_limit: int
    lengths: list[int] = field(repr=False, default_factory=list)


@dataclass
class Preview:
    """What ``preview`` shows."""

    columns: list[str]
    rows: list[dict[str, Any]]
    guess: Guess
    num_train: int
    num_eval: int
    notes: list[str]
    token_stats: dict[str, TokenStats] = field(default_factory=dict)


def token_stats(texts: list[str], tokenizer: Any, limit: int) -> TokenStats:
    """Token-length statistics of ``texts`` (without truncation)."""
    import numpy as np

    lengths = [len(ids) for ids in tokenizer(texts, add_special_tokens=True)["input_ids"]]
    arr = np.asarray(lengths)
    return TokenStats(
        count=len(lengths),
        min=int(arr.min()),
        median=int(np.median(arr)),
        p95=int(np.percentile(arr, 95)),
        max=int(arr.max()),
        over_limit=int((arr > limit).sum()),
        lengths=lengths,
    )


def preview(config: RunConfig, num_rows: int = 5, tokenizer: Any = None, sample: int = 5000) -> Preview:
    """Read the data as a run would, guess the mapping, and measure token lengths.

    Args:
        config: The run config.
        num_rows: Rows to show.
        tokenizer: When given, token statistics are computed (on up to ``sample`` rows).
        sample: The most rows measured.

    Raises:
        DataError: The data cannot be read or does not fit the task.
    """
    train, eval_ = load_train_eval(config)
    guess = guess_columns(train, config.task, config.columns)
    train, notes = check_rows(train, config.task, guess.columns, config.data.drop_bad_rows)
    result = Preview(
        columns=train.columns,
        rows=train.frame.head(num_rows).to_dict("records"),
        guess=guess,
        num_train=len(train),
        num_eval=len(eval_) if eval_ is not None else 0,
        notes=notes,
    )
    if tokenizer is not None:
        result.token_stats = _stats(config, train, guess, tokenizer, sample)
    return result


def _stats(
    config: RunConfig, train: Table, guess: Guess, tokenizer: Any, sample: int
) -> dict[str, TokenStats]:
    from desktop.core.tasks import task_module

    head = train.take(list(range(min(sample, len(train)))))
    texts = task_module(config.task).texts(head, guess.columns, tokenizer)
    return {
        name: token_stats(values, tokenizer, config.training.max_length) for name, values in texts.items()
    }
