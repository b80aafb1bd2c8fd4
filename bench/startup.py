"""Start-up time: process start to main window shown, median of 5 (target < 1.0 s).

    python bench/startup.py [--repeats 5]

Runs ``python -m desktop --quit-when-shown`` offscreen with a fresh settings file and measures
from spawning the process to its "shown" line (printed from the first event-loop turn after show).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def once(settings: Path) -> float:
    env = {**os.environ, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")}
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "desktop", "--quit-when-shown", "--settings", str(settings)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    for line in proc.stdout:
        if line.strip() == "shown":
            elapsed = time.perf_counter() - start
            break
    else:
        raise RuntimeError("the app never reported its window as shown")
    proc.wait(timeout=30)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        once(Path(tmp) / "warm.ini")  # file-system caches
        times = [once(Path(tmp) / f"s{i}.ini") for i in range(args.repeats)]
    print("runs: " + ", ".join(f"{t:.3f} s" for t in times))
    print(f"median start-up to window shown: {statistics.median(times):.3f} s (target < 1.0 s)")


if __name__ == "__main__":
    main()
