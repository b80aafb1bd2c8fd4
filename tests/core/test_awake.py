"""Keeping the computer awake during a run: logind's inhibitor on Linux, the execution state on Windows."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import psutil
import pytest

from desktop.core.system import awake
from desktop.core.system.awake import KeepAwake

POSIX = pytest.mark.skipif(sys.platform == "win32", reason="a shell script stands in for systemd-inhibit")


def fake_inhibitor(folder: Path, monkeypatch: pytest.MonkeyPatch, works: bool = True) -> Path:
    """A ``systemd-inhibit`` on PATH that records its arguments, one per line, and then holds the lock
    (runs the command it was given: ``cat``) or fails as it does without a login manager."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(exist_ok=True)
    record = folder / "inhibit-args.txt"
    script = bin_dir / "systemd-inhibit"
    body = 'exec "$5"' if works else 'echo "Failed to connect to bus" >&2; exit 1'
    script.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > '{record}'\n{body}\n", encoding="utf-8")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    bus = folder / "system_bus_socket"
    bus.touch()
    monkeypatch.setattr(awake, "SYSTEM_BUS", str(bus))
    return record


@POSIX
def test_linux_holds_logind_inhibitor_with_an_argument_list_until_released(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = fake_inhibitor(tmp_path, monkeypatch)
    keep = KeepAwake("Training bert")
    assert KeepAwake.supported() and keep.acquire() and keep.held
    inhibitor = psutil.Process(keep._inhibitor.pid)
    assert record.read_text(encoding="utf-8").splitlines() == [
        "--what=sleep",
        "--who=Finetune Studio",
        "--why=Training bert",
        "--mode=block",
        "cat",
    ]
    assert inhibitor.is_running()
    keep.release()
    assert (
        not keep.held and not psutil.pid_exists(inhibitor.pid)
    ) or inhibitor.status() == psutil.STATUS_ZOMBIE


@POSIX
def test_without_a_login_manager_nothing_is_held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_inhibitor(tmp_path, monkeypatch, works=False)
    keep = KeepAwake()
    assert keep.acquire() is False and not keep.held
    keep.release()  # harmless


@POSIX
def test_a_window_asks_without_waiting_and_learns_of_a_refusal_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_inhibitor(tmp_path, monkeypatch, works=False)
    keep = KeepAwake()
    assert keep.acquire(wait=False)  # asked; the answer is not waited for on the window's thread
    keep._inhibitor.wait(timeout=10)
    assert keep.check() is False and not keep.held
    fake_inhibitor(tmp_path, monkeypatch, works=True)
    keep = KeepAwake()
    assert keep.acquire(wait=False) and keep.check()
    keep.release()


def test_windows_sets_and_clears_the_execution_state(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    class Kernel32:
        def SetThreadExecutionState(self, flags: int) -> int:
            calls.append(flags)
            return 0x80000000  # the previous state: non-zero means it worked

    monkeypatch.setattr(awake, "_on_windows", lambda: True)
    monkeypatch.setattr(awake, "_kernel32", Kernel32)
    with KeepAwake() as keep:
        assert keep.held
    assert calls == [awake.ES_CONTINUOUS | awake.ES_SYSTEM_REQUIRED, awake.ES_CONTINUOUS]
