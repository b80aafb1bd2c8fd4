"""Predict on a file from the Export step: a GBK CSV comes back in GBK with the predictions added."""

from __future__ import annotations

from pathlib import Path

from desktop.core.system.events import RunResult
from desktop.core.training.run import run_training
from desktop.gui.main_window import MainWindow
from tests.core.helpers import Recorder, make_config


def test_predict_on_a_file_writes_it_back_with_the_predictions(
    window: MainWindow, tiny_bert: Path, samples: Path, tmp_path: Path, qtbot
) -> None:
    config = make_config(
        "classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs", max_steps=2
    )
    result = run_training(config, Recorder().append)
    assert result.status == "finished"
    window.export_page.show_result(RunResult("finished", result.run_dir, result.model_dir, {}))
    panel = window.export_page.predict
    source = tmp_path / "新评论.csv"
    source.write_bytes("评论,日期\r\n电池很耐用,11-01\r\n屏幕有坏点,11-02\r\n".encode("gbk"))

    panel.set_input(source)
    assert [panel.column.itemText(i) for i in range(panel.column.count())] == ["(as trained)", "评论", "日期"]
    assert (
        panel.output_edit.text() == str(tmp_path / "新评论.predicted.csv") and panel.start_button.isEnabled()
    )
    panel.column.setCurrentIndex(1)  # the run trained on "text": this file names its column otherwise
    with qtbot.waitSignal(panel.predicted, timeout=60_000) as done:
        panel.start_button.click()
    assert done.args[0].rows == 2 and "2 rows predicted from column 评论" in panel.status.text()
    lines = (tmp_path / "新评论.predicted.csv").read_bytes().decode("gbk").splitlines()
    assert lines[0] == "评论,日期,prediction,probability" and len(lines) == 3
    assert not panel.open_button.isHidden() and panel.start_button.isEnabled()


def test_a_folder_of_pictures_is_labelled_by_an_image_classifier(
    window: MainWindow, tiny_vit: Path, samples: Path, tmp_path: Path, qtbot
) -> None:
    import shutil

    config = make_config(
        "image-classification", tiny_vit, [samples / "shapes"], tmp_path / "runs", max_steps=2
    )
    result = run_training(config, Recorder().append)
    assert result.status == "finished", result.failure
    window.export_page.show_result(RunResult("finished", result.run_dir, result.model_dir, {}))
    panel = window.export_page.predict
    pictures = tmp_path / "new pictures"
    shutil.copytree(samples / "shapes" / "triangle", pictures)

    (pictures / "broken.png").write_text("not a picture", encoding="utf-8")

    panel.set_input(pictures)
    assert panel.output_edit.text() == str(tmp_path / "new pictures.predicted.csv")
    assert not panel.column.isEnabled()  # a folder has no column to choose
    with qtbot.waitSignal(panel.predicted, timeout=60_000) as done:
        panel.start_button.click()
    assert done.args[0].rows == 31
    lines = (tmp_path / "new pictures.predicted.csv").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "image,prediction,probability" and len(lines) == 32
    said = panel.status.text()
    assert said.startswith("30 of 31 pictures labelled; written to ") and "new pictures/broken.png" in said

    panel.set_input(pictures / "broken.png")  # one picture alone: no columns, no error
    assert not panel.column.isEnabled() and panel.status.text() == said
