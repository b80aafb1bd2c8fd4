"""Hub datasets: the config's id, configuration and splits reach ``datasets``, and failures read well.

``datasets.load_dataset`` and the local copy are replaced by fakes here; downloads are in test_downloads.
"""

from __future__ import annotations

import pytest

from desktop.core.data.train_eval import load_train_eval
from desktop.core.settings.config import RunConfig
from desktop.core.system.errors import DataError


@pytest.fixture
def fake_datasets(monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    import datasets

    calls: list[tuple] = []
    splits = {
        "train": {"sentence": ["good", "bad", "fine", "awful"], "label": [1, 0, 1, 0]},
        "validation": {"sentence": ["great", "poor"], "label": [1, 0]},
    }

    from desktop.core.hub import clients

    def local_copy(ref: str, revision: str = "", dataset: bool = False) -> object:
        return f"/cache/datasets--{ref.replace('/', '--')}" if ref == "owner/reviews" and dataset else None

    monkeypatch.setattr(clients, "local_copy", local_copy)

    def load_dataset(
        path: str, name: str | None = None, split: str | None = None, **kwargs: object
    ) -> object:
        path = path.removeprefix("/cache/datasets--").replace("--", "/")
        calls.append((path, name, split))
        if path != "owner/reviews":
            raise FileNotFoundError(f"Dataset '{path}' doesn't exist on the Hub or cannot be accessed.")
        return datasets.Dataset.from_dict(splits[split])

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    return calls


def _config(hub_id: str, **validation: object) -> RunConfig:
    config = RunConfig(task="classification")
    config.data.hub_id, config.data.hub_config = hub_id, "en"
    for key, value in validation.items():
        setattr(config.validation, key, value)
    return config


def test_existing_validation_split(fake_datasets: list[tuple]) -> None:
    train, eval_ = load_train_eval(_config("owner/reviews", split="validation"))
    assert fake_datasets == [("owner/reviews", "en", "train"), ("owner/reviews", "en", "validation")]
    assert train.frame["sentence"].tolist() == ["good", "bad", "fine", "awful"]
    assert eval_.frame["label"].tolist() == [1, 0]
    assert train.locate(2) == "owner/reviews[train] row 3"


def test_fraction_of_the_train_split(fake_datasets: list[tuple]) -> None:
    train, eval_ = load_train_eval(_config("owner/reviews", fraction=0.25))
    assert (len(train), len(eval_)) == (3, 1)


def test_a_dataset_not_downloaded_says_how_to_get_it(fake_datasets: list[tuple]) -> None:
    with pytest.raises(DataError, match="owner/missing is not on this computer yet") as info:
        load_train_eval(_config("owner/missing"))
    assert "datasets download owner/missing" in info.value.hint
    assert fake_datasets == []  # nothing was loaded (or downloaded) behind the user's back
