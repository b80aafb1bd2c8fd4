"""The one background helper: results on the GUI thread, cancel, and a close that never hangs."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest
from PySide6.QtCore import QThread
from PySide6.QtWidgets import QApplication

from desktop.gui.app_support import workers
from desktop.gui.app_support.workers import BackgroundTask, run_in_background, shutdown_all


def test_results_and_progress_arrive_on_the_gui_thread(qtbot) -> None:
    seen: list[tuple[str, object, bool]] = []
    gui = QApplication.instance().thread()

    def work() -> int:
        for share in (0.5, 1.0):
            task.report(share)
        return 42

    def note(kind: str, value: object) -> None:
        seen.append((kind, value, QThread.currentThread() is gui))

    task = BackgroundTask(work)
    task.progressed.connect(lambda value: note("progress", value))
    with qtbot.waitSignal(task.finished, timeout=5000):
        task.finished.connect(lambda value: note("done", value))
        task.start()
    assert seen == [("progress", 0.5, True), ("progress", 1.0, True), ("done", 42, True)]
    assert not task.is_running()


def test_closing_waits_at_most_the_grace_then_leaves_stuck_work_behind(qtbot) -> None:
    release = threading.Event()
    cancelled = threading.Event()

    def polite() -> str:
        cancelled.wait(5)
        return "stopped when asked"

    def stuck() -> str:  # a model loading: it cannot be interrupted
        release.wait(10)
        return "done at last"

    failures: list[object] = []
    polite_task = run_in_background(
        polite, None, lambda _: None, lambda e, d: failures.append(e), cancel=cancelled
    )
    stuck_task = run_in_background(stuck, None, lambda _: None, lambda e, d: failures.append(e))
    started = time.monotonic()
    assert shutdown_all(0.5) is False
    assert time.monotonic() - started < 1.5
    assert cancelled.is_set() and polite_task.wait(2) and workers.detached()
    release.set()  # let the stuck one end, so the test leaves no thread behind
    assert stuck_task.wait(5)
    workers._detached.clear()
    assert not failures


def test_a_task_whose_owner_is_gone_still_ends_its_thread(qtbot) -> None:
    import threading

    from PySide6.QtCore import QObject

    from desktop.gui.app_support.workers import BackgroundTask

    owner, gate = QObject(), threading.Event()
    task = BackgroundTask(lambda: gate.wait(10), owner)
    task.start()
    thread = task._thread
    with qtbot.waitSignal(owner.destroyed):
        owner.deleteLater()  # a dialog closed and collected while its work runs
    gate.set()
    qtbot.waitUntil(lambda: not thread.isRunning(), timeout=10_000)  # no running thread left behind
    assert not workers.busy()  # or the training stack's warm-up, waiting for no work, never ran


LATE_TASK = """
import sys, threading
from PySide6.QtWidgets import QApplication
from desktop.gui.app_support import workers

app = QApplication([])
workers.shutdown_all()  # the window closed; then a timer due in the same pass starts a task (the hub probe)
never = threading.Event()
workers.run_in_background(lambda: never.wait(60), None, lambda _: None, lambda e, d: None)
sys.exit(workers.leave(3, grace_s=0.2))
"""


def test_a_task_started_after_the_window_closed_does_not_crash_the_exit() -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    ended = subprocess.run(
        [sys.executable, "-c", LATE_TASK], capture_output=True, text=True, env=env, timeout=120
    )
    # Finalizing Python with the thread still running crashed the process (exit code -11 or -6).
    assert (ended.returncode, ended.stderr) == (3, "")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread priorities are Linux's")
def test_a_background_task_keeps_the_windows_priority_while_a_run_lowers_its_compute_threads(qtbot) -> None:
    """A task runs Python: the window waits for it whenever it holds Python's lock, so it must not
    be lowered as a run's compute threads are (a run's thread is a task too)."""
    from desktop.core.system.processes import ComputePriority

    below = ComputePriority()
    started, looked = threading.Event(), threading.Event()

    def work() -> int:
        started.set()
        looked.wait(10)
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    task = BackgroundTask(work)
    with qtbot.waitSignal(task.finished, timeout=10_000) as blocker:
        task.start()
        assert started.wait(10)
        below.lower_new()
        looked.set()
    assert blocker.args == [os.getpriority(os.PRIO_PROCESS, 0)]
