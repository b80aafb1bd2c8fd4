"""The launcher's setup window: progress while the runtime is set up, and a clear way out when it fails."""

from __future__ import annotations

import functools
import threading
import traceback
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Qt, QThread, Signal, Slot
from PySide6.QtGui import QCloseEvent, QGuiApplication
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.core.environment.swap_request import SwapRequest
from desktop.core.system.messages import msg
from desktop.core.system.paths import APP_NAME
from desktop.launcher.runtime import MIRRORS, Bundle, Cancelled, Options, Runtime, SetupError, setup
from desktop.launcher.swap import swap_torch
from desktop.shared_ui import shown


class _SetupWorker(QObject):
    line = Signal(str)
    progressed = Signal(float, str)
    succeeded = Signal()
    failed = Signal(str, str, str, bool)
    """Message, hint, log tail, and whether the user cancelled."""

    def __init__(self, job: Callable[..., object]) -> None:
        super().__init__()
        self.cancel = threading.Event()
        self._job = job

    @Slot()
    def run(self) -> None:
        # Every failure becomes a signal; none may escape into Qt's event loop.
        try:
            self._job(
                on_line=self.line.emit,
                on_progress=self.progressed.emit,
                cancel=self.cancel,
            )
        except SetupError as exc:
            # In the user's language here: a signal carries plain text, not the message's template.
            self.failed.emit(shown(exc.message), shown(exc.hint), exc.log, isinstance(exc, Cancelled))
        except Exception as exc:
            self.failed.emit(
                shown(msg("Setup failed: {error}", error=exc)),
                shown(msg("Try again, or start with --repair.")),
                traceback.format_exc(),
                False,
            )
        else:
            self.succeeded.emit()


class SetupWindow(QWidget):
    """Sets up the runtime with visible progress; ``finished_setup`` says it ended, ``ok`` how.

    Args:
        interactive: On failure, wait for the user (Try again / Close). ``False`` (smoke tests) ends
            at once with ``ok = False``.
        swap: Instead of a setup, swap the runtime's PyTorch for this build (the app asked for it).
        choose_place: The first start: show where the data goes (Change… moves it) and wait for Install.
    """

    finished_setup = Signal()

    def __init__(
        self,
        runtime: Runtime,
        bundle: Bundle,
        options: Options,
        data_dir: Path,
        fresh: bool,
        interactive: bool = True,
        on_mirror_changed: object = None,
        swap: SwapRequest | None = None,
        choose_place: bool = False,
    ) -> None:
        super().__init__()
        self.setWindowTitle(self.tr("Finetune Studio: setting up"))
        self.setMinimumWidth(620)
        self._args = (runtime, bundle, options, data_dir)
        self._fresh = fresh
        self._swap = swap
        self._interactive = interactive
        self._on_mirror_changed = on_mirror_changed
        self._thread: QThread | None = None
        self._worker: _SetupWorker | None = None
        self.ok = False
        self.failure = ""
        """The last failure's message and hint (empty when none)."""
        self._headline_before_failure = ""
        self._reported = False

        first = not runtime.root.exists()
        self.headline = QLabel(
            self.tr(
                "Installing PyTorch {requirement}. The PyTorch you have keeps working until the new "
                "one is complete."
            ).format(requirement=swap.requirement.removeprefix("torch=="))
            if swap is not None
            else self.tr("Setting up Finetune Studio. This happens once and takes a few minutes.")
            if first
            else self.tr("Repairing Finetune Studio's runtime.")
            if fresh
            else self.tr("Updating Finetune Studio to version {version}.").format(version=bundle.version)
        )
        self.headline.setWordWrap(True)
        font = self.headline.font()
        font.setPointSizeF(font.pointSizeF() * 1.2)
        font.setBold(True)
        self.headline.setFont(font)
        self.step = QLabel()
        self.step.setWordWrap(True)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.problem = QLabel()
        self.problem.setWordWrap(True)
        self.problem.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.problem.setVisible(False)
        self.details_button = QToolButton(text=self.tr("Details"), checkable=True)
        self.log = QPlainTextEdit(readOnly=True)
        self.log.setMaximumBlockCount(3000)
        self.log.setMinimumHeight(160)
        self.log.setVisible(False)
        self.details_button.toggled.connect(self.log.setVisible)
        self.mirror = QLineEdit(options.index_url)
        self.mirror.setPlaceholderText(self.tr("https://pypi.tuna.tsinghua.edu.cn/simple (optional)"))
        self.torch_mirror = QLineEdit(options.torch_index_url)
        self.torch_mirror.setPlaceholderText(
            self.tr("https://download.pytorch.org/whl/cu126 or a mirror of it (optional)")
        )
        self.python_mirror = QLineEdit(options.python_mirror)
        self.python_mirror.setPlaceholderText(
            self.tr("https://registry.npmmirror.com/-/binary/python-build-standalone (optional)")
        )
        self.proxy = QLineEdit(options.proxy)
        self.proxy.setPlaceholderText(self.tr("http://proxy.example.com:8080 (optional)"))
        self.mirrors = QWidget()
        mirrors = QFormLayout(self.mirrors)
        mirrors.setContentsMargins(0, 0, 0, 0)
        mirrors.addRow(self.tr("Package mirror:"), self.mirror)
        mirrors.addRow(self.tr("PyTorch mirror:"), self.torch_mirror)
        mirrors.addRow(self.tr("Python mirror:"), self.python_mirror)
        mirrors.addRow(self.tr("Proxy:"), self.proxy)
        self.mirrors.setVisible(False)
        self.cancel_button = QPushButton(self.tr("Cancel"))
        self.cancel_button.clicked.connect(self._cancel)
        self.retry_button = QPushButton(self.tr("Try again"))
        self.retry_button.clicked.connect(self.start)
        self.retry_button.setVisible(False)
        self.copy_button = QPushButton(self.tr("Copy log"))
        self.copy_button.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.log.toPlainText()))
        self.close_button = QPushButton(self.tr("Close"))
        self.close_button.clicked.connect(self.close)
        self.close_button.setVisible(False)

        self.place = QLabel(str(data_dir))
        self.place.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.place.setWordWrap(True)
        self.change_place_button = QPushButton(self.tr("Change…"))
        self.change_place_button.setToolTip(
            self.tr("Another drive, if this one is small: the runtime, runs and downloaded models go there")
        )
        self.change_place_button.clicked.connect(self._change_place)
        self.place_row = QWidget()
        place = QHBoxLayout(self.place_row)
        place.setContentsMargins(0, 0, 0, 0)
        place.addWidget(QLabel(self.tr("Data folder:")))
        place.addWidget(self.place, 1)
        place.addWidget(self.change_place_button)
        self.place_row.setVisible(choose_place)
        self.install_button = QPushButton(self.tr("Install"))
        self.install_button.setDefault(True)
        self.install_button.clicked.connect(self.start)
        self.install_button.setVisible(choose_place)
        self.waits_for_install = choose_place
        """Whether the setup starts from the Install button (the first start), not at once."""
        if choose_place:
            self.step.setText(
                self.tr(
                    "It needs about 3 GB of space (about 10 GB with an NVIDIA GPU) in the data folder below."
                )
            )

        buttons = QHBoxLayout()
        buttons.addWidget(self.details_button)
        buttons.addStretch()
        for button in (
            self.copy_button,
            self.install_button,
            self.retry_button,
            self.cancel_button,
            self.close_button,
        ):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.headline)
        layout.addWidget(self.step)
        layout.addWidget(self.place_row)
        layout.addWidget(self.progress)
        layout.addWidget(self.problem)
        layout.addWidget(self.mirrors)
        layout.addWidget(self.log, 1)
        layout.addLayout(buttons)

    def _change_place(self) -> None:
        """Move the (still almost empty) data folder where the user chooses, before anything is installed."""
        from PySide6.QtWidgets import QFileDialog

        from desktop.core.system.data_location import move_data
        from desktop.launcher.moving import planned

        runtime, bundle, options, data_dir = self._args
        chosen = QFileDialog.getExistingDirectory(
            self, self.tr("Put the data folder in"), str(data_dir.parent)
        )
        if not chosen:
            return
        target = Path(chosen)
        if target.name != APP_NAME and any(target.iterdir()):
            target = target / APP_NAME  # D:\ is not filled: D:\FinetuneStudio
        try:
            move_data(planned(data_dir, target))  # a few small files before the first setup
        except SetupError as exc:
            self.problem.setText(f"<b>{shown(exc.message)}</b><br>{shown(exc.hint)}")
            self.problem.setVisible(True)
            return
        except OSError as exc:
            self.problem.setText(self.tr("The data folder could not be moved: {error}").format(error=exc))
            self.problem.setVisible(True)
            return
        self.problem.setVisible(False)
        self._args = (Runtime(target / runtime.root.name), bundle, options, target)
        self.place.setText(str(target))

    def start(self) -> None:
        """Run the setup on a worker thread."""
        self.place_row.setVisible(False)
        self.install_button.setVisible(False)
        runtime, bundle, options, data_dir = self._args
        options.index_url = self.mirror.text().strip()
        options.torch_index_url = self.torch_mirror.text().strip()
        options.python_mirror = self.python_mirror.text().strip()
        options.proxy = self.proxy.text().strip()
        if callable(self._on_mirror_changed):
            self._on_mirror_changed({key: getattr(options, key) for key in MIRRORS})
        self._reported = False
        if self._headline_before_failure:
            self.headline.setText(self._headline_before_failure)
        self.progress.setVisible(True)
        self.problem.setVisible(False)
        self.mirrors.setVisible(False)
        self.retry_button.setVisible(False)
        self.close_button.setVisible(False)
        self.cancel_button.setVisible(True)
        self.cancel_button.setEnabled(True)
        self.progress.setValue(0)
        self._thread = QThread()
        if self._swap is not None:
            job = functools.partial(swap_torch, runtime, bundle, options, data_dir, self._swap)
        else:
            # A failed setup is repaired from scratch: a half-made venv is never patched up.
            fresh = self._fresh or runtime.marker() is None
            job = functools.partial(setup, runtime, bundle, options, data_dir, fresh)
        self._worker = _SetupWorker(job)
        self._worker.moveToThread(self._thread)
        self._thread.started.connect(self._worker.run)
        self._worker.line.connect(self.log.appendPlainText)
        self._worker.progressed.connect(self._on_worker_progressed)
        self._worker.succeeded.connect(self._on_worker_succeeded)
        self._worker.failed.connect(self._on_worker_failed)
        self._thread.start()

    def _end_thread(self) -> None:
        if self._thread is not None:
            self._thread.quit()
            self._thread.wait()
            # Python owns both: dropping the references deletes them (a deleteLater as well would be a
            # second delete when the event loop has already ended).
            self._thread = self._worker = None

    @Slot(float, str)
    def _on_worker_progressed(self, fraction: float, key: str) -> None:
        self.show_progress(fraction, key)

    def show_progress(self, fraction: float, key: str) -> None:
        """How far the setup is (0 to 1) and the step it is at (``python``, ``torch``, ``app``, ...)."""
        self.progress.setValue(round(fraction * 1000))
        titles = {
            "python": self.tr("Setting up Python…"),
            "torch": self.tr("Installing PyTorch (the largest part)…"),
            "companions": self.tr("Installing torchvision / torchaudio for this PyTorch…"),
            "swap": self.tr(
                "Putting the new PyTorch in place (once every Finetune Studio window has closed)…"
            ),
            "app": self.tr("Installing Finetune Studio and its libraries…"),
            "sample": self.tr("Installing the sample model…"),
            "torch_check": self.tr("Checking PyTorch…"),
            "check": self.tr("Checking the installation…"),
            "prune": self.tr("Tidying the download cache…"),
            "ready": self.tr("Ready. Starting Finetune Studio…"),
        }
        self.step.setText(titles.get(key, key))

    @Slot()
    def _on_worker_succeeded(self) -> None:
        self._end_thread()
        self._report(True)
        self.close()

    def _report(self, ok: bool) -> None:
        if self._reported:
            return
        self._reported, self.ok = True, ok
        self.finished_setup.emit()

    @Slot(str, str, str, bool)
    def _on_worker_failed(self, message: str, hint: str, log: str, cancelled: bool) -> None:
        self._end_thread()
        self.show_failure(message, hint, log, cancelled)

    def show_failure(self, message: str, hint: str, log: str, cancelled: bool) -> None:
        """The setup did not finish: why, what to do, Try again and Close (and the mirrors, unless the
        user cancelled); a window that is not interactive reports it and closes."""
        self.failure = f"{message}\n{hint}"
        self.problem.setText(f"<b>{message}</b><br>{hint}")
        self.problem.setVisible(True)
        self.progress.setVisible(False)
        self._headline_before_failure = self._headline_before_failure or self.headline.text()
        if self._swap is not None:
            self.headline.setText(self.tr("PyTorch was not replaced"))
            self.step.setText(
                self.tr(
                    "The PyTorch you had is unchanged: Finetune Studio starts with it when you close this."
                )
            )
        else:
            self.headline.setText(self.tr("Setup did not finish"))
            self.step.setText(
                self.tr("Nothing half-made will be used: the next start repairs it, or try again now.")
            )
        self.cancel_button.setVisible(False)
        self.retry_button.setVisible(True)
        self.close_button.setVisible(True)
        self.mirrors.setVisible(not cancelled)
        if not self._interactive:
            self.log.appendPlainText(f"{message}\n{hint}")
            self._report(False)
            self.close()

    def _cancel(self) -> None:
        if self._worker is not None:
            self._worker.cancel.set()
            self.cancel_button.setEnabled(False)
            self.step.setText(self.tr("Cancelling…"))

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._worker is not None:
            self._worker.cancel.set()
            self._end_thread()
        self._report(self.ok)
        super().closeEvent(event)
