"""What the coach saw in the run's curves (``core/training/coach.py``): a sentence each, with the figures,
and a button per fix that applies it and trains again once this run has ended."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QLabel, QPushButton, QVBoxLayout

from desktop.core.system.events import AdviceEvent
from desktop.shared_ui import shown


class CoachWidget(QFrame):
    """The coach's advice for the run shown; hidden while it has none."""

    retry_requested = Signal(dict)
    """The user chose a fix: its config changes, ``{"section.field": value}``, to apply and retry."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("coach")
        self.box = QVBoxLayout(self)
        self.advice: list[AdviceEvent] = []
        self.lines: list[QLabel] = []
        self.buttons: list[QPushButton] = []
        self.running = False
        self.setVisible(False)

    def reset(self) -> None:
        """A run begins: nothing said yet."""
        for widget in [*self.lines, *self.buttons]:
            widget.deleteLater()
        self.advice, self.lines, self.buttons = [], [], []
        self.setVisible(False)

    def add(self, advice: AdviceEvent) -> None:
        """One piece of advice, under those before it."""
        self.advice.append(advice)
        line = QLabel(shown(advice.message))
        line.setWordWrap(True)
        self.box.addWidget(line)
        self.lines.append(line)
        for remedy in advice.remedies:
            button = QPushButton(self.tr("Apply and retry: {change}").format(change=shown(remedy["label"])))
            button.setToolTip(", ".join(f"{k} = {v}" for k, v in remedy["changes"].items()))
            button.clicked.connect(
                lambda _=False, changes=remedy["changes"]: self.retry_requested.emit(changes)
            )
            button.setEnabled(not self.running)
            self.box.addWidget(button)
            self.buttons.append(button)
        self.setVisible(True)

    def set_running(self, running: bool) -> None:
        """While the run goes on a fix waits: it applies to a new run, started when this one has ended."""
        self.running = running
        for button in self.buttons:
            button.setEnabled(not running)
            if running:
                button.setToolTip(self.tr("Stop the run first; the change applies to a new run."))
