"""Which PyTorch build fits this machine: the wheel table (data in resources/) and the verdict."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.core.environment.gpu import GpuInfo, GpuReport
from desktop.core.environment.torch_probe import TorchInfo
from desktop.core.system.messages import msg
from desktop.core.system.paths import resources_dir

TABLE_PATH = resources_dir() / "torch_wheels.json"


def _version_tuple(version: str) -> tuple[int, ...]:
    parts = []
    for piece in version.split("+")[0].split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def cuda_of(tag: str) -> tuple[int, int]:
    """The CUDA version of a tag: ``cu126`` -> (12, 6), ``cu130`` -> (13, 0)."""
    digits = tag.removeprefix("cu")
    return int(digits[:-1]), int(digits[-1])


def torchvision_for(torch_version: str) -> str | None:
    """The torchvision requirement built for a PyTorch version: ``2.13.0+cu130`` ->
    ``torchvision==0.28.0+cu130`` (each PyTorch 2.N.P has its torchvision 0.(N + 15).P, with the same
    build tag); ``None`` for a version that is not 2.N.P."""
    release, plus, tag = torch_version.partition("+")
    parts = release.split(".")
    if len(parts) != 3 or parts[0] != "2" or not all(p.isdigit() for p in parts):
        return None
    return f"torchvision==0.{int(parts[1]) + 15}.{parts[2]}{plus}{tag}"


@dataclass(frozen=True)
class WheelTable:
    """The facts of resources/torch_wheels.json."""

    data: dict[str, Any]

    @classmethod
    def load(cls, path: Path = TABLE_PATH) -> WheelTable:
        """Read the table."""
        return cls(json.loads(path.read_text(encoding="utf-8")))

    def release(self, key: str) -> dict[str, Any] | None:
        """A release row (``"2.14"``), or ``None`` if the table does not know it."""
        return self.data["releases"].get(key)

    def newest(self) -> str:
        """The newest release in the table."""
        return self.data["newest_release"]

    def releases(self) -> list[str]:
        """Every release in the table, newest first."""
        return sorted(self.data["releases"], key=_version_tuple, reverse=True)

    def index_url(self, tag: str) -> str:
        """The PyTorch index for a tag."""
        return self.data["index_url"].format(tag=tag)

    def covers(self, release: str, tag: str, capability: tuple[int, int]) -> bool:
        """Whether the ``tag`` build of ``release`` has code for a GPU of ``capability``.

        A GPU runs code built for the same major and an equal or lower minor (8.9 runs sm_86).
        """
        for row in self.data["coverage"]:
            if row["tag"] != tag:
                continue
            if "from" in row and _version_tuple(release) < _version_tuple(row["from"]):
                continue
            if "to" in row and _version_tuple(release) > _version_tuple(row["to"]):
                continue
            caps = [tuple(int(x) for x in c.split(".")) for c in row["capabilities"]]
            return any(major == capability[0] and minor <= capability[1] for major, minor in caps)
        return False

    def oldest_capability(self) -> tuple[int, int]:
        """The oldest GPU architecture any build has code for (5.0, Maxwell)."""
        return min(
            tuple(int(x) for x in c.split(".")) for row in self.data["coverage"] for c in row["capabilities"]
        )

    def driver_floor(self, tag: str, system: str) -> str:
        """The oldest driver that runs a tag's CUDA family on ``system`` (``linux``/``windows``)."""
        return self.data["driver_floors"][str(cuda_of(tag)[0])][system]


@dataclass(frozen=True)
class WheelTarget:
    """The build to install, and why it was chosen."""

    version: str
    tag: str
    index_url: str
    reason: str
    warning: str = ""

    @property
    def requirement(self) -> str:
        """The pinned requirement, e.g. ``torch==2.14.1+cu130``."""
        return f"torch=={self.version}+{self.tag}"


@dataclass(frozen=True)
class Verdict:
    """Whether the installed PyTorch fits this machine, in plain words.

    Attributes:
        kind: ``ok``, ``no_gpu``, ``no_torch``, ``import_broken``, ``cpu_build_with_gpu``,
            ``gpu_too_old`` (older than every build: Kepler; the CPU build is right, like ``no_gpu``),
            ``needs_newer_driver``, ``arch_not_in_build``, ``gpu_unusable``, ``driver_too_old`` or
            ``no_build_for_gpus``.
        headline: One sentence.
        explanation: Why, and what the fix does.
        target: The build that fixes it, when one exists.
    """

    kind: str
    headline: str
    explanation: str
    target: WheelTarget | None = None

    @property
    def ok(self) -> bool:
        """Whether nothing needs fixing."""
        return self.kind in ("ok", "no_gpu", "gpu_too_old")


def choose_target(
    table: WheelTable,
    release: str,
    gpus: list[GpuInfo],
    driver: str,
    cuda_driver: tuple[int, int] | None,
    system: str,
) -> WheelTarget | None:
    """The newest CUDA build of ``release`` that this driver runs and that covers every GPU.

    Prefers the conservative rule (tag CUDA <= the driver's CUDA); falls back to the family's
    minimum driver with a warning. ``None`` when the driver is too old for every build.
    """
    row = table.release(release) or table.release(table.newest())
    release = release if table.release(release) else table.newest()
    candidates = [
        t
        for t in reversed(row["cuda"])
        if all(g.capability and table.covers(release, t, g.capability) for g in gpus)
    ]
    names = ", ".join(g.name for g in gpus)
    for tag in candidates:
        if cuda_driver is not None and cuda_of(tag) <= cuda_driver:
            return WheelTarget(
                row["latest"],
                tag,
                table.index_url(tag),
                msg(
                    "the newest build for {gpus} that driver {driver} fully supports",
                    gpus=names,
                    driver=driver,
                ),
            )
    for tag in candidates:
        if driver and _version_tuple(driver) >= _version_tuple(table.driver_floor(tag, system)):
            return WheelTarget(
                row["latest"],
                tag,
                table.index_url(tag),
                msg("a build that driver {driver} can run", driver=driver),
                warning=msg(
                    "Driver {driver} runs {tag} with a limited feature set; a newer driver is better.",
                    driver=driver,
                    tag=tag,
                ),
            )
    return None


def best_target(
    table: WheelTable,
    release: str,
    gpus: list[GpuInfo],
    driver: str,
    cuda_driver: tuple[int, int] | None,
    system: str,
) -> WheelTarget | None:
    """:func:`choose_target` for ``release``; when no build of it fits, the newest release that has one.

    An RTX 50 (Blackwell) needs cu128 or newer; on a 570-579 driver the cu130/cu132 builds of the
    newest releases do not run, but the cu128 builds of 2.7 to 2.11 do.
    """
    target = choose_target(table, release, gpus, driver, cuda_driver, system)
    if target is not None:
        return target
    for other in table.releases():
        found = choose_target(table, other, gpus, driver, cuda_driver, system)
        if found is not None:
            return WheelTarget(
                found.version,
                found.tag,
                found.index_url,
                msg(
                    "the newest PyTorch ({version}) with a build for {gpus} that driver {driver} runs",
                    version=found.version,
                    gpus=", ".join(g.name for g in gpus),
                    driver=driver,
                ),
                found.warning,
            )
    return None


def too_old_for_pytorch(table: WheelTable, gpus: list[GpuInfo]) -> bool:
    """Whether every one of ``gpus`` (at least one) is older than the oldest architecture any build has
    code for (Kepler, 3.x, since PyTorch 1.13): the CPU build is the one to install."""
    oldest = table.oldest_capability()
    return bool(gpus) and all(g.capability is not None and g.capability < oldest for g in gpus)


def _any_build_covers(table: WheelTable, gpus: list[GpuInfo]) -> bool:
    return any(
        all(g.capability and table.covers(release, tag, g.capability) for g in gpus)
        for release in table.releases()
        for tag in table.release(release)["cuda"]
    )


def lowest_driver(table: WheelTable, gpus: list[GpuInfo], system: str) -> tuple[str, str]:
    """The oldest driver that runs some build for ``gpus``, and the one the newest builds need."""
    floors = []
    for release in table.releases():
        for tag in table.release(release)["cuda"]:
            if all(g.capability and table.covers(release, tag, g.capability) for g in gpus):
                floors.append((release == table.newest(), table.driver_floor(tag, system)))
    oldest = min((f for _, f in floors), key=_version_tuple)
    newest = min((f for is_newest, f in floors if is_newest), key=_version_tuple, default=oldest)
    return oldest, newest


def _installed_tag(probe: TorchInfo) -> str:
    local = probe.version.partition("+")[2]
    if local:
        return local
    if probe.cuda_build:
        major, minor = probe.cuda_build.split(".")[:2]
        return f"cu{major}{minor}"
    return "cpu"


def verdict(
    report: GpuReport, probe: TorchInfo, system: str, table: WheelTable | None = None, release: str = ""
) -> Verdict:
    """Judge the installed PyTorch against the GPUs and the driver (a pure function).

    Args:
        report: The GPUs and driver, from :func:`desktop.core.environment.gpu.detect_gpus`.
        probe: The installed torch, from :func:`desktop.core.environment.torch_probe.probe_torch`.
        system: ``linux`` or ``windows``.
        table: The wheel table (the bundled one by default).
        release: The torch release to pin (``"2.14"``); by default the installed one, so the
            packages resolved against it stay valid, or the newest when none is installed.
    """
    table = table or WheelTable.load()
    gpus = report.nvidia
    if not release:
        release = (
            ".".join(probe.version.split(".")[:2]) if probe.installed and probe.version else table.newest()
        )
    too_old = too_old_for_pytorch(table, gpus)
    if not gpus or too_old:
        amd = [g for g in report.gpus if g.vendor == "amd"]
        if amd and system == "linux" and not gpus:
            return Verdict(
                "no_gpu",
                msg("An AMD GPU was found; this app trains on NVIDIA GPUs or the CPU."),
                msg("ROCm builds of PyTorch exist for Linux but are not managed here yet."),
            )
        if probe.installed and probe.error:
            return Verdict(
                "import_broken",
                msg("PyTorch is installed but does not load: {error}", error=probe.error),
                msg("Reinstalling the CPU build fixes a damaged installation."),
            )
        if not probe.installed:
            return Verdict(
                "no_torch", msg("PyTorch is not installed."), msg("Install the CPU build of PyTorch.")
            )
        if too_old:
            names = ", ".join(g.name for g in gpus)
            capability = ", ".join(sorted({f"{g.capability[0]}.{g.capability[1]}" for g in gpus}))
            return Verdict(
                "gpu_too_old",
                msg(
                    "{gpus} is too old for current PyTorch: no build has code for its architecture "
                    "(compute capability {capability}), so training runs on the CPU.",
                    gpus=names,
                    capability=capability,
                ),
                msg(
                    "The CPU build is right for this machine. PyTorch's GPU builds start at Maxwell "
                    "(GeForce GTX 900, compute capability 5.0); a newer GPU trains much faster."
                ),
            )
        return Verdict(
            "no_gpu",
            msg("No NVIDIA GPU: training runs on the CPU, and the CPU build is right."),
            msg("Nothing to fix. Training on the CPU is fine for small models and data."),
        )

    names = ", ".join(g.name for g in gpus)
    target = best_target(table, release, gpus, report.driver_version, report.cuda_driver, system)
    if target is None and not _any_build_covers(table, gpus):
        return Verdict(
            "no_build_for_gpus",
            msg("No single PyTorch build supports all of {gpus}.", gpus=names),
            msg(
                "Older GPUs (Maxwell to Volta) need cu126 builds, the newest (Blackwell) cu128 or newer. "
                "Train on one kind of GPU: set CUDA_VISIBLE_DEVICES to hide the others."
            ),
        )
    if target is None:
        floor, newest_floor = lowest_driver(table, gpus, system)
        return Verdict(
            "driver_too_old",
            msg(
                "The NVIDIA driver {driver} is too old for any PyTorch build for {gpus}.",
                driver=report.driver_version or "?",
                gpus=names,
            ),
            msg(
                "Install NVIDIA driver {floor} or newer ({newest} or newer for the newest builds), "
                "then check again.",
                floor=floor,
                newest=newest_floor,
            )
            if newest_floor != floor
            else msg("Install NVIDIA driver {floor} or newer, then check again.", floor=floor),
        )
    if not probe.installed:
        return Verdict(
            "no_torch",
            msg("PyTorch is not installed."),
            msg("Install {requirement}: {reason}.", requirement=target.requirement, reason=target.reason),
            target,
        )
    if probe.error:
        return Verdict(
            "import_broken",
            msg("PyTorch is installed but does not load: {error}", error=probe.error),
            msg(
                "Reinstalling {requirement} replaces the damaged installation.",
                requirement=target.requirement,
            ),
            target,
        )
    tag = _installed_tag(probe)
    if tag == "cpu" or not tag.startswith("cu"):
        return Verdict(
            "cpu_build_with_gpu",
            msg("CPU-only PyTorch on a machine with {gpus}: training would run on the CPU.", gpus=names),
            msg(
                "Installing {requirement} lets PyTorch use the GPU ({reason}).",
                requirement=target.requirement,
                reason=target.reason,
            ),
            target,
        )
    if (
        report.cuda_driver is not None
        and cuda_of(tag) > report.cuda_driver
        and (_version_tuple(report.driver_version) < _version_tuple(table.driver_floor(tag, system)))
    ):
        return Verdict(
            "needs_newer_driver",
            msg(
                "PyTorch {version} needs a newer NVIDIA driver than {driver}.",
                version=probe.version,
                driver=report.driver_version,
            ),
            msg(
                "Update the driver to {floor} or newer, or install {requirement} ({reason}).",
                floor=table.driver_floor(tag, system),
                requirement=target.requirement,
                reason=target.reason,
            ),
            target,
        )
    uncovered = [g for g in gpus if g.capability and not table.covers(release, tag, g.capability)]
    if uncovered:
        g = uncovered[0]
        return Verdict(
            "arch_not_in_build",
            msg(
                "PyTorch {version} has no code for {gpu} (compute capability {capability}).",
                version=probe.version,
                gpu=g.name,
                capability=f"{g.capability[0]}.{g.capability[1]}",
            ),
            msg(
                "Installing {requirement} adds it ({reason}).",
                requirement=target.requirement,
                reason=target.reason,
            ),
            target,
        )
    if not probe.cuda_available:
        return Verdict(
            "gpu_unusable",
            msg(
                "PyTorch {version} is a CUDA build but cannot use {gpus}.", version=probe.version, gpus=names
            ),
            msg(
                "Reinstalling {requirement} usually fixes this; if not, reinstall the NVIDIA driver.",
                requirement=target.requirement,
            ),
            target,
        )
    return Verdict(
        "ok", msg("PyTorch {version} uses {gpus}.", version=probe.version, gpus=names), msg("Nothing to fix.")
    )
