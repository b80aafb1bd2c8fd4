"""A look at the data before training: first rows, column mapping and token-length statistics."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from desktop.core.data.checks import check_data, check_tokenizer, read_data
from desktop.core.data.columns import Guess
from desktop.core.data.tables import Table, trim_memory
from desktop.core.settings.config import RunConfig
from desktop.core.settings.config_sections import IMAGE_TASKS
from desktop.core.system.errors import StudioError


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
    complete: bool = True
    """False for :func:`preview_head`: the first rows only, every row not checked yet."""
    label_counts: dict[str, dict[str, int]] = field(default_factory=dict)
    """Classification: rows per label of the ``train`` and ``eval`` sets."""


CHARS_PER_TOKEN_BOUND = 64
"""More characters than a token ever holds in practice: a text is measured up to ``limit`` times this,
which says whether it is over the limit without tokenizing all of a 50 MB cell (minutes, gigabytes)."""


def token_stats(texts: list[str], tokenizer: Any, limit: int) -> TokenStats:
    """Token-length statistics of ``texts`` (without truncation; a text far over ``limit`` is measured
    up to a bound, so its length reads as "over the limit", not its exact count)."""
    import numpy as np

    cap = max(limit, 512) * CHARS_PER_TOKEN_BOUND
    texts = [text[:cap] for text in texts]
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


HEAD_ROWS = 1000
"""The rows :func:`preview_head` reads and guesses the mapping from."""


def preview_head(config: RunConfig, num_rows: int = 5) -> Preview | None:
    """The first rows of local data files and the mapping guessed from them, in a moment however large
    the files: what to show while :func:`preview` checks every row. ``None`` for a hub dataset (its
    copy on disk is read by :func:`preview` directly) or when the config names no data yet.

    Raises:
        DataError: The first file cannot be read.
    """
    from desktop.core.data.columns import guess_columns
    from desktop.core.data.local_files import read_head
    from desktop.core.data.tables import concat

    if config.data.hub_id or not config.data.files:
        return None
    pictures = config.task in IMAGE_TASKS
    table = concat([read_head(path, HEAD_ROWS, pictures) for path in config.data.files[:1]])
    guess = guess_columns(table, config.task, config.columns)
    rows = table.records(num_rows)
    _warm(rows, guess.columns.image)
    return Preview(table.columns, rows, guess, 0, 0, [], complete=False)


def _warm(rows: list[dict[str, Any]], column: str) -> None:
    """The shown rows' thumbnails decoded here, in the preview's worker (:func:`warm_thumbnails`)."""
    if column:
        from desktop.core.data.images import warm_thumbnails

        warm_thumbnails([row.get(column) for row in rows])


def preview(
    config: RunConfig,
    num_rows: int = 5,
    tokenizer: Any = None,
    sample: int = 5000,
    schedule: bool = True,
    load_tokenizer: Callable[[], Any] | None = None,
) -> Preview:
    """Read and check the data exactly as a run would, and measure token lengths.

    It accepts what training accepts and refuses what training refuses (both go through
    :func:`~desktop.core.data.checks.load_and_check`).

    Args:
        config: The run config.
        num_rows: Rows to show.
        tokenizer: When given, token statistics and the share of unknown tokens are measured (on
            up to ``sample`` rows), against the config's max length.
        sample: The most rows measured.
        schedule: Also check the training schedule against the number of rows (the data page
            leaves that to Memory & speed).
        load_tokenizer: Instead of ``tokenizer``: loads it once the data is checked and only the
            sample measured is kept (PyTorch and a million rows are never in memory together).

    Raises:
        ConfigError, ModelError, DataError: What training would refuse, with the same message. When
            the data was read but does not fit, the error's ``partial`` is a :class:`Preview` of it.
    """
    train, eval_, guess = read_data(config)
    read = Preview(train.columns, train.records(num_rows), guess, len(train), 0, [])
    try:
        checked = check_data(config, train, eval_, guess, schedule)
    except StudioError as exc:
        exc.partial = read  # type: ignore[attr-defined]  # the data was read: the page can show it
        raise
    train = checked.train
    result = Preview(
        columns=train.columns,
        rows=train.records(num_rows),
        guess=checked.guess,
        num_train=len(train),
        num_eval=len(checked.eval) if checked.eval is not None else 0,
        notes=checked.notes,
    )
    label = checked.guess.columns.label
    if config.task in ("classification", "image-classification") and label:
        from desktop.core.data.columns import label_counts

        result.label_counts = {"train": label_counts(train.column(label))}
        if checked.eval is not None:
            result.label_counts["eval"] = label_counts(checked.eval.column(label))
    if config.task in IMAGE_TASKS:  # pictures: no texts to measure, no tokenizer to load
        tokenizer, load_tokenizer = None, None
        _warm(result.rows, result.guess.columns.image)
    if tokenizer is None and load_tokenizer is not None:
        head = train.head(sample).compact()
        del train, eval_, checked, read
        trim_memory()
        tokenizer, train = load_tokenizer(), head
    if tokenizer is not None:
        texts = sample_texts(config, train, result.guess, tokenizer, sample)
        result.notes = result.notes + check_tokenizer(
            config, tokenizer, [t for v in texts.values() for t in v]
        )
        result.token_stats = {
            name: token_stats(values, tokenizer, config.training.max_length) for name, values in texts.items()
        }
        if config.task == "causal-lm":  # the rows the max length will leave out: told now, not after training
            from desktop.core.data.tasks.causal_lm import length_note

            head = train.take(list(range(min(sample, len(train)))))
            note = length_note(
                head, result.guess.columns, tokenizer, config.training.max_length, result.num_train
            )
            result.notes = result.notes + ([note] if note else [])
        if config.task == "preference":  # the prompts that fill the max length, the answers it cuts
            from desktop.core.data.tasks.preference import check_lengths

            head = train.take(list(range(min(sample, len(train)))))
            result.notes = (
                result.notes
                + check_lengths(head, result.guess.columns, tokenizer, config.training.max_length)[1]
            )
    return result


def sample_texts(
    config: RunConfig, train: Table, guess: Guess, tokenizer: Any, sample: int
) -> dict[str, list[str]]:
    """The texts the model will read, by kind, from the first ``sample`` training rows."""
    from desktop.core.data.tasks import task_module

    head = train.take(list(range(min(sample, len(train)))))
    return task_module(config.task).texts(head, guess.columns, tokenizer)
