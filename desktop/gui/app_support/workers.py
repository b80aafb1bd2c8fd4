"""The one helper for background work: a core function on a QThread, results on the GUI thread.

Every background job of the app (reading data, token statistics, the estimate, the environment
probe, the PyTorch repair, export, try-it) is a :class:`BackgroundTask`. Results, failures and
progress arrive as queued signals on the GUI thread, so no widget is ever touched from a worker.
Finished tasks delete their thread and worker. Closing the app cancels what still runs and waits at
most :data:`SHUTDOWN_GRACE_S` (:func:`shutdown_all`); what has not ended by then is detached, and
the app leaves without waiting for it (:func:`leave`).
"""

from __future__ import annotations

import logging
import os
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot
from shiboken6 import isValid

from desktop.core.system.processes import running_python

SHUTDOWN_GRACE_S = 2.0

_live: set[BackgroundTask] = set()
"""Tasks whose callable has not returned (touched on the GUI thread only)."""
_detached: list[BackgroundTask] = []
"""Tasks still running when the app closed: kept referenced so Qt never destroys a running thread."""


def end_thread(thread: QThread, worker: QObject) -> None:
    """Stop a worker's thread once its work has returned, and let Qt delete both."""
    thread.quit()
    thread.wait()
    worker.deleteLater()
    thread.deleteLater()


class _FunctionWorker(QObject):
    succeeded = Signal(object)
    """The function's return value."""
    raised = Signal(object, str)
    """The exception and its formatted traceback."""

    def __init__(self, function: Callable[[], Any]) -> None:
        super().__init__()
        self._function = function

    @Slot()
    def run(self) -> None:
        # Every exception is reported; none may escape into Qt's event loop. A run's compute threads
        # run below the window, this one, running Python, must not (processes.ComputePriority).
        try:
            with running_python():
                result = self._function()
        except BaseException as exc:
            self.raised.emit(exc, traceback.format_exc())
        else:
            self.succeeded.emit(result)
        finally:
            # The thread ends with its work, even when the task that owns it is gone (its dialog
            # closed and collected): a thread still running at exit would abort the process.
            QThread.currentThread().quit()


class BackgroundTask(QObject):
    """Runs one callable off the GUI thread; lives on the GUI thread and tears its thread down.

    Connect to ``finished`` / ``failed`` / ``progressed``; all arrive on the GUI thread.

    Args:
        function: The work (a core function: no Qt, no widgets).
        parent: The owner (a page).
        cancel: Set by :meth:`cancel` and at shutdown; ``function`` should watch it when it is slow.
    """

    finished = Signal(object)
    """The callable's return value."""
    failed = Signal(object, str)
    """The exception and its traceback text."""
    progressed = Signal(object)
    """Whatever the callable passed to :meth:`report` (a fraction, a line, a piece of text)."""

    def __init__(
        self,
        function: Callable[[], Any],
        parent: QObject | None = None,
        cancel: threading.Event | None = None,
    ) -> None:
        super().__init__(parent)
        self.cancel_event = cancel or threading.Event()
        self._ended = False
        self._thread = QThread()
        self._worker = _FunctionWorker(function)
        self._worker.moveToThread(self._thread)
        self._thread.started.connect(self._worker.run)
        self._worker.succeeded.connect(self._on_worker_succeeded)
        self._worker.raised.connect(self._on_worker_raised)

    def start(self) -> None:
        """Start the callable on its thread."""
        _live.add(self)
        self._thread.start()

    def report(self, value: object) -> None:
        """Send ``value`` to the GUI thread as ``progressed`` (call it from the callable: thread-safe)."""
        self.progressed.emit(value)

    def cancel(self) -> None:
        """Ask the callable to give up (it must watch :attr:`cancel_event`)."""
        self.cancel_event.set()

    def is_running(self) -> bool:
        """Whether the callable has not returned yet."""
        return not self._ended and self._thread.isRunning()

    def wait(self, timeout_s: float | None = None) -> bool:
        """Block until the thread has ended, at most ``timeout_s``; whether it has ended."""
        if self._ended:
            return True
        self._thread.quit()
        if timeout_s is None:
            return self._thread.wait()
        return self._thread.wait(max(0, int(timeout_s * 1000)))

    @Slot(object)
    def _on_worker_succeeded(self, result: object) -> None:
        self._teardown()
        self.finished.emit(result)

    @Slot(object, str)
    def _on_worker_raised(self, exc: object, detail: str) -> None:
        self._teardown()
        self.failed.emit(exc, detail)

    def _teardown(self) -> None:
        self._ended = True
        _live.discard(self)
        end_thread(self._thread, self._worker)


def run_in_background(
    function: Callable[[], Any],
    parent: QObject,
    on_done: Callable[[Any], None],
    on_failed: Callable[[object, str], None],
    on_progress: Callable[[Any], None] | None = None,
    cancel: threading.Event | None = None,
) -> BackgroundTask:
    """Start ``function`` on a :class:`BackgroundTask` with GUI-thread callbacks; the task is returned.

    The callbacks should be bound methods of GUI-thread objects (or lambdas that call them): they
    run on the GUI thread because the task's signals are queued there.
    """
    task = BackgroundTask(function, parent, cancel)
    task.finished.connect(on_done)
    task.failed.connect(on_failed)
    if on_progress is not None:
        task.progressed.connect(on_progress)
    task.start()
    return task


class TaskGroup:
    """The background tasks of one owner (a page, or a part of one), cancelled together at shutdown.

    A task leaves the group as its result or failure arrives, before the owner's callback runs.

    Args:
        parent: The owner of the tasks (their QObject parent).
    """

    def __init__(self, parent: QObject) -> None:
        self._parent = parent
        self._tasks: set[BackgroundTask] = set()

    def track(
        self, task: BackgroundTask, on_done: Callable[[Any], None], on_failed: Callable[[object], None]
    ) -> BackgroundTask:
        """Keep ``task`` in the group and call ``on_done(result)`` or ``on_failed(exc)`` on the GUI
        thread; the caller starts it (after connecting what else it needs, such as ``progressed``)."""
        self._tasks.add(task)
        task.finished.connect(lambda result, t=task: (self._tasks.discard(t), on_done(result)))
        task.failed.connect(lambda exc, detail, t=task: (self._tasks.discard(t), on_failed(exc)))
        return task

    def run(
        self, function: Callable[[], Any], on_done: Callable[[Any], None], on_failed: Callable[[object], None]
    ) -> BackgroundTask:
        """Start ``function`` on a task of the group; see :meth:`track`."""
        task = self.track(BackgroundTask(function, self._parent), on_done, on_failed)
        task.start()
        return task

    def cancel_all(self) -> None:
        """Ask every task of the group to give up (never blocks)."""
        for task in list(self._tasks):
            task.cancel()


def any_running() -> bool:
    """Whether the callable of any background task is still running (GUI thread)."""
    return any(task.is_running() for task in _live)


def running_tasks() -> list[BackgroundTask]:
    """The background tasks whose callable has not returned yet (GUI thread)."""
    return list(_live)


def busy() -> bool:
    """Whether any background task is running (GUI thread).

    A task deleted with its parent before its result came (a dialog closed meanwhile) no longer
    counts: nothing would take it off the list, and the app would think itself busy for good (the
    training stack's warm-up, which waits for no background work, then never ran).
    """
    _live.difference_update([task for task in _live if not isValid(task)])
    return bool(_live)


def shutdown_all(grace_s: float = SHUTDOWN_GRACE_S) -> bool:
    """Cancel every running task and wait for them, ``grace_s`` in all; whether all have ended.

    Tasks still running then are detached: kept alive until the process exits (see :func:`detached`).
    """
    deadline = time.monotonic() + grace_s
    tasks = [task for task in _live if task not in _detached]  # those left behind are not waited for twice
    for task in tasks:
        task.cancel()
    for task in tasks:
        if not task.wait(max(0.0, deadline - time.monotonic())):
            _detached.append(task)
    return not _detached


def detached() -> bool:
    """Whether background work is still running after :func:`shutdown_all` (the app exits without it)."""
    return any(task.is_running() for task in _detached)


def leave(code: int, grace_s: float = SHUTDOWN_GRACE_S) -> int:
    """End the app's background work once its event loop has returned; ``code`` is returned.

    The window's close already ended what ran then, but a timer due in the same pass of the event loop
    (the hub's source probe 0.5 s after start, the libraries' warm-up) can start a task after it: such a
    thread, still running while Python finalizes, aborted the process ("QThread: Destroyed while thread
    is still running") or crashed it when it next ran Python. What still runs after ``grace_s`` is left
    behind: the process ends at once (``os._exit``) with ``code``, without finalizing.
    """
    shutdown_all(grace_s)
    if detached():  # a model still loading, a probe still running: leave without waiting for it
        logging.shutdown()
        os._exit(code)
    return code
