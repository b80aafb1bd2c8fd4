"""How much free space the setup needs on the data drive: twice the installed files where the drive has
no hard links.

uv unpacks every package into its cache and hard-links the files from there into the runtime, so they
take their space once. A drive without hard links (FAT32, exFAT: a USB disk or an SD card chosen as
the data folder) gets a copy instead, and the same files take their space twice.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

INSTALLED_SHARE = 0.6
"""The part of the setup's need that is the installed files themselves (uv's unpacked cache of them):
about 6 of the 10 GB counted for a CUDA runtime, 2 of the 3 GB for a CPU one; the rest is the PyTorch
wheel kept until the app starts, and room to spare."""


def supports_hard_links(folder: Path) -> bool:
    """Whether files in ``folder`` (or, while it does not exist yet, the nearest folder above it that
    does) can be hard-linked: a file made there is linked once, and both names are removed again.

    A folder that cannot be written to answers ``True``: the setup reports that itself, and the need is
    not doubled for a guess.
    """
    folder = _existing(Path(folder))
    try:
        handle, name = tempfile.mkstemp(prefix=".finetune-studio-link-test-", dir=folder)
    except OSError:
        return True
    os.close(handle)
    source = Path(name)
    link = source.with_name(source.name + "-link")
    try:
        os.link(source, link)
    except (OSError, NotImplementedError):
        return False
    else:
        return True
    finally:
        link.unlink(missing_ok=True)
        source.unlink(missing_ok=True)


def needed_bytes(base_bytes: int, folder: Path, links: Callable[[Path], bool] = supports_hard_links) -> int:
    """The free space a setup of ``base_bytes`` (counted with hard links) needs in ``folder``: with
    the installed files' second copy added where the drive has no hard links."""
    if links(folder):
        return base_bytes
    return base_bytes + round(base_bytes * INSTALLED_SHARE)


def _existing(path: Path) -> Path:
    while not path.exists() and path.parent != path:
        path = path.parent
    return path
