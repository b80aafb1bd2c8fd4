"""pyqtgraph, configured from the application's palette on first use.

Importing pyqtgraph costs about 0.4 s, so widgets that plot import this module only when the
first plot is made, not at start-up.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

_palette = QApplication.palette()
pg.setConfigOptions(
    antialias=True,
    background=_palette.color(QPalette.ColorRole.Base),
    foreground=_palette.color(QPalette.ColorRole.Text),
)

__all__ = ["pg"]
