"""Which PyTorch build a setup, a repair or an update installs: the Environment doctor's choice for a new
runtime, the build a runtime had for a repair, and for an update the installed build, or, when the new
app needs a newer one, the same kind of build from the same index (never PyPI's default build)."""

from __future__ import annotations

import json
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.core.system.messages import msg
from desktop.launcher.bundle import Bundle, Options
from desktop.launcher.errors import SetupError
from desktop.launcher.runtime_folder import Runtime

WINDOWS = sys.platform == "win32"


@dataclass(frozen=True)
class TorchChoice:
    """The PyTorch build to install first, and why."""

    requirement: str
    index_url: str
    reason: str
    cuda: bool = False


def choose_torch(options: Options, wheelhouse: Path | None, system: str | None = None) -> TorchChoice:
    """The PyTorch build for this machine: the Environment doctor's choice for its GPUs and driver.

    Offline, the wheelhouse decides: its build for the chosen tag, else the build it has.
    """
    from desktop.core.environment.gpu import detect_gpus
    from desktop.core.environment.torch_probe import TorchInfo
    from desktop.core.environment.wheels import WheelTable, too_old_for_pytorch, verdict

    system = system or ("windows" if WINDOWS else "linux")
    table = WheelTable.load()
    report = detect_gpus()
    found = verdict(report, TorchInfo(installed=False), system, table)
    if found.target is not None:
        version, tag, index = found.target.version, found.target.tag, found.target.index_url
        reason = found.target.reason
    else:
        version, tag, index = table.release(table.newest())["latest"], "cpu", table.index_url("cpu")
        reason = _why_the_cpu_build(
            "gpu_too_old" if too_old_for_pytorch(table, report.nvidia) else found.kind
        )
    if options.offline:
        have = _wheelhouse_torch(wheelhouse)
        if not have:
            raise SetupError(
                msg("The offline package holds no PyTorch."),
                msg("Use the full offline installer, or start without --offline while connected."),
            )
        exact = [v for v in have if v.endswith("+" + tag)]
        picked = exact[0] if exact else have[0]
        why = reason if exact else f"the build in the offline package (this machine would use {tag})"
        return TorchChoice(f"torch=={picked}", "", why, "+cu" in picked)
    index = options.torch_index_url.strip() or index
    return TorchChoice(f"torch=={version}+{tag}", index, reason, tag.startswith("cu"))


def _why_the_cpu_build(kind: str) -> str:
    """Why the setup installs the CPU build (the doctor's verdict ``kind``), as the setup window says it."""
    if kind == "gpu_too_old":
        return msg("this GPU is too old for current PyTorch, so the CPU build")
    if kind == "driver_too_old":
        return msg("the NVIDIA driver is too old for PyTorch's GPU builds, so the CPU build")
    if kind == "no_build_for_gpus":
        return msg("no PyTorch build runs on all of these GPUs, so the CPU build")
    return msg("no NVIDIA GPU was found, so the CPU build")


def _wheelhouse_torch(wheelhouse: Path | None) -> list[str]:
    if wheelhouse is None or not wheelhouse.is_dir():
        return []
    versions = {p.name.split("-")[1] for p in wheelhouse.glob("torch-*.whl")}
    return sorted(versions, reverse=True)


def kept_torch(runtime: Runtime, options: Options) -> TorchChoice | None:
    """The PyTorch build this runtime had (a repair) or was being set up with (a setup that did not
    finish): kept, so that a repair never changes it; ``None`` when there is none to keep or the setup is
    offline (the wheelhouse decides)."""
    if options.offline:
        return None
    marker = runtime.marker()
    requirement, index = (marker.torch, marker.torch_index) if marker else ("", "")
    if not requirement:
        try:
            progress = json.loads(runtime.progress_path.read_text(encoding="utf-8"))
            requirement, index = progress.get("torch", ""), progress.get("index", "")
        except (OSError, ValueError, AttributeError):
            return None
    if not requirement.startswith("torch==") or "+" not in requirement:
        return None
    tag = requirement.split("+", 1)[1]
    index = options.torch_index_url.strip() or index or _table().index_url(tag)
    return TorchChoice(requirement, index, msg("the build this runtime had"), tag.startswith("cu"))


def _table() -> Any:
    from desktop.core.environment.wheels import WheelTable

    return WheelTable.load()


def torch_floor(app_wheel: Path) -> str:
    """What the app wheel requires of PyTorch (``>=2.4``), from its metadata; ``""`` if nothing."""
    from packaging.requirements import InvalidRequirement, Requirement

    with zipfile.ZipFile(app_wheel) as wheel:
        name = next((n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")), None)
        metadata = wheel.read(name).decode("utf-8", "replace") if name else ""
    for line in metadata.splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        try:
            requirement = Requirement(line.split(":", 1)[1].strip())
        except InvalidRequirement:
            continue
        if requirement.name == "torch" and requirement.marker is None:
            return str(requirement.specifier)
    return ""


def torch_for_floor(installed: str, floor: str, options: Options, index: str = "") -> TorchChoice | None:
    """The build an update installs when ``installed`` (``2.13.0+cu126``) is below the new app's
    ``floor``: the newest release that meets it in the same flavour (CUDA tag or CPU), from the same
    index; ``None`` when the installed build meets it. Never PyPI's default build.

    Raises:
        SetupError: No release in the table meets the floor in this flavour.
    """
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    spec = SpecifierSet(floor)
    if not floor or spec.contains(Version(installed).public, prereleases=True):
        return None
    tag = installed.split("+", 1)[1] if "+" in installed else "cpu"
    table = _table()
    for release in table.releases():
        row = table.release(release) or {}
        latest = row.get("latest", "")
        if latest and spec.contains(latest) and (tag == "cpu" or tag in row.get("cuda", [])):
            source = options.torch_index_url.strip() or index or table.index_url(tag)
            why = msg(
                "PyTorch {installed} is older than this version of Finetune Studio needs ({floor}); "
                "the same kind of build ({tag}) from the same place",
                installed=installed,
                floor=floor,
                tag=tag,
            )
            return TorchChoice(f"torch=={latest}+{tag}", source, why, tag.startswith("cu"))
    raise SetupError(
        msg(
            "This version of Finetune Studio needs PyTorch {floor}, and no release of that kind of build "
            "({tag}) does.",
            floor=floor,
            tag=tag,
        ),
        msg("Open the Environment step and install the PyTorch build it recommends, then update again."),
    )


COMPANIONS = ("torchvision", "torchaudio")


def torch_for_update(
    runtime: Runtime, bundle: Bundle, options: Options, on_line: Callable[[str], None]
) -> tuple[TorchChoice | None, bool, tuple[str, ...]]:
    """The PyTorch an update keeps (the build installed), or the one it must install first, and the
    companions that then come with it."""
    installed = runtime.installed("torch")
    if not installed:
        return None, False, ()
    marker = runtime.marker()
    index = marker.torch_index if marker else ""
    tag = installed.split("+", 1)[1] if "+" in installed else "cpu"
    kept = TorchChoice(
        f"torch=={installed}", index, msg("the build installed now, kept"), tag.startswith("cu")
    )
    newer = (
        None if options.offline else torch_for_floor(installed, torch_floor(bundle.app_wheel), options, index)
    )
    if newer is None:
        return kept, False, ()
    on_line(f"PyTorch: {newer.reason}: {newer.requirement}")
    return newer, True, tuple(name for name in COMPANIONS if runtime.installed(name))
