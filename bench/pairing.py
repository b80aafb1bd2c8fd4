"""What the paired benches share (``preference.py``, ``grpo.py``, ``images.py --training``): the clock
each side's run records, the figures a child process prints, and the pairing of fresh processes into
ratios ours / plain.

Clocks: "wall" from process start to the model saved; "before" until the trainer's train begins
(imports, data, models, trainer); "loop" from train begin to the last step's end; "steps" from the first
step's end to the last's (the first step's warm-up left out), "cpu" the process's CPU time over the same
steps; "step" the median time of one step and "p10" its 10th percentile (on a machine others share, the
least disturbed steps); "after" from the last step to the end (the checkpoint, the model saved). Our side
records them from its events, the plain side from a ``TrainerCallback``, at the same instants: our
events are sent from the Trainer's ``on_train_begin`` and ``on_step_end``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

MARK = "RESULT "
COLUMNS = ("wall", "before", "loop", "steps", "after", "cpu", "step_ms", "fast_ms")
NAMES = ("wall s", "before s", "loop s", "steps s", "after s", "cpu s", "step ms", "p10 ms")


class Clock:
    """The instants of one run: train begin, each step's end (wall and CPU time), and every log."""

    def __init__(self) -> None:
        self.begin = 0.0
        self.steps: list[tuple[float, float]] = []
        self.logs: list[dict] = []

    def seen(self, event: object) -> None:
        """Our run's ``on_event``."""
        from desktop.core.system.events import LogEvent, ProgressEvent, StartedEvent

        if isinstance(event, StartedEvent):
            self.begin = time.time()
        elif isinstance(event, ProgressEvent):
            self.steps.append((time.time(), time.process_time()))
        elif isinstance(event, LogEvent):
            self.logs.append(event.metrics)

    def callback(self) -> Any:
        """A ``TrainerCallback`` for the plain side's trainer that records the same instants."""
        from transformers import TrainerCallback

        clock = self

        class Recorder(TrainerCallback):
            def on_train_begin(self, args, state, control, **kwargs):
                clock.begin = time.time()

            def on_step_end(self, args, state, control, **kwargs):
                clock.steps.append((time.time(), time.process_time()))

            def on_log(self, args, state, control, logs=None, **kwargs):
                clock.logs.append(dict(logs or {}))

        return Recorder()

    def mean(self, key: str) -> float:
        """The mean of a logged figure over the run (NaN if never logged)."""
        values = [m[key] for m in self.logs if key in m]
        return statistics.mean(values) if values else float("nan")

    def last(self, key: str) -> float:
        """A logged figure's last value (NaN if never logged)."""
        values = [m[key] for m in self.logs if key in m]
        return values[-1] if values else float("nan")


def figures(clock: Clock, loss: float, checkpoints: int, extra: float = float("nan")) -> dict:
    """What a child prints: the clock's instants, peak RSS, the final loss, the checkpoints kept and a
    bench's own figure (``extra``: the reward accuracy, the mean answer length)."""
    return {
        "begin": clock.begin,
        "first_step": clock.steps[0][0],
        "last_step": clock.steps[-1][0],
        "step_s": sorted(b[0] - a[0] for a, b in itertools.pairwise(clock.steps)),
        "steps_cpu": clock.steps[-1][1] - clock.steps[0][1],
        "end": time.time(),
        "steps": len(clock.steps),
        "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "loss": loss,
        "extra": extra,
        "checkpoints": checkpoints,
    }


def child(args: argparse.Namespace, ours: Callable[..., dict], plain: Callable[..., dict]) -> None:
    """A child process's run of one side, its figures printed after :data:`MARK`."""
    import transformers

    transformers.logging.set_verbosity_error()
    run = ours if args.side == "ours" else plain
    found = run(Path(args.model), Path(args.data), Path(args.out), args.steps)
    print(MARK + json.dumps(found), flush=True)


def run_side(side: str, model: Path, data: Path, out: Path, steps: int, threads: int, script: str) -> dict:
    """One run in a fresh process of ``script`` (``threads``: PyTorch's, 0 for its default); the clocks
    as seconds from the process's start."""
    command = [sys.executable, script, "--side", side, "--model", str(model), "--data", str(data)]
    command += ["--out", str(out), "--steps", str(steps)]
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)} if threads else None
    start = time.time()
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    lines = [line for line in done.stdout.splitlines() if line.startswith(MARK)]
    if done.returncode or not lines:
        sys.exit(f"{side} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    r = json.loads(lines[-1][len(MARK) :])
    return {
        "wall": r["end"] - start,
        "before": r["begin"] - start,
        "loop": r["last_step"] - r["begin"],
        "steps": r["last_step"] - r["first_step"],
        "after": r["end"] - r["last_step"],
        "step_ms": statistics.median(r["step_s"]) * 1000,
        "fast_ms": r["step_s"][len(r["step_s"]) // 10] * 1000,  # the 10th percentile: the least disturbed
        "cpu": r["steps_cpu"],
        **{k: r[k] for k in ("rss_mib", "loss", "extra", "checkpoints")},
    }


def arguments(doc: str, steps: int) -> argparse.ArgumentParser:
    """The options of a paired bench, the children's hidden ones."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=steps)
    parser.add_argument(
        "--threads", type=int, default=0, help="PyTorch's threads on both sides (0: its default)"
    )
    parser.add_argument("--side", choices=("ours", "plain"), help=argparse.SUPPRESS)
    for name in ("--model", "--data", "--out"):
        parser.add_argument(name, help=argparse.SUPPRESS)
    return parser


def paired(
    model: Path, data: Path, root: Path, args: argparse.Namespace, header: str, script: str
) -> tuple[dict[str, list[dict]], dict[str, float]]:
    """One short warm-up of each side, then ``args.repeats`` runs of each, alternating which goes first
    (drift hits both alike); a line per run (``header``: that of the last three columns), and the
    medians of the paired ratios ours / plain per column."""
    runs: dict[str, list[dict]] = {"ours": [], "plain": []}
    for side in runs:
        run_side(side, model, data, root / f"warm-{side}", 2, args.threads, script)
    print(f"{'run':10}{''.join(f'{name:>9}' for name in NAMES)}  {header}")
    for i in range(args.repeats):
        for side in ("ours", "plain") if i % 2 == 0 else ("plain", "ours"):
            r = run_side(side, model, data, root / f"{side}{i}", args.steps, args.threads, script)
            runs[side].append(r)
            print(f"{side} {i + 1:<5}{row(r)}  {r['checkpoints']:5}", flush=True)
    ratio = {
        c: statistics.median(o[c] / p[c] for o, p in zip(runs["ours"], runs["plain"], strict=True))
        for c in COLUMNS
    }
    return runs, ratio


def medians(runs: dict[str, list[dict]]) -> dict[str, dict[str, float]]:
    """Each side's median of every figure, a line printed for each."""
    median = {side: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for side, rs in runs.items()}
    for side, m in median.items():
        print(f"{side + ' med':10}{row(m)}")
    return median


def summary(ratio: dict[str, float], median: dict[str, dict[str, float]], args: argparse.Namespace) -> str:
    """The ratios' line: steps, loop and whole run, and the seconds ours adds before and after training."""
    return (
        f"ours / plain, median of the {args.repeats} paired ratios, {args.steps} steps: "
        f"median step {ratio['step_ms']:.3f}, fast step (p10) {ratio['fast_ms']:.3f}, "
        f"steps {ratio['steps']:.3f} (CPU time {ratio['cpu']:.3f}), "
        f"loop {ratio['loop']:.3f}, whole run {ratio['wall']:.3f}; before training "
        f"{median['ours']['before'] - median['plain']['before']:+.2f} s, "
        f"after {median['ours']['after'] - median['plain']['after']:+.2f} s"
    )


def row(found: dict) -> str:
    cells = "".join(f"{found[c]:9.0f}" if c.endswith("_ms") else f"{found[c]:9.2f}" for c in COLUMNS)
    return f"{cells}  {found['rss_mib']:7.0f}  {found['loss']:.4f}  {found['extra']:10.3f}"
