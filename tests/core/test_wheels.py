"""The PyTorch doctor's verdict: a pure function of GPUs, driver, system and installed torch."""

from __future__ import annotations

import pytest

from desktop.core.environment.gpu import GpuInfo, GpuReport
from desktop.core.environment.torch_probe import TorchInfo
from desktop.core.environment.wheels import WheelTable, verdict

TABLE = WheelTable.load()
CPU_213 = TorchInfo(installed=True, version="2.13.0+cpu")


def _nvidia(name: str, cap: tuple[int, int], driver: str, cuda: tuple[int, int], count: int = 1) -> GpuReport:
    return GpuReport([GpuInfo(name, "nvidia", cap, 8 * 2**30)] * count, driver, cuda, "nvml")


def _cuda_torch(version: str, cuda: str, available: bool = True) -> TorchInfo:
    return TorchInfo(installed=True, version=version, cuda_build=cuda, cuda_available=available)


CASES = [
    # id, report, probe, system, kind, requirement
    (
        "gtx1080-560-cpu",
        _nvidia("NVIDIA GeForce GTX 1080", (6, 1), "560.94", (12, 6)),
        CPU_213,
        "windows",
        "cpu_build_with_gpu",
        "torch==2.13.0+cu126",
    ),
    (
        "rtx3060-cpu-windows",
        _nvidia("NVIDIA GeForce RTX 3060", (8, 6), "576.02", (12, 9)),
        CPU_213,
        "windows",
        "cpu_build_with_gpu",
        "torch==2.13.0+cu126",
    ),
    (
        "rtx4090-570-cu130",
        _nvidia("NVIDIA GeForce RTX 4090", (8, 9), "570.86.10", (12, 8)),
        _cuda_torch("2.14.1+cu130", "13.0", available=False),
        "linux",
        "needs_newer_driver",
        "torch==2.14.1+cu126",
    ),
    (
        "rtx5090-cu126",
        _nvidia("NVIDIA GeForce RTX 5090", (12, 0), "580.95.05", (13, 0)),
        _cuda_torch("2.14.1+cu126", "12.6"),
        "linux",
        "arch_not_in_build",
        "torch==2.14.1+cu130",
    ),
    (
        "h100-575-ok",
        _nvidia("NVIDIA H100 80GB HBM3", (9, 0), "575.51.03", (12, 9)),
        _cuda_torch("2.14.1+cu126", "12.6"),
        "linux",
        "ok",
        None,
    ),
    (
        "v100-cpu",
        _nvidia("Tesla V100-SXM2-16GB", (7, 0), "580.95.05", (13, 0)),
        CPU_213,
        "linux",
        "cpu_build_with_gpu",
        "torch==2.13.0+cu126",
    ),
    (
        "rtx4070-580-cpu",
        _nvidia("NVIDIA GeForce RTX 4070", (8, 9), "581.57", (13, 0)),
        CPU_213,
        "windows",
        "cpu_build_with_gpu",
        "torch==2.13.0+cu130",
    ),
    ("no-driver", GpuReport(), CPU_213, "windows", "no_gpu", None),
    ("amd-linux", GpuReport([GpuInfo("AMD GPU", "amd")], source="sysfs"), CPU_213, "linux", "no_gpu", None),
    (
        "driver-470-runs-the-newest-cu118-build",
        _nvidia("NVIDIA GeForce RTX 3060", (8, 6), "470.256.02", (11, 4)),
        CPU_213,
        "linux",
        "cpu_build_with_gpu",
        "torch==2.7.1+cu118",
    ),
    (
        "driver-440-too-old",
        _nvidia("NVIDIA GeForce RTX 3060", (8, 6), "440.33.01", (10, 2)),
        CPU_213,
        "linux",
        "driver_too_old",
        None,
    ),
    (
        "pypi-linux-cuda-build-no-local-tag",
        _nvidia("NVIDIA GeForce RTX 3090", (8, 6), "580.95.05", (13, 0)),
        _cuda_torch("2.14.1", "13.0"),
        "linux",
        "ok",
        None,
    ),
    (
        "not-installed",
        _nvidia("NVIDIA GeForce RTX 3060", (8, 6), "580.95.05", (13, 0)),
        TorchInfo(),
        "linux",
        "no_torch",
        "torch==2.14.1+cu130",
    ),
    (
        "import-broken",
        _nvidia("NVIDIA GeForce RTX 3060", (8, 6), "580.95.05", (13, 0)),
        TorchInfo(installed=True, version="2.13.0+cu130", error="OSError: [WinError 126] c10.dll"),
        "windows",
        "import_broken",
        "torch==2.13.0+cu130",
    ),
    (
        "volta-and-blackwell-share-the-cu128-builds-of-2.8-to-2.10",
        GpuReport(
            [GpuInfo("Tesla V100", "nvidia", (7, 0)), GpuInfo("NVIDIA GeForce RTX 5090", "nvidia", (12, 0))],
            "580.95.05",
            (13, 0),
            "nvml",
        ),
        CPU_213,
        "linux",
        "cpu_build_with_gpu",
        "torch==2.10.0+cu128",
    ),
    (
        "maxwell-and-blackwell-have-no-common-build",
        GpuReport(
            [
                GpuInfo("NVIDIA GeForce GTX 980", "nvidia", (5, 2)),
                GpuInfo("NVIDIA GeForce RTX 5090", "nvidia", (12, 0)),
            ],
            "580.95.05",
            (13, 0),
            "nvml",
        ),
        CPU_213,
        "linux",
        "no_build_for_gpus",
        None,
    ),
    (
        "kepler-is-older-than-every-build",
        GpuReport([GpuInfo("Tesla K80", "nvidia", (3, 7))], "470.82.01", (11, 4), "nvml"),
        CPU_213,
        "linux",
        "gpu_too_old",
        None,
    ),
]


@pytest.mark.parametrize(
    ("report", "probe", "system", "kind", "requirement"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_verdicts(
    report: GpuReport, probe: TorchInfo, system: str, kind: str, requirement: str | None
) -> None:
    result = verdict(report, probe, system, TABLE)
    assert result.kind == kind, result
    assert (result.target.requirement if result.target else None) == requirement
    assert result.headline and result.explanation
    if result.target:
        assert result.target.index_url == f"https://download.pytorch.org/whl/{result.target.tag}"
        assert result.target.reason


def test_the_classic_windows_case_reads_plainly() -> None:
    result = verdict(_nvidia("NVIDIA GeForce RTX 4070", (8, 9), "581.57", (13, 0)), CPU_213, "windows", TABLE)
    assert (
        result.headline
        == "CPU-only PyTorch on a machine with NVIDIA GeForce RTX 4070: training would run on the CPU."
    )


def test_a_kepler_gpu_is_called_too_old_not_missing() -> None:
    gtx_780 = _nvidia("NVIDIA GeForce GTX 780", (3, 5), "470.82.01", (11, 4))
    result = verdict(gtx_780, CPU_213, "windows", TABLE)
    assert result.headline.startswith("NVIDIA GeForce GTX 780 is too old for current PyTorch")
    assert "compute capability 3.5" in result.headline and "Maxwell" in result.explanation
    assert result.ok and result.target is None  # the CPU build installed is the right one
    assert verdict(gtx_780, TorchInfo(installed=False), "windows", TABLE).kind == "no_torch"  # install it


def test_driver_too_old_says_which_driver_to_install() -> None:
    result = verdict(
        _nvidia("NVIDIA GeForce RTX 3060", (8, 6), "440.33.01", (10, 2)), CPU_213, "linux", TABLE
    )
    assert result.explanation == (
        "Install NVIDIA driver 450.80.02 or newer (525.60.13 or newer for the newest builds), "
        "then check again."
    )
    blackwell = verdict(
        _nvidia("NVIDIA GeForce RTX 5090", (12, 0), "512.15", (11, 6)), CPU_213, "windows", TABLE
    )
    assert blackwell.kind == "driver_too_old" and "528.33 or newer (580 or newer" in blackwell.explanation


# Typical Windows gaming PCs: (GPU, compute capability, driver, CUDA the driver reports) -> the build.
WINDOWS_GAMING_PCS = [
    ("NVIDIA GeForce RTX 5090", (12, 0), "572.16", (12, 8), "torch==2.11.0+cu128"),
    ("NVIDIA GeForce RTX 5070 Ti", (12, 0), "576.88", (12, 9), "torch==2.11.0+cu128"),
    ("NVIDIA GeForce RTX 5080", (12, 0), "581.57", (13, 0), "torch==2.13.0+cu130"),
    ("NVIDIA GeForce RTX 4090", (8, 9), "566.36", (12, 7), "torch==2.13.0+cu126"),
    ("NVIDIA GeForce RTX 4060 Laptop GPU", (8, 9), "581.57", (13, 0), "torch==2.13.0+cu130"),
    ("NVIDIA GeForce RTX 3060", (8, 6), "537.58", (12, 2), "torch==2.13.0+cu126"),
    ("NVIDIA GeForce RTX 2070 SUPER", (7, 5), "560.94", (12, 6), "torch==2.13.0+cu126"),
    ("NVIDIA GeForce GTX 1660 Ti", (7, 5), "546.33", (12, 3), "torch==2.13.0+cu126"),
    ("NVIDIA GeForce GTX 1060 6GB", (6, 1), "581.57", (13, 0), "torch==2.13.0+cu126"),
    ("NVIDIA GeForce GTX 1050 Ti", (6, 1), "472.12", (11, 4), "torch==2.7.1+cu118"),
]


@pytest.mark.parametrize(("gpu", "capability", "driver", "cuda", "requirement"), WINDOWS_GAMING_PCS)
def test_windows_gaming_pcs_get_a_build_their_driver_runs(
    gpu: str, capability: tuple[int, int], driver: str, cuda: tuple[int, int], requirement: str
) -> None:
    result = verdict(_nvidia(gpu, capability, driver, cuda), CPU_213, "windows", TABLE)
    assert result.kind == "cpu_build_with_gpu" and result.target.requirement == requirement
    assert gpu in result.headline and "too old" not in result.explanation


def test_an_rtx_5090_on_driver_572_gets_cuda_12_8_not_the_cpu_build() -> None:
    report = _nvidia("NVIDIA GeForce RTX 5090", (12, 0), "572.16", (12, 8))
    fresh = verdict(report, TorchInfo(installed=False), "windows", TABLE)  # what the launcher installs
    assert fresh.target.requirement == "torch==2.11.0+cu128"
    assert "the newest PyTorch (2.11.0) with a build for NVIDIA GeForce RTX 5090 that driver 572.16 runs" in (
        fresh.explanation
    )


def test_old_driver_within_family_gets_a_build_with_a_warning() -> None:
    # Driver 530 reports CUDA 12.1: cu126 breaks the conservative rule but is in the 12.x family.
    result = verdict(
        _nvidia("NVIDIA GeForce RTX 3060", (8, 6), "530.30.02", (12, 1)), CPU_213, "linux", TABLE
    )
    assert result.target.tag == "cu126" and "limited feature set" in result.target.warning


def test_table_coverage_rule() -> None:
    assert TABLE.covers("2.14", "cu126", (8, 9))  # 8.9 runs sm_86 code
    assert not TABLE.covers("2.14", "cu126", (12, 0))
    assert TABLE.covers("2.9", "cu128", (7, 0)) and not TABLE.covers("2.11", "cu128", (7, 0))
    assert TABLE.driver_floor("cu130", "windows") == "580"


def test_a_pinned_release_is_honoured() -> None:
    report = _nvidia("NVIDIA GeForce RTX 3060", (8, 6), "581.57", (13, 0))
    assert (
        verdict(report, CPU_213, "windows", TABLE, release="2.14").target.requirement == "torch==2.14.1+cu130"
    )
    assert (
        verdict(report, CPU_213, "windows", TABLE, release="2.9").target.requirement == "torch==2.9.1+cu130"
    )
    assert (
        verdict(report, CPU_213, "windows", TABLE, release="2.8").target.requirement == "torch==2.8.0+cu129"
    )
