"""pyqtgraph, configured from the application's palette on first use.

Importing pyqtgraph costs about 0.4 s, so widgets that plot import this module only when the
first plot is made, not at start-up.
"""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

_palette = QApplication.palette()
pg.setConfigOptions(
    antialias=True,
    background=_palette.color(QPalette.ColorRole.Base),
    foreground=_palette.color(QPalette.ColorRole.Text),
)


class PlotWidget(pg.PlotWidget):
    """pyqtgraph's plot widget, whose page can be left without painting the window twice.

    Qt's graphics view deactivates its scene when it is hidden; every top-level plot item then asks to
    be repainted (for an inactive look these plots do not have), and the scene, handling that,
    paints the window's pending update at once (``QGraphicsViewPrivate::dispatchPendingUpdateRequests``),
    before the page being shown is laid out: leaving the data page (its histogram) or the Train step
    (its plots) painted the whole window twice, 10-25 ms more on this 2-core VM. The deactivation a
    hidden view sends is dropped; the window's own (another application chosen) still reaches the scene.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.scene().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.WindowDeactivate and watched is self.scene() and not self.isVisible():
            return True
        return super().eventFilter(watched, event)


__all__ = ["PlotWidget", "pg"]
