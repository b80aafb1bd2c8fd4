"""The Train and Export pages with a fake controller: progress, plots, failures, results."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from desktop.core.system.events import (
    FailedEvent,
    LogEvent,
    MemoryEvent,
    ProgressEvent,
    RunResult,
    StartedEvent,
)
from desktop.gui.main_window import MainWindow
from tests.gui.conftest import FakeController


def test_progress_and_plots_follow_the_events(
    window: MainWindow, fake_controller: FakeController, qtbot
) -> None:
    page = window.train_page
    area = page.plot_area
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    assert (
        len(fake_controller.started) == 1
        and not page.start_button.isEnabled()
        and page.stop_button.isEnabled()
    )
    fake_controller.preparing.emit("Loading the tokenizer and the model")
    assert "Loading the tokenizer" in page.status.text()
    fake_controller.training_started.emit(StartedEvent("/runs/x", 100, 90, 10, "cpu"))
    for step in range(1, 21):
        fake_controller.progress_changed.emit(
            ProgressEvent(step, 100, step / 10, step * 0.5, (100 - step) * 0.5, 32.0, 4210.0, 0.04, 0.61)
        )
        if step % 5 == 0:
            fake_controller.metrics_logged.emit(
                LogEvent(step, step / 10, {"loss": 1 / step, "learning_rate": 1e-4})
            )
            fake_controller.memory_sampled.emit(MemoryEvent(step, "cpu", None, None, None, 2**30))
    fake_controller.metrics_logged.emit(LogEvent(20, 2.0, {"eval_loss": 0.3, "eval_accuracy": 0.8}))
    qtbot.waitUntil(lambda: area.loss_plot._curves["train"].xData is not None, timeout=2000)  # repaint timer

    assert page.progress.value() == 20 and page.progress.maximum() == 100
    assert "remaining about 0:40" in page.timing.text()
    assert "4,210 tokens/s (4% of the compute on padding, 61% if padded)" in page.timing.text()  # the gain
    assert area.loss_plot.count("train") == 4 and area.loss_plot.count("eval") == 1
    assert area.lr_plot.count("lr") == 4 and area.memory_plot.count("rss") == 4
    assert area.memory_plot.count("allocated") == 0  # no GPU figures on CPU
    assert area.speed_plot.count("samples") == 20 and area.speed_plot.count("tokens") == 20
    assert "validation accuracy 0.8" in page.log.toPlainText()  # the key, in words
    low, high = area.loss_plot.getPlotItem().vb.viewRange()[0]
    assert low <= 0 and 100 <= high < 110  # the whole run across the plot: how far it is, at a glance

    qtbot.mouseClick(page.stop_button, Qt.MouseButton.LeftButton)
    assert fake_controller.stop_requests == 1 and "Stopping" in page.status.text()


def test_failure_shows_reason_and_remedy_with_details_behind_a_toggle(
    window: MainWindow, fake_controller: FakeController, qtbot
) -> None:
    page = window.train_page
    fake_controller.start(window.current_config())
    failure = FailedEvent(
        "The GPU ran out of memory.", "Lower training.batch_size.", "Traceback (most recent call last): ..."
    )
    fake_controller.end()
    fake_controller.training_failed.emit(RunResult("failed", failure=failure))

    assert not page.failure.isHidden()
    assert page.failure.reason.text() == "The GPU ran out of memory."
    assert page.failure.remedy.text() == "Lower training.batch_size."
    assert page.failure.details.isHidden()
    qtbot.mouseClick(page.failure.details_button, Qt.MouseButton.LeftButton)
    assert not page.failure.details.isHidden() and "Traceback" in page.failure.details.toPlainText()
    assert page.start_button.isEnabled()  # ready for another try


def test_export_page_shows_the_finished_model(
    window: MainWindow, fake_controller: FakeController, tmp_path: Path
) -> None:
    model = tmp_path / "run" / "model"
    model.mkdir(parents=True)
    (model / "config.json").write_text("{}", encoding="utf-8")
    assert window.export_page.open_button.isHidden()  # nothing to open yet
    fake_controller.training_finished.emit(
        RunResult("finished", tmp_path / "run", model, {"eval_accuracy": 0.91})
    )

    page = window.export_page
    assert page.model_label.text() == str(model) and "validation accuracy 0.91" in page.metrics_label.text()
    assert "config.json" in page.files_label.text() and not page.open_button.isHidden()


def test_the_export_pages_tabs_stay_put_whichever_tab_is_chosen(
    window: MainWindow, fake_controller: FakeController, tmp_path: Path, qtbot
) -> None:
    """Rows above the tabs came and went with the tab: the Serve tab's "network" option was clicked by
    accident, the tab moving under the pointer."""
    from PySide6.QtCore import QPoint

    from desktop.gui.pages.stack import EXPORT

    model = tmp_path / "run" / "model"
    model.mkdir(parents=True)
    (model / "config.json").write_text("{}", encoding="utf-8")
    fake_controller.training_finished.emit(RunResult("finished", tmp_path / "run", model, {"eval_loss": 0.4}))
    window.stack.setCurrentIndex(EXPORT)
    page = window.export_page
    qtbot.waitUntil(page.tabs.isVisible)
    where = []
    for index in range(page.tabs.count()):
        page.tabs.setCurrentIndex(index)
        page.layout().activate()
        where.append(page.tabs.mapTo(page, QPoint(0, 0)))
    assert len(set(where)) == 1, where


def test_gpu_memory_from_torch_and_nvml_is_plotted(
    window: MainWindow, fake_controller: FakeController, qtbot
) -> None:
    page = window.train_page
    area = page.plot_area
    fake_controller.start(window.current_config())
    gib = 2**30
    for step in (1, 2):
        fake_controller.memory_sampled.emit(
            MemoryEvent(step, "cuda:0", 3 * gib, 4 * gib, 5 * gib, gib, 6 * gib, 12 * gib)
        )
    assert area.memory_plot.count("allocated") == 2 and area.memory_plot.count("reserved") == 2
    assert area.memory_plot.count("device") == 2 and area.memory_plot.count("total") == 2
    qtbot.waitUntil(lambda: area.memory_plot._curves["device"].yData is not None, timeout=2000)
    assert list(area.memory_plot._curves["device"].yData) == [6.0, 6.0]


def test_each_gpu_of_a_multi_gpu_run_gets_its_memory_curve(
    window: MainWindow, fake_controller: FakeController, qtbot
) -> None:
    page = window.train_page
    area = page.plot_area
    fake_controller.start(window.current_config())
    gib = 2**30
    for step in (1, 2):
        fake_controller.memory_sampled.emit(
            MemoryEvent(step, "cuda:0", gib, gib, gib, gib, 7 * gib, 24 * gib, [7 * gib, 5 * gib])
        )
    plot = area.memory_plot
    assert plot.count("gpu0") == 2 and plot.count("gpu1") == 2 and plot.count("device") == 0
    assert "GPU 1 used (NVML)" in [item.name() for item in (plot._curves["gpu1"],)]
    qtbot.waitUntil(lambda: plot._curves["gpu1"].yData is not None, timeout=2000)
    assert list(plot._curves["gpu1"].yData) == [5.0, 5.0]


def test_apply_and_retry_changes_the_config_and_starts_again(
    window: MainWindow, fake_controller: FakeController, qtbot
) -> None:
    fake_controller.start(window.current_config())
    fake_controller.end()
    remedies = [
        {
            "label": "Halve the batch (8 -> 4)",
            "changes": {"training.batch_size": 4, "training.gradient_accumulation": 2},
        },
        {"label": "Turn on gradient checkpointing", "changes": {"performance.gradient_checkpointing": True}},
    ]
    failure = FailedEvent(
        "The GPU ran out of memory in the backward pass.", "Apply a change.", "Traceback", remedies
    )
    fake_controller.training_failed.emit(RunResult("failed", failure=failure))

    page = window.train_page
    assert [b.text() for b in page.failure.remedy_buttons] == [
        "Apply and retry: Halve the batch (8 -> 4)",
        "Apply and retry: Turn on gradient checkpointing",
    ]
    qtbot.mouseClick(page.failure.remedy_buttons[0], Qt.MouseButton.LeftButton)
    retried = fake_controller.started[-1][0]
    assert (retried.training.batch_size, retried.training.gradient_accumulation) == (4, 2)
    assert window.options_page.batch_size.value() == 4  # the pages show what will run


def test_the_coachs_advice_shows_during_the_run_and_its_fix_retries_once_it_has_ended(
    window: MainWindow, fake_controller: FakeController, qtbot
) -> None:
    from desktop.core.system.events import AdviceEvent

    page = window.train_page
    fake_controller.start(window.current_config())
    advice = AdviceEvent(
        100,
        "overfitting",
        "The validation loss has risen at 3 evaluations in a row (0.65 at step 40, 2.98 now).",
        [{"label": "stop at step 40", "changes": {"training.max_steps": 40}}],
    )
    fake_controller.advice_given.emit(advice)

    assert not page.coach.isHidden()
    assert page.coach.lines[0].text().startswith("The validation loss has risen")
    (button,) = page.coach.buttons
    assert button.text() == "Apply and retry: stop at step 40" and not button.isEnabled()  # the run goes on
    assert "Advice: The validation loss has risen" in page.log.toPlainText()
    fake_controller.end()
    assert button.isEnabled()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert fake_controller.started[-1][0].training.max_steps == 40
    assert page.coach.isHidden()  # a new run: nothing said yet


def test_a_spilling_run_on_windows_shows_the_bar_with_its_slowdown_and_the_fixes(
    window: MainWindow, fake_controller: FakeController, qtbot, monkeypatch
) -> None:
    from desktop.gui.widgets import spill_bar_widget

    monkeypatch.setattr(spill_bar_widget, "_on_windows", lambda: True)
    page = window.train_page
    window.train_page.start_button.click()
    gib, elapsed = 2**30, 0.0
    for step in range(1, 21):
        elapsed += 0.5 if step <= 14 else 5.0  # the card filled up at step 15
        fake_controller.progress_changed.emit(ProgressEvent(step, 1000, 0.1, elapsed, None, None, None))
    assert page.spill_bar.isHidden()
    fake_controller.memory_sampled.emit(
        MemoryEvent(20, "cuda:0", 7 * gib, 8 * gib, 8 * gib, gib, int(7.9 * gib), 8 * gib)
    )
    assert not page.spill_bar.isHidden() and "10 times slower" in page.spill_bar.text_label.text()
    with qtbot.waitSignal(page.fit_requested):
        page.spill_bar.fit_button.click()
    assert fake_controller.stop_requests == 1


def test_an_out_of_memory_recovery_is_shown_plotted_from_its_checkpoint_and_undoable(
    window: MainWindow, fake_controller: FakeController, qtbot
) -> None:
    from desktop.core.system.events import AdjustedEvent

    page = window.train_page

    area = page.plot_area
    config = window.current_config()
    config.training.batch_size, config.training.gradient_accumulation = 16, 1
    window.set_config(config)
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    fake_controller.training_started.emit(
        StartedEvent("/runs/x", 30, 90, 10, "cuda:0 (RTX 4060)", oom_recovery=True)
    )
    assert not page.recovery_note.isHidden() and "runs out of memory" in page.recovery_note.text()
    for step in range(1, 21):
        fake_controller.metrics_logged.emit(LogEvent(step, step / 10, {"loss": 1 / step}))
    fake_controller.settings_adjusted.emit(
        AdjustedEvent(
            step=20,
            reason="The GPU ran out of memory in the backward pass.",
            changes={"training.batch_size": 8, "training.gradient_accumulation": 2},
            previous={"training.batch_size": 16, "training.gradient_accumulation": 1},
            described=["batch size 16 -> 8, gradient accumulation 1 -> 2 (the same 16 examples per update)"],
            resumed_from=15,
        )
    )
    fake_controller.training_started.emit(
        StartedEvent("/runs/x", 30, 90, 10, "cuda:0", 15, oom_recovery=True)
    )

    assert not page.adjusted_bar.isHidden()
    text = page.adjusted_bar.text_label.text()
    assert "ran out of memory in the backward pass" in text and "checkpoint at step 15" in text
    assert "the same 16 examples per update" in text
    assert "step 15" in page.log.toPlainText()
    assert area.loss_plot.count("train") == 15  # steps 16-20 are trained again
    # The next run starts with what fitted; Undo gives the user's own settings back.
    assert (
        window.options_page.batch_size.value(),
        window.current_config().training.gradient_accumulation,
    ) == (8, 2)
    with qtbot.waitSignal(page.undo_requested) as undo:
        qtbot.mouseClick(page.adjusted_bar.undo_button, Qt.MouseButton.LeftButton)
    assert undo.args[0] == {"training.batch_size": 16, "training.gradient_accumulation": 1}
    restored = window.current_config().training
    assert (restored.batch_size, restored.gradient_accumulation) == (16, 1)
    assert page.adjusted_bar.undo_button.isHidden() and "Undone" in page.adjusted_bar.text_label.text()


def test_memory_in_shared_system_memory_is_plotted_once_windows_pages_it(
    window: MainWindow, fake_controller: FakeController, qtbot, monkeypatch
) -> None:
    from desktop.gui.widgets import spill_bar_widget

    gib = 2**30
    page = window.train_page
    area = page.plot_area
    for windows in (False, True):
        monkeypatch.setattr(spill_bar_widget, "_on_windows", lambda windows=windows: windows)
        qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
        for step, reserved in ((10, 6 * gib), (20, int(9.5 * gib)), (30, 8 * gib)):
            fake_controller.memory_sampled.emit(
                MemoryEvent(step, "cuda:0", reserved, reserved, reserved, gib, 8 * gib, 8 * gib)
            )
        names = area.memory_plot.curve_names()
        if not windows:  # Linux: the driver fails with out-of-memory instead; nothing is ever shared
            assert "shared" not in names
        else:
            x, y = area.memory_plot._points["shared"].view()
            assert list(x) == [20, 30] and list(y) == [1.5, 0.0]
        fake_controller.end()


def test_the_sleep_lock_shows_on_the_timing_line_without_moving_the_plots(
    window: MainWindow, fake_controller: FakeController, qtbot
) -> None:
    from desktop.gui.pages.train_page import TrainPage

    page = TrainPage(fake_controller, window.run_config)  # shown on its own: the window needs data

    area = page.plot_area
    qtbot.addWidget(page)
    page.resize(900, 700)
    page.show()
    fake_controller.training_started.emit(StartedEvent("/runs/x", 100, 90, 10, "cpu"))
    page.layout().activate()
    qtbot.waitUntil(lambda: area.height() > 0)
    before = area.geometry()
    fake_controller.awake_changed.emit(True)
    page.layout().activate()
    assert page.awake.isVisible() and page.awake.text() == "Kept awake"
    assert "stays awake" in page.awake.toolTip()
    assert area.geometry() == before  # a resize redoes every axis of four plots


def test_the_plots_appear_a_frame_apart_the_first_time_without_moving(
    window: MainWindow, fake_controller: FakeController, qtbot
) -> None:
    from desktop.gui.pages.train_page import TrainPage

    page = TrainPage(fake_controller, window.run_config)

    area = page.plot_area
    qtbot.addWidget(page)
    page.resize(900, 700)
    page.show()  # painting all four at once held the window 45-65 ms
    assert [plot.isVisible() for plot in area.plots] == [True, False, False, False]
    page.layout().activate()
    places = [plot.geometry() for plot in area.plots]
    assert all(place.width() > 100 and place.height() > 100 for place in places)  # kept for them
    qtbot.waitUntil(lambda: all(plot.isVisible() for plot in area.plots), timeout=2000)
    assert [plot.geometry() for plot in area.plots] == places  # the first ones did not move
    page.hide()
    page.show()
    assert all(plot.isVisible() for plot in area.plots)  # once painted, shown at once


def test_making_the_plots_ahead_of_need_is_known_while_it_lasts(
    window: MainWindow, fake_controller: FakeController, qtbot
) -> None:
    """What the training stack's background import steps aside for (see test_warmup)."""
    import pyqtgraph  # noqa: F401  (imported by the window's warm-up in the app)

    from desktop.gui.pages.train_page import TrainPage

    page = TrainPage(fake_controller, window.run_config)

    area = page.plot_area
    qtbot.addWidget(page)
    area.idle_s = lambda: 3600.0
    assert not area.making_plots
    area.prepare_plots()
    assert len(area.plots) == 0 and area.making_plots  # half a plot in one turn: its curves the next
    area.prepare_plots()
    assert len(area.plots) == 1 and area.making_plots  # the next ones a moment apart
    qtbot.waitUntil(lambda: len(area.plots) == 4, timeout=5000)
    assert not area.making_plots


def test_a_resume_refused_for_changed_data_resumes_on_it_when_the_user_says_so(
    window: MainWindow, fake_controller: FakeController, qtbot, tmp_path: Path
) -> None:
    from desktop.core.runs import data_record
    from desktop.core.runs.folders import RunDir
    from desktop.core.training.run import RESUME_ON_NEW_DATA

    run = RunDir.create(tmp_path / "runs", window.current_config(), None)
    data_record.save(run.path, data_record.DataRecord(rows={"train": 135}, labels=["negative", "positive"]))
    page = window.train_page
    page.resume_run(run)
    fake_controller.end()
    remedy = {"label": "Resume on the new data", "changes": {}, "action": RESUME_ON_NEW_DATA}
    failure = FailedEvent(
        "The data changed since this run started: training rows: 135 -> 117.", "", "", [remedy]
    )
    fake_controller.training_failed.emit(RunResult("invalid", failure=failure))

    assert [b.text() for b in page.failure.remedy_buttons] == ["Resume on the new data"]
    qtbot.mouseClick(page.failure.remedy_buttons[0], Qt.MouseButton.LeftButton)

    assert fake_controller.started[-1][1] is run and len(fake_controller.started) == 2  # resumed again
    assert data_record.load(run.path).accepted  # on the data as it is now (its classes still checked)


def test_a_long_path_in_the_status_line_never_widens_the_page(
    window: MainWindow, fake_controller: FakeController, tmp_path: Path
) -> None:
    page = window.train_page
    before = page.minimumSizeHint().width()
    folder = tmp_path.joinpath(*["a-long-folder-name"] * 12, "runs", "run-20261204-070000", "model")
    folder.mkdir(parents=True)
    fake_controller.start(window.current_config())
    fake_controller.end()
    fake_controller.training_finished.emit(RunResult("finished", tmp_path, folder, {"eval_loss": 0.5}))

    assert page.minimumSizeHint().width() == before  # the window does not grow past the screen
    assert str(folder) in page.status.text() and str(folder) in page.status.toolTip()  # whole, one hover away
    page.status.resize(400, page.status.height())
    shown = page.status.shown_text()
    assert "…" in shown and shown.startswith("Finished.") and shown.endswith("model")  # both ends kept


def test_the_step_count_shows_once_the_run_knows_it(
    window: MainWindow, fake_controller: FakeController
) -> None:
    """Before a run of 24 steps the bar read "step 0 of 100"."""
    page = window.train_page
    assert page.progress.text() == ""
    fake_controller.start(window.current_config())
    fake_controller.training_started.emit(StartedEvent("/runs/x", 24, 90, 10, "cpu"))
    assert page.progress.text() == "step 0 of 24"


def test_start_keeps_stop_and_the_progress_in_view_on_a_page_taller_than_the_window(
    window: MainWindow, qtbot
) -> None:
    """A preference run's six plots make the page taller than a 768-pixel screen's window: Start handed
    its focus to the log as it was disabled, and the page scrolled Stop and the progress bar away."""
    from desktop.gui.pages.stack import TRAIN

    window.resize(1366, 740)
    page = window.train_page
    page.plot_area.set_task("preference")
    while page.plot_area._make_next_plot():
        pass
    page.plot_area.reveal_plots()
    window.stack.setCurrentIndex(TRAIN)
    scroll = window.stack.widget(TRAIN).verticalScrollBar()
    qtbot.waitUntil(lambda: scroll.maximum() > 0)  # taller than the window: the page scrolls
    page.start_button.setFocus()

    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)

    assert scroll.value() == 0 and page.stop_button.hasFocus()
    assert not page.stop_button.visibleRegion().isEmpty() and not page.progress.visibleRegion().isEmpty()
