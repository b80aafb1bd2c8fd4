"""A thousand runs: how long ``runs`` and Run history take to list them (target: under 1 s).

    QT_QPA_PLATFORM=offscreen python bench/many_runs.py [--runs 1000] [--steps 300] [--folder DIR]

Writes ``--runs`` synthetic run folders (config, an event log of ``--steps`` steps with a loss every 10
and evaluations, a finished, stopped or crashed end) outside the repository, then measures:

- listing them the way an older version did, parsing every event log (the baseline),
- the first listing of runs that have no summary yet (older runs: each log is folded once),
- listing with summaries (every later listing; what runs written by this version always have),
- ``finetune-studio-cli runs`` as a whole process,
- Run history: from opening the dialog to its rows shown, and the longest the GUI thread was
  blocked meanwhile (a 5 ms timer measures its own lateness).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def make_runs(folder: Path, count: int, steps: int) -> None:
    from desktop.core.runs import summaries
    from desktop.core.settings.config import RunConfig
    from desktop.core.system.events import FinishedEvent, LogEvent, ProgressEvent, StartedEvent, StoppedEvent

    rng = random.Random(1)
    folder.mkdir(parents=True, exist_ok=True)
    template = RunConfig(task="classification")
    template.model.name = "bert-base-chinese"
    template.data.files = ["reviews.csv"]
    config_text = template.to_toml()
    for i in range(count):
        run = folder / f"2026{i // 1000 + 1:02d}{i % 28 + 1:02d}-{i:06d}-classification-bert"
        run.mkdir()
        (run / "config.toml").write_text(
            config_text.replace("learning_rate = 5e-05", f"learning_rate = {rng.choice([2e-5, 5e-5, 1e-4])}"),
            encoding="utf-8",
        )
        end = rng.choice(("finished", "stopped", "crashed"))
        last = steps if end == "finished" else rng.randrange(steps // 3, steps)
        lines = [StartedEvent(str(run), steps, 9000, 1000, "cuda:0").to_json()]
        for step in range(1, last + 1):
            lines.append(ProgressEvent(step, steps, step / 100, step * 0.2, 1.0, 45.0, 1100.0).to_json())
            if step % 10 == 0:
                loss = 0.1 + math.exp(-step / 80) + rng.gauss(0, 0.02)
                lines.append(LogEvent(step, step / 100, {"loss": loss, "learning_rate": 5e-5}).to_json())
            if step % 100 == 0:
                lines.append(LogEvent(step, step / 100, {"eval_loss": 0.3, "eval_accuracy": 0.9}).to_json())
        if end == "finished":
            lines.append(FinishedEvent(last, "model", {"eval_accuracy": 0.9}).to_json())
        elif end == "stopped":
            lines.append(StoppedEvent(last, "").to_json())
        (run / "events.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    del summaries


def drop_summaries(folder: Path) -> None:
    from desktop.core.runs.summaries import SUMMARY_NAME

    for run in folder.iterdir():
        (run / SUMMARY_NAME).unlink(missing_ok=True)


def timed(function: object) -> tuple[float, object]:
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def baseline(folder: Path) -> int:
    """What listing cost before summaries: every config read and every event log parsed."""
    from desktop.core.runs.folders import run_dirs

    count = 0
    for run in run_dirs(folder):
        run.config()
        run.events()
        count += 1
    return count


def dialog_open(folder: Path) -> tuple[float, float]:
    """Seconds from opening Run history to its rows, and the GUI thread's longest stall meanwhile."""
    from PySide6.QtCore import QElapsedTimer, QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from desktop.gui.dialogs.runs_dialog import RunsDialog

    app = QApplication.instance() or QApplication(sys.argv[:1])
    worst = [0.0]
    clock = QElapsedTimer()
    clock.start()
    last = [clock.elapsed()]

    def tick() -> None:
        now = clock.elapsed()
        worst[0] = max(worst[0], now - last[0] - 5)
        last[0] = now

    timer = QTimer(interval=5)
    timer.timeout.connect(tick)
    timer.start()
    start = time.perf_counter()
    dialog = RunsDialog(folder)
    dialog.show()
    loop = QEventLoop()
    dialog.listed.connect(loop.quit)
    QTimer.singleShot(60_000, loop.quit)
    loop.exec()
    app.processEvents()
    elapsed = time.perf_counter() - start
    timer.stop()
    rows = dialog.model.rowCount()
    dialog.close()
    assert rows == len(list(folder.iterdir())), rows
    return elapsed, worst[0] / 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--folder", type=Path, help="where to write the runs (default: a temp folder)")
    args = parser.parse_args()
    folder = (args.folder or Path(tempfile.mkdtemp(prefix="fs-many-runs-"))) / "runs"
    os.environ.setdefault("FINETUNE_STUDIO_HOME", str(folder.parent / "home"))
    from desktop.core.runs.listing import list_runs

    t, _ = timed(lambda: make_runs(folder, args.runs, args.steps))
    size = sum(p.stat().st_size for p in folder.rglob("events.jsonl"))
    print(
        f"{args.runs} runs of {args.steps} steps written in {t:.1f} s ({size / 2**20:.0f} MB of event logs)"
    )
    base, _ = timed(lambda: baseline(folder))
    print(f"baseline (parse every config and log):  {base:.2f} s")
    first, _ = timed(lambda: list_runs(folder))
    print(f"first listing, no summaries yet:         {first:.2f} s  (each log folded once)")
    summed, _ = timed(lambda: list_runs(folder))
    print(f"listing with summaries:                  {summed:.3f} s  ratio to baseline {summed / base:.3f}")
    done = subprocess.run(
        [sys.executable, "-m", "desktop.cli", "runs", "--runs-dir", str(folder)],
        capture_output=True,
        text=True,
        env={**os.environ},
    )
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "desktop.cli", "runs", "--runs-dir", str(folder)],
        capture_output=True,
        text=True,
    )
    cli = time.perf_counter() - start
    assert done.returncode == 0 and len(done.stdout.splitlines()) == args.runs, done.stderr[-500:]
    print(f"finetune-studio-cli runs (whole process): {cli:.2f} s")
    opened, stall = dialog_open(folder)
    print(f"Run history: rows shown after {opened:.2f} s; GUI thread blocked at most {stall * 1000:.0f} ms")
    ok = summed < 1.0 and opened < 1.0
    print("PASS" if ok else "FAIL", f"(target: listing and Run history under 1 s for {args.runs} runs)")
    if args.folder is None:
        shutil.rmtree(folder.parent, ignore_errors=True)
    print(
        json.dumps(
            {
                "baseline_s": base,
                "first_s": first,
                "summaries_s": summed,
                "cli_s": cli,
                "dialog_s": opened,
                "stall_s": stall,
            }
        )
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
