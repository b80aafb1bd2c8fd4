"""Reasoning runs on the Model & data step: a Rewards tab that guesses how the answers compare, shows
what each reward gives the reference answer and a wrong one, and says at once when a typed format
cannot work."""

from __future__ import annotations

from pathlib import Path

from desktop.gui.main_window import MainWindow


def test_the_rewards_tab_previews_the_rewards_on_the_data(
    window: MainWindow, qtbot, tiny_gpt2: Path, samples: Path
) -> None:
    page = window.data_page
    picker, dataset, rewards = page.model_picker, page.dataset_picker, page.rewards
    picker.task_combo.setCurrentIndex(picker.task_combo.findData("grpo"))
    assert picker.task_combo.currentText() == "Reasoning (GRPO)"
    picker.model_edit.setText(str(tiny_gpt2))
    picker.model_edit.editingFinished.emit()
    with qtbot.waitSignal(page.preview_loaded, timeout=30_000):
        dataset.data_edit.setText(str(samples / "reasoning-zh.jsonl"))
        dataset.data_edit.editingFinished.emit()
    assert page.preview_tabs.tabText(0) == "Rewards" and page.preview_tabs.currentWidget() is rewards
    config = window.run_config.config
    assert (config.columns.prompt, config.columns.answer) == ("question", "answer")
    assert config.grpo.answer_check == "number" and rewards.check.currentData() == "number"
    assert rewards.preview.rowCount() == 3
    right, wrong = rewards.preview.item(0, 1).text(), rewards.preview.item(0, 2).text()
    assert right.endswith("answer 1, format 1") and wrong.endswith("answer 0, format 1")

    rewards.format.setCurrentIndex(rewards.format.findData("custom"))
    rewards.pattern.setText(r"Answer: \d+")  # no group to take the answer from
    assert "no group to take the answer from" in rewards.pattern_said.text()
    assert rewards.preview.rowCount() == 0
    rewards.pattern.setText(r"(?s).*Answer: (?P<answer>\d+)")
    assert rewards.pattern_said.text() == "" and rewards.preview.rowCount() == 3
    assert config.grpo.format == r"(?s).*Answer: (?P<answer>\d+)"

    rewards.answer_weight.setValue(0.0)
    assert window.run_config.config.grpo.answer_weight == 0.0
    assert "answer" not in rewards.preview.item(0, 1).text().split("→")[1]  # off: not scored


def test_an_answer_sampled_during_training_is_in_the_log(window: MainWindow) -> None:
    from desktop.core.system.events import SampleEvent

    controller = window.train_page.controller
    controller.sampled.emit(
        SampleEvent(20, "3 + 4 = ?", "3 and 4 make 7.\nAnswer: 7", {"answer": 1.0, "format": 1.0})
    )
    assert (
        "sample at step 20 (answer 1, format 1): 3 and 4 make 7. Answer: 7"
        in window.train_page.log.toPlainText()
    )


def test_a_reasoning_run_plots_its_rewards_and_answers(window: MainWindow) -> None:
    from desktop.core.system.events import LogEvent

    plots = window.train_page.plot_area
    plots.set_task("preference")  # a preference run's row first: made again for the reasoning run
    while plots._make_next_plot():
        pass
    assert plots.accuracy_plot is not None and len(plots.plots) == 6
    plots.set_task("grpo")
    metrics = {
        "loss": 0.0,
        "reward": 0.6,
        "reward_std": 0.2,
        "rewards/answer/mean": 0.5,
        "rewards/format/mean": 0.9,
        "completions/mean_length": 120.0,
        "kl": 0.01,
    }
    plots.show_metrics(LogEvent(step=5, epoch=0.1, metrics=metrics))
    assert len(plots.plots) == 6 and plots.reward_plot in plots.plots
    assert plots.reward_plot.curve_names() == ["reward", "spread", "answer", "format"]
    assert plots.answers_plot.curve_names() == ["length", "kl"]


def test_the_evaluation_tab_shows_each_rewards_share_before_and_after(qtbot) -> None:
    from desktop.core.training.grpo_evaluation import RewardReport
    from desktop.gui.widgets.evaluation_view import EvaluationView

    sample = {"prompt": "3 + 4 = ?", "reference": "7", "output": "Answer: 7", "scores": {"answer": 1.0}}
    tuned = RewardReport("grpo", 20, {"answer": 0.45, "format": 0.9}, {}, [], [sample])
    base = RewardReport("grpo", 20, {"answer": 0.1, "format": 0.2}, {}, [], [{**sample, "output": "7?"}])
    view = EvaluationView()
    qtbot.addWidget(view)
    view.show_report(tuned, base)
    text = view.summary.text()
    assert "answer 0.100 → <b>0.450</b>" in text and "format 0.200 → <b>0.900</b>" in text
    assert "share of 20 held-out prompts whose greedy answer earns each reward" in text
    assert [view.samples.item(0, c).text() for c in range(4)] == ["3 + 4 = ?", "7", "7?", "Answer: 7"]


def test_a_finished_chat_run_is_trained_with_rewards_from_the_runs_dialog(
    window: MainWindow, app_home: Path, qtbot
) -> None:
    from PySide6.QtCore import Qt

    from tests.gui.test_preference_plots import _chat_run

    chat = _chat_run(app_home / "runs", "chat")
    window.history.show_runs()
    dialog = window.history.dialog
    qtbot.waitUntil(lambda: dialog.model.rowCount() == 1)
    dialog.select(chat.path.name)
    button = dialog.rewards_button
    assert button.isVisible() and button.text() == "Train with rewards…"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    config = window.run_config.config
    assert config.task == "grpo" and config.model.name == str(chat.model_dir)
    assert config.training.learning_rate == 1e-6 and config.data.files == []
    assert "with rewards: choose prompts" in window.statusBar().currentMessage()
    assert window.data_page.preview_tabs.indexOf(window.data_page.rewards) == 0


def test_answers_per_prompt_that_cannot_work_are_said_in_the_tab_and_stop_next(
    window: MainWindow, qtbot, tiny_gpt2: Path, samples: Path
) -> None:
    page = window.data_page
    picker, dataset, rewards = page.model_picker, page.dataset_picker, page.rewards
    picker.task_combo.setCurrentIndex(picker.task_combo.findData("grpo"))
    picker.model_edit.setText(str(tiny_gpt2))
    picker.model_edit.editingFinished.emit()
    with qtbot.waitSignal(page.preview_loaded, timeout=30_000):
        dataset.data_edit.setText(str(samples / "reasoning-zh.jsonl"))
        dataset.data_edit.editingFinished.emit()
    assert window.run_config.config.grpo.system_prompt.startswith("请一步一步思考")  # the data's language
    rewards.generations.setValue(3)  # batch 8: 3 answers per prompt cannot be batched
    assert rewards.problem().startswith(
        "Answers per prompt must divide batch size x gradient accumulation (8)"
    )
    assert page.problem() == rewards.problem() and dataset.problem() == ""  # the data is fine
    rewards.generations.setValue(4)
    assert rewards.problem() == "" and page.problem() == ""
    rewards.format.setCurrentIndex(rewards.format.findData("boxed"))
    assert "\\boxed{}" in window.run_config.config.grpo.system_prompt  # our prompt follows the format
