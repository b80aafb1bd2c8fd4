"""The try-it panel answers with each task's model without blocking the window."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QThread
from PySide6.QtWidgets import QApplication

from desktop.core.results.export import export_run
from desktop.gui.widgets.try_it_panel import TryItPanel
from tests.core.test_export import _finished_run

ANSWER_MS = 60_000


@pytest.fixture
def panel(qtbot) -> TryItPanel:
    widget = TryItPanel()
    qtbot.addWidget(widget)
    yield widget
    widget.shutdown()


def test_classification_shows_the_label_and_probabilities(
    request, panel: TryItPanel, qtbot, tmp_path
) -> None:
    run = _finished_run(request, "classification", "tiny_bert", "reviews.csv", tmp_path)
    assert panel.set_folder(run.model_dir, run.config_path)
    assert panel.options.isHidden() and not panel.labels_area.isHidden()
    panel.prompt.setPlainText("质量很好，非常满意")
    with qtbot.waitSignal(panel.answered, timeout=ANSWER_MS):
        panel.run_button.click()
        assert not panel.run_button.isEnabled()  # busy while the model loads on its thread
    assert panel.status.text().startswith("Predicted: ")
    shown = [panel.labels_grid.itemAtPosition(r, 0).widget().text() for r in range(2)]
    assert {s.replace("<b>", "").replace("</b>", "") for s in shown} == {"positive", "negative"}
    assert panel.run_button.isEnabled()


@pytest.mark.slow
def test_causal_lm_reply_streams_into_the_panel(request, panel: TryItPanel, qtbot, tmp_path) -> None:
    run = _finished_run(request, "causal-lm", "tiny_gpt2", "instructions.jsonl", tmp_path)
    folder = export_run(run, tmp_path / "export", verify=False).folder  # an exported folder, opened
    assert panel.set_folder(folder)
    assert panel.chat_check.isChecked() and not panel.options.isHidden()
    panel.temperature.setValue(0.0)
    panel.max_tokens.setValue(16)
    panel.prompt.setPlainText("Give me three tips for staying healthy.")
    pieces: list[str] = []
    threads: set[object] = set()
    panel.text_streamed.connect(pieces.append)
    panel.text_streamed.connect(lambda _piece: threads.add(QThread.currentThread()))

    with qtbot.waitSignal(panel.answered, timeout=ANSWER_MS):
        panel.run_button.click()

    assert len(pieces) >= 1 and panel.output.toPlainText() == "".join(pieces)
    assert threads == {QApplication.instance().thread()}  # the widgets were updated on the GUI thread only
    assert panel.status.text() == "Done."


@pytest.mark.slow
def test_seq2seq_generates_and_a_bad_folder_is_explained(request, panel: TryItPanel, qtbot, tmp_path) -> None:
    assert not panel.set_folder(tmp_path)
    assert "holds no model" in panel.status.text() and not panel.run_button.isEnabled()

    run = _finished_run(request, "seq2seq", "tiny_t5", "translation.tsv", tmp_path)
    assert panel.set_folder(run.model_dir, run.config_path)
    assert panel.chat_check.isHidden()
    panel.temperature.setValue(0.0)
    panel.max_tokens.setValue(8)
    panel.prompt.setPlainText("The weather is nice today.")
    with qtbot.waitSignal(panel.answered, timeout=ANSWER_MS):
        panel.run_button.click()
    assert panel.status.text() in ("Done.", "The model ended its reply at once (it produced no text).")
    assert panel.details_button.isHidden()


def test_a_model_that_fails_to_load_says_so_with_details(panel: TryItPanel, qtbot, tmp_path: Path) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "config.json").write_text(
        '{"architectures": ["BertForSequenceClassification"]}', encoding="utf-8"
    )
    assert panel.set_folder(folder)
    panel.prompt.setPlainText("hello")
    with qtbot.waitSignal(panel.answered, timeout=ANSWER_MS):
        panel.run_button.click()
    assert panel.status.text().startswith("Could not run the model:")
    assert not panel.details_button.isHidden() and "Traceback" in panel.details.toPlainText()


def test_the_base_model_answers_side_by_side(request, panel: TryItPanel, qtbot, tmp_path) -> None:
    run = _finished_run(request, "classification", "tiny_bert", "reviews.csv", tmp_path)
    assert panel.set_folder(run.model_dir, run.config_path)
    assert not panel.compare_check.isHidden()
    panel.compare_check.setChecked(True)
    panel.prompt.setPlainText("The battery died after a day.")
    with qtbot.waitSignal(panel.answered, timeout=ANSWER_MS):
        panel.run_button.click()

    assert panel.labels_grid.itemAtPosition(0, 2).widget().text().startswith("Base model (")
    bars = [panel.labels_grid.itemAtPosition(r, c).widget() for r in (1, 2) for c in (1, 2)]
    assert all(bar.format().endswith("%") for bar in bars)
    assert "Base model: " in panel.status.text()
    base = panel._base
    assert base is not None and base.made_for == panel.info
    panel.compare_check.setChecked(False)  # its memory goes back at once
    assert panel._base is None


@pytest.mark.slow
def test_a_chat_model_and_its_base_reply_in_two_columns(request, panel: TryItPanel, qtbot, tmp_path) -> None:
    run = _finished_run(request, "causal-lm", "tiny_gpt2", "instructions.jsonl", tmp_path)
    assert panel.set_folder(run.model_dir, run.config_path)
    panel.compare_check.setChecked(True)
    assert not panel.base_output.isHidden() and not panel.output_title.isHidden()
    panel.temperature.setValue(0.0)
    panel.max_tokens.setValue(6)
    panel.prompt.setPlainText("Name a colour.")
    with qtbot.waitSignal(panel.answered, timeout=ANSWER_MS):
        panel.run_button.click()
    assert panel.output.toPlainText() and panel.base_output.toPlainText()
    assert panel.output.toPlainText() != panel.base_output.toPlainText()
