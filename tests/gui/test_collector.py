"""Cycles are collected on the window's thread, and the whole heap only when the user is idle; the
training stack is imported while the user does nothing."""

from __future__ import annotations

import gc
import threading
from typing import ClassVar

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QGridLayout, QLabel, QLineEdit, QWidget

from desktop.core.system import heap
from desktop.gui.app_support import warmup as warmup_module
from desktop.gui.app_support.collector import IDLE_S, Collector, generation_to_collect
from desktop.gui.app_support.warmup import Warmup
from tests.gui.paints import PaintCounter

THRESHOLDS = (700, 10, 10)


@pytest.mark.parametrize(
    ("counts", "idle_s", "since_full_s", "busy", "importing", "expected"),
    [
        ((100, 0, 0), 60.0, 0.0, False, False, None),  # below the threshold: nothing
        ((701, 3, 0), 0.0, 0.0, False, False, 0),  # the young generation
        ((701, 10, 2), 0.0, 0.0, False, False, 1),  # the middle one, as Python would
        ((701, 10, 2), 0.0, 0.0, True, True, 0),  # but not the import's objects, frozen after it
        ((701, 10, 10), 0.0, 0.0, False, False, 1),  # the whole heap waits while the user acts...
        ((701, 10, 10), IDLE_S, 0.0, False, False, 2),  # ...and is collected once idle
        ((701, 10, 10), IDLE_S, 0.0, True, False, 1),  # but not while an import may be under way
        ((701, 10, 10), 0.0, 601.0, True, True, 2),  # and never put off for more than ten minutes
    ],
)
def test_the_generation_collected(counts, idle_s, since_full_s, busy, importing, expected) -> None:
    assert generation_to_collect(counts, THRESHOLDS, idle_s, since_full_s, busy, importing) == expected


class _Cycle:
    """An object in a reference cycle that records the thread its collection ran in."""

    freed_in: ClassVar[list[str]] = []

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        _Cycle.freed_in.append(threading.current_thread().name)


def test_cycles_made_in_a_worker_are_collected_on_the_gui_thread(qtbot) -> None:
    collector = Collector()
    collector.start()
    try:
        assert not gc.isenabled()
        _Cycle.freed_in.clear()

        kept: list[list] = []

        def allocate() -> None:
            for _ in range(200):
                _Cycle()
            kept.extend([] for _ in range(5000))  # far past the young threshold: Python would collect

        worker = threading.Thread(target=allocate, name="worker")
        worker.start()
        worker.join()
        assert _Cycle.freed_in == []  # nothing collected in the worker
        qtbot.waitUntil(lambda: len(_Cycle.freed_in) == 200, timeout=5000)
        assert set(_Cycle.freed_in) == {threading.main_thread().name}
        kept.clear()
    finally:
        collector.stop()
    assert gc.isenabled()


def test_a_run_that_frees_its_memory_waits_for_the_gui_thread_to_collect(qtbot) -> None:
    """What a run does at its end and after running out of GPU memory (core's heap.collect) is made on
    the window's thread too, and the run goes on only once it is done."""
    collector = Collector()
    collector.start()
    try:
        _Cycle.freed_in.clear()
        freed_when_back: list[int] = []

        def release() -> None:
            for _ in range(50):
                _Cycle()
            heap.collect()
            freed_when_back.append(len(_Cycle.freed_in))

        run = threading.Thread(target=release, name="run")
        run.start()
        qtbot.waitUntil(lambda: not run.is_alive(), timeout=10_000)
        assert freed_when_back == [50]
        assert set(_Cycle.freed_in) == {threading.main_thread().name}
    finally:
        collector.stop()
    heap.collect()  # the window's collector is gone: core collects where it is asked again


def test_the_stack_is_imported_at_the_first_idle_moment(qtbot, monkeypatch: pytest.MonkeyPatch) -> None:
    imported: list[str] = []
    monkeypatch.setattr(Warmup, "_ready", lambda self: bool(imported))
    monkeypatch.setattr(
        "desktop.core.system.lazy.import_training_stack",
        lambda: imported.append(threading.current_thread().name),
    )
    idle = {"s": 0.0}
    running = {"yes": True}
    frozen: list[bool] = []
    warm = Warmup(
        None,
        "training",
        lambda: idle["s"],
        running=lambda: running["yes"],
        imported=lambda: frozen.append(True),
    )
    warm.want()
    assert warm.state == "waiting"
    idle["s"] = warmup_module.IDLE_S  # idle, but a run is showing its plots
    with qtbot.waitSignal(warm.done, timeout=1000, raising=False) as early:
        pass
    assert not early.signal_triggered and imported == []
    running["yes"] = False
    with qtbot.waitSignal(warm.done, timeout=5000):
        pass
    assert imported and imported[0] != threading.main_thread().name  # off the GUI thread
    assert frozen == [True]  # what it imported is frozen out of later collections
    assert warm.state == "done"


@pytest.mark.slow
def test_a_user_at_work_puts_the_import_off(qtbot, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Warmup, "_ready", lambda self: False)
    started: list[bool] = []
    monkeypatch.setattr("desktop.core.system.lazy.import_training_stack", lambda: started.append(True))
    collector = Collector()
    collector.start()
    try:
        warm = Warmup(None, "training", collector.idle_s_now)
        warm.want()
        edit = QLineEdit()
        qtbot.addWidget(edit)
        with qtbot.waitActive(edit):  # a context manager: called bare, it waits for nothing
            edit.show()
            edit.activateWindow()
        for _ in range(3):
            QTest.keyClick(edit.windowHandle(), Qt.Key.Key_A)  # typing, through the window as the system does
            with qtbot.waitSignal(warm.done, timeout=int(warmup_module.IDLE_S * 400), raising=False) as early:
                pass
            assert not early.signal_triggered
        assert edit.text() == "aaa" and started == []
        with qtbot.waitSignal(warm.done, timeout=int(warmup_module.IDLE_S * 1000) + 3000):
            pass
        assert started == [True]
    finally:
        collector.stop()


def test_widgets_events_run_no_python_of_the_collector(qtbot, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each Python call takes the interpreter's lock: one per widget per repaint made a page's repaint
    wait up to 5 ms per widget while a background thread ran Python (0.5 s for a page; 2 ms without)."""
    seen: list[str] = []

    def counting(self, watched, event) -> bool:
        seen.append(type(watched).__name__)
        return False

    monkeypatch.setattr(Collector, "eventFilter", counting)
    page = QWidget()
    grid = QGridLayout(page)
    labels = [QLabel(f"label {i}") for i in range(40)]
    for i, label in enumerate(labels):
        grid.addWidget(label, i, 0)
    qtbot.addWidget(page)
    painted = PaintCounter()
    labels[-1].installEventFilter(painted)
    collector = Collector()
    collector.start()
    try:
        page.show()
        qtbot.waitUntil(lambda: painted.count > 0)
        painted.count = 0
        for label in labels:
            label.setText(label.text() + " changed")
        qtbot.waitUntil(lambda: painted.count > 0)  # repainted
    finally:
        collector.stop()
    assert "QLabel" not in seen
