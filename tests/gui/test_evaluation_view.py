"""The evaluation view: base -> fine-tuned, each class, the confusion matrix and its rows, the mistakes."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from desktop.core.system.events import FinishedEvent, RunResult
from desktop.core.training import evaluation
from desktop.gui.main_window import MainWindow
from desktop.gui.widgets.evaluation_view import EvaluationView
from tests.core.helpers import fake_run

LABELS = ["负面", "正面"]
TEXTS = ["做工粗糙", "太失望了", "非常好用", "质量很好", "还行吧，挺好"]


def _reports() -> tuple[evaluation.ClassificationReport, evaluation.ClassificationReport]:
    truth = [0, 0, 1, 1, 1]
    tuned = [[0.9, 0.1], [0.3, 0.7], [0.1, 0.9], [0.2, 0.8], [0.95, 0.05]]
    base = [[0.4, 0.6]] * 5  # the untrained head says the same for every row
    counts = {"train": {"负面": 40, "正面": 60}, "eval": {"负面": 2, "正面": 3}}
    return (
        evaluation.classify_report(LABELS, truth, tuned, TEXTS, counts),
        evaluation.classify_report(LABELS, truth, base, TEXTS, counts),
    )


def test_the_view_shows_before_and_after_and_a_cell_lists_its_rows(qtbot) -> None:
    tuned, base = _reports()
    view = EvaluationView()
    qtbot.addWidget(view)
    view.show_report(tuned, base)

    assert "0.600 → <b>0.600</b>" in view.summary.text()  # accuracy base -> fine-tuned
    assert view.classes.item(1, 0).text() == "正面" and "→" in view.classes.item(1, 3).text()
    assert [view.matrix.item(t, p).text() for t in range(2) for p in range(2)] == ["1", "1", "1", "2"]
    assert view.counts.item(1, 1).text() == "60" and view.counts.item(1, 2).text() == "3"
    # The mistakes, the surest first: a positive row called negative at 95%.
    assert view.rows.rowCount() == 2
    assert (view.rows.item(0, 0).text(), view.rows.item(0, 3).text()) == ("还行吧，挺好", "95%")
    with qtbot.waitSignal(view.cell_shown):
        rect = view.matrix.visualItemRect(view.matrix.item(1, 1))
        qtbot.mouseClick(view.matrix.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert "2 rows labelled 正面 and predicted 正面" in view.rows_title.text()
    assert {view.rows.item(i, 0).text() for i in range(2)} == {"非常好用", "质量很好"}


def test_a_model_that_says_one_label_for_everything_is_called_out(qtbot) -> None:
    _, base = _reports()
    view = EvaluationView()
    qtbot.addWidget(view)
    view.show_report(base)
    assert "gives every row the same label" in view.verdict.text() and not view.verdict.isHidden()


def test_export_page_and_run_history_open_the_evaluation(window: MainWindow, app_home: Path, qtbot) -> None:
    tuned, base = _reports()
    run = fake_run(app_home / "runs", "evaluated", FinishedEvent(20, "model", {}))
    run.model_dir.mkdir()
    (run.model_dir / "config.json").write_text("{}", encoding="utf-8")
    evaluation.save(run.path, tuned, base)

    window.export_page.show_result(RunResult("finished", run.path, run.model_dir, {}))
    page = window.export_page
    assert page.tabs.currentWidget() is page.evaluation and page.evaluation.report.rows == 5

    window.history.show_runs()
    dialog = window.history.dialog
    qtbot.waitUntil(lambda: dialog.model.rowCount() > 0)
    dialog.select(run.path.name)
    assert dialog.evaluation_button.isEnabled()
    dialog.evaluation_button.click()
    assert dialog.evaluation_dialog.isVisible() and run.path.name in dialog.evaluation_dialog.windowTitle()


def test_the_export_page_and_the_evaluation_name_the_checkpoint_and_how_it_scored(
    window: MainWindow, app_home: Path
) -> None:
    tuned, base = _reports()
    from tests.gui.test_export_checkpoint import FOUND

    found = dict(FOUND, stopped_early=True)
    run = fake_run(app_home / "runs", "best", FinishedEvent(20, "model", {"eval_loss": 0.5881}, best=found))
    run.model_dir.mkdir()
    (run.model_dir / "config.json").write_text("{}", encoding="utf-8")
    evaluation.save(run.path, tuned, base)

    tuned.loss, base.loss = 0.5881, 0.41  # the base model's loss was lower: the loss is the run's measure
    evaluation.save(run.path, tuned, base)
    window.export_page.show_result(RunResult("finished", run.path, run.model_dir, {"eval_loss": 0.5881}))
    said = (
        "The model is the best checkpoint, step 5 of 20: validation loss 0.5881 "
        "(the last step scored 0.7854)."
    )
    page = window.export_page
    assert said in page.metrics_label.text()  # under the scores: which step's they are
    assert page.evaluation.checkpoint.text() == said and not page.evaluation.checkpoint.isHidden()
    # The header leads with the figure the run chose, and judges by it: here it got worse.
    assert page.evaluation.summary.text().startswith("Validation loss 0.410 → <b>0.588</b> · Accuracy")
    assert "does worse than the base model" in page.evaluation.verdict.text()

    last = fake_run(app_home / "runs", "last", FinishedEvent(20, "model", {}, best=dict(found, step=20)))
    last.model_dir.mkdir()
    (last.model_dir / "config.json").write_text("{}", encoding="utf-8")
    evaluation.save(last.path, tuned, base)
    window.export_page.show_result(RunResult("finished", last.path, last.model_dir, {}))
    assert page.evaluation.checkpoint.text() == (
        "The model is the last step's, step 20, which scored best: validation loss 0.5881."
    )
    plain = fake_run(app_home / "runs", "plain", FinishedEvent(20, "model", {}))  # no best tracked
    plain.model_dir.mkdir()
    (plain.model_dir / "config.json").write_text("{}", encoding="utf-8")
    evaluation.save(plain.path, tuned, base)
    window.export_page.show_result(RunResult("finished", plain.path, plain.model_dir, {}))
    assert page.evaluation.checkpoint.isHidden() and "checkpoint" not in page.metrics_label.text()


def test_a_generators_answers_sit_beside_the_references_and_the_base_models(qtbot) -> None:
    sample = {"prompt": "把“早上好”译成英文", "reference": "Good morning", "output": "Good morning"}
    tuned = evaluation.GenerationReport("seq2seq", 40, 0.9, 2.46, 31.2, 55.0, 8, "13a", [sample])
    base = evaluation.GenerationReport(
        "seq2seq", 40, 3.1, 22.2, 1.5, 12.0, 8, "13a", [{**sample, "output": "早上"}]
    )
    view = EvaluationView()
    qtbot.addWidget(view)
    view.show_report(tuned, base)

    assert view.pages.currentWidget() is view.samples
    assert "BLEU 1.500 → <b>31.200</b>" in view.summary.text() and "Perplexity" in view.summary.text()
    row = [view.samples.item(0, c).text() for c in range(4)]
    assert row == ["把“早上好”译成英文", "Good morning", "早上", "Good morning"]
    assert view.verdict.isHidden()  # the loss fell


def test_a_vision_language_models_samples_show_their_pictures(qtbot, samples) -> None:
    picture = str(next((samples / "shapes" / "circle").glob("*.png")))
    asked = {"prompt": "[blue-16.png] What is it?", "reference": "A blue circle.", "output": "A blue circle."}
    tuned = evaluation.GenerationReport("vision-chat", 9, 0.4, samples=[{**asked, "picture": picture}, asked])
    view = EvaluationView()
    qtbot.addWidget(view)
    view.show_report(tuned, None)

    assert not view.samples.item(0, 0).icon().isNull()  # the picture the question is about
    assert view.samples.item(1, 0).icon().isNull()  # one held as bytes: its name only

    silent = {**asked, "output": ""}  # a model that ends its answer at once: said, not a blank cell
    view.show_report(evaluation.GenerationReport("vision-chat", 9, 0.4, samples=[silent]), None)
    assert view.samples.item(0, 3).text() == "(no text: the model ended its answer at once)"
    assert view.samples.item(0, 2).text() == ""  # no base model asked: nothing to say there
