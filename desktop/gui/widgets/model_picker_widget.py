"""The task and the model of the data page: a hub id or a folder, its check, download and fit badge."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
)

from desktop.core.hub.models import describe_local_model
from desktop.core.settings.config import METHODS, TASKS, RunConfig
from desktop.core.system.errors import StudioError
from desktop.gui.widgets.field_error import error_label, show_error
from desktop.gui.widgets.fit_badge_widget import FitBadgeWidget, free_ram
from desktop.gui.widgets.metric_text import task_name
from desktop.shared_ui import Key, Settings, shown


class ModelPickerWidget(QGroupBox):
    """Chooses the task and the model; says what is wrong with the model, or what it is and whether it
    fits. It reads the run config through ``config`` and leaves writing it to its owner.

    Args:
        settings: Where the last model folder is remembered (``None``: nowhere).
        config: The run config being edited.
        train_rows: The data's training rows (0 before a preview), for the fit badge and the browser.
    """

    task_changed = Signal(str)
    """The user chose another task: its name (``classification``, ``causal-lm``, ``seq2seq``,
    ``preference``)."""
    method_changed = Signal(str)
    """The user chose another preference method: ``dpo`` or ``orpo`` (``preference.method``)."""
    model_changed = Signal(str)
    """The user chose another model: what goes into ``model.name``. The owner writes it, then checks."""
    validity_changed = Signal()
    """The model was checked again; read :attr:`model_problem` and :attr:`download_problem`."""

    def __init__(
        self, settings: Settings | None, config: Callable[[], RunConfig], train_rows: Callable[[], int]
    ) -> None:
        super().__init__(self.tr("Task and model"))
        self._settings = settings
        self._config = config
        self._train_rows = train_rows
        self.model_problem = ""
        """Why the model cannot be used (empty when it can)."""
        self.download_problem = ""
        """A hub model not downloaded yet (empty when it is here)."""
        self._touched = False  # no error before the user has touched the field
        self._gpu_free: int | None = None

        self.task_combo = QComboBox()
        for task in TASKS:
            self.task_combo.addItem(task_name(task), task)
        self.task_combo.currentIndexChanged.connect(self._on_task_combo_current_index_changed)
        self.method_combo = QComboBox()
        methods = {
            "dpo": ("DPO", self.tr("Keeps a frozen reference copy of the model: more memory.")),
            "orpo": ("ORPO", self.tr("Needs no reference model: less memory.")),
        }
        for method in METHODS:
            name, tip = methods[method]
            self.method_combo.addItem(name, method)
            self.method_combo.setItemData(self.method_combo.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        self.method_combo.currentIndexChanged.connect(self._on_method_combo_current_index_changed)

        self.model_edit = QLineEdit()
        self.model_edit.setPlaceholderText(self.tr("Hub id such as bert-base-chinese, or a local folder"))
        self.model_edit.editingFinished.connect(self._on_model_edit_editing_finished)
        self.model_browse = QPushButton(self.tr("Folder…"))
        self.model_browse.clicked.connect(self._browse_model)
        self.model_hub = QPushButton(self.tr("Browse models…"))
        self.model_hub.clicked.connect(self.open_browser)
        self.model_download = QPushButton(self.tr("Download"))
        self.model_download.setVisible(False)
        self.model_download.clicked.connect(self.download_model)
        self.browser = None  # the model browser, made when first opened
        self.model_info = QLabel()
        self.model_info.setObjectName("hint")
        self.model_info.setWordWrap(True)
        self.model_error = error_label()
        self.fit_badge = FitBadgeWidget()  # computed in the background

        form = QFormLayout(self)
        form.addRow(self.tr("Task:"), self.task_combo)
        form.addRow(self.tr("Method:"), self.method_combo)
        self._form = form
        self._show_method()
        model_row = QHBoxLayout()
        model_row.addWidget(self.model_edit)
        model_row.addWidget(self.model_hub)
        model_row.addWidget(self.model_browse)
        form.addRow(self.tr("Model:"), model_row)
        info_row = QHBoxLayout()
        info_row.addWidget(self.model_info, 1)
        info_row.addWidget(self.model_download)
        form.addRow("", info_row)
        form.addRow("", self.fit_badge)
        form.addRow("", self.model_error)

    def show_config(self, config: RunConfig) -> None:
        """Show the task and the model of ``config`` (no signal: nothing was chosen)."""
        self.task_combo.blockSignals(True)
        self.task_combo.setCurrentIndex(max(0, TASKS.index(config.task) if config.task in TASKS else 0))
        self.task_combo.blockSignals(False)
        self.method_combo.blockSignals(True)
        self.method_combo.setCurrentIndex(max(0, self.method_combo.findData(config.preference.method)))
        self.method_combo.blockSignals(False)
        self._show_method()
        self.model_edit.setText(config.model.name)

    def set_gpu_free(self, free: int | None) -> None:
        """Free memory of the NVIDIA GPU (``None`` without one), for the browser's fit badges."""
        self._gpu_free = free

    def shutdown(self) -> None:
        """Cancel the fit badge's background work."""
        self.fit_badge.shutdown()

    # ------------------------------------------------------------------ user changes

    def _show_method(self) -> None:
        """The method row for preference tuning only; its tooltip says what the chosen one costs."""
        self._form.setRowVisible(self.method_combo, self.task_combo.currentData() == "preference")
        self.method_combo.setToolTip(self.method_combo.currentData(Qt.ItemDataRole.ToolTipRole) or "")

    def _on_task_combo_current_index_changed(self) -> None:
        self._show_method()
        self.task_changed.emit(self.task_combo.currentData())

    def _on_method_combo_current_index_changed(self) -> None:
        self._show_method()
        self.method_changed.emit(self.method_combo.currentData())

    def _on_model_edit_editing_finished(self) -> None:
        name = self.model_edit.text().strip()
        self._touched = True
        if name != self._config().model.name:
            self.model_changed.emit(name)
            if name and _is_folder(name) and not self.model_problem:
                from desktop.core.hub.search import remember_folder

                with contextlib.suppress(OSError):  # the browser's "On this computer" lists it
                    remember_folder(name)

    def open_browser(self) -> None:
        """The model browser: recommended, search, on this computer; a choice fills the model box."""
        from desktop.gui.dialogs.model_browser_dialog import ModelBrowser

        rows = self._train_rows() or None
        self.browser = ModelBrowser(
            copy.deepcopy(self._config()), self._gpu_free, free_ram(), self, rows=rows
        )
        self.browser.chosen.connect(self._on_browser_chosen)
        self.browser.downloaded.connect(self._on_browser_downloaded)
        self.browser.open()

    def _on_browser_chosen(self, ref: str) -> None:
        self.model_edit.setText(ref)
        self._on_model_edit_editing_finished()

    def _on_browser_downloaded(self, _folder: str) -> None:
        self.check()

    def needs_download(self) -> bool:
        """Whether the model is a hub id that is not complete on this computer yet."""
        model = self._config().model
        name = model.name.strip()
        if not name or name.startswith("bundled:") or Path(name).expanduser().is_dir():
            return False
        from desktop.core.hub.access import complete_in_cache

        return not complete_in_cache(name, model.revision)

    def download_model(self) -> None:
        """Download the chosen hub model as its own step (in the browser, with progress and Cancel)."""
        self.open_browser()
        self.browser.download(self._config().model.name.strip())

    def _browse_model(self) -> None:
        current = Path(self.model_edit.text())
        last = self._settings.text(Key.LAST_MODEL_FOLDER) if self._settings else ""
        start = str(current) if current.is_dir() else last
        folder = QFileDialog.getExistingDirectory(self, self.tr("Choose a model folder"), start)
        if folder:
            if self._settings:
                self._settings.set_text(Key.LAST_MODEL_FOLDER, str(Path(folder).parent))
            self.model_edit.setText(folder)
            self._on_model_edit_editing_finished()

    # ------------------------------------------------------------------ the check

    def check(self) -> None:
        """Check the model of the config (its name, its files, its fit to the task), say what it is,
        whether it needs a download, and start its fit badge."""
        from desktop.core.data.model_checks import check_model_folder

        config = self._config()
        # Whole sentences with their subject: core's field problems read "is empty; give ...".
        problems = [
            self.tr('Choose a model: a hub id such as "bert-base-uncased", or a local model folder.')
            if not config.model.name.strip()
            else self.tr("Model: {problem}").format(problem=shown(p.message))
            for p in config.validate()
            if p.field == "model.name"
        ]
        if not problems:
            try:  # tokenizer files and the fit to the task, from the folder's files (quick)
                check_model_folder(config)
            except StudioError as exc:
                problems = [f"{shown(exc.message)}\n{shown(exc.hint)}".strip()]
        self.model_problem = problems[0] if problems else ""
        name = config.model.name
        show_error(self.model_error, self.model_problem if name or self._touched else "")
        self.model_info.setText("")
        if not problems and Path(name).expanduser().is_dir():
            try:
                info = describe_local_model(name)
            except StudioError as exc:
                self.model_problem = exc.message
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
        self.download_problem = ""
        self.model_download.setVisible(missing)
        if missing:
            self.download_problem = self.tr(
                "Download the model before training: it is not on this computer yet."
            )
            self.model_info.setText(
                self.tr(
                    "Not on this computer yet. Download it here (with progress and Cancel); training starts "
                    "from the downloaded copy, without the network."
                )
            )
        elif not problems and name and not name.startswith("bundled:") and not _is_folder(name):
            self.model_info.setText(self.tr("On this computer (downloaded): training needs no network."))
        self.fit_badge.setText("")
        if not problems and name.strip():
            self.fit_badge.update_for(config, self._gpu_free, self._train_rows())
        self.validity_changed.emit()


def _is_folder(name: str) -> bool:
    return Path(name).expanduser().is_dir()
