"""Out of memory that fixes itself: injected CUDA out-of-memory errors on the CPU with the tiny models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from desktop.core.runs.folders import RunDir
from desktop.core.runs.listing import loss_curve
from desktop.core.settings.config import RunConfig
from desktop.core.system.events import AdjustedEvent, FailedEvent, PreparingEvent, ProgressEvent, StartedEvent
from desktop.core.training import recovery
from desktop.core.training.run import run_training
from tests.core.helpers import Recorder, make_config

OOM = "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 8.00 GiB"


def _effective(config: RunConfig) -> int:
    return config.training.batch_size * config.training.gradient_accumulation


def test_the_order_of_changes_keeps_the_effective_batch_until_the_last_resorts() -> None:
    config = RunConfig()
    config.training.batch_size, config.training.gradient_accumulation = 8, 2
    seen = []
    for attempt in range(recovery.MAX_ATTEMPTS):
        adjustment = recovery.next_setting(config, attempt)
        assert adjustment is not None
        assert set(adjustment.changes) == set(adjustment.previous)
        seen.append((adjustment.changes, adjustment.keeps_checkpoints))
        assert _effective(adjustment.config) == 16, adjustment.described
        config = adjustment.config

    assert seen == [
        ({"training.batch_size": 4, "training.gradient_accumulation": 4}, True),
        ({"performance.gradient_checkpointing": True}, True),
        ({"training.batch_size": 2, "training.gradient_accumulation": 8}, True),
        ({"training.batch_size": 1, "training.gradient_accumulation": 16}, True),
        ({"performance.optimizer": "adafactor"}, False),
    ]
    assert recovery.next_setting(config, recovery.MAX_ATTEMPTS) is None


@pytest.mark.parametrize(("batch", "half", "accumulation"), [(6, 3, 4), (3, 1, 6), (9, 3, 6)])
def test_an_odd_batch_is_split_so_the_effective_batch_is_exact(
    batch: int, half: int, accumulation: int
) -> None:
    config = RunConfig()
    config.training.batch_size, config.training.gradient_accumulation = batch, 2
    adjustment = recovery.next_setting(config, 0)
    assert adjustment.changes == {"training.batch_size": half, "training.gradient_accumulation": accumulation}


def test_after_the_smallest_optimizer_comes_lora_then_nothing() -> None:
    config = RunConfig()
    config.training.batch_size = 1
    config.performance.gradient_checkpointing = True
    config.performance.optimizer = "adafactor"
    adjustment = recovery.next_setting(config, 1, eight_bit=True)
    assert adjustment.changes == {"lora.enabled": True} and not adjustment.keeps_checkpoints
    assert recovery.next_setting(adjustment.config, 2) is None


def test_the_8_bit_optimizer_is_chosen_where_it_runs() -> None:
    config = RunConfig()
    config.training.batch_size = 1
    config.performance.gradient_checkpointing = True
    assert recovery.next_setting(config, 1, eight_bit=True).changes == {
        "performance.optimizer": "adamw_bnb_8bit"
    }


def _fail_when(monkeypatch: pytest.MonkeyPatch, method: str, when: object) -> list:
    """Patch ``Trainer.<method>`` to raise a CUDA out-of-memory error while ``when(trainer)`` holds."""
    from transformers import Trainer

    original = getattr(Trainer, method)
    raised: list = []

    def patched(self: Trainer, *args: object, **kwargs: object) -> object:
        if when(self):
            raised.append(self.state.global_step)
            raise torch.OutOfMemoryError(OOM)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Trainer, method, patched)
    return raised


def test_oom_at_step_k_resumes_from_the_checkpoint_with_half_the_batch(
    tiny_bert: Path, samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raised = _fail_when(
        monkeypatch,
        "training_step",
        lambda t: t.state.global_step == 20 and t.args.per_device_train_batch_size > 8,
    )
    config = make_config("classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs")
    events = Recorder()
    result = run_training(config, events.append)

    assert result.status == "finished", result.failure
    assert raised == [20]
    (adjusted,) = events.of(AdjustedEvent)
    assert adjusted.step == 20 and adjusted.resumed_from == 15 and adjusted.attempt == 1
    assert adjusted.changes == {"training.batch_size": 8, "training.gradient_accumulation": 2}
    assert adjusted.previous == {"training.batch_size": 16, "training.gradient_accumulation": 1}
    assert "out of memory" in adjusted.reason and "the same 16 examples per update" in adjusted.described[0]
    # The run's config says what it trained with, and the effective batch did not change.
    saved = RunDir(result.run_dir).config()
    assert (saved.training.batch_size, saved.training.gradient_accumulation) == (8, 2)
    assert _effective(saved) == _effective(config)
    starts = events.of(StartedEvent)
    assert [s.resumed_from_step for s in starts] == [0, 15]
    assert events.last_step() == 30
    # The events file keeps the change, and the loss curve is the one the run went on with.
    lines = [json.loads(line) for line in RunDir(result.run_dir).events_path.read_text("utf-8").splitlines()]
    assert [line["event"] for line in lines].count("adjusted") == 1
    steps = [step for step, _ in loss_curve(result.run_dir)]
    assert steps == sorted(set(steps)) and steps[-1] == 30


def test_oom_before_the_first_checkpoint_starts_again_with_a_fresh_model(
    tiny_bert: Path, samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fail_when(
        monkeypatch,
        "training_step",
        lambda t: t.state.global_step == 4 and t.args.per_device_train_batch_size > 8,
    )
    config = make_config(
        "classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs", max_steps=8
    )
    events = Recorder()
    result = run_training(config, events.append)

    assert result.status == "finished", result.failure
    (adjusted,) = events.of(AdjustedEvent)
    assert adjusted.step == 4 and adjusted.resumed_from == 0
    # Four steps had changed the weights: the model was loaded again rather than trained on from there.
    loads = [e for e in events.of(PreparingEvent) if "Loading the tokenizer and the model" in e.message]
    assert len(loads) == 2
    assert [s.resumed_from_step for s in events.of(StartedEvent)] == [0, 0]


def test_the_longest_batch_is_tried_first_and_an_oom_there_costs_no_step(
    tiny_bert: Path, samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from transformers import Trainer

    order: list[str] = []
    probed: list[tuple[list[int], list[int]]] = []
    real_probe = recovery.probe_longest_batch

    def probe(trainer: Trainer) -> list[int]:
        order.append("probe")
        if trainer.args.per_device_train_batch_size > 8:
            raise torch.OutOfMemoryError(OOM)
        rows = real_probe(trainer)  # the real forward and backward pass, on the CPU here
        lengths = sorted((len(e["input_ids"]) for e in trainer.train_dataset), reverse=True)
        probed.append(([len(trainer.train_dataset[i]["input_ids"]) for i in rows], lengths[: len(rows)]))
        return rows

    step = Trainer.training_step

    def training_step(self: Trainer, *args: object, **kwargs: object) -> object:
        order.append("step")
        return step(self, *args, **kwargs)

    monkeypatch.setattr(recovery, "probe_wanted", lambda args: True)  # as on a CUDA GPU
    monkeypatch.setattr(recovery, "probe_longest_batch", probe)
    monkeypatch.setattr(Trainer, "training_step", training_step)
    config = make_config(
        "classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs", max_steps=3
    )
    events = Recorder()
    result = run_training(config, events.append)

    assert result.status == "finished", result.failure
    assert order[:3] == ["probe", "probe", "step"]  # the first probe ran out of memory before any step
    (adjusted,) = events.of(AdjustedEvent)
    assert adjusted.step == 0 and adjusted.changes["training.batch_size"] == 8
    assert events.index(adjusted) < events.index(events.of(ProgressEvent)[0])
    ((used, longest),) = probed
    assert used == longest and len(used) == 8  # the longest rows, a whole batch of them


def test_the_probe_learns_nothing(tiny_bert: Path, samples: Path, tmp_path: Path) -> None:
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        DataCollatorWithPadding,
        Trainer,
        TrainingArguments,
    )

    tokenizer = AutoTokenizer.from_pretrained(tiny_bert)
    model = AutoModelForSequenceClassification.from_pretrained(tiny_bert, num_labels=2)
    rows = [dict(tokenizer("word " * n), labels=n % 2) for n in (3, 40, 7, 25, 2)]
    args = TrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=2, use_cpu=True)
    trainer = Trainer(
        model=model, args=args, train_dataset=rows, data_collator=DataCollatorWithPadding(tokenizer)
    )
    weights = {k: v.clone() for k, v in model.state_dict().items()}
    rng = torch.random.get_rng_state()

    assert sorted(recovery.probe_longest_batch(trainer)) == [1, 3]
    assert all(torch.equal(weights[k], v) for k, v in model.state_dict().items())
    assert all(p.grad is None for p in model.parameters())
    assert torch.equal(rng, torch.random.get_rng_state())


def test_an_evaluation_oom_halves_the_evaluation_batch_only(
    tiny_bert: Path, samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raised = _fail_when(monkeypatch, "evaluation_loop", lambda t: t.args.per_device_eval_batch_size > 4)
    config = make_config(
        "classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs", max_steps=16
    )
    config.training.save_steps = config.training.eval_steps = 8
    events = Recorder()
    result = run_training(config, events.append)

    assert result.status == "finished", result.failure
    assert raised == [8, 8]  # 16 -> 8 -> 4, at the first evaluation; the later ones used 4
    adjusted = events.of(AdjustedEvent)
    assert [a.changes for a in adjusted] == [{"training.eval_batch_size": 8}, {"training.eval_batch_size": 4}]
    assert all(a.resumed_from == a.step == 8 for a in adjusted)
    saved = RunDir(result.run_dir).config().training
    assert (saved.batch_size, saved.eval_batch_size) == (16, 4)
    assert "eval_accuracy" in result.metrics


def test_saving_and_merging_lora_out_of_memory_happen_on_the_cpu(
    tiny_bert: Path, samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from peft.tuners.lora import LoraModel

    merge = LoraModel.merge_and_unload
    calls: list[str] = []

    def merge_once_out_of_memory(self: LoraModel, *args: object, **kwargs: object) -> object:
        calls.append(next(self.parameters()).device.type)
        if len(calls) == 1:
            raise torch.OutOfMemoryError(OOM)
        return merge(self, *args, **kwargs)

    monkeypatch.setattr(LoraModel, "merge_and_unload", merge_once_out_of_memory)
    config = make_config(
        "classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs", max_steps=4
    )
    config.lora.enabled = True
    events = Recorder()
    result = run_training(config, events.append)

    assert result.status == "finished", result.failure
    assert calls == ["cpu", "cpu"]
    assert any("saving it from the CPU" in e.message for e in events.of(PreparingEvent))
    assert (result.model_dir / "config.json").is_file() and (result.run_dir / "adapter").is_dir()
    assert not result.model_dir.with_name("model.partial").exists()


@pytest.mark.slow
def test_when_nothing_is_left_the_run_fails_with_what_was_tried(
    tiny_bert: Path, samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fail_when(monkeypatch, "training_step", lambda t: True)
    config = make_config(
        "classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs", max_steps=4
    )
    config.training.batch_size = 4
    events = Recorder()
    result = run_training(config, events.append)

    assert result.status == "failed"
    assert len(events.of(AdjustedEvent)) == recovery.MAX_ATTEMPTS
    assert "ran out of memory" in result.failure.reason
    saved = RunDir(result.run_dir).config()  # the last setting tried, for the user to see
    assert (saved.training.batch_size, saved.performance.gradient_checkpointing) == (1, True)
    assert saved.lora.enabled and events.of(FailedEvent)


def test_a_change_reaches_the_app_from_a_child_process_in_the_users_language() -> None:
    from desktop.core.system.events import event_from_wire
    from desktop.core.system.translations import localized

    config = RunConfig()
    adjustment = recovery.next_setting(config, 0)
    event = AdjustedEvent(1, "out of memory", adjustment.changes, adjustment.previous, adjustment.described)
    back = event_from_wire(event.to_wire())
    assert back == event and back.changes == {"training.batch_size": 4, "training.gradient_accumulation": 2}
    chinese = localized(back.described[0], "zh_CN")  # translated where it is shown, with its numbers
    assert chinese != back.described[0] and "8 -> 4" in chinese


def test_a_run_with_checkpoints_is_never_started_over_by_itself(
    tiny_bert: Path, samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fail_when(monkeypatch, "training_step", lambda t: t.state.global_step >= 6)
    config = make_config(
        "classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs", max_steps=10
    )
    config.training.batch_size, config.training.save_steps = 2, 5
    events = Recorder()
    result = run_training(config, events.append)

    assert result.status == "failed"
    # Half the batch, then checkpointing, then the batch of 1; a new optimizer would start the run over.
    changes = [set(a.changes) for a in events.of(AdjustedEvent)]
    assert changes == [
        {"training.batch_size", "training.gradient_accumulation"},
        {"performance.gradient_checkpointing"},
    ]
    assert (RunDir(result.run_dir).checkpoints_dir / "checkpoint-5").is_dir()  # kept, to resume from
    labels = [r["label"] for r in result.failure.remedies]
    assert any("Adafactor" in label for label in labels)  # the user's to choose


def test_the_probe_runs_on_one_cuda_gpu_without_compile_only() -> None:
    from types import SimpleNamespace

    def args(device: str, processes: int = 1, compiled: bool = False) -> SimpleNamespace:
        return SimpleNamespace(
            device=SimpleNamespace(type=device), world_size=processes, torch_compile=compiled
        )

    assert recovery.probe_wanted(args("cuda"))
    assert not recovery.probe_wanted(args("cpu"))  # RAM, not an out-of-memory error to find early
    assert not recovery.probe_wanted(args("cuda", processes=2))  # the ranks step together
    assert not recovery.probe_wanted(args("cuda", compiled=True))
