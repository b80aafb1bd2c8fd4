"""Step 4: start and stop the run; progress, live plots, log and failures."""

from __future__ import annotations

import html
import importlib
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.core.environment.spill import SpillWatch, shared_bytes
from desktop.core.runs.folders import RunDir
from desktop.core.settings.config import RunConfig
from desktop.core.system.awake import KeepAwake
from desktop.core.system.events import (
    AdjustedEvent,
    LogEvent,
    MemoryEvent,
    ProgressEvent,
    RunResult,
    StartedEvent,
)
from desktop.core.system.lazy import imported
from desktop.gui.app_support.workers import run_in_background
from desktop.gui.pages.base import WizardPage
from desktop.gui.widgets.progress_bar import ProgressBar
from desktop.shared_ui import shown

REPAINT_MS = 40  # one plot repaints per tick: each at most ~6 times a second, whatever the step rate
SMOOTHING = 0.8
GB = 1024**3
PLOT_GAP_MS = 50  # between two plots made ahead of need
PLOT_IDLE_S = 1.0  # the plots are made ahead of need once the user has left the mouse and keys this long
PLOT_RETRY_MS = 250
PLOT_REVEAL_MS = 20  # the first time the step is shown, its plots appear one per frame
GPU_COLORS = ("#d9534f", "#2b8cbe", "#41ab5d", "#e6850e", "#6a51a3", "#ce1256", "#636363", "#8c6d31")


def _on_windows() -> bool:
    """Whether the app runs on Windows (a function, so tests can say it does)."""
    return sys.platform == "win32"


def _nvidia_control_panel() -> str | None:
    """The NVIDIA Control Panel's program, where the driver installed it (the Store version has none)."""
    import os

    for base in (os.environ.get("PROGRAMFILES", r"C:\Program Files"), os.environ.get("PROGRAMW6432", "")):
        candidate = Path(base) / "NVIDIA Corporation" / "Control Panel Client" / "nvcplui.exe"
        if base and candidate.is_file():
            return str(candidate)
    return None


def _open_program(path: str) -> None:
    from desktop.core.system import processes

    processes.popen([path])


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
        config_provider: Returns the run config to train.
    """

    retry_requested = Signal(dict)
    """The user chose a remedy: its config changes, ``{"section.field": value}``, to apply and retry."""
    fit_requested = Signal()
    """The run spills out of the GPU's memory: stop it and open Fit my GPU."""
    undo_requested = Signal(dict)
    """Undo what out-of-memory recovery changed, for the next run: ``{"section.field": value}``."""

    def __init__(self, controller: object, config_provider: Callable[[], RunConfig]) -> None:
        super().__init__()
        self.title = self.tr("Train")
        self.subtitle = self.tr("Watch the loss fall. Stop keeps a checkpoint you can resume from.")
        self.controller = controller
        self._config_provider = config_provider
        self._resumable: RunDir | None = None
        self._smoothed: float | None = None
        self._started_at = 0.0

        self.start_button = QPushButton(self.tr("Start training"))
        self.start_button.setObjectName("primary")
        self.start_button.clicked.connect(self._on_start_clicked)
        self.resume_button = QPushButton(self.tr("Resume"))
        self.resume_button.setVisible(False)
        self.resume_button.clicked.connect(self._on_resume_clicked)
        self._stopping = False  # Stop was pressed once during this run
        self.stop_button = QPushButton(self.tr("Stop"))
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self._on_stop_clicked)
        self.status = QLabel(self.tr("Ready. Press Start to train."))
        self.status.setObjectName("status")
        self.spill_bar = QFrame()  # Windows pages the run's GPU memory into system RAM (see core.spill)
        self.spill_bar.setObjectName("banner")
        self.spill_text = QLabel()
        self.spill_text.setWordWrap(True)
        self.spill_fit = QPushButton(self.tr("Stop and fit my GPU"))
        self.spill_fit.clicked.connect(self._on_spill_fit_clicked)
        self.spill_help = QPushButton(self.tr("Turn the fallback off…"))
        self.spill_help.clicked.connect(self._show_fallback_steps)
        spill_layout = QHBoxLayout(self.spill_bar)
        spill_layout.addWidget(self.spill_text, 1)
        spill_layout.addWidget(self.spill_fit)
        spill_layout.addWidget(self.spill_help)
        self.spill_bar.setVisible(False)
        self._spill = SpillWatch(windows=_on_windows())
        self.adjusted_bar = QFrame()  # the GPU ran out of memory and the run went on with less
        self.adjusted_bar.setObjectName("banner")
        self.adjusted_text = QLabel()
        self.adjusted_text.setWordWrap(True)
        self.adjusted_text.setTextFormat(Qt.TextFormat.RichText)
        self.undo_adjusted = QPushButton(self.tr("Undo for the next run"))
        self.undo_adjusted.setToolTip(self.tr("Use your own settings again in the next run"))
        self.undo_adjusted.clicked.connect(self._on_undo_adjusted_clicked)
        adjusted_layout = QHBoxLayout(self.adjusted_bar)
        adjusted_layout.addWidget(self.adjusted_text, 1)
        adjusted_layout.addWidget(self.undo_adjusted, 0, Qt.AlignmentFlag.AlignTop)
        self.adjusted_bar.setVisible(False)
        self._adjustments: list[str] = []
        self._undo: dict = {}
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
        self.progress.setFormat(self.tr("step %v of %m"))
        self.progress.setValue(0)
        self.timing = QLabel()
        self.timing.setObjectName("hint")

        self.failure = QFrame()
        self.failure.setObjectName("failure")
        self.failure_reason = QLabel()
        self.failure_reason.setObjectName("failureReason")
        self.failure_reason.setWordWrap(True)
        self.failure_remedy = QLabel()
        self.failure_remedy.setWordWrap(True)
        self.details_button = QToolButton(text=self.tr("Details"), checkable=True)
        self.details = QPlainTextEdit(readOnly=True)
        self.details.setVisible(False)
        self.details_button.toggled.connect(self.details.setVisible)
        box = QVBoxLayout(self.failure)
        box.addWidget(self.failure_reason)
        box.addWidget(self.failure_remedy)
        self.remedy_box = QVBoxLayout()
        box.addLayout(self.remedy_box)
        self.remedy_buttons: list[QPushButton] = []
        box.addWidget(self.details_button)
        box.addWidget(self.details)
        self.failure.setVisible(False)

        # Plots are made on first use: pyqtgraph takes ~0.4 s to import, too long for start-up.
        self.plots: list = []
        self.loss_plot = self.lr_plot = self.memory_plot = self.speed_plot = None
        self._half_made = None  # a plot made, its curves not yet (see prepare_plots)
        self._importing_plots = False
        self.idle_s: Callable[[], float] = lambda: PLOT_IDLE_S
        self._plots_later = QTimer(self, singleShot=True, interval=PLOT_RETRY_MS)
        self._plots_later.timeout.connect(self.prepare_plots)
        """Seconds since the user's last input (the window sets it), for :meth:`prepare_plots`."""
        self._next_flush = 0  # the plot the repaint timer looks at next
        self._unrevealed: list = []  # plots never shown yet, shown one per PLOT_REVEAL_MS
        self.making_plots = False
        """Whether :meth:`prepare_plots` is under way (read by other threads: a background import steps
        aside meanwhile, which doubled the time each plot took, to 40-110 ms)."""
        self.plot_area = QWidget()
        self.plot_grid = QGridLayout(self.plot_area)
        self.plot_grid.setContentsMargins(0, 0, 0, 0)

        self.log = QPlainTextEdit(readOnly=True)
        self.log.setMaximumBlockCount(5000)
        self.log.setMaximumHeight(120)

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
        layout.addWidget(self.plot_area, 1)
        layout.addWidget(self.log)

        self._repaint = QTimer(self, interval=REPAINT_MS)
        self._repaint.timeout.connect(self._flush)
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

    def ensure_plots(self) -> None:
        """Make the four plots now (those not made yet)."""
        while self._make_next_plot():
            pass

    def prepare_plots(self) -> None:
        """Make the plots ahead of need while the user is idle, half a plot at a time: the plot, then
        its curves and its place in the grid (13-23 ms and 7-10 ms here; under a background import
        twice that). All four at once would hold the window for 200 ms when the Train step opens, and
        one user who comes back meets at most one of these pieces. pyqtgraph (0.4 s to import) is
        imported in the background first."""
        if len(self.plots) == 4:
            return
        if self.idle_s() < PLOT_IDLE_S:
            self._plots_later.start()  # a timer of this page: it dies with the page
            return
        if not imported("pyqtgraph"):
            if not self._importing_plots:
                self._importing_plots = True
                run_in_background(
                    lambda: importlib.import_module("pyqtgraph"),
                    self,
                    lambda _: self.prepare_plots(),
                    lambda *_: None,
                )
            return
        self.making_plots = True
        if self._make_next_plot():
            # The next piece after a pause: made at once, it would run before the window repaints or
            # handles a click (Qt takes queued calls first), as one long freeze.
            QTimer.singleShot(PLOT_GAP_MS, self, self.prepare_plots)  # dropped if the page is gone
        self.making_plots = len(self.plots) < 4

    def _make_next_plot(self) -> bool:
        """Make the next piece of the plots: a plot, or the curves and the grid place of the plot made
        before; whether there was one."""
        from desktop.gui.widgets.live_plot_widget import LivePlotWidget, ThroughputPlotWidget

        made = len(self.plots)
        if made == 4:
            return False
        if self._half_made is None:
            if made == 0:
                self.loss_plot = LivePlotWidget(self.tr("Loss"))
            elif made == 1:
                self.lr_plot = LivePlotWidget(self.tr("Learning rate"), scientific=True)
            elif made == 2:
                self.memory_plot = LivePlotWidget(self.tr("Memory"), "GB")
            else:
                self.speed_plot = ThroughputPlotWidget(self.tr("Throughput"))
            self._half_made = (self.loss_plot, self.lr_plot, self.memory_plot, self.speed_plot)[made]
            return True
        plot, self._half_made = self._half_made, None
        if made == 0:
            plot.add_curve("train", self.tr("train"), "#9bb7e8", width=1)
            plot.add_curve("smoothed", self.tr("train (smoothed)"), "#2f6fde", width=2.5)
            plot.add_curve("eval", self.tr("eval"), "#e8793a", width=2, symbol="o")
        elif made == 1:
            plot.add_curve("lr", self.tr("learning rate"), "#3aa55d", width=2)
        elif made == 2:
            plot.add_curve("allocated", self.tr("VRAM allocated"), "#8e5bd9", width=2)
            plot.add_curve("reserved", self.tr("VRAM reserved"), "#8e5bd9", dashed=True)
            plot.add_curve("rss", self.tr("process RAM"), "#d9a21b", width=2)
            plot.add_curve("device", self.tr("GPU used, all processes (NVML)"), "#d9534f", width=1.5)
            plot.add_curve("total", self.tr("GPU total"), "#d9534f", dashed=True)
        else:
            plot.add_curve("samples", self.tr("samples/s"), "#2aa1b3", width=2)
            plot.add_curve("tokens", self.tr("tokens/s"), "#c2497a", dashed=True, view=plot.right_view)
        policy = plot.sizePolicy()
        policy.setRetainSizeWhenHidden(True)  # its place kept in the grid until it is revealed
        plot.setSizePolicy(policy)
        plot.setVisible(False)
        self.plot_grid.addWidget(plot, made // 2, made % 2)
        self.plots.append(plot)
        self._unrevealed.append(plot)
        return True

    def showEvent(self, event: QShowEvent) -> None:
        self.ensure_plots()
        if self._unrevealed:
            # The first paint of a plot lays out and draws its axes, 10-25 ms each: all four in the
            # page's first paint held the window 45-65 ms. One now, the others a frame apart.
            self._reveal_next_plot()
        super().showEvent(event)

    def _reveal_next_plot(self) -> None:
        if self._unrevealed and self.isVisible():
            self._unrevealed.pop(0).setVisible(True)
            if self._unrevealed:
                QTimer.singleShot(PLOT_REVEAL_MS, self, self._reveal_next_plot)

    def reveal_plots(self) -> None:
        """Show every plot at once (for a screenshot)."""
        self.ensure_plots()
        while self._unrevealed:
            self._unrevealed.pop(0).setVisible(True)

    # ------------------------------------------------------------------ buttons

    def _on_start_clicked(self) -> None:
        self._begin()
        self.controller.start(self._config_provider())

    def _on_resume_clicked(self) -> None:
        run = self._resumable
        if run is None:
            return
        self._begin(keep_plots=True)
        self.controller.start(run.config(), resume=run)

    def resume_run(self, run: RunDir) -> None:
        """Continue ``run`` (from the run history) from its last checkpoint; its curves so far are shown."""
        from desktop.core.system.events import LogEvent

        self._resumable = run
        self._begin()
        for event in run.events():  # the curves so far; the smoothed loss carries on from them
            if isinstance(event, LogEvent):
                self._on_controller_metrics_logged(event)
        self._log(self.tr("Resuming {run}.").format(run=run.path.name))
        self.controller.start(run.config(), resume=run)

    def _on_stop_clicked(self) -> None:
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

    def _begin(self, keep_plots: bool = False) -> None:
        self.ensure_plots()
        self.failure.setVisible(False)
        self.details_button.setChecked(False)
        self.resume_button.setVisible(False)
        if not keep_plots:
            for plot in self.plots:
                plot.clear_points()
            self.log.clear()
            self.progress.setValue(0)
        self._smoothed = None
        self._started_at = time.monotonic()
        self.status.setText(self.tr("Preparing…"))
        self._spill = SpillWatch(windows=_on_windows())
        self.spill_bar.setVisible(False)
        self.adjusted_bar.setVisible(False)
        self.recovery_note.setVisible(False)
        self._adjustments, self._undo = [], {}

    # ------------------------------------------------------------------ controller signals

    def _on_controller_running_changed(self, running: bool) -> None:
        self.start_button.setEnabled(not running)
        self.stop_button.setEnabled(running)
        self._stopping = False
        self.stop_button.setText(self.tr("Stop"))
        self.stop_button.setToolTip("")
        if running:
            self._repaint.start()
        else:
            self._repaint.stop()
            self._flush_all()

    def _watch_spill(self, event: object) -> None:
        self._spill.add(event)
        if not self.spill_bar.isHidden():
            return
        found = self._spill.spill()
        if found is None:
            return
        self.spill_text.setText(
            self.tr(
                "Windows is moving this run's GPU memory into shared system memory: the card is full, and "
                "the steps are now {slowdown:.0f} times slower than at the start. Use less memory, or turn "
                "the fallback off so that the run stops with a clear out-of-memory error instead."
            ).format(slowdown=found.slowdown)
            if found.slowdown
            else self.tr(
                "Windows is moving this run's GPU memory into shared system memory: PyTorch holds more than "
                "the card's {total:.1f} GB, so every step waits for system RAM. Use less memory, or turn "
                "the fallback off so that the run stops with a clear out-of-memory error instead."
            ).format(total=found.total_bytes / GB)
        )
        self.spill_bar.setVisible(True)
        self._log(self.spill_text.text())

    def _on_spill_fit_clicked(self) -> None:
        if self.controller.is_running():
            self.controller.stop()  # a checkpoint is kept; the new settings apply to the next run
        self.fit_requested.emit()

    def _show_fallback_steps(self) -> None:
        """How to set "Prefer No Sysmem Fallback" for this app's Python, with the exact paths."""
        from PySide6.QtWidgets import QMessageBox

        python = Path(sys.executable)
        names = [str(python)]
        windowed = python.with_name("pythonw.exe")
        if windowed.exists() and windowed != python:
            names.append(str(windowed))
        box = QMessageBox(self)
        box.setWindowTitle(self.tr("Turn the fallback off"))
        box.setText(
            self.tr(
                "1. Open the NVIDIA Control Panel (right-click the desktop).\n"
                "2. 3D Settings › Manage 3D settings › Program Settings › Add, and choose:\n{programs}\n"
                '3. Set "CUDA - Sysmem Fallback Policy" to "Prefer No Sysmem Fallback" and Apply.\n\n'
                "A run that needs more memory than the card has then stops with an out-of-memory error, "
                "which the app explains and offers to fix, instead of slowing down."
            ).format(programs="\n".join(names))
        )
        panel = _nvidia_control_panel()
        open_button = (
            box.addButton(self.tr("Open the NVIDIA Control Panel"), QMessageBox.ButtonRole.ActionRole)
            if panel
            else None
        )
        box.addButton(QMessageBox.StandardButton.Close)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.buttonClicked.connect(
            lambda button: _open_program(panel) if panel and button is open_button else None
        )
        box.open()

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
        self.ensure_plots()
        # Going back to a checkpoint (resumed, or after running out of memory): the steps after it
        # are done again, so their points go.
        if any([plot.truncate_after(event.resumed_from_step) for plot in self.plots]):
            self._smoothed = None
        for plot in self.plots:
            plot.set_steps(event.total_steps)
        self.recovery_note.setVisible(event.oom_recovery)
        self.progress.setMaximum(max(1, event.total_steps))
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
        self.ensure_plots()
        self.progress.setValue(event.step)
        self._watch_spill(event)
        if event.samples_per_second:
            self.speed_plot.append("samples", event.step, event.samples_per_second)
        if event.tokens_per_second:
            self.speed_plot.append("tokens", event.step, event.tokens_per_second)
        speed = f"{event.samples_per_second:.1f}" if event.samples_per_second else "–"
        self.timing.setText(
            self.tr(
                "Elapsed {elapsed}   ·   remaining about {eta}   ·   {speed} samples/s   ·   epoch {epoch:.2f}"  # noqa: E501
            ).format(
                elapsed=_duration(event.elapsed_s), eta=_duration(event.eta_s), speed=speed, epoch=event.epoch
            )
        )

    def _on_controller_metrics_logged(self, event: LogEvent) -> None:
        self.ensure_plots()
        m = event.metrics
        if "loss" in m:
            self.loss_plot.append("train", event.step, m["loss"])
            self._smoothed = (
                m["loss"]
                if self._smoothed is None
                else SMOOTHING * self._smoothed + (1 - SMOOTHING) * m["loss"]
            )
            self.loss_plot.append("smoothed", event.step, self._smoothed)
        if "eval_loss" in m:
            self.loss_plot.append("eval", event.step, m["eval_loss"])
        if "learning_rate" in m:
            self.lr_plot.append("lr", event.step, m["learning_rate"])
        shown = "  ".join(f"{k} {v:.4g}" for k, v in m.items() if not k.endswith(("_runtime", "_per_second")))
        self._log(self.tr("step {step}: {metrics}").format(step=event.step, metrics=shown))

    def _on_controller_memory_sampled(self, event: MemoryEvent) -> None:
        self.ensure_plots()
        self._watch_spill(event)
        if event.allocated_bytes is not None:
            self.memory_plot.append("allocated", event.step, event.allocated_bytes / GB)
            self.memory_plot.append("reserved", event.step, (event.reserved_bytes or 0) / GB)
        self.memory_plot.append("rss", event.step, event.rss_bytes / GB)
        if event.device_used_bytes is not None and event.device_total_bytes:
            self.memory_plot.append("total", event.step, event.device_total_bytes / GB)
            if len(event.gpus_used_bytes) < 2:
                self.memory_plot.append("device", event.step, event.device_used_bytes / GB)
        shared = shared_bytes(event, self._spill.windows)
        if shared or (shared is not None and "shared" in self.memory_plot.curve_names()):
            if "shared" not in self.memory_plot.curve_names():  # only once Windows has started paging
                self.memory_plot.add_curve("shared", self.tr("in shared system memory"), "#d9534f", width=2)
            self.memory_plot.append("shared", event.step, shared / GB)
        for index, used in enumerate(event.gpus_used_bytes if len(event.gpus_used_bytes) > 1 else []):
            name = f"gpu{index}"
            if name not in self.memory_plot.curve_names():  # a curve per GPU of a multi-GPU run
                color = GPU_COLORS[index % len(GPU_COLORS)]
                self.memory_plot.add_curve(
                    name, self.tr("GPU {index} used (NVML)").format(index=index), color
                )
            self.memory_plot.append(name, event.step, used / GB)

    def _on_controller_settings_adjusted(self, event: AdjustedEvent) -> None:
        if event.step == 0:  # found by the longest batch, before the first step
            going_on = self.tr("The run starts with:")
        elif event.resumed_from == event.step:
            going_on = self.tr("The run goes on at step {step} with:").format(step=event.step)
        elif event.resumed_from:
            going_on = self.tr("The run goes back to its checkpoint at step {step} and goes on with:").format(
                step=event.resumed_from
            )
        else:
            going_on = self.tr("The run starts again from the beginning with:")
        changes = "".join(f"<li>{html.escape(shown(change))}</li>" for change in event.described)
        self._adjustments.append(
            f"<b>{html.escape(shown(event.reason))}</b> {html.escape(going_on)}<ul>{changes}</ul>"
        )
        for key, value in event.previous.items():
            self._undo.setdefault(key, value)  # the user's own setting, from before the first change
        kept = (
            self.tr("These settings are now on Memory & speed for your next run; Undo restores yours.")
            if self._undo
            else ""
        )
        self.adjusted_text.setText("".join(self._adjustments) + html.escape(kept))
        self.undo_adjusted.setVisible(bool(self._undo))
        self.adjusted_bar.setVisible(True)
        self._log(f"{shown(event.reason)} {going_on} " + "; ".join(shown(c) for c in event.described))
        self.status.setText(self.tr("Out of memory: going on with less memory…"))

    def _on_undo_adjusted_clicked(self) -> None:
        self.undo_requested.emit(dict(self._undo))
        self._undo = {}
        self.undo_adjusted.setVisible(False)
        self.adjusted_text.setText(
            "".join(self._adjustments)
            + html.escape(self.tr("Undone: the next run uses your own settings again."))
        )

    def _on_controller_checkpoint_saved(self, event: object) -> None:
        self._log(self.tr("Checkpoint saved at step {step}.").format(step=event.step))

    def _on_controller_training_finished(self, result: RunResult) -> None:
        self.status.setText(self.tr("Finished. The model is in {folder}").format(folder=result.model_dir))
        metrics = "  ".join(f"{k} {v:.4g}" for k, v in result.metrics.items())
        self._log(self.tr("Finished: {metrics}").format(metrics=metrics))
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
        failure = result.failure
        self.status.setText(self.tr("Training did not finish."))
        self.failure_reason.setText(shown(failure.reason) if failure else self.tr("Training failed."))
        self.failure_remedy.setText(shown(failure.remedy) if failure else "")
        self.details.setPlainText(failure.detail if failure else "")
        self.details_button.setVisible(bool(failure and failure.detail))
        for button in self.remedy_buttons:
            button.deleteLater()
        self.remedy_buttons = []
        for remedy in failure.remedies if failure else []:
            button = QPushButton(self.tr("Apply and retry: {change}").format(change=shown(remedy["label"])))
            button.setToolTip(", ".join(f"{k} = {v}" for k, v in remedy["changes"].items()))
            button.clicked.connect(
                lambda _=False, changes=remedy["changes"]: self.retry_requested.emit(changes)
            )
            self.remedy_box.addWidget(button)
            self.remedy_buttons.append(button)
        self.failure.setVisible(True)
        if result.run_dir is not None and RunDir(result.run_dir).resumable():
            self._resumable = RunDir(result.run_dir)
            self.resume_button.setVisible(True)

    # ------------------------------------------------------------------ helpers

    def _flush(self) -> None:
        """Redraw the next plot that has new points: painting one plot takes 10-15 ms in software
        rendering, all four in one turn of the event loop held the window for up to 90 ms."""
        self.ensure_plots()
        for _ in range(len(self.plots)):
            plot = self.plots[self._next_flush % len(self.plots)]
            self._next_flush += 1
            if plot.dirty:
                plot.flush()
                return

    def _flush_all(self) -> None:
        self.ensure_plots()
        for plot in self.plots:
            plot.flush()

    def _log(self, text: str) -> None:
        self.log.appendPlainText(f"{time.strftime('%H:%M:%S')}  {text}")
