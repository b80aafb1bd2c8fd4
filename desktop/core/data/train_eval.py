"""The training rows and the evaluation rows a config asks for: read, or split off at random."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from desktop.core.data.hub_datasets import read_hub
from desktop.core.data.local_files import read_files
from desktop.core.data.tables import Table

if TYPE_CHECKING:
    from desktop.core.settings.config import RunConfig


def load_train_eval(config: RunConfig) -> tuple[Table, Table | None]:
    """The training rows and the evaluation rows (or ``None``) as the config asks."""
    from desktop.core.settings.config_sections import IMAGE_TASKS

    data, val = config.data, config.validation
    pictures = config.task in IMAGE_TASKS  # picture paths relative to their table
    if data.hub_id:
        train = read_hub(data.hub_id, data.hub_config, data.split)
        if val.split:
            return train, read_hub(data.hub_id, data.hub_config, val.split)
    else:
        train = read_files(data.files, pictures)
    if val.files:
        return train, read_files(val.files, pictures)
    return hold_out(config, train)


def hold_out(config: RunConfig, table: Table) -> tuple[Table, Table | None]:
    """``table`` split into training and evaluation rows by ``validation.fraction`` (a classifier's class
    by class); no evaluation rows when the fraction is 0 or there is a single row."""
    val = config.validation
    if val.fraction <= 0 or len(table) < 2:
        return table, None
    label = config.columns.label or "label"  # a folder of class folders: its "label" column
    classes = config.task in ("classification", "image-classification") and label in table.columns
    return split_fraction(table, val.fraction, val.seed, list(table.column(label)) if classes else None)


def split_fraction(
    table: Table, fraction: float, seed: int, labels: list[object] | None = None
) -> tuple[Table, Table]:
    """Hold out ``fraction`` of the rows (at least one) at random, reproducibly; both parts keep the
    rows' order and are views of ``table`` (nothing copied).

    With ``labels`` (a classifier's), the rows held out are drawn class by class, in proportion to each
    class's rows (the remainder to the classes with the largest shares), and every class keeps at least
    one training row: a class of 8 in 33 is evaluated, and a class of one picture trains instead of
    leaving a label that training never saw (so with many single-row classes fewer rows may be held out
    than asked). Labels that are nearly all different (more classes than
    half the rows: not classes, a wrong column that the checks name) are split as rows without labels."""
    import numpy as np

    rng = np.random.default_rng(seed)
    n_eval = min(len(table) - 1, max(1, math.floor(len(table) * fraction + 0.5)))
    if labels is None or len({str(v) for v in labels}) > len(table) // 2:
        order = rng.permutation(len(table))
        return table.take(np.sort(order[n_eval:])), table.take(np.sort(order[:n_eval]))
    _, which = np.unique(np.asarray([str(v) for v in labels]), return_inverse=True)
    counts = np.bincount(which)
    share = counts * n_eval / len(table)
    held = np.minimum(np.floor(share).astype(int), counts - 1)
    for kind in np.argsort(-(share - held), kind="stable"):  # the rest: largest remainder first
        if held.sum() >= n_eval:
            break
        held[kind] += held[kind] < counts[kind] - 1
    members = np.split(np.argsort(which, kind="stable"), np.cumsum(counts)[:-1])  # each class's rows
    out = np.concatenate([rng.permutation(rows)[:kept] for rows, kept in zip(members, held, strict=True)])
    if len(out) == 0:  # every class has a single row: one at random, as without labels
        out = rng.permutation(len(table))[:1]
    kept = np.setdiff1d(np.arange(len(table)), out)
    return table.take(kept), table.take(np.sort(out))


def rejoined(train: Table, eval_: Table | None) -> Table | None:
    """The table that :func:`split_fraction` split into ``train`` and ``eval_``, its rows in their first
    order; ``None`` when the two are not the parts of one split (separate files, no evaluation)."""
    import numpy as np

    if eval_ is None or train.base is not eval_.base or train.rows is None or eval_.rows is None:
        return None
    rows = np.concatenate([train.rows, eval_.rows])
    origins = [part.origin if part.origin is not None else part.rows for part in (train, eval_)]
    order = np.argsort(rows, kind="stable")
    return Table(train.base, train.source, train.segments, np.concatenate(origins)[order], rows[order])
