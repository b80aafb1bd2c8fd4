"""Typed events that a run reports; each serialises to one JSON line."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from desktop.core.system.messages import from_wire, to_wire


@dataclass(frozen=True)
class Event:
    """Base of all run events. ``kind`` names the event type in JSON."""

    kind: ClassVar[str] = "event"

    def to_dict(self) -> dict[str, Any]:
        """The event as a plain dict with its ``event`` type."""
        return {"event": self.kind, **dataclasses.asdict(self)}

    def to_json(self) -> str:
        """The event as one line of JSON."""
        return json.dumps(self.to_dict(), ensure_ascii=False, default=str)

    def to_wire(self) -> str:
        """The event as one line of JSON for a supervising process: its messages keep their templates
        (see :func:`event_from_wire`), so the app shows a child's messages in the user's language."""
        data = {
            "event": self.kind,
            **{f.name: to_wire(getattr(self, f.name)) for f in dataclasses.fields(self)},
        }
        return json.dumps(data, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class StartedEvent(Event):
    """Training began (after loading and preprocessing)."""

    kind: ClassVar[str] = "started"
    run_dir: str
    total_steps: int
    num_train_examples: int
    num_eval_examples: int
    device: str
    resumed_from_step: int = 0
    processes: int = 1  # training processes (one per GPU); rank 0 reports
    oom_recovery: bool = False  # an out-of-memory error is recovered from (on, and on a CUDA GPU)


@dataclass(frozen=True)
class PreparingEvent(Event):
    """A slow preparation phase (importing, loading the model, tokenizing) is under way."""

    kind: ClassVar[str] = "preparing"
    message: str


@dataclass(frozen=True)
class ProgressEvent(Event):
    """One optimizer step is done."""

    kind: ClassVar[str] = "progress"
    step: int
    total_steps: int
    epoch: float
    elapsed_s: float
    eta_s: float | None
    samples_per_second: float | None
    tokens_per_second: float | None
    padding_share: float | None = None
    """Of the token slots in the batches since the last report, the share that was padding."""
    padded_share: float | None = None
    """The share of padding the same batches would have had padded to their longest example (the same
    as ``padding_share`` where they were)."""


@dataclass(frozen=True)
class LogEvent(Event):
    """Metrics logged by the Trainer: loss, learning rate, grad norm, or eval metrics."""

    kind: ClassVar[str] = "log"
    step: int
    epoch: float
    metrics: dict[str, float] = field(default_factory=dict)

    @property
    def is_eval(self) -> bool:
        """Whether these are evaluation metrics."""
        return any(k.startswith("eval_") for k in self.metrics)


@dataclass(frozen=True)
class MemoryEvent(Event):
    """Memory in use: torch's CUDA allocator figures and NVML's device totals on GPU; process RSS."""

    kind: ClassVar[str] = "memory"
    step: int
    device: str
    allocated_bytes: int | None
    reserved_bytes: int | None
    peak_bytes: int | None
    rss_bytes: int
    device_used_bytes: int | None = None
    device_total_bytes: int | None = None
    gpus_used_bytes: list[int] = field(default_factory=list)  # NVML: each GPU of a multi-GPU run here


@dataclass(frozen=True)
class CheckpointEvent(Event):
    """A checkpoint was written."""

    kind: ClassVar[str] = "checkpoint"
    step: int
    path: str


@dataclass(frozen=True)
class FinishedEvent(Event):
    """The run finished and the model was saved."""

    kind: ClassVar[str] = "finished"
    step: int
    model_dir: str
    metrics: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what the user should know about the data
    best: dict[str, Any] = field(default_factory=dict)
    """Which checkpoint the model is (``training.best.outcome``): metric, value, step, last_step,
    last_value, kept, stopped_early; empty when the run tracked no best."""


@dataclass(frozen=True)
class StoppedEvent(Event):
    """The run was stopped on request; the checkpoint (if any) lets it resume."""

    kind: ClassVar[str] = "stopped"
    step: int
    checkpoint: str


@dataclass(frozen=True)
class FailedEvent(Event):
    """The run failed: ``reason`` and ``remedy`` are for the user, ``detail`` is the traceback."""

    kind: ClassVar[str] = "failed"
    reason: str
    remedy: str
    detail: str = ""
    remedies: list[dict[str, Any]] = field(default_factory=list)  # [{"label", "changes"}], to apply and retry
    rank: int = 0  # the process it happened in, of a run's several (0: the main one, which reports)


@dataclass(frozen=True)
class AdjustedEvent(Event):
    """The GPU ran out of memory and the run goes on with less memory (``performance.oom_recovery``).

    ``changes`` and ``previous`` are ``{"section.field": value}``: the settings now and before, so the
    next run can keep them or undo them; ``described`` says each change and why; the run's config is
    saved with the changes. ``resumed_from`` is the step it goes on from (0: the start)."""

    kind: ClassVar[str] = "adjusted"
    step: int
    reason: str
    changes: dict[str, Any]
    previous: dict[str, Any]
    described: list[str] = field(default_factory=list)
    resumed_from: int = 0
    attempt: int = 1


@dataclass(frozen=True)
class DownloadEvent(Event):
    """A model or dataset the run needs is being downloaded first: its own step, before preparing
    (``done`` and ``total`` in bytes, ``speed`` in bytes per second over the last seconds)."""

    kind: ClassVar[str] = "download"
    name: str
    dataset: bool
    done: int
    total: int
    speed: float = 0.0
    file: str = ""


@dataclass(frozen=True)
class AwakeEvent(Event):
    """Whether the computer is kept from sleeping for the run (asked as it starts; it may say no
    a moment later, on Linux when the login manager answers)."""

    kind: ClassVar[str] = "awake"
    kept: bool


@dataclass(frozen=True)
class AdviceEvent(Event):
    """What the coach saw in the run's curves, with the figures, and the changes that would help
    (``remedies``: ``{"label": ..., "changes": {"section.field": value}}``, as a failure's)."""

    kind: ClassVar[str] = "advice"
    step: int
    concern: str  # learning_rate, overfitting, diverging, not_learning, preference_held_out, ... (coach.py)
    message: Any
    remedies: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class SampleEvent(Event):
    """Reasoning runs (GRPO): one answer the model wrote during training, with what each reward gave it
    (the best and the worst of a batch are shown, so the user sees what the model writes)."""

    kind: ClassVar[str] = "sample"
    step: int
    prompt: str
    completion: str
    rewards: dict[str, Any] = field(default_factory=dict)
    total: float = 0.0


EVENT_TYPES: dict[str, type[Event]] = {
    cls.kind: cls
    for cls in (
        PreparingEvent,
        StartedEvent,
        ProgressEvent,
        LogEvent,
        MemoryEvent,
        CheckpointEvent,
        AdjustedEvent,
        FinishedEvent,
        StoppedEvent,
        FailedEvent,
        DownloadEvent,
        AwakeEvent,
        AdviceEvent,
        SampleEvent,
    )
}
TERMINAL = (FinishedEvent, StoppedEvent, FailedEvent)


def event_from_dict(data: dict[str, Any]) -> Event:
    """Rebuild an event from :meth:`Event.to_dict` output.

    Raises:
        ValueError: The dict names no known event type.
    """
    data = dict(data)
    cls = EVENT_TYPES.get(data.pop("event", ""))
    if cls is None:
        raise ValueError(f"not a run event: {data!r}")
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})


def event_from_json(line: str) -> Event:
    """Rebuild an event from one JSON line."""
    return event_from_dict(json.loads(line))


def event_from_wire(line: str) -> Event:
    """Rebuild an event from :meth:`Event.to_wire` output, messages and all.

    Raises:
        ValueError: The line is not JSON, or names no known event type.
    """
    data = json.loads(line)
    if not isinstance(data, dict):
        raise ValueError(f"not a run event: {line!r}")
    return event_from_dict(from_wire(data))


EXIT_CODES = {"finished": 0, "failed": 1, "invalid": 2, "stopped": 130}


@dataclass
class RunResult:
    """How a run ended.

    Attributes:
        status: ``finished``, ``stopped``, ``failed`` or ``invalid`` (bad input, nothing started).
        run_dir: The run folder (``None`` when the input was rejected before one was made).
        model_dir: The saved model, when finished.
        metrics: The last eval metrics and the training loss.
        failure: The failure event, when failed or invalid.
        notes: Things the user should know about the data (rows left out, truncation).
    """

    status: str
    run_dir: Path | None = None
    model_dir: Path | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    failure: FailedEvent | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """The CLI's exit code for this outcome."""
        return EXIT_CODES[self.status]
