"""The lock of what we ship (requirements-lock.txt): it fits pyproject.toml, leaves PyTorch to the doctor,
and the environment the tests run in holds exactly its versions (what CI tests is what users get)."""

from __future__ import annotations

import importlib.metadata
import shutil
from pathlib import Path

from packaging.markers import Marker

from tests.scripts import ROOT, script

lock = script("tools/lock.py")


def test_the_lock_fits_pyproject() -> None:
    assert lock.problems() == [], "run `python tools/lock.py` and commit requirements-lock.txt"


def test_a_requirement_changed_without_a_new_lock_is_caught(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    pyproject.write_text(text.replace('"peft>=0.14"', '"peft>=99"'), encoding="utf-8")
    copy = tmp_path / "requirements-lock.txt"
    shutil.copy(lock.LOCK, copy)

    said = lock.problems(copy, pyproject)

    assert any("changed since the lock was made" in line for line in said)
    assert any(line.startswith("the lock pins peft==") and "peft>=99" in line for line in said)


def test_pytorch_and_what_only_it_needs_are_left_to_the_doctor() -> None:
    names = {name for name, _version, _marker in lock.pinned(lock.LOCK.read_text(encoding="utf-8"))}
    assert not {"torch", "triton", "sympy", "networkx"} & names
    assert not [name for name in names if name.startswith(("nvidia-cu", "nvidia-nccl", "cuda-"))]
    # Shared with the app's own libraries: pinned.
    assert {"jinja2", "filelock", "fsspec", "transformers", "nvidia-ml-py"} <= names


def test_what_only_one_package_needs_is_found_from_uvs_annotations() -> None:
    resolved = """\
filelock==4.3.2
    # via
    #   finetune-studio (pyproject.toml)
    #   torch
mpmath==1.3.0
    # via sympy
sympy==1.14.0
    # via torch
torch==2.15.0
    # via finetune-studio (pyproject.toml)
"""
    assert lock.only_through(resolved, "torch") == {"torch", "sympy", "mpmath"}


def test_this_environment_holds_the_locked_versions() -> None:
    """Install set drift: every locked library installed here is at its locked version."""
    drift = []
    for name, version, marker in lock.pinned(lock.LOCK.read_text(encoding="utf-8")):
        if marker and not Marker(marker).evaluate():
            continue
        try:
            installed = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue  # an extra this environment does not install
        if installed != version:
            drift.append(f"{name} {installed} (locked {version})")
    assert drift == [], "install with `-c requirements-lock.txt` (tools/dev.py does)"
