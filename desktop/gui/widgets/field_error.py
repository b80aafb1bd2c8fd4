"""The error line under a field: hidden while empty, a core message shown translated."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLabel, QWidget

from desktop.shared_ui import shown

AddField = Callable[[QFormLayout, str, str, "QWidget | QHBoxLayout"], None]
"""Adds a form row for a run config field with its error line under it: ``(form, "section.field",
words, editor)`` (the page that owns the form's errors makes the rows of its parts)."""


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
