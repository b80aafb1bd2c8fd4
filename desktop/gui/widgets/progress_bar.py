"""A progress bar that is repainted with the rest of the window, never on the spot."""

from __future__ import annotations

from PySide6.QtWidgets import QProgressBar


class ProgressBar(QProgressBar):
    """:class:`QProgressBar` whose :meth:`setValue` asks for a repaint instead of making one.

    Qt's ``setValue`` calls ``repaint()`` each time the bar moves by a chunk; ``repaint()`` paints at
    once everything of the window waiting to be painted (a page just shown, the plots), inside the
    handler of the progress report, and that handler then runs back to back with the window's other
    queued work: the data page's first progress report froze the window 40-90 ms (measured with
    ``bench/gui_responsiveness.py --slow-events``). With updates held while the value is set, the bar is
    painted with the next ordinary repaint, a few milliseconds later.
    """

    def setValue(self, value: int) -> None:
        if value == self.value():
            return
        self.setUpdatesEnabled(False)
        try:
            super().setValue(value)
        finally:
            self.setUpdatesEnabled(True)  # which asks for the bar's repaint
