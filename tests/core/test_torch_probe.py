"""The torch probe: the real CPU torch here, and interpreters that hang, crash or print garbage."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest

from desktop.core.environment.torch_probe import probe_torch, prove_gpu


@pytest.mark.slow
def test_real_cpu_torch() -> None:
    import importlib.metadata

    info = probe_torch()
    assert info.installed and info.error == ""
    assert info.version == importlib.metadata.version("torch")
    assert info.cuda_available is False and info.torch_devices == []
    assert info.summary().startswith("Training runs on the CPU")


def _fake_python(folder: Path, body: str) -> str:
    path = folder / "python"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


@pytest.mark.skipif(sys.platform == "win32", reason="fake interpreters are shell scripts")
@pytest.mark.parametrize(
    ("body", "timeout", "expected"),
    [
        ("sleep 30", 1.0, "took longer than 1 s"),
        ("echo 'Fatal Python error: init' >&2; exit 3", 10.0, "the probe crashed (Fatal Python error: init)"),
        ("echo 'not json at all'", 10.0, "the probe crashed (exit code 0)"),
        ("echo '[1, 2]'", 10.0, "the probe crashed"),
    ],
    ids=["hangs", "crashes", "garbage", "wrong-json"],
)
def test_broken_interpreters_become_results(tmp_path: Path, body: str, timeout: float, expected: str) -> None:
    info = probe_torch(_fake_python(tmp_path, body), timeout=timeout)
    assert not info.installed and expected in info.error


def test_missing_interpreter(tmp_path: Path) -> None:
    info = probe_torch(str(tmp_path / "nope" / "python"))
    assert "could not be started" in info.error


@pytest.mark.slow
def test_gpu_proof_fails_plainly_without_cuda() -> None:
    proof = prove_gpu()
    assert not proof.ok and proof.error  # this machine has no GPU; the reason is torch's own words
