"""What the format readers share: parsing a file once into the table cache, Arrow tables as frames."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop.core.data.tables import blank_mask, trim_memory
from desktop.core.system.errors import NoRowsError
from desktop.core.system.messages import msg

Read = tuple[Any, Any, str, int, Any]
"""What a reader returns: the rows read, their numbers in the file (``None``: counted from the next
item), the word for where they are ("row", "line"), the number of the first, and the positions of the
rows that hold data (``None``: all; a view leaves the rest out without copying)."""


CACHE_FROM_BYTES = 1 << 20
"""Files of this size or more are kept in the table cache; a smaller one is parsed in a moment each
time, and would take one of the cache's places (:data:`~desktop.core.data.arrow_cache.KEEP`) from a
large file whose parsing takes seconds."""

READ_BLOCK = 1 << 24
"""Bytes of a CSV or TSV that Arrow parses at a time (16 MB; progress is said after each)."""

# The format modules look these two up here when they read (``parsing.READ_BLOCK``), not as copies of
# their own: one setting serves every format, and a test that changes it here changes it for all.


def read_cached(path: Path, kind: str, parse: Callable[[str | None], Any]) -> Any:
    """The rows of ``path`` as an Arrow table, parsed once: ``parse(name)`` parses them into the app's
    cache file ``name`` (:mod:`arrow_cache`), and the rows are read from there memory-mapped; the
    next read of the same file (same path, size and time) only maps them again. Where the cache cannot
    be written, and for a small file (:data:`CACHE_FROM_BYTES`), the rows are parsed into memory
    (``parse(None)``). ``None`` when ``parse`` says the file is not for Arrow, or Arrow refuses it."""
    import pyarrow as pa

    from desktop.core.data import arrow_cache

    small = path.stat().st_size < CACHE_FROM_BYTES
    name = cache_name(path, kind)
    table = None if small else arrow_cache.open_table("tables", name)
    if table is not None:
        return table
    try:
        try:
            table = parse(None if small else name)
        except OSError:  # the cache cannot be written (a full disk): the rows are kept in memory
            table = parse(None)
    except (pa.ArrowException, OSError):
        return None
    trim_memory()  # the parser's buffers
    return table


def cache_name(path: Path, kind: str) -> str:
    """The name of ``path``'s rows in the table cache: its path and contents (``file_digest``: an edit
    that keeps the size and the modification time is a new name), and how it is read."""
    from desktop.core.data import arrow_cache
    from desktop.core.data.digest import file_digest

    return arrow_cache.key(kind, str(path.resolve()), path.stat().st_size, file_digest(path))


def read_kept(path: Path, kind: str, read: Callable[[], Any]) -> Any:
    """The frame of a file Arrow cannot parse itself (a JSON array, a workbook), read whole by ``read``
    the first time and kept in the table cache as Arrow, so that later reads of the same file map it
    in a moment. A frame Arrow cannot hold (a column of numbers and texts mixed) is not kept: the file
    is then read whole each time, as it always was."""
    import pyarrow as pa

    from desktop.core.data import arrow_cache

    if path.stat().st_size < CACHE_FROM_BYTES:
        return read()
    name = cache_name(path, kind)
    table = arrow_cache.open_table("tables", name)
    if table is not None:  # the values as read: whole numbers stay whole beside gaps, dates dates
        return arrow_to_pandas(
            table, integer_object_nulls=True, timestamp_as_object=True, date_as_object=True
        )
    frame = read()
    try:
        table = pa.Table.from_pandas(frame, preserve_index=False)
        arrow_cache.write_table("tables", name, table.to_batches(), table.schema)
    except (pa.ArrowException, OSError, TypeError, ValueError):
        pass  # not kept: read whole next time
    return frame


def plain_lines(path: Path) -> bytes | None:
    """The first line of a file whose lines are numbered as its rows (no byte-order mark of UTF-16, no
    blank line), or ``None``."""
    import mmap

    with open(path, "rb") as fh:
        try:
            view = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return None
        with view:
            if is_utf16(view[:4]) or view.find(b"\n\n") >= 0 or view.find(b"\n\r\n") >= 0:
                return None
            end = view.find(b"\n")
            return view[: end if end >= 0 else len(view)]


def collected(batches: Any, schema: Any, cache_name: str | None) -> Any:
    """Parsed batches as one Arrow table: written as they come to the cache file ``cache_name`` and
    mapped from there, or (``None``) kept in memory."""
    import pyarrow as pa

    from desktop.core.data import arrow_cache

    if cache_name is not None:
        return arrow_cache.write_table("tables", cache_name, batches, schema)
    return pa.Table.from_batches(list(batches), schema=schema)


def reported(reader: Any, path: Path) -> Any:
    """The batches of an Arrow reader, saying how far into the file each is (a block each)."""
    from desktop.core.system import progress

    size = max(1, path.stat().st_size)
    for done, batch in enumerate(reader, 1):
        yield batch
        progress.report(min(1.0, done * READ_BLOCK / size), msg("Reading {file}", file=path.name))


def is_utf16(start: bytes) -> bool:
    """A UTF-16 file (its byte-order mark): the careful way decodes it."""
    return start.startswith((b"\xff\xfe", b"\xfe\xff"))


def arrow_to_pandas(table: Any, **options: Any) -> Any:
    """A pandas frame of an Arrow table whose text columns stay Arrow's (no copy, no Python strings),
    and so do its nested ones (chats: a list of messages each; a cell is read as Python lists and dicts
    when asked for, a missing one as ``None`` in :meth:`Table.records`); ``options``: more of
    ``Table.to_pandas``'s."""
    import pandas as pd
    import pyarrow as pa

    text = pd.StringDtype("pyarrow")

    def mapped(kind: Any) -> Any:
        if kind in (pa.string(), pa.large_string()):
            return text
        return pd.ArrowDtype(kind) if pa.types.is_nested(kind) else None

    return table.to_pandas(types_mapper=mapped, **options)


def empty_file_error(path: Path) -> NoRowsError:
    """The error for a file that holds no data."""
    return NoRowsError(
        msg("{file} is empty.", file=path.name), msg("Choose a file that holds your training examples.")
    )


def drop_empty_rows(frame: Any) -> Read:
    """The rows of ``frame`` with a value in some cell; numbered as a spreadsheet numbers them: the
    header is row 1, and blank lines count as rows."""
    import numpy as np

    blank = np.ones(len(frame), dtype=bool)
    for name in frame.columns:
        blank &= blank_mask(frame[name])
    keep = np.flatnonzero(~blank)
    return frame, None, "row", 2, None if len(keep) == len(frame) else keep
