"""Run history: every run folder is listed with the status a user would expect, read from disk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from desktop.core.runs.folders import RunDir, delete_run, run_result
from desktop.core.runs.listing import list_runs, loss_curve
from desktop.core.system.errors import InputError
from desktop.core.system.events import (
    FailedEvent,
    FinishedEvent,
    LogEvent,
    ProgressEvent,
    StartedEvent,
    StoppedEvent,
)
from tests.core.helpers import fake_run as _run


def test_runs_are_listed_with_status_score_and_curve(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    finished = _run(
        runs,
        "done",
        ProgressEvent(19, 100, 0.4, 19.0, 81.0, 8.0, 3900.0, 0.05),
        ProgressEvent(20, 100, 0.4, 20.0, 80.0, 8.0, 4100.0, 0.04),  # the last figure: once warmed up
        LogEvent(20, 0.4, {"eval_loss": 0.5, "eval_accuracy": 0.8}),
        LogEvent(30, 0.6, {"eval_loss": 0.6, "eval_accuracy": 0.9}),
        FinishedEvent(30, "model", {"eval_accuracy": 0.9}),
    )
    (finished.model_dir).mkdir()
    (finished.model_dir / "config.json").write_text("{}", encoding="utf-8")
    _run(runs, "stopped", StoppedEvent(20, "checkpoint-20"), checkpoint=20)
    _run(runs, "failed", FailedEvent("Out of GPU memory", "Lower the batch size"))
    crashed = _run(runs, "crashed", checkpoint=20)
    (crashed.path / "run.lock").write_text(str(os.getpid()), encoding="utf-8")  # a lock file, held by nobody
    running = _run(runs, "running")
    running.lock()  # this very process

    by_name = {info.name.split("-", 2)[-1]: info for info in list_runs(runs)}

    assert {k: v.status for k, v in by_name.items()} == {
        "done": "finished",
        "stopped": "stopped",
        "failed": "failed",
        "crashed": "interrupted",
        "running": "running",
    }
    assert {k for k, v in by_name.items() if v.resumable} == {"stopped", "crashed"}  # they have a checkpoint
    done = by_name["done"]
    assert done.best == ("eval_accuracy", 0.9) and done.dataset == "reviews.csv"
    assert done.tokens_per_second == 4100.0 and by_name["stopped"].tokens_per_second is None
    assert done.model == "all-MiniLM-L6-v2" and (done.step, done.total_steps) == (20, 100)
    assert loss_curve(finished) == [(10, 0.1), (20, 0.05)] and done.created > 0
    assert (done.learning_rate, done.batch_size, done.lora, done.num_train) == (5e-5, 8, "", 90)
    assert by_name["failed"].best == ("loss", 0.05)  # no evaluation yet: the last training loss
    assert run_result(finished).model_dir == finished.model_dir
    assert run_result(finished).metrics == {"eval_accuracy": 0.9}


def test_a_damaged_run_still_lists_and_a_half_written_event_is_skipped(tmp_path: Path) -> None:
    run = _run(tmp_path / "runs", "broken")
    with open(run.events_path, "a", encoding="utf-8") as fh:
        fh.write('{"event": "progress", "step": 3')  # the app died mid-line
    run.config_path.write_text("[[[ not toml", encoding="utf-8")

    (info,) = list_runs(tmp_path / "runs")

    assert (info.task, info.status, info.resumable) == ("?", "damaged", False)


def test_delete_removes_the_folder_but_never_a_running_run(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    old, live = _run(runs, "old", StoppedEvent(20, "")), _run(runs, "live")
    live.lock()

    delete_run(old)
    with pytest.raises(InputError, match="still running"):
        delete_run(live)

    assert not old.path.exists() and live.path.exists()


def test_a_resumed_run_that_crashed_is_crashed_not_stopped(tmp_path: Path) -> None:
    run = _run(tmp_path / "runs", "again", StoppedEvent(20, "checkpoint-20"), checkpoint=20)
    run.append(StartedEvent(str(run.path), 100, 90, 10, "cpu", resumed_from_step=20))
    for step in range(21, 40):
        run.append(ProgressEvent(step, 100, step / 50, step * 1.0, 60.0, 8.0, None))
    run.close()
    assert run.status() == "interrupted" and run.resumable()


def test_status_reads_only_the_end_of_a_long_log(tmp_path: Path) -> None:
    run = _run(tmp_path / "runs", "long")
    with open(run.events_path, "a", encoding="utf-8") as fh:
        for step in range(21, 60_000):
            fh.write(ProgressEvent(step, 60_000, 1.0, 1.0, 1.0, 8.0, None).to_json() + "\n")
        fh.write(FinishedEvent(60_000, "model", {}).to_json() + "\n")

    tail = run.last_events()

    assert run.status() == "finished" and 0 < len(tail) < 1000 and tail[-1].kind == "finished"


def test_only_whole_checkpoints_are_resume_points(tmp_path: Path) -> None:
    from tests.core.helpers import fake_checkpoint

    run = _run(tmp_path / "runs", "torn", checkpoint=10)
    state = fake_checkpoint(run.checkpoints_dir / "checkpoint-20", 20)
    (state / "trainer_state.json").write_text('{"global_step": 2', encoding="utf-8")
    optimizer = fake_checkpoint(run.checkpoints_dir / "checkpoint-30", 30)
    (optimizer / "optimizer.pt").write_bytes(b"PK\x03\x04 torn by a full disk")
    (run.checkpoints_dir / "checkpoint-40").mkdir()  # a second Ctrl-C mid-save

    assert run.latest_checkpoint().name == "checkpoint-10"
    moved = dict(run.set_aside_damaged())
    assert set(moved) == {"checkpoint-20", "checkpoint-30", "checkpoint-40"}
    assert moved["checkpoint-30"] == "optimizer.pt is damaged"
    assert [p.name for p in run.checkpoints()] == ["checkpoint-10"]
    assert (run.checkpoints_dir / "damaged-checkpoint-30" / "optimizer.pt").is_file()  # kept, not deleted


def test_a_torn_last_line_does_not_swallow_the_next_event(tmp_path: Path) -> None:
    run = _run(tmp_path / "runs", "torn-line")
    with open(run.events_path, "ab") as fh:
        fh.write('{"event": "log", "step": 21, "metrics": {"loss": "好'.encode()[:-1])  # cut mid-character
    again = RunDir(run.path)
    again.append(StoppedEvent(21, ""))
    again.close()
    assert again.events()[-1] == StoppedEvent(21, "") and again.status() == "stopped"


def test_listing_reads_the_summary_and_folds_in_only_the_newer_events(tmp_path: Path) -> None:
    from desktop.core.runs import summaries

    run = _run(tmp_path / "runs", "long")
    saved = summaries.Summary.from_json((run.path / summaries.SUMMARY_NAME).read_text(encoding="utf-8"))
    assert saved.step == 20 and saved.covered == run.events_path.stat().st_size
    with open(run.events_path, "a", encoding="utf-8") as fh:  # written after the summary (a crash)
        fh.write(ProgressEvent(30, 100, 0.6, 30.0, 60.0, 8.0, None).to_json() + "\n")
        fh.write(LogEvent(30, 0.6, {"eval_accuracy": 0.75}).to_json() + "\n")
        fh.write('{"event": "progress", "step": 3')  # a line being written: waits for next time

    (info,) = list_runs(tmp_path / "runs")

    assert (info.step, info.best, info.status) == (30, ("eval_accuracy", 0.75), "interrupted")
    again = summaries.Summary.from_json((run.path / summaries.SUMMARY_NAME).read_text(encoding="utf-8"))
    assert again.step == 30 and again.covered < run.events_path.stat().st_size  # saved, torn line not


def test_a_run_without_a_summary_is_read_in_full_once(tmp_path: Path) -> None:
    from desktop.core.runs import summaries

    run = _run(tmp_path / "runs", "older", FinishedEvent(20, "model", {}))
    (run.path / summaries.SUMMARY_NAME).unlink()  # a run of an older version

    (info,) = list_runs(tmp_path / "runs")

    assert (info.status, info.step, info.task) == ("finished", 20, "classification")
    assert (run.path / summaries.SUMMARY_NAME).is_file()  # next time the summary is enough


def test_a_long_loss_curve_is_thinned_but_keeps_its_peaks() -> None:
    from desktop.core.runs.listing import thin

    points = [(step, 1.0) for step in range(100_000)]
    points[54_321] = (54_321, 9.0)  # one spike
    thinned = thin(points, 2000)
    assert len(thinned) <= 2000 and (54_321, 9.0) in thinned
    assert thinned[0][0] == 0 and thinned[-1][0] > 99_000


def test_runs_compare_every_setting_not_only_the_listed_ones(tmp_path: Path) -> None:
    from desktop.core.runs.listing import setting_differences
    from tests.core.helpers import fake_run

    a, b, c = (fake_run(tmp_path, name) for name in ("a", "b", "c"))
    for run, steps in ((a, 30), (b, 30), (c, 400)):
        config = run.config()
        config.data.files = ["/data/reviews.csv"]
        config.training.max_steps = steps
        config.save(run.config_path)
    assert setting_differences([a, b]) == []  # only their names and folders differ
    assert setting_differences([a, c]) == [("training.max_steps", ["30", "400"])]
    c.config_path.write_text("[[[", encoding="utf-8")
    assert ("training.max_steps", ["30", "?"]) in setting_differences([a, c])
