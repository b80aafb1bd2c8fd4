"""The preference task in the window: its method, pairs side by side, its evaluation and its try-it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from PySide6.QtWidgets import QLabel

from desktop.core.settings.config import Columns, RunConfig
from desktop.core.system.events import RunResult
from desktop.core.training import evaluation
from desktop.core.training.preference_evaluation import PreferenceReport
from desktop.gui.main_window import MainWindow
from desktop.gui.widgets.evaluation_view import EvaluationView
from desktop.gui.widgets.pair_preview_widget import PairPreviewWidget
from desktop.gui.widgets.try_it_panel import TryItPanel

HUB_MODEL = "Qwen/Qwen2.5-0.5B-Instruct"  # a name only: not downloaded, never fetched


def _choose_preference(window: MainWindow) -> None:
    picker = window.data_page.model_picker
    picker.task_combo.setCurrentIndex(picker.task_combo.findData("preference"))


def _load(window: MainWindow, qtbot, folder: Path, rows: list[dict]) -> Path:
    """Choose a model name and a JSON Lines file of ``rows``, and wait for the checked preview."""
    page = window.data_page
    path = folder / "pairs.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    page.model_picker.model_edit.setText(HUB_MODEL)
    page.model_picker.model_edit.editingFinished.emit()
    page.dataset_picker.fraction_spin.setValue(0)  # every row in the preview, in the file's order
    with qtbot.waitSignal(page.preview_loaded, timeout=30_000):
        page.dataset_picker.data_edit.setText(str(path))
        page.dataset_picker.data_edit.editingFinished.emit()
    return path


def _card_texts(card) -> tuple[str, str, str, str, str]:
    """What a pair's card shows: the prompt, the two headers, and the two answers under them."""
    grid = card.layout()
    at = [grid.itemAtPosition(row, column).widget().text() for row, column in ((1, 0), (2, 0), (2, 1))]
    return (*at, grid.itemAtPosition(3, 0).widget().text(), grid.itemAtPosition(3, 1).widget().text())


def test_choosing_preference_offers_the_method_and_writes_it(window: MainWindow) -> None:
    picker = window.data_page.model_picker
    assert picker.method_combo.isHidden()  # the method is for preference runs only
    _choose_preference(window)
    assert picker.task_combo.currentText() == "Preference (DPO / ORPO)"
    assert not picker.method_combo.isHidden() and picker.method_combo.currentText() == "DPO"
    assert "frozen reference copy" in picker.method_combo.toolTip()
    config = window.current_config()
    assert (config.task, config.preference.method) == ("preference", "dpo")
    assert config.training.learning_rate == 5e-6  # the default rate, a tenth: the model already answers
    assert window.options_page.learning_rate.value() == 5e-6  # and Memory & speed shows it, not 5e-5

    picker.method_combo.setCurrentIndex(picker.method_combo.findData("orpo"))
    assert window.current_config().preference.method == "orpo"
    assert "no reference model" in picker.method_combo.toolTip()

    picker.task_combo.setCurrentIndex(picker.task_combo.findData("causal-lm"))
    assert picker.method_combo.isHidden() and window.current_config().task == "causal-lm"
    assert window.current_config().training.learning_rate == 5e-5
    loaded = RunConfig(task="preference")
    loaded.preference.method = "orpo"
    window.run_config.replace(loaded)  # a config opened from a file shows its method
    assert not picker.method_combo.isHidden() and picker.method_combo.currentText() == "ORPO"


def test_prompt_chosen_rejected_pairs_sit_side_by_side(window: MainWindow, qtbot, tmp_path: Path) -> None:
    _choose_preference(window)
    rows = [
        {"prompt": f"问题 {i}：什么是梯度？", "chosen": f"好的回答 {i}", "rejected": f"坏的回答 {i}"}
        for i in range(8)
    ]
    _load(window, qtbot, tmp_path, rows)
    page = window.data_page
    mapping = page.column_mapping
    assert list(mapping.mapping_combos) == ["chosen", "rejected", "prompt"]
    assert [mapping.mapping_combos[r].currentText() for r in ("chosen", "rejected", "prompt")] == [
        "chosen",
        "rejected",
        "prompt",
    ]
    assert not mapping.pairs_help.isHidden() and page.problem() != ""  # the model is not downloaded
    assert page.preview_tabs.currentWidget() is page.pairs and page.preview_tabs.tabText(0) == "Pairs"
    assert len(page.pairs.cards) == 5  # the first five pairs
    assert _card_texts(page.pairs.cards[0]) == (
        "Prompt: 问题 0：什么是梯度？",
        "Chosen",
        "Rejected",
        "好的回答 0",
        "坏的回答 0",
    )
    assert _card_texts(page.pairs.cards[4])[0] == "Prompt: 问题 4：什么是梯度？"
    assert page.table.rowCount() == 8  # the rows as they are, in the other tab

    page.model_picker.task_combo.setCurrentIndex(page.model_picker.task_combo.findData("causal-lm"))
    assert page.preview_tabs.indexOf(page.pairs) < 0  # other tasks keep the table alone


def test_ultrafeedback_conversations_show_their_shared_prompt(
    window: MainWindow, qtbot, tmp_path: Path
) -> None:
    _choose_preference(window)

    def chat(question: str, answer: str) -> list[dict]:
        return [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]

    rows = [
        {
            "chosen": chat(f"What is {i}+{i}?", f"It is {2 * i}."),
            "rejected": chat(f"What is {i}+{i}?", "No idea."),
        }
        for i in range(3)
    ]
    _load(window, qtbot, tmp_path, rows)
    page = window.data_page
    assert window.current_config().columns.mapped() == {"chosen": "chosen", "rejected": "rejected"}
    assert [_card_texts(card) for card in page.pairs.cards] == [
        (f"Prompt: What is {i}+{i}?", "Chosen", "Rejected", f"It is {2 * i}.", "No idea.") for i in range(3)
    ]
    assert page.dataset_picker.problem() == "" and page.column_mapping.problem() == ""


def test_every_layout_shows_its_real_prompt_and_a_row_without_a_pair_says_so(qtbot) -> None:
    widget = PairPreviewWidget()
    qtbot.addWidget(widget)
    hh = {
        "chosen": "\n\nHuman: Hi\n\nAssistant: Hello!\n\nHuman: A fruit?\n\nAssistant: An apple.",
        "rejected": "\n\nHuman: Hi\n\nAssistant: Hello!\n\nHuman: A fruit?\n\nAssistant: A hammer.",
    }
    widget.show_pairs([hh, {"chosen": None, "rejected": "x"}], Columns(chosen="chosen", rejected="rejected"))
    prompt, _, _, chosen, rejected = _card_texts(widget.cards[0])
    assert prompt == "User: Hi\nAssistant: Hello!\nUser: A fruit?"  # the conversation up to the answers
    assert (chosen, rejected) == ("An apple.", "A hammer.")
    problem = widget.cards[1].findChildren(QLabel)[-1].text()
    assert problem.startswith("This row holds no readable pair")

    widget.show_pairs([hh], Columns(chosen="chosen"))
    assert not widget.cards and "Choose the chosen and rejected columns" in widget.message.text()


def _reports() -> tuple[PreferenceReport, PreferenceReport]:
    base = PreferenceReport("preference", 80, accuracy=0.44, margin=-0.05, margins=[-0.2, 0.1])
    example = {"prompt": "Name a thing.", "chosen": "apple", "rejected": "hammer", "before": -0.2}
    tuned = PreferenceReport(
        "preference",
        80,
        accuracy=0.95,
        margin=1.25,
        margins=[1.1, -0.3],
        method="dpo",
        reward_accuracy=1.0,
        reward_margin=2.5,
        improved=[{**example, "after": 1.1}],
        still_wrong=[
            {"prompt": "Another.", "chosen": "pear", "rejected": "saw", "before": 0.1, "after": -0.3}
        ],
    )
    return tuned, base


def test_the_evaluation_reads_base_to_tuned_with_the_pairs(qtbot) -> None:
    tuned, base = _reports()
    view = EvaluationView()
    qtbot.addWidget(view)
    view.show_report(tuned, base)

    summary = view.summary.text()
    assert "Preference accuracy 0.440 → <b>0.950</b>" in summary
    assert "Mean margin -0.050 → <b>1.250</b>" in summary and "on 80 held-out pairs" in summary
    assert "DPO reward accuracy 1.000 at the last evaluation · reward margin 2.500" in summary
    assert view.verdict.isHidden()
    assert view.improved_title.text() == "Now preferring the chosen answer"
    assert view.still_wrong_title.text() == "Still preferring the rejected answer"
    improved = [view.improved.item(0, c).text() for c in range(5)]
    assert improved == ["Name a thing.", "apple", "hammer", "-0.200", "+1.100"]
    assert [view.still_wrong.item(0, c).text() for c in (0, 3, 4)] == ["Another.", "+0.100", "-0.300"]

    worse = PreferenceReport("preference", 80, accuracy=0.3, margin=-0.4)
    view.show_report(worse, base)
    assert "less often than the base model" in view.verdict.text() and not view.verdict.isHidden()
    assert view.improved.isHidden() and "every pair measured" in view.still_wrong_title.text()


def test_a_finished_preference_run_opens_its_evaluation(window: MainWindow, app_home: Path) -> None:
    from tests.core.helpers import fake_run

    run = fake_run(app_home / "runs", "dpo")
    run.model_dir.mkdir()
    (run.model_dir / "config.json").write_text("{}", encoding="utf-8")
    tuned, base = _reports()
    evaluation.save(run.path, tuned, base)
    page = window.export_page
    page.show_result(RunResult("finished", run.path, run.model_dir, {}))
    assert page.tabs.currentWidget() is page.evaluation
    assert "Preference accuracy 0.440 → <b>0.950</b>" in page.evaluation.summary.text()


def _preference_run(model: Path, folder: Path) -> tuple[Path, Path]:
    """A finished preference run's model folder and config (the model as the base: a tiny GPT-2)."""
    config = RunConfig(task="preference")
    config.model.name = str(model)
    config.columns = Columns(prompt="prompt", chosen="chosen", rejected="rejected")
    shutil.copytree(model, folder / "model")
    config.save(folder / "config.toml")
    return folder / "model", folder / "config.toml"


@pytest.mark.slow
def test_a_preference_run_answers_beside_its_base_model(qtbot, tiny_gpt2: Path, tmp_path: Path) -> None:
    model, config = _preference_run(tiny_gpt2, tmp_path)
    panel = TryItPanel()
    qtbot.addWidget(panel)
    assert panel.set_folder(model, config)
    assert "text generation" in panel.folder_label.text()
    assert panel.chat_check.isChecked() and not panel.chat_check.isHidden()  # it was taught chats
    assert not panel.compare_check.isHidden()
    panel.compare_check.setChecked(True)
    assert not panel.base_output.isHidden() and panel.base_title.text().startswith("Base model (")
    panel.temperature.setValue(0.0)
    panel.max_tokens.setValue(4)
    panel.prompt.setPlainText("Name a fruit.")
    with qtbot.waitSignal(panel.answered, timeout=60_000):
        panel.run_button.click()
    assert "Could not run" not in panel.status.text(), panel.details.toPlainText()
    assert panel.output.toPlainText() and panel.base_output.toPlainText()
    panel.shutdown()


def test_a_preference_run_may_be_written_as_gguf(window: MainWindow, tiny_gpt2: Path, tmp_path: Path) -> None:
    from desktop.core.runs.folders import RunDir

    config = RunConfig(task="preference")
    config.model.name = str(tiny_gpt2)
    config.data.files = ["pairs.jsonl"]
    run = RunDir.create(tmp_path / "runs", config)
    run.close()
    run.unlock()
    shutil.copytree(tiny_gpt2, run.model_dir)
    page = window.export_page
    page.show_result(RunResult("finished", run.path, run.model_dir, {}))
    page.format_combo.setCurrentIndex(page.format_combo.findData("gguf"))
    assert "GGUF is for decoder chat models" not in page.export_status.text()
