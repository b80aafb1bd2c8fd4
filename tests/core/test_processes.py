"""Children start without a console window on Windows, decode UTF-8, and stop with their whole tree."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil
import pytest

from desktop.core import processes


def test_no_console_window_on_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(processes, "WINDOWS", True)
    for name, value in (
        ("CREATE_NO_WINDOW", 0x08000000),
        ("DETACHED_PROCESS", 0x8),
        ("CREATE_NEW_PROCESS_GROUP", 0x200),
    ):
        monkeypatch.setattr(subprocess, name, value, raising=False)
    assert processes.creation_flags() == 0x08000000
    assert processes.creation_flags(detached=True) == 0x8 | 0x200
    monkeypatch.setattr(processes, "WINDOWS", False)
    assert processes.creation_flags() == 0


def test_children_print_utf8() -> None:
    done = processes.run(
        [sys.executable, "-c", "import sys; print(sys.flags.utf8_mode, '模型')"],
        capture_output=True, text=True, encoding="utf-8", check=True,
    )  # fmt: skip
    assert done.stdout.split() == ["1", "模型"]


def test_kill_tree_stops_the_children_of_a_child_too() -> None:
    code = (
        "import subprocess, sys, time; "
        "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
        "print(c.pid, flush=True); time.sleep(60)"
    )
    parent = processes.popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    grandchild = int(parent.stdout.readline())
    started = time.monotonic()
    processes.kill_tree(parent.pid, grace_s=5)
    parent.wait(timeout=10)
    assert time.monotonic() - started < 8
    assert not psutil.pid_exists(grandchild) or psutil.Process(grandchild).status() == psutil.STATUS_ZOMBIE


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread priorities are Linux's")
def test_a_lowered_thread_and_the_threads_it_starts_run_below_the_window() -> None:
    import threading

    from desktop.core.processes import THREAD_NICENESS, lower_this_thread

    seen: dict[str, int] = {}

    def niceness() -> int:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    def compute() -> None:  # a thread the run starts (PyTorch's compute threads)
        seen["started by it"] = niceness()

    def run() -> None:
        lower_this_thread()
        seen["run"] = niceness()
        inner = threading.Thread(target=compute)
        inner.start()
        inner.join()

    window = niceness()
    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    lowered = max(window, THREAD_NICENESS)
    assert seen == {"run": lowered, "started by it": lowered}
    assert niceness() == window  # the window's own thread is untouched
