"""When the app stops right after it starts: what happened, in one sentence, and Try again, Repair or the
log. The runtime is never cleared for it: setting it up again would not help, and on a first start it
would download PyTorch again (the loop a dead display or a missing Qt library used to cause)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from desktop.core.system.messages import msg


def display_problem() -> tuple[str, str] | None:
    """Why no window can open on this Linux desktop (:mod:`desktop.launcher.display`), or ``None``."""
    if sys.platform != "linux":
        return None
    from desktop.launcher import display

    return display.problem()


def explain(code: str, tail: str, log: Path) -> tuple[str, str]:
    """What happened and what to do, for an app that stopped with exit code ``code`` printing ``tail``:
    Qt's own words that it could not open a window are named by :func:`display_problem`."""
    from desktop.launcher import display

    blocked = display_problem() if display.QT_PLATFORM_FAILURE.search(tail) else None
    return blocked or (
        msg("Finetune Studio stopped right after starting (exit code {code}).", code=code),
        msg(
            "Try again. If it stops again, repair the runtime (it keeps your PyTorch build and your "
            "runs), or send the log ({log}).",
            log=str(log),
        ),
    )


def ask(message: str, hint: str, tail: str, log: Path, qt_app: Callable[[], object]) -> str:
    """The window after an early exit: ``retry``, ``repair`` or ``close`` (the log opens in place)."""
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QDesktopServices
    from PySide6.QtWidgets import QMessageBox

    from desktop.shared_ui import shown

    qt_app()
    box = QMessageBox(QMessageBox.Icon.Warning, "Finetune Studio", shown(message))
    box.setInformativeText(shown(hint))
    box.setDetailedText(tail)
    retry = box.addButton(shown(msg("Try again")), QMessageBox.ButtonRole.AcceptRole)
    repair = box.addButton(shown(msg("Repair")), QMessageBox.ButtonRole.ActionRole)
    show_log = box.addButton(shown(msg("Open the log")), QMessageBox.ButtonRole.HelpRole)
    box.addButton(QMessageBox.StandardButton.Close)
    while True:
        box.exec()
        if box.clickedButton() is show_log:  # the log opens; the choice stays
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(log)))
            continue
        return (
            "retry"
            if box.clickedButton() is retry
            else "repair"
            if box.clickedButton() is repair
            else "close"
        )
