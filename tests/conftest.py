"""Shared fixtures: tiny models, sample data, and an isolated app data folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

SAMPLES = Path(__file__).resolve().parent.parent / "resources" / "samples"


@pytest.fixture(autouse=True)
def app_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own app data folder, so runs never land in the user's."""
    home = tmp_path / "home"
    monkeypatch.setenv("FINETUNE_STUDIO_HOME", str(home))
    return home


@pytest.fixture(scope="session")
def samples() -> Path:
    """The bundled sample data folder."""
    return SAMPLES


@pytest.fixture(scope="session")
def tiny_gpt2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests import tiny_models

    return tiny_models.gpt2(tmp_path_factory.mktemp("gpt2"))


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests import tiny_models

    return tiny_models.bert(tmp_path_factory.mktemp("bert"))


@pytest.fixture(scope="session")
def tiny_t5(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests import tiny_models

    return tiny_models.t5(tmp_path_factory.mktemp("t5"))
