"""Token lengths of the data under the model's tokenizer: figures per text column and a histogram."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QGroupBox, QLabel, QVBoxLayout

from desktop.core.helper_process import TokenReport
from desktop.core.settings.config import RunConfig
from desktop.core.system.lazy import imported
from desktop.gui.app_support.plots_import import import_plots

HISTOGRAM_IDLE_S = 1.0
"""The histogram is made ahead of need once the user has left the mouse and keys this long."""
HISTOGRAM_RETRY_MS = 250


class TokenStatsWidget(QGroupBox):
    """Min, median, 95th percentile and max tokens per text column, how many texts the max length
    cuts, and a histogram of the first column's lengths (made on first need: pyqtgraph is slow to
    import)."""

    def __init__(self) -> None:
        super().__init__(self.tr("Token lengths"))
        self.report: TokenReport | None = None
        """The statistics shown (``None`` while there are none)."""
        self._config = RunConfig()
        self.stats_label = QLabel(self.tr("Token lengths appear once the model and data are loaded."))
        self.stats_label.setObjectName("hint")
        self.stats_label.setWordWrap(True)
        self.histogram = None  # made ahead of need or with the first statistics: pyqtgraph is slow to import
        self.idle_s: Callable[[], float] = lambda: HISTOGRAM_IDLE_S
        """Seconds since the user's last input (the window sets it), for :meth:`prepare_histogram`."""
        self._histogram_later = QTimer(self, singleShot=True, interval=HISTOGRAM_RETRY_MS)
        self._histogram_later.timeout.connect(self.prepare_histogram)
        self.stats_layout = QVBoxLayout(self)
        self.stats_layout.addWidget(self.stats_label)
        self.stats_layout.addStretch()

    def show_loading(self) -> None:
        """The tokenizer is being loaded; pyqtgraph is imported meanwhile for the histogram."""
        self.stats_label.setText(self.tr("Loading the tokenizer…"))
        if self.histogram is None:  # for the histogram: pyqtgraph takes 0.4 s to import, never here
            import_plots(self, self._on_plots_importable)

    def show_report(self, result: TokenReport, config: RunConfig) -> None:
        """The statistics of ``result``, counting the texts longer than the max length of ``config`` as
        cut, and the padding its batches would have."""
        self.report, self._config = result, config
        limit = config.training.max_length
        lines = []
        for name, s in result.token_stats.items():
            lines.append(
                self.tr(
                    "{name}: min {min}, median {median}, 95% {p95}, max {max} tokens; {over} of {count} longer than the limit ({limit}) and cut"  # noqa: E501
                ).format(
                    name=name,
                    min=s.min,
                    median=s.median,
                    p95=s.p95,
                    max=s.max,
                    over=sum(length > limit for length in s.lengths),
                    count=s.count,
                    limit=limit,
                )
            )
        first = next(iter(result.token_stats.values()), None)
        # A preference batch pads prompts and answers apart, neither padding-free nor grouped by length:
        # an estimate from the prompts' lengths would mislead, so none is given.
        if first is not None and first.lengths and config.task != "preference":
            lines.append(self._padding_line([min(n, limit) for n in first.lengths], config))
        self.stats_label.setText("\n".join(lines))
        if first is not None and self.histogram is not None:  # else shown once it is made
            self.histogram.show_lengths(first.lengths, limit)
            self.histogram.setVisible(True)

    def _padding_line(self, lengths: list[int], config: RunConfig) -> str:
        """What share of the batches' tokens would be padding, as the run will make them and otherwise."""
        from desktop.core.training.grouping import padding_estimate

        batch = config.training.batch_size
        shuffled, grouped = padding_estimate(lengths, batch)
        if config.task == "causal-lm" and config.performance.padding_free:
            text = self.tr(
                "Padding at batch size {batch}: a few tokens a row, as batches are padding-free "
                "({shuffled:.0%} of the tokens if they were padded)."
            )
        elif config.performance.group_by_length and shuffled - grouped < 0.01:
            text = self.tr(
                "Padding at batch size {batch}: {shuffled:.0%} of the tokens (too few rows for batches "
                "grouped by length to differ)."
            )
        elif config.performance.group_by_length:
            text = self.tr(
                "Padding at batch size {batch}: {grouped:.0%} of the tokens, as batches are grouped by "
                "length ({shuffled:.0%} in shuffled batches)."
            )
        else:
            text = self.tr(
                "Padding at batch size {batch}: {shuffled:.0%} of the tokens in shuffled batches "
                "({grouped:.0%} grouped by length: Memory & speed)."
            )
        return text.format(batch=batch, shuffled=shuffled, grouped=grouped)

    def show_failure(self, message: str) -> None:
        self.stats_label.setText(self.tr("Token lengths unavailable: {error}").format(error=message))

    def clear_report(self) -> None:
        """No statistics (the data or the model changed)."""
        self.report = None
        self.stats_label.setText(self.tr("Token lengths appear once the model and data are loaded."))
        if self.histogram is not None:
            self.histogram.setVisible(False)

    def prepare_histogram(self) -> None:
        """Make the histogram ahead of need, while the user is idle and once pyqtgraph is imported (the
        window's warm-up imports it): made when the first statistics come, its 15-50 ms would join the
        turns that show the data just loaded."""
        if self.histogram is not None or not imported("pyqtgraph"):
            return
        if self.idle_s() < HISTOGRAM_IDLE_S:
            self._histogram_later.start()  # a timer of this widget: it dies with the widget
            return
        self._make_histogram()

    def _on_plots_importable(self) -> None:
        """Make the histogram now (if it was not made ahead of need), in a turn of its own, while the
        statistics are still being measured (together with showing them it would be one long stall)."""
        self._make_histogram()
        if self.report is not None:
            self.show_report(self.report, self._config)

    def _make_histogram(self) -> None:
        if self.histogram is None:
            from desktop.gui.widgets.histogram_widget import HistogramWidget

            self.histogram = HistogramWidget()
            self.histogram.setVisible(False)
            self.stats_layout.insertWidget(1, self.histogram, 1)
