"""A model's weight files read into the system's file cache, with Python's lock released, before a
library reads them holding it.

PyTorch and safetensors copy weights out of a memory-mapped file, and ``torch.load`` reads a
checkpoint, inside C calls that keep the interpreter's lock: a page read from the disk there makes
every other thread wait, the window too. Python's own reads release the lock, so reading the files
first moves the wait for the disk out of it. Figures: docs/decisions/004-weight-read-ahead.md.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from pathlib import Path

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")
"""The suffixes of files that hold a model's weights or a checkpoint's tensors."""
CHUNK_BYTES = 1 << 20
"""The buffer the files are read through: making a larger one holds Python's lock while the system
hands its pages over (16 MB: 13-49 ms; 1 MB: 1-3 ms; docs/decisions/004-weight-read-ahead.md)."""
MEMORY_SHARE = 4
"""Files are read ahead only if all of them fit in this fraction (1/4) of the memory available: larger
ones would push their own first pages out of the cache before the library reads them."""


def read_ahead(folder: str | Path) -> int:
    """Read the weight files of ``folder`` once, a chunk at a time; the bytes read (0: not a folder,
    no weights, too large for the memory available, or unreadable: the library reads them as before)."""
    import psutil

    folder = Path(folder)
    with contextlib.suppress(OSError):
        if not folder.is_dir():
            return 0
        files = [p for p in sorted(folder.iterdir()) if p.suffix in WEIGHT_SUFFIXES and p.is_file()]
        total = sum(p.stat().st_size for p in files)
        if not total or total > psutil.virtual_memory().available // MEMORY_SHARE:
            return 0
        return _read(files, bytearray(min(CHUNK_BYTES, total)))
    return 0


def read_folders(*folders: Path) -> int:
    """Read every file under ``folders`` once, so that the system has them in memory when they are
    needed; the bytes read. Meant for a background thread, with the same effect as :func:`read_ahead`.

    The window's thread imports the app's own modules as it needs them (the histogram, the plots, the
    hub): after a reboot, or once other work has pushed them out of the system's cache, each read waited
    for the disk there, 70-210 ms apiece on this project's test machine under load.
    """
    return _read((path for folder in folders for path in folder.rglob("*")), bytearray(CHUNK_BYTES))


def _read(paths: Iterable[Path], buffer: bytearray) -> int:
    """Read each of ``paths`` that is a file through ``buffer``; the bytes read. One that is gone
    meanwhile, or not readable, is skipped: nothing to gain from it."""
    done = 0
    for path in paths:
        try:
            if not path.is_file():
                continue
            with open(path, "rb", buffering=0) as file:
                while count := file.readinto(buffer):
                    done += count
        except OSError:
            continue
    return done
