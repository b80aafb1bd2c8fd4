"""pyqtgraph imported off the window's thread, without two threads making PySide6's classes at once.

pyqtgraph takes 0.3-0.4 s to import, too long for the window's thread, so it is imported in the
background. But PySide6 makes a module's Python classes on first use (its lazy loading, PYSIDE-2404),
running Python code in the middle of its own bookkeeping, where the interpreter may switch threads.
When two threads make classes at once the process dies: a segmentation fault in about one start of
30, in CI and here, when pyqtgraph's import touched every class of QtCore, QtGui and QtWidgets (to
copy them) while the window made a widget. So the window's thread first imports the Qt modules that
pyqtgraph uses and makes all their classes, a slice of :data:`SLICE_S` at a time between events
(~180 ms in all here; the largest class, ``Qt`` with its enums, 26 ms), and only then does the
background import start: it finds every class made and makes none.

Every import of pyqtgraph from the window goes through :func:`import_plots`; modules that plot
import it directly once :func:`~desktop.core.system.lazy.imported` says it is there.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Iterator

from PySide6.QtCore import QCoreApplication, QObject, QTimer
from shiboken6 import isValid

from desktop.gui.app_support.workers import run_in_background

QT_MODULES = ("QtCore", "QtGui", "QtWidgets", "QtOpenGL", "QtOpenGLWidgets", "QtSvg", "QtTest")
"""The PySide6 modules pyqtgraph imports (and whose classes it touches) as it is imported."""
SLICE_S = 0.008
"""The longest the window's thread makes classes before it handles events again (one class may take
longer: ``Qt``, 26 ms here)."""


def _modules() -> list:
    modules = []
    for name in QT_MODULES:
        try:
            modules.append(importlib.import_module(f"PySide6.{name}"))
        except ImportError:  # not in this PySide6: pyqtgraph does without it too
            continue
    return modules


def classes_made() -> bool:
    """Whether every class of :data:`QT_MODULES` is made (none left for a first use to make)."""
    import sys

    for name in QT_MODULES:
        module = sys.modules.get(f"PySide6.{name}")
        if module is None:
            return False
        made = vars(module)
        if any(attribute not in made for attribute in dir(module)):
            return False
    return True


def _make_classes() -> Iterator[None]:
    """Make the classes one at a time, yielding after each."""
    for module in _modules():
        made = vars(module)
        for attribute in dir(module):
            if attribute not in made:
                getattr(module, attribute)
                yield


class _PlotsImport(QObject):
    """The one import of pyqtgraph of this process: classes first, then the background import."""

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self._waiting: list[tuple[QObject, Callable[[], None], Callable[[], None]]] = []
        self._steps: Iterator[None] | None = None
        self._timer = QTimer(self, interval=0)
        self._timer.timeout.connect(self._make_some)

    def request(self, context: QObject, then: Callable[[], None], failed: Callable[[], None]) -> None:
        self._waiting.append((context, then, failed))
        if self._steps is None:
            self._steps = _make_classes()
            self._timer.start()

    def _make_some(self) -> None:
        assert self._steps is not None
        end = time.perf_counter() + SLICE_S
        while time.perf_counter() < end:
            if next(self._steps, "done") == "done":
                self._timer.stop()
                run_in_background(lambda: importlib.import_module("pyqtgraph"), self, self._done, self._fail)
                return

    def _fail(self, _exc: object, _detail: str) -> None:
        self._steps = None  # the plots are not shown (the rest of the window works on); a later
        self._call(failed=True)  # request tries again

    def _done(self, _result: object) -> None:
        self._call(failed=False)

    def _call(self, failed: bool) -> None:
        waiting, self._waiting = self._waiting, []
        for context, then, otherwise in waiting:
            if isValid(context):
                (otherwise if failed else then)()


_importer: _PlotsImport | None = None


def import_plots(
    context: QObject, then: Callable[[], None], failed: Callable[[], None] = lambda: None
) -> None:
    """Import pyqtgraph in the background (its Qt classes made on this thread first); call ``then`` on
    the GUI thread when it is imported, or ``failed`` when the import failed, unless ``context`` is
    deleted by then. Called when pyqtgraph is imported already, ``then`` runs at the next turn of the
    event loop."""
    global _importer
    from desktop.core.system.lazy import imported

    if imported("pyqtgraph"):
        QTimer.singleShot(0, context, then)
        return
    if _importer is None or not isValid(_importer):
        _importer = _PlotsImport(QCoreApplication.instance())
    _importer.request(context, then, failed)
