"""One path for a run (issue 53): a run session driven from a fake front end that sees only events.

What the window and the command line each did for themselves (finding the run to resume, fetching a
missing model, in-process or child process, stop then hard stop) is checked here once.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from desktop.core.runs.folders import RunDir
from desktop.core.system.errors import ConfigError, InputError
from desktop.core.system.events import (
    DownloadEvent,
    Event,
    FailedEvent,
    PreparingEvent,
    ProgressEvent,
    StartedEvent,
    StoppedEvent,
)
from desktop.core.training.session import RunRequest, RunSession
from tests.core.helpers import Recorder, make_config
from tests.fakehub import FakeHub

POSIX = pytest.mark.skipif(
    sys.platform == "win32", reason="the child's process tree is checked with POSIX calls"
)


class FrontEnd(Recorder):
    """A front end that only listens: every event, and a stop sent once a step is reached."""

    def __init__(self, stop_at: int | None = None, stops: int = 1) -> None:
        super().__init__()
        self.session: RunSession | None = None
        self.stop_at, self.stops = stop_at, stops

    def __call__(self, event: Event) -> None:
        self.append(event)
        if self.stop_at is not None and isinstance(event, ProgressEvent) and event.step >= self.stop_at:
            self.stop_at = None
            for _ in range(self.stops):
                self.session.stop()  # type: ignore[union-attr]


def _session(request: RunRequest, front: FrontEnd) -> RunSession:
    front.session = RunSession(request, front)
    return front.session


def _config_file(config: object, path: Path) -> Path:
    path.write_text(config.to_toml(), encoding="utf-8")  # type: ignore[attr-defined]
    return path


@pytest.mark.slow
def test_a_stopped_run_is_found_by_its_config_file_and_resumed(
    tiny_bert: Path, samples: Path, tmp_path: Path
) -> None:
    config = make_config(
        "classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs", max_steps=12
    )
    config.training.save_steps = 4
    origin = _config_file(config, tmp_path / "run.toml")
    first = FrontEnd(stop_at=5)
    result = _session(RunRequest(config, origin=origin, keep_awake=False), first).run()
    assert result.status == "stopped" and RunDir(result.run_dir).resumable()

    again = FrontEnd()
    session = _session(RunRequest(config, resume_latest=True, origin=origin, keep_awake=False), again)
    result = session.run()

    assert result.status == "finished", result.failure
    assert session.resume is not None and session.resume.path == RunDir(result.run_dir).path
    (started,) = again.of(StartedEvent)
    assert started.resumed_from_step > 0 and again.last_step() == 12


def test_nothing_to_resume_and_a_bad_config_are_refused_before_anything_is_written(
    tiny_bert: Path, samples: Path, tmp_path: Path
) -> None:
    config = make_config("classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs")
    origin = _config_file(config, tmp_path / "run.toml")
    front = FrontEnd()
    with pytest.raises(InputError, match=r"No stopped or interrupted run of .*run\.toml with a checkpoint"):
        _session(RunRequest(config, resume_latest=True, origin=origin), front).run()

    config.training.learning_rate = -1.0
    session = _session(RunRequest(config), front)
    with pytest.raises(ConfigError) as refused:
        session.run()
    assert not (tmp_path / "runs").exists() and not front  # nothing written, nothing reported
    result = session.failed(refused.value)  # as the window takes it: a failure on the page
    assert result.status == "invalid" and front.of(FailedEvent) == [result.failure]
    assert "learning_rate" in result.failure.reason


@pytest.mark.slow
def test_a_missing_model_is_downloaded_first_with_progress_then_trained(
    fake_hub: FakeHub, samples: Path, tmp_path: Path
) -> None:
    config = make_config(
        "causal-lm", Path("tiny/gpt2"), [samples / "chat.jsonl"], tmp_path / "runs", max_steps=2
    )
    config.model.name = "tiny/gpt2"
    front = FrontEnd()
    result = _session(RunRequest(config, keep_awake=False), front).run()

    assert result.status == "finished", result.failure
    said = [e.message for e in front.of(PreparingEvent)]
    assert said[0] == "tiny/gpt2 is not on this computer yet: downloading it first."
    downloads = front.of(DownloadEvent)
    assert downloads and downloads[-1].done == downloads[-1].total > 0
    assert front.index(downloads[-1]) < front.index(front.of(StartedEvent)[0])  # its own step, first


@pytest.mark.slow
def test_a_stop_during_the_download_ends_it_and_starts_no_run(
    fake_hub: FakeHub, samples: Path, tmp_path: Path
) -> None:
    release = fake_hub.stall["model.safetensors"] = threading.Event()
    config = make_config("causal-lm", Path("x"), [samples / "chat.jsonl"], tmp_path / "runs")
    config.model.name = "tiny/gpt2"
    front = FrontEnd()
    session = _session(RunRequest(config, keep_awake=False), front)
    threading.Thread(target=lambda: fake_hub.stalled.wait(60) and session.stop(), daemon=True).start()
    try:
        result = session.run()
    finally:
        release.set()
    assert result.status == "stopped" and session.stopped_in_download and result.run_dir is None
    assert front.of(StoppedEvent) and not front.of(StartedEvent)
    assert not [p for p in tmp_path.rglob("*.incomplete") if p.stat().st_size == 0]  # no empty leftovers
    assert not list(tmp_path.rglob("model.safetensors"))  # no half model taken for a whole one


@pytest.mark.slow
@POSIX
def test_in_a_child_process_a_second_stop_ends_it_at_once(
    tiny_bert: Path, samples: Path, tmp_path: Path
) -> None:
    import psutil

    config = make_config(
        "classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs", max_steps=100000
    )
    config.launch.separate_process = True
    front = FrontEnd(stop_at=3, stops=2)
    session = _session(RunRequest(config, keep_awake=False), front)
    assert session.in_child

    result = session.run()

    assert result.status == "stopped"
    children = [
        p for p in psutil.Process().children(recursive=True) if "desktop.worker" in " ".join(p.cmdline())
    ]
    assert all(p.status() == psutil.STATUS_ZOMBIE for p in children)
    assert RunDir(result.run_dir).status() == "stopped" and not RunDir(result.run_dir).is_locked()


@pytest.mark.slow
def test_in_process_a_second_stop_is_still_a_graceful_one(
    tiny_bert: Path, samples: Path, tmp_path: Path
) -> None:
    config = make_config(
        "classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs", max_steps=100000
    )
    front = FrontEnd(stop_at=3, stops=2)
    session = _session(RunRequest(config, keep_awake=False), front)
    assert not session.in_child

    result = session.run()

    assert result.status == "stopped"
    stopped = front.of(StoppedEvent)[-1]
    assert stopped.checkpoint and RunDir(result.run_dir).resumable()  # a checkpoint at the step it stopped
