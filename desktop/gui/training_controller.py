"""The Trainer in a QThread: a worker runs ``run_training``; a GUI-thread controller re-emits."""

from __future__ import annotations

import threading
import traceback

from PySide6.QtCore import QObject, QThread, Signal, Slot

from desktop.core.config import RunConfig
from desktop.core.events import (
    CheckpointEvent,
    Event,
    FailedEvent,
    LogEvent,
    MemoryEvent,
    PreparingEvent,
    ProgressEvent,
    StartedEvent,
)
from desktop.core.runs import RunDir
from desktop.core.training import RunResult
from desktop.gui.workers import end_thread


class TrainingWorker(QObject):
    """Runs one training run on its thread and reports events as queued signals."""

    event_emitted = Signal(object)
    """A core event (any :class:`~desktop.core.events.Event`)."""
    run_ended = Signal(object)
    """The :class:`~desktop.core.training.RunResult`."""

    def __init__(self, config: RunConfig, resume: RunDir | None = None) -> None:
        super().__init__()
        self._config = config
        self._resume = resume
        self._stop = threading.Event()

    def request_stop(self) -> None:
        """Ask the run to stop after the current step (a direct call: thread-safe)."""
        self._stop.set()

    @Slot()
    def run(self) -> None:
        from desktop.core.training import run_training

        try:
            result = run_training(self._config, self.event_emitted.emit, self._stop, resume=self._resume)
        except BaseException as exc:
            failure = FailedEvent(
                f"Training stopped with an unexpected error: {exc}", "", traceback.format_exc()
            )
            self.event_emitted.emit(failure)
            result = RunResult("failed", failure=failure)
        self.run_ended.emit(result)


class TrainingController(QObject):
    """Owns the training thread; pages, plots and tests connect only to these signals."""

    preparing = Signal(str)
    """A preparation phase began: its description."""
    training_started = Signal(object)
    """Training began: the :class:`StartedEvent`."""
    progress_changed = Signal(object)
    """A step ended: the :class:`ProgressEvent`."""
    metrics_logged = Signal(object)
    """Loss, learning rate or eval metrics: the :class:`LogEvent`."""
    memory_sampled = Signal(object)
    """Memory in use: the :class:`MemoryEvent`."""
    checkpoint_saved = Signal(object)
    """A checkpoint was written: the :class:`CheckpointEvent`."""
    training_finished = Signal(object)
    """The run finished: the :class:`RunResult` with the model folder."""
    training_stopped = Signal(object)
    """The run stopped on request: the :class:`RunResult`."""
    training_failed = Signal(object)
    """The run failed or its input was rejected: the :class:`RunResult` with its failure."""
    running_changed = Signal(bool)
    """Whether a run is in progress."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._thread: QThread | None = None
        self._worker: TrainingWorker | None = None
        self.last_result: RunResult | None = None

    def is_running(self) -> bool:
        """Whether a run is in progress."""
        return self._thread is not None

    def start(self, config: RunConfig, resume: RunDir | None = None) -> None:
        """Start a run of ``config`` (or resume ``resume``) on a new thread."""
        if self.is_running():
            raise RuntimeError("a run is already in progress")
        self._thread = QThread()
        self._worker = TrainingWorker(config, resume)
        self._worker.moveToThread(self._thread)
        self._thread.started.connect(self._worker.run)
        self._worker.event_emitted.connect(self._on_worker_event_emitted)
        self._worker.run_ended.connect(self._on_worker_run_ended)
        self._thread.start()
        self.running_changed.emit(True)

    def stop(self) -> None:
        """Ask the run to stop after the current step; a checkpoint is kept."""
        if self._worker is not None:
            self._worker.request_stop()

    def wait(self) -> None:
        """Block until the run's thread ends (used when the app quits)."""
        if self._thread is not None:
            self._thread.wait()

    @Slot(object)
    def _on_worker_event_emitted(self, event: Event) -> None:
        if isinstance(event, PreparingEvent):
            self.preparing.emit(event.message)
            return
        signal = {
            StartedEvent: self.training_started,
            ProgressEvent: self.progress_changed,
            LogEvent: self.metrics_logged,
            MemoryEvent: self.memory_sampled,
            CheckpointEvent: self.checkpoint_saved,
        }.get(type(event))
        if signal is not None:  # terminal events arrive as the RunResult in run_ended
            signal.emit(event)

    @Slot(object)
    def _on_worker_run_ended(self, result: RunResult) -> None:
        assert self._thread is not None and self._worker is not None
        end_thread(self._thread, self._worker)
        self._thread = self._worker = None
        self.last_result = result
        self.running_changed.emit(False)
        if result.status == "finished":
            self.training_finished.emit(result)
        elif result.status == "stopped":
            self.training_stopped.emit(result)
        else:
            self.training_failed.emit(result)
