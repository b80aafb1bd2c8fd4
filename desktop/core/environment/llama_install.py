"""llama.cpp's Python binding (``llama-cpp-python``) installed into the app's runtime on demand.

GGUF export needs it for two things only: to check each file (llama.cpp loads it and answers) and to
make the K-quants. PyPI has only its source, which needs a C++ compiler most Windows machines lack;
its project publishes built CPU wheels on an index of its own, which pip is pointed at
(``--prefer-binary``: a built wheel over a newer source release).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from desktop.core.environment.repair import stream_command
from desktop.core.system.messages import msg

PACKAGE = "llama-cpp-python>=0.3.16,<0.4"  # the binding's API the check and the quantizer use; CI: 0.3.36
WHEELS_INDEX = "https://abetlen.github.io/llama-cpp-python/whl/cpu"


@dataclass
class InstallResult:
    """How the install ended: ``ok``, what to tell the user, and the installer's lines (the details)."""

    ok: bool
    message: str
    lines: list[str] = field(default_factory=list)


def install_command(python: str = sys.executable) -> list[str]:
    """The argument list that installs llama.cpp's binding for ``python`` (never a shell string): with uv
    where the app has it (the installed app's runtime is made by uv and has no pip), else pip. uv looks
    in the extra index first, so it takes the built wheels; pip is told to prefer them."""
    from desktop.core.environment.repair import uv_binary

    uv = uv_binary()
    if uv:
        return [uv, "pip", "install", "--python", python, "--extra-index-url", WHEELS_INDEX, PACKAGE]
    return [python, "-m", "pip", "install", "--prefer-binary", "--extra-index-url", WHEELS_INDEX, PACKAGE]


def install_llama_cpp(
    on_line: Callable[[str], None],
    on_progress: Callable[[float], None],
    cancel: threading.Event | None = None,
    command: list[str] | None = None,
) -> InstallResult:
    """Install ``llama-cpp-python``, streaming pip's lines and the share done."""
    import importlib

    command = command or install_command()
    try:
        code, cancelled, lines = stream_command(command, on_line, on_progress, cancel)
    except OSError as exc:
        return InstallResult(False, msg("The installer could not be started: {error}", error=exc))
    importlib.invalidate_caches()  # so the check that follows finds the new package
    if code == 0 and not cancelled:
        on_progress(1.0)
        return InstallResult(True, msg("llama.cpp is installed: GGUF files can be checked now."), lines)
    if cancelled:
        return InstallResult(
            False, msg("The install of llama.cpp was cancelled; nothing else changed."), lines
        )
    return InstallResult(
        False,
        msg(
            "llama.cpp could not be installed (pip exit code {code}). Check the connection (or the pip "
            "mirror), then try again; on Linux, pip can also build it with a C++ compiler.",
            code=code,
        ),
        lines,
    )
