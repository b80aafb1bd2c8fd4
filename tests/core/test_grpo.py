"""Reasoning with rewards (GRPO) on a toy task a tiny model learns in tens of steps: the mean reward
rises; a stopped run resumes; a config that cannot work is refused field by field."""

from __future__ import annotations

import json
import statistics
import threading
from pathlib import Path

import pytest

from desktop.core.data.rewards import sample_message
from desktop.core.runs.folders import RunDir
from desktop.core.settings.config import RunConfig
from desktop.core.system.events import AdviceEvent, LogEvent, ProgressEvent, SampleEvent, StartedEvent
from desktop.core.training import evaluation
from desktop.core.training.run import run_training
from tests.core.helpers import Recorder, make_config


@pytest.fixture
def sums(tmp_path: Path) -> Path:
    path = tmp_path / "sums.jsonl"
    rows = [{"question": f"What is {a} plus {b}?", "answer": a + b} for a in range(1, 9) for b in range(1, 9)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _config(tiny_gpt2: Path, data: Path, runs: Path, **training: object) -> RunConfig:
    """Short answers earn the length reward: a random tiny model learns to write fewer characters."""
    config = make_config(
        "grpo", tiny_gpt2, [data], runs, batch_size=8, learning_rate=1e-2, logging_steps=2, max_length=128
    )
    for key, value in training.items():
        setattr(config.training, key, value)
    config.validation.fraction = 0
    g = config.grpo
    g.answer_weight = g.format_weight = 0.0
    g.length_min, g.length_max, g.length_weight = 0, 8, 1.0
    g.num_generations, g.max_completion_length, g.temperature = 4, 8, 1.0
    return config


def _rewards(events: Recorder) -> list[float]:
    return [e.metrics["reward"] for e in events.of(LogEvent) if "reward" in e.metrics]


@pytest.mark.slow
def test_the_mean_reward_rises(tiny_gpt2: Path, sums: Path, tmp_path: Path) -> None:
    events = Recorder()
    config = _config(tiny_gpt2, sums, tmp_path / "runs", max_steps=40, eval_steps=40, save_steps=40)
    config.validation.fraction = 0.1  # 6 held-out prompts: answered by the base and the tuned model
    result = run_training(config, events.append)
    assert result.status == "finished", result.failure
    rewards = _rewards(events)
    assert len(rewards) == 20
    # Measured: the first five logs average 0.27, the last five 0.53 (lengths of 8 tokens, ~20 characters,
    # become shorter ones).
    assert statistics.mean(rewards[-5:]) > statistics.mean(rewards[:5]) + 0.12
    logged = next(e.metrics for e in events.of(LogEvent) if "reward" in e.metrics)
    assert {"rewards/length/mean", "reward_std", "completions/mean_length"} <= set(logged)
    assert (RunDir(result.run_dir).model_dir / "config.json").is_file()
    # What the model writes, in the log as training goes: the best and the worst answer of a batch.
    samples = events.of(SampleEvent)
    assert samples and {s.step for s in samples} >= {0, 10, 20, 30}
    assert all(set(s.rewards) == {"length"} and s.prompt.startswith("What is") for s in samples)
    line = str(sample_message(samples[0].step, samples[0].rewards, samples[0].completion))
    assert line.startswith("sample at step 0 (length ")

    saved = evaluation.load(result.run_dir)
    base, tuned = saved["base"], saved["fine_tuned"]
    assert base.task == tuned.task == "grpo" and base.rows == tuned.rows == 6
    assert set(tuned.earned) == {"length"} and 0 <= tuned.earned["length"] <= 1
    assert len(tuned.scores) == 6 and tuned.samples[0]["prompt"].startswith("What is")
    card = evaluation.card_section(result.run_dir, tmp_path)
    assert "share whose greedy answer earns each reward" in card and "| length |" in card


@pytest.mark.slow
def test_a_stopped_run_resumes_where_it_stopped(tiny_gpt2: Path, sums: Path, tmp_path: Path) -> None:
    stop, first = threading.Event(), Recorder()

    def on_event(event: object) -> None:
        first.append(event)
        if isinstance(event, ProgressEvent) and event.step == 6:
            stop.set()

    config = _config(tiny_gpt2, sums, tmp_path / "runs", max_steps=10, save_steps=5)
    stopped = run_training(config, on_event, stop)
    assert stopped.status == "stopped"
    run = RunDir(stopped.run_dir)
    resumed = Recorder()
    assert run_training(run.config(), resumed.append, resume=run).status == "finished"
    assert resumed.of(StartedEvent)[0].resumed_from_step in (5, 6)
    assert resumed.last_step() == 10 and _rewards(resumed)

    # The tuned model is the chat model it was: a verified folder, and a GGUF file.
    from desktop.core.results.export import export_run
    from desktop.core.results.gguf_export import export_run_gguf

    exported = export_run(run, tmp_path / "export")
    assert exported.verification is not None and exported.verification.ok
    card = (exported.folder / "README.md").read_text(encoding="utf-8")
    assert "tags: [finetune-studio, grpo, trl]" in card
    gguf = export_run_gguf(run, tmp_path / "gguf", verify=False)
    assert gguf.path.read_bytes()[:4] == b"GGUF"


def test_a_config_that_cannot_work_is_refused_field_by_field(
    tiny_gpt2: Path, sums: Path, tmp_path: Path
) -> None:
    config = _config(tiny_gpt2, sums, tmp_path / "runs")
    g = config.grpo
    g.num_generations, g.temperature, g.format = 3, 0.0, r"Answer: \d+"
    g.length_weight = 0.0
    fields = {p.field: str(p.message) for p in config.validate()}
    assert "must divide batch size x gradient accumulation (8)" in fields["grpo.num_generations"]
    assert "Use 4" in fields["grpo.num_generations"]
    assert "must be above 0" in fields["grpo.temperature"]
    assert "no group to take the answer from" in fields["grpo.format"]
    assert "turns every reward off" in fields["grpo"]


def test_the_coach_says_when_the_reward_is_flat_or_the_answers_shrink(
    tiny_gpt2: Path, sums: Path, tmp_path: Path
) -> None:
    from desktop.core.training.coach import Coach

    config = _config(tiny_gpt2, sums, tmp_path / "runs", max_steps=40)
    coach = Coach(config)
    coach.see(StartedEvent(str(tmp_path), 40, 64, 0, "cpu"))
    said: list[AdviceEvent] = []
    lengths = [120, 118, 110, 90, 60, 30, 20, 12]
    for i, length in enumerate(lengths):
        metrics = {
            "loss": 0.0,
            "reward": 0.30,
            "frac_reward_zero_std": 0.9,
            "completions/mean_length": length,
        }
        said += coach.see(LogEvent(step=(i + 1) * 5, epoch=0.0, metrics=metrics))
    concerns = {a.concern: str(a.message) for a in said}
    assert set(concerns) == {"reward_flat", "length_collapsing"}  # a GRPO loss of 0 is not "not learning"
    assert "in 90% of the prompts every answer scored the same" in concerns["reward_flat"]
    assert "shrank from 120 to 30 tokens" in concerns["length_collapsing"]  # said the first time


@pytest.mark.parametrize(
    ("name", "check"),
    [("reasoning.jsonl", "number"), ("reasoning-zh.jsonl", "number"), ("sentiment-words.jsonl", "label")],
)
def test_the_samples_are_checkable(samples: Path, name: str, check: str) -> None:
    from desktop.core.data.columns import guess_columns
    from desktop.core.data.local_files import read_files
    from desktop.core.data.rewards import guess_check, preview
    from desktop.core.settings.config_sections import Grpo

    table = read_files([samples / name])
    columns = guess_columns(table, "grpo").columns
    assert (columns.prompt, columns.answer) == ("question", "answer")
    answers = list(table.column("answer"))
    settings = Grpo()
    settings.answer_check, settings.labels = guess_check(answers)
    assert settings.answer_check == check
    if check == "label":
        assert settings.labels == ["negative", "positive"]
    rows = [(q, a) for q, a in zip(table.column("question"), answers, strict=True)][:20]
    for row in preview(settings, rows, count=20):
        assert row.right == {"answer": 1.0, "format": 1.0} and row.wrong["answer"] == 0.0


def test_vllm_writes_the_answers_on_linux_with_a_gpu_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util
    import sys

    import torch

    from desktop.core.training import grpo

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: object() if name == "vllm" else real(name, *a)
    )
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(sys, "platform", "linux")
    assert grpo.vllm_args() == {"use_vllm": True, "vllm_mode": "colocate", "vllm_gpu_memory_utilization": 0.3}
    assert grpo.vllm_args(640)["vllm_max_model_length"] == 640
    assert str(grpo.writer_words()) == "Answers are written by vLLM."
    monkeypatch.setattr(sys, "platform", "win32")  # vLLM has no Windows build
    assert grpo.vllm_args() == {} and str(grpo.writer_words()) == "Answers are written by transformers."
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert grpo.vllm_args() == {}


@pytest.mark.slow
def test_a_lora_run_trains_the_adapters_only(tiny_gpt2: Path, sums: Path, tmp_path: Path) -> None:
    config = _config(tiny_gpt2, sums, tmp_path / "runs", max_steps=4)
    config.lora.enabled, config.lora.rank = True, 4
    events = Recorder()
    result = run_training(config, events.append)
    assert result.status == "finished", result.failure
    run = RunDir(result.run_dir)
    assert (run.adapter_dir / "adapter_config.json").is_file() and _rewards(events)
