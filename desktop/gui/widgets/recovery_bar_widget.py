"""The bar that says a run ran out of GPU memory and went on with less, with Undo for the next run."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton

from desktop.core.system.events import AdjustedEvent
from desktop.shared_ui import shown


class RecoveryBarWidget(QFrame):
    """Each change out-of-memory recovery made to a run, why and from which step; Undo gives the user's
    own settings back for the next run. Hidden until a run is adjusted."""

    undo_requested = Signal(dict)
    """Undo what recovery changed, for the next run: ``{"section.field": value}`` (the user's own)."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("banner")
        self.text_label = QLabel()
        self.text_label.setWordWrap(True)
        self.text_label.setTextFormat(Qt.TextFormat.RichText)
        self.undo_button = QPushButton(self.tr("Undo for the next run"))
        self.undo_button.setToolTip(self.tr("Use your own settings again in the next run"))
        self.undo_button.clicked.connect(self._on_undo_button_clicked)
        layout = QHBoxLayout(self)
        layout.addWidget(self.text_label, 1)
        layout.addWidget(self.undo_button, 0, Qt.AlignmentFlag.AlignTop)
        self.setVisible(False)
        self._adjustments: list[str] = []
        self._undo: dict = {}

    def reset(self) -> None:
        """A run begins: no changes yet, the bar hidden."""
        self.setVisible(False)
        self._adjustments, self._undo = [], {}

    def show_adjustment(self, event: AdjustedEvent) -> str:
        """Add the change of ``event`` to the bar and show it; the same as one line for the log."""
        if event.step == 0:  # found by the longest batch, before the first step
            going_on = self.tr("The run starts with:")
        elif event.resumed_from == event.step:
            going_on = self.tr("The run goes on at step {step} with:").format(step=event.step)
        elif event.resumed_from:
            going_on = self.tr("The run goes back to its checkpoint at step {step} and goes on with:").format(
                step=event.resumed_from
            )
        else:
            going_on = self.tr("The run starts again from the beginning with:")
        changes = "".join(f"<li>{html.escape(shown(change))}</li>" for change in event.described)
        self._adjustments.append(
            f"<b>{html.escape(shown(event.reason))}</b> {html.escape(going_on)}<ul>{changes}</ul>"
        )
        for key, value in event.previous.items():
            self._undo.setdefault(key, value)  # the user's own setting, from before the first change
        kept = (
            self.tr("These settings are now on Memory & speed for your next run; Undo restores yours.")
            if self._undo
            else ""
        )
        self.text_label.setText("".join(self._adjustments) + html.escape(kept))
        self.undo_button.setVisible(bool(self._undo))
        self.setVisible(True)
        return f"{shown(event.reason)} {going_on} " + "; ".join(shown(c) for c in event.described)

    def _on_undo_button_clicked(self) -> None:
        self.undo_requested.emit(dict(self._undo))
        self._undo = {}
        self.undo_button.setVisible(False)
        self.text_label.setText(
            "".join(self._adjustments)
            + html.escape(self.tr("Undone: the next run uses your own settings again."))
        )
