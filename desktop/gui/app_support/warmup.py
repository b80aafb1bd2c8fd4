"""Heavy libraries imported while the user does nothing, so that no later step waits for them.

Reading data needs Arrow, pandas and NumPy; training in the window's process, export and try-it need
PyTorch and Transformers. Importing them holds Python's lock for up to ~150 ms at a time (PyTorch's
extension setting itself up, NumPy's and pandas' modules made), which no thread can avoid, and the
window would stutter if the user were acting then. A :class:`Warmup` imports one such stack once it is
wanted (the data stack from the start, the training stack once the user has a model and data) and the
app is idle: no key or mouse input for a while, no run in progress and, for the training stack, no
background task (see :data:`STACKS`). When the user acts again, the import steps aside at its next
module until they have been still for :data:`RESUME_S` (see :func:`desktop.core.system.lazy.stepping_aside`).
The data warm-up first reads the app's own files (:data:`APP_FOLDER`, the resources), which the
window's thread reads as it needs them, into the system's cache.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from PySide6.QtCore import QObject, QTimer, Signal

from desktop.core.system.heap import TRAINING_STACK
from desktop.core.system.lazy import imported
from desktop.gui.app_support import workers
from desktop.gui.app_support.plots_import import import_plots

APP_FOLDER = Path(__file__).resolve().parents[2]
"""The app's package (``desktop``), read ahead by the data warm-up."""
IDLE_S = 2.0
"""Seconds without input before the training stack's import starts."""
RESUME_S = 0.5
"""Seconds without input before the data stack's import starts, or an import the user interrupted goes
on."""


def _import_data_stack() -> None:
    import encodings.utf_8_sig  # noqa: F401  (the codec the window's thread reads configs with)
    import importlib.util

    from desktop.core.settings.options import OPTIONAL_PACKAGES, installed
    from desktop.core.system.lazy import import_data_stack
    from desktop.core.system.paths import resources_dir
    from desktop.core.system.readahead import read_folders

    # First what the window's thread reads in data load (strace of a cold start: 120 ms for the codec
    # above, then the app's modules, the sample, the icons of the histogram's buttons), then the stack.
    plots = importlib.util.find_spec("pyqtgraph")
    icons = [Path(folder) / "icons" for folder in (plots.submodule_search_locations or [])] if plots else []
    read_folders(APP_FOLDER, resources_dir(), *icons)
    for name in OPTIONAL_PACKAGES:  # for the Memory & speed page, whose thread would wait for the lock
        installed(name)
    import_data_stack()


def _import_training_stack() -> None:
    from desktop.core.system.lazy import import_training_stack

    import_training_stack()


class Stack(NamedTuple):
    """Libraries imported together, and when."""

    modules: tuple[str, ...]
    """The modules that show it is imported."""
    importer: Callable[[], None]
    idle_s: float
    """Seconds without input before the import starts."""
    alongside_work: bool
    """Whether it starts while background tasks run."""
    plots: bool = False
    """Whether pyqtgraph follows (the data page's histogram, the Train step's plots), imported by
    :func:`~desktop.gui.app_support.plots_import.import_plots`."""


STACKS: dict[str, Stack] = {
    # Needed by the very next step, and short (under a second; no C call over ~30 ms): from the
    # window's first moments, beside the Environment step's checks (a child process, mostly).
    "data": Stack(
        ("numpy", "pandas", "pyarrow.csv", "pyarrow.compute", "pyqtgraph"),
        _import_data_stack,
        RESUME_S,
        alongside_work=True,
        plots=True,
    ),
    # Seconds long, with C calls of 60-95 ms: in a pause that promises to last (the user reading).
    "training": Stack(TRAINING_STACK, _import_training_stack, IDLE_S, False),
}


class Warmup(QObject):
    """Imports a stack of libraries at the first idle moment after :meth:`want`; once per process.

    Args:
        stack: ``"data"`` or ``"training"`` (see :data:`STACKS`).
        idle_s: Seconds since the user's last input.
        running: Whether a run is in progress (no import then: the window is showing its plots).
        imported: Called on the GUI thread once the stack is imported by this object.
        window_busy: Whether the window is doing work of its own in an idle moment (the import steps
            aside meanwhile, as it does for the user); called from the importing thread.
    """

    done = Signal()
    """The stack is imported (also when it was before :meth:`want`, or failed to import)."""

    def __init__(
        self,
        parent: QObject,
        stack: str,
        idle_s: Callable[[], float],
        running: Callable[[], bool] = lambda: False,
        imported: Callable[[], None] = lambda: None,
        window_busy: Callable[[], bool] = lambda: False,
    ) -> None:
        super().__init__(parent)
        self._stack = STACKS[stack]
        self._idle_s, self._running, self._imported = idle_s, running, imported
        self._window_busy = window_busy
        self._state = "idle"  # -> "waiting" -> "importing" -> "done"
        self._timer = QTimer(self, interval=250)
        self._timer.timeout.connect(self._check)

    @property
    def state(self) -> str:
        """``idle`` (not wanted yet), ``waiting`` (for an idle moment), ``importing`` or ``done``."""
        return self._state

    def want(self) -> None:
        """Import the stack at the next idle moment (nothing more when that is under way or done)."""
        if self._state == "idle":
            self._state = "waiting"
            self._timer.start()

    def _check(self) -> None:
        if self._ready():
            self._finish()
        elif (
            self._idle_s() >= self._stack.idle_s
            and (self._stack.alongside_work or not workers.busy())
            and not self._running()
        ):
            self._state = "importing"
            self._timer.stop()
            # A failure (a broken PyTorch) is left to the step that needs it, which explains it.
            failed = lambda *_: self._finish()  # noqa: E731
            workers.run_in_background(self._import, self, self._on_imported, failed)

    def _import(self) -> None:
        """In the background: the import, stepping aside while the user is at work (it goes on at the
        next idle moment, or at once when a step needs what it is importing)."""
        from desktop.core.system.lazy import stepping_aside

        with stepping_aside(lambda: self._idle_s() < RESUME_S or self._window_busy()):
            self._stack.importer()

    def _on_imported(self, _result: object) -> None:
        if self._stack.plots:
            import_plots(self, self._plots_imported, self._finish)
        else:
            self._plots_imported()

    def _plots_imported(self) -> None:
        self._imported()
        self._finish()

    def _finish(self) -> None:
        self._timer.stop()
        self._state = "done"
        self.done.emit()

    def _ready(self) -> bool:
        return all(imported(name) for name in self._stack.modules)
