"""Check that every PyTorch build the launcher may pin exists for the runtime's Python on a platform.

    python tools/check_torch_table.py [--system windows|linux] [--python 3.12]

The launcher installs ``torch==VERSION+TAG`` from ``resources/torch_wheels.json`` (each release's
latest version with each of its CUDA tags, and the newest release's CPU build). A row whose wheel
does not exist for the runtime's Python on that platform fails the user's first start. This resolves
each row with ``uv pip compile --no-deps`` for the platform, without installing anything (it needs
the network; the release workflow runs it on its Windows runner). Exit 1 names the rows that failed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from desktop.core.environment.wheels import WheelTable  # noqa: E402
from desktop.launcher.runtime import PYTHON  # noqa: E402

PLATFORMS = {"windows": "x86_64-pc-windows-msvc", "linux": "x86_64-manylinux_2_28"}


def rows(table: WheelTable) -> list[tuple[str, str]]:
    """Each pin the launcher may install, with its index: ``("torch==2.13.0+cu130", URL)``."""
    found = []
    for release in table.releases():
        row = table.release(release)
        found += [(f"torch=={row['latest']}+{tag}", table.index_url(tag)) for tag in row["cuda"]]
    newest = table.release(table.newest())["latest"]
    found.append((f"torch=={newest}+cpu", table.index_url("cpu")))
    return found


def command(uv: list[str], requirement: str, index: str, system: str, python: str) -> list[str]:
    """Resolve ``requirement`` alone for ``system`` and ``python``; the lock goes to stdout."""
    return [
        *uv, "pip", "compile", "-", "--no-deps", "--quiet", "--no-header",
        "--index-url", index, "--python-platform", PLATFORMS[system], "--python-version", python,
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--system", choices=sorted(PLATFORMS), default="windows")
    parser.add_argument("--python", default=PYTHON, help=f"the runtime's Python (default {PYTHON})")
    args = parser.parse_args(argv)
    uv = [sys.executable, "-m", "uv"]
    failed = []
    for requirement, index in rows(WheelTable.load()):
        done = subprocess.run(
            command(uv, requirement, index, args.system, args.python),
            input=requirement + "\n",
            capture_output=True,
            text=True,
            check=False,
        )
        ok = done.returncode == 0 and requirement.split("==")[1] in done.stdout
        print(f"{'ok  ' if ok else 'FAIL'} {requirement} ({index})", flush=True)
        if not ok:
            failed.append(f"{requirement}: {(done.stderr or done.stdout).strip().splitlines()[-1:]}")
    if failed:
        print(f"\n{len(failed)} pinned build(s) do not exist for Python {args.python} on {args.system}:")
        print("\n".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
