"""Rows the max length will leave out are told before training (issue 59): ``validate`` names the count
and the max length that keeps 95%, and a run says it in its first lines, not only after the last step."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.cli import main
from desktop.core.system.events import PreparingEvent, ProgressEvent
from desktop.core.training.run import run_training
from tests.core.helpers import Recorder, make_config


def _chats(path: Path, long: int, short: int) -> Path:
    """``long`` chats whose question alone is long, and ``short`` ones with a short question."""
    rows = []
    for i in range(long + short):
        question = ("please think about this question very carefully " * 12) if i < long else "hello?"
        rows.append({"messages": [{"role": "user", "content": f"{question} {i}"},
                                  {"role": "assistant", "content": f"answer {i}"}]})  # fmt: skip
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_validate_says_how_many_rows_the_max_length_leaves_out_and_what_keeps_95_percent(
    tiny_gpt2: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    data = _chats(tmp_path / "chats.jsonl", long=30, short=70)
    config_path = tmp_path / "run.toml"
    args = [
        "init",
        "--task",
        "causal-lm",
        "--model",
        str(tiny_gpt2),
        "--data",
        str(data),
        "-o",
        str(config_path),
    ]
    assert main(args) == 0
    text = config_path.read_text(encoding="utf-8").replace("max_length = 256", "max_length = 48")
    config_path.write_text(text, encoding="utf-8")
    capsys.readouterr()

    assert main(["validate", str(config_path)]) == 0

    out = capsys.readouterr().out
    assert "With max length 48," in out and "rows (" in out and "will be left out" in out
    said = out[out.index("With max length 48,") :]
    dropped = int(said.split(", ", 1)[1].split(" of ")[0])
    assert 20 <= dropped <= 30  # the long questions among the training rows (a tenth is held out)
    keep = int(said.split("A max length of ")[1].split(" ")[0])
    assert keep > 48


@pytest.mark.slow
def test_a_run_says_the_rows_it_leaves_out_before_its_first_step(tiny_gpt2: Path, tmp_path: Path) -> None:
    data = _chats(tmp_path / "chats.jsonl", long=30, short=70)
    config = make_config("causal-lm", tiny_gpt2, [data], tmp_path / "runs", max_steps=2, max_length=48)
    events = Recorder()

    run_training(config, events.append)

    first_step = next(i for i, e in enumerate(events) if isinstance(e, ProgressEvent))
    told = [e.message for e in events[:first_step] if isinstance(e, PreparingEvent)]
    assert any("were left out" in line and "48" in line for line in told)
