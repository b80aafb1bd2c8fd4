"""A progress report repaints nothing on the spot (a synchronous repaint froze the window)."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from desktop.gui.widgets.progress_bar import ProgressBar
from tests.gui.paints import PaintCounter


def test_setting_the_value_paints_with_the_window_not_at_once(qtbot) -> None:
    window = QWidget()
    label, bar = QLabel("page"), ProgressBar()
    bar.setRange(0, 1000)
    layout = QVBoxLayout(window)
    layout.addWidget(label)
    layout.addWidget(bar)
    qtbot.addWidget(window)
    paints = PaintCounter()
    label.installEventFilter(paints)
    bar.installEventFilter(paints)
    window.show()
    qtbot.waitUntil(lambda: paints.count >= 2)  # shown
    paints.count = 0

    label.setText("a page just shown, waiting for its paint")
    bar.setValue(500)

    assert paints.count == 0  # QProgressBar painted the label and itself here
    assert bar.value() == 500
    qtbot.waitUntil(lambda: paints.count >= 2)  # both, with the next repaint
