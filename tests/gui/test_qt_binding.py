"""The Qt binding itself: a broken release would crash long training runs."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal


class _Emitter(QObject):
    ticked = Signal(str)


def test_emitting_signals_keeps_python_reference_counts_intact() -> None:
    # PySide6 6.12.0 returns True from emit() without taking a reference: on Python 3.10/3.11 each
    # emit drops one reference to True, and after a few thousand (a training run's events) the
    # interpreter aborts with "deallocating True". pyproject.toml excludes that release.
    emitter = _Emitter()
    before = sys.getrefcount(True)
    for _ in range(2000):
        emitter.ticked.emit("step")
    assert sys.getrefcount(True) >= before - 5
