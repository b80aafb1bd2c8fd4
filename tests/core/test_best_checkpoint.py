"""The best checkpoint and early stopping (issue 54): a run whose validation loss got worse ends with its
best model, says which step it is and how the last one scored, and stops when it stops improving."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.core.runs.folders import RunDir
from desktop.core.runs.listing import list_runs
from desktop.core.settings.config import RunConfig
from desktop.core.system.events import FinishedEvent, LogEvent
from desktop.core.training import best
from desktop.core.training.run import run_training
from tests.core.helpers import Recorder, overfitting_classifier


def _weights(folder: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(folder / "model.safetensors")


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(bool((a[k] == b[k]).all()) for k in a)


def _overfitting_run(tiny_bert: Path, samples: Path, runs: Path, **training: object) -> tuple:
    """A classifier evaluated every 5 steps whose validation loss climbs from an early best."""
    config = overfitting_classifier(tiny_bert, samples, runs, **training)
    events = Recorder()
    result = run_training(config, events.append)
    assert result.status == "finished", result.failure
    evals = [(e.step, e.metrics["eval_loss"]) for e in events.of(LogEvent) if "eval_loss" in e.metrics]
    return result, events.of(FinishedEvent)[-1], evals


@pytest.mark.slow
def test_the_model_is_the_best_checkpoint_named_with_its_score_and_the_last(
    tiny_bert: Path, samples: Path, tmp_path: Path
) -> None:
    result, finished, evals = _overfitting_run(tiny_bert, samples, tmp_path / "runs")
    best_step, best_loss = min(evals, key=lambda e: e[1])
    found = finished.best
    assert (found["step"], found["value"], found["kept"]) == (best_step, pytest.approx(best_loss), True)
    assert found["step"] < found["last_step"]  # it overfits: the last step is not the best
    run = RunDir(result.run_dir)
    kept = run.checkpoints_dir / f"checkpoint-{best_step}"
    assert kept.is_dir()  # saved at the new best and kept through the rotation
    assert _same(_weights(run.model_dir), _weights(kept))
    assert finished.metrics["eval_loss"] == pytest.approx(best_loss)  # the scores are the saved model's
    from desktop.core.training import evaluation

    saved = evaluation.load(run.path)
    # The report's loss, for the header's before and after, is the saved model's, and the base model's too.
    assert saved["fine_tuned"].loss == pytest.approx(best_loss, rel=1e-4) and saved["base"].loss is not None
    said = [str(n) for n in result.notes if "best checkpoint" in str(n)]
    assert said and f"The model is the best checkpoint, step {best_step} of {found['last_step']}" in said[0]
    (info,) = list_runs(tmp_path / "runs")
    # Run history: the saved model's accuracy, not the best any evaluation reached
    assert info.best == ("eval_accuracy", pytest.approx(finished.metrics["eval_accuracy"]))
    # Early stopping (3 evaluations without improvement) ended it, and says so.
    assert found["stopped_early"] and found["last_step"] == best_step + 3 * 5 < 40
    assert said[0].startswith("Stopped early at step")


@pytest.mark.slow
def test_without_keep_best_the_model_is_the_last_steps_and_checkpoints_keep_their_cadence(
    tiny_bert: Path, samples: Path, tmp_path: Path
) -> None:
    result, finished, evals = _overfitting_run(
        tiny_bert, samples, tmp_path / "runs", keep_best=False, early_stopping=0
    )
    assert finished.best == {}  # nothing tracked, nothing claimed
    assert finished.metrics["eval_loss"] == pytest.approx(evals[-1][1])
    assert {p.name for p in RunDir(result.run_dir).checkpoints()} == {"checkpoint-20", "checkpoint-40"}
    assert not [n for n in result.notes if "best checkpoint" in str(n)]


def test_checkpoints_follow_the_evaluations_never_rarer_and_the_change_is_said() -> None:
    config = RunConfig(task="classification")
    t = config.training
    t.eval_steps, t.save_steps = 5, 12
    assert best.arguments(config, has_eval=True)["save_steps"] == 10  # on evaluations, not rarer
    assert "every 10 steps, on evaluations" in str(best.cadence_note(config, True))
    t.save_steps = 10
    assert best.cadence_note(config, True) is None  # nothing changed, nothing said
    assert best.arguments(config, has_eval=False) == {}  # no evaluation rows: no best to keep
    t.save_steps = 3  # checkpoints asked more often than evaluations: kept as asked, the best only named
    args = best.arguments(config, True)
    assert "load_best_model_at_end" not in args and "save_steps" not in args
    assert "the model stays the last step's" in str(best.cadence_note(config, True))
    t.eval_steps = 0  # an evaluation per epoch, checkpoints every 3 steps: the same
    assert "load_best_model_at_end" not in best.arguments(config, True)


def test_a_classification_figure_as_the_best_metric_of_another_task_is_refused() -> None:
    config = RunConfig(task="causal-lm")
    config.training.best_metric = "accuracy"

    def training_problems() -> list[str]:
        return [p.field for p in config.validate() if p.field.startswith("training.")]

    assert training_problems() == ["training.best_metric"]
    config.task = "classification"
    assert training_problems() == []
    config.training.early_stopping = -1
    assert training_problems() == ["training.early_stopping"]
