"""A disk that fills during a save is the same clear sentence as the free-space check (issue 59)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from desktop.core.runs.folders import RunDir
from desktop.core.training.run import run_training
from tests.core.helpers import Recorder, make_config


@pytest.mark.slow
def test_a_disk_filled_during_a_checkpoint_write_is_the_disk_full_sentence(
    tiny_bert: Path, samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_save = torch.save

    def full_disk(obj: object, f: object, *args: object, **kwargs: object) -> None:
        if str(f).endswith("optimizer.pt"):  # what PyTorch's writer says when the disk fills mid-file
            raise RuntimeError("[enforce fail at inline_container.cc:664] . unexpected pos 4096 vs 1207")
        real_save(obj, f, *args, **kwargs)

    monkeypatch.setattr(torch, "save", full_disk)
    config = make_config(
        "classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs", max_steps=4
    )
    config.training.save_steps = 2

    result = run_training(config, Recorder().append)

    assert result.status == "failed"
    assert result.failure.reason.startswith("The disk is full")
    assert "unexpected error" not in result.failure.reason.lower()
    assert not RunDir(result.run_dir).checkpoints()  # no half-written checkpoint left to resume from
