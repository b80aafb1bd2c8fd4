"""A run's summary (``summary.json``): what Run history and ``runs`` show, without reading the event log.

The summary is a fold of the run's events (``events.jsonl`` stays the record; append-only). The run's
own process keeps it up to date as it writes events (at most every :data:`FLUSH_S` seconds, and at
once on start and end). Whoever lists runs reads the summary and folds in only the events written
after it (``covered`` says how many bytes of the log it holds), so a run of a million steps costs the
same to list as a run of ten. A run without a summary (an older version's) is folded once in full and
its summary written for next time.
"""

from __future__ import annotations

import contextlib
import json
import math
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from desktop.core.system.events import (
    Event,
    FailedEvent,
    FinishedEvent,
    LogEvent,
    ProgressEvent,
    StartedEvent,
    StoppedEvent,
    event_from_dict,
)

SUMMARY_NAME = "summary.json"
VERSION = 4  # 2: tokens per second and padding; 3: the epochs trained; 4: the saved model's scores
FLUSH_S = 2.0
"""The longest a running run's summary lags behind its log (listing folds in the rest)."""

ENDED = {FinishedEvent: "finished", StoppedEvent: "stopped", FailedEvent: "failed"}


@dataclass
class Summary:
    """What a run is and how far it got.

    Attributes:
        ended: ``finished``, ``stopped`` or ``failed`` when the last start ended so; ``""`` while it
            runs, or when it crashed.
        events: Events folded in (a log with bytes but no readable event is damaged).
        covered: Bytes of ``events.jsonl`` folded into this summary.
        config_mtime_ns: The config file's modification time when the config fields were read: a
            config changed since (or damaged) is read again.
        damaged: The config could not be read.
    """

    task: str = "?"
    model: str = "?"
    dataset: str = ""
    learning_rate: float | None = None
    batch_size: int | None = None
    gradient_accumulation: int | None = None
    epochs: float | None = None
    max_steps: int = 0
    lora: str = ""
    created: float = 0.0
    num_train: int = 0
    num_eval: int = 0
    step: int = 0
    total_steps: int = 0
    epoch: float = 0.0  # the epochs trained so far (the config's ``epochs`` is what was asked)
    ended: str = ""
    accuracy: float | None = None
    eval_loss: float | None = None
    loss: float | None = None
    final: dict[str, float] = field(default_factory=dict)  # the saved model's scores (finished runs)
    tokens_per_second: float | None = None
    padding_share: float | None = None
    events: int = 0
    covered: int = 0
    config_mtime_ns: int = 0
    damaged: bool = False
    version: int = VERSION

    # ------------------------------------------------------------------ building

    def read_config(self, config_path: Path) -> None:
        """Take the config's fields (task, model, data, hyperparameters) from ``config_path``."""
        from desktop.core.settings.config import load_config

        try:
            self.config_mtime_ns = config_path.stat().st_mtime_ns
            config = load_config(config_path)
        except Exception:  # damaged or gone: the run is listed as damaged, never resumed
            self.task = self.model = "?"
            self.dataset, self.damaged = "", True
            return
        t = config.training
        self.task, self.model = config.task, config.model.name.removeprefix("bundled:")
        self.dataset = config.data.hub_id or ", ".join(Path(f).name for f in config.data.files)
        self.learning_rate, self.batch_size = t.learning_rate, t.batch_size
        self.gradient_accumulation, self.epochs, self.max_steps = (
            t.gradient_accumulation,
            t.epochs,
            t.max_steps,
        )
        lora = config.lora
        self.lora = (f"QLoRA r{lora.rank}" if lora.qlora else f"LoRA r{lora.rank}") if lora.enabled else ""
        self.damaged = False

    def add(self, event: Event) -> None:
        """Fold one event in."""
        self.events += 1
        if isinstance(event, StartedEvent):
            self.ended = ""
            self.total_steps = event.total_steps
            self.num_train, self.num_eval = event.num_train_examples, event.num_eval_examples
            self.step = max(self.step, event.resumed_from_step)
        elif isinstance(event, ProgressEvent):
            self.step, self.total_steps, self.epoch = event.step, event.total_steps, event.epoch
            if event.tokens_per_second:  # the last smoothed figure: the run's pace once warmed up
                self.tokens_per_second = event.tokens_per_second
            if event.padding_share is not None:
                self.padding_share = event.padding_share
        elif isinstance(event, LogEvent):
            metrics = event.metrics
            if _number(metrics.get("loss")):
                self.loss = float(metrics["loss"])
            if _number(metrics.get("eval_accuracy")):
                self.accuracy = max(self.accuracy or -math.inf, float(metrics["eval_accuracy"]))
            if _number(metrics.get("eval_loss")):
                self.eval_loss = min(
                    self.eval_loss if self.eval_loss is not None else math.inf, float(metrics["eval_loss"])
                )
        elif type(event) in ENDED:
            self.ended = ENDED[type(event)]
            if isinstance(event, FinishedEvent):
                self.final = {k: float(v) for k, v in event.metrics.items() if _number(v)}

    def add_lines(self, raw: bytes) -> None:
        """Fold in the events of ``raw`` (whole JSON lines; torn or foreign lines are skipped)."""
        for line in raw.splitlines():
            if not line.strip():
                continue
            try:
                self.add(event_from_dict(json.loads(line)))
            except Exception:  # a damaged line costs that line only
                continue

    def best(self) -> tuple[str, float] | None:
        """The run's score, by its metric key: a finished run's saved model's (its accuracy, else its
        eval loss); else the highest accuracy, else lowest eval loss, else the last training loss."""
        if self.ended == "finished":
            for key in ("eval_accuracy", "eval_loss"):
                if key in self.final:
                    return (key, self.final[key])
        if self.accuracy is not None:
            return ("eval_accuracy", self.accuracy)
        if self.eval_loss is not None:
            return ("eval_loss", self.eval_loss)
        return ("loss", self.loss) if self.loss is not None else None

    # ------------------------------------------------------------------ on disk

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Summary | None:
        """The summary in ``text``; ``None`` when it is damaged or of another version."""
        try:
            data = json.loads(text)
            if data.get("version") != VERSION:
                return None
            known = {f.name for f in fields(cls)}
            return cls(**{key: value for key, value in data.items() if key in known})
        except (ValueError, TypeError, AttributeError):
            return None


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def write(folder: Path, summary: Summary) -> None:
    """Save ``summary`` in the run folder (atomically: a reader sees the old one or the new one)."""
    from desktop.core.system.paths import atomic_write_text

    atomic_write_text(folder / SUMMARY_NAME, summary.to_json())


def read(folder: Path, events_path: Path, config_path: Path) -> tuple[Summary, bool]:
    """The run's summary brought up to date with its log and config; and whether it changed (so that
    the caller may save it). Reads only the part of the log the saved summary does not cover."""
    try:
        saved = Summary.from_json((folder / SUMMARY_NAME).read_text(encoding="utf-8"))
    except OSError:
        saved = None
    try:
        size = events_path.stat().st_size
    except OSError:
        size = 0
    try:
        config_mtime = config_path.stat().st_mtime_ns
    except OSError:
        config_mtime = -1
    before = saved.to_json() if saved is not None else ""
    summary = saved
    if summary is None or summary.covered > size:  # none yet, damaged, or a log that shrank
        summary = Summary(created=_created(config_path))
        summary.read_config(config_path)
    elif summary.config_mtime_ns != config_mtime:  # the config was edited (or damaged) since
        summary.read_config(config_path)
    if summary.covered < size:
        with open(events_path, "rb") as fh:
            fh.seek(summary.covered)
            raw = fh.read(size - summary.covered)
        whole = raw[: raw.rfind(b"\n") + 1]  # a line being written right now waits for next time
        summary.add_lines(whole)
        summary.covered += len(whole)
    return summary, summary.to_json() != before


def _created(config_path: Path) -> float:
    try:
        return config_path.stat().st_mtime
    except OSError:
        return 0.0


class Writer:
    """Keeps a running run's summary: folds each event as it is written, saves now and then."""

    def __init__(self, folder: Path, events_path: Path, config_path: Path) -> None:
        self.folder = folder
        self.summary, _ = read(folder, events_path, config_path)  # the event just written included
        self._saved_at = time.monotonic()
        self.save()

    def add(self, event: Event, covered: int) -> None:
        """Fold in ``event``, just written; the log is now ``covered`` bytes long."""
        self.summary.add(event)
        self.summary.covered = covered
        now = time.monotonic()
        if isinstance(event, StartedEvent) or type(event) in ENDED or now - self._saved_at >= FLUSH_S:
            self.save()
            self._saved_at = now

    def save(self) -> None:
        # A full disk: the log is the record, and listing folds in what the summary lacks.
        with contextlib.suppress(OSError):
            write(self.folder, self.summary)
