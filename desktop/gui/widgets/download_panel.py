"""A download as its own step: a progress bar (bytes, speed, time left), Cancel, and one clear line.

Used by the model browser (models) and the data page (hub datasets). The download runs in a
:class:`~desktop.gui.app_support.workers.BackgroundTask`; Cancel keeps what was downloaded, so the
next try resumes.
"""

from __future__ import annotations

import threading
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from desktop.core.system.errors import human_size
from desktop.gui.app_support.workers import BackgroundTask
from desktop.gui.widgets.error_label import show_error
from desktop.gui.widgets.progress_bar import ProgressBar
from desktop.shared_ui import shown


class DownloadPanel(QWidget):
    """Progress bar, status line and Cancel for one download at a time."""

    downloaded = Signal(str)
    """The local folder of what was downloaded."""
    ended = Signal()
    """The download finished, failed or was cancelled."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._task: BackgroundTask | None = None
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.progress = ProgressBar()
        self.progress.setVisible(False)
        self.cancel_button = QPushButton(self.tr("Cancel download"))
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.token_button = QPushButton(self.tr("Enter an access token…"))
        self.token_button.setVisible(False)  # shown when a gated model asks for one
        self.token_button.clicked.connect(self.open_token_settings)
        self.token_dialog = None
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.progress, 1)
        row.addWidget(self.cancel_button)
        row.addWidget(self.token_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.status)
        layout.addLayout(row)

    def is_running(self) -> bool:
        return self._task is not None

    def start(self, ref: str, source: Any, dataset: bool = False) -> None:
        """Download ``ref`` (a model, or a dataset) from ``source``."""
        from desktop.core.hub.downloads import download

        cancel = threading.Event()
        self.token_button.setVisible(False)
        self.progress.setVisible(True)
        self.progress.setRange(0, 0)  # busy until the files and their sizes are known
        self.cancel_button.setVisible(True)
        self.cancel_button.setEnabled(True)
        preparing = self.tr("Preparing the download of {name} from {source}…")
        self.status.setText(preparing.format(name=ref, source=shown(source.label)))

        def work() -> Any:
            return download(ref, source, dataset=dataset, on_progress=task.report, cancel=cancel)

        task = BackgroundTask(work, self, cancel)
        task.progressed.connect(self.show_progress)
        task.finished.connect(lambda folder: self._on_done(ref, folder))
        task.failed.connect(self._on_failed)
        self._task = task
        task.start()

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self.cancel_button.setEnabled(False)
            self.status.setText(self.tr("Cancelling…"))  # at once; the download ends within two seconds

    def show_message(self, text: str) -> None:
        self.status.setText(text)

    def show_progress(self, progress: Any) -> None:
        """How far the download is: bytes done and in all, speed and time left (a hub Progress)."""
        self.progress.setRange(0, 1000)
        self.progress.setValue(int(progress.fraction * 1000))
        eta = progress.eta_s
        left = ""
        if eta is not None:
            minutes, seconds = int(eta // 60), int(eta % 60)
            left = self.tr("{minutes}:{seconds:02d} left").format(minutes=minutes, seconds=seconds)
        if self._task is not None and self._task.cancel_event.is_set():
            return  # "Cancelling…" stays until it has ended
        amount = self.tr("{done} of {total}").format(
            done=human_size(progress.done), total=human_size(progress.total)
        )
        if progress.speed <= 0:  # not known yet: no "51 MB/s · 0:00 left" after the first kilobyte
            self.status.setText(amount)
            return
        self.status.setText(
            self.tr("{amount} · {speed}/s · {left}").format(
                amount=amount, speed=human_size(progress.speed), left=left
            )
        )

    def _end(self) -> None:
        self.progress.setVisible(False)
        self.cancel_button.setVisible(False)
        self._task = None
        self.ended.emit()

    def _on_done(self, ref: str, folder: Any) -> None:
        self._end()
        self.status.setText(self.tr("{name} is on this computer: {folder}").format(name=ref, folder=folder))
        self.downloaded.emit(str(folder))

    def _on_failed(self, exc: object, detail: str) -> None:
        from desktop.core.hub.clients import DownloadCancelled

        self._end()
        if isinstance(exc, DownloadCancelled):
            self.status.setText(
                self.tr("Download cancelled. What was downloaded is kept: Download again resumes it.")
            )
            return
        from desktop.core.hub.access import GatedError

        show_error(self.status, exc)
        self.token_button.setVisible(isinstance(exc, GatedError))

    def open_token_settings(self) -> None:
        """Settings > Model sources, to enter the token a gated model asks for (kept in the keyring)."""
        from desktop.gui.dialogs.hub_settings_dialog import HubSettingsDialog

        self.token_dialog = HubSettingsDialog(self)
        self.token_dialog.open()


class DownloadDialog(QDialog):
    """A download in a small window of its own (a hub dataset from the data page)."""

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.resize(520, 140)
        self.panel = DownloadPanel(self)
        self.close_button = QPushButton(self.tr("Close"))
        self.close_button.clicked.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.panel)
        layout.addWidget(self.close_button)
        self.panel.downloaded.connect(lambda _folder: self.accept())

    def reject(self) -> None:
        self.panel.cancel()
        super().reject()
