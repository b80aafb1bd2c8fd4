"""Why a run failed, what to do, a button per remedy that applies it and retries, and the details."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QLabel, QPlainTextEdit, QPushButton, QToolButton, QVBoxLayout

from desktop.core.system.events import RunResult
from desktop.shared_ui import shown


class FailureWidget(QFrame):
    """A failed run in one sentence and its remedy; the traceback behind Details. Hidden until a run
    fails."""

    retry_requested = Signal(dict)
    """The user chose a remedy: its config changes, ``{"section.field": value}``, to apply and retry."""
    action_requested = Signal(str)
    """The user chose a remedy that is an action, not a change (``resume_on_new_data``)."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("failure")
        self.reason = QLabel()
        self.reason.setObjectName("failureReason")
        self.reason.setWordWrap(True)
        self.remedy = QLabel()
        self.remedy.setWordWrap(True)
        self.details_button = QToolButton(text=self.tr("Details"), checkable=True)
        self.details = QPlainTextEdit(readOnly=True)
        self.details.setVisible(False)
        self.details_button.toggled.connect(self.details.setVisible)
        box = QVBoxLayout(self)
        box.addWidget(self.reason)
        box.addWidget(self.remedy)
        self.remedy_box = QVBoxLayout()
        box.addLayout(self.remedy_box)
        self.remedy_buttons: list[QPushButton] = []
        box.addWidget(self.details_button)
        box.addWidget(self.details)
        self.setVisible(False)

    def reset(self) -> None:
        """A run begins: no failure shown, the details folded."""
        self.setVisible(False)
        self.details_button.setChecked(False)

    def show_failure(self, result: RunResult) -> None:
        """The failure of ``result`` (a generic sentence when it carries none)."""
        failure = result.failure
        self.reason.setText(shown(failure.reason) if failure else self.tr("Training failed."))
        self.remedy.setText(shown(failure.remedy) if failure else "")
        self.details.setPlainText(failure.detail if failure else "")
        self.details_button.setVisible(bool(failure and failure.detail))
        for button in self.remedy_buttons:
            button.deleteLater()
        self.remedy_buttons = []
        for remedy in failure.remedies if failure else []:
            if remedy.get("action"):
                button = QPushButton(shown(remedy["label"]))
                button.clicked.connect(
                    lambda _=False, action=remedy["action"]: self.action_requested.emit(action)
                )
            else:
                button = QPushButton(
                    self.tr("Apply and retry: {change}").format(change=shown(remedy["label"]))
                )
                button.setToolTip(", ".join(f"{k} = {v}" for k, v in remedy["changes"].items()))
                button.clicked.connect(
                    lambda _=False, changes=remedy["changes"]: self.retry_requested.emit(changes)
                )
            self.remedy_box.addWidget(button)
            self.remedy_buttons.append(button)
        self.setVisible(True)
