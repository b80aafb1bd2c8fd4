"""A run whose numbers stop being numbers is never "Finished" (issue 59): a NaN weight in the base model
is refused at load, naming the tensor; a learning rate that overflows stops the run within a few steps
with the cause and Apply-and-retry; a single overflowing step is counted and named; the log shows NaN."""

from __future__ import annotations

import math
import shutil
import types
from pathlib import Path

import pytest
import torch

from desktop.core.runs.folders import RunDir
from desktop.core.settings.config import with_changes
from desktop.core.system.errors import NonFiniteError
from desktop.core.system.events import FinishedEvent, LogEvent, ProgressEvent
from desktop.core.training import non_finite
from desktop.core.training.run import run_training
from tests.core.helpers import Recorder, make_config


def _with_a_nan_weight(model: Path, folder: Path) -> tuple[Path, str]:
    from safetensors.torch import load_file, save_file

    shutil.copytree(model, folder)
    weights = load_file(str(folder / "model.safetensors"))
    name = sorted(n for n in weights if n.endswith("weight") and weights[n].dim() == 2)[0]
    weights[name][0, 0] = float("nan")
    save_file(weights, str(folder / "model.safetensors"), metadata={"format": "pt"})
    return folder, name


def test_a_base_model_with_one_nan_weight_is_refused_naming_the_tensor(
    tiny_bert: Path, samples: Path, tmp_path: Path
) -> None:
    damaged, tensor = _with_a_nan_weight(tiny_bert, tmp_path / "damaged")
    config = make_config("classification", damaged, [samples / "reviews.csv"], tmp_path / "runs", max_steps=4)
    events = Recorder()

    result = run_training(config, events.append)

    assert result.status != "finished" and not events.of(FinishedEvent)
    assert tensor.removeprefix("bert.") in result.failure.reason and "not numbers" in result.failure.reason
    assert not events.of(ProgressEvent)  # refused before the first step


@pytest.mark.slow
def test_updates_that_overflow_stop_the_run_with_its_cause_and_a_lower_rate(
    tiny_gpt2: Path, samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What a far too high rate does to a real model (in fp32 a tiny one stays finite even at 0.9, so the
    # optimizer's step is made to overflow here): after a few steps the weights are infinite.
    real_step = torch.optim.AdamW.step

    def overflowing_step(self: torch.optim.Optimizer, *args: object, **kwargs: object) -> object:
        done = real_step(self, *args, **kwargs)
        with torch.no_grad():
            for group in self.param_groups:
                for param in group["params"]:
                    param.mul_(1e30)
        return done

    monkeypatch.setattr(torch.optim.AdamW, "step", overflowing_step)
    config = make_config(
        "causal-lm", tiny_gpt2, [samples / "chat.jsonl"], tmp_path / "runs", max_steps=40, logging_steps=1
    )
    events = Recorder()

    result = run_training(config, events.append)

    assert result.status == "failed" and result.exit_code == 1
    assert "loss became" in result.failure.reason or "gradient norm became" in result.failure.reason
    assert "learning rate (0.01)" in result.failure.reason
    steps = [e.step for e in events.of(ProgressEvent)]
    assert steps and max(steps) < 10  # stopped within a few steps, not at the 40th
    logged = [e.metrics["loss"] for e in events.of(LogEvent) if "loss" in e.metrics]
    assert not any(value == 0 for value in logged)  # never a NaN shown as 0
    (remedy,) = result.failure.remedies
    assert remedy["changes"] == {"training.learning_rate": 0.001}
    assert RunDir(result.run_dir).status() == "failed"
    assert not (Path(result.run_dir) / "model").exists()  # no NaN model is kept as the run's result

    monkeypatch.undo()  # Apply and retry
    retry = with_changes(config, {**remedy["changes"], "training.max_steps": 4})
    assert run_training(retry, Recorder().append).status == "finished"


def _trainer(fp16: bool = False, step: int = 7) -> types.SimpleNamespace:
    return types.SimpleNamespace(
        state=types.SimpleNamespace(global_step=step, epoch=0.5),
        args=types.SimpleNamespace(fp16=fp16, learning_rate=2e-3),
    )


def test_one_overflowing_step_is_counted_and_three_in_a_row_stop() -> None:
    watch = non_finite.NonFiniteWatch(_trainer(fp16=True))
    watch.saw_loss(torch.tensor(float("inf")))
    watch.saw_loss(torch.tensor(1.5))  # the scaler skipped it; training went on
    assert watch.skipped == 1 and "1 training steps" in watch.note()

    watch.saw_loss(torch.tensor(float("nan")))
    watch.saw_loss(torch.tensor(float("nan")))
    with pytest.raises(NonFiniteError) as stopped:
        watch.saw_loss(torch.tensor(float("nan")))
    assert "fp16" in stopped.value.message and "step 8" in stopped.value.message
    assert [r.changes for r in stopped.value.remedies][:2] == [
        {"performance.precision": "bf16"},
        {"performance.precision": "fp32"},
    ]


def test_a_non_finite_evaluation_loss_or_gradient_norm_stops_the_run() -> None:
    watch = non_finite.NonFiniteWatch(_trainer())
    watch.saw_log({"loss": 0.7, "grad_norm": 1.2}, 10)
    with pytest.raises(NonFiniteError, match="evaluation loss became NaN at step 10"):
        watch.saw_log({"eval_loss": math.nan}, 10)
    with pytest.raises(NonFiniteError, match="gradient norm became \\+inf"):
        watch.saw_log({"grad_norm": math.inf}, 11)
    fp16 = non_finite.NonFiniteWatch(_trainer(fp16=True))
    fp16.saw_log({"grad_norm": math.inf}, 11)  # the scaler skips that step: not a failure by itself
    assert watch.note() is None


def test_non_finite_tensors_are_found_by_name_and_quantized_ones_skipped() -> None:
    tensors = [("a.weight", torch.ones(2)), ("q.weight", torch.zeros(2, dtype=torch.uint8)), ("b.bias", None)]
    assert non_finite.first_non_finite(tensors) is None
    tensors.append(("c.weight", torch.tensor([1.0, float("-inf")])))
    assert non_finite.first_non_finite(tensors) == "c.weight"


def _poison(weights_file: Path) -> str:
    """Put one NaN into a saved model's first matrix (bytes changed, the file's size and structure not)."""
    from safetensors.torch import load_file, save_file

    weights = load_file(str(weights_file))
    name = sorted(n for n in weights if weights[n].dim() == 2)[0]
    weights[name][0, 0] = float("nan")
    save_file(weights, str(weights_file), metadata={"format": "pt"})
    return name


@pytest.mark.slow
def test_a_checkpoint_whose_weights_are_not_numbers_is_set_aside_and_an_older_one_resumed(
    tiny_bert: Path, samples: Path, tmp_path: Path
) -> None:
    from desktop.core.runs.checkpoints import checkpoint_problem

    config = make_config(
        "classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs", max_steps=8
    )
    config.training.save_steps = 4
    config.training.eval_steps = 4
    run = RunDir(run_training(config, Recorder().append).run_dir)
    (older, newest) = run.checkpoints()[-2:]
    tensor = _poison(newest / "model.safetensors")
    assert checkpoint_problem(newest) == ""  # the header-only check sees nothing wrong

    events = Recorder()
    from desktop.core.training.resume import resume_point

    chosen = resume_point(run, events.append)

    assert chosen == older
    said = " ".join(e.message for e in events)
    assert newest.name in said and tensor in said and "not numbers" in said
    assert (newest.parent / f"damaged-{newest.name}").is_dir()  # kept for a look, out of the way


@pytest.mark.slow
def test_export_refuses_a_model_whose_weights_are_not_numbers_naming_the_tensor(
    tiny_bert: Path, samples: Path, tmp_path: Path
) -> None:
    from desktop.core.results.export import export_run

    config = make_config(
        "classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs", max_steps=2
    )
    run = RunDir(run_training(config, Recorder().append).run_dir)
    tensor = _poison(run.model_dir / "model.safetensors")

    with pytest.raises(NonFiniteError) as refused:
        export_run(run, tmp_path / "out", verify=False)

    assert tensor in refused.value.message and not (tmp_path / "out").exists()


@pytest.mark.slow
def test_export_of_a_model_whose_final_save_was_cut_short_says_so(
    tiny_bert: Path, samples: Path, tmp_path: Path
) -> None:
    from desktop.core.results.export import export_run
    from desktop.core.system.errors import ModelError

    config = make_config(
        "classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs", max_steps=2
    )
    run = RunDir(run_training(config, Recorder().append).run_dir)
    weights = run.model_dir / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])  # a disk that filled mid-save

    with pytest.raises(ModelError) as refused:
        export_run(run, tmp_path / "out", verify=False)

    assert "is damaged" in refused.value.message and "model.safetensors" in refused.value.message
    assert "cut short" in refused.value.hint and not (tmp_path / "out").exists()
