"""A preference run on the Train step: its reward plots and log, and where a chat run leads to one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from desktop.core.runs.folders import RunDir
from desktop.core.settings.config import RunConfig
from desktop.core.system.events import FinishedEvent, LogEvent, StartedEvent, StoppedEvent
from desktop.gui.dialogs.model_browser_dialog import FIT_COLUMN
from desktop.gui.main_window import MainWindow
from tests.core.helpers import fake_run
from tests.gui.conftest import FakeController


def _dpo_log(step: int) -> LogEvent:
    share = step / 20
    return LogEvent(
        step,
        step / 20,
        {
            "loss": 0.69 - 0.4 * share,
            "learning_rate": 5e-6,
            "rewards/accuracies": 0.5 + 0.4 * share,
            "rewards/margins": 1.5 * share,
            "rewards/chosen": 0.3 * share,
            "rewards/rejected": -1.2 * share,
            "logps/chosen": -120.0 - 2 * share,
            "logps/rejected": -130.0 - 20 * share,
            "logits/chosen": -1.7,
            "num_tokens": 1000.0 * step,
        },
    )


def _eval_log(step: int) -> LogEvent:
    metrics = {"eval_loss": 0.4, "eval_rewards/accuracies": 0.82, "eval_rewards/margins": 1.4}
    return LogEvent(step, step / 20, metrics)


def _shown_page(window: MainWindow, fake_controller: FakeController, qtbot: object) -> object:
    from desktop.gui.pages.train_page import TrainPage

    page = TrainPage(fake_controller, window.run_config)  # shown on its own: the window needs data
    qtbot.addWidget(page)
    page.resize(1000, 900)
    page.show()
    return page


def test_reward_metrics_add_a_row_with_the_reward_plots(
    window: MainWindow, fake_controller: FakeController, qtbot
) -> None:
    page = _shown_page(window, fake_controller, qtbot)
    area = page.plot_area
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)  # the wizard's task: classification
    fake_controller.training_started.emit(StartedEvent("/runs/dpo", 20, 320, 32, "cpu"))
    qtbot.waitUntil(lambda: all(plot.isVisible() for plot in area.plots), timeout=2000)
    assert len(area.plots) == 4 and area.accuracy_plot is None

    for step in range(2, 21, 2):
        fake_controller.metrics_logged.emit(_dpo_log(step))
    fake_controller.metrics_logged.emit(_eval_log(20))

    assert area.accuracy_plot is not None and area.rewards_plot is not None
    qtbot.waitUntil(lambda: area.accuracy_plot.isVisible() and area.rewards_plot.isVisible(), timeout=2000)
    grid = area.plot_grid
    assert [grid.getItemPosition(grid.indexOf(plot))[:2] for plot in area.plots[4:]] == [(2, 0), (2, 1)]
    assert area.accuracy_plot.getPlotItem().titleLabel.text == "Reward accuracy"
    assert area.rewards_plot.getPlotItem().titleLabel.text == "Rewards"
    assert area.accuracy_plot.count("train") == 10 and area.accuracy_plot.count("eval") == 1
    assert area.rewards_plot.count("margin") == 10 and area.rewards_plot.count("eval_margin") == 1
    assert area.rewards_plot.count("chosen") == area.rewards_plot.count("rejected") == 10
    assert area.rewards_plot.count("logp_chosen") == area.rewards_plot.count("logp_rejected") == 10
    assert area.loss_plot.count("train") == 10  # the loss as for every run
    low, high = area.accuracy_plot.getPlotItem().vb.viewRange()[1]
    assert -0.1 <= low <= 0 and 1 <= high <= 1.1  # a share of the pairs: 0 to 1 all run

    fake_controller.end()  # every plot drawn at the end
    _x, y = area.accuracy_plot._curves["train"].getData()
    assert y is not None and len(y) == 10 and y[-1] == 0.9
    legend = [label.text for _sample, label in area.rewards_plot.legend.items]
    assert legend[:4] == ["margin", "chosen", "rejected", "eval margin"] and "log-prob. chosen" in legend

    log = page.log.toPlainText()
    assert "step 20: reward accuracy 0.90, margin 1.5  ·  loss 0.29" in log
    assert "validation reward accuracy 0.82, margin 1.4" in log
    assert "chosen reward 0.3" in log and "log-probability" not in log and "logits" not in log


def test_a_preference_run_set_up_gets_its_plots_ahead_of_need(
    window: MainWindow, fake_controller: FakeController, qtbot
) -> None:
    import pyqtgraph  # noqa: F401  (imported by the window's warm-up in the app)

    from desktop.gui.pages.train_page import TrainPage

    page = TrainPage(fake_controller, window.run_config)
    qtbot.addWidget(page)
    area = page.plot_area
    area.idle_s = lambda: 3600.0
    area.prepare_plots()
    qtbot.waitUntil(lambda: len(area.plots) == 4 and not area.making_plots, timeout=5000)
    window.run_config.set("task", "preference")  # the user chose preference tuning
    assert area.making_plots  # made in pieces, as the four were
    qtbot.waitUntil(lambda: len(area.plots) == 6, timeout=5000)
    assert not area.making_plots

    page.resize(1000, 900)
    page.show()
    qtbot.waitUntil(lambda: all(plot.isVisible() for plot in area.plots), timeout=2000)
    window.run_config.set("task", "causal-lm")  # and changed their mind: no reward row
    assert not area.accuracy_plot.isVisible() and not area.rewards_plot.isVisible()
    three_rows = area.loss_plot.height()
    qtbot.waitUntil(lambda: area.loss_plot.height() > three_rows * 1.3)  # two rows share the height again


def test_a_classification_or_chat_run_never_shows_reward_plots(
    window: MainWindow, fake_controller: FakeController, qtbot
) -> None:
    page = _shown_page(window, fake_controller, qtbot)
    area = page.plot_area
    for task, metrics in (
        ("classification", {"eval_loss": 0.3, "eval_accuracy": 0.8}),
        ("causal-lm", {"eval_loss": 2.1, "eval_perplexity": 8.2}),
    ):
        window.run_config.set("task", task)
        qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
        fake_controller.training_started.emit(StartedEvent("/runs/x", 10, 90, 10, "cpu"))
        for step in range(1, 11):
            fake_controller.metrics_logged.emit(LogEvent(step, step / 10, {"loss": 1 / step}))
        fake_controller.metrics_logged.emit(LogEvent(10, 1.0, metrics))
        fake_controller.end()
        assert len(area.plots) == 4 and area.accuracy_plot is None
        assert "reward" not in page.log.toPlainText()


def test_a_preference_run_after_another_hides_its_rewards_for_the_next_task(
    window: MainWindow, fake_controller: FakeController, qtbot
) -> None:
    page = _shown_page(window, fake_controller, qtbot)
    area = page.plot_area
    window.run_config.set("task", "preference")
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    fake_controller.metrics_logged.emit(_dpo_log(2))
    fake_controller.end()
    qtbot.waitUntil(lambda: area.rewards_plot is not None and area.rewards_plot.isVisible(), timeout=2000)

    window.run_config.set("task", "classification")
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    assert not area.rewards_plot.isVisible() and area.rewards_plot.count("margin") == 0
    fake_controller.end()


# ---------------------------------------------------------------------- from a finished chat run


def _chat_run(runs: Path, name: str, model: Path | None = None, finished: bool = True) -> RunDir:
    """A chat (causal-LM) run as one that ended leaves it; a finished one saved ``model`` (or a stub)."""
    config = RunConfig(task="causal-lm")
    config.model.name = "Qwen/Qwen2.5-0.5B-Instruct"
    config.data.files = ["chats.jsonl"]
    config.output.name = name
    run = RunDir.create(runs, config)
    run.append(StartedEvent(str(run.path), 20, 90, 10, "cpu"))
    run.append(LogEvent(20, 1.0, {"loss": 1.2}))
    run.append(FinishedEvent(20, str(run.model_dir), {}) if finished else StoppedEvent(20, ""))
    run.close()
    run.unlock()
    if finished:
        if model is not None:
            shutil.copytree(model, run.model_dir)
        else:
            run.model_dir.mkdir()
            (run.model_dir / "config.json").write_text("{}", encoding="utf-8")
    return run


def test_tune_preferences_shows_for_a_finished_chat_run_and_sets_up_the_wizard(
    window: MainWindow, app_home: Path, qtbot
) -> None:
    runs = app_home / "runs"
    chat = _chat_run(runs, "chat")
    _chat_run(runs, "stopped-chat", finished=False)
    classifier = fake_run(runs, "classifier", FinishedEvent(20, "model", {}))
    classifier.model_dir.mkdir()
    (classifier.model_dir / "config.json").write_text("{}", encoding="utf-8")
    window.run_config.set("data.files", ["chats.jsonl"])  # the wizard's data: a chat set, not pairs

    window.history.show_runs()
    dialog = window.history.dialog
    qtbot.waitUntil(lambda: dialog.model.rowCount() == 3)
    button = dialog.preference_button
    assert button.text() == "Tune preferences…" and "which answers are better" in button.toolTip()
    dialog.select(classifier.path.name)
    assert not button.isVisible()  # a classifier has no chat answers to rank
    dialog.select(next(info.name for info in dialog.infos if info.name.endswith("stopped-chat")))
    assert not button.isVisible()  # no model saved
    dialog.select(chat.path.name)
    assert button.isVisible()
    shutil.rmtree(chat.model_dir)
    dialog.select(classifier.path.name)
    dialog.select(chat.path.name)
    assert not button.isVisible()  # its model deleted since
    chat.model_dir.mkdir()
    (chat.model_dir / "config.json").write_text("{}", encoding="utf-8")
    dialog.select(classifier.path.name)
    dialog.select(chat.path.name)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    config = window.run_config.config
    assert config.task == "preference" and config.model.name == str(chat.model_dir)
    assert config.data.files == []  # the pairs are chosen next
    assert "choose pairs of answers" in window.statusBar().currentMessage()
    # Nothing said of data before the user has chosen the pairs: nothing to check yet.
    page = window.data_page
    assert page.dataset_picker.data_error.isHidden() and page.column_mapping.mapping_note.text() == ""
    assert page.column_mapping.mapping_error.isHidden()


@pytest.mark.slow
def test_the_model_browser_lists_finished_chat_runs_for_preference_tuning(
    qtbot, app_home: Path, tiny_gpt2: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desktop.gui.dialogs.model_browser_dialog import ModelBrowser

    monkeypatch.setattr("desktop.core.hub.search.on_this_computer", lambda: [])  # the hub caches aside

    runs = app_home / "runs"
    chat = _chat_run(runs, "qwen-chat", model=tiny_gpt2)
    _chat_run(runs, "unfinished", finished=False)
    browser = ModelBrowser(RunConfig(task="preference"), gpu_free=None, ram=16 * 2**30)
    qtbot.addWidget(browser)
    label = f"run: {chat.path.name} (finished chat run)"
    qtbot.waitUntil(lambda: label in _rows(browser.local), timeout=10_000)
    assert not any("unfinished" in row for row in _rows(browser.local))
    row = _rows(browser.local).index(label)
    assert browser.local.item(row, 0).toolTip() == str(chat.model_dir)
    assert browser.local.item(row, 1).text() not in ("?", "")  # its parameters, from its weights
    qtbot.waitUntil(lambda: browser.local.item(row, FIT_COLUMN).text() != "…", timeout=30_000)  # a badge
    browser.tabs.setCurrentIndex(2)
    browser.local.selectRow(row)
    with qtbot.waitSignal(browser.chosen) as chosen:
        browser.use_button.click()
    assert chosen.args == [str(chat.model_dir)]

    classifier = ModelBrowser(RunConfig(task="classification"), gpu_free=None, ram=16 * 2**30)
    qtbot.addWidget(classifier)
    with qtbot.waitSignal(classifier._tasks[-1].finished, timeout=10_000):  # the listing, begun last
        pass
    assert _rows(classifier.local) == []  # a chat model is no classifier


def _rows(table) -> list[str]:
    return [table.item(r, 0).text() for r in range(table.rowCount())]


def test_a_curve_a_run_added_for_itself_goes_with_it(
    window: MainWindow, fake_controller: FakeController, qtbot
) -> None:
    from desktop.core.system.events import MemoryEvent

    page = _shown_page(window, fake_controller, qtbot)
    area = page.plot_area
    gib = 2**30
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    page.spill_bar.reset(windows=True)
    fake_controller.memory_sampled.emit(
        MemoryEvent(1, "cuda:0", 7 * gib, 9 * gib, 9 * gib, gib, 8 * gib, 8 * gib, [8 * gib, 7 * gib])
    )
    fake_controller.end()
    names = area.memory_plot.curve_names()
    assert "shared" in names and "gpu1" in names  # Windows paged it; it had two GPUs

    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)  # the next run, on one GPU
    fake_controller.memory_sampled.emit(MemoryEvent(1, "cuda:0", 2 * gib, 3 * gib, 3 * gib, gib))
    fake_controller.end()
    assert not {"shared", "gpu0", "gpu1"} & set(area.memory_plot.curve_names())
    legend = [label.text for _sample, label in area.memory_plot.legend.items]
    assert legend == ["VRAM allocated", "VRAM reserved", "process RAM"]
