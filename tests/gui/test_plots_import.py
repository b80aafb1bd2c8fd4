"""pyqtgraph is imported in the background only once PySide6's classes are all made (a crash else)."""

from __future__ import annotations

import os
import subprocess
import sys

CODE = """
import importlib, sys, time
from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication, QLabel
app = QApplication([])
from desktop.gui.app_support import plots_import

seen = {}
real_import = importlib.import_module
def watched(name, *args):
    if name == "pyqtgraph":
        seen["made"] = plots_import.classes_made()
    return real_import(name, *args)
importlib.import_module = watched

longest = [0.0]
last = [time.perf_counter()]
def tick():  # how long the window's thread went without handling events
    now = time.perf_counter()
    longest[0] = max(longest[0], now - last[0])
    last[0] = now
ticker = QTimer(interval=0)
ticker.timeout.connect(tick)
ticker.start()

print("made at first:", plots_import.classes_made())
label = QLabel()
loop = QEventLoop()
plots_import.import_plots(label, loop.quit, lambda: print("failed") or loop.quit())
QTimer.singleShot(120_000, loop.quit)
loop.exec()
print("made when pyqtgraph was imported:", seen.get("made"))
print("imported:", "pyqtgraph" in sys.modules)
print("longest stall ms:", round(longest[0] * 1000))
"""


def test_pyqtgraph_is_imported_in_the_background_after_the_classes_are_made() -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, env=env, check=True, timeout=300
    )
    lines = dict(line.split(": ", 1) for line in out.stdout.splitlines() if ": " in line)
    assert lines["made at first"] == "False"  # PySide6 makes its classes lazily: the hazard is real
    assert lines["made when pyqtgraph was imported"] == "True"
    assert lines["imported"] == "True"
