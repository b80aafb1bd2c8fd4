"""A PyTorch swap asked for by the app and done by the launcher at its next start.

The app cannot replace the PyTorch it runs on: on Windows its DLLs stay locked while any process of
the runtime lives (the window, the helper, a worker, its data loader workers), and uv stops at the
first locked file with PyTorch half-removed. So the Environment page writes a request into the data
folder and starts the launcher, which never loads PyTorch: it builds a complete runtime with the
requested build beside the old one, waits for every process of the old one to end, and only then
puts the new one in its place. A swap that fails leaves the old PyTorch working.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

REQUEST_FILE = "runtime-swap.json"
LAUNCHER_VARIABLE = "FINETUNE_STUDIO_LAUNCHER"
"""The launcher's path, which it gives the app it starts: the app restarts through it for a swap."""
RUNTIME_MARKER = "finetune-studio-runtime.json"
"""What the launcher writes last into a complete runtime (``desktop.launcher.runtime.MARKER``)."""


@dataclass(frozen=True)
class SwapRequest:
    """The PyTorch build to put in the runtime.

    Attributes:
        requirement: ``torch==VERSION+TAG``.
        index_url: The PyTorch index (or the user's mirror) that has it.
        companions: torchvision / torchaudio, installed now beside torch: they must match its build.
    """

    requirement: str
    index_url: str
    companions: list[str] = field(default_factory=list)


def request_path(data: Path) -> Path:
    return Path(data) / REQUEST_FILE


def ask_for_swap(data: Path, request: SwapRequest) -> Path:
    """Write the request for the launcher's next start (whole or not at all); its path."""
    path = request_path(data)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".tmp")
    partial.write_text(json.dumps(asdict(request), indent=2), encoding="utf-8")
    os.replace(partial, path)
    return path


def pending_swap(data: Path) -> SwapRequest | None:
    """The request waiting for the launcher, if there is a readable one."""
    try:
        values = json.loads(request_path(data).read_text(encoding="utf-8"))
        request = SwapRequest(**values)
    except (OSError, ValueError, TypeError):
        return None
    if not request.requirement.startswith("torch=="):
        return None
    return request


def forget_swap(data: Path) -> None:
    request_path(data).unlink(missing_ok=True)


def launcher_for_swap() -> Path | None:
    """The launcher that started this app from a runtime it manages, or ``None`` (a checkout, a pip
    install): only such a runtime can be swapped by the launcher."""
    launcher = os.environ.get(LAUNCHER_VARIABLE, "")
    if not launcher or not Path(launcher).is_file():
        return None
    if not (Path(sys.prefix) / RUNTIME_MARKER).is_file():
        return None
    return Path(launcher)
