"""Step 2: task, model and dataset, with a preview, the column mapping and token statistics."""

from __future__ import annotations

import contextlib
import copy
import importlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from desktop.core.data.columns import CAUSAL_FORMATS, causal_format, roles_for
from desktop.core.data.preview import Preview, preview, preview_head
from desktop.core.helper_process import TokenReport
from desktop.core.hub.models import describe_local_model
from desktop.core.settings.config import DATA_SUFFIXES, HUB_ID, TASKS, Columns, RunConfig
from desktop.core.system.errors import StudioError, human_size
from desktop.core.system.lazy import imported
from desktop.gui.app_support.workers import BackgroundTask, run_in_background
from desktop.gui.pages.base import WizardPage, error_label, show_error
from desktop.gui.widgets.fit_text import badge_text
from desktop.gui.widgets.progress_bar import ProgressBar
from desktop.shared_ui import Key, Settings, sentences, shown

PREVIEW_ROWS = 50
HISTOGRAM_IDLE_S = 1.0
"""The histogram is made ahead of need once the user has left the mouse and keys this long."""
HISTOGRAM_RETRY_MS = 250
HEAD_FIRST_BYTES = 4 << 20
"""Data of this size or more (or on the hub) shows its first rows before every row is checked."""


class DataPage(WizardPage):
    """Chooses the task, the model and the data, and maps the data's columns."""

    head_loaded = Signal()
    """The first rows and the guessed mapping are shown; every row is still being checked."""
    preview_loaded = Signal()
    """A preview of the data arrived (or its error)."""
    token_stats_loaded = Signal()
    """Token statistics arrived (or their error)."""
    sample_requested = Signal()
    """The user asked to load the bundled sample."""

    def __init__(self, settings: Settings | None = None) -> None:
        super().__init__()
        self._settings = settings
        self.title = self.tr("Model & data")
        self.subtitle = self.tr("What to train, and on which examples.")
        self._config = RunConfig()
        self._preview: Preview | None = None
        self._table_shown: tuple | None = None  # the columns and rows in the table
        self._mapping_rows: tuple | None = None  # the roles and columns the mapping's combos offer
        self._data_problem = self.tr("Choose a data file or a hub dataset.")
        self._model_problem = ""
        self._download_problem = ""  # a hub model not downloaded yet
        self._model_touched = False  # no error before the user has touched the field
        self._stats: TokenReport | None = None
        self._generation = 0
        self._fit_asked = 0  # the fit badge's requests: only the latest one's answer is shown
        self._checked = 0  # the last load whose every row was checked (its head is then stale)
        self._tasks: set[BackgroundTask] = set()
        self._debounce = QTimer(self, singleShot=True, interval=300)
        self._debounce.timeout.connect(self._load_preview)

        self.task_combo = QComboBox()
        names = {
            "classification": self.tr("Text classification"),
            "causal-lm": self.tr("Causal-LM / chat fine-tuning"),
            "seq2seq": self.tr("Sequence-to-sequence"),
        }
        for task in TASKS:
            self.task_combo.addItem(names[task], task)
        self.task_combo.currentIndexChanged.connect(self._on_task_changed)

        self.model_edit = QLineEdit()
        self.model_edit.setPlaceholderText(self.tr("Hub id such as bert-base-chinese, or a local folder"))
        self.model_edit.editingFinished.connect(self._on_model_changed)
        self.model_browse = QPushButton(self.tr("Folder…"))
        self.model_browse.clicked.connect(self._browse_model)
        self.model_hub = QPushButton(self.tr("Browse models…"))
        self.model_hub.clicked.connect(self.open_browser)
        self.model_download = QPushButton(self.tr("Download"))
        self.model_download.setVisible(False)
        self.model_download.clicked.connect(self.download_model)
        self.browser = None  # the model browser, made when first opened
        self._gpu_free: int | None = None
        self.model_info = QLabel()
        self.model_info.setObjectName("hint")
        self.model_info.setWordWrap(True)
        self.model_error = error_label()
        self.fit_label = QLabel()  # the fit badge of the chosen model, computed in the background
        self.fit_label.setObjectName("hint")
        self.fit_label.setWordWrap(True)

        self.data_edit = QLineEdit()
        self.data_edit.setPlaceholderText(
            self.tr("A CSV, TSV, JSON(L), Parquet, TXT or Excel file, or a hub dataset id")
        )
        self.data_edit.editingFinished.connect(self._on_data_changed)
        self.data_browse = QPushButton(self.tr("File…"))
        self.data_browse.clicked.connect(self._browse_data)
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
        self.cancel_check.clicked.connect(self._cancel_check)
        self._check_stop: threading.Event | None = None
        self._check_progress: tuple[float, str] | None = None  # the full check's last report
        self.sample_button = QPushButton(self.tr("Try the sample"))
        self.sample_button.setToolTip(self.tr("Load short English reviews and a small offline English model"))
        self.sample_button.clicked.connect(self.sample_requested)

        self.fraction_spin = QDoubleSpinBox(suffix=" %", decimals=0, minimum=0, maximum=50, singleStep=5)
        self.fraction_spin.setToolTip(
            self.tr("Share of the rows held out to measure the model; 0 = no evaluation")
        )
        self.fraction_spin.valueChanged.connect(self._schedule_preview)
        self.seed_spin = QSpinBox(minimum=0, maximum=2**31 - 1)
        self.seed_spin.valueChanged.connect(self._schedule_preview)
        self.split_info = QLabel()
        self.split_info.setObjectName("hint")
        self.split_info.setWordWrap(True)

        self.format_combo = QComboBox()
        formats = {
            "chat": self.tr("Chat messages"),
            "instruction": self.tr("Instruction / input / output"),
            "prompt": self.tr("Prompt / completion"),
            "text": self.tr("Plain text"),
        }
        for fmt in CAUSAL_FORMATS:
            self.format_combo.addItem(formats[fmt], fmt)
        self.format_combo.activated.connect(self._on_format_changed)
        self.mapping_form = QFormLayout()
        self.mapping_combos: dict[str, QComboBox] = {}
        self.mapping_error = error_label()
        self.mapping_note = QLabel()
        self.mapping_note.setObjectName("hint")
        self.mapping_note.setWordWrap(True)
        self.notes_label = QLabel()  # warnings about the data: unknown tokens, merged labels, rows left out
        self.notes_label.setObjectName("warning")
        self.notes_label.setWordWrap(True)
        self.notes_label.setVisible(False)

        self.table = QTableWidget()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.stats_label = QLabel(self.tr("Token lengths appear once the model and data are loaded."))
        self.stats_label.setObjectName("hint")
        self.stats_label.setWordWrap(True)
        self.histogram = None  # made ahead of need or with the first statistics: pyqtgraph is slow to import
        self.idle_s: Callable[[], float] = lambda: HISTOGRAM_IDLE_S
        """Seconds since the user's last input (the window sets it), for :meth:`prepare_histogram`."""
        self._histogram_later = QTimer(self, singleShot=True, interval=HISTOGRAM_RETRY_MS)
        self._histogram_later.timeout.connect(self.prepare_histogram)
        self._build_layout()

    def _build_layout(self) -> None:
        source = QGroupBox(self.tr("Task and model"))
        form = QFormLayout(source)
        form.addRow(self.tr("Task:"), self.task_combo)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model_edit)
        model_row.addWidget(self.model_hub)
        model_row.addWidget(self.model_browse)
        form.addRow(self.tr("Model:"), model_row)
        info_row = QHBoxLayout()
        info_row.addWidget(self.model_info, 1)
        info_row.addWidget(self.model_download)
        form.addRow("", info_row)
        form.addRow("", self.fit_label)
        form.addRow("", self.model_error)

        data = QGroupBox(self.tr("Data"))
        data_form = QFormLayout(data)
        data_row = QHBoxLayout()
        data_row.addWidget(self.data_edit)
        data_row.addWidget(self.data_download)
        data_row.addWidget(self.data_browse)
        data_row.addWidget(self.sample_button)
        data_form.addRow(self.tr("Dataset:"), data_row)
        busy_row = QHBoxLayout()
        busy_row.addWidget(self.busy, 1)
        busy_row.addWidget(self.cancel_check)
        data_form.addRow("", busy_row)
        data_form.addRow("", self.data_error)
        split_row = QHBoxLayout()
        split_row.addWidget(self.fraction_spin)
        split_row.addWidget(QLabel(self.tr("seed")))
        split_row.addWidget(self.seed_spin)
        split_row.addStretch(1)
        data_form.addRow(self.tr("Evaluation:"), split_row)
        data_form.addRow("", self.split_info)
        data_form.addRow("", self.notes_label)

        mapping = QGroupBox(self.tr("Columns"))
        mapping_layout = QVBoxLayout(mapping)
        self.format_row = QFormLayout()
        self.format_row.addRow(self.tr("Format:"), self.format_combo)
        mapping_layout.addLayout(self.format_row)
        mapping_layout.addLayout(self.mapping_form)
        mapping_layout.addWidget(self.mapping_error)
        mapping_layout.addWidget(self.mapping_note)
        mapping_layout.addStretch()

        stats = QGroupBox(self.tr("Token lengths"))
        stats_layout = QVBoxLayout(stats)
        stats_layout.addWidget(self.stats_label)
        stats_layout.addStretch()
        self.stats_layout = stats_layout

        self.table.setMinimumHeight(110)
        mapping.setMaximumHeight(230)
        stats.setMaximumHeight(230)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(source, 0, 0)
        grid.addWidget(data, 0, 1)
        grid.addWidget(self.table, 1, 0, 1, 2)
        grid.addWidget(mapping, 2, 0)
        grid.addWidget(stats, 2, 1)
        grid.setRowStretch(1, 1)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1)

    # ------------------------------------------------------------------ config in and out

    def load_config(self, config: RunConfig) -> None:
        self._config = copy.deepcopy(config)
        self.task_combo.blockSignals(True)
        self.task_combo.setCurrentIndex(max(0, TASKS.index(config.task) if config.task in TASKS else 0))
        self.task_combo.blockSignals(False)
        self.model_edit.setText(config.model.name)
        data = config.data.hub_id or "; ".join(config.data.files)
        self.data_edit.setText(data)
        for spin, value in (
            (self.fraction_spin, config.validation.fraction * 100),
            (self.seed_spin, config.validation.seed),
        ):
            spin.blockSignals(True)
            spin.setValue(value)
            spin.blockSignals(False)
        self._check_model()
        self._load_preview()

    def apply_to(self, config: RunConfig) -> None:
        config.task = self._config.task
        config.model = copy.deepcopy(self._config.model)
        config.data = copy.deepcopy(self._config.data)
        config.columns = copy.deepcopy(self._config.columns)
        config.validation = copy.deepcopy(self._config.validation)

    def problem(self) -> str:
        first = self._model_problem or self._data_problem or self.mapping_error.text()
        return first or self._download_problem

    def train_rows(self) -> int:
        """Training rows in the data as loaded (0 before a preview)."""
        return self._preview.num_train if self._preview is not None else 0

    def set_max_length(self, limit: int) -> None:
        """Count the texts cut at ``limit`` tokens (the max length now set on Memory & speed)."""
        if limit != self._config.training.max_length:
            self._config.training.max_length = limit
            if self._stats is not None:
                self._show_stats(self._stats)

    def shutdown(self) -> None:
        """Cancel background loading (the app waits for it at most briefly)."""
        for task in list(self._tasks):
            task.cancel()

    # ------------------------------------------------------------------ user changes

    def _on_task_changed(self) -> None:
        self._config.task = self.task_combo.currentData()
        self._config.columns = Columns()
        self._check_model()  # a model that fits one task may not fit another
        self.mapping_note.setText(
            self.tr("The columns are guessed again for {task}; check them below.").format(
                task=self.task_combo.currentText()
            )
        )
        self._schedule_preview()

    def _on_model_changed(self) -> None:
        name = self.model_edit.text().strip()
        self._model_touched = True
        if name != self._config.model.name:
            self._config.model.name = name
            self._check_model()
            self._load_token_stats()
            if name and self._is_folder(name) and not self._model_problem:
                from desktop.core.hub.search import remember_folder

                with contextlib.suppress(OSError):  # the browser's "On this computer" lists it
                    remember_folder(name)

    def _on_data_changed(self) -> None:
        text = self.data_edit.text().strip()
        parts = [p.strip() for p in text.split(";") if p.strip()]
        self._config.data.files, self._config.data.hub_id = [], ""
        if parts and all(Path(p).exists() for p in parts):
            self._config.data.files = [str(Path(p).resolve()) for p in parts]
        elif len(parts) == 1 and HUB_ID.match(parts[0]) and not Path(parts[0]).suffix:
            self._config.data.hub_id = parts[0]
        else:
            self._config.data.files = parts
        self._config.columns = Columns()
        self.data_download.setVisible(self._dataset_missing())
        self._schedule_preview()

    def _dataset_missing(self) -> bool:
        if not self._config.data.hub_id:
            return False
        from desktop.core.hub.clients import local_copy

        return local_copy(self._config.data.hub_id, dataset=True) is None

    def download_dataset(self) -> None:
        """Download the hub dataset as its own step (a small window with progress and Cancel)."""
        from desktop.core.hub import sources
        from desktop.gui.widgets.download_panel import DownloadDialog

        hub_id = self._config.data.hub_id
        self.download_dialog = DownloadDialog(self.tr("Download {dataset}").format(dataset=hub_id), self)
        self.download_dialog.panel.downloaded.connect(lambda _folder: self._on_dataset_downloaded())
        self.download_dialog.open()
        self.download_dialog.panel.start(hub_id, sources.resolve(), dataset=True)

    def _on_dataset_downloaded(self) -> None:
        self.data_download.setVisible(self._dataset_missing())
        self._config.columns = Columns()
        self._schedule_preview()

    def _last_folder(self, key: Key) -> str:
        return self._settings.text(key) if self._settings else ""

    def _remember_folder(self, key: Key, path: Path) -> None:
        if self._settings:
            self._settings.set_text(key, str(path))

    def set_gpu_free(self, free: int | None) -> None:
        """Free memory of the NVIDIA GPU (``None`` without one), for the browser's fit badges."""
        self._gpu_free = free

    def open_browser(self) -> None:
        """The model browser: recommended, search, on this computer; a choice fills the model box."""
        from desktop.gui.dialogs.model_browser_dialog import ModelBrowser
        from desktop.gui.pages.options_page import _free_ram

        self.browser = ModelBrowser(
            copy.deepcopy(self._config), self._gpu_free, _free_ram(), self, rows=self.train_rows() or None
        )
        self.browser.chosen.connect(self._on_browser_choice)
        self.browser.downloaded.connect(lambda folder: self._check_model())
        self.browser.open()

    def _on_browser_choice(self, ref: str) -> None:
        self.model_edit.setText(ref)
        self._on_model_changed()

    def needs_download(self) -> bool:
        """Whether the model is a hub id that is not complete on this computer yet."""
        name = self._config.model.name.strip()
        if not name or name.startswith("bundled:") or Path(name).expanduser().is_dir():
            return False
        from desktop.core.hub.access import complete_in_cache

        return not complete_in_cache(name, self._config.model.revision)

    def download_model(self) -> None:
        """Download the chosen hub model as its own step (in the browser, with progress and Cancel)."""
        self.open_browser()
        self.browser.download(self._config.model.name.strip())

    def _browse_model(self) -> None:
        current = Path(self.model_edit.text())
        start = str(current) if current.is_dir() else self._last_folder(Key.LAST_MODEL_FOLDER)
        folder = QFileDialog.getExistingDirectory(self, self.tr("Choose a model folder"), start)
        if folder:
            self._remember_folder(Key.LAST_MODEL_FOLDER, Path(folder).parent)
            self.model_edit.setText(folder)
            self._on_model_changed()

    def _browse_data(self) -> None:
        patterns = " ".join(f"*{s}" for s in DATA_SUFFIXES)
        path, _ = QFileDialog.getOpenFileName(
            self,
            self.tr("Choose a data file"),
            self._last_folder(Key.LAST_DATA_FOLDER),
            self.tr("Data files ({patterns})").format(patterns=patterns),
        )
        if path:
            self._remember_folder(Key.LAST_DATA_FOLDER, Path(path).parent)
            self.data_edit.setText(path)
            self._on_data_changed()

    def _on_format_changed(self) -> None:
        fmt = self.format_combo.currentData()
        required, optional = CAUSAL_FORMATS[fmt]
        self._config.columns = Columns()
        self._build_mapping(required, optional, {})
        self._set_problem_for_mapping()

    def _on_mapping_changed(self) -> None:
        values = {role: combo.currentData() or "" for role, combo in self.mapping_combos.items()}
        self._config.columns = Columns(**values)
        self._schedule_preview()

    # ------------------------------------------------------------------ model

    def _check_model(self) -> None:
        from desktop.core.data.checks import check_model_folder

        problems = [p.message for p in self._config.validate() if p.field == "model.name"]
        if not problems:
            try:  # tokenizer files and the fit to the task, from the folder's files (quick)
                check_model_folder(self._config)
            except StudioError as exc:
                problems = [f"{shown(exc.message)}\n{shown(exc.hint)}".strip()]
        self._model_problem = problems[0] if problems else ""
        name = self._config.model.name
        show_error(self.model_error, self._model_problem if name or self._model_touched else "")
        self.model_info.setText("")
        if not problems and Path(name).expanduser().is_dir():
            try:
                info = describe_local_model(name)
            except StudioError as exc:
                self._model_problem = exc.message
                show_error(self.model_error, exc.message)
            else:
                params = f"{info.num_parameters / 1e6:.1f} M" if info.num_parameters else "?"
                self.model_info.setText(
                    self.tr("{arch} ({type}), {params} parameters").format(
                        arch=info.architecture, type=info.model_type, params=params
                    )
                )
        elif not problems and name.startswith("bundled:"):
            self.model_info.setText(
                self.tr("A small pretrained model that ships with the app (works offline).")
            )
        missing = not problems and self.needs_download()
        self._download_problem = ""
        self.model_download.setVisible(missing)
        if missing:
            self._download_problem = self.tr(
                "Download the model before training: it is not on this computer yet."
            )
            self.model_info.setText(
                self.tr(
                    "Not on this computer yet. Download it here (with progress and Cancel); training starts "
                    "from the downloaded copy, without the network."
                )
            )
        elif not problems and name and not name.startswith("bundled:") and not self._is_folder(name):
            self.model_info.setText(self.tr("On this computer (downloaded): training needs no network."))
        self._update_fit(problems)
        self.validity_changed.emit()

    @staticmethod
    def _is_folder(name: str) -> bool:
        return Path(name).expanduser().is_dir()

    def _update_fit(self, problems: list[str]) -> None:
        """The fit badge of the chosen model for this computer, from its config.json (background)."""
        self.fit_label.setText("")
        name = self._config.model.name.strip()
        if problems or not name:
            return
        from desktop.core.hub.models import resolve
        from desktop.gui.pages.options_page import _free_ram

        config, gpu_free = copy.deepcopy(self._config), self._gpu_free
        rows = self.train_rows()

        def work() -> Any:
            from desktop.core.helper_process import model_fit
            from desktop.core.hub.fit import fetch_config

            ram = _free_ram()  # here: psutil's first import takes 0.1 s
            return model_fit(fetch_config(resolve(config.model)), config, gpu_free, ram, rows or None)

        self._fit_asked += 1
        asked = self._fit_asked

        def done(result: Any) -> None:
            if asked != self._fit_asked:
                return  # asked again meanwhile (another model, the rows now known): that answer counts
            where = self.tr("this GPU") if result.on_gpu else self.tr("RAM (no NVIDIA GPU)")
            text = self.tr(
                "Fit here: {badge}. Needs about {need} with the current Memory & speed options; "
                "{have} free in {where}."
            )
            text = text.format(
                badge=badge_text(result.badge),
                need=human_size(result.needed),
                have=human_size(result.available),
                where=where,
            )
            if result.epoch_s:  # no NVIDIA GPU: the time is what the user needs to know
                per_epoch = self.tr("Roughly {minutes:.0f} min per epoch on this CPU.")
                text = sentences(text, per_epoch.format(minutes=max(1.0, result.epoch_s / 60)))
            self.fit_label.setText(text)

        self._run(work, done, lambda exc: None)  # no badge when the config cannot be had: not an error

    # ------------------------------------------------------------------ preview

    def _schedule_preview(self) -> None:
        self._config.validation.fraction = self.fraction_spin.value() / 100
        self._config.validation.seed = self.seed_spin.value()
        self._debounce.start()

    def _run(self, function: Any, on_done: Any, on_failed: Any) -> None:
        task = BackgroundTask(function, self)
        self._tasks.add(task)
        task.finished.connect(lambda result, t=task: (self._tasks.discard(t), on_done(result)))
        task.failed.connect(lambda exc, detail, t=task: (self._tasks.discard(t), on_failed(exc)))
        task.start()

    def _load_preview(self) -> None:
        self._generation += 1
        self._check_progress = None
        generation, config = self._generation, copy.deepcopy(self._config)
        problems = [p.message for p in config.validate() if p.field.startswith(("data", "validation"))]
        if not config.data.files and not config.data.hub_id:
            self._clear_data()
            self._show_data_problem(self.tr("Choose a data file or a hub dataset."), shown=False)
            return
        if problems:
            self._clear_data()
            self._show_data_problem(problems[0])
            return
        # A new load clears the last one's error (Next waits for the result).
        self._show_data_problem(self.tr("Reading the data…"), shown=False)
        self.busy.setVisible(True)
        # The first rows and the mapping in a moment, however large the file; every row is checked
        # meanwhile, and that result replaces them (a large file: seconds later). A small file is
        # checked whole as fast: read once (a second reading thread took the window's turns).
        if _local_bytes(config.data.files) >= HEAD_FIRST_BYTES:
            self._run(
                lambda: preview_head(config, num_rows=PREVIEW_ROWS),
                lambda result: self._on_head(generation, result),
                lambda exc: None,  # the full check says what is wrong
            )
        if self._check_stop is not None:
            self._check_stop.set()  # the check of the data before is of no use now
        stop = self._check_stop = threading.Event()

        def check_all() -> Preview:
            from desktop.core.system import progress

            with progress.reporting(lambda share, what: task.report((share, what)), stop.is_set):
                return preview(config, num_rows=PREVIEW_ROWS, schedule=False)

        task = BackgroundTask(check_all, self, stop)
        self._tasks.add(task)
        task.progressed.connect(lambda value: self._on_check_progress(generation, value))
        task.finished.connect(
            lambda result, t=task: (self._tasks.discard(t), self._on_preview(generation, result))
        )
        task.failed.connect(
            lambda exc, detail, t=task: (self._tasks.discard(t), self._on_preview_failed(generation, exc))
        )
        self.busy.setRange(0, 0)  # until the first block is read
        task.start()

    def _on_check_progress(self, generation: int, value: tuple) -> None:
        if generation != self._generation:
            return
        self._check_progress = value
        self.busy.setRange(0, 1000)
        self.busy.setValue(int(value[0] * 1000))
        self.cancel_check.setVisible(True)
        if self._preview is not None and not self._preview.complete:
            self._show_check_progress()

    def _show_check_progress(self) -> None:
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

    def _cancel_check(self) -> None:
        """Stop the full check; the first rows stay shown and training checks every row at Start."""
        if self._check_stop is not None:
            self._check_stop.set()

    def _on_head(self, generation: int, result: Preview | None) -> None:
        if result is None or generation != self._generation or self._checked == generation:
            return
        self._preview = result
        self._config.columns = result.guess.columns
        self._fill_table(result)
        required, optional = roles_for(self._config.task, result.guess.columns)
        self._build_mapping(required, optional, result.guess.found_by)
        self._show_check_progress()
        self.head_loaded.emit()

    def _on_preview(self, generation: int, result: Preview) -> None:
        if generation != self._generation:
            return
        self._checked = generation
        self.busy.setVisible(False)
        self.cancel_check.setVisible(False)
        self._preview = result
        self._config.columns = result.guess.columns
        self._show_notes(result.notes)
        self._fill_table(result)
        required, optional = roles_for(self._config.task, result.guess.columns)
        self._build_mapping(required, optional, result.guess.found_by)
        split = self.tr("%n row(s) for training, {eval} for evaluation", "", result.num_train).format(
            eval=result.num_eval
        )
        if result.label_counts:
            split += "\n" + self._labels_line(result.label_counts)
        self.split_info.setText(split)
        self._show_data_problem("", shown=True)
        self._set_problem_for_mapping()
        self.preview_loaded.emit()
        self._load_token_stats()

    def _labels_line(self, counts: dict[str, dict[str, int]]) -> str:
        """Rows per label, training / evaluation, the commonest first (a dozen at most)."""
        train, eval_ = counts.get("train", {}), counts.get("eval", {})
        labels = sorted({*train, *eval_}, key=lambda label: -train.get(label, 0))
        shown = [f"{label} {train.get(label, 0)}/{eval_.get(label, 0)}" for label in labels[:12]]
        if len(labels) > 12:
            shown.append("…")
        return self.tr("Labels (training/evaluation): {labels}").format(labels=" · ".join(shown))

    def _on_preview_failed(self, generation: int, exc: object) -> None:
        if generation != self._generation:
            return
        self._checked = generation
        self.busy.setVisible(False)
        self.cancel_check.setVisible(False)
        from desktop.core.system.progress import Cancelled

        if isinstance(exc, Cancelled) and self._preview is not None:  # the first rows stay
            self.split_info.setText(
                self.tr("Not every row was checked (cancelled): training checks them all before it starts.")
            )
            self._show_data_problem("", shown=True)
            self._set_problem_for_mapping()
            self.preview_loaded.emit()
            return
        message = shown(exc.message) if isinstance(exc, StudioError) else str(exc)
        hint = shown(exc.hint) if isinstance(exc, StudioError) else ""
        partial = getattr(exc, "partial", None)
        self._clear_data()
        if partial is not None:  # read, but it does not fit as mapped: show it so the mapping can be fixed
            self._preview = partial
            self._config.columns = partial.guess.columns
            self._fill_table(partial)
            required, optional = roles_for(self._config.task, partial.guess.columns)
            self._build_mapping(required, optional, partial.guess.found_by)
        self._show_data_problem(f"{message}\n{hint}".strip())
        self.preview_loaded.emit()

    def _clear_data(self) -> None:
        """Forget the last file's table, mapping, notes and token statistics."""
        self._preview = self._stats = None
        self._table_shown = None
        self.table.clear()
        self.table.setRowCount(0)
        self.table.setColumnCount(0)
        self._build_mapping((), (), {})
        self.split_info.setText("")
        self._show_notes([])
        self.stats_label.setText(self.tr("Token lengths appear once the model and data are loaded."))
        if self.histogram is not None:
            self.histogram.setVisible(False)

    def _show_notes(self, notes: list[str]) -> None:
        self.notes_label.setText("\n".join(shown(note) for note in notes))
        self.notes_label.setVisible(bool(notes))

    def _show_data_problem(self, text: str, shown: bool = True) -> None:
        self._data_problem = text
        show_error(self.data_error, text if shown else "")
        if text:
            self.split_info.setText("")
        self.validity_changed.emit()

    def _fill_table(self, result: Preview) -> None:
        cells = [[_cell_text(row.get(column)) for column in result.columns] for row in result.rows]
        shown_now = (list(result.columns), cells)  # texts: a cell may hold lists or arrays
        if shown_now == self._table_shown:  # the full check's first rows are the ones shown already
            return
        self._table_shown = shown_now
        self.table.clear()
        self.table.setColumnCount(len(result.columns))
        self.table.setRowCount(len(cells))
        self.table.setHorizontalHeaderLabels(result.columns)
        for r, row in enumerate(cells):
            for c, text in enumerate(row):
                item = QTableWidgetItem(text if len(text) < 300 else text[:299] + "…")
                item.setToolTip(text[:2000])
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()
        for c in range(len(result.columns)):
            self.table.setColumnWidth(c, min(420, max(120, self.table.columnWidth(c))))

    def _build_mapping(
        self, required: tuple[str, ...], optional: tuple[str, ...], found_by: dict[str, str]
    ) -> None:
        columns = list(self._preview.columns) if self._preview else []
        is_causal = self._config.task == "causal-lm"
        self.format_combo.setVisible(is_causal)
        self.format_row.labelForField(self.format_combo).setVisible(is_causal)
        if is_causal:
            fmt = causal_format(self._config.columns) or "text"
            self.format_combo.setCurrentIndex(list(CAUSAL_FORMATS).index(fmt))
        rows = (required, optional, columns)
        if rows != self._mapping_rows:  # else the same rows stay (the full check after the first rows)
            self._mapping_rows = rows
            while self.mapping_form.rowCount():
                self.mapping_form.removeRow(0)
            self.mapping_combos = {}
            for role in required + optional:
                combo = QComboBox()
                combo.addItem(self.tr("(none)") if role in optional else self.tr("(choose a column)"), "")
                for column in columns:
                    combo.addItem(column, column)
                combo.activated.connect(self._on_mapping_changed)
                self.mapping_combos[role] = combo
                words = self._role_words().get(role, role)
                label = QLabel(
                    self.tr("{role}:").format(role=words)
                    if role in required
                    else self.tr("{role} (optional):").format(role=words)
                )
                label.setToolTip(f"columns.{role}")  # the field in the run config
                self.mapping_form.addRow(label, combo)
        how = {"name": self.tr("guessed from its name"), "content": self.tr("guessed from the content")}
        for role, combo in self.mapping_combos.items():
            current = getattr(self._config.columns, role)
            combo.setCurrentIndex(max(0, combo.findData(current)) if current else 0)
            combo.setToolTip(how.get(found_by.get(role, ""), ""))

    def _role_words(self) -> dict[str, str]:
        """The column roles as the page names them (the config calls them ``columns.<role>``)."""
        return {
            "text": self.tr("Text"),
            "text_pair": self.tr("Text pair"),
            "label": self.tr("Label"),
            "instruction": self.tr("Instruction"),
            "input": self.tr("Input"),
            "output": self.tr("Output"),
            "messages": self.tr("Messages"),
            "prompt": self.tr("Prompt"),
            "completion": self.tr("Completion"),
            "source": self.tr("Source text"),
            "target": self.tr("Target text"),
        }

    def _set_problem_for_mapping(self) -> None:
        missing = [role for role, combo in self.mapping_combos.items() if not combo.currentData()]
        required = roles_for(self._config.task, self._config.columns)[0]
        missing = [r for r in missing if r in required]
        show_error(
            self.mapping_error,
            self.tr("Choose a column for: {roles}.").format(roles=", ".join(missing)) if missing else "",
        )
        self.validity_changed.emit()

    # ------------------------------------------------------------------ token statistics

    def _load_token_stats(self) -> None:
        if (
            self._preview is None
            or self._data_problem
            or self.model_error.text()
            or not self._config.model.name
        ):
            return
        generation, config = self._generation, copy.deepcopy(self._config)
        self.stats_label.setText(self.tr("Loading the tokenizer…"))
        if self.histogram is None:  # for the histogram: pyqtgraph takes 0.4 s to import, never here
            if imported("pyqtgraph"):
                QTimer.singleShot(0, self, lambda: self._on_plots_importable(None))
            else:
                run_in_background(
                    lambda: importlib.import_module("pyqtgraph"),
                    self,
                    self._on_plots_importable,
                    lambda *_: None,
                )

        def measure() -> TokenReport:
            from desktop.core.helper_process import token_statistics

            return token_statistics(config)  # in the helper process: this one never imports PyTorch

        self._run(
            measure, lambda r: self._on_stats(generation, r), lambda e: self._on_stats_failed(generation, e)
        )

    def _on_stats(self, generation: int, result: TokenReport) -> None:
        if generation != self._generation:
            return
        self._stats = result
        self._show_notes(result.notes)
        self._show_stats(result)
        self.token_stats_loaded.emit()

    def _show_stats(self, result: TokenReport) -> None:
        limit = self._config.training.max_length
        lines = []
        for name, s in result.token_stats.items():
            lines.append(
                self.tr(
                    "{name}: min {min}, median {median}, 95% {p95}, max {max} tokens; {over} of {count} longer than the limit ({limit}) and cut"  # noqa: E501
                ).format(
                    name=name,
                    min=s.min,
                    median=s.median,
                    p95=s.p95,
                    max=s.max,
                    over=sum(length > limit for length in s.lengths),
                    count=s.count,
                    limit=limit,
                )
            )
        self.stats_label.setText("\n".join(lines))
        first = next(iter(result.token_stats.values()), None)
        if first is not None and self.histogram is not None:  # else shown once it is made
            self.histogram.show_lengths(first.lengths, limit)
            self.histogram.setVisible(True)

    def prepare_histogram(self) -> None:
        """Make the histogram ahead of need, while the user is idle and once pyqtgraph is imported (the
        window's warm-up imports it): made when the first statistics come, its 15-50 ms would join the
        turns that show the data just loaded."""
        if self.histogram is not None or not imported("pyqtgraph"):
            return
        if self.idle_s() < HISTOGRAM_IDLE_S:
            self._histogram_later.start()  # a timer of this page: it dies with the page
            return
        self._make_histogram()

    def _on_plots_importable(self, _module: object) -> None:
        """Make the histogram now (if it was not made ahead of need), in a turn of its own, while the
        statistics are still being measured (together with showing them it would be one long stall)."""
        self._make_histogram()
        if self._stats is not None:
            self._show_stats(self._stats)

    def _make_histogram(self) -> None:
        if self.histogram is None:
            from desktop.gui.widgets.histogram_widget import HistogramWidget

            self.histogram = HistogramWidget()
            self.histogram.setVisible(False)
            self.stats_layout.insertWidget(1, self.histogram, 1)

    def _on_stats_failed(self, generation: int, exc: object) -> None:
        if generation != self._generation:
            return
        message = shown(exc.message) if isinstance(exc, StudioError) else str(exc)
        self.stats_label.setText(self.tr("Token lengths unavailable: {error}").format(error=message))
        self.token_stats_loaded.emit()


def _local_bytes(files: list[str]) -> int:
    """The size of the data files (a hub dataset, an unreadable path: as large as can be)."""
    try:
        return sum(Path(name).expanduser().stat().st_size for name in files) if files else 1 << 62
    except OSError:
        return 1 << 62


def _cell_text(value: object) -> str:
    """A cell as the table shows it (nothing for a missing value)."""
    return "" if value is None else str(value)
