"""The window's side of a run: a :class:`RunSession` on a background thread; this GUI-thread controller
re-emits its events as signals.

The session (``core/training/session.py``) decides everything about the run, for the window and the
command line alike: in the app's process or in a child process (``launch.separate_process``, and always
for several GPUs), keeping the computer awake, stop then hard stop. Pages, plots and tests see the same
signals either way. Why the window's own process is the default:
docs/decisions/006-trainer-in-the-window-process.md.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal, Slot

from desktop.core.runs.folders import RunDir
from desktop.core.settings.config import RunConfig
from desktop.core.system.events import (
    AdjustedEvent,
    AdviceEvent,
    AwakeEvent,
    CheckpointEvent,
    DownloadEvent,
    Event,
    LogEvent,
    MemoryEvent,
    PreparingEvent,
    ProgressEvent,
    RunResult,
    SampleEvent,
    StartedEvent,
)
from desktop.core.system.messages import msg
from desktop.core.training.session import RunRequest, RunSession
from desktop.gui.app_support.workers import BackgroundTask
from desktop.shared_ui import shown


def _run(session: RunSession) -> RunResult:
    """The session on the task's thread (its events go to the GUI thread through the task)."""
    try:
        return session.run()
    except Exception as exc:  # refused input, a download that cannot be had: said on the page
        return session.failed(exc)


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
    advice_given = Signal(object)
    sampled = Signal(object)
    """Reasoning runs: an answer the model wrote, with its rewards (a :class:`SampleEvent`)."""
    """The coach saw something in the run's curves: the :class:`AdviceEvent`."""
    running_changed = Signal(bool)
    """Whether a run is in progress."""
    awake_changed = Signal(bool)
    """Whether the computer is kept from sleeping (during a run, when :attr:`keep_awake` is on)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._task: BackgroundTask | None = None
        self._session: RunSession | None = None
        self._child = False
        self.keep_awake = True
        """Keep the computer from sleeping during runs (Settings › Keep the computer awake)."""
        self._kept_awake = False
        self.last_result: RunResult | None = None

    def is_running(self) -> bool:
        """Whether a run is in progress."""
        return self._task is not None

    def start(self, config: RunConfig, resume: RunDir | None = None) -> None:
        """Start a run of ``config`` (or resume ``resume``) in the background."""
        if self.is_running():
            raise RuntimeError("a run is already in progress")
        request = RunRequest(config, resume=resume, keep_awake=self.keep_awake, lower_priority=True)
        session = self._session = RunSession(request, lambda event: None)
        self._child = session.in_child
        task = BackgroundTask(lambda: _run(session), self, session.stop_event)
        session.on_event = task.report
        task.progressed.connect(self._on_task_progressed)
        task.finished.connect(self._on_task_finished)
        self._task = task
        task.start()
        self.running_changed.emit(True)

    @property
    def awake(self):
        """The :class:`KeepAwake` the current run holds (``None``: none)."""
        return self._session.awake if self._session is not None else None

    def stop(self) -> None:
        """Ask the run to stop after the current step; a checkpoint is kept.

        In a child process a second Stop ends it at once (see :meth:`stop_now`).
        """
        if self._session is not None:
            self._session.stop()

    def stop_now(self) -> None:
        """End a child-process run at once, its whole process tree; the last checkpoint is kept.

        An in-process run cannot be ended at once: this is a graceful stop there.
        """
        if self._session is not None:
            self._session.stop_now()

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
        if isinstance(event, DownloadEvent):
            self.preparing.emit(download_line(event))
            return
        if isinstance(event, AwakeEvent):
            self._kept_awake = event.kept
            self.awake_changed.emit(event.kept)
            return
        signal = {
            StartedEvent: self.training_started,
            ProgressEvent: self.progress_changed,
            LogEvent: self.metrics_logged,
            MemoryEvent: self.memory_sampled,
            CheckpointEvent: self.checkpoint_saved,
            AdjustedEvent: self.settings_adjusted,
            AdviceEvent: self.advice_given,
            SampleEvent: self.sampled,
        }.get(type(event))
        if signal is not None:  # terminal events arrive as the RunResult in run_ended
            signal.emit(event)

    @Slot(object)
    def _on_task_finished(self, result: RunResult) -> None:
        self._task = None
        self.last_result = result
        if self._kept_awake:  # finished, stopped or failed alike: the session let the computer sleep again
            self._kept_awake = False
            self.awake_changed.emit(False)
        self.running_changed.emit(False)
        if result.status == "finished":
            self.training_finished.emit(result)
        elif result.status == "stopped":
            self.training_stopped.emit(result)
        else:
            self.training_failed.emit(result)


def download_line(event: DownloadEvent) -> str:
    """``Downloading Qwen/Qwen2.5-0.5B: 45% of 988 MB, 12.3 MB/s``, in the user's language."""
    from desktop.core.system.errors import human_size

    values = {
        "name": event.name,
        "share": f"{event.done / event.total:.0%}" if event.total else "?",
        "total": human_size(event.total),
        "speed": human_size(int(event.speed)),
    }
    return shown(msg("Downloading {name}: {share} of {total}, {speed}/s", **values))
