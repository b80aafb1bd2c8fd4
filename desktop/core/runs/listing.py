"""Run folders as listed: what each trains, how it ended, its best score, and its loss curve."""

from __future__ import annotations

import contextlib
import json
import math
from dataclasses import dataclass
from pathlib import Path

from desktop.core.runs.checkpoints import model_problem
from desktop.core.runs.folders import EVENTS_NAME, RunDir, resumable_status, run_dirs


@dataclass(frozen=True)
class RunInfo:
    """A run folder as listed: what it trains and with what, how it ended, its best score.

    Attributes:
        status: ``finished``, ``stopped``, ``failed``, ``running``, ``interrupted`` (crashed) or
            ``damaged`` (its config or event log cannot be read, or its final model is cut short).
        problem: For a damaged run, what is wrong, in a few words (``model.safetensors is cut short``).
        best: The best evaluation score as (metric key, value): highest accuracy for classification,
            else lowest eval loss, else the last training loss; ``None`` before any was logged.
        created: When the run folder was made (seconds since the epoch).
        step: The last step reached; ``total_steps`` the planned number (0 before training began).
        lora: ``LoRA r8``, ``QLoRA r16`` or ``""`` (every weight trained).
        num_train: Training examples (0 before training began).
        tokens_per_second: Real tokens (padding left out) trained on per second, the last figure logged.
        epochs: The epochs the config asked for; ``epochs_trained`` those trained (fewer for a run
            stopped early or cut by ``max_steps``; 0 before the first step).
    """

    path: Path
    status: str
    task: str
    model: str
    resumable: bool
    dataset: str = ""
    best: tuple[str, float] | None = None
    created: float = 0.0
    step: int = 0
    total_steps: int = 0
    learning_rate: float | None = None
    batch_size: int | None = None
    gradient_accumulation: int | None = None
    epochs: float | None = None
    lora: str = ""
    num_train: int = 0
    tokens_per_second: float | None = None
    problem: str = ""
    epochs_trained: float = 0.0

    @property
    def name(self) -> str:
        """The run folder's name."""
        return self.path.name


def describe(run: RunDir) -> RunInfo:
    """One run folder as a :class:`RunInfo`, from its summary (a damaged one gives status ``damaged``)."""
    try:
        return _describe(run)
    except Exception:  # whatever is wrong with one folder, the others are still listed
        return RunInfo(run.path, "damaged", "?", "?", False, problem="its files cannot be read")


def _describe(run: RunDir) -> RunInfo:
    from desktop.core.runs import summaries

    summary, changed = summaries.read(run.path, run.events_path, run.config_path)
    locked = None
    if summary.ended:
        status = summary.ended
    else:
        locked = run.is_locked()
        status = "running" if locked else "interrupted"
    damaged = summary.damaged or (summary.covered > 0 and summary.events == 0)
    problem = ""
    if damaged and status != "running":
        status, problem = "damaged", "its config or event log cannot be read"
    elif status == "finished" and (problem := model_problem(run.model_dir)):
        status = "damaged"  # the final save was cut short, or the model was damaged since
    if changed and not (locked if locked is not None else run.is_locked()):
        # Saved for next time; a running run's own process keeps its summary itself.
        with contextlib.suppress(OSError):
            summaries.write(run.path, summary)
    return RunInfo(
        run.path,
        status,
        summary.task,
        summary.model,
        resumable_status(status, run),
        summary.dataset,
        summary.best(),
        summary.created,
        summary.step,
        summary.total_steps,
        summary.learning_rate,
        summary.batch_size,
        summary.gradient_accumulation,
        summary.epochs,
        summary.lora,
        summary.num_train,
        summary.tokens_per_second,
        problem,
        summary.epoch,
    )


def loss_curve(run: RunDir | Path, max_points: int = 2000) -> list[tuple[int, float]]:
    """The run's training loss as (step, loss), at most ``max_points`` of them: a long curve keeps
    the lowest and the highest loss of each stretch, so its peaks survive the thinning. Where the run
    went back to a checkpoint (resumed, or out of memory), the steps it did again replace the first."""
    path = run.events_path if isinstance(run, RunDir) else Path(run) / EVENTS_NAME
    points: list[tuple[int, float]] = []
    try:
        with open(path, "rb") as fh:
            for line in fh:
                if b'"loss"' not in line and b'"started"' not in line:  # most lines are progress
                    continue
                try:
                    data = json.loads(line)
                    if data.get("event") == "started":  # resumed: the steps after it were done again
                        since = int(data.get("resumed_from_step") or 0)
                        while points and points[-1][0] > since:
                            points.pop()
                        continue
                    loss = data["metrics"]["loss"]
                    if data.get("event") == "log" and isinstance(loss, (int, float)):
                        points.append((int(data["step"]), float(loss)))
                except (ValueError, KeyError, TypeError):
                    continue
    except OSError:
        return []
    return thin(points, max_points)


def thin(points: list[tuple[int, float]], max_points: int) -> list[tuple[int, float]]:
    """At most about ``max_points`` of ``points``: the lowest and highest of each equal stretch."""
    if len(points) <= max_points:
        return points
    stretch = math.ceil(len(points) / (max_points // 2))
    out = []
    for start in range(0, len(points), stretch):
        part = points[start : start + stretch]
        low, high = min(part, key=lambda p: p[1]), max(part, key=lambda p: p[1])
        out += sorted({low, high})
    return out


def list_runs(runs_dir: Path) -> list[RunInfo]:
    """Run folders below ``runs_dir``, newest first, read from disk."""
    return [describe(run) for run in run_dirs(runs_dir)]


SAME_RUN_FIELDS = {"output.name", "output.runs_dir"}
"""Settings that name where a run goes, not how it trains: left out of a comparison."""


def setting_differences(runs: list[RunDir]) -> list[tuple[str, list[str]]]:
    """Every setting (``section.field``) whose value differs between the runs' saved configs, with each
    run's value, in the config's order; a run whose config cannot be read shows ``?``."""
    import dataclasses

    def flat(value: object, prefix: str = "") -> dict[str, str]:
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            out: dict[str, str] = {}
            for f in dataclasses.fields(value):
                out.update(flat(getattr(value, f.name), f"{prefix}{f.name}."))
            return out
        return {prefix.rstrip("."): str(value)}

    settings = []
    for run in runs:
        try:
            settings.append(flat(run.config()))
        except Exception:  # a damaged config: its values are unknown, not equal
            settings.append({})
    keys = list(dict.fromkeys(key for values in settings for key in values))
    return [
        (key, [values.get(key, "?") for values in settings])
        for key in keys
        if key not in SAME_RUN_FIELDS and len({values.get(key, "?") for values in settings}) > 1
    ]
