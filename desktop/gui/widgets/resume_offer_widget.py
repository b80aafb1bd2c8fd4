"""The bar that offers to resume the newest run that was interrupted (the app or the computer stopped)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton

from desktop.core.runs.folders import RunDir, newest_crashed
from desktop.shared_ui import Key, Settings


class ResumeOfferWidget(QFrame):
    """Resume or Not now for the newest crashed run of a runs folder; a run declined is not offered
    again (the last 50 declined are remembered). Hidden while there is nothing to offer.

    Args:
        settings: Where the declined runs are remembered.
    """

    checked = Signal()
    """The runs folder was looked at for a crashed run to offer (whether or not one was offered)."""
    resume_requested = Signal(object)
    """The user chose to resume the run offered: its :class:`RunDir`."""

    def __init__(self, settings: Settings) -> None:
        super().__init__()
        self.setObjectName("banner")
        self._settings = settings
        self._crashed: RunDir | None = None
        self.text_label = QLabel()
        self.text_label.setWordWrap(True)
        self.yes_button = QPushButton(self.tr("Resume"))
        self.yes_button.clicked.connect(self._on_yes_button_clicked)
        self.no_button = QPushButton(self.tr("Not now"))
        self.no_button.clicked.connect(self._on_no_button_clicked)
        bar = QHBoxLayout(self)
        bar.addWidget(self.text_label, 1)
        bar.addWidget(self.yes_button)
        bar.addWidget(self.no_button)
        self.setVisible(False)

    def offer(self, runs_dir: Path) -> None:
        """If the newest crashed run in ``runs_dir`` can be resumed and the user has not declined it,
        offer it."""
        dismissed = set(self._settings.text(Key.DISMISSED_RESUME).splitlines())
        found = newest_crashed(runs_dir, dismissed)
        self.checked.emit()
        if found is None:
            return
        self._crashed, step, total = found
        self.text_label.setText(
            self.tr(
                "The run {run} was interrupted at step {step} of {total} (the app or the computer "
                "stopped). Resume it from its last checkpoint?"
            ).format(run=self._crashed.path.name, step=step, total=total)
        )
        self.setVisible(True)

    def _on_yes_button_clicked(self) -> None:
        if self._crashed is not None:
            self.resume_requested.emit(self._crashed)

    def _on_no_button_clicked(self) -> None:
        if self._crashed is not None:
            dismissed = self._settings.text(Key.DISMISSED_RESUME).splitlines()
            self._settings.set_text(
                Key.DISMISSED_RESUME, "\n".join([*dismissed[-50:], str(self._crashed.path)])
            )
        self._crashed = None
        self.setVisible(False)
