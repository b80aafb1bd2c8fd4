"""GPU detection: NVML (faked here), the nvidia-smi fallback, and no driver at all."""

from __future__ import annotations

import os
import stat
import sys
import types
from pathlib import Path

import pytest

from desktop.core.environment import gpu


class NVMLError(Exception):
    pass


def _fake_nvml(devices: list[dict], driver: str = "580.95.05", cuda: int = 13000) -> types.SimpleNamespace:
    state = {"init": 0, "shutdown": 0}

    def init() -> None:
        state["init"] += 1

    return types.SimpleNamespace(
        state=state,
        NVMLError=NVMLError,
        nvmlInit=init,
        nvmlShutdown=lambda: state.__setitem__("shutdown", state["shutdown"] + 1),
        nvmlSystemGetDriverVersion=lambda: driver,
        nvmlSystemGetCudaDriverVersion_v2=lambda: cuda,
        nvmlDeviceGetCount=lambda: len(devices),
        nvmlDeviceGetHandleByIndex=lambda i: devices[i],
        nvmlDeviceGetName=lambda h: h["name"],
        nvmlDeviceGetCudaComputeCapability=lambda h: h["cc"],
        nvmlDeviceGetMemoryInfo=lambda h: types.SimpleNamespace(total=h["total"], free=h["free"], used=0),
        nvmlDeviceGetUtilizationRates=lambda h: types.SimpleNamespace(gpu=37, memory=10),
    )


def test_reads_gpus_and_driver_through_nvml(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _fake_nvml(
        [{"name": "NVIDIA GeForce RTX 4070", "cc": (8, 9), "total": 12 * 2**30, "free": 11 * 2**30}],
        cuda=12080,
    )
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    monkeypatch.setattr(gpu, "_other_vendors", lambda: [])
    report = gpu.detect_gpus()
    assert report.source == "nvml" and report.driver_version == "580.95.05" and report.cuda_driver == (12, 8)
    assert report.gpus == [
        gpu.GpuInfo("NVIDIA GeForce RTX 4070", "nvidia", (8, 9), 12 * 2**30, 11 * 2**30, 37)
    ]
    assert fake.state == {"init": 1, "shutdown": 1}
    assert report.summary() == "Found NVIDIA GeForce RTX 4070 (NVIDIA driver 580.95.05)."


def test_falls_back_to_nvidia_smi(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def broken() -> None:
        raise NVMLError("NVML Shared Library Not Found")

    monkeypatch.setitem(sys.modules, "pynvml", types.SimpleNamespace(nvmlInit=broken))
    monkeypatch.setattr(gpu, "_other_vendors", lambda: [])
    smi = tmp_path / "nvidia-smi"
    smi.write_text(
        "#!/bin/sh\n"
        'if [ -n "$1" ]; then echo "NVIDIA GeForce GTX 1080, 560.94, 8192, 8000, 6.1"; '
        'else echo "| NVIDIA-SMI 560.94   Driver Version: 560.94   CUDA Version: 12.6 |"; fi\n'
    )
    smi.chmod(smi.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    report = gpu.detect_gpus()
    assert (
        report.source == "nvidia-smi" and report.cuda_driver == (12, 6) and report.driver_version == "560.94"
    )
    assert report.gpus[0].capability == (6, 1) and report.gpus[0].memory_total == 8192 * 2**20
    assert "NVML Shared Library Not Found" in report.problems[0]


def test_no_driver_is_a_plain_cpu_result(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def missing() -> None:
        raise NVMLError("NVML Shared Library Not Found")

    monkeypatch.setitem(sys.modules, "pynvml", types.SimpleNamespace(nvmlInit=missing))
    monkeypatch.setattr(gpu, "_other_vendors", lambda: [])
    monkeypatch.setenv("PATH", str(tmp_path))
    report = gpu.detect_gpus()
    assert report.gpus == [] and report.source == "none" and report.problems
    assert report.summary() == "No GPU found: training runs on the CPU."


def test_real_machine_never_raises() -> None:
    report = gpu.detect_gpus()
    summary = report.summary()
    assert summary.endswith(".") and (report.gpus or "training runs on the CPU" in summary)
    assert all(gpu.name in summary for gpu in report.gpus)
