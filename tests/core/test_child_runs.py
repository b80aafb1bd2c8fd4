"""Runs in a child process and across two processes (gloo on the CPU, through ``accelerate launch``)."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from desktop.core.runs.folders import RunDir
from desktop.core.settings.config import RunConfig, load_config
from desktop.core.system.events import Event, FailedEvent, MemoryEvent, ProgressEvent, RunResult, StoppedEvent
from desktop.core.training.supervisor import ChildRun, crash_failure

POSIX = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
RUN_DEADLINE_S = 600.0
"""How long a run of two processes may take before the test ends it and fails: 20-60 s on two busy cores."""


def _config(tmp_path: Path, model: Path, data: Path, **launch: object) -> RunConfig:
    path = tmp_path / "run.toml"
    lines = [
        f'[model]\nname = "{model.as_posix()}"',
        f'[data]\nfiles = ["{data.as_posix()}"]',
        "[training]\nmax_steps = 6\nbatch_size = 4\nmax_length = 32\nlogging_steps = 1\nsave_steps = 2",
        f'[output]\nruns_dir = "{(tmp_path / "runs").as_posix()}"',
        "[launch]\n" + "\n".join(f"{k} = {json.dumps(v)}" for k, v in launch.items()),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return load_config(path)


class Recorder:
    """Collects the events; ``when(condition, action)`` acts once on the first event that matches."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._rules: list[tuple[Callable[[Event], bool], Callable[[], None]]] = []

    def when(self, condition: Callable[[Event], bool], action: Callable[[], None]) -> None:
        self._rules.append((condition, action))

    def __call__(self, event: Event) -> None:
        self.events.append(event)
        for rule in list(self._rules):
            if rule[0](event):
                self._rules.remove(rule)
                rule[1]()

    def of(self, kind: type) -> list:
        return [e for e in self.events if isinstance(e, kind)]

    def story(self) -> list[tuple[str, int | None]]:
        """The events but the per-step ones, with their steps: what a failed assertion shows."""
        routine = (ProgressEvent, MemoryEvent)
        return [
            (type(e).__name__, getattr(e, "step", None)) for e in self.events if not isinstance(e, routine)
        ]


def _run_within_deadline(child: ChildRun, stop: threading.Event) -> RunResult:
    """``child.run``, waited on for at most :data:`RUN_DEADLINE_S`; past it the child's processes are
    ended (a hard stop) and the test fails saying so, where a hang would stall the whole suite."""
    hard_stop = threading.Event()
    deadline = threading.Timer(RUN_DEADLINE_S, hard_stop.set)
    deadline.daemon = True
    deadline.start()
    try:
        result = child.run(stop, hard_stop)
    finally:
        deadline.cancel()
    assert not hard_stop.is_set(), f"the run had not ended after {RUN_DEADLINE_S:.0f} s"
    return result


def _at_step(step: int) -> Callable[[Event], bool]:
    return lambda e: isinstance(e, ProgressEvent) and e.step >= step


@pytest.mark.slow
def test_two_cpu_processes_train_stop_and_resume(tiny_bert: Path, samples: Path, tmp_path: Path) -> None:
    """The stop is asked for once step 3 is reported and lands at the step the ranks agree on, later on a
    busy machine (here 3 to 40, across the first epoch's end): every check follows that step. Each run
    is waited on to its end, under a deadline ten times what it takes on two busy cores."""
    config = _config(tmp_path, tiny_bert, samples / "reviews.csv", num_processes=2)
    config.training.max_steps = 100000  # stopped long before
    stop = threading.Event()
    first = Recorder()
    first.when(_at_step(3), stop.set)
    stopped = _run_within_deadline(ChildRun(config, first), stop)
    assert stopped.status == "stopped", (stopped.failure, first.story())
    started = first.events[[type(e).__name__ for e in first.events].index("StartedEvent")]
    assert started.processes == 2 and started.device.startswith("cpu")
    run = RunDir(stopped.run_dir)
    stop_step = first.of(StoppedEvent)[0].step
    assert stop_step >= 3, first.story()
    checkpoints = [p.name for p in run.checkpoints()]
    assert run.latest_checkpoint().name == f"checkpoint-{stop_step}", checkpoints  # both ranks stopped at one
    assert not run.is_locked()

    config.training.max_steps = stop_step + 3  # a resume may lengthen or shorten the schedule
    second = Recorder()
    finished = _run_within_deadline(ChildRun(config, second, resume=run), threading.Event())
    assert finished.status == "finished", (finished.failure, second.story())
    events = run.events()
    # Rank 0 alone reports: one loss per step over both halves of the run, one start each, one model.
    losses = [e.step for e in events if e.kind == "log" and "loss" in e.metrics]
    assert losses == list(range(1, stop_step + 4)), (stop_step, checkpoints)
    assert [e.resumed_from_step for e in events if e.kind == "started"] == [0, stop_step]
    assert [e.kind for e in events].count("finished") == 1
    assert (run.model_dir / "config.json").is_file()
    assert not list(run.path.glob("*.partial"))


@pytest.mark.slow
@POSIX
def test_a_second_stop_ends_the_child_at_once_and_keeps_the_last_checkpoint(
    tiny_bert: Path, samples: Path, tmp_path: Path
) -> None:
    config = _config(tmp_path, tiny_bert, samples / "reviews.csv", separate_process=True)
    config.training.max_steps = 100000
    stop, hard_stop = threading.Event(), threading.Event()
    child: list[ChildRun] = []
    seen = Recorder()

    def stop_hard() -> None:
        stop.set()
        hard_stop.set()

    seen.when(lambda e: e.kind == "checkpoint" and e.step >= 2, stop_hard)
    child.append(ChildRun(config, seen))
    result = child[0].run(stop, hard_stop)
    assert result.status == "stopped"
    assert (
        not psutil.pid_exists(child[0].pid) or psutil.Process(child[0].pid).status() == psutil.STATUS_ZOMBIE
    )
    run = RunDir(result.run_dir)
    last = seen.of(StoppedEvent)[0]
    assert last.checkpoint == str(run.latest_checkpoint()) and run.latest_checkpoint() is not None
    assert run.events()[-1].kind == "stopped" and not run.is_locked() and run.resumable()


@pytest.mark.slow
@POSIX
def test_a_child_that_aborts_becomes_a_failed_run_with_a_diagnosis(
    tiny_bert: Path, samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CRASH", "abort")
    monkeypatch.setenv("CRASH_STEP", "3")
    config = _config(tmp_path, tiny_bert, samples / "reviews.csv", separate_process=True)
    seen = Recorder()
    result = ChildRun(config, seen, worker="tests.crashing_worker").run(threading.Event(), threading.Event())
    assert result.status == "failed"
    failure = seen.of(FailedEvent)[-1]
    assert "aborted" in failure.reason and "SIGABRT" in failure.reason
    assert "Resume the run" in failure.remedy  # the checkpoint of step 2 is there
    run = RunDir(result.run_dir)
    assert run.status() == "failed" and run.latest_checkpoint().name == "checkpoint-2"


@pytest.mark.slow
@POSIX
def test_a_child_killed_while_saving_keeps_the_previous_checkpoint_and_resumes(
    tiny_bert: Path, samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CRASH", "kill-while-saving")
    monkeypatch.setenv("CRASH_STEP", "4")
    config = _config(tmp_path, tiny_bert, samples / "reviews.csv", separate_process=True)
    seen = Recorder()
    result = ChildRun(config, seen, worker="tests.crashing_worker").run(threading.Event(), threading.Event())
    assert result.status == "failed"
    assert "out-of-memory killer" in seen.of(FailedEvent)[-1].reason
    run = RunDir(result.run_dir)
    assert [p.name for p in run.checkpoints()] == ["checkpoint-2"]  # the torn checkpoint-4 is gone
    monkeypatch.delenv("CRASH")
    resumed = ChildRun(config, Recorder(), resume=run).run(threading.Event(), threading.Event())
    assert resumed.status == "finished", resumed.failure
    assert [e.resumed_from_step for e in run.events() if e.kind == "started"] == [0, 2]


def test_a_bad_config_in_the_child_is_invalid_input(tiny_bert: Path, samples: Path, tmp_path: Path) -> None:
    config = _config(tmp_path, tiny_bert, tmp_path / "missing.csv", separate_process=True)
    seen = Recorder()
    result = ChildRun(config, seen).run(threading.Event(), threading.Event())
    assert result.status == "invalid" and result.run_dir is None
    assert "missing.csv" in seen.of(FailedEvent)[-1].reason


def test_more_processes_than_gpus_is_refused_before_anything_starts(
    tiny_bert: Path, samples: Path, tmp_path: Path
) -> None:
    config = _config(tmp_path, tiny_bert, samples / "reviews.csv", num_processes=4)
    seen = Recorder()
    result = ChildRun(config, seen, gpus=2).run(threading.Event(), threading.Event())
    assert result.status == "invalid"
    assert "this computer has 2" in seen.of(FailedEvent)[0].reason
    assert not (tmp_path / "runs").exists()


def test_crash_diagnoses_name_the_cause() -> None:
    assert "out-of-memory killer" in crash_failure(-9, "", True).reason
    assert "segmentation fault" in crash_failure(-11, "", False).reason
    assert "Start the run again" in crash_failure(-11, "", False).remedy
    torchrun = "Root Cause (first observed failure):\n  exitcode  : -6 (pid: 4242)\n"
    assert "SIGABRT" in crash_failure(1, torchrun, True).reason
    odd = crash_failure(3, "Traceback: boom", True)
    assert "exit code 3" in odd.reason and odd.detail == "Traceback: boom"


def test_a_messages_template_survives_the_process_boundary() -> None:
    from desktop.core.system.events import PreparingEvent, event_from_wire
    from desktop.core.system.messages import msg

    event = PreparingEvent(msg("Tokenizing {rows} training rows: {percent}%", rows=10, percent=50))
    back = event_from_wire(event.to_wire())
    assert back == event and back.message.template == "Tokenizing {rows} training rows: {percent}%"
    assert back.message.params == {"rows": 10, "percent": 50}


@pytest.mark.slow
def test_a_failure_in_one_of_two_processes_is_its_own_sentence(
    tiny_bert: Path, samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Today: "ended on signal SIGTERM" (rank 0, ended by torchrun) over a stack of torchrun errors."""
    monkeypatch.setenv("CRASH", "raise-on-rank-1")
    monkeypatch.setenv("CRASH_STEP", "3")
    config = _config(tmp_path, tiny_bert, samples / "reviews.csv", num_processes=2)
    seen = Recorder()
    result = ChildRun(config, seen, worker="tests.crashing_worker").run(threading.Event(), threading.Event())
    assert result.status == "failed"
    failure = result.failure
    assert "CUDA" in failure.reason and "process 2 of 2" in failure.reason, failure
    assert "{" not in failure.reason and "torch.distributed" not in failure.reason
    assert "illegal memory access" in failure.detail, failure  # its traceback, one click away
    assert RunDir(result.run_dir).status() == "failed"
