"""The background import of a stack waits for an idle moment and steps aside while the window works."""

from __future__ import annotations

import sys
import threading
import types

import pytest
from PySide6.QtCore import QObject

from desktop.gui.app_support import warmup, workers


@pytest.fixture
def stack(gated_package, monkeypatch: pytest.MonkeyPatch) -> types.SimpleNamespace:
    """A stack of the gated package, whose first module signals that the import has begun."""
    importer = lambda: __import__("studio_gated")  # noqa: E731
    monkeypatch.setitem(
        warmup.STACKS, "test", warmup.Stack(("studio_gated.second",), importer, warmup.IDLE_S, False)
    )
    return types.SimpleNamespace(began=gated_package)


def test_the_import_steps_aside_while_the_window_makes_its_plots(qtbot, stack) -> None:
    parent = QObject()
    plots = {"done": False}  # the Train step's plots made from the moment the import began
    busy = lambda: stack.began.is_set() and not plots["done"]  # noqa: E731
    warm = warmup.Warmup(parent, "test", lambda: 3600.0, window_busy=busy)  # a user away from the keys
    warm.want()
    qtbot.waitUntil(stack.began.is_set, timeout=30_000)
    with qtbot.assertNotEmitted(warm.done, wait=300):  # the window's own work goes first
        pass
    assert "studio_gated.second" not in sys.modules
    with qtbot.waitSignal(warm.done, timeout=30_000):
        plots["done"] = True
    assert sys.modules["studio_gated.second"].LOADED


@pytest.mark.parametrize(("name", "starts"), [("data", True), ("training", False)])
def test_only_the_data_stack_is_imported_beside_background_work(
    qtbot, stack, monkeypatch, name, starts
) -> None:
    """The next step needs the data stack: its import starts while the Environment step's checks run
    (about 2 s on two cores) instead of after them; the training stack's, seconds long, waits until no
    background work is left."""
    fake = warmup.STACKS[name]._replace(
        modules=("studio_gated.second",), importer=warmup.STACKS["test"].importer
    )
    monkeypatch.setitem(warmup.STACKS, name, fake)
    parent = QObject()
    checks_done = threading.Event()
    workers.run_in_background(lambda: checks_done.wait(30), parent, lambda _: None, lambda *_: None)
    try:
        warm = warmup.Warmup(parent, name, lambda: 3600.0)  # a user away from the keys
        warm.want()
        if starts:
            with qtbot.waitSignal(warm.done, timeout=30_000):
                pass
            assert workers.busy() and sys.modules["studio_gated.second"].LOADED
        else:
            with qtbot.assertNotEmitted(warm.done, wait=1000):
                pass
            assert warm.state == "waiting" and not stack.began.is_set()
    finally:
        checks_done.set()
        qtbot.waitUntil(lambda: not workers.busy(), timeout=30_000)
