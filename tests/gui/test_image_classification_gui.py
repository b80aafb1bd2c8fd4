"""Image classification in the window: a folder of pictures previewed as thumbnails, a picture tried on a
trained model, the wrong pictures of an evaluation shown as themselves."""

from __future__ import annotations

from pathlib import Path

from desktop.core.training.evaluation import classify_report
from desktop.gui.main_window import MainWindow
from desktop.gui.widgets.evaluation_view import EvaluationView
from desktop.gui.widgets.try_it_panel import TryItPanel
from tests.core.test_export import _finished_run
from tests.gui.test_data_page import _set_data


def test_a_folder_of_pictures_is_previewed_with_thumbnails(
    window: MainWindow, qtbot, tiny_vit: Path, samples: Path
) -> None:
    page = window.data_page
    picker = page.model_picker
    picker.task_combo.setCurrentIndex(picker.task_combo.findData("image-classification"))
    picker.model_edit.setText(str(tiny_vit))
    picker.model_edit.editingFinished.emit()

    assert not page.dataset_picker.folder_browse.isHidden()  # a folder of class folders is offered
    _set_data(window, qtbot, samples / "shapes")

    table = page.table
    headers = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    picture = table.item(0, headers.index("image"))
    assert picture.text().endswith(".png") and not picture.icon().isNull()
    assert page.column_mapping.mapping_combos["image"].currentText() == "image"
    assert page.token_stats.isHidden()  # pictures: no tokens to count
    assert "circle" in page.dataset_picker.split_info.text()  # the labels of the class folders
    assert page.problem() == ""


def test_a_picture_dropped_on_try_it_is_labelled(request, qtbot, samples: Path, tmp_path: Path) -> None:
    run = _finished_run(request, "image-classification", "tiny_vit", "shapes", tmp_path)
    panel = TryItPanel()
    qtbot.addWidget(panel)
    try:
        assert panel.set_folder(run.model_dir, run.config_path)
        assert not panel.picture.isHidden() and panel.prompt.isHidden()
        with qtbot.waitSignal(panel.answered, timeout=60_000):  # given: answered at once
            assert panel.picture.set_picture(next((samples / "shapes" / "circle").glob("*.png")))
        assert panel.status.text().startswith("Predicted: ")
        shown = {panel.labels_grid.itemAtPosition(r, 0).widget().text() for r in range(3)}
        assert {s.replace("<b>", "").replace("</b>", "") for s in shown} == {"circle", "square", "triangle"}
        not_a_picture = tmp_path / "notes.png"
        not_a_picture.write_text("text", encoding="utf-8")
        assert not panel.picture.set_picture(not_a_picture)
        assert "not a picture" in panel.picture.view.text()
    finally:
        panel.shutdown()


def test_the_wrong_pictures_of_an_evaluation_are_shown_as_thumbnails(qtbot, samples: Path) -> None:
    paths = [str(p) for p in sorted((samples / "shapes" / "square").glob("*.png"))[:3]]
    report = classify_report(
        ["circle", "square"], [1, 1, 1], [[0.9, 0.1], [0.2, 0.8], [0.7, 0.3]], paths, pictures=True
    )
    view = EvaluationView()
    qtbot.addWidget(view)
    view.show_report(report)

    assert view.rows.horizontalHeaderItem(0).text() == "Picture"
    assert view.rows.rowCount() == 2  # the two wrong ones, the surest first
    first = view.rows.item(0, 0)
    assert first.text() == Path(paths[0]).name and first.toolTip() == paths[0]
    assert not first.icon().isNull()


def test_a_picture_and_a_question_are_answered_by_a_vision_language_model(
    request, qtbot, samples: Path, tmp_path: Path
) -> None:
    run = _finished_run(request, "vision-chat", "tiny_llava", "shapes-vqa.jsonl", tmp_path)
    panel = TryItPanel()
    qtbot.addWidget(panel)
    try:
        assert panel.set_folder(run.model_dir, run.config_path)
        assert not panel.picture.isHidden() and not panel.prompt.isHidden()
        assert panel.prompt.placeholderText() == "A question about the picture (Ctrl+Enter sends)"
        panel.max_tokens.setValue(4)
        assert panel.picture.set_picture(next((samples / "shapes" / "square").glob("*.png")))
        assert "Ask something about the picture" in panel.status.text()  # nothing sent without a question
        panel.prompt.setPlainText("What is in this picture?")
        with qtbot.waitSignal(panel.answered, timeout=60_000):
            panel.run_button.click()
        (turn,) = panel.conversation.turns
        assert turn.user.endswith("What is in this picture?") and turn.user.startswith("[")
        assert turn.answer.done and panel.status.text() in (
            "Done.",
            panel.tr("The model ended its reply at once (it produced no text)."),
        )
    finally:
        panel.shutdown()
