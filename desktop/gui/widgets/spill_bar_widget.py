"""The bar that says Windows is paging a run's GPU memory into system RAM, with the two ways out."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton

from desktop.core.environment.spill import SpillWatch

GB = 1024**3


def _on_windows() -> bool:
    """Whether the app runs on Windows (a function, so tests can say it does)."""
    return sys.platform == "win32"


def _nvidia_control_panel() -> str | None:
    """The NVIDIA Control Panel's program, where the driver installed it (the Store version has none)."""
    import os

    for base in (os.environ.get("PROGRAMFILES", r"C:\Program Files"), os.environ.get("PROGRAMW6432", "")):
        candidate = Path(base) / "NVIDIA Corporation" / "Control Panel Client" / "nvcplui.exe"
        if base and candidate.is_file():
            return str(candidate)
    return None


def _open_program(path: str) -> None:
    from desktop.core.system import processes

    processes.popen([path])


class SpillBarWidget(QFrame):
    """Watches a run's progress and memory (see :mod:`desktop.core.environment.spill`); once Windows
    pages the run's GPU memory into shared system memory, says so, how much slower the steps are, and
    offers Fit my GPU or turning the fallback off. Hidden until then."""

    fit_requested = Signal()
    """The user asked to stop the run and fit the settings to the GPU."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("banner")
        self.text_label = QLabel()
        self.text_label.setWordWrap(True)
        self.fit_button = QPushButton(self.tr("Stop and fit my GPU"))
        self.fit_button.clicked.connect(self.fit_requested)
        self.help_button = QPushButton(self.tr("Turn the fallback off…"))
        self.help_button.clicked.connect(self._show_fallback_steps)
        layout = QHBoxLayout(self)
        layout.addWidget(self.text_label, 1)
        layout.addWidget(self.fit_button)
        layout.addWidget(self.help_button)
        self.setVisible(False)
        self._spill = SpillWatch(windows=_on_windows())

    @property
    def windows(self) -> bool:
        """Whether the run watched is on Windows (where the driver pages instead of failing)."""
        return self._spill.windows

    def reset(self, windows: bool | None = None) -> None:
        """A run begins: nothing watched yet, the bar hidden. ``windows`` says whether the run is on
        Windows (``None``: whether this computer is)."""
        self._spill = SpillWatch(windows=_on_windows() if windows is None else windows)
        self.setVisible(False)

    def watch(self, event: object) -> str:
        """Take in a progress or memory event; the bar's text when this event shows the spill first
        (empty otherwise)."""
        self._spill.add(event)
        if not self.isHidden():
            return ""
        found = self._spill.spill()
        if found is None:
            return ""
        self.text_label.setText(
            self.tr(
                "Windows is moving this run's GPU memory into shared system memory: the card is full, and "
                "the steps are now {slowdown:.0f} times slower than at the start. Use less memory, or turn "
                "the fallback off so that the run stops with a clear out-of-memory error instead."
            ).format(slowdown=found.slowdown)
            if found.slowdown
            else self.tr(
                "Windows is moving this run's GPU memory into shared system memory: PyTorch holds more than "
                "the card's {total:.1f} GB, so every step waits for system RAM. Use less memory, or turn "
                "the fallback off so that the run stops with a clear out-of-memory error instead."
            ).format(total=found.total_bytes / GB)
        )
        self.setVisible(True)
        return self.text_label.text()

    def _show_fallback_steps(self) -> None:
        """How to set "Prefer No Sysmem Fallback" for this app's Python, with the exact paths."""
        from PySide6.QtWidgets import QMessageBox

        python = Path(sys.executable)
        names = [str(python)]
        windowed = python.with_name("pythonw.exe")
        if windowed.exists() and windowed != python:
            names.append(str(windowed))
        box = QMessageBox(self)
        box.setWindowTitle(self.tr("Turn the fallback off"))
        box.setText(
            self.tr(
                "1. Open the NVIDIA Control Panel (right-click the desktop).\n"
                "2. 3D Settings › Manage 3D settings › Program Settings › Add, and choose:\n{programs}\n"
                '3. Set "CUDA - Sysmem Fallback Policy" to "Prefer No Sysmem Fallback" and Apply.\n\n'
                "A run that needs more memory than the card has then stops with an out-of-memory error, "
                "which the app explains and offers to fix, instead of slowing down."
            ).format(programs="\n".join(names))
        )
        panel = _nvidia_control_panel()
        open_button = (
            box.addButton(self.tr("Open the NVIDIA Control Panel"), QMessageBox.ButtonRole.ActionRole)
            if panel
            else None
        )
        box.addButton(QMessageBox.StandardButton.Close)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.buttonClicked.connect(
            lambda button: _open_program(panel) if panel and button is open_button else None
        )
        box.open()
