"""Starts a fresh copy of the app and closes this window: to repair PyTorch, or in another language."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from PySide6.QtCore import QObject, QProcess
from PySide6.QtWidgets import QCheckBox, QFileDialog, QMessageBox, QWidget

from desktop.core.environment.repair import RepairPlan
from desktop.core.system.data_location import Move
from desktop.core.system.paths import APP_NAME
from desktop.core.system.secrets import shell_join
from desktop.gui.app_support.workers import run_in_background
from desktop.shared_ui import Key, Settings, error_text


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

    def move_data_folder(self) -> None:
        """Choose a folder, check it, and have the launcher move the data there at its next start (the
        app runs from the runtime in the data folder, so it cannot move it itself)."""
        from desktop.core.system.data_location import plan_move
        from desktop.core.system.paths import data_dir

        current = data_dir()
        chosen = QFileDialog.getExistingDirectory(
            self._window, self.tr("Move the data folder into"), str(current.parent)
        )
        if not chosen:
            return
        target = Path(chosen)
        if target.name != APP_NAME and any(target.iterdir()):
            target = target / APP_NAME  # D:\ is not emptied into: D:\FinetuneStudio
        # Checked off the GUI thread: the size of a runtime (tens of thousands of files) takes seconds.
        run_in_background(
            lambda: plan_move(current, target),
            self,
            lambda move: self._confirm_move(current, target, move),
            lambda exc, detail: QMessageBox.warning(
                self._window, self.tr("Cannot move the data folder"), error_text(exc)
            ),
        )

    def _confirm_move(self, current: Path, target: Path, move: Move) -> None:
        """Say what the move takes and, if the user agrees, restart through the launcher to do it."""
        from desktop.core.environment.swap_request import launcher_for_swap
        from desktop.core.system.data_location import model_cache_to_move

        launcher = launcher_for_swap()
        if launcher is None:
            command = [sys.executable, "-m", "desktop.cli", "move-data", str(target), "--with-model-cache"]
            QMessageBox.information(
                self._window,
                self.tr("Move the data folder"),
                self.tr("Close Finetune Studio, then run: {command}").format(command=shell_join(command)),
            )
            return
        size = (
            self.tr("{size:.1f} GB to copy").format(size=move.size / 2**30)
            if move.size
            else self.tr("a rename on the same drive")
        )
        box = QMessageBox(
            QMessageBox.Icon.Question,
            self.tr("Move the data folder"),
            self.tr(
                "Finetune Studio closes, moves its data folder ({size}) from {source} to {target}, and "
                "starts again. Command-line runs must end first. Continue?"
            ).format(size=size, source=current, target=target),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            self._window,
        )
        models = model_cache_to_move()
        # Kept here: the box does not own a check box made in Python, which would be deleted under it.
        take_models = QCheckBox(
            self.tr(
                "Also move the downloaded models ({folder}). Other programs that use this Hugging Face "
                "cache will then download their models again."
            ).format(folder=models)
        )
        if models is not None:
            box.setCheckBox(take_models)
        if box.exec() != QMessageBox.StandardButton.Yes:
            return
        with_models = models is not None and take_models.isChecked()
        arguments = ["--data-folder", str(target), *(["--with-model-cache"] if with_models else [])]
        started = QProcess.startDetached(str(launcher), arguments)
        if started[0] if isinstance(started, tuple) else started:
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
                ).format(error=error_text(exc, " ")),
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
