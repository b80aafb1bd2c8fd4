"""The Trainer on a background thread: ``run_training`` runs there; this GUI-thread controller re-emits.

Two runners behind one controller (DESIGN.md, Training in a QThread): in the app's process, or in a
child process (``launch.separate_process``, and always for several GPUs) that the same background
thread supervises. Pages, plots and tests see the same signals either way.
"""

from __future__ import annotations

import threading
import traceback

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from desktop.core.runs.folders import RunDir
from desktop.core.settings.config import RunConfig
from desktop.core.system.awake import KeepAwake
from desktop.core.system.events import (
    AdjustedEvent,
    CheckpointEvent,
    Event,
    FailedEvent,
    LogEvent,
    MemoryEvent,
    PreparingEvent,
    ProgressEvent,
    RunResult,
    StartedEvent,
)
from desktop.core.system.messages import msg
from desktop.gui.app_support.workers import BackgroundTask
from desktop.shared_ui import shown

AWAKE_CHECK_MS = 500
"""When the login manager's answer to keeping the computer awake is looked at (Linux)."""


def _train(
    config: RunConfig, resume: RunDir | None, stop: threading.Event, task: BackgroundTask
) -> RunResult:
    """One run on the task's thread; every event goes to the GUI thread through the task."""
    from desktop.core.system.processes import ComputePriority
    from desktop.core.training.run import run_training

    # PyTorch's compute threads and the run's processes below the window: on a CPU the run takes every
    # core it gets, and the window's thread, starved, froze for up to 0.7 s at a time (measured on two
    # cores). This thread stays at the window's priority: the window waits for it whenever it holds
    # Python's lock.
    below = ComputePriority()

    def report(event: Event) -> None:
        below.lower_new()
        task.report(event)

    try:
        return run_training(config, report, stop, resume=resume)
    except BaseException as exc:  # run_training reports failures itself; this is a last resort
        reason = msg("Training stopped with an unexpected error: {error}", error=exc)
        failure = FailedEvent(reason, "", traceback.format_exc())
        task.report(failure)
        return RunResult("failed", failure=failure)


def _train_child(
    config: RunConfig,
    resume: RunDir | None,
    stop: threading.Event,
    hard_stop: threading.Event,
    task: BackgroundTask,
) -> RunResult:
    """One run in a child process, supervised from the task's thread."""
    from desktop.core.environment.gpu import detect_gpus
    from desktop.core.training.supervisor import ChildRun

    try:
        gpus = len(detect_gpus().nvidia) or None
        return ChildRun(config, task.report, resume=resume, gpus=gpus).run(stop, hard_stop)
    except BaseException as exc:  # the supervisor reports failures itself; this is a last resort
        reason = msg("Training stopped with an unexpected error: {error}", error=exc)
        failure = FailedEvent(reason, "", traceback.format_exc())
        task.report(failure)
        return RunResult("failed", failure=failure)


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
    settings_adjusted = Signal(object)
    """The GPU ran out of memory and the run goes on with less: the :class:`AdjustedEvent`."""
    training_finished = Signal(object)
    """The run finished: the :class:`RunResult` with the model folder."""
    training_stopped = Signal(object)
    """The run stopped on request: the :class:`RunResult`."""
    training_failed = Signal(object)
    """The run failed or its input was rejected: the :class:`RunResult` with its failure."""
    running_changed = Signal(bool)
    """Whether a run is in progress."""
    awake_changed = Signal(bool)
    """Whether the computer is kept from sleeping (during a run, when :attr:`keep_awake` is on)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._task: BackgroundTask | None = None
        self._stop = threading.Event()
        self._hard_stop = threading.Event()
        self._child = False
        self.keep_awake = True
        """Keep the computer from sleeping during runs (Settings › Keep the computer awake)."""
        self._awake: KeepAwake | None = None
        self.last_result: RunResult | None = None

    def is_running(self) -> bool:
        """Whether a run is in progress."""
        return self._task is not None

    def start(self, config: RunConfig, resume: RunDir | None = None) -> None:
        """Start a run of ``config`` (or resume ``resume``) in the background."""
        if self.is_running():
            raise RuntimeError("a run is already in progress")
        # Stop is a direct call that sets this event: a queued request would wait for the run to end.
        stop = self._stop = threading.Event()
        hard_stop = self._hard_stop = threading.Event()
        self._child = config.launch.child
        if self._child:
            task = BackgroundTask(lambda: _train_child(config, resume, stop, hard_stop, task), self, stop)
        else:
            task = BackgroundTask(lambda: _train(config, resume, stop, task), self, stop)
        task.progressed.connect(self._on_task_progressed)
        task.finished.connect(self._on_task_finished)
        self._task = task
        task.start()
        self.running_changed.emit(True)
        if self.keep_awake:
            # Asked without waiting on this thread for the login manager's answer, checked a moment later.
            self._awake = KeepAwake()
            self.awake_changed.emit(self._awake.acquire(wait=False))
            QTimer.singleShot(AWAKE_CHECK_MS, self, self._check_awake)

    def _check_awake(self) -> None:
        if self._awake is not None and not self._awake.check():
            self._awake = None
            self.awake_changed.emit(False)

    def stop(self) -> None:
        """Ask the run to stop after the current step; a checkpoint is kept.

        In a child process a second Stop ends it at once (see :meth:`stop_now`).
        """
        if self._stop.is_set() and self._child:
            self.stop_now()
        self._stop.set()

    def stop_now(self) -> None:
        """End a child-process run at once, its whole process tree; the last checkpoint is kept.

        An in-process run cannot be ended at once: this is a graceful stop there.
        """
        self._stop.set()
        if self._child:
            self._hard_stop.set()

    def in_child_process(self) -> bool:
        """Whether the current (or last) run goes in a child process, so Stop can end it at once."""
        return self._child

    def wait(self) -> None:
        """Block until the run has ended."""
        if self._task is not None:
            self._task.wait()

    @Slot(object)
    def _on_task_progressed(self, event: Event) -> None:
        if isinstance(event, PreparingEvent):
            self.preparing.emit(shown(event.message))
            return
        signal = {
            StartedEvent: self.training_started,
            ProgressEvent: self.progress_changed,
            LogEvent: self.metrics_logged,
            MemoryEvent: self.memory_sampled,
            CheckpointEvent: self.checkpoint_saved,
            AdjustedEvent: self.settings_adjusted,
        }.get(type(event))
        if signal is not None:  # terminal events arrive as the RunResult in run_ended
            signal.emit(event)

    @Slot(object)
    def _on_task_finished(self, result: RunResult) -> None:
        self._task = None
        self.last_result = result
        if self._awake is not None:  # finished, stopped or failed alike: the computer may sleep again
            self._awake.release()
            self._awake = None
            self.awake_changed.emit(False)
        self.running_changed.emit(False)
        if result.status == "finished":
            self.training_finished.emit(result)
        elif result.status == "stopped":
            self.training_stopped.emit(result)
        else:
            self.training_failed.emit(result)
