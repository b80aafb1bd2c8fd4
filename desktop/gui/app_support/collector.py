"""Python's cycle collector, run on the window's thread only, and over the whole heap only when idle.

CPython collects reference cycles in whichever thread happens to allocate past a threshold. For the
window that is two problems: (1) once PyTorch and Transformers are imported the heap holds over a
million objects, and a full collection holds the interpreter's lock for 100-200 ms (measured while
the training stack imports in the background: the window froze that long, several times); (2) a
collection in a background thread may free the widgets of a closed dialog that sit in a reference
cycle, and deleting Qt objects outside the GUI thread can deadlock PySide (seen in CI).

So the window's process turns automatic collection off (:meth:`Collector.start`), and a timer on the
GUI thread collects what Python would have: the young generations as soon as their thresholds are
passed (a few milliseconds: few objects), the whole heap only when the user has been idle for a moment
(or after :data:`FULL_AT_MOST_EVERY_S` of constant use). What a finished import leaves behind can be
frozen (:meth:`Collector.freeze`): no later collection walks it again. Core's own collections (a run
giving its memory back, the freeze after an import: :func:`desktop.core.system.heap.collect`) are
handed to the same thread while the collector runs; the thread that asked waits for them.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable

import shiboken6
from PySide6.QtCore import QEvent, QObject, QThread, QTimer, Signal, Slot
from PySide6.QtGui import QGuiApplication

from desktop.core.system import heap
from desktop.gui.app_support import workers

TICK_MS = 10
"""How often the thresholds are looked at: often, so that each collection has few young objects to walk."""
IDLE_S = 2.0
"""No input for this long: a full collection cannot be felt."""
FULL_AT_MOST_EVERY_S = 600.0
"""A full collection happens at least this often, idle or not (memory stays bounded)."""
WINDOWS_EVERY_TICKS = 25
"""How often (in ticks) windows made since are looked for, to watch their input (a menu, a list's popup)."""
COLLECT_WAIT_S = 5.0
"""How long a background thread that asked for a collection (a run freeing its GPU memory) waits for the
window's thread to make it; past that (the window is closing) it goes on without."""
_WATCHED = "finetune_studio_input_watched"

_INPUT = frozenset(
    {
        QEvent.Type.KeyPress,
        QEvent.Type.MouseButtonPress,
        QEvent.Type.MouseMove,
        QEvent.Type.Wheel,
        QEvent.Type.TouchBegin,
    }
)


def generation_to_collect(
    counts: tuple[int, int, int],
    thresholds: tuple[int, int, int],
    idle_s: float,
    since_full_s: float,
    busy: bool = False,
    importing: bool = False,
) -> int | None:
    """The generation to collect now (``None``: nothing), as CPython would choose it, except that the
    oldest generation waits for an idle moment with no background work (an import in progress has
    not frozen its objects yet), and only the young one is collected while a warm-up import runs: the
    middle one would walk the hundreds of thousands of objects the import makes (47 ms at a time,
    measured), all of them kept for good and frozen once it is done.

    Args:
        counts: ``gc.get_count()``: allocations since the last young collection, young collections
            since the last middle one, middle ones since the last full one.
        thresholds: ``gc.get_threshold()``.
        idle_s: Seconds since the user's last input.
        since_full_s: Seconds since the last full collection.
        busy: Background work is running.
        importing: A warm-up import is under way (see :mod:`desktop.gui.app_support.warmup`).
    """
    if counts[0] < thresholds[0]:
        return None
    quiet = idle_s >= IDLE_S and not busy
    if counts[2] >= thresholds[2] and (quiet or since_full_s >= FULL_AT_MOST_EVERY_S):
        return 2
    if counts[1] >= thresholds[1] and not importing:
        return 1
    return 0


class Collector(QObject):
    """Collects cycles on the GUI thread while started (see the module's text)."""

    _collect_requested = Signal(int, object)
    """A background thread asked core for a collection: the generation and a ``threading.Event`` to set."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._collect_requested.connect(self._on_self_collect_requested)
        self._previous_router: Callable[[int], None] | None = None
        self._timer = QTimer(self, interval=TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._last_input = self._last_full = time.monotonic()
        self._was_enabled = False
        self._ticks = 0
        self.importing: Callable[[], bool] = lambda: False
        """Whether a warm-up import is under way (set by the window)."""

    def idle_s_now(self) -> float:
        """Seconds since the user last pressed a key, clicked or moved the mouse."""
        return time.monotonic() - self._last_input

    def start(self) -> None:
        """Turn automatic collection off and collect from here on."""
        if self._timer.isActive():
            return
        self._was_enabled = gc.isenabled()
        gc.disable()
        self._previous_router = heap.route_collections(self._collect_here)
        QGuiApplication.instance().focusWindowChanged.connect(self._watch_windows)
        self._watch_windows()
        self._ticks = 0
        self._timer.start()

    def stop(self) -> None:
        """Give collection back to Python (as it was before :meth:`start`)."""
        if not self._timer.isActive():
            return
        self._timer.stop()
        heap.route_collections(self._previous_router)
        app = QGuiApplication.instance()
        if app is not None:
            app.focusWindowChanged.disconnect(self._watch_windows)
            for window in app.topLevelWindows():
                if window.property(_WATCHED):
                    window.removeEventFilter(self)
                    window.setProperty(_WATCHED, None)
        if self._was_enabled:
            gc.enable()

    def freeze(self) -> None:
        """Move every object alive now out of the collector's reach (after a big import: its modules,
        classes and functions live as long as the process; see :mod:`desktop.core.system.heap`)."""
        from desktop.core.system.heap import freeze_imports

        freeze_imports()

    def _collect_here(self, generation: int) -> None:
        """Core's collections (:func:`desktop.core.system.heap.collect`), made on this object's thread: a
        background thread waits until it is done (a run frees its GPU memory before going on)."""
        if not shiboken6.isValid(self):  # the window is gone: nothing of Qt is left to free
            gc.collect(generation)
            return
        if QThread.currentThread() is self.thread():
            self._collect(generation)
            return
        done = threading.Event()
        self._collect_requested.emit(generation, done)
        done.wait(COLLECT_WAIT_S)

    @Slot(int, object)
    def _on_self_collect_requested(self, generation: int, done: threading.Event) -> None:
        try:
            self._collect(generation)
        finally:
            done.set()

    def _collect(self, generation: int) -> None:
        gc.collect(generation)
        if generation == 2:
            self._last_full = time.monotonic()

    def _watch_windows(self, *_: object) -> None:
        """See the input of each window (not of the whole application: see :meth:`eventFilter`)."""
        for window in QGuiApplication.topLevelWindows():
            if not window.property(_WATCHED):
                window.installEventFilter(self)
                window.setProperty(_WATCHED, True)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """The user's input, as the system hands it to a window (before Qt passes it to a widget).

        A filter on the whole application would run this Python method for every event of every
        widget (each paint, each layout), and each call must take Python's lock: while a background
        thread runs Python (reading data, training), every event then waits up to the interpreter's
        switch interval (5 ms), and one repaint of a page took 0.5 s instead of 2 ms (measured). A
        window receives only what the system sends it: input, exposure, resizing.
        """
        if event.type() in _INPUT:
            self._last_input = time.monotonic()
        return False

    def _tick(self) -> None:
        self._ticks += 1
        if self._ticks % WINDOWS_EVERY_TICKS == 0:
            self._watch_windows()
        now = time.monotonic()
        generation = generation_to_collect(
            gc.get_count(),
            gc.get_threshold(),
            now - self._last_input,
            now - self._last_full,
            workers.busy(),
            self.importing(),
        )
        if generation is not None:
            self._collect(generation)
