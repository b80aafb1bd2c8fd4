"""Runs a PyTorch repair in the background and re-emits its output on the GUI thread."""

from __future__ import annotations

import threading
import traceback

from PySide6.QtCore import QObject, Signal, Slot

from desktop.core.environment.repair import RepairPlan, RepairResult, run_repair
from desktop.core.system.messages import msg
from desktop.gui.app_support.workers import BackgroundTask


def _repair(plan: RepairPlan, task: BackgroundTask, cancel: threading.Event) -> tuple[RepairResult, object]:
    from desktop.core.environment.torch_probe import prove_gpu

    try:
        result = run_repair(
            plan,
            lambda line: task.report(("line", line)),
            lambda share: task.report(("progress", share)),
            cancel,
        )
        proof = prove_gpu(plan.python) if result.ok else None
    except Exception as exc:
        result = RepairResult(
            False,
            -1,
            message=msg("The repair stopped with an error: {error}", error=exc),
            lines=traceback.format_exc().splitlines(),
        )
        proof = None
    return result, proof


class RepairController(QObject):
    """Runs one repair at a time; the Environment page connects only to these signals."""

    line_emitted = Signal(str)
    """One line of the installer's output."""
    progress_changed = Signal(float)
    """Estimated share done, 0 to 1."""
    repair_finished = Signal(object, object)
    """The :class:`RepairResult` and the :class:`GpuProof` (``None`` when the install failed)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._task: BackgroundTask | None = None

    def is_running(self) -> bool:
        """Whether a repair is under way."""
        return self._task is not None

    def start(self, plan: RepairPlan) -> None:
        """Run ``plan`` in the background."""
        cancel = threading.Event()
        task = BackgroundTask(lambda: _repair(plan, task, cancel), self, cancel)
        task.progressed.connect(self._on_task_progressed)
        task.finished.connect(self._on_task_finished)
        self._task = task
        task.start()

    def cancel(self) -> None:
        """Stop the installer (a direct call: thread-safe)."""
        if self._task is not None:
            self._task.cancel()

    def wait(self) -> None:
        """Block until the repair has ended."""
        if self._task is not None:
            self._task.wait()

    @Slot(object)
    def _on_task_progressed(self, item: tuple[str, object]) -> None:
        kind, value = item
        if kind == "line":
            self.line_emitted.emit(value)
        else:
            self.progress_changed.emit(value)

    @Slot(object)
    def _on_task_finished(self, outcome: tuple[RepairResult, object]) -> None:
        self._task = None
        self.repair_finished.emit(*outcome)
