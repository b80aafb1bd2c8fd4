"""Replace the installed PyTorch with the build that fits the machine, streaming the installer's output."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from desktop.core.environment.torch_probe import TorchInfo, probe_torch
from desktop.core.environment.wheels import WheelTarget
from desktop.core.system import processes
from desktop.core.system.messages import joined, msg
from desktop.core.system.secrets import redact

COMPANIONS = ("torchvision", "torchaudio")
# Lines of uv's and pip's output that mark how far an install has come, with the share done.
PROGRESS_MARKS = (
    ("Resolved", 0.15),
    ("Collecting", 0.1),
    ("Downloading", 0.3),
    ("Prepared", 0.7),
    ("Downloaded", 0.7),
    ("Uninstalled", 0.85),
    ("Installing collected", 0.8),
    ("Installed", 1.0),
    ("Successfully installed", 1.0),
)


@dataclass(frozen=True)
class RepairPlan:
    """What will be run to swap torch.

    Attributes:
        python: The interpreter whose environment is changed.
        requirements: ``torch==VERSION+TAG`` plus the installed companions (same index and build).
        index_url: The PyTorch index, or the user's mirror.
        tool: ``uv`` or ``pip``.
        command: The argument list (never a shell string).
        previous: The torch version installed before, for recovery advice.
    """

    python: str
    requirements: list[str]
    index_url: str
    tool: str
    command: list[str]
    previous: str = ""


@dataclass
class RepairResult:
    """How a repair ended: ``ok``, the exit code, the probe afterwards and advice if it failed."""

    ok: bool
    exit_code: int
    cancelled: bool = False
    probe: TorchInfo | None = None
    message: str = ""
    lines: list[str] = field(default_factory=list)


def installed_companions(python: str = sys.executable) -> list[str]:
    """torchvision / torchaudio, if installed (they must come from the same build as torch)."""
    if python != sys.executable:
        code = f"import importlib.util as u; print(' '.join(n for n in {COMPANIONS!r} if u.find_spec(n)))"
        try:
            out = processes.run([python, "-c", code], capture_output=True, text=True, timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return []
        return out.stdout.split()
    import importlib.metadata

    found = []
    for name in COMPANIONS:
        try:
            importlib.metadata.version(name)
            found.append(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return found


def torchvision_command(python: str = sys.executable) -> list[str] | None:
    """The command that installs the torchvision built for the PyTorch installed in ``python``'s
    environment: its exact version, from the index of its build (``2.13.0+cu130``: PyTorch's cu130
    index; no tag: the package index), without dependencies, so that PyTorch stays as it is. ``None``
    when PyTorch is not installed there (or its version is not one torchvision follows)."""
    import importlib.metadata

    from desktop.core.environment.wheels import WheelTable, torchvision_for

    try:
        version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return None
    requirement = torchvision_for(version)
    if requirement is None:
        return None
    tag = version.partition("+")[2]
    index = ["--index-url", WheelTable.load().index_url(tag)] if tag else []
    uv_bin = uv_binary()
    if uv_bin:
        return [uv_bin, "pip", "install", "--python", python, "--no-deps", *index, requirement]
    return [python, "-m", "pip", "install", "--no-deps", *index, requirement]


def uv_binary() -> str | None:
    try:
        import uv

        return uv.find_uv_bin()
    except (ImportError, FileNotFoundError):
        return None


def plan_repair(
    target: WheelTarget,
    python: str = sys.executable,
    index_url: str = "",
    previous: str = "",
    use_uv: bool = True,
) -> RepairPlan:
    """Build the install command for ``target``.

    Args:
        target: The build to install (from the verdict).
        python: The interpreter whose torch is replaced.
        index_url: A mirror or custom index that replaces the PyTorch index.
        previous: The torch version installed now (``2.13.0+cpu``), for recovery advice.
        use_uv: Use uv when it is available (a dependency of the app); pip otherwise.
    """
    index = index_url.strip() or target.index_url
    packages = ["torch", *installed_companions(python)]
    requirements = [target.requirement, *packages[1:]]
    uv_bin = uv_binary() if use_uv else None
    if uv_bin:
        reinstall = [arg for name in packages for arg in ("--reinstall-package", name)]
        command = [
            uv_bin,
            "pip",
            "install",
            "--python",
            python,
            "--index-url",
            index,
            *reinstall,
            *requirements,
        ]
        return RepairPlan(python, requirements, index, "uv", command, previous)
    command = [
        python,
        "-m",
        "pip",
        "install",
        "--force-reinstall",
        "--index-url",
        index,
        "--progress-bar",
        "off",
        *requirements,
    ]
    return RepairPlan(python, requirements, index, "pip", command, previous)


def progress_of(line: str, current: float) -> float:
    """The share of the install done, estimated from one line of output (never goes back)."""
    for mark, share in PROGRESS_MARKS:
        if line.strip().startswith(mark):
            return max(current, share)
    return current


def run_repair(
    plan: RepairPlan,
    on_line: Callable[[str], None],
    on_progress: Callable[[float], None],
    cancel: threading.Event | None = None,
) -> RepairResult:
    """Run the plan, streaming each output line; re-probe torch afterwards.

    Args:
        plan: From :func:`plan_repair`.
        on_line: Receives each line of the installer's output.
        on_progress: Receives the estimated share done (0 to 1).
        cancel: Set it to stop the installer (the environment keeps what was there before, or
            the message says how to recover).
    """
    try:
        code, cancel_requested, lines = stream_command(plan.command, on_line, on_progress, cancel)
    except OSError as exc:
        return RepairResult(False, -1, message=msg("The installer could not be started: {error}", error=exc))
    probe = probe_torch(plan.python)
    if code == 0 and not cancel_requested:
        on_progress(1.0)
        return RepairResult(
            True,
            0,
            probe=probe,
            message=msg("Installed {requirements}.", requirements=", ".join(plan.requirements)),
            lines=lines,
        )
    return RepairResult(False, code, cancel_requested, probe, _recovery(plan, probe, cancel_requested), lines)


def stream_command(
    command: list[str],
    on_line: Callable[[str], None],
    on_progress: Callable[[float], None],
    cancel: threading.Event | None = None,
) -> tuple[int, bool, list[str]]:
    """Run an installer, streaming each output line (secrets redacted) and the share done as its lines
    tell it; returns its exit code, whether it was cancelled, and its lines.

    Raises:
        OSError: The installer could not be started.
    """
    lines: list[str] = []
    proc = processes.popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        encoding="utf-8",
        errors="replace",
        bufsize=1,
    )
    # Stopped with the processes it started (uv's) when ``cancel`` is set.
    ended, _ = processes.kill_when(proc, cancel.is_set if cancel is not None else None)
    done = 0.0
    try:
        on_progress(done)
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = redact(raw.rstrip())  # an index URL with a token may be echoed
            lines.append(line)
            on_line(line)
            done = progress_of(line, done)
            on_progress(done)
        code = proc.wait()
    finally:
        ended.set()
    return code, cancel is not None and cancel.is_set(), lines


def _recovery(plan: RepairPlan, probe: TorchInfo, cancelled: bool) -> str:
    what = (
        msg("The installation was cancelled.") if cancelled else msg("The installation failed (see the log).")
    )
    if probe.installed and not probe.error:
        return joined(
            what, msg("PyTorch {version} is still installed and works as before.", version=probe.version)
        )
    if plan.previous:
        tag = plan.previous.partition("+")[2] or "cpu"
        again = " ".join(plan.command[: plan.command.index("--index-url")])
        command = f"{again} --index-url https://download.pytorch.org/whl/{tag} torch=={plan.previous}"
        return joined(
            what, msg("PyTorch no longer loads. To put back what was there, run: {command}", command=command)
        )
    return joined(
        what, msg("PyTorch no longer loads. Run the repair again, or reinstall the app's environment.")
    )
