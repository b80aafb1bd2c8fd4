"""The one load-and-check path that preview, ``validate`` and training share.

Whatever would train a useless model (a model folder without a tokenizer, a model that does not
fit the task, label spellings that split one class, a schedule shorter than one accumulation, text
the tokenizer cannot read) is refused or warned here, so the data page, ``validate`` and ``train``
always agree.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from desktop.core.data.columns import Guess, check_rows, guess_columns, label_key, unique_values
from desktop.core.data.model_checks import check_model_folder, length_problems
from desktop.core.data.tables import Table
from desktop.core.data.train_eval import hold_out, load_train_eval, rejoined
from desktop.core.settings.config import RunConfig
from desktop.core.settings.config_sections import IMAGE_TASKS
from desktop.core.system.errors import ConfigError, DataError, ModelError, Problem, Remedy
from desktop.core.system.messages import joined, msg

UNKNOWN_WARN_SHARE = 0.05
MIN_VOCABULARY = 100
MAX_CLASS_SHARE = 0.5  # more classes than half the rows: the label column is probably a text column


@dataclass
class CheckedData:
    """Data that training would accept, as training would use it.

    Attributes:
        train: The training rows (bad rows left out when the config allows it).
        eval: The evaluation rows, or ``None``.
        guess: The column mapping and how each role was found.
        notes: Warnings and things the user should know, in plain words.
    """

    train: Table
    eval: Table | None
    guess: Guess
    notes: list[str] = field(default_factory=list)


READING_SHARE = 0.6
"""Of reading and checking data, the part reading takes (what a progress bar shows, roughly)."""


def load_and_check(config: RunConfig, validated: bool = False) -> CheckedData:
    """Validate the config (unless the caller has: ``validated``), check the model folder, read the
    data and check it for the task.

    Raises:
        ConfigError: The config has problems.
        ModelError: The model folder lacks tokenizer files, or the model does not fit the task.
        DataError: The data cannot be used for the task as mapped.
    """
    train, eval_, guess = read_data(config, validated)
    return check_data(config, train, eval_, guess)


def read_data(config: RunConfig, validated: bool = False) -> tuple[Table, Table | None, Guess]:
    """Validate the config (unless ``validated``: a run session did, once) and the model folder, read
    the data and guess the column mapping.

    Raises:
        ConfigError, ModelError: As :func:`load_and_check`.
        DataError: The data cannot be read.
    """
    # A reasoning run's [grpo] settings do not change what the data is: the Rewards tab and the run say
    # them; reading the data goes on.
    problems = [] if validated else [p for p in config.validate() if not p.field.startswith("grpo")]
    if problems:
        raise ConfigError(problems)
    check_model_folder(config)
    problems = length_problems(config) if config.task not in IMAGE_TASKS else []
    if problems:
        raise ConfigError(problems)
    from desktop.core.system import progress

    with progress.part(0.0, READING_SHARE):
        train, eval_ = load_train_eval(config)
    return train, eval_, guess_columns(train, config.task, config.columns)


def check_data(
    config: RunConfig, train: Table, eval_: Table | None, guess: Guess, schedule: bool = True
) -> CheckedData:
    """Check data that was read for the task, as mapped (the second half of :func:`load_and_check`).

    Raises:
        DataError, ConfigError: The data does not fit the task or the schedule.
    """
    whole = rejoined(train, eval_)  # a random hold-out: the table it was drawn from
    if whole is not None and not config.data.drop_bad_rows:
        # Checked as one table, each problem said once for all its rows; as no row can be left out, the
        # hold-out drawn again is the same one (same rows, labels and seed).
        train, _, notes = _usable_rows(config, whole, None, guess)
        train, eval_ = hold_out(config, train)
    else:
        try:
            train, eval_, notes = _usable_rows(config, train, eval_, guess)
        except DataError:
            if whole is None:
                raise
            # A part whose rows were all bad (a small hold-out): the hold-out drawn again from the usable
            # rows. Only here, so that a run's hold-out stays the one it started with when it resumes.
            train, _, notes = _usable_rows(config, whole, None, guess)
            train, eval_ = hold_out(config, train)
    if config.task in ("classification", "image-classification"):
        if config.data.merge_label_case:
            notes += merge_label_case(train, eval_, guess.columns.label)
        notes += _check_labels(train, eval_, guess.columns.label, config)
    from desktop.core.data.tables import trim_memory

    trim_memory()  # the masks and copies of the checks
    if schedule:  # the data page leaves the schedule to Memory & speed, which shows it by its field
        problems = schedule_problems(config, len(train))
        if problems:
            raise ConfigError(problems, long_run_remedies(config, len(train)))
    return CheckedData(train, eval_, guess, notes)


def _usable_rows(
    config: RunConfig, train: Table, eval_: Table | None, guess: Guess
) -> tuple[Table, Table | None, list]:
    """The rows of both parts that a run can learn from and be evaluated on (every bad row named, and
    refused unless ``data.drop_bad_rows``), and the notes on what was left out.

    Raises:
        DataError: Rows the run cannot use, with ``data.drop_bad_rows`` off or none left.
    """
    from desktop.core.system import progress

    progress.report(READING_SHARE, msg("Checking {rows} rows", rows=len(train)))
    try:
        train, notes = check_rows(train, config.task, guess.columns, config.data.drop_bad_rows)
    except DataError as refused:
        whole = rejoined(train, eval_)
        if whole is not None:  # every bad row named, not only the training part's (those of both parts)
            check_rows(whole, config.task, guess.columns, config.data.drop_bad_rows)
        if config.task in IMAGE_TASKS:  # and the pictures' problems too: all said at once, not in rounds
            with progress.part(READING_SHARE + (1 - READING_SHARE) * 0.7, 1.0):
                pictures = _picture_problems(train, eval_, guess)
            raise DataError(joined(refused.message, pictures), refused.hint) from None
        raise
    progress.report(READING_SHARE + (1 - READING_SHARE) * 0.7, msg("Checking {rows} rows", rows=len(train)))
    if eval_ is not None:
        eval_, eval_notes = check_rows(
            eval_, config.task, guess.columns, config.data.drop_bad_rows, training=False
        )
        notes += eval_notes
    if config.task == "preference":
        from desktop.core.data.tasks.preference import check_pairs

        train, pair_notes = check_pairs(train, guess.columns, config.data.drop_bad_rows)
        notes += pair_notes
        if eval_ is not None:
            eval_, pair_notes = check_pairs(eval_, guess.columns, config.data.drop_bad_rows)
            notes += pair_notes
    if config.task in IMAGE_TASKS:  # every picture opened once, each kind of bad one named
        from desktop.core.data.image_checks import check_tables

        rows_of = _picture_rows(guess)
        label = guess.columns.label if config.task == "image-classification" else ""
        before = _classes(train, label)
        with progress.part(READING_SHARE + (1 - READING_SHARE) * 0.7, 1.0):
            (train, eval_), image_notes = check_tables(
                [train, eval_], guess.columns.image, config.data.drop_bad_rows, rows_of
            )
            notes += image_notes
        if lost := sorted(before - _classes(train, label)):  # every picture of a class left out
            notes.append(
                msg(
                    "No picture of the class {name} is left to train on: the model will not learn it.",
                    name=lost[0],
                )
                if len(lost) == 1
                else msg(
                    "No picture of the classes {names} is left to train on: the model will not learn them.",
                    names=", ".join(lost[:5]),
                )
            )
    return train, eval_, notes


def _picture_rows(guess: Guess) -> Any:
    """For conversations, how to find each picture they hold (or their images column's), for the
    picture checks; ``None``: the pictures are the image column's."""
    if not guess.columns.messages:
        return None
    from desktop.core.data.picture_chats import chat_picture_rows

    messages, images = guess.columns.messages, guess.columns.image
    return lambda table: chat_picture_rows(table, messages, images)


def _picture_problems(train: Table, eval_: Table | None, guess: Guess) -> str:
    """What the picture checks would refuse in rows that were refused for something else ("" when their
    pictures are fine, or the pictures cannot be found for the rows' own problem: an unmapped column)."""
    from desktop.core.data.image_checks import check_tables

    rows_of = _picture_rows(guess)
    if rows_of is None and guess.columns.image not in train.columns:
        return ""
    try:
        check_tables([train, eval_], guess.columns.image, False, rows_of)
    except DataError as exc:
        return exc.message
    except (KeyError, ValueError):  # a column the rows' own problem names
        return ""
    return ""


# --------------------------------------------------------------------------- the tokenizer


def check_tokenizer(config: RunConfig, tokenizer: Any, texts: list[str]) -> list[str]:
    """Refuse a tokenizer with an empty vocabulary; warn when it turns much of the text into unknowns.

    Args:
        config: The run config (for names in messages).
        tokenizer: The loaded tokenizer.
        texts: A sample of the texts the model will read.

    Raises:
        ModelError: The tokenizer has (almost) no vocabulary.
    """
    size = len(tokenizer)
    if size < MIN_VOCABULARY:
        raise ModelError(
            msg(
                "The tokenizer of {model} knows only {size} tokens: its vocabulary files are missing or "
                "empty, and every text would read as the same few tokens.",
                model=config.model.name,
                size=size,
            ),
            msg("Pick a model folder with its complete tokenizer files (tokenizer.json or vocab.txt)."),
        )
    share = unknown_share(tokenizer, texts)
    if share <= UNKNOWN_WARN_SHARE:
        return []
    return [
        msg(
            "This model does not know most of the characters in your texts: {share} of their tokens become "
            "the unknown token {unknown}, so it cannot tell those texts apart. Pick a model made for your "
            "texts' language, e.g. bert-base-chinese or hfl/chinese-roberta-wwm-ext for Chinese, or a "
            "multilingual one such as xlm-roberta-base.",
            share=f"{share:.0%}",
            unknown=tokenizer.unk_token,
        )
    ]


UNKNOWN_SAMPLE_CHARS = 4096
"""The characters of each text the unknown-token share reads."""


def unknown_share(tokenizer: Any, texts: list[str], sample: int = 500) -> float:
    """The share of tokens in ``texts`` (up to ``sample`` of them) that the tokenizer does not know."""
    unk = getattr(tokenizer, "unk_token_id", None)
    texts = [t[:UNKNOWN_SAMPLE_CHARS] for t in texts[:sample] if t]  # a 50 MB cell: its start says enough
    if unk is None or not texts:
        return 0.0
    ids = tokenizer(texts, add_special_tokens=False)["input_ids"]
    total = sum(len(row) for row in ids)
    return sum(row.count(unk) for row in ids) / total if total else 0.0


# --------------------------------------------------------------------------- labels and schedule


def _classes(table: Table, column: str) -> set[str]:
    """The classes of a table's label column (none without one)."""
    return {label_key(v) for v in unique_values(table.column(column))} if column else set()


def _check_labels(train: Table, eval_: Table | None, column: str, config: RunConfig) -> list[str]:
    spellings: dict[str, set[str]] = defaultdict(set)
    for value in unique_values(train.column(column)):
        spellings[label_key(value)].add(str(value))
    classes = len(spellings)
    if classes > 50 and classes > MAX_CLASS_SHARE * len(train):
        raise DataError(
            msg(
                '{source}: the label column "{column}" has {classes} different values in {rows} rows; a '
                "classifier learns from many examples of each class.",
                source=train.source,
                column=column,
                classes=classes,
                rows=len(train),
            ),
            msg(
                'Check that columns.label names the column with the classes (now "{column}").', column=column
            ),
        )
    if eval_ is not None:
        unseen = sorted({label_key(v) for v in unique_values(eval_.column(column))} - set(spellings))
        if unseen:
            hint = (
                msg("Add training examples of those labels, or leave their rows out.")
                if not config.validation.files
                else msg(
                    "Add training examples of those labels, or use a random hold-out (validation.fraction)."
                )
            )
            labels = ", ".join(unseen[:5])
            raise DataError(
                msg(
                    "The evaluation rows have labels that never occur in training: {labels} and {more} more.",
                    labels=labels,
                    more=len(unseen) - 5,
                )
                if len(unseen) > 5
                else msg(
                    "The evaluation rows have labels that never occur in training: {labels}.", labels=labels
                ),
                hint,
            )
    notes = _case_only_labels(train, column, spellings)
    merged = {key: sorted(raw) for key, raw in spellings.items() if len(raw) > 1}
    if not merged:
        return notes
    shown = "; ".join(" ".join(f'"{r}"' for r in raw) + f" -> {key}" for key, raw in list(merged.items())[:5])
    return [
        msg(
            "Labels written differently but with the same value were merged into one class each: {labels}.",
            labels=shown,
        ),
        *notes,
    ]


def merge_label_case(train: Table, eval_: Table | None, column: str) -> list[str]:
    """Write every label that differs from another only in case as the spelling most training rows
    use (``data.merge_label_case``); what was merged, as a note."""
    counts = train.column(column).astype(str).str.strip().value_counts()
    by_fold: dict[str, list[str]] = defaultdict(list)
    for spelling in counts.index:
        by_fold[str(spelling).casefold()].append(str(spelling))
    mapping = {}
    for spellings in by_fold.values():
        if len(spellings) > 1:
            chosen = max(spellings, key=lambda s: (int(counts[s]), s))
            mapping.update({s: chosen for s in spellings if s != chosen})
    if not mapping:
        return []
    for table in {id(t.base): t for t in (train, eval_) if t is not None}.values():
        # The rows as read are shared by the training and evaluation views: changed once, seen by both.
        values = table.base[column]
        stripped = values.astype(str).str.strip()
        table.base[column] = values.where(~stripped.isin(list(mapping)), stripped.map(mapping))
    shown = "; ".join(f'"{old}" ({int(counts[old])}) -> "{new}"' for old, new in list(mapping.items())[:5])
    return [msg("Labels that differ only in case were merged into one class each: {labels}.", labels=shown)]


def _case_only_labels(train: Table, column: str, spellings: dict[str, set[str]]) -> list[str]:
    """Classes whose names differ only in case ("Positive", "positive"): named with their rows, since
    they train as separate classes and are most often one class typed two ways."""
    by_fold: dict[str, list[str]] = defaultdict(list)
    for key in spellings:
        by_fold[key.casefold()].append(key)
    groups = [sorted(keys) for keys in by_fold.values() if len(keys) > 1]
    if not groups:
        return []
    counts = train.column(column).astype(str).str.strip().value_counts()
    shown = "; ".join(", ".join(f'"{key}": {int(counts.get(key, 0))}' for key in keys) for keys in groups[:5])
    return [
        msg(
            "Labels that differ only in case are separate classes (rows of each): {labels}. If they are "
            'one class, tick "Labels that differ only in case are one class" under Columns '
            "(data.merge_label_case in a config).",
            labels=shown,
        )
    ]


def planned_steps(config: RunConfig, num_train: int) -> int:
    """The optimizer steps of a run on one process, as the Trainer counts them (the most it can be)."""
    t = config.training
    if t.max_steps > 0:
        return t.max_steps
    batches = math.ceil(num_train / max(1, t.batch_size))
    return max(1, math.ceil(max(1, batches // max(1, t.gradient_accumulation)) * t.epochs))


MANY_STEPS = 2_000_000
"""More optimizer steps than a fine-tune takes (days at 10 steps a second): asked about first, because
it is most often a slip (epochs = 1000 for 10) and would hold a GPU for weeks."""


def long_run_remedies(config: RunConfig, num_train: int) -> tuple[Remedy, ...]:
    """ "Train all N steps" when the schedule's only problem is its length: the user confirms it."""
    steps = planned_steps(config, num_train)
    if config.training.max_steps > 0 or steps <= MANY_STEPS:
        return ()
    return (Remedy(msg("Train all {steps} steps", steps=f"{steps:,}"), {"training.max_steps": steps}),)


def schedule_problems(config: RunConfig, num_train: int) -> list[Problem]:
    """What in the training schedule cannot work with ``num_train`` training rows."""
    t = config.training
    batches = math.ceil(num_train / max(1, t.batch_size))
    problems = []
    steps = planned_steps(config, num_train)
    if t.max_steps <= 0 and steps > MANY_STEPS:  # a max_steps that says so is the user's confirmation
        problems.append(
            Problem(
                "training.epochs",
                msg(
                    "makes {steps} optimizer steps ({epochs} epochs of {rows} rows): at 10 steps a second "
                    "that is {days} days. Lower the epochs; or, if you mean it, set training.max_steps to "
                    "{count} (on the command line: --set training.max_steps={count}).",
                    steps=f"{steps:,}",
                    epochs=f"{t.epochs:g}",
                    rows=f"{num_train:,}",
                    days=f"{steps / 10 / 86400:.0f}",
                    count=steps,
                ),
            )
        )
    if t.warmup >= 1 and t.warmup >= steps:
        problems.append(
            Problem(
                "training.warmup",
                msg(
                    "is {warmup} steps, but the whole run is {steps} steps: the learning rate would still "
                    "be rising when it ends. Set it below {steps} steps, or as a fraction of the run (0.1 "
                    "warms up over the first tenth).",
                    warmup=f"{t.warmup:g}",
                    steps=steps,
                ),
            )
        )
    if t.gradient_accumulation <= batches:
        return problems
    return [
        *problems,
        Problem(
            "training.gradient_accumulation",
            msg(
                "is {accumulation}, but one pass over the {rows} training rows is only {batches} batches of "
                "{batch}; lower it to at most {batches} (or lower the batch size).",
                accumulation=t.gradient_accumulation,
                rows=num_train,
                batches=batches,
                batch=t.batch_size,
            ),
        ),
    ]
