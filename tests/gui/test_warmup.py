"""The background import of a stack waits for an idle moment and steps aside while the window works."""

from __future__ import annotations

import sys
import types

import pytest
from PySide6.QtCore import QObject

from desktop.gui import warmup


@pytest.fixture
def stack(gated_package, monkeypatch: pytest.MonkeyPatch) -> types.SimpleNamespace:
    """A stack of the gated package, whose first module signals that the import has begun."""
    monkeypatch.setitem(warmup.STACKS, "test", (("studio_gated.second",), lambda: __import__("studio_gated")))
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
