"""Live plots stay cheap however long the run: O(1) points, a bounded drawing that keeps every spike."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtWidgets import QLabel, QStackedWidget, QVBoxLayout, QWidget

from desktop.gui.widgets.histogram_widget import HistogramWidget
from desktop.gui.widgets.live_plot_widget import MAX_DRAWN, LivePlotWidget, Points


def test_a_million_points_are_drawn_as_a_thousand_with_every_spike() -> None:
    points = Points()
    for step in range(1_000_000):
        points.append(step, 1.0)
    points.y[654_321] = 9.0  # one spike in the loss
    points.y[5] = -3.0
    x, y = points.thinned(MAX_DRAWN)
    assert len(x) <= MAX_DRAWN + 3 and np.all(np.diff(x) > 0)
    assert 9.0 in y and -3.0 in y and x[-1] == 999_999  # the newest point is always drawn


def test_thinning_follows_new_points_and_a_cleared_curve_starts_over() -> None:
    points = Points(capacity=4)
    for step in range(5000):
        points.append(step, float(step % 7))
        if step % 997 == 0:
            points.thinned(100)  # as flushes do, while the run goes on
    x, y = points.thinned(100)
    fresh = Points()
    for step in range(5000):
        fresh.append(step, float(step % 7))
    assert np.array_equal(x, fresh.thinned(100)[0]) and np.array_equal(y, fresh.thinned(100)[1])
    points.clear()
    points.append(0, 2.0)
    assert list(points.thinned(100)[1]) == [2.0]


def test_the_plot_draws_at_most_what_it_has_pixels_for(qtbot) -> None:
    plot = LivePlotWidget("loss")
    qtbot.addWidget(plot)
    plot.add_curve("loss", "loss", "#2f6fde")
    for step in range(50_000):
        plot.append("loss", step, 1.0 / (step + 1))
    plot.flush()
    x, _y = plot._curves["loss"].getData()
    assert plot.count("loss") == 50_000 and len(x) <= MAX_DRAWN + 3


def test_the_grid_has_lines_at_ticks_not_graph_paper(qtbot) -> None:
    # pyqtgraph's default adds a line up to every two pixels: unreadable, and most of a repaint's cost.
    plot = LivePlotWidget("loss")
    qtbot.addWidget(plot)
    for side in ("left", "bottom"):
        levels = plot.getAxis(side).tickValues(0, 400, 480)  # 400 steps across 480 pixels
        assert sum(len(ticks) for _spacing, ticks in levels) <= 12


@pytest.mark.parametrize("make_plot", [lambda: LivePlotWidget("loss"), HistogramWidget])
def test_leaving_a_page_with_a_plot_does_not_deactivate_its_scene(qtbot, make_plot) -> None:
    # Qt's view, hidden, deactivated its scene: every plot item then asked to be repainted, and the
    # scene, handling that, painted the window before the next page was laid out (then again after):
    # a page switch cost two paints of the whole window.
    window = QWidget()
    qtbot.addWidget(window)
    pages = QStackedWidget(window)
    QVBoxLayout(window).addWidget(pages)
    pages.addWidget(QLabel("the next step"))
    with qtbot.waitActive(window):
        window.show()
        window.activateWindow()
    plot = make_plot()  # made while the window is active, as the app makes its plots
    pages.addWidget(plot)
    pages.setCurrentWidget(plot)
    assert plot.isVisible() and plot.scene().isActive()
    pages.setCurrentIndex(0)
    assert not plot.isVisible() and plot.scene().isActive()


def test_a_new_point_repaints_the_curve_not_the_axes_until_their_range_changes(qtbot, monkeypatch) -> None:
    # The grid lines cross the plot, so each new point repainted both axes: their tick labels drawn
    # again, in Python, three quarters of a repaint, while the window shares Python's lock with the run.
    from desktop.gui.widgets.plotting import pg

    painted: list[object] = []
    paint = pg.AxisItem.paint

    def counted(axis: object, *args: object) -> None:
        painted.append(axis)
        paint(axis, *args)

    monkeypatch.setattr(pg.AxisItem, "paint", counted)
    plot = LivePlotWidget("loss")
    qtbot.addWidget(plot)
    plot.resize(420, 260)
    plot.add_curve("loss", "loss", "#2f6fde")
    plot.set_steps(100)
    with qtbot.waitExposed(plot):
        plot.show()
    left = plot.getAxis("left")

    def add(step: int, loss: float) -> int:
        plot.append("loss", step, loss)
        plot.flush()
        plot.viewport().repaint()
        return painted.count(left)

    add(0, 1.0)
    before = add(1, 0.5)
    assert before > 0
    assert add(2, 0.7) == before  # within the axes' range: the kept picture of the axes is copied
    assert add(3, 5.0) > before  # the loss left the range: new ticks are drawn


def test_one_point_is_shown_and_memory_reads_in_gb_without_a_scale_factor(qtbot) -> None:
    """A plot with one point was an empty axis from -2 to 12; memory under 1 GB read "(x0.001)"."""
    plot = LivePlotWidget("Memory", "GB")
    qtbot.addWidget(plot)
    plot.add_curve("rss", "RAM", "#888888")
    plot.append("rss", 1, 0.25)
    plot.flush()
    curve = plot._curves["rss"]
    assert curve.opts["symbol"] == "o"  # one point: a dot, not nothing
    plot.append("rss", 2, 0.3)
    plot.flush()
    assert curve.opts["symbol"] is None  # a line from the second point on
    assert not plot.getAxis("left").autoSIPrefix and "x0.001" not in plot.getAxis("left").labelString()


def test_the_legend_sits_above_the_curves_not_on_them(qtbot) -> None:
    """Anchored inside the plot, the legend hid the end of rising curves (memory, throughput)."""
    plot = LivePlotWidget("Memory", "GB")
    qtbot.addWidget(plot)
    for name in ("allocated", "reserved", "rss", "device", "total"):  # the memory plot's five
        plot.add_curve(name, name, "#888888")
        plot.append(name, 1, 0.5)
        plot.append(name, 10, 5.0)  # rising to the top right corner
    plot.flush()
    plot.resize(420, 260)
    plot.show()
    qtbot.waitExposed(plot)
    legend = plot.legend.sceneBoundingRect()
    curves = plot.getPlotItem().vb.sceneBoundingRect()
    assert legend.height() > 0 and legend.bottom() <= curves.top() + 1
    assert len(plot.legend.items) == 5


def test_the_legend_lists_only_curves_that_have_points(qtbot) -> None:
    """A run on the CPU has no VRAM: its memory plot said "VRAM allocated" for a curve never drawn."""
    plot = LivePlotWidget("Memory", "GB")
    qtbot.addWidget(plot)
    for name in ("allocated", "reserved", "rss"):
        plot.add_curve(name, name, "#888888")
    plot.append("rss", 1, 0.5)
    plot.flush()
    assert [label.text for _, label in plot.legend.items] == ["rss"]
    plot.append("allocated", 2, 0.1)
    plot.flush()
    assert [label.text for _, label in plot.legend.items] == ["allocated", "rss"]  # the order they were added


def test_learning_rate_ticks_are_distinct_and_never_below_zero(qtbot) -> None:
    """The walk's rate axis read "1.1e-04, 1.1e-04, 1.0e-04, 1.0e-04", and "-2.0e-06" under the end of a
    schedule."""
    plot = LivePlotWidget("Learning rate", scientific=True)
    qtbot.addWidget(plot)
    plot.resize(500, 250)
    plot.add_curve("lr", "learning rate", "#3aa55d")
    for step in range(1, 41):
        plot.append("lr", step, 1.02e-4 + step * 1e-7)
    plot.flush()
    axis = plot.getAxis("left")
    low, high = plot.getViewBox().viewRange()[1]
    for spacing, values in axis.tickValues(low, high, 200):
        labels = axis.tickStrings(values, 1.0, spacing)
        assert len(set(labels)) == len(labels), labels
    plot.clear_points()
    for step in range(1, 41):
        plot.append("lr", step, 5e-6 * (1 - step / 40))  # a linear schedule down to zero
    plot.flush()
    assert plot.getViewBox().viewRange()[1][0] >= 0
    assert axis.tickStrings([0.0, 1e-21, 2e-6], 1.0, 1e-6)[:2] == ["0", "0"]
