"""The background import of a stack waits for an idle moment and steps aside while the window works."""

from __future__ import annotations

import sys
import threading
import types
from pathlib import Path

import pytest
from PySide6.QtCore import QObject

from desktop.core import lazy
from desktop.gui import warmup


@pytest.fixture
def stack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> types.SimpleNamespace:
    """A stack ``studio_warm`` whose first module signals that the import has begun."""
    began = threading.Event()
    gate = types.ModuleType("studio_warm_gate")
    gate.began = began
    monkeypatch.setitem(sys.modules, "studio_warm_gate", gate)
    package = tmp_path / "studio_warm"
    package.mkdir()
    (package / "__init__.py").write_text("import studio_warm.first\nimport studio_warm.second\n")
    (package / "first.py").write_text("import studio_warm_gate\nstudio_warm_gate.began.set()\n")
    (package / "second.py").write_text("LOADED = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(warmup.STACKS, "test", (("studio_warm.second",), lambda: __import__("studio_warm")))
    monkeypatch.setattr(lazy, "PAUSE_S", 0.005)
    yield types.SimpleNamespace(began=began)
    for name in ("studio_warm", "studio_warm.first", "studio_warm.second"):
        sys.modules.pop(name, None)


def test_the_import_steps_aside_while_the_window_makes_its_plots(qtbot, stack) -> None:
    parent = QObject()
    plots = {"done": False}  # the Train step's plots made from the moment the import began
    busy = lambda: stack.began.is_set() and not plots["done"]  # noqa: E731
    warm = warmup.Warmup(parent, "test", lambda: 3600.0, window_busy=busy)  # a user away from the keys
    warm.want()
    qtbot.waitUntil(stack.began.is_set, timeout=30_000)
    with qtbot.assertNotEmitted(warm.done, wait=300):  # the window's own work goes first
        pass
    assert "studio_warm.second" not in sys.modules
    with qtbot.waitSignal(warm.done, timeout=30_000):
        plots["done"] = True
    assert sys.modules["studio_warm.second"].LOADED
