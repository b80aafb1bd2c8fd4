"""The last step's model (issue 54): a run whose model is its best checkpoint can still be exported as it
ended, from the last step's checkpoint, LoRA merged as the run's own model is; nothing half-made."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from desktop.core.results import export
from desktop.core.results.last_step import Cancelled, LastStepRun, build, checkpoint
from desktop.core.runs.folders import RunDir
from desktop.core.system.errors import InputError
from desktop.core.system.events import FinishedEvent
from desktop.core.training.run import run_training
from tests.core.helpers import Recorder, overfitting_classifier


def _weights(folder: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(folder / "model.safetensors")


def _close(a: dict, b: dict) -> bool:
    import torch

    return a.keys() == b.keys() and all(torch.allclose(a[k], b[k], atol=1e-5) for k in a)


def _run(tiny_bert: Path, samples: Path, runs: Path, lora: bool = False) -> tuple[RunDir, dict]:
    """A classifier whose best checkpoint comes early; the last comes at step 40."""
    config = overfitting_classifier(tiny_bert, samples, runs, early_stopping=0)
    config.lora.enabled = lora
    events = Recorder()
    result = run_training(config, events.append)
    assert result.status == "finished", result.failure
    found = events.of(FinishedEvent)[-1].best
    assert found["kept"] and found["step"] < found["last_step"] == 40
    return RunDir(result.run_dir), found


@pytest.mark.slow
def test_the_last_steps_model_is_its_checkpoints_and_exports_with_its_own_score(
    tiny_bert: Path, samples: Path, tmp_path: Path
) -> None:
    run, found = _run(tiny_bert, samples, tmp_path / "runs")
    last = checkpoint(run, found)
    assert last is not None and last.name == "checkpoint-40"
    fractions: list[float] = []

    view = build(run, found, fractions.append)

    assert isinstance(view, LastStepRun) and view.model_dir == run.path / "last-step" / "model"
    assert _close(_weights(view.model_dir), _weights(last))
    assert not _close(_weights(view.model_dir), _weights(run.model_dir))  # not the best checkpoint's
    assert (view.model_dir / "tokenizer.json").is_file() and not (view.model_dir / "optimizer.pt").exists()
    assert fractions[-1] == 1.0
    out = export.export_run(view, tmp_path / "last")
    assert out.verification is not None and out.verification.ok  # against the last step's model
    assert _close(_weights(out.folder), _weights(last))
    card = (out.folder / "README.md").read_text(encoding="utf-8")
    from desktop.cli import main

    assert main(["export", str(run.path), str(tmp_path / "cli"), "--last-step", "--no-verify"]) == 0
    assert _close(_weights(tmp_path / "cli"), _weights(last))
    assert f"The model is the last step's, step 40: validation loss {found['last_value']:.4g}" in card
    assert build(run, found).model_dir == view.model_dir  # made once


@pytest.mark.slow
def test_a_lora_runs_last_step_is_merged_as_the_runs_own_model_is(
    tiny_bert: Path, samples: Path, tmp_path: Path
) -> None:
    """The merge path is checked against the Trainer's own: merging the best checkpoint's adapters
    gives the run's ``model/``."""
    from desktop.core.results.last_step import _merge

    run, found = _run(tiny_bert, samples, tmp_path / "runs", lora=True)
    best = run.checkpoints_dir / f"checkpoint-{found['step']}"
    again = tmp_path / "best-again"
    again.mkdir()
    _merge(run, best, again)
    assert _close(_weights(again), _weights(run.model_dir))

    view = build(run, found)

    assert (view.adapter_dir / "adapter_model.safetensors").is_file()
    assert not _close(_weights(view.model_dir), _weights(run.model_dir))
    out = export.export_run(view, tmp_path / "adapter", lora="adapter")
    assert _close(
        _weights_named(out.folder, "adapter_model.safetensors"),
        _weights_named(run.checkpoints_dir / "checkpoint-40", "adapter_model.safetensors"),
    )


def _weights_named(folder: Path, name: str) -> dict:
    from safetensors.torch import load_file

    return load_file(folder / name)


def test_no_last_checkpoint_is_said_and_a_cancelled_build_leaves_nothing(tmp_path: Path) -> None:
    from tests.core.helpers import fake_checkpoint, fake_run

    found = {
        "metric": "eval_loss",
        "value": 0.5,
        "step": 10,
        "last_step": 20,
        "last_value": 0.7,
        "kept": True,
    }
    run = fake_run(tmp_path / "runs", "best", FinishedEvent(20, "model", {}, best=found))
    with pytest.raises(InputError, match=r"last step's checkpoint of .* was not kept"):
        build(run, found)
    assert checkpoint(run, dict(found, step=20)) is None  # the model is the last step's already

    fake_checkpoint(run.checkpoints_dir / "checkpoint-20", 20)
    run.model_dir.mkdir()
    (run.model_dir / "config.json").write_text("{}", encoding="utf-8")
    cancel = threading.Event()

    def cancel_once_copied(fraction: float) -> None:
        if fraction >= 0.9:  # the weights are copied; Cancel is pressed now
            cancel.set()

    with pytest.raises(Cancelled):
        build(run, found, cancel_once_copied, cancel)
    assert not any((run.path / "last-step").iterdir())  # nothing half-made, nothing in place
    made = build(run, found)  # and a later build makes it
    assert (made.model_dir / "model.safetensors").is_file() and (made.model_dir / "config.json").is_file()

    # Only what a build made is ever deleted: a folder of the same name put there by someone else stays.
    shutil.rmtree(made.model_dir)
    theirs = run.path / "last-step" / "model.partial"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(InputError, match="was not made by Finetune Studio"):
        build(run, found)
    assert (theirs / "notes.txt").read_text(encoding="utf-8") == "mine"
