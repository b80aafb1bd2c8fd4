"""Arrow files in the app's cache: data parsed once, then memory-mapped.

A large CSV is parsed a block at a time into an Arrow file under ``<data>/cache/tables`` and its rows
are then read from that file, mapped into memory: the text is not in the process's own heap (the
system pages it in and out as a file's pages, and gives it back when memory is short), and a second
read of the same file (same path, size and time) only maps it again, in a moment. Tokenized rows are
kept the same way under ``<data>/cache/tokenized``.

Files are written under a temporary name and renamed when complete, so a read never sees half a
file; the newest :data:`KEEP` of each kind are kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

KEEP = 4
"""Files kept of each kind (the most recently used)."""

FORMAT = 1
"""Part of every key: a change of what the files hold makes new ones."""


def key(*parts: Any) -> str:
    """A file name for what ``parts`` describe (JSON-able values)."""
    text = json.dumps([FORMAT, *parts], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def folder(kind: str) -> Path:
    """Where files of ``kind`` are kept."""
    from desktop.core.system.paths import data_dir

    return data_dir() / "cache" / kind


def has_table(kind: str, name: str) -> bool:
    """Whether the cache holds table ``name`` of ``kind`` (without opening it)."""
    return (folder(kind) / f"{name}.arrow").is_file()


def open_table(kind: str, name: str) -> Any:
    """The cached table ``name`` of ``kind``, memory-mapped (nothing is copied), or ``None`` when
    there is none (or it cannot be read: it is then made again)."""
    import pyarrow as pa

    path = folder(kind) / f"{name}.arrow"
    if not path.is_file():
        return None
    try:
        table = pa.ipc.open_file(pa.memory_map(str(path))).read_all()
    except (OSError, pa.ArrowException):
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # recently used: kept longest
    return table


def write_table(kind: str, name: str, batches: Iterable[Any], schema: Any = None) -> Any:
    """Write ``batches`` (Arrow record batches) to the cache as they come, one in memory at a time,
    and return the table memory-mapped from the finished file. ``schema``: the batches' (by default
    the first batch's; no batch at all makes a table without columns).

    Raises:
        OSError: The cache cannot be written (a read-only or full disk): nothing is left behind, and
            the caller keeps its rows in memory instead. Whatever ``batches`` raises goes through,
            also leaving nothing behind.
    """
    import itertools

    import pyarrow as pa

    where = folder(kind)
    where.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=where)
    os.close(fd)
    final = where / f"{name}.arrow"
    try:
        batches = iter(batches)
        if schema is None:
            first = next(batches, None)
            schema = first.schema if first is not None else pa.schema([])
            batches = itertools.chain([first] if first is not None else [], batches)
        with pa.OSFile(tmp, "wb") as sink, pa.ipc.new_file(sink, schema) as writer:
            for batch in batches:
                writer.write_batch(batch)
        try:
            os.replace(tmp, final)
        except OSError:
            # Windows: another process has the same file mapped (it wrote the same rows): use it.
            if not final.is_file():
                raise
            Path(tmp).unlink(missing_ok=True)
    except BaseException:
        with contextlib.suppress(OSError):
            Path(tmp).unlink(missing_ok=True)
        raise
    prune(kind)
    table = open_table(kind, name)
    if table is None:
        raise OSError(f"the cache file {final} cannot be read back")
    return table


def prune(kind: str) -> None:
    """Keep the :data:`KEEP` most recently used files of ``kind``; only files of this cache's naming
    are touched, and one that is in use (mapped, on Windows) stays until next time."""
    try:
        names = list(folder(kind).iterdir())
        mine = [p for p in names if re.fullmatch(r"[0-9a-f]{32}\.arrow", p.name)]
        mine.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return
    # Before Arrow, tokenized rows were pickled (``<key>.pkl``): those files are this cache's too.
    older = [p for p in names if re.fullmatch(r"[0-9a-f]{32}\.pkl", p.name)]
    for old in mine[KEEP:] + older:
        with contextlib.suppress(OSError):
            old.unlink()
