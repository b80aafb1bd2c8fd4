"""The window's run history: the Runs dialog, resuming a run, showing a finished one on the Export step,
the crashed run offered at start, and preference tuning of a finished chat run's model."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from desktop.core.runs.folders import RunDir
from desktop.core.settings.config import RunConfig
from desktop.core.system.errors import StudioError
from desktop.gui.pages.stack import DATA, EXPORT, TRAIN
from desktop.shared_ui import error_text


class Wizard(Protocol):
    """What the run history asks of the main window (a protocol: this module does not import it)."""

    controller: Any
    resume_bar: Any

    @property
    def train_page(self) -> Any: ...

    @property
    def export_page(self) -> Any: ...

    def current_config(self) -> RunConfig: ...

    def set_config(self, config: RunConfig) -> None: ...

    def go_to(self, index: int) -> None: ...

    def update_navigation(self) -> None: ...

    def statusBar(self) -> Any: ...


class RunHistory(QObject):
    """The run history of ``window``; ``dialog`` is the Runs dialog once it was opened."""

    def __init__(self, window: Wizard, parent: QWidget) -> None:
        super().__init__(parent)
        self.window = window
        self.parent_widget = parent
        self.dialog: Any = None

    def runs_dir(self) -> Path:
        """The folder the runs go to (the config's, else the app's data folder)."""
        from desktop.core.system.paths import default_runs_dir

        folder = self.window.current_config().output.runs_dir
        return Path(folder) if folder else default_runs_dir()

    def show_runs(self) -> None:
        """Open (or bring forward) the run history."""
        from desktop.gui.dialogs.runs_dialog import RunsDialog

        if self.dialog is None or self.dialog.runs_dir != self.runs_dir():
            if self.dialog is not None:
                self.dialog.close()
            self.dialog = RunsDialog(self.runs_dir(), self.parent_widget)
            self.dialog.resume_requested.connect(self.resume_run)
            self.dialog.export_requested.connect(self.show_finished_run)
            self.dialog.preference_requested.connect(self.start_preference_tuning)
            self.dialog.rewards_requested.connect(self.start_reasoning)
        else:
            self.dialog.refresh()
        self.dialog.show()
        self.dialog.raise_()

    def refresh(self) -> None:
        """List the runs again where the dialog is open (a run has just ended)."""
        if self.dialog is not None and self.dialog.isVisible():
            self.dialog.refresh()

    def resume_run(self, run: RunDir) -> None:
        """Continue ``run`` from its last checkpoint and show the Train step."""
        window = self.window
        if window.controller.is_running():
            QMessageBox.information(
                self.parent_widget,
                self.tr("A run is in progress"),
                self.tr("Stop the current run before resuming another."),
            )
            return
        try:
            config = run.config()
        except StudioError as exc:
            QMessageBox.warning(self.parent_widget, self.tr("Cannot resume this run"), error_text(exc))
            return
        window.resume_bar.setVisible(False)
        self._step_aside()
        window.set_config(config)
        window.train_page.resume_run(run)
        window.go_to(TRAIN)
        window.statusBar().showMessage(self.tr("Resuming {run}").format(run=run.path.name))

    def show_finished_run(self, run: RunDir) -> None:
        """Show a finished run on the Export step, to export it or try it."""
        from desktop.core.runs.folders import run_result

        result = run_result(run)
        if result.model_dir is None:
            QMessageBox.information(
                self.parent_widget,
                self.tr("No model in this run"),
                self.tr("This run has no finished model to export."),
            )
            return
        self._step_aside()
        self.window.export_page.show_result(result)
        self.window.update_navigation()
        self.window.go_to(EXPORT)

    def try_folder(self) -> None:
        """Try a model folder from anywhere on the Export step (File › Open a model folder)."""
        folder = QFileDialog.getExistingDirectory(self.parent_widget, self.tr("Open a model folder"))
        if folder and self.window.export_page.try_folder(folder):
            self.window.update_navigation()
            self.window.go_to(EXPORT)

    def _step_aside(self) -> None:
        """The dialog goes when one of its buttons leads to a step of the wizard: a dialog stays above
        its window, over the page it just opened (History reopens it as it was)."""
        if self.dialog is not None:
            self.dialog.hide()

    def offer_resume(self) -> None:
        """If the newest crashed run can be resumed and the user has not declined it, offer it."""
        self.window.resume_bar.offer(self.runs_dir())

    def start_preference_tuning(self, run: RunDir) -> None:
        """Make the model ``run`` saved the wizard's model and preference tuning its task, then show the
        Model and data step, where the pairs are chosen. The chat data and its columns go (they are not
        pairs) unless the wizard already had preference data; every other setting stays as it is."""
        self._start_from(run, "preference")
        self.window.statusBar().showMessage(
            self.tr(
                "Preference tuning of the model {run} trained: choose pairs of answers (prompt, chosen, "
                "rejected) as the data."
            ).format(run=run.path.name)
        )

    def start_reasoning(self, run: RunDir) -> None:
        """The same for a reasoning run (GRPO): the model ``run`` saved, prompts with answers to check."""
        self._start_from(run, "grpo")
        self.window.statusBar().showMessage(
            self.tr(
                "Training the model {run} trained with rewards: choose prompts (with their reference "
                "answers) as the data, then the rewards."
            ).format(run=run.path.name)
        )

    def _start_from(self, run: RunDir, task: str) -> None:
        from desktop.core.settings.config_sections import Columns, learning_rate_for

        config = self.window.current_config()
        if config.task != task:
            config.task = task
            config.training.learning_rate = learning_rate_for(task, config.training.learning_rate)
            config.data.files, config.data.hub_id = [], ""
            config.columns = Columns()
        config.model.name = str(run.model_dir)
        self._step_aside()
        self.window.set_config(config)
        self.window.go_to(DATA)
