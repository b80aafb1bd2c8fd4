"""A reasoning run from the command line: ``init --task grpo`` guesses the columns and how the answers
compare, ``preview`` shows what the rewards give the reference and a wrong answer, ``train`` runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.cli import main
from desktop.core.settings.config import load_config


@pytest.mark.slow
def test_init_preview_and_train_a_grpo_run(tiny_gpt2: Path, tmp_path: Path, capsys) -> None:
    data = tmp_path / "sums.jsonl"
    rows = [{"question": f"{a} + {b} = ?", "answer": a + b} for a in range(1, 7) for b in range(1, 7)]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    config_file = tmp_path / "run.toml"
    assert (
        main(
            ["init", "--task", "grpo", "--model", str(tiny_gpt2), "--data", str(data), "-o", str(config_file)]
        )
        == 0
    )
    config = load_config(config_file)
    assert (config.columns.prompt, config.columns.answer) == ("question", "answer")
    assert config.grpo.answer_check == "number" and config.training.learning_rate == 1e-6
    capsys.readouterr()

    assert main(["preview", str(config_file), "--no-tokens"]) == 0
    out = capsys.readouterr().out
    assert "'2': answer 1, format 1   |   '3': answer 0, format 1" in out

    settings = [
        "training.max_steps=2",
        "training.batch_size=4",
        "grpo.max_completion_length=8",
        "validation.fraction=0.2",
    ]
    assert (
        main(
            [
                "train",
                str(config_file),
                *[a for s in settings for a in ("--set", s)],
                "--runs-dir",
                str(tmp_path / "runs"),
            ]
        )
        == 0
    )
    capsys.readouterr()
    [run] = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    assert main(["evaluate", str(run)]) == 0
    out = capsys.readouterr().out
    assert "held-out prompts: the share whose greedy answer earns each reward" in out
    assert "answer" in out and "format" in out and " -> " in out  # base -> fine-tuned
