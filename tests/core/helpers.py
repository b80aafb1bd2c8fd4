"""Helpers for core tests: configs in a few lines and an event recorder."""

from __future__ import annotations

from pathlib import Path

from desktop.core.config import RunConfig
from desktop.core.events import Event, LogEvent, ProgressEvent


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


class Recorder(list):
    """An ``on_event`` sink that keeps every event."""

    def of(self, kind: type[Event]) -> list:
        return [e for e in self if isinstance(e, kind)]

    def losses(self) -> list[float]:
        return [e.metrics["loss"] for e in self.of(LogEvent) if "loss" in e.metrics]

    def last_step(self) -> int:
        return self.of(ProgressEvent)[-1].step
