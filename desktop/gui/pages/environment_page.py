"""Step 1: the GPUs, the installed PyTorch, a verdict in plain words, and a one-click repair."""

from __future__ import annotations

import sys
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.core.environment.diagnostics import diagnostics
from desktop.core.environment.gpu import GpuInfo, GpuReport, detect_gpus
from desktop.core.environment.repair import RepairPlan, plan_repair
from desktop.core.environment.torch_probe import TorchInfo, probe_torch
from desktop.core.environment.wheels import Verdict, verdict
from desktop.core.settings.options import Capabilities, installed
from desktop.core.system.secrets import recall_url, redact, remember_url
from desktop.gui.app_support.workers import BackgroundTask
from desktop.gui.controllers.repair_controller import RepairController
from desktop.gui.pages.base import WizardPage
from desktop.gui.widgets.progress_bar import ProgressBar
from desktop.shared_ui import Key, Settings, shown

GB = 1024**3


def check_environment() -> tuple[GpuReport, TorchInfo]:
    """Read the GPUs (NVML, in this process) and probe torch (in a child process)."""
    return detect_gpus(), probe_torch()


class GpuInfoWidget(QFrame):
    """A card for one GPU: name, VRAM in use, compute capability, driver and its CUDA."""

    def __init__(self, gpu: GpuInfo, report: GpuReport) -> None:
        super().__init__()
        self.setObjectName("card")
        name = QLabel(gpu.name)
        name.setObjectName("cardTitle")
        layout = QVBoxLayout(self)
        layout.addWidget(name)
        if gpu.memory_total:
            used = gpu.memory_total - (gpu.memory_free or 0)
            bar = QProgressBar()
            bar.setRange(0, 1000)
            bar.setValue(int(1000 * used / gpu.memory_total))
            bar.setFormat(
                self.tr("{used:.1f} of {total:.1f} GB in use").format(
                    used=used / GB, total=gpu.memory_total / GB
                )
            )
            layout.addWidget(bar)
        facts = []
        if gpu.capability:
            facts.append(
                self.tr("compute capability {major}.{minor}").format(
                    major=gpu.capability[0], minor=gpu.capability[1]
                )
            )
        if gpu.vendor == "nvidia" and report.driver_version:
            facts.append(self.tr("driver {driver}").format(driver=report.driver_version))
        if gpu.vendor == "nvidia" and report.cuda_driver:
            facts.append(
                self.tr("CUDA up to {major}.{minor}").format(
                    major=report.cuda_driver[0], minor=report.cuda_driver[1]
                )
            )
        if gpu.utilization is not None:
            facts.append(self.tr("{percent}% busy").format(percent=gpu.utilization))
        details = QLabel(" · ".join(facts) or gpu.vendor.upper())
        details.setObjectName("hint")
        layout.addWidget(details)


class EnvironmentPage(WizardPage):
    """Shows the GPUs and PyTorch, judges them, and installs the matching PyTorch on request."""

    checked = Signal()
    """A check finished: :attr:`verdict_now` is up to date."""
    restart_requested = Signal()
    swap_requested = Signal(object)
    """The launcher should swap PyTorch at its next start (a ``RepairPlan``): the app runs from the
    launcher's runtime, which it cannot change under itself."""
    """torch is loaded in this process, so the repair must run in a fresh start of the app."""

    def __init__(self, settings: Settings | None = None, check: Any = check_environment) -> None:
        super().__init__()
        self.title = self.tr("Environment")
        self.subtitle = self.tr("Your GPU, your PyTorch, and whether they work together.")
        self._settings = settings
        self._check = check
        self._task: BackgroundTask | None = None
        self._shut_down = False
        self.report: GpuReport | None = None
        self.info: TorchInfo | None = None
        self.verdict_now: Verdict | None = None
        self.plan: RepairPlan | None = None
        self.repair = RepairController(self)
        self.repair.line_emitted.connect(self._on_repair_line_emitted)
        self.repair.progress_changed.connect(self._on_repair_progress_changed)
        self.repair.repair_finished.connect(self._on_repair_repair_finished)

        self.verdict = QLabel(self.tr("Checking your GPU and PyTorch…"))
        self.verdict.setObjectName("verdict")
        self.verdict.setWordWrap(True)
        self.explanation = QLabel()
        self.explanation.setWordWrap(True)
        self.plan_label = QLabel()
        self.plan_label.setObjectName("hint")
        self.plan_label.setWordWrap(True)
        self._blocked = ""
        self.install_button = QPushButton(self.tr("Install the matching PyTorch"))
        self.install_button.setObjectName("primary")
        self.install_button.clicked.connect(self.start_repair)
        self.install_button.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
        self.cancel_button = QPushButton(self.tr("Cancel"))
        self.cancel_button.clicked.connect(self.repair.cancel)
        self.progress = ProgressBar()
        self.progress.setRange(0, 100)
        self.log_button = QToolButton(text=self.tr("Show log"), checkable=True)
        self.log = QPlainTextEdit(readOnly=True)
        self.log.setMaximumBlockCount(5000)
        self.log_button.toggled.connect(self.log.setVisible)
        self.result_label = QLabel()
        self.result_label.setWordWrap(True)
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumWidth(160)

        saved = recall_url(Key.INDEX_URL.value, settings.text(Key.INDEX_URL)) if settings else ""
        self.index_edit = QLineEdit(saved)
        self.index_edit.setPlaceholderText(self.tr("https://download.pytorch.org/whl (default)"))
        self.index_edit.setToolTip(
            self.tr("A mirror or private index with PyTorch wheels, for slow or blocked networks")
        )
        self.index_edit.editingFinished.connect(self._on_index_changed)
        self.check_button = QPushButton(self.tr("Check again"))
        self.check_button.clicked.connect(self.check)
        self.copy_button = QPushButton(self.tr("Copy diagnostics"))
        self.copy_button.setToolTip(self.tr("Copy a report of this machine to paste into a bug report"))
        self.copy_button.clicked.connect(self.copy_diagnostics)

        self.gpu_area = QWidget()
        self.gpu_grid = QGridLayout(self.gpu_area)
        self.gpu_grid.setContentsMargins(0, 0, 0, 0)
        self.torch_label = QLabel("–")
        self.torch_label.setWordWrap(True)

        actions = QHBoxLayout()
        actions.addWidget(self.install_button)
        actions.addWidget(self.cancel_button)
        actions.addWidget(self.progress, 1)
        actions.addWidget(self.log_button)
        actions.addStretch()
        index_row = QHBoxLayout()
        index_row.addWidget(QLabel(self.tr("Package index:")))
        index_row.addWidget(self.index_edit, 1)
        bottom = QHBoxLayout()
        bottom.addWidget(self.busy)
        bottom.addStretch()
        bottom.addWidget(self.copy_button)
        bottom.addWidget(self.check_button)

        layout = QVBoxLayout(self)
        layout.addWidget(self.verdict)
        layout.addWidget(self.explanation)
        layout.addWidget(self.plan_label)
        layout.addLayout(actions)
        layout.addWidget(self.result_label)
        layout.addWidget(self.log, 1)
        layout.addWidget(self.gpu_area)
        layout.addWidget(self.torch_label)
        layout.addLayout(index_row)
        layout.addStretch()
        layout.addLayout(bottom)
        self._show_repair_controls(False)

    # ------------------------------------------------------------------ checking

    def check(self) -> None:
        """Read GPUs and probe torch off the GUI thread (the probe takes a few seconds)."""
        if self._task is not None or self.repair.is_running() or self._shut_down:
            return
        self.verdict.setText(self.tr("Checking your GPU and PyTorch…"))
        self.busy.setVisible(True)
        self.check_button.setEnabled(False)
        self._task = BackgroundTask(self._check, self)
        self._task.finished.connect(self._on_task_finished)
        self._task.failed.connect(self._on_task_failed)
        self._task.start()

    def shutdown(self) -> None:
        self._shut_down = True  # a check scheduled for later must not start a thread now
        if self._task is not None:
            self._task.cancel()
        # A running install is left to finish on its own: stopping uv halfway leaves PyTorch half-replaced.

    def nvidia_gpus(self) -> list[GpuInfo]:
        """The NVIDIA GPUs the last check found (none before the first)."""
        return self.report.nvidia if self.report else []

    def capabilities(self) -> Capabilities:
        """What this computer's PyTorch and packages can do, for the options a run may use."""
        info = self.info
        return Capabilities(
            cuda=bool(info and info.cuda_available),
            bf16=bool(info and info.bf16),
            bitsandbytes=installed("bitsandbytes"),
            triton=installed("triton"),
            flash_attn=installed("flash_attn"),
            liger=installed("liger_kernel"),
        )

    def show_findings(self, report: GpuReport, info: TorchInfo) -> None:
        """Show a check's result and its verdict."""
        self.report, self.info = report, info
        system = "windows" if sys.platform == "win32" else "linux"
        result = verdict(report, info, system)
        self.verdict_now = result
        self.verdict.setText(shown(result.headline))
        self.explanation.setText(shown(result.explanation))
        self.plan = None
        if result.target is not None:
            self.plan = plan_repair(result.target, index_url=self.index_edit.text(), previous=info.version)
            text = self.tr("Installs {requirements} from {index} with {tool}.").format(
                requirements=", ".join(self.plan.requirements),
                index=redact(self.plan.index_url),
                tool=self.plan.tool,
            )
            if result.target.warning:
                text = self.tr("{plan} {warning}").format(plan=text, warning=shown(result.target.warning))
            self.plan_label.setText(text)
        self._show_repair_controls(self.plan is not None)
        while self.gpu_grid.count():
            self.gpu_grid.takeAt(0).widget().deleteLater()
        for i, gpu in enumerate(report.gpus):
            self.gpu_grid.addWidget(GpuInfoWidget(gpu, report), i // 2, i % 2)
        if info.installed:
            build = (
                f"CUDA {info.cuda_build}"
                if info.cuda_build
                else (f"ROCm {info.hip_build}" if info.hip_build else self.tr("CPU only"))
            )
            self.torch_label.setText(
                self.tr("PyTorch {version} ({build})").format(version=info.version, build=build)
            )
        else:
            self.torch_label.setText(self.tr("PyTorch is not installed."))
        self.validity_changed.emit()
        self.checked.emit()

    def _done(self) -> None:
        self._task = None
        self.busy.setVisible(False)
        self.check_button.setEnabled(True)

    def _on_task_finished(self, result: tuple[GpuReport, TorchInfo]) -> None:
        self._done()
        self.show_findings(*result)

    def _on_task_failed(self, exc: object, detail: str) -> None:
        self._done()
        self.verdict.setText(self.tr("The check failed: {error}").format(error=exc))

    # ------------------------------------------------------------------ repairing

    def _show_repair_controls(self, visible: bool) -> None:
        self.plan_label.setVisible(visible)
        self.install_button.setVisible(visible)
        running = self.repair.is_running()
        self.cancel_button.setVisible(running)
        self.progress.setVisible(running or self.progress.value() > 0)
        self.log_button.setVisible(running or bool(self.log.toPlainText()))
        self.log.setVisible(self.log_button.isChecked() and self.log_button.isVisible())

    def start_repair(self) -> None:
        """Install the planned build; if torch is loaded here, ask for a restart first."""
        if self.plan is None:
            return
        if self._blocked:
            self.result_label.setText(self._blocked)
            return
        from desktop.core.environment.swap_request import launcher_for_swap
        from desktop.core.system.instance import others_running

        if launcher_for_swap() is not None:
            self.swap_requested.emit(self.plan)
            return
        others = others_running()
        if others:  # their PyTorch DLLs are in use: uv would stop halfway through the swap
            self.result_label.setText(
                self.tr(
                    "Finetune Studio is still running elsewhere ({others}). Close those windows and "
                    "command-line runs, then press Install again."
                ).format(others=", ".join(others))
            )
            return
        if "torch" in sys.modules:
            # Windows keeps torch's DLLs locked while this process runs; repair in a fresh start.
            self.restart_requested.emit()
            return
        self.log.clear()
        self.result_label.setText("")
        self.progress.setValue(0)
        self.install_button.setEnabled(False)
        self.check_button.setEnabled(False)
        self.repair.start(self.plan)
        self._show_repair_controls(True)

    def set_blocked(self, reason: str) -> None:
        """Keep Install disabled while ``reason`` (a run or an export in progress) holds; "" lifts it."""
        self._blocked = reason
        self.install_button.setEnabled(not reason and not self.repair.is_running())
        self.install_button.setToolTip(reason)

    def _on_repair_line_emitted(self, line: str) -> None:
        self.log.appendPlainText(line)

    def _on_repair_progress_changed(self, share: float) -> None:
        self.progress.setValue(int(share * 100))

    def _on_repair_repair_finished(self, result: Any, proof: Any) -> None:
        from desktop.core.settings.options import forget_installed

        forget_installed()  # the repair may have installed bitsandbytes or triton with PyTorch
        self.install_button.setEnabled(not self._blocked)
        self.check_button.setEnabled(True)
        if result.ok and proof is not None and proof.ok:
            text = self.tr(
                "{message} Proved: a matrix multiplication ran on {device} in {seconds:.2f} s."
            ).format(message=shown(result.message), device=proof.device, seconds=proof.seconds)
        elif result.ok:
            error = proof.error if proof is not None else ""
            text = self.tr("{message} But the GPU test failed: {error}").format(
                message=shown(result.message), error=error
            )
        else:
            text = shown(result.message)
            self.log_button.setChecked(True)
        self.result_label.setText(text)
        self._show_repair_controls(self.plan is not None)
        if result.probe is not None and self.report is not None:
            self.show_findings(self.report, result.probe)

    # ------------------------------------------------------------------ settings and diagnostics

    def _on_index_changed(self) -> None:
        if self._settings:
            url = self.index_edit.text().strip()
            self._settings.set_text(Key.INDEX_URL, remember_url(Key.INDEX_URL.value, url))
        if self.report is not None and self.info is not None:
            self.show_findings(self.report, self.info)

    def copy_diagnostics(self) -> None:
        """Put the diagnostics text on the clipboard."""
        if self.report is None or self.info is None:
            return
        QGuiApplication.clipboard().setText(diagnostics(self.report, self.info, self.verdict_now))
        self.result_label.setText(self.tr("Diagnostics copied: paste them into your bug report."))
