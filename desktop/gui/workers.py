"""Run a core function on a QThread and get its result back on the GUI thread."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot


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
        # Every exception is reported; none may escape into Qt's event loop.
        try:
            result = self._function()
        except BaseException as exc:
            self.raised.emit(exc, traceback.format_exc())
        else:
            self.succeeded.emit(result)


class BackgroundTask(QObject):
    """Runs one callable off the GUI thread; lives on the GUI thread and tears its thread down.

    Connect to ``finished`` / ``failed``; both arrive on the GUI thread.
    """

    finished = Signal(object)
    """The callable's return value."""
    failed = Signal(object, str)
    """The exception and its traceback text."""

    def __init__(self, function: Callable[[], Any], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._ended = False
        self._thread = QThread()
        self._worker = _FunctionWorker(function)
        self._worker.moveToThread(self._thread)
        self._thread.started.connect(self._worker.run)
        self._worker.succeeded.connect(self._on_worker_succeeded)
        self._worker.raised.connect(self._on_worker_raised)

    def start(self) -> None:
        """Start the callable on its thread."""
        self._thread.start()

    def is_running(self) -> bool:
        """Whether the callable has not returned yet."""
        return not self._ended and self._thread.isRunning()

    def wait(self) -> None:
        """Block until the thread has ended (for shutdown)."""
        if not self._ended:
            self._thread.quit()
            self._thread.wait()

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
        end_thread(self._thread, self._worker)
