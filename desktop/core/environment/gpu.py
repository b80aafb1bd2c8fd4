"""The machine's GPUs and NVIDIA driver, read without torch: NVML first, then nvidia-smi, then sysfs."""

from __future__ import annotations

import contextlib
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from desktop.core.system import processes
from desktop.core.system.messages import msg

VENDORS = {"0x10de": "nvidia", "0x1002": "amd", "0x8086": "intel"}


@dataclass(frozen=True)
class GpuInfo:
    """One GPU.

    Attributes:
        name: The marketing name, e.g. ``NVIDIA GeForce RTX 4070``.
        vendor: ``nvidia``, ``amd`` or ``intel``.
        capability: CUDA compute capability ``(major, minor)`` (NVIDIA only).
        memory_total: VRAM in bytes, when known.
        memory_free: Free VRAM in bytes, when known.
        utilization: GPU busy percentage, when known.
    """

    name: str
    vendor: str = "nvidia"
    capability: tuple[int, int] | None = None
    memory_total: int | None = None
    memory_free: int | None = None
    utilization: int | None = None


@dataclass(frozen=True)
class GpuReport:
    """What was found, and why something could not be read.

    Attributes:
        gpus: The GPUs found.
        driver_version: The NVIDIA driver, e.g. ``580.95.05``; empty without one.
        cuda_driver: The highest CUDA version the driver supports, e.g. ``(13, 0)``.
        source: ``nvml``, ``nvidia-smi``, ``sysfs`` or ``none``.
        problems: Why a source failed (for diagnostics); never raised.
    """

    gpus: list[GpuInfo] = field(default_factory=list)
    driver_version: str = ""
    cuda_driver: tuple[int, int] | None = None
    source: str = "none"
    problems: list[str] = field(default_factory=list)

    @property
    def nvidia(self) -> list[GpuInfo]:
        """The NVIDIA GPUs."""
        return [g for g in self.gpus if g.vendor == "nvidia"]

    def summary(self) -> str:
        """One plain sentence about the GPUs."""
        if not self.gpus:
            return msg("No GPU found: training runs on the CPU.")
        names = ", ".join(g.name for g in self.gpus)
        if self.driver_version:
            return msg("Found {gpus} (NVIDIA driver {driver}).", gpus=names, driver=self.driver_version)
        return msg("Found {gpus}.", gpus=names)


def detect_gpus() -> GpuReport:
    """Find GPUs; every failure becomes part of the report instead of an exception."""
    problems: list[str] = []
    for reader in (_read_nvml, _read_nvidia_smi):
        try:
            report = reader()
        except Exception as exc:  # a broken driver must not break the app
            problems.append(f"{reader.__name__.removeprefix('_read_')}: {type(exc).__name__}: {exc}")
            continue
        if report is not None:
            return GpuReport(
                report.gpus + _other_vendors(),
                report.driver_version,
                report.cuda_driver,
                report.source,
                problems,
            )
    others = _other_vendors()
    return GpuReport(others, source="sysfs" if others else "none", problems=problems)


def _read_nvml() -> GpuReport | None:
    import pynvml

    pynvml.nvmlInit()
    try:
        driver = pynvml.nvmlSystemGetDriverVersion()
        driver = driver.decode() if isinstance(driver, bytes) else str(driver)
        cuda = pynvml.nvmlSystemGetCudaDriverVersion_v2()
        gpus = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(i)
            name = pynvml.nvmlDeviceGetName(handle)
            memory = pynvml.nvmlDeviceGetMemoryInfo(handle)
            utilization = None
            with contextlib.suppress(Exception):  # not supported on every board
                utilization = int(pynvml.nvmlDeviceGetUtilizationRates(handle).gpu)
            gpus.append(
                GpuInfo(
                    name=name.decode() if isinstance(name, bytes) else str(name),
                    capability=tuple(pynvml.nvmlDeviceGetCudaComputeCapability(handle)),
                    memory_total=int(memory.total),
                    memory_free=int(memory.free),
                    utilization=utilization,
                )
            )
        return GpuReport(gpus, driver, (cuda // 1000, (cuda % 1000) // 10), "nvml")
    finally:
        pynvml.nvmlShutdown()


def _read_nvidia_smi() -> GpuReport | None:
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    query = "name,driver_version,memory.total,memory.free,compute_cap"
    done = processes.run(
        [exe, f"--query-gpu={query}", "--format=csv,noheader,nounits"],
        capture_output=True,
        text=True,
        timeout=15,
        check=True,
    )
    gpus, driver = [], ""
    for line in done.stdout.strip().splitlines():
        name, driver, total, free, cap = (part.strip() for part in line.split(","))
        major, _, minor = cap.partition(".")
        gpus.append(
            GpuInfo(name, "nvidia", (int(major), int(minor or 0)), int(total) * 2**20, int(free) * 2**20)
        )
    return GpuReport(gpus, driver, _cuda_from_smi(exe), "nvidia-smi")


def _cuda_from_smi(exe: str) -> tuple[int, int] | None:
    # The plain nvidia-smi header says "CUDA Version: 12.8".
    with contextlib.suppress(Exception):
        out = processes.run([exe], capture_output=True, text=True, timeout=15, check=False).stdout
        version = out.split("CUDA Version:")[1].split()[0]
        major, minor = version.split(".")[:2]
        return int(major), int(minor)
    return None


def _other_vendors() -> list[GpuInfo]:
    """AMD and Intel display devices on Linux, from sysfs (names are generic)."""
    if not sys.platform.startswith("linux"):
        return []
    found = []
    for vendor_file in sorted(Path("/sys/class/drm").glob("card[0-9]*/device/vendor")):
        with contextlib.suppress(OSError):
            vendor = VENDORS.get(vendor_file.read_text().strip())
            if vendor in ("amd", "intel"):
                found.append(GpuInfo(f"{vendor.upper() if vendor == 'amd' else 'Intel'} GPU", vendor))
    return found
