"""Step 5: where the finished model is, with its metrics."""

from __future__ import annotations

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLabel, QPushButton, QVBoxLayout

from desktop.core.training import RunResult
from desktop.gui.pages.base import WizardPage


class ExportPage(WizardPage):
    """Shows the output folder of the finished run."""

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
        layout = QVBoxLayout(self)
        layout.addWidget(self.empty)
        layout.addLayout(self.form)
        layout.addLayout(buttons)
        layout.addWidget(self.usage)
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
        self._set_visible(True)

    def _set_visible(self, visible: bool) -> None:
        self.empty.setVisible(not visible)
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
