"""The run's processes: in the app or a child process, several GPUs and their strategy, a cluster job."""

from __future__ import annotations

import dataclasses
import sys

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QPushButton,
    QSpinBox,
)

from desktop.core.settings.config import Launch, RunConfig
from desktop.core.settings.options import installed
from desktop.gui.widgets.field_error import AddField
from desktop.shared_ui import shown


def _on_windows() -> bool:
    """Whether the app runs on Windows (a function, so tests can say it does)."""
    return sys.platform == "win32"


def _field_help(name: str) -> str:
    """The help text of a ``[launch]`` field (its tooltip)."""
    return next(f.metadata["help"] for f in dataclasses.fields(Launch) if f.name == name)


class ProcessesWidget(QGroupBox):
    """The ``[launch]`` section: a child process or several GPUs (offered where there are two or
    more), their strategy, and the button that writes the run as a job for a cluster.

    Args:
        add_field: Makes the form rows of the GPUs and the strategy (their errors are the page's).
    """

    changed = Signal()
    """The user changed a launch field."""
    gpu_count_changed = Signal()
    """The user changed how many GPUs to use (the effective batch changes with it)."""
    job_export_requested = Signal()
    """The user asked to write the run as a job for another machine or a cluster."""

    def __init__(self, add_field: AddField) -> None:
        super().__init__(self.tr("Processes and GPUs"))
        self._gpus = 0
        form = QFormLayout(self)
        self.separate_process = QCheckBox(self.tr("Run in a separate process"))
        self.separate_process.setToolTip(shown(_field_help("separate_process")))
        self.separate_process.toggled.connect(self.changed)
        form.addRow(self.separate_process)
        self.separate_note = QLabel(
            self.tr(
                "Stop can then end the run at once, a crash cannot close the app, and every byte of GPU "
                "memory goes back to the system when the run ends. It costs a few seconds at the start."
            )
        )
        self.separate_note.setObjectName("hint")
        self.separate_note.setWordWrap(True)
        form.addRow(self.separate_note)
        self.gpu_count = QSpinBox(minimum=1, maximum=1)
        self.gpu_count.setToolTip(shown(_field_help("num_processes")))
        self.gpu_count.valueChanged.connect(self._on_gpu_count_value_changed)
        self.strategy = QComboBox()
        for key, words in (
            ("ddp", self.tr("DDP: a whole copy of the model on each GPU (fastest)")),
            ("fsdp", self.tr("FSDP: the model split across the GPUs (for a model too big for one)")),
            ("deepspeed-zero2", self.tr("DeepSpeed ZeRO-2: gradients and optimizer split")),
            ("deepspeed-zero3", self.tr("DeepSpeed ZeRO-3: everything split")),
        ):
            self.strategy.addItem(words, key)
        self.strategy.setToolTip(shown(_field_help("strategy")))
        self.strategy.currentIndexChanged.connect(self.changed)
        add_field(form, "launch.num_processes", self.tr("GPUs to use"), self.gpu_count)
        add_field(form, "launch.strategy", self.tr("Strategy"), self.strategy)
        self.multi_gpu_note = QLabel()
        self.multi_gpu_note.setObjectName("hint")
        self.multi_gpu_note.setWordWrap(True)
        form.addRow(self.multi_gpu_note)
        self._multi_gpu_rows = [self.gpu_count, self.strategy, self.multi_gpu_note]
        self.job_button = QPushButton(self.tr("Export as a job for another machine or a cluster…"))
        self.job_button.setToolTip(
            self.tr(
                "Writes a folder with the config, the data, launch.sh (one machine) and a Slurm script "
                "(several); bring the run folder back with Run history › Import run"
            )
        )
        self.job_button.clicked.connect(self.job_export_requested)
        form.addRow(self.job_button)
        self._show_gpu_rows()

    def set_gpus(self, count: int) -> None:
        """How many NVIDIA GPUs this computer has: with two or more, the widget offers to use them."""
        self._gpus = count
        self.gpu_count.setMaximum(max(1, count))
        deepspeed = installed("deepspeed") and not _on_windows()
        model = self.strategy.model()
        for row in (2, 3):  # the DeepSpeed strategies
            model.item(row).setEnabled(deepspeed)
            model.item(row).setToolTip(
                ""
                if deepspeed
                else self.tr("Needs the deepspeed package (pip install deepspeed; Linux only)")
            )
        self._show_gpu_rows()

    def show_config(self, config: RunConfig) -> None:
        """Show the ``[launch]`` section of ``config`` (no signal: nothing was changed by the user)."""
        launch = config.launch
        for widget in (self.separate_process, self.gpu_count, self.strategy):
            widget.blockSignals(True)
        self.separate_process.setChecked(launch.separate_process or launch.distributed)
        self.gpu_count.setMaximum(max(self.gpu_count.maximum(), launch.num_processes))
        self.gpu_count.setValue(launch.num_processes)
        self.separate_process.setEnabled(launch.num_processes == 1)
        self.strategy.setCurrentIndex(max(0, self.strategy.findData(launch.strategy)))
        for widget in (self.separate_process, self.gpu_count, self.strategy):
            widget.blockSignals(False)
        self._update_multi_gpu_note()

    def apply_to(self, config: RunConfig) -> None:
        """Write the ``[launch]`` fields shown into ``config``."""
        config.launch.separate_process = self.separate_process.isChecked()
        config.launch.num_processes = self.gpu_count.value()
        config.launch.strategy = self.strategy.currentData() or "ddp"

    def _show_gpu_rows(self) -> None:
        several = self._gpus >= 2
        form = self.gpu_count.parentWidget().layout()
        for widget in self._multi_gpu_rows:
            form.setRowVisible(widget, several)
        self._update_multi_gpu_note()

    def _on_gpu_count_value_changed(self) -> None:
        if self.gpu_count.value() > 1 and not self.separate_process.isChecked():
            self.separate_process.setChecked(True)  # several GPUs always train in child processes
        self.separate_process.setEnabled(self.gpu_count.value() == 1)
        self._update_multi_gpu_note()
        self.gpu_count_changed.emit()

    def _update_multi_gpu_note(self) -> None:
        if self.gpu_count.value() <= 1:
            text = self.tr(
                "One GPU. With more, the run is split into one process per GPU (accelerate launch)."
            )
        elif _on_windows():
            text = self.tr(
                "{count} processes through accelerate launch; progress comes from the first. On Windows the "
                "GPUs exchange gradients with gloo, through system memory (PyTorch has no NCCL for "
                "Windows): each step waits longer for that exchange than on Linux, so {count} GPUs gain less "
                "than {count} times the speed. For the most speed, train on Linux or WSL2."
            ).format(count=self.gpu_count.value())
        else:
            text = self.tr(
                "{count} processes through accelerate launch (NCCL); progress, plots and checkpoints come "
                "from the first. The memory estimate is per GPU."
            ).format(count=self.gpu_count.value())
        self.multi_gpu_note.setText(text)
