"""A model's weights and a checkpoint are read into the system's cache, Python's lock released, before
PyTorch reads them holding it (a window sharing the process froze while it waited for the disk)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from desktop.core.runs.folders import RunDir
from desktop.core.settings.config import ModelSource
from desktop.core.system import readahead
from desktop.core.system.readahead import read_ahead


def test_the_weight_files_of_a_folder_are_read_and_nothing_else(tmp_path: Path) -> None:
    (tmp_path / "model-00001-of-00002.safetensors").write_bytes(b"w" * 3_000_000)
    (tmp_path / "model-00002-of-00002.safetensors").write_bytes(b"w" * 1_000)
    (tmp_path / "optimizer.pt").write_bytes(b"o" * 2_000)
    (tmp_path / "model.gguf").write_bytes(b"g" * 5_000)  # another tool's copy: not what loads
    (tmp_path / "tokenizer.json").write_text("{}", encoding="utf-8")
    assert read_ahead(tmp_path) == 3_003_000


def test_weights_too_large_for_the_memory_available_are_left_to_the_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import psutil

    (tmp_path / "model.safetensors").write_bytes(b"w" * 4_000)
    monkeypatch.setattr(psutil, "virtual_memory", lambda: SimpleNamespace(available=12_000))
    assert read_ahead(tmp_path) == 0  # read ahead, their first pages would be pushed out again
    assert read_ahead(tmp_path / "missing") == 0


def test_a_model_is_read_ahead_before_it_is_loaded(tiny_bert: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from transformers import AutoModelForSequenceClassification

    from desktop.core.hub.models import load_model

    order: list[str] = []
    monkeypatch.setattr(readahead, "read_ahead", lambda folder: order.append(f"read {Path(folder).name}"))
    real = AutoModelForSequenceClassification.from_pretrained

    class Auto:
        @staticmethod
        def from_pretrained(path, **kwargs):
            order.append("load")
            return real(path, **kwargs)

    load_model(Auto, ModelSource(name=str(tiny_bert)), "text classification", num_labels=2)
    assert order == [f"read {tiny_bert.name}", "load"]


def test_a_checkpoint_is_read_ahead_before_the_trainer_resumes_from_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desktop.core.training.resume import train_from

    order: list[str] = []
    monkeypatch.setattr(readahead, "read_ahead", lambda folder: order.append(f"read {Path(folder).name}"))
    trainer = SimpleNamespace(
        train=lambda resume_from_checkpoint: order.append("train") or "done",
        add_callback=lambda callback: None,
        remove_callback=lambda callback: None,
    )
    checkpoint = tmp_path / "checkpoints" / "checkpoint-20"
    checkpoint.mkdir(parents=True)
    assert train_from(trainer, RunDir(tmp_path), checkpoint, lambda event: None) == "done"
    assert order == ["read checkpoint-20", "train"]


def test_read_folders_reads_every_file_below_the_folders_and_skips_what_it_cannot(tmp_path: Path) -> None:
    app, samples = tmp_path / "desktop", tmp_path / "samples"
    (app / "gui" / "widgets").mkdir(parents=True)
    samples.mkdir()
    (app / "gui" / "widgets" / "plotting.py").write_bytes(b"x" * 2_500_000)  # more than one read
    (app / "__init__.py").write_bytes(b"")
    (samples / "reviews.csv").write_bytes(b"text,label\n")
    (app / "gone.py").symlink_to(tmp_path / "nowhere.py")  # a dangling link: skipped
    assert readahead.read_folders(app, samples) == 2_500_000 + len(b"text,label\n")
