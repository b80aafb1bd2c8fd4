"""The data of the data page: files or a hub dataset, the evaluation split, and the rows' check."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
)

from desktop.core.data.preview import Preview
from desktop.core.settings.config import DATA_SUFFIXES, HUB_ID, RunConfig
from desktop.core.settings.config_sections import IMAGE_TASKS
from desktop.gui.widgets.field_error import error_label, show_error
from desktop.gui.widgets.progress_bar import ProgressBar
from desktop.shared_ui import Key, Settings, shown


class DatasetPickerWidget(QGroupBox):
    """Chooses the data files or hub dataset and the evaluation split; shows how the check of every
    row goes, what is wrong with the data, and what the data holds. It reads the run config through
    ``config`` and leaves writing it to its owner.

    Args:
        settings: Where the last data folder is remembered (``None``: nowhere).
        config: The run config being edited.
    """

    data_changed = Signal(list, str)
    """The user chose other data: the files (absolute where they exist) and the hub dataset id (one of
    the two is empty)."""
    split_changed = Signal()
    """The user changed the evaluation share or its seed; read :meth:`split`."""
    dataset_downloaded = Signal()
    """The hub dataset was downloaded: it can be read now."""
    sample_requested = Signal()
    """The user asked to load the bundled sample."""
    cancel_requested = Signal()
    """The user asked to stop checking every row."""
    validity_changed = Signal()
    """The data's problem changed; read :meth:`problem`."""

    def __init__(self, settings: Settings | None, config: Callable[[], RunConfig]) -> None:
        super().__init__(self.tr("Data"))
        self._settings = settings
        self._config = config
        self._problem = self.tr("Choose a data file or a hub dataset.")
        self._check_progress: tuple[float, str] | None = None  # the full check's last report

        self.data_edit = QLineEdit()
        self.data_edit.setPlaceholderText(
            self.tr("A CSV, TSV, JSON(L), Parquet, TXT or Excel file, or a hub dataset id")
        )
        self.data_edit.editingFinished.connect(self._on_data_edit_editing_finished)
        self.data_browse = QPushButton(self.tr("File…"))
        self.data_browse.clicked.connect(self._browse_data)
        self.folder_browse = QPushButton(self.tr("Folder…"))
        self.folder_browse.setToolTip(
            self.tr("A folder with one folder of pictures per class, named after the class")
        )
        self.folder_browse.clicked.connect(self._browse_folder)
        self.folder_browse.setVisible(False)
        self.data_download = QPushButton(self.tr("Download"))
        self.data_download.setVisible(False)
        self.data_download.clicked.connect(self.download_dataset)
        self.download_dialog = None
        self.data_error = error_label()
        self.busy = ProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumHeight(6)
        self.busy.setTextVisible(False)
        self.busy.setVisible(False)
        self.cancel_check = QPushButton(self.tr("Cancel"))
        self.cancel_check.setToolTip(
            self.tr("Stop checking every row; training checks them all before it starts")
        )
        self.cancel_check.setVisible(False)
        self.cancel_check.clicked.connect(self.cancel_requested)
        self.sample_button = QPushButton(self.tr("Try the sample"))
        self.sample_button.setToolTip(self.tr("Load short English reviews and a small offline English model"))
        self.sample_button.clicked.connect(self.sample_requested)

        self.fraction_spin = QDoubleSpinBox(suffix=" %", decimals=0, minimum=0, maximum=50, singleStep=5)
        self.fraction_spin.setToolTip(
            self.tr("Share of the rows held out to measure the model; 0 = no evaluation")
        )
        self.fraction_spin.valueChanged.connect(self.split_changed)
        self.seed_spin = QSpinBox(minimum=0, maximum=2**31 - 1)
        self.seed_spin.valueChanged.connect(self.split_changed)
        self.split_info = QLabel()
        self.split_info.setObjectName("hint")
        self.split_info.setWordWrap(True)
        self.notes_label = QLabel()  # warnings about the data: unknown tokens, merged labels, rows left out
        self.notes_label.setObjectName("warning")
        self.notes_label.setWordWrap(True)
        self.notes_label.setVisible(False)

        form = QFormLayout(self)
        data_row = QHBoxLayout()
        data_row.addWidget(self.data_edit)
        data_row.addWidget(self.data_download)
        data_row.addWidget(self.folder_browse)
        data_row.addWidget(self.data_browse)
        data_row.addWidget(self.sample_button)
        form.addRow(self.tr("Dataset:"), data_row)
        busy_row = QHBoxLayout()
        busy_row.addWidget(self.busy, 1)
        busy_row.addWidget(self.cancel_check)
        form.addRow("", busy_row)
        form.addRow("", self.data_error)
        split_row = QHBoxLayout()
        split_row.addWidget(self.fraction_spin)
        split_row.addWidget(QLabel(self.tr("seed")))
        split_row.addWidget(self.seed_spin)
        split_row.addStretch(1)
        form.addRow(self.tr("Evaluation:"), split_row)
        form.addRow("", self.split_info)
        form.addRow("", self.notes_label)

    def show_config(self, config: RunConfig) -> None:
        """Show the data and the split of ``config`` (no signal: nothing was chosen)."""
        self.data_edit.setText(config.data.hub_id or "; ".join(config.data.files))
        for spin, value in (
            (self.fraction_spin, config.validation.fraction * 100),
            (self.seed_spin, config.validation.seed),
        ):
            spin.blockSignals(True)
            spin.setValue(value)
            spin.blockSignals(False)

    def show_task(self, task: str) -> None:
        """Offer what the task reads: a folder of class folders for pictures, files otherwise."""
        self.folder_browse.setVisible(task == "image-classification")
        self.sample_button.setVisible(task not in IMAGE_TASKS)  # the sample is English reviews
        self.data_edit.setPlaceholderText(
            self.tr("A folder of class folders, a table of picture paths and labels, or a hub dataset id")
            if task == "image-classification"
            else self.tr("A table of picture paths, questions and answers, or a hub dataset id")
            if task == "vision-chat"
            else self.tr("A CSV, TSV, JSON(L), Parquet, TXT or Excel file, or a hub dataset id")
        )

    def split(self) -> tuple[float, int]:
        """The evaluation share (0 to 0.5) and its seed, as set now."""
        return self.fraction_spin.value() / 100, self.seed_spin.value()

    def problem(self) -> str:
        """Why the data cannot be used yet (also while it is being read); empty when it can."""
        return self._problem

    # ------------------------------------------------------------------ user changes

    def _on_data_edit_editing_finished(self) -> None:
        text = self.data_edit.text().strip()
        parts = [p.strip() for p in text.split(";") if p.strip()]
        files, hub_id = [], ""
        if parts and all(Path(p).exists() for p in parts):
            files = [str(Path(p).resolve()) for p in parts]
        elif len(parts) == 1 and HUB_ID.match(parts[0]) and not Path(parts[0]).suffix:
            hub_id = parts[0]
        else:
            files = parts
        self.data_changed.emit(files, hub_id)
        self.data_download.setVisible(self._dataset_missing())

    def _dataset_missing(self) -> bool:
        hub_id = self._config().data.hub_id
        if not hub_id:
            return False
        from desktop.core.hub.clients import local_copy

        return local_copy(hub_id, dataset=True) is None

    def download_dataset(self) -> None:
        """Download the hub dataset as its own step (a small window with progress and Cancel)."""
        from desktop.core.hub import sources
        from desktop.gui.widgets.download_panel import DownloadDialog

        hub_id = self._config().data.hub_id
        self.download_dialog = DownloadDialog(self.tr("Download {dataset}").format(dataset=hub_id), self)
        self.download_dialog.panel.downloaded.connect(self._on_download_dialog_downloaded)
        self.download_dialog.open()
        self.download_dialog.panel.start(hub_id, sources.resolve(), dataset=True)

    def _on_download_dialog_downloaded(self, _folder: str) -> None:
        self.data_download.setVisible(self._dataset_missing())
        self.dataset_downloaded.emit()

    def _browse_data(self) -> None:
        patterns = " ".join(f"*{s}" for s in DATA_SUFFIXES)
        path, _ = QFileDialog.getOpenFileName(
            self,
            self.tr("Choose a data file"),
            self._settings.text(Key.LAST_DATA_FOLDER) if self._settings else "",
            self.tr("Data files ({patterns})").format(patterns=patterns),
        )
        if path:
            if self._settings:
                self._settings.set_text(Key.LAST_DATA_FOLDER, str(Path(path).parent))
            self.data_edit.setText(path)
            self._on_data_edit_editing_finished()

    def _browse_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(
            self,
            self.tr("Choose the folder of class folders"),
            self._settings.text(Key.LAST_DATA_FOLDER) if self._settings else "",
        )
        if path:
            if self._settings:
                self._settings.set_text(Key.LAST_DATA_FOLDER, str(Path(path).parent))
            self.data_edit.setText(path)
            self._on_data_edit_editing_finished()

    # ------------------------------------------------------------------ what the check finds

    def show_problem(self, text: str, shown: bool = True) -> None:
        """Make ``text`` the data's problem; shown under the field unless ``shown`` is false (nothing
        chosen yet, or still being read: Next waits all the same)."""
        self._problem = text
        show_error(self.data_error, text if shown else "")
        if text:
            self.split_info.setText("")
        self.validity_changed.emit()

    def ask_for_data(self) -> None:
        """Nothing chosen: Next asks for data, no error is shown."""
        self.show_problem(self.tr("Choose a data file or a hub dataset."), shown=False)

    def show_reading(self) -> None:
        """The data is being read: Next waits; the busy bar runs until the first block is read."""
        self.show_problem(self.tr("Reading the data…"), shown=False)
        self.busy.setVisible(True)
        self.busy.setRange(0, 0)

    def forget_check_progress(self) -> None:
        """A new check begins: the last one's progress is no longer news."""
        self._check_progress = None

    def show_check_share(self, value: tuple[float, str]) -> None:
        """The full check's progress, ``(share done, what it does)``, on the busy bar."""
        self._check_progress = value
        self.busy.setRange(0, 1000)
        self.busy.setValue(int(value[0] * 1000))
        self.cancel_check.setVisible(True)

    def show_check_progress(self) -> None:
        """How far the full check is, under the first rows (it may be ahead of them)."""
        if self._check_progress is None:
            self.split_info.setText(self.tr("Checking every row…"))
            return
        share, what = self._check_progress
        self.split_info.setText(
            self.tr("Checking every row: {what}, {percent}%…").format(
                what=shown(what), percent=int(share * 100)
            )
        )

    def show_checked(self) -> None:
        """The check of every row has ended (its result or its failure is shown next)."""
        self.busy.setVisible(False)
        self.cancel_check.setVisible(False)

    def show_cancelled(self) -> None:
        self.split_info.setText(
            self.tr("Not every row was checked (cancelled): training checks them all before it starts.")
        )

    def show_split(self, result: Preview) -> None:
        """The rows for training and evaluation, and each label's share of them."""
        split = self.tr("%n row(s) for training, {eval} for evaluation", "", result.num_train).format(
            eval=result.num_eval
        )
        if result.label_counts:
            split += "\n" + self._labels_line(result.label_counts)
        self.split_info.setText(split)

    def _labels_line(self, counts: dict[str, dict[str, int]]) -> str:
        """Rows per label, training / evaluation, the commonest first (a dozen at most)."""
        train, eval_ = counts.get("train", {}), counts.get("eval", {})
        labels = sorted({*train, *eval_}, key=lambda label: -train.get(label, 0))
        shown = [f"{label} {train.get(label, 0)}/{eval_.get(label, 0)}" for label in labels[:12]]
        if len(labels) > 12:
            shown.append("…")
        return self.tr("Labels (training/evaluation): {labels}").format(labels=" · ".join(shown))

    def show_notes(self, notes: list[str]) -> None:
        """Warnings about the data: unknown tokens, merged labels, rows left out."""
        self.notes_label.setText("\n".join(shown(note) for note in notes))
        self.notes_label.setVisible(bool(notes))
