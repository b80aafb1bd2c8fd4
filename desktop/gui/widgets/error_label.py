"""A failure in a status line: our sentence, and the library's own words one click away (Details)."""

from __future__ import annotations

import html

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QLabel, QMessageBox

from desktop.shared_ui import error_text

DETAILS_LINK = "details"


def show_error(label: QLabel, exc: BaseException) -> None:
    """Put ``exc`` in ``label`` as the user reads it; where the error keeps the original text of a library
    or the operating system (``detail``), a Details link after it shows that text."""
    from desktop.core.system.errors import os_error

    text = error_text(exc)
    detail = getattr(os_error(exc) or exc, "detail", "")
    label.setProperty("errorDetail", detail)
    if not detail:
        label.setText(text)
        return
    if not label.property("detailsConnected"):
        label.linkActivated.connect(lambda link: _show_detail(label) if link == DETAILS_LINK else None)
        label.setProperty("detailsConnected", True)
    words = QCoreApplication.translate("ErrorLabel", "Details")
    escaped = html.escape(text, quote=False).replace("\n", "<br>")
    label.setText(f'{escaped} <a href="{DETAILS_LINK}">{html.escape(words)}</a>')


def _show_detail(label: QLabel) -> None:
    box = QMessageBox(
        QMessageBox.Icon.Information,
        QCoreApplication.translate("ErrorLabel", "Details"),
        str(label.property("errorDetail") or ""),
        parent=label.window(),
    )
    box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)  # to copy into a report
    box.exec()
