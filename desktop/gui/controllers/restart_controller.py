"""Starts a fresh copy of the app and closes this window: to repair PyTorch, or in another language."""

from __future__ import annotations

import os
import sys

from PySide6.QtCore import QObject, QProcess
from PySide6.QtWidgets import QMessageBox, QWidget

from desktop.core.environment.repair import RepairPlan
from desktop.shared_ui import Key, Settings


def _start_detached(arguments: list[str]) -> bool:
    """Start ``python -m desktop ARGUMENTS`` on its own; whether it started."""
    started = QProcess.startDetached(sys.executable, ["-m", "desktop", *arguments])
    return started[0] if isinstance(started, tuple) else started


class RestartController(QObject):
    """Asks before restarting; the window closes once the new copy has started.

    Args:
        window: The window to close (and the questions' parent).
        settings: Where the language is remembered.
    """

    def __init__(self, window: QWidget, settings: Settings) -> None:
        super().__init__(window)
        self._window = window
        self._settings = settings

    def choose_language(self, code: str) -> None:
        """Remember the language and offer to restart in it (every window is built in one language)."""
        if code == self._settings.text(Key.LANGUAGE):
            return
        self._settings.set_text(Key.LANGUAGE, code)
        answer = QMessageBox.question(
            self._window,
            self.tr("Language"),
            self.tr("The new language is used from the next start. Restart Finetune Studio now?"),
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        if _start_detached(["--lang", code]):
            self._window.close()

    def restart_to_swap(self, plan: RepairPlan) -> None:
        """Ask the launcher to swap PyTorch at its next start, start it, and close this window."""
        from desktop.core.environment.swap_request import SwapRequest, ask_for_swap, launcher_for_swap
        from desktop.core.system.paths import data_dir

        launcher = launcher_for_swap()
        if launcher is None:
            return
        version = plan.requirements[0].removeprefix("torch==")
        answer = QMessageBox.question(
            self._window,
            self.tr("Restart to install PyTorch"),
            self.tr(
                "Finetune Studio closes, installs PyTorch {version} beside the one you have, and "
                "starts again with it. The PyTorch you have keeps working until the new one is "
                "complete; if anything fails, it stays. Runs started from the command line are waited "
                "for. Continue?"
            ).format(version=version),
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        request = SwapRequest(plan.requirements[0], plan.index_url, plan.requirements[1:])
        try:
            ask_for_swap(data_dir(), request)
        except OSError as exc:
            QMessageBox.warning(
                self._window,
                self.tr("Could not restart"),
                self.tr(
                    "The request could not be written ({error}). Check that the data folder is writable."
                ).format(error=exc),
            )
            return
        started = QProcess.startDetached(str(launcher), [])
        if started[0] if isinstance(started, tuple) else started:
            self._window.close()
        else:
            QMessageBox.warning(
                self._window,
                self.tr("Could not restart"),
                self.tr("Close Finetune Studio and start it again: PyTorch is installed at that start."),
            )

    def restart_for_repair(self) -> None:
        """Start a fresh copy of the app that repairs PyTorch before anything imports it, then quit."""
        answer = QMessageBox.question(
            self._window,
            self.tr("Restart to install PyTorch"),
            self.tr(
                "PyTorch is in use by this window, so it cannot be replaced now. Restart the app and "
                "install the matching PyTorch first thing?"
            ),
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        # The new process waits for this one to end: its PyTorch DLLs stay locked until then.
        if _start_detached(["--repair", "--wait-pid", str(os.getpid())]):
            self._window.close()
        else:
            QMessageBox.warning(
                self._window,
                self.tr("Could not restart"),
                self.tr("Close the app, then run: python -m desktop --repair"),
            )
