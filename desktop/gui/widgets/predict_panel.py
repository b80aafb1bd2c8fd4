"""Predict on a file: pick a CSV, TSV, JSONL or Excel file, run the model over every row in the
background (progress bar, Cancel), and get the file back with the predictions added
(:func:`desktop.core.results.predict.predict_file`)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.core.system.errors import StudioError
from desktop.gui.app_support.workers import BackgroundTask
from desktop.gui.widgets.error_label import show_error
from desktop.gui.widgets.metric_text import column_name
from desktop.gui.widgets.progress_bar import ProgressBar
from desktop.shared_ui import error_text, shown

FILES = "*.csv *.tsv *.txt *.jsonl *.json *.xlsx *.parquet"


class PredictPanel(QWidget):
    """Runs a trained model over a file; :meth:`set_model` says which model."""

    predicted = Signal(object)
    """The predictions were written: the :class:`~desktop.core.results.predict.Prediction`."""
    failed = Signal(str)
    """Predicting failed or was cancelled: what the user is told."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model: Path | None = None
        self._task: BackgroundTask | None = None
        self.input_edit = QLineEdit()
        self.input_edit.setPlaceholderText(
            self.tr("A CSV, TSV, JSONL or Excel file with the rows to predict")
        )
        self.input_edit.editingFinished.connect(self._on_input_chosen)
        browse = QPushButton(self.tr("Browse…"))
        browse.clicked.connect(self._browse_input)
        pictures = QPushButton(self.tr("Folder…"))
        pictures.setToolTip(self.tr("A folder of pictures, for an image classifier: every picture in it"))
        pictures.clicked.connect(self._browse_pictures)
        self.column = QComboBox()
        self.column.setToolTip(self.tr("The column the model reads"))
        self.output_edit = QLineEdit()
        save_as = QPushButton(self.tr("Save as…"))
        save_as.clicked.connect(self._browse_output)
        self.start_button = QPushButton(self.tr("Predict"))
        self.start_button.setObjectName("primary")
        self.start_button.clicked.connect(self.start)
        self.cancel_button = QPushButton(self.tr("Cancel"))
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.setVisible(False)
        self.progress = ProgressBar()
        self.progress.setVisible(False)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.open_button = QPushButton(self.tr("Open folder"))
        self.open_button.setVisible(False)
        self.open_button.clicked.connect(self._open_folder)

        form = QFormLayout()
        row = QHBoxLayout()
        row.addWidget(self.input_edit, 1)
        row.addWidget(browse)
        row.addWidget(pictures)
        form.addRow(self.tr("File:"), row)
        form.addRow(self.tr("Column to read:"), self.column)
        out = QHBoxLayout()
        out.addWidget(self.output_edit, 1)
        out.addWidget(save_as)
        form.addRow(self.tr("Write to:"), out)
        buttons = QHBoxLayout()
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.progress, 1)
        layout = QVBoxLayout(self)
        about = QLabel(
            self.tr(
                "The file comes back with the prediction added to each row: the label and its "
                "probability, or the generated text. A CSV keeps its encoding (GBK stays GBK)."
            )
        )
        about.setWordWrap(True)  # unwrapped, it made the Export step scroll sideways at 1024 px
        layout.addWidget(about)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(self.status)
        layout.addWidget(self.open_button)
        layout.addStretch()
        self._update()

    def set_model(self, model: str | Path | None) -> None:
        """The run folder or model folder to predict with."""
        self.model = Path(model) if model else None
        self._update()

    def set_input(self, path: str | Path) -> None:
        """Choose the file to predict (fills the columns and proposes an output name)."""
        self.input_edit.setText(str(path))
        self._on_input_chosen()

    def _browse_input(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, self.tr("File to predict"), "", self.tr("Data ({files})").format(files=FILES)
        )
        if path:
            self.set_input(path)

    def _browse_pictures(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, self.tr("Folder of pictures to label"))
        if folder:
            self.set_input(folder)

    def _browse_output(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, self.tr("Write the predictions to"), self.output_edit.text(), "*.csv *.tsv *.jsonl *.xlsx"
        )
        if path:
            self.output_edit.setText(path)

    def _on_input_chosen(self) -> None:
        from desktop.core.data.images import is_image

        path = Path(self.input_edit.text().strip())
        self.column.clear()
        self.column.addItem(self.tr("(as trained)"), "")
        pictures = path.is_dir() or (path.is_file() and is_image(path.name))  # no columns to choose from
        self.column.setEnabled(not pictures)
        if path.is_file() and not pictures:
            from desktop.core.data.local_files import read_head

            try:
                for name in read_head(path, 5).columns:  # the first rows only: a moment
                    self.column.addItem(name, name)
            except StudioError as exc:
                self.status.setText(error_text(exc))
            from desktop.core.results.predict import default_output

            self.output_edit.setText(str(default_output(path)))
        elif pictures:  # a table of each one's label beside the folder (or the picture)
            from desktop.core.results.predict import default_output

            self.output_edit.setText(str(default_output(path)))
        self._update()

    def _update(self) -> None:
        running = self._task is not None
        ready = (
            self.model is not None and bool(self.input_edit.text().strip()) and bool(self.output_edit.text())
        )
        self.start_button.setEnabled(ready and not running)
        self.cancel_button.setVisible(running)
        self.progress.setVisible(running)

    def start(self) -> None:
        """Predict in the background."""
        if self._task is not None or self.model is None:
            return
        import threading

        from desktop.core.results.predict import predict_file
        from desktop.core.system import progress

        model, source = self.model, Path(self.input_edit.text().strip())
        out, column = Path(self.output_edit.text().strip()), self.column.currentData() or ""
        if out.exists():
            from PySide6.QtWidgets import QMessageBox

            answer = QMessageBox.question(
                self,
                self.tr("Replace the file?"),
                self.tr("{file} exists. Replace it?").format(file=out.name),
            )
            if answer != QMessageBox.StandardButton.Yes:
                return
        stop = threading.Event()

        def run() -> object:
            with progress.reporting(lambda share, what: task.report((share, what)), stop.is_set):
                return predict_file(model, source, out, column=column)

        task = self._task = BackgroundTask(run, self, stop)
        task.progressed.connect(self._on_progress)
        task.finished.connect(self._on_finished)
        task.failed.connect(self._on_failed)
        self.progress.setRange(0, 0)  # loading the model: no share to show yet
        self.status.setText(self.tr("Loading the model…"))
        self.open_button.setVisible(False)
        task.start()
        self._update()

    def cancel(self) -> None:
        """Stop predicting; nothing is written."""
        if self._task is not None:
            self._task.cancel()

    def is_running(self) -> bool:
        return self._task is not None

    def _on_progress(self, value: object) -> None:
        share, what = value
        self.progress.setRange(0, 1000)
        self.progress.setValue(int(share * 1000))
        self.status.setText(shown(what))

    def _on_finished(self, result: object) -> None:
        self._task = None
        notes = "\n".join(shown(note) for note in result.notes)
        added = self.tr(", ").join(column_name(name) for name in result.added)
        if result.listed and result.rows == 1:  # a picture alone
            said = self.tr("The picture is labelled; written to {file} with {added}.").format(
                file=result.out, added=added
            )
        elif result.listed:  # pictures of a folder: no column the user named
            said = self.tr("{done} of {rows} pictures labelled; written to {file} with {added}.").format(
                done=result.predicted, rows=result.rows, file=result.out, added=added
            )
        elif result.unread:
            said = self.tr(
                "{done} of {rows} rows predicted from column {column}; written to {file} with {added}."
            )
            said = said.format(
                done=result.predicted, rows=result.rows, column=result.column, file=result.out, added=added
            )
        else:
            said = self.tr(
                "{rows} rows predicted from column {column}; written to {file} with {added}."
            ).format(rows=result.rows, column=result.column, file=result.out, added=added)
        self.status.setText(said + (f"\n{notes}" if notes else ""))
        self.open_button.setVisible(True)
        self._update()
        self.predicted.emit(result)

    def _on_failed(self, exc: object, detail: str) -> None:
        self._task = None
        if isinstance(exc, StudioError | OSError):
            show_error(self.status, exc)
            text = error_text(exc)
        else:
            text = self.tr("Predicting failed: {error}").format(error=exc)
            self.status.setText(text)
        self._update()
        self.failed.emit(text)

    def _open_folder(self) -> None:
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(Path(self.output_edit.text()).parent)))
