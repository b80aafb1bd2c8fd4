"""A small histogram of token lengths with the max-length limit marked."""

from __future__ import annotations

import numpy as np

from desktop.gui.widgets.plotting import PlotWidget, pg


class HistogramWidget(PlotWidget):
    """Bars of how many examples have each token length."""

    def __init__(self) -> None:
        super().__init__(enableMenu=False)  # no right-click menus: building them is a third of the cost
        self.setMinimumHeight(110)
        self.setMouseEnabled(x=False, y=False)
        self.hideButtons()
        self.setLabel("bottom", self.tr("tokens"))
        self._bars: pg.BarGraphItem | None = None
        self._limit = pg.InfiniteLine(
            angle=90, pen=pg.mkPen("#d9534f", width=1, style=pg.QtCore.Qt.PenStyle.DashLine)
        )
        self.addItem(self._limit)
        self._limit.setVisible(False)

    def show_lengths(self, lengths: list[int], limit: int) -> None:
        """Draw the histogram of ``lengths`` and a line at ``limit``."""
        if self._bars is not None:
            self.removeItem(self._bars)
        counts, edges = np.histogram(lengths, bins=min(40, max(5, len(set(lengths)))))
        width = float(edges[1] - edges[0])
        self._bars = pg.BarGraphItem(
            x=edges[:-1] + width / 2, height=counts, width=width * 0.9, brush="#4c8bf5"
        )
        self.addItem(self._bars)
        self._limit.setPos(limit)
        self._limit.setVisible(limit <= max(lengths) * 1.5)
