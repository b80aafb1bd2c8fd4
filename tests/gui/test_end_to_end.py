"""Real training through the real controller, driven from the widgets as a user would."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from desktop.core.runs.folders import RunDir
from desktop.gui.main_window import MainWindow
from desktop.shared_ui import Settings

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"
RUN_TIMEOUT_MS = 180_000


@pytest.fixture
def app_window(qtbot, tmp_path: Path, tiny_bert: Path) -> MainWindow:
    win = MainWindow(Settings(tmp_path / "settings.ini"))
    win.show()
    page = win.data_page
    page.model_picker.model_edit.setText(str(tiny_bert))
    page.model_picker.model_edit.editingFinished.emit()
    with qtbot.waitSignal(page.preview_loaded, timeout=30_000):
        page.dataset_picker.data_edit.setText(str(SAMPLES / "reviews.csv"))
        page.dataset_picker.data_edit.editingFinished.emit()
    options = win.options_page
    options.max_steps.setValue(20)
    options.batch_size.setValue(16)
    options.learning_rate.setValue(0.01)
    options.max_length.setValue(48)
    options.logging_steps.setValue(2)
    options.eval_steps.setValue(10)
    options.save_steps.setValue(10)
    options.runs_dir.setText(str(tmp_path / "runs"))
    win.go_to(3)
    assert win.stack.currentIndex() == 3
    yield win
    if win.controller.is_running():
        win.controller.stop()
        win.controller.wait()
    win.close()
    win.deleteLater()


@pytest.mark.slow
def test_train_from_the_gui_to_a_model_folder(
    app_window: MainWindow, qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "user"))  # where Documents is
    page, controller = app_window.train_page, app_window.controller
    with qtbot.waitSignal(controller.training_finished, timeout=RUN_TIMEOUT_MS) as finished:
        qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    result = finished.args[0]
    assert result.status == "finished"
    assert page.plot_area.loss_plot.count("train") >= 5 and page.plot_area.loss_plot.count("eval") >= 2
    assert page.plot_area.speed_plot.count("samples") >= 19 and page.plot_area.memory_plot.count("rss") >= 5
    assert page.progress.value() == 20
    assert RunDir(result.run_dir).status() == "finished" and (result.model_dir / "config.json").is_file()
    assert Path(result.run_dir).parent == tmp_path / "runs"
    assert app_window.export_page.model_label.text() == str(result.model_dir)
    app_window.go_to(4)
    assert app_window.stack.currentIndex() == 4

    export = app_window.export_page  # the first click works: the default is outside the run folder
    with qtbot.waitSignal(export.exported, timeout=RUN_TIMEOUT_MS) as done:
        qtbot.mouseClick(export.export_button, Qt.MouseButton.LeftButton)
    folder = done.args[0].folder
    assert folder == tmp_path / "user" / "Documents" / "Finetune Studio" / Path(result.run_dir).name
    assert (folder / "model.safetensors").is_file() and (folder / "README.md").is_file()
    assert "Verified: reloaded in a fresh process" in export.export_status.text()
    export.format_combo.setCurrentIndex(export.format_combo.findData("gguf"))  # a classifier: said why not
    assert (
        not export.export_button.isEnabled()
        and "GGUF is for decoder chat models" in export.export_status.text()
    )
    export.format_combo.setCurrentIndex(export.format_combo.findData("folder"))
    assert export.export_button.isEnabled()

    panel = export.try_it  # the finished run's model answers in the try-it tab
    export.tabs.setCurrentWidget(panel)
    panel.prompt.setPlainText("Terrible, it broke after a day.")
    with qtbot.waitSignal(panel.answered, timeout=RUN_TIMEOUT_MS):
        qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    assert panel.status.text().startswith("Predicted: ")


def test_stop_mid_run_keeps_a_checkpoint_and_offers_resume(app_window: MainWindow, qtbot) -> None:
    app_window.options_page.max_steps.setValue(100_000)
    page, controller = app_window.train_page, app_window.controller
    with qtbot.waitSignal(
        controller.progress_changed, timeout=RUN_TIMEOUT_MS, check_params_cb=lambda e: e.step >= 3
    ):
        qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    with qtbot.waitSignal(controller.training_stopped, timeout=RUN_TIMEOUT_MS) as stopped:
        qtbot.mouseClick(page.stop_button, Qt.MouseButton.LeftButton)
    run = RunDir(stopped.args[0].run_dir)
    assert run.status() == "stopped" and run.latest_checkpoint() is not None
    assert not page.resume_button.isHidden() and page.start_button.isEnabled()


@pytest.mark.slow
def test_a_failure_is_shown_and_the_next_run_works(
    app_window: MainWindow, qtbot, monkeypatch: pytest.MonkeyPatch
) -> None:
    from transformers import Trainer

    def broken(self: object, *args: object, **kwargs: object) -> None:
        raise RuntimeError("simulated kernel failure")

    monkeypatch.setattr(Trainer, "training_step", broken)
    page, controller = app_window.train_page, app_window.controller
    with qtbot.waitSignal(controller.training_failed, timeout=RUN_TIMEOUT_MS):
        qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    assert not page.failure.isHidden() and "simulated kernel failure" in page.failure.reason.text()
    assert page.failure.details.isHidden() and "RuntimeError" in page.failure.details.toPlainText()

    monkeypatch.undo()
    with qtbot.waitSignal(controller.training_finished, timeout=RUN_TIMEOUT_MS):
        qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    assert page.failure.isHidden()
