"""The installed program's start: first-run setup from a local wheelhouse, then later starts.

    python bench/launcher.py --wheelhouse DIR [--python PATH] [--repeats 5]

Needs the bundle from ``python installer/build.py`` and a wheelhouse (``installer/build.py
--wheelhouse`` makes one in build/wheelhouse). In a temporary data folder it times (offscreen):

1. the first start: the frozen launcher sets up the runtime offline, then the app shows its window;
2. later starts: launcher double-click to the app's window shown (target < 2 s), against the app
   started directly from the runtime's Python (the launcher's own cost is the difference).
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

ROOT = Path(__file__).resolve().parents[1]
LAUNCHER = ROOT / "build" / "bundle" / "FinetuneStudio" / "FinetuneStudio"


def time_to_shown(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    for line in proc.stdout:
        if line.strip() == "shown":
            elapsed = time.perf_counter() - start
            break
    else:
        raise RuntimeError(f"no window was shown by {command[0]} (exit code {proc.wait()})")
    proc.wait(timeout=60)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheelhouse", type=Path, required=True)
    parser.add_argument("--python", default=getattr(sys, "_base_executable", sys.executable))
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "FINETUNE_STUDIO_HOME": tmp, "QT_QPA_PLATFORM": "offscreen", "HOME": tmp}
        launcher = [str(LAUNCHER), "--offline", "--wheelhouse", str(args.wheelhouse), "--smoke"]
        first = time_to_shown([*launcher, "--python", args.python], env)
        print(f"first start (setup from the wheelhouse, then the window): {first:.1f} s")
        runtime_python = str(Path(tmp) / "runtime" / "bin" / "python")
        direct = [runtime_python, "-m", "desktop", "--quit-when-shown"]
        later, plain = [], []
        for _ in range(args.repeats):
            later.append(time_to_shown(launcher, env))
            plain.append(time_to_shown(direct, env))
        print("launcher: " + ", ".join(f"{t:.2f}" for t in later) + " s")
        print("app alone: " + ", ".join(f"{t:.2f}" for t in plain) + " s")
        print(
            f"later starts, launcher to window: median {statistics.median(later):.2f} s (target < 2 s); "
            f"the app started directly: {statistics.median(plain):.2f} s; "
            f"ratio {statistics.median(later) / statistics.median(plain):.2f}"
        )


if __name__ == "__main__":
    main()
