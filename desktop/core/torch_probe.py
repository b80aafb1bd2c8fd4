"""What the installed PyTorch can do, probed in a child process so this process never imports it."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field

_PROBE = r"""
import importlib.metadata, importlib.util, json
info = {"installed": importlib.util.find_spec("torch") is not None}
if info["installed"]:
    try:
        info["version"] = importlib.metadata.version("torch")
        import torch
        info["cuda_build"] = torch.version.cuda
        info["cuda_available"] = torch.cuda.is_available()
        info["devices"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] \
            if info["cuda_available"] else []
    except Exception as exc:
        info["import_error"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(info))
"""


@dataclass(frozen=True)
class TorchInfo:
    """The result of a probe.

    Attributes:
        installed: Whether torch is installed at all.
        version: Its distribution version with the local tag, e.g. ``2.14.1+cu130``.
        cuda_build: The CUDA version it was built for, or ``None`` for a CPU build.
        cuda_available: Whether it sees a usable CUDA GPU.
        devices: The CUDA devices' names.
        error: Why the probe or the import failed, if it did.
    """

    installed: bool = False
    version: str = ""
    cuda_build: str | None = None
    cuda_available: bool = False
    devices: list[str] = field(default_factory=list)
    error: str = ""

    def summary(self) -> str:
        """One plain sentence: where training will run."""
        if self.error:
            return f"PyTorch could not be checked: {self.error}"
        if not self.installed:
            return "PyTorch is not installed."
        if self.cuda_available:
            return f"Training runs on the GPU: {', '.join(self.devices)} (PyTorch {self.version})."
        if self.cuda_build is None:
            return f"Training runs on the CPU: PyTorch {self.version} is a CPU-only build."
        return (
            f"Training runs on the CPU: PyTorch {self.version} (CUDA {self.cuda_build}) finds no usable GPU."
        )


def probe_torch(python: str = sys.executable, timeout: float = 120.0) -> TorchInfo:
    """Probe torch in a child process of ``python``; a hang or crash becomes an ``error``."""
    try:
        done = subprocess.run(
            [python, "-c", _PROBE], capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return TorchInfo(error=f"importing PyTorch took longer than {timeout:.0f} s")
    except OSError as exc:
        return TorchInfo(error=str(exc))
    try:
        data = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        tail = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        return TorchInfo(error=f"the probe crashed ({tail})")
    return TorchInfo(
        installed=data["installed"],
        version=data.get("version", ""),
        cuda_build=data.get("cuda_build"),
        cuda_available=bool(data.get("cuda_available")),
        devices=list(data.get("devices", [])),
        error=data.get("import_error", ""),
    )
