"""Swapping PyTorch at the launcher's start: built beside the old runtime, put in place only when complete
and when nothing runs from the old one; a failure at any point leaves the old PyTorch working.

The build itself is faked here (the journey in test_bundle.py builds a real one); the renames, the
waiting for processes and the request's life are real.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from desktop.core.environment import swap_request
from desktop.core.environment.swap_request import SwapRequest, ask_for_swap, pending_swap
from desktop.launcher import runtime as rt
from desktop.launcher import swap
from desktop.launcher.runtime import Bundle, Marker, Options, Runtime, SetupError, TorchChoice

NEW = SwapRequest("torch==2.14.1+cu130", "https://download.pytorch.org/whl/cu130", ["torchvision"])


@pytest.fixture
def old(tmp_path: Path, bundle: Bundle) -> Runtime:
    """A complete runtime with the CPU build, and a file that tells it apart."""
    runtime = Runtime(tmp_path / "data" / "runtime")
    runtime.python.parent.mkdir(parents=True)
    runtime.python.write_text("old python", encoding="utf-8")
    runtime.write_marker(Marker(bundle.version, bundle.digest(), "torch==2.13.0+cpu", "3.12"))
    return runtime


class FakeBuild:
    """Stands in for ``setup``: makes a complete runtime with the asked-for build, or fails."""

    def __init__(self, fail: bool = False) -> None:
        self.fail, self.calls = fail, []

    def __call__(
        self, runtime: Runtime, bundle: Bundle, options: Options, data: Path, fresh: bool, **kw
    ) -> None:
        self.calls.append(kw)
        runtime.python.parent.mkdir(parents=True, exist_ok=True)
        runtime.python.write_text("new python", encoding="utf-8")
        if self.fail:
            raise SetupError("The download stopped.", "Check the network.")
        runtime.write_marker(Marker(bundle.version, bundle.digest(), kw["torch"].requirement, "3.12"))


def _in_place(runtime: Runtime) -> str:
    marker = runtime.marker()
    assert marker is not None
    return marker.torch


@pytest.fixture
def build(monkeypatch: pytest.MonkeyPatch, old: Runtime) -> FakeBuild:
    """The app asked for NEW; building it is faked (and counted)."""
    ask_for_swap(old.root.parent, NEW)
    fake = FakeBuild()
    monkeypatch.setattr(swap, "setup", fake)
    return fake


def test_the_new_runtime_replaces_the_old_one_only_when_complete(
    build: FakeBuild, bundle: Bundle, old: Runtime
) -> None:
    data = old.root.parent
    lines: list[str] = []

    swap.swap_torch(old, bundle, Options(), data, pending_swap(data), on_line=lines.append)

    assert _in_place(old) == "torch==2.14.1+cu130" and old.python.read_text(encoding="utf-8") == "new python"
    (call,) = build.calls
    assert call["torch"].index_url == NEW.index_url and call["companions"] == ("torchvision",)
    assert not swap.staging(old).root.exists() and not swap.retired(old).exists()  # nothing left beside it
    assert pending_swap(data) is None  # done: the next start just starts the app


def test_a_build_that_fails_leaves_the_old_pytorch_and_no_half_runtime(
    monkeypatch: pytest.MonkeyPatch, bundle: Bundle, old: Runtime
) -> None:
    data = old.root.parent
    ask_for_swap(data, NEW)
    monkeypatch.setattr(swap, "setup", FakeBuild(fail=True))

    with pytest.raises(SetupError, match="download stopped"):
        swap.swap_torch(old, bundle, Options(), data, NEW)

    assert _in_place(old) == "torch==2.13.0+cpu" and old.python.read_text(encoding="utf-8") == "old python"
    assert not swap.staging(old).root.exists()  # gigabytes of a half-built runtime are not kept
    assert pending_swap(data) is None  # the next start does not try again unasked


def _process_in(runtime: Runtime) -> subprocess.Popen:
    """A process started from a program inside the runtime, as the app's window or a worker is."""
    program = runtime.root / "bin" / "sleep"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", program)
    return subprocess.Popen([str(program), "60"])


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds processes through /proc")
def test_the_swap_waits_for_the_old_runtimes_processes_and_keeps_the_build_when_they_stay(
    build: FakeBuild, bundle: Bundle, old: Runtime
) -> None:
    data = old.root.parent
    worker = _process_in(old)
    try:
        lines: list[str] = []
        with pytest.raises(swap.StillInUse, match="still running"):
            swap.swap_torch(old, bundle, Options(), data, NEW, on_line=lines.append, wait_s=1.5)
        assert f"sleep-{worker.pid}" in " ".join(lines)
        assert _in_place(old) == "torch==2.13.0+cpu"  # untouched while it runs
        assert swap.staging(old).marker() is not None and pending_swap(data) == NEW  # kept for the next start

        # It ends while the next start waits: that start swaps without building again.
        ended = threading.Timer(1.0, worker.send_signal, args=(signal.SIGTERM,))
        ended.start()
        swap.swap_torch(old, bundle, Options(), data, NEW, on_line=lines.append, wait_s=30)
        ended.join()
    finally:
        worker.kill()
        worker.wait()
    assert len(build.calls) == 1
    assert _in_place(old) == "torch==2.14.1+cu130"


@pytest.mark.slow
def test_on_windows_a_locked_file_is_waited_for(
    monkeypatch: pytest.MonkeyPatch, bundle: Bundle, old: Runtime
) -> None:
    """Windows refuses to rename a folder while a DLL in it is loaded: the swap waits for the lock."""
    data = old.root.parent
    monkeypatch.setattr(swap, "setup", FakeBuild())
    monkeypatch.setattr(swap, "running_from", lambda root: [])
    real_replace, refusals = os.replace, [2]

    def replace(source: Path, target: Path) -> None:
        if Path(source) == old.root and refusals[0]:
            refusals[0] -= 1
            raise PermissionError(32, "The process cannot access the file")
        real_replace(source, target)

    monkeypatch.setattr(swap.os, "replace", replace)
    lines: list[str] = []
    swap.swap_torch(old, bundle, Options(), data, NEW, on_line=lines.append, wait_s=30)
    assert "a file of the runtime is in use" in " ".join(lines) and refusals == [0]
    assert _in_place(old) == "torch==2.14.1+cu130"


def test_a_swap_killed_between_its_renames_is_finished_by_the_next_start(
    bundle: Bundle, old: Runtime
) -> None:
    new, aside = swap.staging(old), swap.retired(old)
    FakeBuild()(new, bundle, Options(), old.root.parent, True, torch=TorchChoice(NEW.requirement, "", ""))
    os.replace(old.root, aside)  # killed here: no runtime in place

    assert swap.recover(old) == "the new runtime was put in place"
    assert _in_place(old) == "torch==2.14.1+cu130" and not aside.exists()

    # Killed before the new one was complete: the old one goes back.
    os.replace(old.root, aside)
    assert swap.recover(old) == "the old runtime was put back"
    assert _in_place(old) == "torch==2.14.1+cu130"
    assert swap.recover(old) == ""  # nothing to do on an ordinary start


def test_the_plan_installs_companions_from_the_torch_index_into_a_relocatable_venv(
    tmp_path: Path, bundle: Bundle
) -> None:
    runtime = Runtime(tmp_path / "runtime.staging")
    torch = TorchChoice(NEW.requirement, NEW.index_url, "asked for")

    steps = rt.plan(runtime, bundle, Options(), torch, fresh=True, companions=("torchvision",))

    assert "--relocatable" in steps[0].command  # built beside the old runtime, then renamed
    companions = next(step for step in steps if step.key == "companions")
    assert companions.command[-2:] == [NEW.requirement, "torchvision"] and not companions.optional
    assert companions.command[companions.command.index("--index-url") + 1] == NEW.index_url


def test_only_an_app_the_launcher_started_from_its_runtime_asks_it_for_a_swap(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    launcher = tmp_path / "FinetuneStudio"
    launcher.write_text("", encoding="utf-8")
    prefix = tmp_path / "runtime"
    prefix.mkdir()
    monkeypatch.setattr(sys, "prefix", str(prefix))
    monkeypatch.setenv(swap_request.LAUNCHER_VARIABLE, str(launcher))
    assert swap_request.launcher_for_swap() is None  # not a runtime the launcher made (a checkout)
    (prefix / rt.MARKER).write_text("{}", encoding="utf-8")
    assert swap_request.launcher_for_swap() == launcher
    monkeypatch.delenv(swap_request.LAUNCHER_VARIABLE)
    assert swap_request.launcher_for_swap() is None  # started some other way: repaired in place


def test_an_unreadable_request_is_no_request(tmp_path: Path) -> None:
    swap_request.request_path(tmp_path).write_text('{"requirement": "rm -rf /"}', encoding="utf-8")
    assert pending_swap(tmp_path) is None
    swap_request.request_path(tmp_path).write_text("{half", encoding="utf-8")
    assert pending_swap(tmp_path) is None
