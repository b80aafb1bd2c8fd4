"""The error line under a field: hidden while empty, a core message shown translated."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel

from desktop.shared_ui import shown


def error_label() -> QLabel:
    """A label for a field's error, shown under the field, hidden while empty."""
    label = QLabel()
    label.setObjectName("fieldError")
    label.setWordWrap(True)
    label.setVisible(False)
    return label


def show_error(label: QLabel, text: str) -> None:
    """Show ``text`` (a core message is translated) in an error label, or hide it when empty."""
    label.setText(shown(text))
    label.setVisible(bool(text))
