"""Reading one split of a downloaded hub dataset into a :class:`~desktop.core.data.tables.Table`."""

from __future__ import annotations

from desktop.core.data.formats.parsing import arrow_to_pandas
from desktop.core.data.tables import Table, nulls_to_none
from desktop.core.system.errors import DataError
from desktop.core.system.messages import msg


def read_hub(hub_id: str, config_name: str, split: str) -> Table:
    """Load one split of a hub dataset from its downloaded copy (Hugging Face's or ModelScope's cache).

    A dataset is downloaded as its own step (:mod:`desktop.core.hub.downloads`), never inside loading.

    Raises:
        DataError: The dataset is not on this computer yet, or the configuration or split cannot be loaded.
    """
    import datasets

    from desktop.core.hub.clients import local_copy

    folder = local_copy(hub_id, dataset=True)
    if folder is None:
        raise DataError(
            msg("The hub dataset {name} is not on this computer yet.", name=hub_id),
            msg(
                "Download it first: Download on the Model & data step, or "
                "finetune-studio-cli datasets download {name}",
                name=hub_id,
            ),
        )
    try:
        ds = datasets.load_dataset(str(folder), config_name or None, split=split)
    except Exception as exc:
        raise DataError(
            msg(
                "The hub dataset {name} ({split}) could not be loaded: {error}",
                name=hub_id,
                split=split,
                error=exc,
            ),
            msg("Check the configuration and split names (the dataset's page lists them)."),
        ) from None
    frame = arrow_to_pandas(ds.with_format("arrow")[:])  # the cache's file, mapped
    for name, feature in ds.features.items():  # a class label's number as its name ("cat", not 3)
        if isinstance(feature, datasets.ClassLabel) and name in frame.columns:
            names = feature.names
            frame[name] = [
                names[v] if isinstance(v, int) and 0 <= v < len(names) else None  # -1: no label
                for v in frame[name].tolist()
            ]
    frame = nulls_to_none(frame)
    if len(frame) == 0:
        raise DataError(
            msg("The split {split} of {name} has no rows.", split=split, name=hub_id),
            msg("Choose another split."),
        )
    return Table(frame, f"{hub_id}[{split}]", [(0, (f"{hub_id}[{split}]", "row"), None, 1)])
