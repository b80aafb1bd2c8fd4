"""Run history in the window: listing, comparison, delete, resume, and the crashed-run offer."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox

from desktop.core.runs.folders import RunDir
from desktop.core.system.events import FinishedEvent, LogEvent, ProgressEvent, StoppedEvent
from desktop.core.training.run import run_training
from desktop.gui.controllers.training_controller import TrainingController
from desktop.gui.dialogs.runs_dialog import RunsDialog
from desktop.gui.main_window import MainWindow
from desktop.shared_ui import Settings
from tests.core.helpers import fake_run as _run
from tests.core.helpers import make_config

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"


@pytest.fixture
def runs(app_home: Path) -> Path:
    """A runs folder with a finished, a stopped and a crashed run (the app's default runs folder)."""
    folder = app_home / "runs"
    done = _run(folder, "done", LogEvent(20, 0.4, {"eval_accuracy": 0.75}), FinishedEvent(20, "model", {}))
    done.model_dir.mkdir()
    (done.model_dir / "config.json").write_text("{}", encoding="utf-8")
    _run(folder, "stopped", StoppedEvent(20, ""), checkpoint=20)
    _run(folder, "crashed", checkpoint=20)
    return folder


def _row(dialog: RunsDialog, suffix: str) -> int:
    return next(i for i, info in enumerate(dialog.infos) if info.name.endswith(suffix))


def _opened(window: MainWindow, qtbot) -> RunsDialog:
    """Run history, once it has listed the runs (it reads them in the background)."""
    window.history.show_runs()
    dialog = window.history.dialog
    qtbot.waitUntil(lambda: dialog.model.rowCount() > 0 and "Reading" not in dialog.folder_label.text())
    return dialog


def _cell(dialog: RunsDialog, row: int, column: int) -> str:
    return dialog.model.index(row, column).data()


def test_runs_dialog_lists_compares_and_deletes(
    window: MainWindow, runs: Path, qtbot, monkeypatch: pytest.MonkeyPatch
) -> None:
    dialog = _opened(window, qtbot)
    assert dialog.model.rowCount() == 3
    status = {_cell(dialog, r, 0).split("-", 2)[-1]: _cell(dialog, r, 1) for r in range(3)}
    assert status == {"done": "Finished", "stopped": "Stopped (20/100)", "crashed": "Crashed (20/100)"}
    assert _cell(dialog, _row(dialog, "done"), 10) == "validation accuracy 0.75"  # the metric key in words
    assert (
        _cell(dialog, _row(dialog, "done"), 6) == "5e-05" and _cell(dialog, _row(dialog, "done"), 5) == "90"
    )
    assert _cell(dialog, _row(dialog, "done"), 8) == "0.4 / 3"  # trained, of the 3 its config asked

    names = [info.name for info in dialog.infos]
    with qtbot.waitSignal(dialog.curves_shown):
        dialog.select(*names[:2])
    assert dialog.plot.curve_names() == names[:2]  # two loss curves side by side
    # Nothing differs between them but the data (each names reviews.csv in its own folder).
    assert dialog.hint.text().startswith("Differences: data.files: ") and ";" not in dialog.hint.text()
    assert not dialog.resume_button.isEnabled() and dialog.delete_button.isEnabled()

    dialog.select(dialog.infos[_row(dialog, "stopped")].name)
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.No)
    dialog.delete_button.click()
    assert dialog.model.rowCount() == 3  # the user said no
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    with qtbot.waitSignal(dialog.listed):
        dialog.delete_button.click()
    assert dialog.model.rowCount() == 2 and len(list(runs.iterdir())) == 2


def test_run_history_shows_what_differs_between_runs(window: MainWindow, app_home: Path, qtbot) -> None:
    folder = app_home / "runs"
    for name, rate, steps in (("slow", 2e-5, 30), ("fast", 1e-4, 400)):
        run = _run(folder, name, FinishedEvent(20, "model", {}))
        config = run.config()
        config.training.learning_rate, config.training.max_steps = rate, steps
        config.save(run.config_path)  # edited after the run: the listing reads the config again
    dialog = _opened(window, qtbot)
    dialog.select(*[info.name for info in dialog.infos])
    text = dialog.hint.text()
    rates = ("training.learning_rate: 0.0001 / 2e-05", "training.learning_rate: 2e-05 / 0.0001")
    assert any(rate in text for rate in rates)
    # Not a column of the table: two runs of 30 and 400 steps were "the same settings".
    assert "training.max_steps: 400 / 30" in text or "training.max_steps: 30 / 400" in text
    assert "output.name" not in text  # where a run goes is not how it trains


def test_resume_and_export_from_the_runs_dialog(
    window: MainWindow, runs: Path, fake_controller, qtbot
) -> None:
    dialog = _opened(window, qtbot)
    crashed = dialog.infos[_row(dialog, "crashed")]
    dialog.select(crashed.name)
    assert dialog.resume_button.isEnabled() and not dialog.export_button.isEnabled()
    dialog.resume_button.click()
    (config, resume) = fake_controller.started[-1]
    assert resume.path == crashed.path and config.output.name == "crashed"
    assert window.current_page() is window.train_page  # reachable although the data step is empty
    assert dialog.isHidden()  # it stayed above the window, over the step it opened
    fake_controller.end()

    window.history.show_runs()
    dialog.select(dialog.infos[_row(dialog, "done")].name)
    dialog.export_button.click()
    assert window.current_page() is window.export_page and dialog.isHidden()
    assert window.export_page.model_label.text().endswith("model")


def test_a_finished_run_whose_model_was_cut_short_is_damaged_and_offered_for_resume(
    window: MainWindow, app_home: Path, qtbot
) -> None:
    from PySide6.QtCore import Qt

    cut = _run(app_home / "runs", "cut", FinishedEvent(20, "model", {}), checkpoint=20)
    cut.model_dir.mkdir()
    (cut.model_dir / "config.json").write_text("{}", encoding="utf-8")
    (cut.model_dir / "model.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{")  # torn
    dialog = _opened(window, qtbot)
    row = _row(dialog, "cut")
    assert _cell(dialog, row, 1).startswith("Damaged")
    tip = dialog.model.index(row, 1).data(Qt.ItemDataRole.ToolTipRole)
    assert tip == "model.safetensors is damaged. Resume the run: it goes on from its last good checkpoint."
    dialog.select(dialog.infos[row].name)
    assert dialog.resume_button.isEnabled() and not dialog.export_button.isEnabled()


def test_a_crashed_run_is_offered_for_resume_on_start(
    qtbot, tmp_path: Path, runs: Path, fake_controller
) -> None:
    settings = Settings(tmp_path / "s.ini")
    win = MainWindow(settings, fake_controller)
    qtbot.addWidget(win)
    qtbot.waitUntil(lambda: not win.resume_bar.isHidden())
    assert (
        "crashed" in win.resume_bar.text_label.text() and "step 20 of 100" in win.resume_bar.text_label.text()
    )
    win.resume_bar.no_button.click()
    assert win.resume_bar.isHidden()
    win.close()

    again = MainWindow(settings, fake_controller)  # declined once: not asked again
    qtbot.addWidget(again)
    with qtbot.waitSignal(again.resume_offer_checked, timeout=5000):
        pass  # the check runs once the window has painted
    assert again.resume_bar.isHidden()
    again.close()


@pytest.mark.slow
def test_an_interrupted_run_resumes_to_the_end(
    qtbot, tmp_path: Path, tiny_bert: Path, app_home: Path
) -> None:
    config = make_config(
        "classification", tiny_bert, [SAMPLES / "reviews.csv"], app_home / "runs", max_steps=12
    )
    config.training.save_steps = 4
    stop = threading.Event()
    stopped = run_training(
        config, lambda e: isinstance(e, ProgressEvent) and e.step >= 5 and stop.set(), stop
    )
    run = RunDir(stopped.run_dir)
    lines = run.events_path.read_text(encoding="utf-8").splitlines(keepends=True)
    run.events_path.write_text("".join(lines[:-1]), encoding="utf-8")  # as if killed before the end
    assert run.status() == "interrupted"

    win = MainWindow(Settings(tmp_path / "s.ini"), TrainingController())
    qtbot.addWidget(win)
    qtbot.waitUntil(lambda: not win.resume_bar.isHidden())
    with qtbot.waitSignal(win.controller.training_finished, timeout=180_000) as finished:
        win.resume_bar.yes_button.click()
    result = finished.args[0]
    assert Path(result.run_dir) == run.path and RunDir(run.path).status() == "finished"
    assert win.train_page.progress.value() == 12
    started = [e for e in RunDir(run.path).events() if e.kind == "started"]
    assert started[-1].resumed_from_step == 5
    win.close()


def test_a_runs_curve_is_read_again_once_it_went_on(window: MainWindow, app_home: Path, qtbot) -> None:
    run = _run(app_home / "runs", "going")
    dialog = _opened(window, qtbot)
    with qtbot.waitSignal(dialog.curves_shown):
        dialog.select(dialog.infos[0].name)
    assert dialog.plot.count(dialog.infos[0].name) == 2
    again = RunDir(run.path)
    again.append(ProgressEvent(30, 100, 0.6, 30.0, 60.0, 8.0, None))
    again.append(LogEvent(30, 0.6, {"loss": 0.02}))
    again.close()
    with qtbot.waitSignal(dialog.curves_shown):
        dialog.refresh()  # as the window does when a run ends
    assert dialog.plot.count(dialog.infos[0].name) == 3
