"""Step 4: start and stop the run; progress, live plots, log and failures."""

from __future__ import annotations

import math
import time
from collections.abc import Iterable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout

from desktop.core.runs.folders import RunDir
from desktop.core.system.awake import KeepAwake
from desktop.core.system.events import (
    AdjustedEvent,
    AdviceEvent,
    CheckpointEvent,
    Event,
    LogEvent,
    MemoryEvent,
    PreparingEvent,
    ProgressEvent,
    RunResult,
    SampleEvent,
    StartedEvent,
)
from desktop.gui.config_model import RunConfigModel
from desktop.gui.pages.base import WizardPage
from desktop.gui.widgets.coach_widget import CoachWidget
from desktop.gui.widgets.elided_label import ElidedLabel
from desktop.gui.widgets.error_label import show_error
from desktop.gui.widgets.failure_widget import FailureWidget
from desktop.gui.widgets.metric_text import metrics_line
from desktop.gui.widgets.progress_bar import ProgressBar
from desktop.gui.widgets.recovery_bar_widget import RecoveryBarWidget
from desktop.gui.widgets.spill_bar_widget import SpillBarWidget
from desktop.gui.widgets.training_plots_widget import TrainingPlotsWidget
from desktop.shared_ui import shown

PREFERENCE_DETAIL = (
    "rewards/accuracies",
    "rewards/margins",
    "eval_rewards/accuracies",
    "eval_rewards/margins",
    "logps/",  # plotted beside the rewards; the log line keeps to what says whether the run learns
    "eval_logps/",
    "logits/",  # the mean logit of each answer: TRL's, read by no one training a chat model
    "eval_logits/",
    "num_tokens",
)
"""Of a preference run's metrics, those its log line says in words or leaves to events.jsonl."""


def _duration(seconds: float | None) -> str:
    if seconds is None or math.isinf(seconds):
        return "–"
    seconds = int(seconds)
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class TrainPage(WizardPage):
    """Runs the config through a training controller and shows what happens.

    Args:
        controller: A :class:`~desktop.gui.controllers.training_controller.TrainingController` (or a fake
            with the same signals and ``start`` / ``stop`` / ``is_running``).
        run_config: The run config the window edits: Start trains a copy of it.
    """

    retry_requested = Signal(dict)
    """The user chose a remedy: its config changes, ``{"section.field": value}``, to apply and retry."""
    fit_requested = Signal()
    """The run spills out of the GPU's memory: stop it and open Fit my GPU."""
    undo_requested = Signal(dict)
    """Undo what out-of-memory recovery changed, for the next run: ``{"section.field": value}``."""

    def __init__(self, controller: object, run_config: RunConfigModel) -> None:
        super().__init__()
        self.title = self.tr("Train")
        self.subtitle = self.tr("Watch the loss fall. Stop keeps a checkpoint you can resume from.")
        self.controller = controller
        self._run_config = run_config
        self._resumable: RunDir | None = None
        self._started_at = 0.0

        self.start_button = QPushButton(self.tr("Start training"))
        self.start_button.setObjectName("primary")
        self.start_button.clicked.connect(self._on_start_button_clicked)
        self.resume_button = QPushButton(self.tr("Resume"))
        self.resume_button.setVisible(False)
        self.resume_button.clicked.connect(self._on_resume_button_clicked)
        self._stopping = False  # Stop was pressed once during this run
        self.stop_button = QPushButton(self.tr("Stop"))
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self._on_stop_button_clicked)
        self.status = ElidedLabel(self.tr("Ready. Press Start to train."))  # a long path widens nothing
        self.status.setObjectName("status")
        self.spill_bar = SpillBarWidget()  # Windows pages the run's GPU memory into system RAM
        self.spill_bar.fit_requested.connect(self._on_spill_bar_fit_requested)
        self.adjusted_bar = RecoveryBarWidget()  # the GPU ran out of memory and the run went on with less
        self.adjusted_bar.undo_requested.connect(self.undo_requested)
        self.recovery_note = QLabel(  # said at the start of a GPU run with performance.oom_recovery on
            self.tr(
                "If the GPU runs out of memory, the run goes on by itself with less memory (a smaller "
                "batch with the same effective batch first); every change is shown here."
            )
        )
        self.recovery_note.setObjectName("hint")
        self.recovery_note.setWordWrap(True)
        self.recovery_note.setVisible(False)
        # Whether the computer is kept from sleeping during the run: one line on the timing's row, the
        # explanation in its tooltip. A line of its own above the plots resized all four when it came
        # and went (pyqtgraph redoes every axis on a resize: half a second at Start).
        self.awake = QLabel()
        self.awake.setObjectName("hint")
        self.awake.setVisible(False)
        self.progress = ProgressBar()
        self.progress.setFormat("")  # "step 0 of 100" before a run of 24: the count shows once known
        self.progress.setValue(0)
        self.timing = QLabel()
        self.timing.setObjectName("hint")
        self.failure = FailureWidget()
        self.failure.retry_requested.connect(self.retry_requested)
        self.failure.action_requested.connect(self._on_failure_action_requested)
        self.coach = CoachWidget()
        self.coach.retry_requested.connect(self.retry_requested)
        self.plot_area = TrainingPlotsWidget()
        self.log = QPlainTextEdit(readOnly=True)
        self.log.setMaximumBlockCount(5000)
        self.log.setMaximumHeight(120)
        self.log.setFocusPolicy(Qt.FocusPolicy.ClickFocus)  # selectable, never handed a button's focus

        buttons = QHBoxLayout()
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.resume_button)
        buttons.addWidget(self.stop_button)
        buttons.addSpacing(12)
        buttons.addWidget(self.status, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(buttons)
        layout.addWidget(self.progress)
        timing_row = QHBoxLayout()
        timing_row.addWidget(self.timing, 1)
        timing_row.addWidget(self.awake)
        layout.addLayout(timing_row)
        layout.addWidget(self.recovery_note)
        layout.addWidget(self.adjusted_bar)
        layout.addWidget(self.spill_bar)
        layout.addWidget(self.failure)
        layout.addWidget(self.coach)
        layout.addWidget(self.plot_area, 1)
        layout.addWidget(self.log)

        self.plot_area.set_task(run_config.config.task)  # a preference run's plots are made ahead too
        run_config.changed.connect(self._on_run_config_changed)
        controller.preparing.connect(self._on_controller_preparing)
        controller.training_started.connect(self._on_controller_training_started)
        controller.progress_changed.connect(self._on_controller_progress_changed)
        controller.metrics_logged.connect(self._on_controller_metrics_logged)
        controller.memory_sampled.connect(self._on_controller_memory_sampled)
        controller.checkpoint_saved.connect(self._on_controller_checkpoint_saved)
        controller.settings_adjusted.connect(self._on_controller_settings_adjusted)
        controller.training_finished.connect(self._on_controller_training_finished)
        controller.training_stopped.connect(self._on_controller_training_stopped)
        controller.training_failed.connect(self._on_controller_training_failed)
        controller.running_changed.connect(self._on_controller_running_changed)
        controller.awake_changed.connect(self._on_controller_awake_changed)
        controller.advice_given.connect(self._on_controller_advice_given)
        controller.sampled.connect(self._on_controller_sampled)

    def showEvent(self, event: QShowEvent) -> None:
        self.plot_area.start_revealing()
        super().showEvent(event)

    # ------------------------------------------------------------------ buttons

    def _on_start_button_clicked(self) -> None:
        config = self._run_config.snapshot()
        self.begin(task=config.task)
        self.controller.start(config)

    def _on_resume_button_clicked(self) -> None:
        run = self._resumable
        if run is None:
            return
        config = run.config()
        self.begin(keep_plots=True, task=config.task)
        self.controller.start(config, resume=run)

    def resume_run(self, run: RunDir) -> None:
        """Continue ``run`` (from the run history) from its last checkpoint; its curves so far are shown."""
        self._resumable = run
        self.begin(task=run.config().task)
        # The curves so far; the smoothed loss carries on from them.
        self.replay(event for event in run.events() if isinstance(event, LogEvent))
        self._log(self.tr("Resuming {run}.").format(run=run.path.name))
        self.controller.start(run.config(), resume=run)

    def _on_stop_button_clicked(self) -> None:
        child = self.controller.in_child_process()
        if child and self._stopping:  # the second press: the process tree ends at once
            self.controller.stop_now()
            self.stop_button.setEnabled(False)
            self.status.setText(self.tr("Ending the training process; the run keeps its last checkpoint…"))
            return
        self.controller.stop()
        self._stopping = True
        if child:  # a run in a child process can also be ended at once
            self.stop_button.setText(self.tr("Stop now"))
            self.stop_button.setToolTip(
                self.tr("End the training process at once; the run resumes from its last checkpoint")
            )
            self.status.setText(
                self.tr("Stopping after this step and saving a checkpoint… Stop now ends it at once.")
            )
        else:
            self.stop_button.setEnabled(False)
            self.status.setText(self.tr("Stopping after this step and saving a checkpoint…"))

    def begin(self, keep_plots: bool = False, task: str | None = None) -> None:
        """Show a run beginning, as Start does: no failure, bars or Resume; the plots, the log and the
        progress cleared (kept with ``keep_plots``, as Resume keeps them); the plots of its ``task``."""
        self.failure.reset()
        self.coach.reset()
        if task is not None:
            self.plot_area.set_task(task)
        self.resume_button.setVisible(False)
        self.plot_area.clear(keep_points=keep_plots)
        if not keep_plots:
            self.log.clear()
            self.progress.setValue(0)
            self.progress.setFormat("")
        self._started_at = time.monotonic()
        self.status.setText(self.tr("Preparing…"))
        self.spill_bar.reset()
        self.adjusted_bar.reset()
        self.recovery_note.setVisible(False)

    def show_event(self, event: Event) -> None:
        """Show one event of a run as the controller's signal for it would (a run's history, a
        screenshot): preparing, started, progress, metrics, memory, checkpoint or adjusted."""
        if isinstance(event, PreparingEvent):
            self._on_controller_preparing(shown(event.message))
            return
        slot = {
            StartedEvent: self._on_controller_training_started,
            ProgressEvent: self._on_controller_progress_changed,
            LogEvent: self._on_controller_metrics_logged,
            MemoryEvent: self._on_controller_memory_sampled,
            CheckpointEvent: self._on_controller_checkpoint_saved,
            AdjustedEvent: self._on_controller_settings_adjusted,
        }.get(type(event))
        if slot is not None:
            slot(event)

    def replay(self, events: Iterable[Event]) -> None:
        """Show ``events`` one after the other (see :meth:`show_event`)."""
        for event in events:
            self.show_event(event)

    def _on_run_config_changed(self, path: str) -> None:
        if path in ("", "task") and not self.controller.is_running():  # the run shown keeps its plots
            self.plot_area.set_task(self._run_config.config.task)

    def _on_spill_bar_fit_requested(self) -> None:
        if self.controller.is_running():
            self.controller.stop()  # a checkpoint is kept; the new settings apply to the next run
        self.fit_requested.emit()

    # ------------------------------------------------------------------ controller signals

    def _on_controller_running_changed(self, running: bool) -> None:
        # The button to be enabled first, and the focus on it: a focused button that is disabled hands
        # its focus to the next widget, and the page's scroll area scrolls to show it (a preference
        # run's page, taller than the window, scrolled Stop and the progress bar out of view).
        now, then = (
            (self.stop_button, self.start_button) if running else (self.start_button, self.stop_button)
        )
        now.setEnabled(True)
        if then.hasFocus():
            now.setFocus(Qt.FocusReason.OtherFocusReason)
        then.setEnabled(False)
        self._stopping = False
        self.stop_button.setText(self.tr("Stop"))
        self.stop_button.setToolTip("")
        self.plot_area.set_running(running)
        self.coach.set_running(running)

    def _on_controller_advice_given(self, advice: AdviceEvent) -> None:
        self.coach.add(advice)
        self.log.appendPlainText(self.tr("Advice: {advice}").format(advice=shown(advice.message)))

    def _on_controller_sampled(self, sample: SampleEvent) -> None:
        from desktop.core.data.rewards import sample_message

        self.log.appendPlainText(shown(sample_message(sample.step, sample.rewards, sample.completion)))

    def _on_controller_awake_changed(self, held: bool) -> None:
        if held:
            self.awake.setText(self.tr("Kept awake"))
            self.awake.setToolTip(
                self.tr(
                    "The computer stays awake while this run trains (the display may still turn off). "
                    "Settings › Keep the computer awake while training."
                )
            )
        elif self.controller.is_running() and KeepAwake.supported():
            self.awake.setText(self.tr("Sleep would stop this run"))
            self.awake.setToolTip(
                self.tr(
                    "This computer could not be kept awake: if it goes to sleep, the run stops there. "
                    "For a long run, set its power settings not to sleep."
                )
            )
        self.awake.setVisible(held or (self.controller.is_running() and KeepAwake.supported()))

    def _on_controller_preparing(self, message: str) -> None:
        self.status.setText(self.tr("Preparing: {what}…").format(what=message))
        self._log(message)

    def _on_controller_training_started(self, event: StartedEvent) -> None:
        self.plot_area.show_started(event)
        self.recovery_note.setVisible(event.oom_recovery)
        self.progress.setMaximum(max(1, event.total_steps))
        self.progress.setFormat(self.tr("step %v of %m"))
        self.progress.setValue(event.resumed_from_step)
        self.status.setText(
            self.tr("Training on {device}").format(device=event.device)
            if event.processes == 1
            else self.tr("Training on {count} processes ({device}); progress from the first").format(
                count=event.processes, device=event.device
            )
        )
        self._log(
            self.tr(
                "Run folder: {folder}. {train} training and {eval} evaluation examples, {steps} steps."
            ).format(
                folder=event.run_dir,
                train=event.num_train_examples,
                eval=event.num_eval_examples,
                steps=event.total_steps,
            )
        )

    def _on_controller_progress_changed(self, event: ProgressEvent) -> None:
        self.plot_area.ensure_plots()
        self.progress.setValue(event.step)
        self._watch_spill(event)
        self.plot_area.show_progress(event)
        speed = f"{event.samples_per_second:.1f}" if event.samples_per_second else "–"
        text = self.tr(
            "Elapsed {elapsed}   ·   remaining about {eta}   ·   {speed} samples/s   ·   epoch {epoch:.2f}"
        ).format(
            elapsed=_duration(event.elapsed_s), eta=_duration(event.eta_s), speed=speed, epoch=event.epoch
        )
        if event.tokens_per_second and event.padding_share is not None:
            padded = event.padded_share
            if padded is not None and padded > event.padding_share + 0.01:  # padding-free: by how much
                tokens = self.tr(
                    "{tokens} tokens/s ({padding:.0%} of the compute on padding, {padded:.0%} if padded)"
                )
            else:
                tokens = self.tr("{tokens} tokens/s ({padding:.0%} of the compute on padding)")
            tokens = tokens.format(
                tokens=f"{event.tokens_per_second:,.0f}", padding=event.padding_share, padded=padded
            )
            text = f"{text}   ·   {tokens}"
        self.timing.setText(text)

    def _on_controller_metrics_logged(self, event: LogEvent) -> None:
        self.plot_area.show_metrics(event)
        m = {k: v for k, v in event.metrics.items() if not k.endswith(("_runtime", "_per_second"))}
        metrics = metrics_line(m, "  ")
        rewards = self._rewards_text(m)
        if rewards:  # a preference run: whether it learns, in words first; the rest after
            rest = metrics_line({k: v for k, v in m.items() if not k.startswith(PREFERENCE_DETAIL)}, "  ")
            metrics = f"{rewards}  ·  {rest}" if rest else rewards
        self._log(self.tr("step {step}: {metrics}").format(step=event.step, metrics=metrics))

    def _rewards_text(self, m: dict[str, float]) -> str:
        """TRL's reward metrics as "reward accuracy 0.82, margin 1.4" (validation ones likewise)."""
        for prefix, text in (
            ("", self.tr("reward accuracy {accuracy:.2f}, margin {margin:.3g}")),
            ("eval_", self.tr("validation reward accuracy {accuracy:.2f}, margin {margin:.3g}")),
        ):
            accuracy, margin = m.get(f"{prefix}rewards/accuracies"), m.get(f"{prefix}rewards/margins")
            if accuracy is not None and margin is not None:
                return text.format(accuracy=accuracy, margin=margin)
        return ""

    def _on_controller_memory_sampled(self, event: MemoryEvent) -> None:
        self.plot_area.ensure_plots()
        self._watch_spill(event)
        self.plot_area.show_memory(event, self.spill_bar.windows)

    def _watch_spill(self, event: object) -> None:
        text = self.spill_bar.watch(event)
        if text:
            self._log(text)

    def _on_controller_settings_adjusted(self, event: AdjustedEvent) -> None:
        self._log(self.adjusted_bar.show_adjustment(event))
        self.status.setText(self.tr("Out of memory: going on with less memory…"))

    def _on_failure_action_requested(self, action: str) -> None:
        from desktop.core.runs.data_record import accept_new_data
        from desktop.core.training.run import RESUME_ON_NEW_DATA

        run = self._resumable
        if action != RESUME_ON_NEW_DATA or run is None:
            return
        try:
            accept_new_data(run.path)  # the classes are still checked
        except OSError as exc:
            show_error(self.status, exc)  # the folder named, in our words; the OS's behind Details
            return
        self.resume_run(run)

    def _on_controller_checkpoint_saved(self, event: object) -> None:
        self._log(self.tr("Checkpoint saved at step {step}.").format(step=event.step))

    def _on_controller_training_finished(self, result: RunResult) -> None:
        self.status.setText(self.tr("Finished. The model is in {folder}").format(folder=result.model_dir))
        self._log(self.tr("Finished: {metrics}").format(metrics=metrics_line(result.metrics, "  ")))
        for note in result.notes:
            self._log(shown(note))

    def _on_controller_training_stopped(self, result: RunResult) -> None:
        if result.run_dir is not None and RunDir(result.run_dir).latest_checkpoint() is not None:
            self._resumable = RunDir(result.run_dir)
            self.resume_button.setVisible(True)
            self.status.setText(self.tr("Stopped. The checkpoint is kept: press Resume to continue."))
        else:
            self.status.setText(self.tr("Stopped before training began."))

    def _on_controller_training_failed(self, result: RunResult) -> None:
        self.status.setText(self.tr("Training did not finish."))
        self.failure.show_failure(result)
        if result.run_dir is not None and RunDir(result.run_dir).resumable():
            self._resumable = RunDir(result.run_dir)
            self.resume_button.setVisible(True)

    def _log(self, text: str) -> None:
        self.log.appendPlainText(f"{time.strftime('%H:%M:%S')}  {text}")
