"""Step 5: the finished model, its scores, and export to a complete, verified folder."""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSizePolicy,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop import shared_ui
from desktop.core.results.gguf_export import QUANTS
from desktop.core.runs.folders import RunDir
from desktop.core.settings.config_sections import model_task
from desktop.core.system.errors import StudioError
from desktop.core.system.events import RunResult
from desktop.gui.app_support.workers import BackgroundTask
from desktop.gui.controllers.serve_controller import ServeController
from desktop.gui.pages.base import WizardPage
from desktop.gui.pages.export_destination import default_destination
from desktop.gui.widgets.checkpoint_choice import CheckpointChoice
from desktop.gui.widgets.choice_combo import ChoiceCombo
from desktop.gui.widgets.elided_label import ElidedLabel
from desktop.gui.widgets.gguf_panel import GgufPanel
from desktop.gui.widgets.metric_text import metrics_line, task_name
from desktop.gui.widgets.progress_bar import ProgressBar
from desktop.gui.widgets.publish_panel import PublishPanel
from desktop.gui.widgets.scrolled import scrolled
from desktop.gui.widgets.serve_panel import ServePanel
from desktop.gui.widgets.try_it_panel import TryItPanel
from desktop.shared_ui import Key, Settings, error_text, sentences, shown


class _ProgressRelay(QObject):
    """Carries the export's progress from its thread to the page (a queued signal)."""

    progressed = Signal(str, float)


class ExportPage(WizardPage):
    """Shows the finished run's model and exports a complete, verified copy of it."""

    exported = Signal(object)
    """An export finished: the :class:`~desktop.core.results.export.ExportResult`."""
    busy_changed = Signal(bool)
    """An export started (``True``) or ended."""

    def __init__(self, settings: Settings | None = None) -> None:
        super().__init__()
        self.settings = settings
        """Where the last export went is remembered in it (a new one goes beside it)."""
        self.title = self.tr("Export")
        self.subtitle = self.tr("Your fine-tuned model, ready for from_pretrained().")
        self.result: RunResult | None = None
        self.empty = QLabel(self.tr("Train a model first: its folder and scores appear here."))
        self.empty.setObjectName("hint")
        self.model_label = ElidedLabel()  # a long path cut in the middle (whole in Copy path, the tooltip)
        self.run_label = ElidedLabel()
        self.metrics_label = QLabel(
            wordWrap=True
        )  # TRL's runs log a dozen figures: never wider than the page
        self.files_label = QLabel()
        self.files_label.setWordWrap(True)
        self.open_button = QPushButton(self.tr("Open model folder"))
        self.open_button.clicked.connect(self._open_folder)
        self.copy_button = QPushButton(self.tr("Copy path"))
        self.copy_button.clicked.connect(self._copy_path)
        self.dest_edit = QLineEdit()
        self.dest_edit.setPlaceholderText(self.tr("A new, empty folder"))
        self.dest_browse = QPushButton(self.tr("Folder…"))
        self.dest_browse.clicked.connect(self._browse_dest)
        self.format_combo = QComboBox()
        self.format_combo.addItem(self.tr("Model folder (transformers)"), "folder")
        self.format_combo.addItem(self.tr("GGUF file (llama.cpp, Ollama, LM Studio)"), "gguf")
        self.format_combo.currentIndexChanged.connect(self._on_format_changed)
        self.quant_combo = ChoiceCombo(QUANTS)
        self.quant_combo.currentIndexChanged.connect(self._on_format_changed)
        self.layout_combo = QComboBox()
        self.layout_combo.addItem(self.tr("Plain folder (Ollama, llama.cpp)"), "folder")
        self.layout_combo.addItem(self.tr("LM Studio layout (publisher/model folders)"), "lmstudio")
        self.layout_combo.currentIndexChanged.connect(self._on_layout_changed)
        self.llama_hint = QLabel()
        self.llama_hint.setObjectName("hint")
        self.llama_hint.setWordWrap(True)
        self.llama_button = QPushButton(self.tr("Install llama.cpp"))
        self.gguf_panel = GgufPanel()
        self.llama_button.clicked.connect(self._install_llama_cpp)
        self.gguf_panel.llama_cpp_installed.connect(self._on_format_changed)
        self.dtype_combo = QComboBox()
        self.dtype_combo.addItems(["fp32", "fp16", "bf16"])
        self.dtype_combo.setToolTip(self.tr("fp16 and bf16 halve the size; fp32 keeps every bit"))
        self.adapter_check = QCheckBox(self.tr("LoRA adapters only (not merged)"))
        self.zip_check = QCheckBox(self.tr("Also make a .zip"))
        self.mlflow_check = QCheckBox(self.tr("Also log the model to MLflow"))
        self._mlflow_installed = importlib.util.find_spec("mlflow") is not None
        tracking = os.environ.get("MLFLOW_TRACKING_URI", "")
        self.mlflow_check.setToolTip(
            self.tr("Logs to {uri}").format(uri=tracking)
            if tracking
            else self.tr("Logs to a store in the app's data folder (MLFLOW_TRACKING_URI chooses another)")
        )
        self.export_button = QPushButton(self.tr("Export"))
        self.export_button.setObjectName("primary")
        self.export_button.clicked.connect(self.start_export)
        self.cancel_button = QPushButton(self.tr("Cancel"))
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(self._cancel_export)
        self.export_busy = ProgressBar()
        self.export_busy.setRange(0, 100)
        self.export_busy.setVisible(False)
        self.export_status = QLabel()
        self.export_status.setWordWrap(True)
        self._task: BackgroundTask | None = None
        self._cancel = threading.Event()
        self._chosen_dest = ""
        self._relay = _ProgressRelay(self)
        self._relay.progressed.connect(self._on_export_progressed)
        self.try_it = TryItPanel()
        self.usage = QLabel()
        self.usage.setObjectName("code")
        self.usage.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # A long model path is cut at the edge (it still copies whole): no reason to scroll the page.
        self.usage.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

        self.model_choice = CheckpointChoice()  # the best checkpoint, or the last step's model
        self.model_choice.chosen.connect(self._show_model)
        self.model_choice.said.connect(self.metrics_label.setText)
        self._run: RunDir | None = None
        self.form = QFormLayout()
        model_row = QHBoxLayout()
        model_row.addWidget(self.model_label, 1)
        model_row.addWidget(self.model_choice)
        self.form.addRow(self.tr("Model folder:"), model_row)
        self.form.addRow(self.tr("Run folder:"), self.run_label)
        self.form.addRow(self.tr("Scores:"), self.metrics_label)
        buttons = QHBoxLayout()
        buttons.addWidget(self.open_button)
        buttons.addWidget(self.copy_button)
        buttons.addStretch()
        self.export_box = QGroupBox(self.tr("Export a copy"))
        export_form = QFormLayout(self.export_box)
        dest_row = QHBoxLayout()
        dest_row.addWidget(self.dest_edit, 1)
        dest_row.addWidget(self.dest_browse)
        export_form.addRow(self.tr("To:"), dest_row)
        export_form.addRow(self.tr("Format:"), self.format_combo)
        export_form.addRow(self.tr("Weights:"), self.dtype_combo)
        export_form.addRow(self.tr("GGUF weights:"), self.quant_combo)
        export_form.addRow(self.tr("Layout:"), self.layout_combo)
        llama_row = QHBoxLayout()
        llama_row.addWidget(self.llama_hint, 1)
        llama_row.addWidget(self.llama_button)
        self._llama_row = QWidget()
        self._llama_row.setLayout(llama_row)
        llama_row.setContentsMargins(0, 0, 0, 0)
        export_form.addRow("", self._llama_row)
        self._export_form = export_form
        export_form.addRow("", self.adapter_check)
        export_form.addRow("", self.zip_check)
        export_form.addRow("", self.mlflow_check)
        # Hidden in its form, not before it has a parent: a parentless widget made visible is a window of
        # its own, for a moment (it took the focus from the main window).
        export_form.setRowVisible(self.mlflow_check, self._mlflow_installed)
        run_row = QHBoxLayout()
        run_row.addWidget(self.export_button)
        run_row.addWidget(self.cancel_button)
        run_row.addWidget(self.export_busy, 1)
        export_form.addRow("", run_row)
        export_form.addRow("", self.export_status)
        export_form.addRow("", self.gguf_panel)
        export_tab = QGroupBox()
        export_tab.setFlat(True)
        export_layout = QVBoxLayout(export_tab)
        # The folder's files and the line that loads it sit here, not above the tabs: rows there that
        # came and went with the tab (room for the chat) moved the tabs under the pointer, and a click
        # meant for one thing landed on another (the Serve tab's "network" option).
        files_form = QFormLayout()
        files_form.addRow(self.tr("Files:"), self.files_label)
        export_layout.addLayout(files_form)
        export_layout.addWidget(self.usage)
        export_layout.addWidget(self.export_box)
        self.publish_panel = PublishPanel()  # offered once there is an export to publish
        self.publish_panel.busy_changed.connect(self.busy_changed)
        self.publish_panel.busy_changed.connect(self._on_publishing)
        export_layout.addWidget(self.publish_panel)
        export_layout.addStretch()
        from desktop.gui.widgets.evaluation_view import EvaluationView
        from desktop.gui.widgets.predict_panel import PredictPanel

        self.evaluation = EvaluationView()  # a tab of its own when the run kept an evaluation
        self.predict = PredictPanel()
        self.tabs = QTabWidget()
        self.tabs.addTab(self.try_it, self.tr("Try it"))
        self.serve = ServePanel(ServeController(self))
        self.tabs.addTab(self.serve, self.tr("Serve"))
        self.tabs.addTab(self.predict, self.tr("Predict on a file"))
        self.tabs.addTab(scrolled(export_tab), self.tr("Export a copy"))  # the tallest: scrolls alone
        layout = QVBoxLayout(self)
        layout.addWidget(self.empty)
        layout.addLayout(self.form)
        layout.addLayout(buttons)
        layout.addWidget(self.tabs, 1)
        self._set_visible(False)
        self._on_format_changed()

    def show_result(self, result: RunResult) -> None:
        """Show a finished run (its model: the best checkpoint when it kept one, the choice beside it)."""
        self.result = result
        self.run_label.setText(str(result.run_dir))
        last = self.settings.text(Key.LAST_EXPORT_FOLDER) if self.settings is not None else ""
        self.dest_edit.setText(str(default_destination(result, Path(last) if last else None)))
        self.model_choice.set_run(result.run_dir)
        self._show_model(RunDir(result.run_dir) if result.run_dir else None)
        self._set_visible(True)
        index = self.tabs.indexOf(self.evaluation)
        if self.evaluation.show_run(result.run_dir):
            if index < 0:
                self.tabs.insertTab(0, self.evaluation, self.tr("Evaluation"))
            self.tabs.setCurrentWidget(self.evaluation)
        elif index >= 0:
            self.tabs.removeTab(index)

    def _show_model(self, run: RunDir | None) -> None:
        """Show ``run``'s model (a ``LastStepRun``'s is the last step's): what the tabs try, serve,
        predict with and export."""
        result = self.result
        if result is None:
            return
        self._run = run
        model_dir = run.model_dir if run is not None else result.model_dir
        self.model_label.setText(str(model_dir))
        metrics = result.metrics
        if self.model_choice.currentData() == "last":  # the evaluation and the scores are the best's
            found = self.model_choice.found
            value = found.get("last_value")
            metrics = {found["metric"]: value} if value is not None else {}
        which = self.model_choice.sentence()
        self.metrics_label.setText(metrics_line(metrics) + (f"\n{which}" if which else ""))
        files = sorted(p.name for p in model_dir.iterdir()) if model_dir and model_dir.is_dir() else []
        self.files_label.setText(", ".join(files))
        path = str(model_dir).replace("\\", "/")
        self.usage.setText(f'from transformers import pipeline\npipe = pipeline(model="{path}")')
        adapters = run is not None and run.adapter_dir.is_dir()
        pictures = adapters and run.config().task == "image-classification"  # its load only merged
        self.adapter_check.setVisible(bool(adapters and not pictures))
        self._on_format_changed()
        if model_dir is not None:
            config = Path(result.run_dir) / "config.toml" if result.run_dir else None
            self.try_it.set_folder(model_dir, config)
        # The run itself for its own model (its config, its task); the last step's by its folder.
        chosen = result.run_dir if self.model_choice.currentData() != "last" else model_dir
        self.predict.set_model(chosen or model_dir)
        self.serve.set_model(chosen or model_dir)

    def try_folder(self, folder: str | Path) -> bool:
        """Open any model folder (an export, a run's model) in the try-it panel."""
        if not self.try_it.set_folder(folder):
            return False
        self.predict.set_model(folder)
        self.serve.set_model(folder)
        self.tabs.setCurrentWidget(self.try_it)
        self.tabs.setVisible(True)
        self.empty.setVisible(False)
        return True

    def has_content(self) -> bool:
        """Whether there is a model to show: a finished run or an opened folder."""
        return self.result is not None or self.try_it.info is not None

    def start_export(self) -> None:
        """Export the finished run in the background; the result and its verification are shown."""
        if self.result is None or self.result.run_dir is None or self._task is not None:
            return
        if self.model_choice.is_busy():  # the export would be of the other model
            self.export_status.setText(self.tr("Wait until the last step's model is made, then export."))
            return
        dest = self.dest_edit.text().strip()
        if not dest:
            self.export_status.setText(self.tr("Choose a folder to export to."))
            return
        from desktop.core.results.destination import check_destination
        from desktop.core.results.export import export_run

        run = self._run or RunDir(self.result.run_dir)  # the last step's model when chosen
        path = Path(dest).expanduser().absolute()
        if self.format_combo.currentData() == "gguf":
            self._start_gguf(run, path)
            return
        try:  # refused before asking anything: never "Replace?" for a folder that must not be replaced
            check_destination(path, run, run.config())
        except StudioError as exc:
            self.export_status.setText(error_text(exc, " "))
            return
        if self.try_it.info is not None and Path(self.try_it.info.folder).resolve() == path.resolve():
            self.try_it.release_model()  # its files would be held open while the folder is replaced
        overwrite = False
        if path.exists() and any(path.iterdir()):
            answer = QMessageBox.question(
                self,
                self.tr("Folder not empty"),
                self.tr("{folder} is not empty. Replace what is in it?").format(folder=dest),
            )
            if answer != QMessageBox.StandardButton.Yes:
                return
            overwrite = True
        dtype, lora, archive = (
            self.dtype_combo.currentText(),
            "adapter" if self.adapter_check.isChecked() else "merged",
            self.zip_check.isChecked(),
        )
        mlflow = self._mlflow_installed and self.mlflow_check.isChecked()
        cancel, report = self._cancel, self._relay.progressed.emit
        language = shared_ui.current
        self._run_export(
            lambda: export_run(
                run,
                path,
                dtype,
                lora,
                overwrite,
                archive,
                on_progress=report,
                cancel=cancel,
                mlflow=mlflow,
                language=language,
            ),
            self.tr("Exporting and verifying…"),
            self._on_task_finished,
        )

    def _run_export(
        self, work: Callable[[], object], status: str, finished: Callable[[object], None]
    ) -> None:
        """Run an export in the background, with its progress bar, Cancel and ``status`` meanwhile."""
        self.export_button.setEnabled(False)
        self.cancel_button.setVisible(True)
        self.cancel_button.setEnabled(True)
        self.export_busy.setValue(0)
        self.export_busy.setVisible(True)
        self.export_status.setText(status)
        self._cancel.clear()
        self._task = BackgroundTask(work, self)
        self._task.finished.connect(finished)
        self._task.failed.connect(self._on_task_failed)
        self._task.start()
        self.busy_changed.emit(True)

    def _on_task_finished(self, result: object) -> None:
        self._export_done()
        check = result.verification
        parts = [self.tr("Exported to {folder}.").format(folder=result.folder)]
        if check is not None and check.ok and check.max_abs_diff == 0:
            parts.append(self.tr("Verified: reloaded in a fresh process, the outputs are the same."))
        elif check is not None and check.ok:
            parts.append(
                self.tr(
                    "Verified: reloaded in a fresh process, outputs differ by at most {diff:.2g}."
                ).format(diff=check.max_abs_diff)
            )
        elif check is not None:
            parts.append(
                self.tr("Warning: the reloaded folder gives different outputs ({diff:.3g}). {error}").format(
                    diff=check.max_abs_diff, error=check.error
                )
            )
        if result.mlflow_uri:
            parts.append(self.tr("Logged to MLflow as {uri}.").format(uri=result.mlflow_uri))
            parts.append(self.tr("To look: {command}").format(command=result.mlflow_ui))
        if result.mlflow_not_logged is not None:
            parts.append(shown(result.mlflow_not_logged))
        text = sentences(*parts)
        self.export_status.setText(text)
        if self.settings is not None:  # the next export goes beside this one
            self.settings.set_text(Key.LAST_EXPORT_FOLDER, str(Path(result.folder).parent))
        adapter = (Path(result.folder) / "adapter_config.json").is_file()
        self.publish_panel.offer(result.folder, "adapter" if adapter else "folder", self._run_name())
        self.exported.emit(result)

    def _on_task_failed(self, exc: object, detail: str) -> None:
        self._export_done()
        from desktop.core.results.export import ExportCancelled
        from desktop.core.results.gguf_writer import GgufCancelled

        if isinstance(exc, ExportCancelled | GgufCancelled):
            self.export_status.setText(self.tr("Export cancelled; nothing was written."))
            return
        message = error_text(exc, " ")
        self.export_status.setText(self.tr("Export failed: {error}").format(error=message))

    def _gguf_refusal(self) -> str:
        """Why this run cannot be written as GGUF ("" when it can)."""
        from desktop.core.runs.folders import RunDir

        if self.result is None or self.result.run_dir is None:
            return ""
        try:
            task = RunDir(self.result.run_dir).config().task
        except Exception:  # a damaged config: the export says so when asked
            return ""
        if model_task(task) == "causal-lm":  # a preference run's model too
            return ""
        return self.tr(
            "GGUF is for decoder chat models (causal LM), which llama.cpp, Ollama and LM Studio run; this "
            "run's model is for {task}: export it as a folder."
        ).format(task=task_name(task))

    def _on_format_changed(self) -> None:
        gguf = self.format_combo.currentData() == "gguf"
        from desktop.core.results.gguf_check import llama_cpp_available

        missing = gguf and not llama_cpp_available()
        for widget, visible in (
            (self.dtype_combo, not gguf),
            (self.quant_combo, gguf),
            (self.layout_combo, gguf),
            (self._llama_row, missing),
            (self.zip_check, not gguf),
        ):
            self._export_form.setRowVisible(widget, visible)
        k_quant = self.quant_combo.value() == "q4_k_m"
        self.llama_hint.setText(
            self.tr("llama.cpp is not installed: q4_k_m needs its quantizer.")
            if k_quant
            else self.tr("llama.cpp is not installed: the file will be written, but not checked.")
        )
        refusal = self._gguf_refusal() if gguf else ""
        idle = self._task is None and not self.publish_panel.is_busy()  # an export would swap the files
        self.export_button.setEnabled(not refusal and not (missing and k_quant) and idle)
        self.export_status.setText(refusal)

    def _run_name(self) -> str:
        """The run's name: what a repository is called unless the user says otherwise."""
        run = self.result.run_dir if self.result is not None else None
        return Path(run).name if run else "model"

    def _on_publishing(self, busy: bool) -> None:
        """No export while a push reads the exported files (it would swap or hold them)."""
        said = self.export_status.text()
        self._on_format_changed()
        if not self.export_status.text():
            self.export_status.setText(said)  # what the export said stays

    def _on_layout_changed(self) -> None:
        """The LM Studio layout goes to LM Studio's models folder unless the user chose a folder."""
        from desktop.core.results.gguf_export import lm_studio_folder

        lmstudio = self.layout_combo.currentData() == "lmstudio"
        if self.result is None:
            return
        default = str(default_destination(self.result).parent)
        current = self.dest_edit.text().strip()
        if lmstudio and (not current or current.startswith(default)):
            self._chosen_dest = current
            self.dest_edit.setText(str(lm_studio_folder()))
        elif not lmstudio and self._chosen_dest and current == str(lm_studio_folder()):
            self.dest_edit.setText(self._chosen_dest)

    def _install_llama_cpp(self) -> None:
        self.gguf_panel.setVisible(True)
        self.gguf_panel.install_llama_cpp()

    def _start_gguf(self, run: object, path: Path) -> None:
        from desktop.core.results.gguf_export import already_there, export_run_gguf

        quant, cancel, report = self.quant_combo.value(), self._cancel, self._relay.progressed.emit
        layout = self.layout_combo.currentData()
        replaced = already_there(run, path, quant, layout)
        if replaced:
            answer = QMessageBox.question(
                self,
                self.tr("Replace the file?"),
                self.tr("{files} already in {folder}. Replace?").format(
                    files=", ".join(p.name for p in replaced), folder=path
                ),
            )
            if answer != QMessageBox.StandardButton.Yes:
                return
        self._run_export(
            lambda: export_run_gguf(
                run, path, quant, report, cancel.is_set, overwrite=bool(replaced), layout=layout
            ),
            self.tr("Writing the GGUF file…"),
            self._on_gguf_finished,
        )

    def _on_gguf_finished(self, result: object) -> None:
        self._export_done()
        self.export_status.setText("")
        self.gguf_panel.show_export(result)
        self.publish_panel.offer(result.path, "gguf", self._run_name())
        self._on_format_changed()

    def _on_export_progressed(self, stage: str, fraction: float) -> None:
        if self._task is None:
            return
        words = {
            "load": self.tr("Loading the model…"),
            "adapters": self.tr("Copying the adapters…"),
            "weights": self.tr("Writing the weights…"),
            "tokenizer": self.tr("Copying the tokenizer…"),
            "card": self.tr("Writing the model card…"),
            "place": self.tr("Putting the folder in place…"),
            "zip": self.tr("Making the zip archive…"),
            "verify": self.tr("Verifying: reloading the folder in a fresh process…"),
            "mlflow": self.tr("Logging the model to MLflow…"),
            "gguf": self.tr("Writing the GGUF file…"),
            "quantize": self.tr("Quantizing with llama.cpp…"),
            "check": self.tr("Checking the file with llama.cpp: its answers against transformers'…"),
            "done": self.tr("Done."),
        }
        self.export_busy.setValue(round(fraction * 100))
        self.export_status.setText(words.get(stage, stage))
        if fraction >= 0.75 and stage not in ("gguf", "quantize", "check"):
            # the folder (or the file) is in place: a cancel could not undo it
            self.cancel_button.setEnabled(False)

    def _cancel_export(self) -> None:
        self._cancel.set()
        self.cancel_button.setEnabled(False)
        self.export_status.setText(self.tr("Cancelling…"))

    def is_busy(self) -> bool:
        """Whether an export is being written or verified (or llama.cpp installed, or Ollama fed)."""
        return (
            self._task is not None
            or self.gguf_panel.is_busy()
            or self.model_choice.is_busy()
            or self.publish_panel.is_busy()
        )

    def _export_done(self) -> None:
        self._task = None
        self.busy_changed.emit(False)
        self.export_button.setEnabled(True)
        self.cancel_button.setVisible(False)
        self.export_busy.setVisible(False)

    def _browse_dest(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, self.tr("Export to"), self.dest_edit.text())
        if folder:
            self.dest_edit.setText(folder)

    def shutdown(self) -> None:
        self.gguf_panel.shutdown()
        self.publish_panel.shutdown()
        if self._task is not None:
            self._cancel.set()  # until the folder is in place, nothing is left behind
        self.try_it.shutdown()
        self.serve.shutdown()

    def _set_visible(self, visible: bool) -> None:
        self.empty.setVisible(not visible)
        self.tabs.setVisible(visible)
        for widget in (self.open_button, self.copy_button):
            widget.setVisible(visible)
        for row in range(self.form.rowCount()):  # the same rows whichever tab is shown
            self.form.setRowVisible(row, visible)
        self.model_choice.setVisible(visible and self.model_choice.count() > 0)  # only when there is a choice

    def _open_folder(self) -> None:
        if self.result and self.result.model_dir:  # the model shown: the last step's when chosen
            QDesktopServices.openUrl(QUrl.fromLocalFile(self.model_label.text()))

    def _copy_path(self) -> None:
        if self.result and self.result.model_dir:
            QGuiApplication.clipboard().setText(self.model_label.text())
