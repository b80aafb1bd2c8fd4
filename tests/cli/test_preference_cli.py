"""Preference tuning from the command line (issue 38): init with a method, train, read the evaluation."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from desktop.cli import main
from desktop.core.settings.config import load_config
from tests.core.helpers import preference_pairs


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("trl") is None, reason="TRL needs Python 3.11")
def test_init_train_and_evaluate_an_orpo_run(
    tiny_chat_models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    data = preference_pairs(tmp_path / "pairs.jsonl", rows=300)
    config_path = tmp_path / "run.toml"
    args = ["init", "--task", "preference", "--method", "orpo", "--model", str(tiny_chat_models["qwen2"])]
    assert main([*args, "--data", str(data), "-o", str(config_path)]) == 0
    out = capsys.readouterr().out
    assert "chosen       <- chosen  (by name)" in out and "prompt       <- prompt  (by name)" in out
    config = load_config(config_path)
    assert (config.task, config.preference.method, config.training.learning_rate) == (
        "preference",
        "orpo",
        5e-6,
    )
    assert "# dpo (Direct Preference Optimization" in config_path.read_text(encoding="utf-8")

    runs = tmp_path / "runs"
    settings = [
        "training.max_steps=30",
        "training.learning_rate=5e-3",
        "training.batch_size=16",
        "training.max_length=64",
        "training.eval_steps=30",
        "validation.fraction=0.2",
    ]
    assert (
        main(
            ["train", str(config_path), "--runs-dir", str(runs), *[a for s in settings for a in ("--set", s)]]
        )
        == 0
    )
    summary = capsys.readouterr().out.split("eval_rewards/accuracies ")[1]
    assert float(summary.split()[0]) > 0.9

    assert main(["evaluate", next(runs.iterdir()).name, "--runs-dir", str(runs)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "60 held-out preference pairs"
    accuracy = next(line for line in lines if line.startswith("preference accuracy"))
    before, after = (float(v) for v in accuracy.split()[-3::2])
    assert before < 0.75 and after > 0.9
    assert "Now preferring the chosen answer:" in lines


def test_method_is_for_preference_runs_only(
    tiny_chat_models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    data = preference_pairs(tmp_path / "pairs.jsonl", rows=10)
    args = ["init", "--task", "causal-lm", "--method", "dpo", "--model", str(tiny_chat_models["qwen2"])]
    assert main([*args, "--data", str(data), "-o", str(tmp_path / "run.toml")]) != 0
    assert "--method is for preference tuning" in capsys.readouterr().err
    assert not (tmp_path / "run.toml").exists()
