"""Step 5: the finished model, its scores, and export to a complete, verified folder."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QUrl, Signal
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
    QProgressBar,
    QPushButton,
    QVBoxLayout,
)

from desktop.core.errors import StudioError
from desktop.core.training import RunResult
from desktop.gui.pages.base import WizardPage
from desktop.gui.workers import BackgroundTask


class ExportPage(WizardPage):
    """Shows the finished run's model and exports a complete, verified copy of it."""

    exported = Signal(object)
    """An export finished: the :class:`~desktop.core.export.ExportResult`."""

    def __init__(self) -> None:
        super().__init__()
        self.title = self.tr("Export")
        self.subtitle = self.tr("Your fine-tuned model, ready for from_pretrained().")
        self.result: RunResult | None = None
        self.empty = QLabel(self.tr("Train a model first: its folder and scores appear here."))
        self.empty.setObjectName("hint")
        self.model_label = QLabel()
        self.model_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.run_label = QLabel()
        self.metrics_label = QLabel()
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
        self.dtype_combo = QComboBox()
        self.dtype_combo.addItems(["fp32", "fp16", "bf16"])
        self.dtype_combo.setToolTip(self.tr("fp16 and bf16 halve the size; fp32 keeps every bit"))
        self.adapter_check = QCheckBox(self.tr("LoRA adapters only (not merged)"))
        self.zip_check = QCheckBox(self.tr("Also make a .zip"))
        self.export_button = QPushButton(self.tr("Export"))
        self.export_button.setObjectName("primary")
        self.export_button.clicked.connect(self.start_export)
        self.export_busy = QProgressBar()
        self.export_busy.setRange(0, 0)
        self.export_busy.setVisible(False)
        self.export_status = QLabel()
        self.export_status.setWordWrap(True)
        self._task: BackgroundTask | None = None
        self.usage = QLabel()
        self.usage.setObjectName("code")
        self.usage.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.form = QFormLayout()
        self.form.addRow(self.tr("Model folder:"), self.model_label)
        self.form.addRow(self.tr("Run folder:"), self.run_label)
        self.form.addRow(self.tr("Scores:"), self.metrics_label)
        self.form.addRow(self.tr("Files:"), self.files_label)
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
        export_form.addRow(self.tr("Weights:"), self.dtype_combo)
        export_form.addRow("", self.adapter_check)
        export_form.addRow("", self.zip_check)
        run_row = QHBoxLayout()
        run_row.addWidget(self.export_button)
        run_row.addWidget(self.export_busy, 1)
        export_form.addRow("", run_row)
        export_form.addRow("", self.export_status)
        layout = QVBoxLayout(self)
        layout.addWidget(self.empty)
        layout.addLayout(self.form)
        layout.addLayout(buttons)
        layout.addWidget(self.usage)
        layout.addWidget(self.export_box)
        layout.addStretch()
        self._set_visible(False)

    def show_result(self, result: RunResult) -> None:
        """Show a finished run."""
        self.result = result
        self.model_label.setText(str(result.model_dir))
        self.run_label.setText(str(result.run_dir))
        self.metrics_label.setText("   ".join(f"{k} {v:.4g}" for k, v in result.metrics.items()))
        files = sorted(p.name for p in result.model_dir.iterdir()) if result.model_dir else []
        self.files_label.setText(", ".join(files))
        path = str(result.model_dir).replace("\\", "/")
        self.usage.setText(f'from transformers import pipeline\npipe = pipeline(model="{path}")')
        self.dest_edit.setText(str(Path(result.run_dir or ".") / "export"))
        self.adapter_check.setVisible(bool(result.run_dir and (Path(result.run_dir) / "adapter").is_dir()))
        self._set_visible(True)

    def start_export(self) -> None:
        """Export the finished run in the background; the result and its verification are shown."""
        if self.result is None or self.result.run_dir is None or self._task is not None:
            return
        dest = self.dest_edit.text().strip()
        if not dest:
            self.export_status.setText(self.tr("Choose a folder to export to."))
            return
        from desktop.core.export import export_run
        from desktop.core.runs import RunDir

        run, path = RunDir(self.result.run_dir), Path(dest)
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
        self.export_button.setEnabled(False)
        self.export_busy.setVisible(True)
        self.export_status.setText(self.tr("Exporting and verifying…"))
        self._task = BackgroundTask(lambda: export_run(run, path, dtype, lora, overwrite, archive), self)
        self._task.finished.connect(self._on_task_finished)
        self._task.failed.connect(self._on_task_failed)
        self._task.start()

    def _on_task_finished(self, result: object) -> None:
        self._export_done()
        check = result.verification
        text = self.tr("Exported to {folder}.").format(folder=result.folder)
        if check is not None and check.ok:
            text += " " + self.tr(
                "Verified: reloaded in a fresh process, outputs differ by at most {diff:.2g}."
            ).format(diff=check.max_abs_diff)
        elif check is not None:
            text += " " + self.tr(
                "Warning: the reloaded folder gives different outputs ({diff:.3g}). {error}"
            ).format(diff=check.max_abs_diff, error=check.error)
        self.export_status.setText(text)
        self.exported.emit(result)

    def _on_task_failed(self, exc: object, detail: str) -> None:
        self._export_done()
        message = f"{exc.message} {exc.hint}" if isinstance(exc, StudioError) else str(exc)
        self.export_status.setText(self.tr("Export failed: {error}").format(error=message))

    def _export_done(self) -> None:
        self._task = None
        self.export_button.setEnabled(True)
        self.export_busy.setVisible(False)

    def _browse_dest(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, self.tr("Export to"), self.dest_edit.text())
        if folder:
            self.dest_edit.setText(folder)

    def shutdown(self) -> None:
        if self._task is not None:
            self._task.wait()

    def _set_visible(self, visible: bool) -> None:
        self.empty.setVisible(not visible)
        self.export_box.setVisible(visible)
        for widget in (self.open_button, self.copy_button, self.usage):
            widget.setVisible(visible)
        for row in range(self.form.rowCount()):
            self.form.setRowVisible(row, visible)

    def _open_folder(self) -> None:
        if self.result and self.result.model_dir:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.result.model_dir)))

    def _copy_path(self) -> None:
        if self.result and self.result.model_dir:
            QGuiApplication.clipboard().setText(str(self.result.model_dir))
