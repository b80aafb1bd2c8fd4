"""After a GGUF export: llama.cpp's verdict, Add to Ollama, LM Studio, and llama.cpp itself on demand."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from desktop.gui.app_support.workers import BackgroundTask
from desktop.gui.widgets.error_label import show_error
from desktop.gui.widgets.progress_bar import ProgressBar
from desktop.shared_ui import shown


class GgufPanel(QWidget):
    """What a GGUF export made and what to do with it next; hidden until there is one.

    - the verdict: verified by llama.cpp (how many answers agree), unverified (where they part), or not
      checked (why), and *Install llama.cpp* when that is the reason;
    - *Add to Ollama* (``ollama create``, with progress), then the ``ollama run`` line to copy; without
      Ollama, how to get it;
    - where LM Studio finds the file.
    """

    llama_cpp_installed = Signal()
    """llama.cpp was installed from here: the next export is checked."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.export: Any = None
        self._task: BackgroundTask | None = None
        self._doing = ""
        self._cancel = threading.Event()
        self.written = QLabel()
        self.written.setWordWrap(True)
        self.written.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.verdict = QLabel()
        self.verdict.setWordWrap(True)
        self.difference = QLabel()
        self.difference.setWordWrap(True)
        self.difference.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.install_button = QPushButton(self.tr("Install llama.cpp"))
        self.install_button.setToolTip(
            self.tr("Installs llama-cpp-python into the app's Python: it checks GGUF files and makes q4_k_m")
        )
        self.install_button.clicked.connect(self.install_llama_cpp)
        self.ollama_button = QPushButton(self.tr("Add to Ollama"))
        self.ollama_button.clicked.connect(self.add_to_ollama)
        self.quantize_check = QCheckBox(self.tr("as q4_K_M (Ollama quantizes it)"))
        self.quantize_check.setToolTip(
            self.tr("Ollama makes the 4-bit model from this f16 file as it takes it; llama.cpp is not needed")
        )
        self.ollama_check = QPushButton(self.tr("Check again"))
        self.ollama_check.clicked.connect(self.refresh_ollama)
        self.ollama_status = QLabel()
        self.ollama_status.setWordWrap(True)
        self.ollama_status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.ollama_status.setOpenExternalLinks(True)
        self.copy_button = QPushButton(self.tr("Copy"))
        self.copy_button.clicked.connect(self._copy_run_line)
        self.open_button = QPushButton(self.tr("Open folder"))
        self.open_button.clicked.connect(self._open_folder)
        self.lm_studio = QLabel()
        self.lm_studio.setWordWrap(True)
        self.lm_studio.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.busy = ProgressBar()
        self.busy.setRange(0, 100)
        self.busy.setVisible(False)
        self._run_line = ""
        for label in (self.written, self.verdict, self.difference, self.ollama_status, self.lm_studio):
            # Wrapped labels ask for the height of a narrow wrap: the room left over goes below, not between.
            label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
            label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)

        file_row = QHBoxLayout()
        file_row.addWidget(self.written, 1)
        file_row.addWidget(self.open_button, 0, Qt.AlignmentFlag.AlignTop)
        checks = QHBoxLayout()
        checks.addWidget(self.install_button)
        checks.addStretch()
        grid = QGridLayout()
        grid.setColumnStretch(1, 1)
        grid.addWidget(QLabel(self.tr("Ollama:")), 0, 0, Qt.AlignmentFlag.AlignTop)
        grid.addWidget(self.ollama_status, 0, 1)
        ollama_buttons = QHBoxLayout()
        for button in (self.quantize_check, self.ollama_button, self.ollama_check, self.copy_button):
            ollama_buttons.addWidget(button)
        grid.addLayout(ollama_buttons, 0, 2, Qt.AlignmentFlag.AlignTop)
        grid.addWidget(QLabel(self.tr("LM Studio:")), 1, 0, Qt.AlignmentFlag.AlignTop)
        grid.addWidget(self.lm_studio, 1, 1, 1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(file_row)
        layout.addWidget(self.verdict)
        layout.addWidget(self.difference)
        layout.addLayout(checks)
        layout.addLayout(grid)
        layout.addWidget(self.busy)
        layout.addStretch()
        self.setVisible(False)

    def show_export(self, export: Any) -> None:
        """Show a :class:`~desktop.core.results.gguf_export.GgufExport`."""
        from desktop.core.results.gguf_check import llama_cpp_available
        from desktop.core.system.errors import human_size

        self.export = export
        check = export.verification
        self.written.setText(
            self.tr("Exported to {file} ({size}).").format(file=export.path, size=human_size(export.size))
        )
        self.verdict.setText(shown(check.summary()))
        self.verdict.setObjectName("verified" if check.verified else "warning")
        self.verdict.style().polish(self.verdict)
        difference, note = check.difference(), export.ollama_note() or export.ollama_summary()
        said = [shown(words) for words in (difference, note) if words is not None]  # note: the TEMPLATE
        self.difference.setText("\n".join(said))
        self.difference.setVisible(bool(said))
        self.install_button.setVisible(not check.checked and not llama_cpp_available())
        self._run_line = ""
        self.refresh_ollama()
        self._show_lm_studio()
        self.setVisible(True)

    def refresh_ollama(self) -> None:
        """Look for Ollama again (installed? running?) and say what can be done."""
        from desktop.core.results import ollama

        if self.export is None:
            return
        found = ollama.state()
        advice = found.advice()
        if self._run_line:
            self.ollama_status.setText(
                self.tr("Added. In a terminal: {command}").format(command=self._run_line)
            )
        elif advice:
            text = shown(advice)
            url = ollama.DOWNLOAD_URL
            self.ollama_status.setText(text.replace(url, f'<a href="{url}">{url}</a>'))
        else:
            self.ollama_status.setText(
                self.tr("Ollama {version} is running: add the model as {name}.").format(
                    version=found.version, name=self.export.ollama_name
                )
            )
        self.ollama_button.setVisible(not advice and not self._run_line)
        self.quantize_check.setVisible(not advice and not self._run_line and self.export.quant == "f16")
        self.ollama_button.setEnabled(self._task is None)
        self.ollama_check.setVisible(bool(advice))
        self.copy_button.setVisible(bool(self._run_line))

    def add_to_ollama(self) -> None:
        """``ollama create`` in the background, with Ollama's progress."""
        from desktop.core.results import ollama

        name, modelfile, cancel = self.export.ollama_name, self.export.modelfile, self._cancel
        quantize = "q4_K_M" if self.quantize_check.isVisible() and self.quantize_check.isChecked() else ""
        if quantize:
            name = name.removesuffix("-f16") + "-q4_k_m"

        def work(task: BackgroundTask) -> str:
            def report(line: str, done: float) -> None:
                task.report((line, done))

            return ollama.create(name, modelfile, report, cancel, quantize)

        self._start("ollama", work, self._on_added)
        self.ollama_status.setText(self.tr("Adding to Ollama…"))

    def install_llama_cpp(self) -> None:
        """Install llama.cpp's binding in the background, with pip's progress."""
        from desktop.core.environment.llama_install import install_llama_cpp

        cancel = self._cancel

        def work(task: BackgroundTask) -> Any:
            return install_llama_cpp(
                lambda line: task.report((line, None)), lambda done: task.report(("", done)), cancel
            )

        self._start("install", work, self._on_installed)
        self.difference.setVisible(True)
        self.difference.setText(self.tr("Installing llama.cpp…"))

    def is_busy(self) -> bool:
        return self._task is not None

    def shutdown(self) -> None:
        self._cancel.set()

    def _start(self, doing: str, work: Callable[[BackgroundTask], Any], finished: Any) -> None:
        """Run ``work`` (given its task, to report progress through) in the background."""
        self._cancel.clear()
        self._doing = doing
        task = BackgroundTask(lambda: work(task), self)
        task.progressed.connect(self._on_progress)
        task.finished.connect(finished)
        task.failed.connect(self._on_failed)
        self._task = task
        for button in (self.ollama_button, self.install_button):
            button.setEnabled(False)
        self.busy.setValue(0)
        self.busy.setVisible(True)
        task.start()

    def _ended(self) -> None:
        self._task = None
        self.busy.setVisible(False)
        for button in (self.ollama_button, self.install_button):
            button.setEnabled(True)

    def _on_progress(self, value: object) -> None:
        line, done = value  # type: ignore[misc]
        if done is not None:
            self.busy.setValue(round(done * 100))
        if line:
            self.busy.setToolTip(str(line))

    def _on_added(self, run_line: object) -> None:
        self._ended()
        self._run_line = str(run_line)
        self.refresh_ollama()

    def _on_installed(self, result: object) -> None:
        self._ended()
        self.difference.setText(shown(result.message))
        self.difference.setToolTip("\n".join(result.lines[-20:]))
        if result.ok:
            from desktop.core.settings.options import forget_installed

            forget_installed()
            self.install_button.setVisible(False)
            self.llama_cpp_installed.emit()

    def _on_failed(self, exc: object, detail: str) -> None:
        self._ended()
        label = self.difference if self._doing == "install" else self.ollama_status
        show_error(label, exc)  # type: ignore[arg-type]
        self.difference.setVisible(True)

    def _show_lm_studio(self) -> None:
        from desktop.core.results.gguf_export import PUBLISHER, lm_studio_folder

        folder = self.export.path.parent
        models = lm_studio_folder()
        if folder.parent.parent == models:
            self.lm_studio.setText(
                self.tr("In LM Studio's models folder: it lists the model as {name}.").format(
                    name=f"{PUBLISHER}/{folder.name}"
                )
            )
        else:
            self.lm_studio.setText(
                self.tr(
                    "LM Studio loads models from {models}, one folder per publisher and model: choose the "
                    "LM Studio layout and that folder, or move {folder} there."
                ).format(models=models, folder=folder)
            )

    def _copy_run_line(self) -> None:
        QGuiApplication.clipboard().setText(self._run_line)

    def _open_folder(self) -> None:
        if self.export is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(Path(self.export.path).parent)))
