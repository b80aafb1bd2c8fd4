"""The last step is the last (issue 59): a resume from a checkpoint at max_steps trains no step more and
only finishes the evaluation and the save; a resumed run's train_loss covers all its steps."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from desktop.core.runs.folders import RunDir
from desktop.core.settings.config import RunConfig
from desktop.core.system.events import FinishedEvent, ProgressEvent
from desktop.core.training.run import run_training
from tests.core.helpers import Recorder, make_config


@pytest.mark.slow
def test_a_resume_from_the_last_checkpoint_trains_no_step_more(
    tiny_bert: Path, samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from safetensors.torch import load_file

    config = make_config(
        "classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs",
        max_steps=8, save_steps=4, eval_steps=4, scheduler="constant", warmup=0,
    )  # fmt: skip

    def killed(*args: object, **kwargs: object) -> None:  # the run dies in its final evaluation
        raise RuntimeError("killed during the final evaluation")

    monkeypatch.setattr("desktop.core.training.train_loop.final_eval", killed)
    first = run_training(config, Recorder().append)
    assert first.status == "failed"
    run = RunDir(first.run_dir)
    last = run.latest_checkpoint()
    assert last is not None and last.name == "checkpoint-8"
    monkeypatch.undo()

    events = Recorder()
    result = run_training(run.config(), events.append, resume=run)

    assert result.status == "finished", result.failure
    assert not events.of(ProgressEvent)  # no step 9 of 8
    saved, checkpoint = (
        load_file(str(run.model_dir / "model.safetensors")),
        load_file(str(last / "model.safetensors")),
    )
    assert all(bool((saved[name] == checkpoint[name]).all()) for name in checkpoint)  # every weight as it was
    (finished,) = events.of(FinishedEvent)
    assert finished.step == 8 and 0 < finished.metrics["train_loss"] < 10  # the whole run's, not NaN


@pytest.mark.slow
def test_a_resumed_runs_train_loss_covers_every_step(tiny_bert: Path, samples: Path, tmp_path: Path) -> None:
    def config(name: str) -> RunConfig:
        return make_config(
            "classification", tiny_bert, [samples / "reviews.csv"], tmp_path / name,
            max_steps=12, save_steps=100, eval_steps=100, logging_steps=2,
        )  # fmt: skip

    whole = run_training(config("whole"), Recorder().append)
    stop = threading.Event()

    def stop_at_six(event: object) -> None:
        if isinstance(event, ProgressEvent) and event.step == 6:
            stop.set()

    part = run_training(config("parts"), stop_at_six, stop)
    assert part.status == "stopped"
    resumed = run_training(RunDir(part.run_dir).config(), Recorder().append, resume=RunDir(part.run_dir))

    assert resumed.status == "finished", resumed.failure
    assert resumed.metrics["train_loss"] == pytest.approx(whole.metrics["train_loss"], rel=1e-3)


@pytest.mark.slow
def test_a_final_model_cut_short_is_damaged_and_resumes_from_the_last_good_checkpoint(
    tiny_bert: Path, samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A finished run whose model.safetensors lost its end (a full disk, a copy that stopped) was listed
    "finished", and export then said "unexpected error: SafetensorError"."""
    from desktop.cli import main
    from desktop.core.runs.listing import list_runs

    config = make_config(
        "classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs",
        max_steps=8, save_steps=4, eval_steps=4,
    )  # fmt: skip
    first = run_training(config, Recorder().append)
    assert first.status == "finished"
    weights = RunDir(first.run_dir).model_dir / "model.safetensors"
    whole = weights.read_bytes()
    weights.write_bytes(whole[: len(whole) // 2])

    (info,) = list_runs(tmp_path / "runs")
    assert (info.status, info.problem, info.resumable) == ("damaged", "model.safetensors is cut short", True)
    assert main(["runs", "--runs-dir", str(tmp_path / "runs")]) == 0
    listed = capsys.readouterr().out
    assert "damaged" in listed and "model.safetensors is cut short: resume it from its last good" in listed

    result = run_training(RunDir(first.run_dir).config(), Recorder().append, resume=RunDir(first.run_dir))
    assert result.status == "finished", result.failure
    assert weights.stat().st_size == len(whole)
    assert list_runs(tmp_path / "runs")[0].status == "finished"
