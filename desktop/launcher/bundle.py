"""What the launcher ships (:class:`Bundle`) and how the user asked it to set up (:class:`Options`)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

PYTHON = "3.12"
"""The runtime's Python: the bundle's own (``installer/python-build.json``), else uv's download."""


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
