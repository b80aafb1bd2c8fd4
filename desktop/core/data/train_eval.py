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
    if val.fraction <= 0 or len(train) < 2:
        return train, None
    return split_fraction(train, val.fraction, val.seed)


def split_fraction(table: Table, fraction: float, seed: int) -> tuple[Table, Table]:
    """Hold out ``fraction`` of the rows (at least one) at random, reproducibly; both parts keep the
    rows' order and are views of ``table`` (nothing copied)."""
    import numpy as np

    order = np.random.default_rng(seed).permutation(len(table))
    n_eval = min(len(table) - 1, max(1, math.floor(len(table) * fraction + 0.5)))
    return table.take(np.sort(order[n_eval:])), table.take(np.sort(order[:n_eval]))


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
