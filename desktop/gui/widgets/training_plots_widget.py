"""The Train step's live plots (loss, learning rate, memory, throughput; and the rewards of a preference
or a reasoning run), made ahead of need."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QGridLayout, QWidget

from desktop.core.environment.spill import shared_bytes
from desktop.core.system.events import LogEvent, MemoryEvent, ProgressEvent, StartedEvent
from desktop.core.system.lazy import imported
from desktop.gui.app_support.plots_import import import_plots

REPAINT_MS = 40  # one plot repaints per tick: each at most ~6 times a second, whatever the step rate
SMOOTHING = 0.8
GB = 1024**3
PLOT_GAP_MS = 50  # between two plots made ahead of need
PLOT_IDLE_S = 1.0  # the plots are made ahead of need once the user has left the mouse and keys this long
PLOT_RETRY_MS = 250
PLOT_REVEAL_MS = 20  # the first time the step is shown, its plots appear one per frame
BASE_PLOTS = 4  # loss, learning rate, memory, throughput: every run
EXTRA_PLOTS = 2  # a third row: a preference run's reward accuracy and rewards; a reasoning run's reward
# and answers
REWARD_PREFIXES = ("rewards/", "eval_rewards/")
"""What TRL's DPO and ORPO trainers log (and GRPO's per-reward ``rewards/<name>/mean``): a run whose logs
have these and no ``reward`` of its own is a preference run."""
EXTRA_KINDS = ("preference", "grpo")
REWARD_COLORS = ("#3aa55d", "#8e5bd9", "#d9a21b", "#c2497a", "#2aa1b3")
GPU_COLORS = ("#d9534f", "#2b8cbe", "#41ab5d", "#e6850e", "#6a51a3", "#ce1256", "#636363", "#8c6d31")


class TrainingPlotsWidget(QWidget):
    """Loss (train, smoothed, eval), learning rate, memory (VRAM, RAM, each GPU) and throughput, two by
    two; a preference run adds a third row, its reward accuracy and its rewards (and log-probabilities).
    Plots are made on first use or ahead of need: pyqtgraph takes ~0.4 s to import, too long for
    start-up. Points come in at any rate; a timer repaints one plot per tick while a run is live."""

    def __init__(self) -> None:
        super().__init__()
        self.plots: list = []
        self.loss_plot = self.lr_plot = self.memory_plot = self.speed_plot = None
        self.accuracy_plot = self.rewards_plot = None  # a preference run's, made only for one
        self._extra = ""  # the run's (or the wizard's) third row: "preference", "grpo" or none
        self._made_extra = ""  # which kind the third row's plots made so far are of
        self.reward_plot = self.answers_plot = None  # a reasoning run's, made only for one
        self._revealing = False  # the step has been shown: a plot made later is revealed at once
        self._half_made = None  # a plot made, its curves not yet (see prepare_plots)
        self._importing_plots = False
        self._smoothed: float | None = None
        self.idle_s: Callable[[], float] = lambda: PLOT_IDLE_S
        """Seconds since the user's last input (the window sets it), for :meth:`prepare_plots`."""
        self._plots_later = QTimer(self, singleShot=True, interval=PLOT_RETRY_MS)
        self._plots_later.timeout.connect(self.prepare_plots)
        self._next_flush = 0  # the plot the repaint timer looks at next
        self._unrevealed: list = []  # plots never shown yet, shown one per PLOT_REVEAL_MS
        self.making_plots = False
        """Whether :meth:`prepare_plots` is under way (read by other threads: a background import steps
        aside meanwhile, which doubled the time each plot took, to 40-110 ms)."""
        self.plot_grid = QGridLayout(self)
        self.plot_grid.setContentsMargins(0, 0, 0, 0)
        self._repaint = QTimer(self, interval=REPAINT_MS)
        self._repaint.timeout.connect(self.flush_next)

    # ------------------------------------------------------------------ making and showing

    def _wanted(self) -> int:
        """How many plots the run needs: the four, and a preference or reasoning run's two."""
        return BASE_PLOTS + (EXTRA_PLOTS if self._extra else 0)

    def set_task(self, task: str) -> None:
        """The task of the run shown or set up: a preference or reasoning run's plots are made (ahead of
        need, if making has begun) and shown; for any other task they are hidden, their row gone."""
        extra = task if task in EXTRA_KINDS else ""
        if extra == self._extra:
            return
        if extra and self._made_extra not in ("", extra):  # the other kind's row: made again for this one
            for plot in self.plots[BASE_PLOTS:]:
                self.plot_grid.removeWidget(plot)
                plot.deleteLater()
                if plot in self._unrevealed:
                    self._unrevealed.remove(plot)
            del self.plots[BASE_PLOTS:]
            if len(self.plots) == BASE_PLOTS:
                self._half_made = None  # a third-row plot half made goes with its row
            self._made_extra = ""
        self._extra = extra
        for plot in self.plots[BASE_PLOTS:]:
            policy = plot.sizePolicy()
            policy.setRetainSizeWhenHidden(bool(extra))  # no empty third row for another task
            plot.setSizePolicy(policy)
            plot.setVisible(bool(extra) and plot not in self._unrevealed)
        if extra and self.plots and not self.making_plots:  # made ahead of need like the others
            self.prepare_plots()

    def ensure_plots(self) -> None:
        """Make the plots now (those not made yet); the step shown, they appear a frame apart."""
        made = len(self.plots)
        while self._make_next_plot():
            pass
        if self._revealing and len(self.plots) > made:  # a preference run's, on its first reward metric
            self._reveal_next_plot()

    def prepare_plots(self) -> None:
        """Make the plots ahead of need while the user is idle, half a plot at a time: the plot, then
        its curves and its place in the grid (13-23 ms and 7-10 ms here; under a background import
        twice that). All four at once would hold the window for 200 ms when the Train step opens, and
        one user who comes back meets at most one of these pieces. pyqtgraph (0.4 s to import) is
        imported in the background first."""
        if len(self.plots) >= self._wanted():
            self.making_plots = False  # made meanwhile, on first use
            return
        if self.idle_s() < PLOT_IDLE_S:
            self._plots_later.start()  # a timer of this widget: it dies with the widget
            return
        if not imported("pyqtgraph"):
            if not self._importing_plots:
                self._importing_plots = True
                import_plots(self, self.prepare_plots)
            return
        self.making_plots = True
        if self._make_next_plot():
            # The next piece after a pause: made at once, it would run before the window repaints or
            # handles a click (Qt takes queued calls first), as one long freeze.
            QTimer.singleShot(PLOT_GAP_MS, self, self.prepare_plots)  # dropped if the widget is gone
        self.making_plots = len(self.plots) < self._wanted()

    def _make_next_plot(self) -> bool:
        """Make the next piece of the plots: a plot, or the curves and the grid place of the plot made
        before; whether there was one."""
        from desktop.gui.widgets.live_plot_widget import LivePlotWidget, ThroughputPlotWidget

        made = len(self.plots)
        if made >= self._wanted() and self._half_made is None:
            return False
        if made >= BASE_PLOTS:
            self._made_extra = self._extra
            if self._extra == "grpo":
                return self._make_next_reasoning_plot(made)
            return self._make_next_preference_plot(made)
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
        self._place(plot, made)
        return True

    def _make_next_preference_plot(self, made: int) -> bool:
        """As :meth:`_make_next_plot`, for the reward accuracy (y from 0 to 1, a line at chance) and the
        rewards (the log-probabilities, a hundred times larger, on the right axis)."""
        from desktop.gui.widgets.live_plot_widget import LivePlotWidget, TwoAxisPlotWidget
        from desktop.gui.widgets.plotting import pg

        if self._half_made is None:
            if made == BASE_PLOTS:
                self.accuracy_plot = plot = LivePlotWidget(self.tr("Reward accuracy"))
                # A share of the pairs: the same scale all run, with room for the labels 0 and 1 (one cut
                # by the plot's edge is not drawn); 0.5 labelled, where the chance line is.
                plot.setYRange(0, 1, padding=0.08)
                ticks = [(value, f"{value:g}") for value in (0, 0.25, 0.5, 0.75, 1)]
                plot.getAxis("left").setTicks([ticks, []])
            else:
                # Axis labels as short as the legend's words: the plot is short under its two-row
                # legend, and "log-probability" ran past both ends of the right axis.
                self.rewards_plot = plot = TwoAxisPlotWidget(
                    self.tr("Rewards"), self.tr("reward"), self.tr("log-prob.")
                )
                plot.getPlotItem().getAxis("right").enableAutoSIPrefix(False)
            self._half_made = plot
            return True
        plot, self._half_made = self._half_made, None
        if made == BASE_PLOTS:
            chance = pg.InfiniteLine(0.5, angle=0, pen=pg.mkPen("#999999", dash=[4, 4]))
            plot.addItem(chance)  # as often right as a coin: what a model that learned nothing scores
            plot.add_curve("train", self.tr("train"), "#2f6fde", width=2)
            plot.add_curve("eval", self.tr("eval"), "#e8793a", width=2, symbol="o")
        else:
            plot.add_curve("margin", self.tr("margin"), "#2f6fde", width=2.5)
            plot.add_curve("chosen", self.tr("chosen"), "#3aa55d", width=1.5)
            plot.add_curve("rejected", self.tr("rejected"), "#d9534f", width=1.5)
            plot.add_curve("eval_margin", self.tr("eval margin"), "#e8793a", width=2, symbol="o")
            right = plot.right_view
            plot.add_curve("logp_chosen", self.tr("log-prob. chosen"), "#3aa55d", dashed=True, view=right)
            plot.add_curve("logp_rejected", self.tr("log-prob. rejected"), "#d9534f", dashed=True, view=right)
        self._place(plot, made)
        return True

    def _make_next_reasoning_plot(self, made: int) -> bool:
        """As :meth:`_make_next_plot`, for a reasoning run's reward (the mean over all rewards, weighted;
        its spread; each reward's mean as it first appears) and answers (their mean length, and the KL
        on the right axis)."""
        from desktop.gui.widgets.live_plot_widget import LivePlotWidget, TwoAxisPlotWidget

        if self._half_made is None:
            if made == BASE_PLOTS:
                self.reward_plot = plot = LivePlotWidget(self.tr("Reward"))
            else:
                self.answers_plot = plot = TwoAxisPlotWidget(self.tr("Answers"), self.tr("tokens"), "KL")
            self._half_made = plot
            return True
        plot, self._half_made = self._half_made, None
        if made == BASE_PLOTS:
            plot.add_curve("reward", self.tr("mean reward"), "#2f6fde", width=2.5)
            plot.add_curve("spread", self.tr("spread"), "#2f6fde", dashed=True)
        else:
            plot.add_curve("length", self.tr("mean length"), "#e8793a", width=2)
            plot.add_curve("kl", "KL", "#d9534f", dashed=True, view=plot.right_view)
        self._place(plot, made)
        return True

    def _place(self, plot: QWidget, index: int) -> None:
        """Put a plot made in its grid cell, hidden until it is revealed (its place kept meanwhile)."""
        policy = plot.sizePolicy()
        policy.setRetainSizeWhenHidden(True)  # its place kept in the grid until it is revealed
        plot.setSizePolicy(policy)
        plot.setVisible(False)
        self.plot_grid.addWidget(plot, index // 2, index % 2)
        self.plots.append(plot)
        self._unrevealed.append(plot)

    def start_revealing(self) -> None:
        """The step is being shown: the plots are made, and the first time they appear one a frame
        apart (the first paint of a plot lays out and draws its axes, 10-25 ms each: all four in the
        page's first paint held the window 45-65 ms)."""
        self.ensure_plots()
        self._revealing = True
        if self._unrevealed:
            self._reveal_next_plot()

    def _reveal_next_plot(self) -> None:
        if self._unrevealed and self.isVisible():
            plot = self._unrevealed.pop(0)
            plot.setVisible(plot in self.plots[: self._wanted()])  # not a reward plot of another task
            if self._unrevealed:
                QTimer.singleShot(PLOT_REVEAL_MS, self, self._reveal_next_plot)

    def reveal_plots(self) -> None:
        """Show every plot at once (for a screenshot)."""
        self.ensure_plots()
        while self._unrevealed:
            plot = self._unrevealed.pop(0)
            plot.setVisible(plot in self.plots[: self._wanted()])

    # ------------------------------------------------------------------ points

    def clear(self, keep_points: bool = False) -> None:
        """A run begins: the points go unless ``keep_points`` (a resumed run carries on from them); the
        smoothed loss starts again."""
        self.ensure_plots()
        if not keep_points:
            for plot in self.plots:
                plot.clear_points()
            for name in self.memory_plot.curve_names():
                if name == "shared" or name.startswith("gpu"):  # added for the last run: Windows paged
                    self.memory_plot.remove_curve(name)  # it, or it had several GPUs
        self._smoothed = None

    def show_started(self, event: StartedEvent) -> None:
        """The run's length; going back to a checkpoint (resumed, or after running out of memory), the
        steps after it are done again, so their points go."""
        self.ensure_plots()
        if any([plot.truncate_after(event.resumed_from_step) for plot in self.plots]):
            self._smoothed = None
        for plot in self.plots:
            plot.set_steps(event.total_steps)

    def show_progress(self, event: ProgressEvent) -> None:
        """Samples and tokens per second."""
        self.ensure_plots()
        if event.samples_per_second:
            self.speed_plot.append("samples", event.step, event.samples_per_second)
        if event.tokens_per_second:
            self.speed_plot.append("tokens", event.step, event.tokens_per_second)

    def show_metrics(self, event: LogEvent) -> None:
        """The training loss (and its smoothed line), the evaluation loss and the learning rate; a
        preference run's rewards (its first reward metric makes their plots)."""
        m = event.metrics
        if not self._extra and "reward" in m and "reward_std" in m:  # GRPO logs its mean reward
            self.set_task("grpo")
        elif not self._extra and any(key.startswith(REWARD_PREFIXES) for key in m):
            self.set_task("preference")
        self.ensure_plots()
        if self._extra == "preference":
            self._show_rewards(event.step, m)
        elif self._extra == "grpo":
            self._show_reasoning(event.step, m)
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

    def _show_rewards(self, step: int, m: dict[str, float]) -> None:
        """Reward accuracy (train, eval), the margin, the chosen and rejected rewards, the eval margin and
        the log-probabilities of the chosen and rejected answers."""
        for key, plot, curve in (
            ("rewards/accuracies", self.accuracy_plot, "train"),
            ("eval_rewards/accuracies", self.accuracy_plot, "eval"),
            ("rewards/margins", self.rewards_plot, "margin"),
            ("rewards/chosen", self.rewards_plot, "chosen"),
            ("rewards/rejected", self.rewards_plot, "rejected"),
            ("eval_rewards/margins", self.rewards_plot, "eval_margin"),
            ("logps/chosen", self.rewards_plot, "logp_chosen"),
            ("logps/rejected", self.rewards_plot, "logp_rejected"),
        ):
            if key in m:
                plot.append(curve, step, m[key])

    def _show_reasoning(self, step: int, m: dict[str, float]) -> None:
        """The mean reward and its spread, each reward's mean (a curve of its own from its first log),
        the answers' mean length and the KL."""
        from desktop.core.data.rewards import describe
        from desktop.shared_ui import shown

        plot = self.reward_plot
        for key, curve in (("reward", "reward"), ("reward_std", "spread")):
            if key in m:
                plot.append(curve, step, m[key])
        for key, value in m.items():
            if key.startswith("rewards/") and key.endswith("/mean") and not key.startswith("eval_"):
                name = key.removeprefix("rewards/").removesuffix("/mean")
                made = plot.curve_names()
                if name not in made:
                    color = REWARD_COLORS[(len(made) - 2) % len(REWARD_COLORS)]
                    plot.add_curve(name, shown(describe(name)), color, width=1.5)
                plot.append(name, step, value)
        if "completions/mean_length" in m:
            self.answers_plot.append("length", step, m["completions/mean_length"])
        if "kl" in m:
            self.answers_plot.append("kl", step, m["kl"])

    def show_memory(self, event: MemoryEvent, windows: bool) -> None:
        """VRAM from PyTorch and NVML, the process's RAM, each GPU of a multi-GPU run, and (``windows``)
        what Windows has paged into shared system memory."""
        self.ensure_plots()
        if event.allocated_bytes is not None:
            self.memory_plot.append("allocated", event.step, event.allocated_bytes / GB)
            self.memory_plot.append("reserved", event.step, (event.reserved_bytes or 0) / GB)
        self.memory_plot.append("rss", event.step, event.rss_bytes / GB)
        if event.device_used_bytes is not None and event.device_total_bytes:
            self.memory_plot.append("total", event.step, event.device_total_bytes / GB)
            if len(event.gpus_used_bytes) < 2:
                self.memory_plot.append("device", event.step, event.device_used_bytes / GB)
        shared = shared_bytes(event, windows)
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

    # ------------------------------------------------------------------ repainting

    def set_running(self, running: bool) -> None:
        """While a run is live, repaint a plot per tick; when it ends, every plot at once."""
        if running:
            self._repaint.start()
        else:
            self._repaint.stop()
            self.flush_plots()

    def flush_next(self) -> None:
        """Redraw the next plot that has new points: painting one plot takes 10-15 ms in software
        rendering, all four in one turn of the event loop held the window for up to 90 ms."""
        self.ensure_plots()
        for _ in range(len(self.plots)):
            plot = self.plots[self._next_flush % len(self.plots)]
            self._next_flush += 1
            if plot.dirty:
                plot.flush()
                return

    def flush_plots(self) -> None:
        """Redraw every plot now."""
        self.ensure_plots()
        for plot in self.plots:
            plot.flush()
