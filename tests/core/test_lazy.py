"""A module another thread is still importing does not count as imported (importing it would wait)."""

from __future__ import annotations

import sys
import threading
import types
from pathlib import Path

import pytest

from desktop.core.lazy import imported


def test_a_module_being_imported_elsewhere_is_not_imported_yet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = types.ModuleType("studio_test_gate")
    gate.started, gate.release = threading.Event(), threading.Event()
    monkeypatch.setitem(sys.modules, "studio_test_gate", gate)
    (tmp_path / "studio_slow_module.py").write_text(
        "import studio_test_gate as gate\ngate.started.set()\ngate.release.wait(30)\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "studio_slow_module", raising=False)
    worker = threading.Thread(target=lambda: __import__("studio_slow_module"))
    worker.start()
    try:
        assert gate.started.wait(30)
        assert "studio_slow_module" in sys.modules  # what the window looked at: an import would wait here
        assert not imported("studio_slow_module")
    finally:
        gate.release.set()
        worker.join(30)
    assert imported("studio_slow_module") and imported("sys")
    assert not imported("studio_no_such_module")
    del sys.modules["studio_slow_module"]
