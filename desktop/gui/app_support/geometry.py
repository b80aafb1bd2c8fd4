"""Windows that fit the screen they open on: a 1366 x 768 laptop at 125% has about 1093 x 582 to give."""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

FRAME = (16, 40)
"""What the title bar and borders add around a window's contents, before it is shown (when Qt cannot
know them yet): the most any of Windows', GNOME's and KDE's frames take at 100%."""


def fit_to_screen(window: QWidget) -> None:
    """Shrink ``window`` to the available area of its screen (the taskbar left out), frame included, and
    move it onto that area; a window that fits stays as it is."""
    screen = window.screen() or QGuiApplication.primaryScreen()
    if screen is None:
        return
    area = screen.availableGeometry()
    frame = window.frameGeometry()
    extra_w = frame.width() - window.width() or FRAME[0]
    extra_h = frame.height() - window.height() or FRAME[1]
    width = max(window.minimumWidth(), min(window.width(), area.width() - extra_w))
    height = max(window.minimumHeight(), min(window.height(), area.height() - extra_h))
    if (width, height) != (window.width(), window.height()):
        window.resize(width, height)
    frame = window.frameGeometry()
    if not area.contains(frame.topLeft()) or not area.contains(frame.bottomRight()):
        x = area.left() + max(0, (area.width() - width - extra_w) // 2)
        y = area.top() + max(0, (area.height() - height - extra_h) // 2)
        window.move(x, y)
