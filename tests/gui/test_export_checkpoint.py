"""Export offers the best checkpoint by default and the last step on request (issue 54), with the choice
in view and which model it is, by which figure, said beside it."""

from __future__ import annotations

from pathlib import Path

from desktop.core.results.last_step import LastStepRun
from desktop.core.system.events import FinishedEvent, RunResult
from desktop.gui.main_window import MainWindow
from tests.core.helpers import fake_checkpoint, fake_run

FOUND = {
    "metric": "eval_loss",
    "value": 0.5881,
    "step": 5,
    "last_step": 20,
    "last_value": 0.7854,
    "kept": True,
    "stopped_early": False,
}


def _run(runs: Path, name: str, found: dict, last_checkpoint: bool = True):
    run = fake_run(runs, name, FinishedEvent(20, "model", {"eval_loss": 0.5881}, best=found))
    run.model_dir.mkdir()
    (run.model_dir / "config.json").write_text("{}", encoding="utf-8")
    (run.model_dir / "tokenizer.json").write_text("{}", encoding="utf-8")
    fake_checkpoint(run.checkpoints_dir / "checkpoint-5", 5)
    if last_checkpoint:
        fake_checkpoint(run.checkpoints_dir / "checkpoint-20", 20)
    return run


def test_the_best_checkpoint_is_the_default_and_the_last_step_is_made_on_request(
    window: MainWindow, app_home: Path, qtbot
) -> None:
    run = _run(app_home / "runs", "best", FOUND)
    page = window.export_page
    page.show_result(RunResult("finished", run.path, run.model_dir, {"eval_loss": 0.5881}))
    choice = page.model_choice
    assert not choice.isHidden() and choice.currentData() == "best"
    assert [choice.itemText(i) for i in range(2)] == [
        "Best checkpoint: step 5, validation loss 0.5881",
        "Last step: step 20, validation loss 0.7854",
    ]
    assert page.model_label.text() == str(run.model_dir)

    with qtbot.waitSignal(choice.chosen, timeout=10_000):
        choice.setCurrentIndex(1)
    made = run.path / "last-step" / "model"
    assert page.model_label.text() == str(made) and isinstance(page._run, LastStepRun)
    assert (made / "model.safetensors").is_file() and (made / "tokenizer.json").is_file()
    text = page.metrics_label.text()
    assert text.startswith("validation loss 0.7854\n")  # the scores are the last step's now
    assert "The model is the last step's, step 20: validation loss 0.7854" in text
    assert page.serve.model_label.text().find("last-step") >= 0  # the tabs work on it too

    choice.setCurrentIndex(0)
    assert page.model_label.text() == str(run.model_dir) and not isinstance(page._run, LastStepRun)
    assert "The model is the best checkpoint, step 5 of 20" in page.metrics_label.text()


def test_no_choice_when_the_last_step_is_the_model_or_its_checkpoint_is_gone(
    window: MainWindow, app_home: Path
) -> None:
    page = window.export_page
    gone = _run(app_home / "runs", "gone", FOUND, last_checkpoint=False)
    page.show_result(RunResult("finished", gone.path, gone.model_dir, {}))
    assert page.model_choice.isHidden()
    assert "The model is the best checkpoint, step 5 of 20" in page.metrics_label.text()  # still said
    last = _run(app_home / "runs", "last", dict(FOUND, step=20))
    page.show_result(RunResult("finished", last.path, last.model_dir, {}))
    assert page.model_choice.isHidden()


def test_a_last_step_made_for_a_run_no_longer_shown_is_dropped_and_export_waits_for_it(
    window: MainWindow, app_home: Path, qtbot, monkeypatch
) -> None:
    """Choosing the last step of run A, then opening run B while A's merge ran, showed B's name over A's
    model, and Export would have written A's."""
    import threading

    from desktop.core.results import last_step
    from desktop.gui.app_support import workers

    release, made = threading.Event(), threading.Event()
    real = last_step.build

    def slow_build(run, found, *args):
        release.wait(30)
        try:
            return real(run, found)
        finally:
            made.set()

    monkeypatch.setattr(last_step, "build", slow_build)
    first, second = _run(app_home / "runs", "first", FOUND), _run(app_home / "runs", "second", FOUND)
    page = window.export_page
    page.show_result(RunResult("finished", first.path, first.model_dir, {}))
    page.model_choice.setCurrentIndex(1)  # the last step of the first run: being made
    page.start_export()
    assert "Wait until the last step's model is made" in page.export_status.text()

    page.show_result(RunResult("finished", second.path, second.model_dir, {}))
    release.set()
    qtbot.waitUntil(lambda: made.is_set() and not workers.running_tasks(), timeout=10_000)

    assert page.model_label.text() == str(second.model_dir)  # the second run's, as shown
    assert page.model_choice.isEnabled() and page.model_choice.currentData() == "best"


def test_a_long_model_path_never_widens_the_export_step(
    window: MainWindow, fake_controller, app_home: Path, qtbot
) -> None:
    """At 1024 pixels the step scrolled sideways: the model's folder was shown whole on one line."""
    deep = app_home / "runs" / ("a-long-folder-name-of-a-project-" * 4)
    run = _run(deep, "20261206-021433-image-classification-convnext-tiny-224-best", FOUND)
    page = window.export_page
    window.resize(1024, 720)
    fake_controller.training_finished.emit(
        RunResult("finished", run.path, run.model_dir, {"eval_loss": 0.5881})
    )

    assert page.minimumSizeHint().width() <= 1024 - 200  # the steps' list and the margins beside it
    assert page.model_label.text() == str(run.model_dir)  # whole when copied, cut only where shown
    # Under the title and beside the steps, a 1024 x 720 window leaves the page about 595 x 784 px; the form
    # of "Export a copy" scrolls in its own tab, so the step itself does not (it needed 426 + the header).
    assert page.minimumSizeHint().height() <= 380
    said = window.statusBar().currentMessage()  # cut in the middle: the run's own name stays in view
    assert (
        said.startswith("Training finished. The model is in ")
        and said.endswith("-best/model")
        and "…" in said
    )
