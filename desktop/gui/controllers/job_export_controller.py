"""Writes the run as a job folder for another machine or a cluster (launch.sh, a Slurm script)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from desktop.core.settings.config import RunConfig
from desktop.gui.app_support.workers import BackgroundTask
from desktop.shared_ui import error_text


class JobExportController(QObject):
    """Asks the job's shape and where to write it, copies the config, the data and a local model there
    in the background, then says where the job is and how to run it. One job at a time.

    Args:
        window: The window the questions and answers belong to.
    """

    job_exported = Signal(object)
    """A job folder was written: its path."""
    status_changed = Signal(str)
    """A line for the window's status bar (empty: clear it)."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window = window
        self._task: BackgroundTask | None = None

    def ask_shape(self, gpus: int) -> tuple[int, int] | None:
        """GPUs per machine and machines for the job; ``None`` when the user cancels."""
        from desktop.gui.dialogs.job_shape_dialog import JobShapeDialog  # not needed at start-up

        return JobShapeDialog.ask(gpus, self._window)

    def export(self, config: RunConfig) -> None:
        """Write ``config`` as a job folder in a folder the user picks (unless a job is being written)."""
        if self._task is not None:
            return
        shape = self.ask_shape(config.launch.num_processes)
        if shape is None:
            return
        parent = QFileDialog.getExistingDirectory(self._window, self.tr("Where to write the job folder"))
        if not parent:
            return
        from desktop.core.training.jobs import export_job, job_folder_name

        dest = Path(parent) / job_folder_name(config, Path(parent))
        gpus, nodes = shape
        task = self._task = BackgroundTask(
            lambda: export_job(config, dest, num_processes=gpus, nodes=nodes), self
        )
        task.finished.connect(self._on_task_finished)
        task.failed.connect(self._on_task_failed)
        self.status_changed.emit(self.tr("Writing the job folder (the data and a local model are copied)…"))
        task.start()

    def _on_task_finished(self, folder: Path) -> None:
        self._task = None
        self.status_changed.emit("")
        box = QMessageBox(self._window)
        box.setWindowTitle(self.tr("Job written"))
        box.setText(
            self.tr(
                "The job is in {folder}.\n\nOne machine: run launch.sh there. A Slurm cluster: sbatch "
                "job.sbatch. Its README says how to install the runtime. The run folder ends up in its runs "
                "folder: bring it back with Run history › Import run."
            ).format(folder=folder)
        )
        open_button = box.addButton(self.tr("Open folder"), QMessageBox.ButtonRole.ActionRole)
        box.addButton(QMessageBox.StandardButton.Close)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def clicked(button: object) -> None:
            if button is open_button:
                from PySide6.QtCore import QUrl
                from PySide6.QtGui import QDesktopServices

                QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))

        box.buttonClicked.connect(clicked)
        box.open()
        self.job_exported.emit(folder)

    def _on_task_failed(self, exc: object, detail: str) -> None:
        self._task = None
        self.status_changed.emit("")
        QMessageBox.warning(
            self._window,
            self.tr("The job was not written"),
            error_text(exc) if isinstance(exc, BaseException) else str(exc),
        )
