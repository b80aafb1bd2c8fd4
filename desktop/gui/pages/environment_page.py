"""Step 1: where training will run (the PyTorch build and its GPU), probed off the GUI thread."""

from __future__ import annotations

import platform
import sys

from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout

from desktop.core.torch_probe import TorchInfo, probe_torch
from desktop.gui.pages.base import WizardPage
from desktop.gui.workers import BackgroundTask


class EnvironmentPage(WizardPage):
    """Shows the device training will use, as PyTorch reports it."""

    def __init__(self) -> None:
        super().__init__()
        self.title = self.tr("Environment")
        self.subtitle = self.tr("Where your model will train.")
        self._task: BackgroundTask | None = None
        self.info: TorchInfo | None = None

        self.verdict = QLabel(self.tr("Not checked yet."))
        self.verdict.setObjectName("verdict")
        self.verdict.setWordWrap(True)
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumWidth(160)
        self.busy.setVisible(False)
        self.check_button = QPushButton(self.tr("Check again"))
        self.check_button.clicked.connect(self.check)

        self.torch_label = QLabel("–")
        self.devices_label = QLabel("–")
        self.python_label = QLabel(f"{platform.python_version()} ({sys.executable})")
        self.system_label = QLabel(f"{platform.system()} {platform.release()} ({platform.machine()})")
        for label in (self.torch_label, self.devices_label, self.python_label, self.system_label):
            label.setWordWrap(True)
        form = QFormLayout()
        form.addRow(self.tr("PyTorch:"), self.torch_label)
        form.addRow(self.tr("GPUs:"), self.devices_label)
        form.addRow(self.tr("Python:"), self.python_label)
        form.addRow(self.tr("System:"), self.system_label)

        row = QHBoxLayout()
        row.addWidget(self.busy)
        row.addStretch()
        row.addWidget(self.check_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.verdict)
        layout.addLayout(form)
        layout.addLayout(row)
        layout.addStretch()

    def check(self) -> None:
        """Probe PyTorch in a child process (it takes a few seconds)."""
        if self._task is not None:
            return
        self.verdict.setText(self.tr("Checking PyTorch…"))
        self.busy.setVisible(True)
        self.check_button.setEnabled(False)
        self._task = BackgroundTask(probe_torch, self)
        self._task.finished.connect(self._on_task_finished)
        self._task.failed.connect(self._on_task_failed)
        self._task.start()

    def shutdown(self) -> None:
        if self._task is not None:
            self._task.wait()

    def show_info(self, info: TorchInfo) -> None:
        """Show a probe result."""
        self.info = info
        self.verdict.setText(info.summary())
        self.torch_label.setText(
            self.tr("{version}, CUDA {cuda}").format(
                version=info.version, cuda=info.cuda_build or self.tr("none")
            )
            if info.installed
            else self.tr("not installed")
        )
        self.devices_label.setText(
            ", ".join(info.devices) if info.devices else self.tr("none usable by PyTorch")
        )

    def _done(self) -> None:
        self._task = None
        self.busy.setVisible(False)
        self.check_button.setEnabled(True)

    def _on_task_finished(self, info: TorchInfo) -> None:
        self._done()
        self.show_info(info)

    def _on_task_failed(self, exc: object, detail: str) -> None:
        self._done()
        self.verdict.setText(self.tr("PyTorch could not be checked: {error}").format(error=exc))
