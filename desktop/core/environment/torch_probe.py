"""What the installed PyTorch can do, probed in a child process so this process never imports it."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field

from desktop.core.system import processes
from desktop.core.system.messages import msg

_PROBE = r"""
import importlib.metadata, importlib.util, json, os
if hasattr(os, "nice"):
    os.nice(10)  # below the window: the probe shares the cores with it
info = {"installed": importlib.util.find_spec("torch") is not None}
if info["installed"]:
    try:
        info["version"] = importlib.metadata.version("torch")
        import torch
        info["cuda_build"] = torch.version.cuda
        info["hip_build"] = getattr(torch.version, "hip", None)
        info["cuda_available"] = bool(torch.cuda.is_available())
        if info["cuda_available"]:
            info["arch_list"] = list(torch.cuda.get_arch_list())
            info["devices"] = [
                {"name": torch.cuda.get_device_name(i),
                 "capability": list(torch.cuda.get_device_capability(i))}
                for i in range(torch.cuda.device_count())
            ]
            info["bf16"] = bool(torch.cuda.is_bf16_supported())
            info["cudnn"] = torch.backends.cudnn.version()
    except Exception as exc:
        info["import_error"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(info))
"""


@dataclass(frozen=True)
class TorchDevice:
    """A CUDA device as torch sees it."""

    name: str
    capability: tuple[int, int]


@dataclass(frozen=True)
class TorchInfo:
    """The result of a probe.

    Attributes:
        installed: Whether torch is installed at all.
        version: Its distribution version with the local tag, e.g. ``2.14.1+cu130``.
        cuda_build: The CUDA version it was built for, or ``None`` (CPU or ROCm build).
        hip_build: The ROCm (HIP) version of a ROCm build, else ``None``.
        cuda_available: Whether it sees a usable GPU.
        arch_list: The GPU architectures the build carries code for (``sm_86``, ...).
        torch_devices: The devices torch sees, with their compute capability (``devices``: names).
        bf16: Whether the GPU supports bfloat16.
        cudnn: The cuDNN version, e.g. ``91002``.
        error: Why the probe or the import failed, if it did.
    """

    installed: bool = False
    version: str = ""
    cuda_build: str | None = None
    cuda_available: bool = False
    error: str = ""
    hip_build: str | None = None
    arch_list: list[str] = field(default_factory=list)
    torch_devices: list[TorchDevice] = field(default_factory=list)
    bf16: bool = False
    cudnn: int | None = None

    @property
    def devices(self) -> list[str]:
        """The names of the devices torch sees."""
        return [d.name for d in self.torch_devices]

    def summary(self) -> str:
        """One plain sentence: where training will run."""
        if self.error:
            return msg("PyTorch could not be checked: {error}", error=self.error)
        if not self.installed:
            return msg("PyTorch is not installed.")
        if self.cuda_available:
            return msg(
                "Training runs on the GPU: {gpus} (PyTorch {version}).",
                gpus=", ".join(self.devices),
                version=self.version,
            )
        if self.cuda_build is None and self.hip_build is None:
            return msg(
                "Training runs on the CPU: PyTorch {version} is a CPU-only build.", version=self.version
            )
        build = f"CUDA {self.cuda_build}" if self.cuda_build else f"ROCm {self.hip_build}"
        return msg(
            "Training runs on the CPU: PyTorch {version} ({build}) finds no usable GPU.",
            version=self.version,
            build=build,
        )


def probe_torch(python: str = sys.executable, timeout: float = 120.0) -> TorchInfo:
    """Probe torch in a child process of ``python``; a hang, crash or garbage becomes an ``error``.

    Args:
        python: The interpreter whose torch is probed (the app's own by default).
        timeout: Seconds before a hanging import is given up.
    """
    try:
        done = processes.run(
            [python, "-c", _PROBE],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            creationflags=processes.creation_flags() | processes.BELOW_NORMAL,
        )
    except subprocess.TimeoutExpired:
        return TorchInfo(error=f"importing PyTorch took longer than {timeout:.0f} s")
    except OSError as exc:
        return TorchInfo(error=f"the interpreter {python} could not be started ({exc})")
    try:
        data = json.loads(done.stdout.strip().splitlines()[-1])
        installed = bool(data["installed"])
    except (ValueError, IndexError, KeyError, TypeError):
        tail = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        return TorchInfo(error=f"the probe crashed ({tail})")
    devices = [TorchDevice(d["name"], tuple(d["capability"])) for d in data.get("devices", [])]
    return TorchInfo(
        installed=installed,
        version=data.get("version", ""),
        cuda_build=data.get("cuda_build"),
        cuda_available=bool(data.get("cuda_available")),
        error=data.get("import_error", ""),
        hip_build=data.get("hip_build"),
        arch_list=list(data.get("arch_list", [])),
        torch_devices=devices,
        bf16=bool(data.get("bf16")),
        cudnn=data.get("cudnn"),
    )


_PROOF = r"""
import json, time, torch
start = time.perf_counter()
a = torch.randn(1024, 1024, device="cuda")
value = (a @ a).sum().item()
torch.cuda.synchronize()
print(json.dumps({"device": torch.cuda.get_device_name(0), "seconds": time.perf_counter() - start,
                  "finite": value == value}))
"""


@dataclass(frozen=True)
class GpuProof:
    """The result of a matrix multiplication on the GPU, run in a child process."""

    ok: bool
    device: str = ""
    seconds: float = 0.0
    error: str = ""


def prove_gpu(python: str = sys.executable, timeout: float = 180.0) -> GpuProof:
    """Multiply two matrices on the GPU with ``python``'s torch: the proof that a build works."""
    try:
        done = processes.run(
            [python, "-c", _PROOF], capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return GpuProof(False, error=f"the GPU test took longer than {timeout:.0f} s")
    except OSError as exc:
        return GpuProof(False, error=str(exc))
    try:
        data = json.loads(done.stdout.strip().splitlines()[-1])
        return GpuProof(
            bool(data["finite"]),
            data["device"],
            float(data["seconds"]),
            "" if data["finite"] else "the result was not a number",
        )
    except (ValueError, IndexError, KeyError, TypeError):
        tail = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        return GpuProof(False, error=tail)
