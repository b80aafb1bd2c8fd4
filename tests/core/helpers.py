"""Helpers for core tests: configs in a few lines and an event recorder."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from desktop.core.runs.folders import RunDir
from desktop.core.settings.config import RunConfig
from desktop.core.system.events import Event, LogEvent, ProgressEvent, StartedEvent


def make_config(task: str, model: Path, files: list[Path], runs_dir: Path, **training: object) -> RunConfig:
    """A small, fast config for ``task``."""
    config = RunConfig(task=task)
    config.model.name = str(model)
    config.data.files = [str(f) for f in files]
    config.output.runs_dir = str(runs_dir)
    config.validation.fraction = 0.1
    t = config.training
    t.max_steps, t.learning_rate, t.batch_size, t.max_length, t.logging_steps = 30, 1e-2, 16, 64, 5
    t.save_steps = t.eval_steps = 15
    for key, value in training.items():
        setattr(t, key, value)
    return config


def overfitting_classifier(model: Path, samples: Path, runs_dir: Path, **training: object) -> RunConfig:
    """A classifier whose best checkpoint comes early whatever the machine's arithmetic: it is evaluated on
    its own reviews with every label swapped, so the more it learns, the worse it scores (its evaluation
    loss climbs from about 0.69 to over 1.6 in 40 steps at this rate). A too-high rate that makes the loss
    wander instead left the best at the last step on some machines."""
    settings: dict[str, object] = {"max_steps": 40, "learning_rate": 1e-2, "eval_steps": 5, "save_steps": 20}
    reviews = samples / "reviews.csv"
    config = make_config("classification", model, [reviews], runs_dir, **(settings | training))
    config.lora.rank, config.lora.alpha, config.lora.dropout = 32, 64, 0.0  # if LoRA: enough to learn
    swap = {"positive": "negative", "negative": "positive"}
    with reviews.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    runs_dir.mkdir(parents=True, exist_ok=True)
    flipped = runs_dir.parent / f"{runs_dir.name}-flipped.csv"
    with flipped.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["text", "label"])
        writer.writeheader()
        writer.writerows({"text": r["text"], "label": swap[r["label"]]} for r in rows[:32])
    config.validation.files = [str(flipped)]
    return config


class Recorder(list):
    """An ``on_event`` sink that keeps every event."""

    def of(self, kind: type[Event]) -> list:
        return [e for e in self if isinstance(e, kind)]

    def losses(self) -> list[float]:
        return [e.metrics["loss"] for e in self.of(LogEvent) if "loss" in e.metrics]

    def last_step(self) -> int:
        return self.of(ProgressEvent)[-1].step


def fake_checkpoint(folder: Path, step: int) -> Path:
    """A checkpoint folder as the Trainer writes one: its state and a (tiny) weights file."""
    import numpy as np
    from safetensors.numpy import save_file

    folder.mkdir(parents=True)
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": step}), encoding="utf-8")
    save_file({"w": np.zeros((4, 4), dtype=np.float32)}, str(folder / "model.safetensors"))
    return folder


def fake_run(runs: Path, name: str, *events: object, checkpoint: int | None = None) -> RunDir:
    """A run folder as a run that ended (its lock released) leaves it: two logged steps, then ``events``."""
    config = RunConfig(task="classification")
    config.model.name = "bundled:all-MiniLM-L6-v2"
    config.data.files = ["reviews.csv"]
    config.output.name = name
    run = RunDir.create(runs, config)
    run.append(StartedEvent(str(run.path), 100, 90, 10, "cpu"))
    for step in (10, 20):
        run.append(ProgressEvent(step, 100, step / 50, step * 1.0, 60.0, 8.0, None))
        run.append(LogEvent(step, step / 50, {"loss": 1.0 / step}))
    for event in events:
        run.append(event)  # type: ignore[arg-type]
    run.close()
    run.unlock()
    if checkpoint is not None:
        fake_checkpoint(run.checkpoints_dir / f"checkpoint-{checkpoint}", checkpoint)
    return run


FRUIT = ("apple", "pear", "plum", "grape", "lemon", "mango", "peach", "melon", "cherry", "lime")
TOOLS = ("hammer", "saw", "drill", "wrench", "chisel", "file", "rasp", "clamp", "vise", "axe")


def preference_pairs(path: Path, rows: int = 400, seed: int = 0) -> Path:
    """A JSON Lines preference set with a rule a tiny model learns: the chosen answer is a fruit, the
    rejected one a tool (a random model prefers either about as often)."""
    import random

    rng = random.Random(seed)
    lines = [
        json.dumps(
            {
                "prompt": f"Name a thing, number {i}.",
                "chosen": rng.choice(FRUIT),
                "rejected": rng.choice(TOOLS),
            }
        )
        for i in range(rows)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
