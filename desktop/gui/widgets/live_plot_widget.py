"""A pyqtgraph plot for live training curves: curves made once, repainted at a capped rate.

Points go into preallocated numpy buffers that double when full, so adding one costs O(1) however
long the run; a repaint draws the lows and highs of each stretch of the buffer, about as many points
as the plot has pixels across (:meth:`Points.thinned`), kept up to date with only the new points.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGraphicsItem

from desktop.gui.widgets.plotting import PlotWidget, pg

MAX_DRAWN = 1200
"""The most points a curve hands to pyqtgraph: the lows and highs of 600 stretches, as many as a plot
has pixels across, and what keeps a repaint at a million points as cheap as at a thousand."""

SMOOTH_UP_TO = 300
"""Curves of up to this many drawn points are antialiased; longer ones are not: antialiased stroking
of the dense zigzag of a long noisy curve costs more than everything else in a repaint."""

GRID_LEVEL = 1
"""The finest ticks drawn, and so grid lines (pyqtgraph's ``maxTickLevel``: 0 labelled ticks only)."""

LEGEND_COLUMNS = 3
"""Legend entries side by side in the row above the curves (more wrap to a second line)."""


def _cache_painting(axis: pg.AxisItem) -> None:
    """Keep what ``axis`` paints (its ticks, labels and grid lines) as a picture that the plot's repaints
    copy, until the axis changes (pyqtgraph then calls ``update()``, which drops the picture).

    The grid lines cross the whole plot, so every new point of a curve repainted both axes: their
    labels drawn again from pyqtgraph's recording, in Python each time, about three quarters of a
    repaint (a loss plot of 40 points, offscreen: 3.7-5.2 ms a repaint, 0.8-1.1 ms with the axes
    kept; the same pixels). A repaint is also where the window waits for Python's lock while a run
    trains beside it in the same process."""
    axis.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)


class _ScientificAxis(pg.AxisItem):
    """Tick labels like 2.0e-04, for values far below 1 (learning rates), with as many digits as the
    ticks' spacing needs to tell them apart: a rate between 1.02e-4 and 1.06e-4 read "1.0e-04" twice
    and "1.1e-04" twice."""

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        if not values or spacing <= 0:
            return [f"{v:.1e}" for v in values]
        largest = max(abs(v) for v in values) or spacing
        digits = max(1, math.floor(math.log10(largest)) - math.floor(math.log10(spacing)))
        # A tick at zero comes as a rounding error of it (1e-21): it reads "0".
        return ["0" if abs(v) < spacing * 1e-6 else f"{v:.{digits}e}" for v in values]


class Points:
    """A growing series of (x, y): numpy buffers, doubled when full; :meth:`view` shares them.

    :meth:`thinned` keeps the thinned series too, and adds to it only the stretches completed since
    the last call: a flush costs the points that arrived, not the whole run.
    """

    def __init__(self, capacity: int = 1024) -> None:
        self.x = np.empty(capacity)
        self.y = np.empty(capacity)
        self.n = 0
        self._stretch = 0
        self._done = 0  # points already thinned into self._kept
        self._kept: list[np.ndarray] = []

    def append(self, x: float, y: float) -> None:
        if self.n == len(self.x):
            self.x = np.concatenate([self.x, np.empty(len(self.x))])
            self.y = np.concatenate([self.y, np.empty(len(self.y))])
        self.x[self.n], self.y[self.n] = x, y
        self.n += 1

    def view(self) -> tuple[np.ndarray, np.ndarray]:
        """The points so far (views, not copies)."""
        return self.x[: self.n], self.y[: self.n]

    def thinned(self, points: int) -> tuple[np.ndarray, np.ndarray]:
        """At most about ``points`` of the series: the lowest and the highest of each stretch, in
        order, so every spike stays visible (all a plot of a few hundred pixels can show)."""
        if self.n <= points:
            return self.view()
        stretch = 1 << max(0, math.ceil(math.log2(self.n / (points // 2))))  # changes when n doubles
        if stretch != self._stretch:
            self._stretch, self._done, self._kept = stretch, 0, []
        whole = self.n // stretch * stretch
        if whole > self._done:
            ys = self.y[self._done : whole].reshape(-1, stretch)
            base = np.arange(self._done, whole, stretch)
            low, high = base + ys.argmin(axis=1), base + ys.argmax(axis=1)
            self._kept.append(np.unique(np.concatenate([low, high])))  # sorted, a flat stretch once
            if len(self._kept) > 64:  # keep the list of pieces short
                self._kept = [np.concatenate(self._kept)]
            self._done = whole
        tail = self.y[whole : self.n]  # the stretch still filling: its low, high and newest point
        ends = np.unique([whole + tail.argmin(), whole + tail.argmax(), self.n - 1]) if len(tail) else []
        keep = np.concatenate([*self._kept, np.asarray(ends, dtype=int)])
        return self.x[keep], self.y[keep]

    def clear(self) -> None:
        self.n, self._stretch, self._done, self._kept = 0, 0, 0, []

    def truncate_after(self, x: float) -> bool:
        """Drop the points after ``x`` (the run went back to a checkpoint); whether any were dropped."""
        keep = int(np.searchsorted(self.x[: self.n], x, side="right"))
        if keep == self.n:
            return False
        self.n, self._stretch, self._done, self._kept = keep, 0, 0, []
        return True

    def __len__(self) -> int:
        return self.n


class LivePlotWidget(PlotWidget):
    """Named curves that collect points; :meth:`flush` draws what arrived since the last flush.

    Args:
        title: Shown above the plot.
        y_label: The left axis label.
    """

    def __init__(self, title: str, y_label: str = "", scientific: bool = False) -> None:
        # No right-click menus: never shown, and building them was a third of making a plot.
        super().__init__(
            axisItems={"left": _ScientificAxis("left")} if scientific else None, enableMenu=False
        )
        if scientific:
            self.getAxis("left").setWidth(62)  # room for "2.0e-04" before the first paint
            self.setLimits(yMin=0)  # a rate is never below zero: no "-2.0e-06" under a schedule's end
        self.setTitle(title, size="10pt")
        self.setLabel("left", y_label)
        self.setLabel("bottom", self.tr("step"))
        self.showGrid(x=True, y=True, alpha=0.15)
        for side in ("left", "bottom"):
            # Grid lines at the labelled ticks and one level between them; pyqtgraph's default adds a
            # third, up to a line every two pixels, whose blending was 80% of a plot's repaint
            # (11-14 ms -> about 2 ms a plot, offscreen) and read as graph paper.
            self.getAxis(side).setStyle(maxTickLevel=GRID_LEVEL)
            self.getAxis(side).enableAutoSIPrefix(False)  # "GB", never "(x0.001)" under 1 GB
            _cache_painting(self.getAxis(side))
        self.setMinimumSize(260, 170)
        # The legend in a row of its own between the title and the curves, in columns: inside the plot
        # it covered the end of rising curves (memory, throughput) wherever it was anchored.
        self.legend = pg.LegendItem(labelTextSize="8pt", colCount=LEGEND_COLUMNS, verSpacing=-6)
        layout = self.getPlotItem().layout
        layout.removeItem(self.getAxis("top"))  # never shown: its cell holds the legend
        layout.addItem(self.legend, 1, 1, alignment=Qt.AlignmentFlag.AlignHCenter)
        self._points: dict[str, Points] = {}
        self._curves: dict[str, pg.PlotDataItem] = {}
        self._labels: dict[str, str] = {}
        self._in_legend: list[str] = []
        self._dotted: set[str] = set()
        self._dirty: set[str] = set()

    def add_curve(
        self,
        name: str,
        label: str,
        color: str,
        width: float = 1.5,
        dashed: bool = False,
        symbol: str | None = None,
        view: pg.ViewBox | None = None,
    ) -> None:
        """Create a curve once; points are added with :meth:`append`."""
        if symbol is not None:
            self._dotted.add(name)  # its own symbols: kept whatever the number of points
        pen = pg.mkPen(color, width=width, style=Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine)
        item = pg.PlotDataItem(
            name=label,
            pen=pen,
            symbol=symbol,
            symbolSize=6,
            symbolBrush=color,
            symbolPen=None,
        )
        (self if view is None else view).addItem(item)
        self._labels[name] = label  # in the legend from its first point: a CPU run lists no VRAM curve
        self._curves[name] = item
        self._points[name] = Points()

    def append(self, name: str, x: float, y: float) -> None:
        """Add a point; it is drawn at the next flush."""
        self._points[name].append(x, y)
        self._dirty.add(name)

    def set_steps(self, total: int) -> None:
        """Show steps 0 to ``total`` across the plot for the whole run: the curves show how far the run
        is, and the step axis is painted once instead of at every new point."""
        self.getPlotItem().vb.disableAutoRange(axis=pg.ViewBox.XAxis)
        self.setXRange(0, max(1, total), padding=0.02)

    def count(self, name: str) -> int:
        """How many points the curve has."""
        return len(self._points[name])

    def clear_points(self) -> None:
        """Empty every curve (a new run); a plot already empty is left alone (no repaint)."""
        for name, points in self._points.items():
            if not len(points):
                continue
            points.clear()
            self._curves[name].setData([], [])
        self._dirty.clear()

    def truncate_after(self, step: float) -> bool:
        """Drop every curve's points after ``step``: the run went back to the checkpoint there and
        does those steps again. Whether any point was dropped."""
        dropped = False
        for name, points in self._points.items():
            if points.truncate_after(step):
                self._dirty.add(name)
                dropped = True
        return dropped

    def remove_curve(self, name: str) -> None:
        """Remove a curve of the plot's own view and its legend entry (one a run added for itself:
        another run may not have it). The legend is made again from the next points."""
        self.removeItem(self._curves.pop(name))
        del self._points[name], self._labels[name]
        self._dirty.discard(name)
        self.legend.clear()
        self._in_legend = []

    def clear_curves(self) -> None:
        """Remove every curve and its legend entry (the comparison shows other runs)."""
        for item in self._curves.values():
            self.removeItem(item)
        self.legend.clear()
        self._in_legend.clear()
        self._labels.clear()
        self._curves.clear()
        self._points.clear()
        self._dirty.clear()

    def curve_names(self) -> list[str]:
        """The curves shown, in the order they were added."""
        return list(self._curves)

    @property
    def dirty(self) -> bool:
        """Whether some curve has points not drawn yet."""
        return bool(self._dirty)

    def flush(self) -> None:
        """Draw the curves that changed."""
        for name in self._dirty:
            x, y = self._points[name].thinned(MAX_DRAWN)
            curve = self._curves[name]
            curve.setData(x, y, antialias=len(x) <= SMOOTH_UP_TO)
            if len(x) == 1 and curve.opts["symbol"] is None:  # one point draws no line: show it as a dot
                curve.setSymbol("o")
            elif len(x) > 1 and curve.opts["symbol"] == "o" and name not in self._dotted:
                curve.setSymbol(None)
        self._dirty.clear()
        self._update_legend()

    def _update_legend(self) -> None:
        """The curves that have points, in the order they were added."""
        drawn = [name for name in self._curves if len(self._points[name])]
        if set(drawn) <= set(self._in_legend):
            return  # a curve cleared for a new run keeps its entry: the new run draws it again
        self.legend.clear()
        for name in drawn:
            self.legend.addItem(self._curves[name], self._labels[name])
        self._in_legend = drawn


class TwoAxisPlotWidget(LivePlotWidget):
    """Curves on two scales: the left axis, and the right one (``view=plot.right_view`` in
    :meth:`add_curve`).

    Args:
        title: Shown above the plot.
        left_label: The left axis label.
        right_label: The right axis label.
    """

    def __init__(self, title: str, left_label: str, right_label: str) -> None:
        super().__init__(title, left_label)
        plot = self.getPlotItem()
        self.right_view = pg.ViewBox(enableMenu=False)
        plot.showAxis("right")
        plot.scene().addItem(self.right_view)
        plot.getAxis("right").linkToView(self.right_view)
        plot.getAxis("right").setLabel(right_label)
        plot.getAxis("right").setGrid(False)  # the left axis's grid; a second one, of another scale, blurs
        _cache_painting(plot.getAxis("right"))
        self.right_view.setXLink(plot)
        plot.vb.sigResized.connect(self._sync_views)

    def _sync_views(self) -> None:
        self.right_view.setGeometry(self.getPlotItem().vb.sceneBoundingRect())
        self.right_view.linkedViewChanged(self.getPlotItem().vb, self.right_view.XAxis)


class ThroughputPlotWidget(TwoAxisPlotWidget):
    """Samples per second on the left axis and tokens per second on the right."""

    def __init__(self, title: str) -> None:
        super().__init__(title, self.tr("samples/s"), self.tr("tokens/s"))
