"""A plain-text report of the machine for bug reports: OS, Python, packages, GPUs, driver, torch."""

from __future__ import annotations

import dataclasses
import platform
import sys

from desktop.core.environment.gpu import GpuReport
from desktop.core.environment.torch_probe import TorchInfo
from desktop.core.environment.wheels import Verdict
from desktop.core.system.secrets import redact

PACKAGES = (
    "finetune-studio",
    "torch",
    "torchvision",
    "torchaudio",
    "transformers",
    "datasets",
    "accelerate",
    "peft",
    "tokenizers",
    "safetensors",
    "bitsandbytes",
    "PySide6-Essentials",
    "pyqtgraph",
    "nvidia-ml-py",
    "uv",
)


def diagnostics(report: GpuReport, probe: TorchInfo, verdict: Verdict | None = None) -> str:
    """The text a user pastes into a bug report (no paths to personal files, no tokens)."""
    lines = [
        "Finetune Studio diagnostics",
        f"OS: {platform.platform()} ({platform.machine()})",
        f"Python: {sys.version.split()[0]} ({sys.executable})",
        "Packages:",
    ]
    import importlib.metadata  # 30-60 ms: only when a report is asked for, not at start-up

    for name in PACKAGES:
        try:
            lines.append(f"  {name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            lines.append(f"  {name} (not installed)")
    lines.append(
        f"GPU source: {report.source}; driver: {report.driver_version or '-'}; "
        f"driver CUDA: {'.'.join(map(str, report.cuda_driver)) if report.cuda_driver else '-'}"
    )
    for gpu in report.gpus:
        lines.append(f"  GPU: {dataclasses.asdict(gpu)}")
    lines += [f"  problem: {p}" for p in report.problems]
    lines.append(f"Torch probe: {dataclasses.asdict(probe)}")
    if verdict is not None:
        lines.append(f"Verdict: {verdict.kind}: {verdict.headline}")
        if verdict.target:
            target = verdict.target
            lines.append(f"  target: {target.requirement} from {target.index_url} ({target.reason})")
    return redact("\n".join(lines))
