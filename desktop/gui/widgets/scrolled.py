"""A part of a page that scrolls on its own when the window is short, instead of making the whole page
taller than the window (a tab's form: the page would scroll, and the other tabs' last lines with it)."""

from __future__ import annotations

from PySide6.QtWidgets import QScrollArea, QWidget


def scrolled(widget: QWidget) -> QScrollArea:
    """``widget`` in a frameless scroll area that resizes it to its width."""
    area = QScrollArea()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.Shape.NoFrame)
    return area
