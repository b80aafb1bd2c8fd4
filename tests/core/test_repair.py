"""Repairing torch: the command built, progress, and a real repair against a local fake index."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest

from desktop.core.environment.repair import plan_repair, progress_of, run_repair
from desktop.core.environment.torch_probe import probe_torch
from desktop.core.environment.wheels import WheelTarget

TARGET = WheelTarget(
    "2.13.0", "cu126", "https://download.pytorch.org/whl/cu126", "the newest build for the GPU"
)


def fake_torch_wheel(folder: Path, version: str, cuda: str | None) -> Path:
    """A tiny wheel named torch that answers the probe like a CPU or CUDA build would."""
    code = (
        f'__version__ = "{version}"\n'
        f"class version:\n    cuda = {cuda!r}\n    hip = None\n"
        "class cuda:\n    @staticmethod\n    def is_available():\n        return False\n"
    )
    info = f"torch-{version}.dist-info"
    files = {
        "torch/__init__.py": code,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(text.encode())}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = "\n".join(record) + "\n"
    path = folder / f"torch-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as whl:
        for name, text in files.items():
            whl.writestr(name, text)
    return path


def test_uv_command_pins_the_build_and_forces_the_reinstall() -> None:
    plan = plan_repair(TARGET, python="/env/bin/python", previous="2.13.0+cpu")
    assert plan.tool == "uv"
    assert plan.command[1:5] == ["pip", "install", "--python", "/env/bin/python"]
    assert plan.command[plan.command.index("--index-url") + 1] == "https://download.pytorch.org/whl/cu126"
    assert plan.command[7:9] == ["--reinstall-package", "torch"]
    assert plan.command[-1] == "torch==2.13.0+cu126"


def test_pip_command_and_a_mirror() -> None:
    plan = plan_repair(
        TARGET, python=sys.executable, index_url="https://mirror.example/whl/cu126", use_uv=False
    )
    assert plan.tool == "pip" and plan.command[:4] == [sys.executable, "-m", "pip", "install"]
    assert "--force-reinstall" in plan.command and "https://mirror.example/whl/cu126" in plan.command
    assert plan.requirements[0] == "torch==2.13.0+cu126"


def test_progress_estimate_only_moves_forward() -> None:
    done = 0.0
    for line in [
        "Resolved 3 packages in 10ms",
        "Downloading torch (900MiB)",
        "Prepared 1 package",
        "noise",
        "Installed 1 package in 2s",
    ]:
        new = progress_of(line, done)
        assert new >= done
        done = new
    assert done == 1.0 and progress_of("Resolved 1 package", 0.7) == 0.7


@pytest.fixture
def cpu_env(tmp_path: Path) -> tuple[str, Path]:
    """A throwaway venv holding a fake torch 2.13.0+cpu, and a local index with 2.13.0+cu126."""
    from uv import find_uv_bin

    uv = find_uv_bin()
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    cpu = fake_torch_wheel(wheels, "2.13.0+cpu", None)
    cuda = fake_torch_wheel(wheels, "2.13.0+cu126", "12.6")
    index = tmp_path / "simple" / "torch"
    index.mkdir(parents=True)
    href = "../../wheels/" + cuda.name.replace("+", "%2B")
    (index / "index.html").write_text(f'<html><body><a href="{href}">{cuda.name}</a></body></html>', "utf-8")
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
    python = str(venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python"))
    subprocess.run([uv, "pip", "install", "--quiet", "--python", python, "--offline", str(cpu)], check=True)
    return python, tmp_path / "simple"


def test_repair_swaps_a_cpu_build_for_the_cuda_build(cpu_env: tuple[str, Path]) -> None:
    python, simple = cpu_env
    assert probe_torch(python).version == "2.13.0+cpu"
    plan = plan_repair(TARGET, python=python, index_url=simple.as_uri(), previous="2.13.0+cpu")
    lines, progress = [], []
    result = run_repair(plan, lines.append, progress.append)

    assert result.ok, "\n".join(lines)
    assert result.probe.version == "2.13.0+cu126" and result.probe.cuda_build == "12.6"
    assert progress[0] == 0.0 and progress[-1] == 1.0 and progress == sorted(progress)
    assert lines and "Installed torch==2.13.0+cu126" in result.message


def test_a_failed_install_keeps_the_previous_torch(cpu_env: tuple[str, Path], tmp_path: Path) -> None:
    python, _ = cpu_env
    empty = tmp_path / "empty-index"
    empty.mkdir()
    plan = plan_repair(TARGET, python=python, index_url=empty.as_uri(), previous="2.13.0+cpu")
    result = run_repair(plan, lambda line: None, lambda share: None)

    assert not result.ok and result.exit_code != 0
    assert result.probe.version == "2.13.0+cpu"
    assert "still installed and works as before" in result.message


@pytest.mark.slow
def test_cancel_stops_the_installer(tmp_path: Path) -> None:
    plan = plan_repair(TARGET, python=sys.executable)
    sleeper = [sys.executable, "-c", "import time; print('Resolved 1 package', flush=True); time.sleep(60)"]
    plan = type(plan)(plan.python, plan.requirements, plan.index_url, plan.tool, sleeper, "2.13.0+cpu")
    cancel = threading.Event()

    def on_line(line: str) -> None:
        cancel.set()  # cancel as soon as the installer has said something

    result = run_repair(plan, on_line, lambda share: None, cancel)
    assert result.cancelled and not result.ok
    assert result.message.startswith("The installation was cancelled.")
