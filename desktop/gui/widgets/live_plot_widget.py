"""A pyqtgraph plot for live training curves: curves made once, repainted at a capped rate."""

from __future__ import annotations

from PySide6.QtCore import Qt

from desktop.gui.widgets.plotting import pg


class _ScientificAxis(pg.AxisItem):
    """Tick labels like 2e-04, for values far below 1 (learning rates)."""

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        return [f"{v:.1e}" if v else "0" for v in values]


class LivePlotWidget(pg.PlotWidget):
    """Named curves that collect points; :meth:`flush` draws what arrived since the last flush.

    Args:
        title: Shown above the plot.
        y_label: The left axis label.
    """

    def __init__(self, title: str, y_label: str = "", scientific: bool = False) -> None:
        super().__init__(axisItems={"left": _ScientificAxis("left")} if scientific else None)
        if scientific:
            self.getAxis("left").setWidth(62)  # room for "2.0e-04" before the first paint
        self.setTitle(title, size="10pt")
        self.setLabel("left", y_label)
        self.setLabel("bottom", self.tr("step"))
        self.showGrid(x=True, y=True, alpha=0.15)
        self.setMenuEnabled(False)
        self.setMinimumSize(260, 170)
        self.legend = self.addLegend(offset=(-8, 8), labelTextSize="8pt", brush=pg.mkBrush(128, 128, 128, 40))
        self._points: dict[str, tuple[list[float], list[float]]] = {}
        self._curves: dict[str, pg.PlotDataItem] = {}
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
        pen = pg.mkPen(color, width=width, style=Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine)
        item = pg.PlotDataItem(
            name=label, pen=pen, symbol=symbol, symbolSize=6, symbolBrush=color, symbolPen=None
        )
        item.setDownsampling(auto=True, method="peak")
        item.setClipToView(True)
        if view is None:
            self.addItem(item)
        else:
            view.addItem(item)
            self.legend.addItem(item, label)
        self._curves[name] = item
        self._points[name] = ([], [])

    def append(self, name: str, x: float, y: float) -> None:
        """Add a point; it is drawn at the next flush."""
        xs, ys = self._points[name]
        xs.append(x)
        ys.append(y)
        self._dirty.add(name)

    def count(self, name: str) -> int:
        """How many points the curve has."""
        return len(self._points[name][0])

    def clear_points(self) -> None:
        """Empty every curve (a new run)."""
        for name, (xs, ys) in self._points.items():
            xs.clear()
            ys.clear()
            self._curves[name].setData([], [])
        self._dirty.clear()

    def clear_curves(self) -> None:
        """Remove every curve and its legend entry (the comparison shows other runs)."""
        for item in self._curves.values():
            self.legend.removeItem(item)
            self.removeItem(item)
        self._curves.clear()
        self._points.clear()
        self._dirty.clear()

    def curve_names(self) -> list[str]:
        """The curves shown, in the order they were added."""
        return list(self._curves)

    def flush(self) -> None:
        """Draw the curves that changed."""
        for name in self._dirty:
            xs, ys = self._points[name]
            self._curves[name].setData(xs, ys)
        self._dirty.clear()


class ThroughputPlotWidget(LivePlotWidget):
    """Samples per second on the left axis and tokens per second on the right."""

    def __init__(self, title: str) -> None:
        super().__init__(title, self.tr("samples/s"))
        plot = self.getPlotItem()
        self.right_view = pg.ViewBox()
        plot.showAxis("right")
        plot.scene().addItem(self.right_view)
        plot.getAxis("right").linkToView(self.right_view)
        plot.getAxis("right").setLabel(self.tr("tokens/s"))
        self.right_view.setXLink(plot)
        plot.vb.sigResized.connect(self._sync_views)

    def _sync_views(self) -> None:
        self.right_view.setGeometry(self.getPlotItem().vb.sceneBoundingRect())
        self.right_view.linkedViewChanged(self.getPlotItem().vb, self.right_view.XAxis)
