"""CLI fixtures: a faked GPU machine for the doctor."""

from __future__ import annotations

import pytest


@pytest.fixture
def cpu_torch_beside_rtx_4070(monkeypatch: pytest.MonkeyPatch) -> None:
    """The classic Windows case: an RTX 4070 on driver 581.57 with the CPU-only PyTorch from PyPI."""
    import desktop.core.environment.gpu as gpu
    import desktop.core.environment.torch_probe as torch_probe

    report = gpu.GpuReport(
        [gpu.GpuInfo("NVIDIA GeForce RTX 4070", "nvidia", (8, 9))], "581.57", (13, 0), "nvml"
    )
    monkeypatch.setattr(gpu, "detect_gpus", lambda: report)
    info = torch_probe.TorchInfo(installed=True, version="2.13.0+cpu")
    monkeypatch.setattr(torch_probe, "probe_torch", lambda *a, **k: info)
