"""Children start without a console window on Windows, decode UTF-8, and stop with their whole tree."""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
import threading
import time

import psutil
import pytest

from desktop.core.system import processes


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


@pytest.mark.slow
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


COMPUTE_THREADS = """
import os, sys, threading, torch
from desktop.core.system.processes import ComputePriority

def niceness(tid):
    return os.getpriority(os.PRIO_PROCESS, tid)

def run():
    below = ComputePriority()
    before = set(os.listdir("/proc/self/task"))
    torch.set_num_threads(3)
    a = torch.randn(512, 512)
    for _ in range(3):
        a = a @ a / 512  # PyTorch starts its compute threads for the first one
    helper = threading.Thread(target=lambda: ready.wait())  # a thread of the run that runs Python
    helper.start()
    below.lower_new()
    started = {int(tid) for tid in set(os.listdir("/proc/self/task")) - before}
    compute = started - {helper.native_id}
    print("compute", sorted(niceness(tid) for tid in compute))
    print("run", niceness(threading.get_native_id()), "python", niceness(helper.native_id))
    ready.set()

ready = threading.Event()
thread = threading.Thread(target=run)
thread.start()
thread.join()
print("window", niceness(threading.get_native_id()))
"""


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread priorities are Linux's")
def test_a_run_lowers_its_compute_threads_but_not_the_threads_that_run_python() -> None:
    """The window waits for any thread that holds Python's lock: those stay at its priority."""
    from desktop.core.system.processes import THREAD_NICENESS

    window = os.getpriority(os.PRIO_PROCESS, 0)
    command = [sys.executable, "-c", COMPUTE_THREADS]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    lowered = max(window, THREAD_NICENESS)
    compute = [int(value) for value in lines["compute"].strip("[]").split(",") if value.strip()]
    assert compute and set(compute) == {lowered}  # PyTorch's threads, all of them below the window
    assert lines["run"] == f"{window} python {window}"
    assert lines["window"] == str(window)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="niceness is Linux's")
def test_the_tokenizing_processes_run_below_the_window() -> None:
    """They start from the run's thread, which stays at the window's priority (see above)."""
    from desktop.core.system.processes import THREAD_NICENESS

    code = (
        "import os; from desktop.core.data.tasks import _worker_start; _worker_start(None); print(os.nice(0))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == max(os.nice(0), THREAD_NICENESS)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="niceness is Linux's")
def test_a_run_lowers_the_processes_it_starts() -> None:
    """The data loader's workers, the compiler's: a process has its own Python lock, so it is lowered
    even though it runs Python."""
    from desktop.core.system.processes import THREAD_NICENESS, ComputePriority

    below = ComputePriority()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert below.lower_new() >= 1
        assert psutil.Process(child.pid).nice() == max(os.nice(0), THREAD_NICENESS)
    finally:
        child.kill()
        child.wait()


@pytest.mark.skipif(not hasattr(os, "SCHED_BATCH"), reason="Linux's batch policy")
def test_a_thread_that_runs_pythons_tasks_does_not_take_the_windows_core_when_it_wakes() -> None:
    """The app's background tasks run as batch threads (woken by the window releasing Python's lock,
    they do not preempt it), and the thread is as it was after the task."""
    seen: list[int] = []

    def task() -> None:
        with processes.running_python():
            seen.append(os.sched_getscheduler(0))
        seen.append(os.sched_getscheduler(0))

    thread = threading.Thread(target=task)
    thread.start()
    thread.join()

    assert seen == [os.SCHED_BATCH, os.SCHED_OTHER]
    assert os.sched_getscheduler(0) == os.SCHED_OTHER  # the caller's own thread is left alone


SLICES = """
import subprocess, sys, threading
from desktop.core.system import processes

before = processes.time_slice_ns()
taken = processes.request_short_time_slice()
started = []
thread = threading.Thread(target=lambda: started.append(processes.time_slice_ns()))
thread.start()
thread.join()
child = subprocess.run(
    [sys.executable, "-c", "from desktop.core.system import processes; print(processes.time_slice_ns())"],
    capture_output=True, text=True, check=True,
).stdout.strip()
print(taken, before, processes.time_slice_ns(), started[0], child)
"""


def _kernel_at_least(major: int, minor: int) -> bool:
    found = re.match(r"(\d+)\.(\d+)", platform.release())
    return found is not None and (int(found[1]), int(found[2])) >= (major, minor)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's time slices")
def test_the_windows_thread_gets_a_short_time_slice_and_what_it_starts_the_default() -> None:
    """A short slice: the window's thread gets a core soon after it wakes. The run's threads and the
    app's processes, started from it, keep the system's longer slice (in a child: the test's own thread
    is left alone)."""
    done = subprocess.run([sys.executable, "-c", SLICES], capture_output=True, text=True, check=True)
    taken, before, now, thread, child = done.stdout.split()

    if _kernel_at_least(6, 12):  # where a normal thread may ask for its own slice
        assert taken == "True"
        assert int(now) == processes.WINDOW_SLICE_NS
        assert thread == child == before != now
    else:  # older systems: the call changes nothing, and says so
        assert taken == "False"
        assert thread == child == now == before


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's time slices")
def test_a_system_that_refuses_the_short_time_slice_leaves_the_thread_as_it_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A container's seccomp profile may refuse the system call: the window starts all the same."""
    real = processes._SCHED_SETATTR[platform.machine()]
    monkeypatch.setitem(processes._SCHED_SETATTR, platform.machine(), 99_999)  # not a system call
    seen: list[object] = []

    def window_thread() -> None:  # a fresh thread: the system's slice, whatever pytest's thread has
        seen.append(processes.request_short_time_slice())
        monkeypatch.setitem(processes._SCHED_SETATTR, platform.machine(), real)
        seen.append(processes.time_slice_ns())

    thread = threading.Thread(target=window_thread)
    thread.start()
    thread.join()

    assert seen[0] is False
    assert seen[1] != processes.WINDOW_SLICE_NS
