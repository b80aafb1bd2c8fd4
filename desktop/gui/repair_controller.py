"""Runs a PyTorch repair on a QThread and re-emits its output on the GUI thread."""

from __future__ import annotations

import threading
import traceback

from PySide6.QtCore import QObject, QThread, Signal, Slot

from desktop.core.repair import RepairPlan, RepairResult, run_repair
from desktop.gui.workers import end_thread


class _RepairWorker(QObject):
    line_emitted = Signal(str)
    progress_changed = Signal(float)
    repair_ended = Signal(object, object)

    def __init__(self, plan: RepairPlan) -> None:
        super().__init__()
        self._plan = plan
        self.cancel = threading.Event()

    @Slot()
    def run(self) -> None:
        from desktop.core.torch_probe import prove_gpu

        try:
            result = run_repair(self._plan, self.line_emitted.emit, self.progress_changed.emit, self.cancel)
            proof = prove_gpu(self._plan.python) if result.ok else None
        except Exception as exc:
            result = RepairResult(
                False,
                -1,
                message=f"The repair stopped with an error: {exc}",
                lines=traceback.format_exc().splitlines(),
            )
            proof = None
        self.repair_ended.emit(result, proof)


class RepairController(QObject):
    """Owns the repair thread; the Environment page connects only to these signals."""

    line_emitted = Signal(str)
    """One line of the installer's output."""
    progress_changed = Signal(float)
    """Estimated share done, 0 to 1."""
    repair_finished = Signal(object, object)
    """The :class:`RepairResult` and the :class:`GpuProof` (``None`` when the install failed)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._thread: QThread | None = None
        self._worker: _RepairWorker | None = None

    def is_running(self) -> bool:
        """Whether a repair is under way."""
        return self._thread is not None

    def start(self, plan: RepairPlan) -> None:
        """Run ``plan`` on a new thread."""
        self._thread = QThread()
        self._worker = _RepairWorker(plan)
        self._worker.moveToThread(self._thread)
        self._thread.started.connect(self._worker.run)
        self._worker.line_emitted.connect(self.line_emitted)
        self._worker.progress_changed.connect(self.progress_changed)
        self._worker.repair_ended.connect(self._on_worker_repair_ended)
        self._thread.start()

    def cancel(self) -> None:
        """Stop the installer (a direct call: thread-safe)."""
        if self._worker is not None:
            self._worker.cancel.set()

    def wait(self) -> None:
        """Block until the thread ends (when the app quits)."""
        if self._thread is not None:
            self.cancel()
            self._thread.wait()

    @Slot(object, object)
    def _on_worker_repair_ended(self, result: RepairResult, proof: object) -> None:
        assert self._thread is not None and self._worker is not None
        end_thread(self._thread, self._worker)
        self._thread = self._worker = None
        self.repair_finished.emit(result, proof)
