"""Live plots at 10^3 ... 10^6 points: the cost of adding a point and of a repaint (target: under 16 ms).

    QT_QPA_PLATFORM=offscreen python bench/live_plot.py

For each size, fills a training-loss curve of that many points and measures, in one run:
- adding one point (the mean over all of them),
- a flush and repaint after one more point, as the train page does while training (median of 20),
- the same flush with the points kept in Python lists and handed to pyqtgraph as lists (what the plot
  did before), as the baseline the ratio is taken against.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    from desktop.gui.widgets.live_plot_widget import LivePlotWidget

    worst = 0.0
    print(f"{'points':>9} {'append':>10} {'repaint':>10} {'baseline':>10} {'ratio':>7}")
    for n in (10**3, 10**4, 10**5, 10**6):
        plot = LivePlotWidget("loss")
        plot.resize(640, 320)
        plot.add_curve("loss", "loss", "#2f6fde")
        plot.show()
        app.processEvents()
        start = time.perf_counter()
        for step in range(n):
            plot.append("loss", step, 1.0 + math.sin(step / 50) * math.exp(-step / n))
        append_us = (time.perf_counter() - start) / n * 1e6
        times = []
        for extra in range(20):
            start = time.perf_counter()
            plot.append("loss", n + extra, 0.5)
            plot.flush()
            plot.viewport().repaint()
            times.append(time.perf_counter() - start)
        repaint = statistics.median(times)
        # The baseline: the same points as Python lists, converted by pyqtgraph on every flush.
        xs = list(range(n + 20))
        ys = [1.0 + math.sin(x / 50) * math.exp(-x / n) for x in xs]
        base = []
        for _ in range(5):
            xs.append(xs[-1] + 1)
            ys.append(0.5)
            start = time.perf_counter()
            plot._curves["loss"].setData(xs, ys)
            plot.viewport().repaint()
            base.append(time.perf_counter() - start)
        baseline = statistics.median(base)
        worst = max(worst, repaint)
        print(
            f"{n:>9} {append_us:>8.2f}us {repaint * 1000:>8.1f}ms {baseline * 1000:>8.1f}ms "
            f"{repaint / baseline:>7.2f}"
        )
        plot.close()
    print("PASS" if worst < 0.016 else "FAIL", f"(worst repaint {worst * 1000:.1f} ms; target under 16 ms)")
    return 0 if worst < 0.016 else 1


if __name__ == "__main__":
    sys.exit(main())
