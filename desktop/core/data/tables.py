"""Reading training data from local files or the hub, with clear errors for bad input."""

from __future__ import annotations

import bisect
import csv
import io
import json
import math
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop.core.system.errors import DataError
from desktop.core.system.messages import msg

if TYPE_CHECKING:
    import pandas as pd

    from desktop.core.settings.config import RunConfig

ENCODING_CANDIDATES = ["gb18030", "big5", "cp1252", "shift_jis", "euc_kr", "utf_16"]


@dataclass
class Table:
    """Rows of data with the columns of the source, plus where each row is in its file.

    A table can be a view: the rows ``rows`` of a larger frame, in that order. Taking rows (a split,
    rows left out, a chunk) makes a view and copies nothing, so a file of millions of rows is in memory
    once however it is split and checked; :meth:`column` copies one column of the view when asked.

    Attributes:
        base: The rows read (``pandas.DataFrame``, Arrow-backed for a large CSV); blank cells are
            ``None``. A view uses only its ``rows`` of it: use :meth:`column`, :meth:`records` or
            :attr:`frame`, never ``base`` directly.
        source: The file name(s) or hub id, for messages.
    """

    base: pd.DataFrame
    source: str
    # (first row, (file name, "row" or "line"), line numbers or None, number of the first row) per source file
    segments: list[tuple[int, tuple[str, str], list[int] | None, int]] = field(
        default_factory=list, repr=False
    )
    # position of each row among the rows as read (to find it in its file), or None: the same as its index
    origin: Any = field(default=None, repr=False)
    # position of each row in ``base``, or None: every row of ``base``, in order
    rows: Any = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.base) if self.rows is None else len(self.rows)

    def __reduce__(self) -> tuple[Any, ...]:
        # A view is sent to another process (a chunk to tokenize) with its own rows only.
        return (Table, (self.frame, self.source, self.segments, self.origin))

    @property
    def columns(self) -> list[str]:
        """The column names."""
        return [str(c) for c in self.base.columns]

    @property
    def frame(self) -> pd.DataFrame:
        """The rows as a ``pandas.DataFrame`` (of a view: a copy of its rows; for small tables)."""
        if self.rows is None:
            return self.base
        import pandas as pd

        names = self.base.columns
        return pd.DataFrame({name: self.column(name) for name in names}, columns=names)

    def column(self, name: str) -> pd.Series:
        """One column's values in the table's order (a ``pandas.Series`` indexed from 0)."""
        values = self.base[name]
        if self.rows is None:
            return values
        return _take_series(values, self.rows)

    def compact(self) -> Table:
        """This table with its own rows only (a view no longer keeps the whole frame it is taken from)."""
        return self if self.rows is None else Table(self.frame, self.source, self.segments, self.origin)

    def head(self, count: int) -> Table:
        """A view of the first ``count`` rows."""
        return self if count >= len(self) else self.take(range(max(0, count)))

    def records(self, limit: int | None = None) -> list[dict[str, Any]]:
        """The first ``limit`` rows (all when ``None``) as ``{column: value}``."""
        return (self if limit is None else self.head(limit)).frame.to_dict("records")

    def blank(self, name: str) -> Any:
        """Which rows of the column hold no usable value (:func:`is_blank`), as a numpy array."""
        if self.rows is None:
            return blank_mask(self.base[name])
        if len(self.rows) > len(self.base) // 4:  # most of the rows: measured in place, then picked
            return blank_mask(self.base[name])[self.rows]
        return blank_mask(self.column(name))

    def locate(self, index: int) -> str:
        """How a user finds row ``index`` in the source, e.g. ``reviews.csv row 7``."""
        index = int(self.origin[index]) if self.origin is not None else index
        starts = [s[0] for s in self.segments]
        start, (name, word), numbers, first = self.segments[bisect.bisect_right(starts, index) - 1]
        number = int(numbers[index - start]) if numbers is not None else index - start + first
        if word == "line":
            return msg("{file} line {number}", file=name, number=number)
        return msg("{file} row {number}", file=name, number=number)

    def locate_many(self, indices: list[int], limit: int = 5) -> str:
        """A short list of row locations: the first ``limit`` of them and how many more."""
        listed = ""
        for index in indices[:limit]:
            where = self.locate(index)
            listed = msg("{items}, {item}", items=listed, item=where) if listed else where
        more = len(indices) - limit
        return msg("{items} and {more} more", items=listed, more=more) if more > 0 else listed

    def take(self, indices: Any) -> Table:
        """A view of the given rows (a list, range or array of positions), which keep their locations."""
        import numpy as np

        positions = np.asarray(indices, dtype=np.int64)
        rows = self.rows[positions] if self.rows is not None else positions
        origin = self.origin[positions] if self.origin is not None else positions
        return Table(self.base, self.source, self.segments, origin, rows)

    def numbers(self) -> tuple[tuple[str, str], Any]:
        """The label of a table read from one file and each row's number in it (for joining files)."""
        import numpy as np

        (_, label, numbers, first), *more = self.segments
        if more:
            raise ValueError("a table of several files")
        origin = self.origin if self.origin is not None else np.arange(len(self))
        return label, (np.asarray(numbers)[origin] if numbers is not None else origin + first)


def _take_series(values: Any, rows: Any) -> Any:
    """``values`` at positions ``rows`` as a new Series indexed from 0. Arrow-backed text is taken a
    chunk at a time: Arrow's own take of a chunked column joins its chunks first (even to take no
    row), a copy of the whole column (200 MB for the review texts of a 1.75 M-row file)."""
    import numpy as np
    import pandas as pd

    array = values.array
    if not isinstance(array, pd.arrays.ArrowStringArray):
        return values.take(rows).reset_index(drop=True)
    import pyarrow as pa

    order = None
    if len(rows) > 1 and not bool(np.all(rows[1:] >= rows[:-1])):
        order = np.argsort(rows, kind="stable")
        rows = rows[order]
    chunked = array.__arrow_array__()
    bounds = np.cumsum([0] + [len(c) for c in chunked.chunks])
    cuts = np.searchsorted(rows, bounds)
    pieces = [
        chunk.take(pa.array(rows[cuts[i] : cuts[i + 1]] - bounds[i]))
        for i, chunk in enumerate(chunked.chunks)
        if cuts[i + 1] > cuts[i]
    ]
    taken = pa.chunked_array(pieces, type=chunked.type)
    if order is not None:  # back in the order asked: a take of the rows taken, not of the column
        taken = taken.take(pa.array(np.argsort(order, kind="stable")))
    return pd.Series(type(array)(taken), name=values.name, dtype=values.dtype)


# --------------------------------------------------------------------------- encodings


def decode_text(raw: bytes, name: str) -> str:
    """Decode a text file: UTF-8 (with or without BOM), UTF-16, GBK/GB18030, Big5 and others.

    Raises:
        DataError: No common encoding reads the file.
    """
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return raw.decode("utf-16")
    bom = raw.startswith(b"\xef\xbb\xbf")
    try:
        return raw[3:].decode("utf-8") if bom else raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        mixed = _mixed_utf8(raw, exc.start + (3 if bom else 0), name)
        if mixed is not None or bom:
            raise mixed or _unreadable(name) from None
    encoding = guess_encoding(raw)
    text = raw.decode(encoding, errors="strict") if encoding else ""
    if not encoding or "\x00" in text:
        raise _unreadable(name)
    return text


def guess_encoding(raw: bytes) -> str | None:
    """The most likely of :data:`ENCODING_CANDIDATES` for bytes that are not UTF-8, or ``None``.

    charset-normalizer scores each candidate; on a tie (a short file often reads cleanly as both GBK
    and EUC-KR) the order of the candidates decides, and GB18030 comes first: our users' files.
    """
    from charset_normalizer import from_bytes

    matches = list(from_bytes(raw, cp_isolation=ENCODING_CANDIDATES))
    if not matches:
        return None
    rank = {name: i for i, name in enumerate(ENCODING_CANDIDATES)}
    best = min(
        matches,
        key=lambda m: (round(m.chaos, 3), -round(m.coherence, 3), rank.get(m.encoding, len(rank))),
    )
    return best.encoding


def _unreadable(name: str) -> DataError:
    return DataError(
        msg("{file} is not readable text in any common encoding (UTF-8, GBK, Big5, ...).", file=name),
        msg("Open it in a spreadsheet or editor and save it again as UTF-8 CSV."),
    )


def _mixed_utf8(raw: bytes, first_bad: int, name: str) -> DataError | None:
    """A file in UTF-8 but for a few places (lines pasted from a file in another encoding): decoding it
    all in some other encoding would garble every Chinese character, so it is refused, naming the first
    bad line. ``None`` when the file is not mostly UTF-8 (then its encoding is detected)."""
    wide = len(raw) - len(raw.translate(None, bytes(range(0x80, 0x100))))  # bytes of non-ASCII text
    bad = raw.decode("utf-8", errors="replace").count("\ufffd")
    if wide < 16 or bad > 0.02 * wide:
        return None
    line = raw.count(b"\n", 0, first_bad) + 1
    return DataError(
        msg(
            "{file} is UTF-8 except at line {line}, which holds text in another encoding (pasted from "
            "another file, perhaps).",
            file=name,
            line=line,
        ),
        msg("Fix that line (type it again, or copy it from a UTF-8 copy of its source), then try again."),
    )


# --------------------------------------------------------------------------- reading files


def read_file(path: str | Path) -> Table:
    """Read one local data file into a :class:`Table`.

    Raises:
        DataError: The file is missing, empty, unreadable or malformed; the message says where.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(
            msg("The data file {path} does not exist.", path=str(path)),
            msg("Check the path, or pick the file again."),
        )
    suffix = path.suffix.lower()
    reader = _READERS.get(suffix)
    if reader is None:
        raise DataError(
            msg("{file}: files of type {suffix} are not supported.", file=path.name, suffix=suffix)
            if suffix
            else msg("{file}: files without a type (.csv, .jsonl...) are not supported.", file=path.name),
            msg("Use CSV, TSV, JSON, JSONL, Parquet, TXT or Excel (.xlsx)."),
        )
    if path.stat().st_size == 0:
        raise _empty(path)
    frame, numbers, word, offset, rows = reader(path)
    if (len(frame) if rows is None else len(rows)) == 0:
        raise DataError(
            msg("{file} has no data rows.", file=path.name), msg("Add examples below the header row.")
        )
    frame.columns = [str(c).strip() for c in frame.columns]
    frame = _nulls_to_none(frame)
    return Table(frame, path.name, [(0, (path.name, word), numbers, offset)], rows, rows)


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


def _read_delimited(path: Path, sep: str) -> Read:
    fast = _read_delimited_fast(path, sep)
    if fast is not None:
        return fast
    import pandas as pd

    text = decode_text(path.read_bytes(), path.name)
    if not text.strip():
        raise _empty(path)
    quoting = csv.QUOTE_NONE if sep == "\t" else csv.QUOTE_MINIMAL
    try:
        frame = pd.read_csv(
            io.StringIO(text),
            sep=sep,
            dtype=str,
            keep_default_na=False,
            quoting=quoting,
            skip_blank_lines=False,
        )
    except pd.errors.ParserError as exc:
        raise DataError(
            msg(
                "{file} is not a well-formed {kind} file: {error}",
                file=path.name,
                kind="TSV" if sep == chr(9) else "CSV",
                error=exc,
            ),
            msg("Every row needs as many fields as the header; quote texts that contain the separator."),
        ) from None
    except pd.errors.EmptyDataError:
        raise _empty(path) from None
    return _drop_empty_rows(frame)


def _read_delimited_fast(path: Path, sep: str) -> Read | None:
    """A UTF-8 CSV or TSV read by Arrow's parser (multithreaded, from the file, no Python string of it
    whole): ten times faster than through pandas on a file of millions of rows, and parsed once (see
    :func:`_read_cached`). ``None`` sends the file the careful way: another encoding, a blank line
    (rows are numbered as a spreadsheet numbers them), or anything Arrow refuses (the careful way then
    says what is wrong, and where)."""

    def parse(cache_name: str | None) -> Any:
        first = _plain_lines(path)
        header = _csv_header(first, sep) if first is not None else None
        return None if header is None else _parse_delimited(path, sep, header, cache_name)

    table = _read_cached(path, f"delimited {sep}", parse)
    return _arrow_frame(table) if table is not None else None


def _read_cached(path: Path, kind: str, parse: Callable[[str | None], Any]) -> Any:
    """The rows of ``path`` as an Arrow table, parsed once: ``parse(name)`` parses them into the app's
    cache file ``name`` (:mod:`arrow_cache`), and the rows are read from there memory-mapped; the
    next read of the same file (same path, size and time) only maps them again. Where the cache cannot
    be written, and for a small file (:data:`CACHE_FROM_BYTES`), the rows are parsed into memory
    (``parse(None)``). ``None`` when ``parse`` says the file is not for Arrow, or Arrow refuses it."""
    import pyarrow as pa

    from desktop.core.data import arrow_cache

    small = path.stat().st_size < CACHE_FROM_BYTES
    name = _cache_name(path, kind)
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


def _cache_name(path: Path, kind: str) -> str:
    """The name of ``path``'s rows in the table cache: its path, size and time, and how it is read."""
    from desktop.core.data import arrow_cache

    stat = path.stat()
    return arrow_cache.key(kind, str(path.resolve()), stat.st_size, stat.st_mtime_ns)


def _read_kept(path: Path, kind: str, read: Callable[[], Any]) -> Any:
    """The frame of a file Arrow cannot parse itself (a JSON array, a workbook), read whole by ``read``
    the first time and kept in the table cache as Arrow, so that later reads of the same file map it
    in a moment. A frame Arrow cannot hold (a column of numbers and texts mixed) is not kept: the file
    is then read whole each time, as it always was."""
    import pyarrow as pa

    from desktop.core.data import arrow_cache

    if path.stat().st_size < CACHE_FROM_BYTES:
        return read()
    name = _cache_name(path, kind)
    table = arrow_cache.open_table("tables", name)
    if table is not None:  # the values as read: whole numbers stay whole beside gaps, dates dates
        return _arrow_to_pandas(
            table, integer_object_nulls=True, timestamp_as_object=True, date_as_object=True
        )
    frame = read()
    try:
        table = pa.Table.from_pandas(frame, preserve_index=False)
        arrow_cache.write_table("tables", name, table.to_batches(), table.schema)
    except (pa.ArrowException, OSError, TypeError, ValueError):
        pass  # not kept: read whole next time
    return frame


def _plain_lines(path: Path) -> bytes | None:
    """The first line of a file whose lines are numbered as its rows (no byte-order mark of UTF-16, no
    blank line), or ``None``."""
    import mmap

    with open(path, "rb") as fh:
        try:
            view = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return None
        with view:
            if _unusual(view[:4]) or view.find(b"\n\n") >= 0 or view.find(b"\n\r\n") >= 0:
                return None
            end = view.find(b"\n")
            return view[: end if end >= 0 else len(view)]


def _parse_delimited(path: Path, sep: str, header: list[str], cache_name: str | None) -> Any:
    """The rows of a CSV or TSV as an Arrow table, parsed a block at a time (so a window can show how
    far it is, and stop) into the cache file ``cache_name`` (or kept in memory: ``None``)."""
    import pyarrow.csv as pacsv

    with pacsv.open_csv(path, **_arrow_csv_options(header, sep, READ_BLOCK)) as reader:
        batches = _reported(reader, path)
        return _collected(batches, reader.schema, cache_name)


def _read_jsonl_fast(path: Path) -> Read | None:
    """A UTF-8 JSONL file read by Arrow's JSON parser, parsed once (see :func:`_read_cached`): a file of
    a million chats or reviews without a Python object per field. ``None`` sends it the careful way: a
    blank line, another encoding, or anything Arrow refuses (a line that is not a JSON object, a field
    whose type changes): the careful way names the line."""

    def parse(cache_name: str | None) -> Any:
        first = _plain_lines(path)
        if first is None or first.startswith(b"\xef\xbb\xbf"):
            return None
        return _parse_jsonl(path, cache_name)

    table = _read_cached(path, "jsonl", parse)
    if table is None or table.num_rows == 0:
        return None
    return _arrow_to_pandas(table), None, "line", 1, None


def _parse_jsonl(path: Path, cache_name: str | None) -> Any:
    """The records of a JSONL file as an Arrow table, a block at a time (as :func:`_parse_delimited`)."""
    import pyarrow.json as pajson

    def checked(reader: Any) -> Any:
        for batch in reader:
            batch.validate(full=True)  # Arrow's JSON parser takes any bytes for text: UTF-8 only here
            yield batch

    # One thread: Arrow's parallel parse holds several blocks and their batches at once. 1.75 M rows,
    # first read: 500 -> 470 MB at the peak, 3.2 -> 3.6 s.
    with pajson.open_json(
        path, read_options=pajson.ReadOptions(block_size=READ_BLOCK, use_threads=False)
    ) as reader:
        batches = _reported(checked(reader), path)
        return _collected(batches, reader.schema, cache_name)


def _collected(batches: Any, schema: Any, cache_name: str | None) -> Any:
    """Parsed batches as one Arrow table: written as they come to the cache file ``cache_name`` and
    mapped from there, or (``None``) kept in memory."""
    import pyarrow as pa

    from desktop.core.data import arrow_cache

    if cache_name is not None:
        return arrow_cache.write_table("tables", cache_name, batches, schema)
    return pa.Table.from_batches(list(batches), schema=schema)


def _reported(reader: Any, path: Path) -> Any:
    """The batches of an Arrow reader, saying how far into the file each is (a block each)."""
    from desktop.core.system import progress

    size = max(1, path.stat().st_size)
    for done, batch in enumerate(reader, 1):
        yield batch
        progress.report(min(1.0, done * READ_BLOCK / size), msg("Reading {file}", file=path.name))


def _unusual(start: bytes) -> bool:
    """A UTF-16 file (its byte-order mark): the careful way decodes it."""
    return start.startswith((b"\xff\xfe", b"\xfe\xff"))


def _arrow_csv_options(header: list[str], sep: str, block_size: int) -> dict[str, Any]:
    """Arrow's CSV options for reading a file as the careful way reads it: every cell text, "" blank."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    return {
        "read_options": pacsv.ReadOptions(block_size=block_size),
        "parse_options": pacsv.ParseOptions(
            delimiter=sep, quote_char=False if sep == "\t" else '"', newlines_in_values=sep != "\t"
        ),
        "convert_options": pacsv.ConvertOptions(
            column_types={name: pa.large_string() for name in header},
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
        ),
    }


def _csv_header(first: bytes, sep: str) -> list[str] | None:
    """The column names in a CSV's first line; ``None`` when not UTF-8, or names repeat or are missing."""
    try:
        line = first.decode("utf-8-sig").rstrip("\r")
        quoting = csv.QUOTE_NONE if sep == "\t" else csv.QUOTE_MINIMAL
        header = next(csv.reader([line], delimiter=sep, quoting=quoting))
    except (UnicodeDecodeError, StopIteration, csv.Error):
        return None
    return header if header and len(set(header)) == len(header) else None


def _arrow_frame(table: Any) -> Read | None:
    """An Arrow table of strings as a pandas frame, Arrow-backed: the text stays in Arrow's buffers
    (no Python object per cell, no copy) and string checks run in Arrow's kernels. Rows whose every
    cell is blank are left out of the view, as the careful way leaves them; the rows are numbered as a
    spreadsheet numbers them (the header is row 1)."""
    if table.num_rows == 0:
        return None
    frame = _arrow_to_pandas(table)
    frame.columns = [str(c).lstrip("\ufeff") for c in frame.columns]
    return _drop_empty_rows(frame)


def _arrow_to_pandas(table: Any, **options: Any) -> Any:
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


def read_head(path: str | Path, rows: int = 1000) -> Table:
    """The first ``rows`` data rows of a file, in a moment however large the file: a UTF-8 CSV or TSV
    is read a block at a time until there are enough, a UTF-8 JSONL file or JSON array a record at a
    time, a workbook's first sheet a row at a time; other files are read whole.

    Raises:
        DataError: As :func:`read_file`.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    sep = {".csv": ",", ".tsv": "\t"}.get(suffix)
    if sep is not None and path.is_file():
        head = _head_delimited(path, sep, rows)
        if head is not None:
            frame, numbers, word, offset, keep = head
            return Table(frame, path.name, [(0, (path.name, word), numbers, offset)], keep, keep)
    reader = {".jsonl": _head_jsonl, ".json": _head_json_array, ".xlsx": _head_xlsx}.get(suffix)
    head = reader(path, rows) if reader is not None and path.is_file() else None
    if head is not None:  # as read_file makes its frame
        frame, numbers, word, offset, keep = head
        frame.columns = [str(c).strip() for c in frame.columns]
        return Table(_nulls_to_none(frame), path.name, [(0, (path.name, word), numbers, offset)], keep, keep)
    table = read_file(path)
    return table.take(list(range(min(rows, len(table)))))


def _head_delimited(path: Path, sep: str, rows: int) -> Read | None:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    with open(path, "rb") as fh:
        start = fh.read(4 << 20)
    if _unusual(start) or b"\n\n" in start or b"\n\r\n" in start:
        return None
    header = _csv_header(start[: start.find(b"\n") if b"\n" in start else len(start)], sep)
    if header is None:
        return None
    batches, count = [], 0
    try:
        with pacsv.open_csv(path, **_arrow_csv_options(header, sep, 1 << 20)) as reader:
            for batch in reader:
                batches.append(batch)
                count += batch.num_rows
                if count > rows:
                    break
    except (pa.ArrowInvalid, OSError):
        return None
    found = _arrow_frame(pa.Table.from_batches(batches)) if batches else None
    if found is None:
        return None
    import numpy as np

    frame, numbers, word, offset, keep = found
    return frame, numbers, word, offset, np.arange(min(rows, len(frame))) if keep is None else keep[:rows]


HEAD_JSON_BYTES = 64 << 20
"""The most of a JSON or JSONL file read for its first rows; past it (records that long, or a file that
is not what it says), the file is read whole."""


def _head_jsonl(path: Path, rows: int) -> Read | None:
    """The first ``rows`` records of a UTF-8 JSONL file, read a line at a time.

    ``None`` (no record, another encoding, a line that is not a JSON object) leaves the file to
    :func:`read_file`, which reads it whole and names what is wrong.
    """
    records: list[dict] = []
    numbers: list[int] = []
    read = 0
    with open(path, "rb") as fh:
        for number, line in enumerate(fh, 1):
            read += len(line)
            if read > HEAD_JSON_BYTES or (number == 1 and line.startswith(b"\xef\xbb\xbf")):
                return None
            if not line.strip():
                continue
            try:
                record = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                return None
            if not isinstance(record, dict):
                return None
            records.append(record)
            numbers.append(number)
            if len(records) == rows:
                break
    return _records_frame(records, numbers, "line")


def _records_frame(records: list[dict], numbers: list[int] | None, word: str) -> Read | None:
    import pandas as pd

    return (pd.DataFrame.from_records(records), numbers, word, 1, None) if records else None


def _head_json_array(path: Path, rows: int) -> Read | None:
    """The first ``rows`` records of a UTF-8 file that holds one JSON array of objects, decoded a record
    at a time from the start (a chat export of gigabytes shows its first rows in a moment).

    ``None`` (another encoding or shape, a record that does not decode) leaves the file to
    :func:`read_file`, which reads it whole and names what is wrong.
    """
    records: list[dict] = []
    try:
        for record, _text in _json_array_records(path, HEAD_JSON_BYTES):
            records.append(record)
            if len(records) == rows:
                break
    except _NotAnArray:
        return None
    return _records_frame(records, None, "item")


class _NotAnArray(Exception):
    """The file is not a UTF-8 JSON array of objects, or a record in it does not decode."""


def _json_array_records(path: Path, limit_bytes: int | None = None) -> Iterator[tuple[dict, str]]:
    """Each record of a UTF-8 file that holds one JSON array of objects, with its text in the file,
    decoded one at a time from blocks of 1 MB (an incremental decoder: a character cut at a block's end
    is whole), so that the file's records are never in memory together.

    Raises:
        _NotAnArray: Another encoding or shape, a record that does not decode, or (``limit_bytes``) a
            record not complete within that many bytes of the file.
    """
    import codecs

    decoder = json.JSONDecoder()
    decode = codecs.getincrementaldecoder("utf-8-sig")().decode
    text, at, opened, ended, first = "", 0, False, False, True
    with open(path, "rb") as fh:
        while True:
            if not opened:
                at = _skip_space(text, at)
                if at < len(text):
                    if text[at] != "[":
                        raise _NotAnArray
                    opened, at = True, at + 1
            while opened:  # the records complete in the text read so far
                start = _skip_space(text, at)
                if start == len(text):
                    break
                if text[start] == "]":  # the end; what follows it must be blank, as for json.loads
                    rest = text[start + 1 :]
                    while rest.strip(" \t\r\n") == "":
                        if ended:
                            return
                        chunk = fh.read(1 << 20)
                        ended = not chunk
                        try:
                            rest = decode(chunk, final=ended)
                        except UnicodeDecodeError:
                            break
                    raise _NotAnArray
                if not first:
                    if text[start] != ",":
                        raise _NotAnArray
                    start = _skip_space(text, start + 1)
                try:
                    record, end = decoder.raw_decode(text, start)
                except json.JSONDecodeError:  # cut off where the text read so far ends, or malformed
                    break
                if not isinstance(record, dict):
                    raise _NotAnArray
                yield record, text[start:end]
                first, at = False, end
            if ended or (limit_bytes is not None and fh.tell() >= limit_bytes):
                raise _NotAnArray
            chunk = fh.read(1 << 20)
            ended = not chunk
            try:
                text = text[at:] + decode(chunk, final=ended)
            except UnicodeDecodeError:
                raise _NotAnArray from None
            at = 0


class _JsonLines(io.RawIOBase):
    """The records of a JSON array as the bytes of JSON Lines, for Arrow's JSON parser (which reads no
    arrays), made as the parser asks for them. A record written over several lines is written again on
    one. ``failed``: the records ended early (the file is not what it says)."""

    def __init__(self, records: Iterator[tuple[dict, str]]) -> None:
        super().__init__()
        self._records: Iterator[tuple[dict, str]] | None = records
        self._buffer = bytearray()
        self.failed = False

    def readable(self) -> bool:
        return True

    def readinto(self, out: Any) -> int:
        while len(self._buffer) < len(out) and self._records is not None:
            try:
                record, text = next(self._records)
            except StopIteration:
                self._records = None
                break
            except _NotAnArray:
                self._records, self.failed = None, True
                break
            if "\n" in text or "\r" in text:
                text = json.dumps(record)
            self._buffer += text.encode("utf-8")
            self._buffer += b"\n"
        count = min(len(out), len(self._buffer))
        out[:count] = self._buffer[:count]
        del self._buffer[:count]
        return count


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def _empty(path: Path) -> DataError:
    return DataError(
        msg("{file} is empty.", file=path.name), msg("Choose a file that holds your training examples.")
    )


def _drop_empty_rows(frame: Any) -> Read:
    """The rows of ``frame`` with a value in some cell; numbered as a spreadsheet numbers them: the
    header is row 1, and blank lines count as rows."""
    import numpy as np

    blank = np.ones(len(frame), dtype=bool)
    for name in frame.columns:
        blank &= blank_mask(frame[name])
    keep = np.flatnonzero(~blank)
    return frame, None, "row", 2, None if len(keep) == len(frame) else keep


def _read_csv(path: Path) -> Read:
    return _read_delimited(path, ",")


def _read_tsv(path: Path) -> Read:
    return _read_delimited(path, "\t")


_LINE_END = re.compile(r"\r\n|\r|\n")
"""What ends a line of a text file (as Arrow's parser takes them): not the other breaks Python's
``splitlines`` knows (form feed, U+2028...), which sit inside lines of scraped text."""


def _read_txt(path: Path) -> Read:
    fast = _read_txt_fast(path)
    if fast is not None:
        return fast
    import pandas as pd

    text = decode_text(path.read_bytes(), path.name)
    lines = [(n, line.strip()) for n, line in enumerate(_LINE_END.split(text), 1) if line.strip()]
    if not lines:
        raise _empty(path)
    return pd.DataFrame({"text": [t for _, t in lines]}), [n for n, _ in lines], "line", 1, None


TXT_DELIMITER = "\x1f"
"""The field separator Arrow is given for a text file (the ASCII unit separator: never in a text; a
line holding one makes Arrow refuse the file, which is then read the careful way)."""


def _read_txt_fast(path: Path) -> Read | None:
    """A UTF-8 text file read by Arrow, one example a line, parsed once (see :func:`_read_cached`):
    a corpus of millions of lines without a Python string per line. Lines are stripped; blank ones are
    left out of the view and keep their numbers. ``None`` sends the file the careful way (another
    encoding)."""

    def parse(cache_name: str | None) -> Any:
        with open(path, "rb") as fh:
            if _unusual(fh.read(4)):
                return None
        return _parse_txt(path, cache_name)

    table = _read_cached(path, "txt", parse)
    if table is None or table.num_rows == 0:
        return None
    frame = _arrow_to_pandas(table)
    import numpy as np

    keep = np.flatnonzero(~blank_mask(frame["text"]))
    if len(keep) == 0:
        raise _empty(path)
    return frame, None, "line", 1, None if len(keep) == len(frame) else keep


def _parse_txt(path: Path, cache_name: str | None) -> Any:
    """The lines of a text file as an Arrow table of one column, ``text``, stripped, a block at a
    time (as :func:`_parse_delimited`)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    schema = pa.schema([("text", pa.large_string())])
    options = {
        "read_options": pacsv.ReadOptions(block_size=READ_BLOCK, column_names=["text"]),
        "parse_options": pacsv.ParseOptions(
            delimiter=TXT_DELIMITER, quote_char=False, escape_char=False, ignore_empty_lines=False
        ),
        "convert_options": pacsv.ConvertOptions(
            column_types={"text": pa.large_string()}, strings_can_be_null=False
        ),
    }

    def stripped(reader: Any) -> Any:
        for batch in reader:
            yield pa.record_batch([pc.utf8_trim_whitespace(batch.column(0))], schema=schema)

    with pacsv.open_csv(path, **options) as reader:
        batches = _reported(stripped(reader), path)
        return _collected(batches, schema, cache_name)


def _read_jsonl(path: Path) -> Read:
    fast = _read_jsonl_fast(path)
    if fast is not None:
        return fast
    import pandas as pd

    text = decode_text(path.read_bytes(), path.name)
    records, numbers = [], []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(
                msg(
                    "{file} line {line} is not valid JSON ({error} at column {column}).",
                    file=path.name,
                    line=n,
                    error=exc.msg.removesuffix(" at"),  # "Unterminated string starting at"
                    column=exc.colno,
                ),
                msg("Each line must hold one JSON object; fix or remove that line."),
            ) from None
        if not isinstance(record, dict):
            raise DataError(
                msg("{file} line {line} is not a JSON object.", file=path.name, line=n),
                msg("Each line must look like {example}.", example='{"text": "...", "label": "..."}'),
            )
        records.append(record)
        numbers.append(n)
    if not records:
        raise _empty(path)
    return pd.DataFrame.from_records(records), numbers, "line", 1, None


def _read_json(path: Path) -> Read:
    fast = _read_json_fast(path)
    if fast is not None:
        return fast
    return _read_kept(path, "json", lambda: _json_frame(path)), None, "item", 1, None


def _read_json_fast(path: Path) -> Read | None:
    """A UTF-8 JSON array of records (reviews, instructions, chats) parsed by Arrow's JSON parser, fed
    one record at a time as JSON Lines, once (see :func:`_read_cached`): the file's records are never
    in memory together as Python objects (a 260 MB array: 1.9 GB so). ``None`` sends the file the whole
    way, which reads it as before: a small one (parsed in a moment), a field whose type changes,
    another encoding or shape, a broken file (the whole read names what is wrong)."""
    if path.stat().st_size < CACHE_FROM_BYTES:
        return None
    records = _json_array_records(path, HEAD_JSON_BYTES)
    try:
        first, _text = next(records, ({}, ""))
    except _NotAnArray:
        return None
    finally:
        records.close()
    if not first:
        return None

    def parse(cache_name: str | None) -> Any:
        import pyarrow as pa
        import pyarrow.json as pajson

        lines = _JsonLines(_json_array_records(path))

        def checked(reader: Any) -> Any:
            for batch in reader:
                batch.validate(full=True)
                yield batch
            if lines.failed:
                raise pa.ArrowInvalid("not a JSON array of objects")

        # One thread (see _parse_jsonl): Python's feeder sets the pace; 503 -> 484 MB at the peak.
        with pajson.open_json(
            lines, read_options=pajson.ReadOptions(block_size=READ_BLOCK, use_threads=False)
        ) as reader:
            return _collected(_reported(checked(reader), path), reader.schema, cache_name)

    table = _read_cached(path, "json-lines", parse)
    if table is None or table.num_rows == 0:
        return None
    return _arrow_to_pandas(table), None, "item", 1, None


def _json_frame(path: Path) -> Any:
    import pandas as pd

    text = decode_text(path.read_bytes(), path.name)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(
            msg(
                "{file} is not valid JSON: {error} at line {line}, column {column}.",
                file=path.name,
                error=exc.msg.removesuffix(" at"),  # "Unterminated string starting at"
                line=exc.lineno,
                column=exc.colno,
            ),
            msg("Fix the file there. For one example per line, name the file .jsonl."),
        ) from None
    if isinstance(data, dict):
        lists = [v for v in data.values() if isinstance(v, list)]
        data = lists[0] if len(lists) == 1 else data
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise DataError(
            msg("{file} does not hold a list of records.", file=path.name),
            'Write it as [{"text": "...", "label": "..."}, ...].',
        )
    return pd.DataFrame.from_records(data)


def _read_parquet(path: Path) -> Read:
    """A Parquet file decompressed once, a row group at a time, into the cache (see
    :func:`_read_cached`), and read from there memory-mapped; text columns stay Arrow's."""
    table = _read_cached(path, "parquet", lambda cache_name: _parse_parquet(path, cache_name))
    if table is not None:
        return _arrow_to_pandas(table), None, "row", 1, None
    import pandas as pd

    try:  # what Arrow refused, read whole by pandas, which says why it cannot be read
        return pd.read_parquet(path), None, "row", 1, None
    except Exception as exc:
        raise DataError(
            msg("{file} is not a readable Parquet file ({error}).", file=path.name, error=exc),
            msg("Export it again."),
        ) from None


def _parse_parquet(path: Path, cache_name: str | None) -> Any:
    """The rows of a Parquet file as an Arrow table, a row group at a time (progress and stop as
    :func:`_parse_delimited`); text columns as ``large_string`` (pandas takes them without a copy)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from desktop.core.system import progress

    with pq.ParquetFile(path) as source:
        if source.metadata.num_rows == 0:
            return None
        schema = pa.schema(
            [
                field.with_type(pa.large_string()) if pa.types.is_string(field.type) else field
                for field in source.schema_arrow
            ],
            metadata=source.schema_arrow.metadata,  # pandas' own: an index it saved is one again
        )
        total = max(1, source.metadata.num_rows)

        def batches() -> Any:
            done = 0
            for batch in source.iter_batches(batch_size=1 << 16):
                done += batch.num_rows
                yield batch.cast(schema)
                progress.report(done / total, msg("Reading {file}", file=path.name))

        return _collected(batches(), schema, cache_name)


def _read_xlsx(path: Path) -> Read:
    return _drop_empty_rows(_read_kept(path, "xlsx", lambda: _excel_frame(path)))


def _head_xlsx(path: Path, rows: int) -> Read | None:
    """The first ``rows`` rows of a workbook's first sheet, the rest of the sheet left unread (150,000
    rows: 1.6 s instead of 8.4 s); ``None`` when the whole sheet is in the table cache, which maps it
    in a moment (see :func:`_read_kept`)."""
    from desktop.core.data import arrow_cache

    if arrow_cache.has_table("tables", _cache_name(path, "xlsx")):
        return None
    frame, numbers, word, offset, keep = _drop_empty_rows(_excel_frame(path, rows))
    if len(frame) == 0 or (keep is not None and len(keep) == 0):
        return None  # no data in the first rows: read whole, which says so or finds the data below
    return frame, numbers, word, offset, keep


def _excel_frame(path: Path, rows: int | None = None) -> Any:
    """The first sheet of a workbook, or its first ``rows`` rows."""
    import pandas as pd

    try:
        return pd.read_excel(path, sheet_name=0, dtype=object, engine="openpyxl", nrows=rows)
    except Exception as exc:
        raise DataError(
            msg("{file} is not a readable Excel workbook ({error}).", file=path.name, error=exc),
            msg("Save it from Excel as .xlsx (the first sheet is used, with a header row)."),
        ) from None


_READERS = {
    ".csv": _read_csv,
    ".tsv": _read_tsv,
    ".txt": _read_txt,
    ".jsonl": _read_jsonl,
    ".json": _read_json,
    ".parquet": _read_parquet,
    ".xlsx": _read_xlsx,
}


def _nulls_to_none(frame: Any) -> Any:
    """Missing cells as ``None`` (the rest of the app's one spelling of "no value"). A column without
    missing cells is left as it is: Arrow's strings (a CSV read by Arrow: a blank cell is ``""``) stay
    in Arrow's buffers, numbers in NumPy's (rows, lists and iteration give them as Python numbers; a
    Python object each took 63 MB for the ids of a 1.75 M-row JSON file)."""
    import numpy as np
    import pandas as pd

    for name in list(frame.columns):
        column = frame[name]
        plain = isinstance(column.array, pd.arrays.ArrowStringArray) or (
            isinstance(column.dtype, np.dtype) and column.dtype.kind in "iufb"
        )
        if plain and not column.isna().any():
            continue
        if isinstance(column.dtype, pd.ArrowDtype) and column.dtype.pyarrow_dtype.num_fields:
            continue  # nested (chats): Arrow's, a missing cell ``None`` in records, ``pd.NA`` alone
        values = column.astype(object)
        frame[name] = values.where(values.notna(), None)
    return frame


def concat(tables: list[Table]) -> Table:
    """Join tables (several files of one dataset) into one."""
    import pandas as pd

    if len(tables) == 1:
        return tables[0]
    frame = pd.concat([t.frame for t in tables], ignore_index=True)
    segments, start = [], 0
    for t in tables:
        label, numbers = t.numbers()
        segments.append((start, label, numbers, 0))
        start += len(t)
    return Table(_nulls_to_none(frame), ", ".join(t.source for t in tables), segments)


def read_files(paths: list[str]) -> Table:
    """Read and join local data files (progress: each file its share by size, see :mod:`progress`)."""
    from desktop.core.system import progress

    sizes = []
    for p in paths:
        try:
            sizes.append(max(1, Path(p).stat().st_size))
        except OSError:
            sizes.append(1)  # read_file says what is wrong with it
    total, done, tables = sum(sizes), 0, []
    for p, size in zip(paths, sizes, strict=True):
        with progress.part(done / total, (done + size) / total):
            tables.append(read_file(p))
        done += size
    return concat(tables)


def read_hub(hub_id: str, config_name: str, split: str) -> Table:
    """Load one split of a hub dataset from its downloaded copy (Hugging Face's or ModelScope's cache).

    A dataset is downloaded as its own step (:mod:`desktop.core.hub.downloads`), never inside loading.

    Raises:
        DataError: The dataset is not on this computer yet, or the configuration or split cannot be loaded.
    """
    import datasets

    from desktop.core.hub.clients import local_copy

    folder = local_copy(hub_id, dataset=True)
    if folder is None:
        raise DataError(
            msg("The hub dataset {name} is not on this computer yet.", name=hub_id),
            msg(
                "Download it first: Download on the Model & data step, or "
                "finetune-studio-cli datasets download {name}",
                name=hub_id,
            ),
        )
    try:
        ds = datasets.load_dataset(str(folder), config_name or None, split=split)
    except Exception as exc:
        raise DataError(
            msg(
                "The hub dataset {name} ({split}) could not be loaded: {error}",
                name=hub_id,
                split=split,
                error=exc,
            ),
            msg("Check the configuration and split names (the dataset's page lists them)."),
        ) from None
    frame = _nulls_to_none(_arrow_to_pandas(ds.with_format("arrow")[:]))  # the cache's file, mapped
    if len(frame) == 0:
        raise DataError(
            msg("The split {split} of {name} has no rows.", split=split, name=hub_id),
            msg("Choose another split."),
        )
    return Table(frame, f"{hub_id}[{split}]", [(0, (f"{hub_id}[{split}]", "row"), None, 1)])


# --------------------------------------------------------------------------- train / eval


def load_train_eval(config: RunConfig) -> tuple[Table, Table | None]:
    """The training rows and the evaluation rows (or ``None``) as the config asks."""
    data, val = config.data, config.validation
    if data.hub_id:
        train = read_hub(data.hub_id, data.hub_config, data.split)
        if val.split:
            return train, read_hub(data.hub_id, data.hub_config, val.split)
    else:
        train = read_files(data.files)
    if val.files:
        return train, read_files(val.files)
    if val.fraction <= 0 or len(train) < 2:
        return train, None
    return split_fraction(train, val.fraction, val.seed)


def split_fraction(table: Table, fraction: float, seed: int) -> tuple[Table, Table]:
    """Hold out ``fraction`` of the rows (at least one) at random, reproducibly; both parts keep the
    rows' order and are views of ``table`` (nothing copied)."""
    import numpy as np

    order = np.random.default_rng(seed).permutation(len(table))
    n_eval = min(len(table) - 1, max(1, math.floor(len(table) * fraction + 0.5)))
    return table.take(np.sort(order[n_eval:])), table.take(np.sort(order[:n_eval]))


def trim_memory() -> None:
    """Give memory freed by large transient work (Arrow's parse buffers, a table just split) back to
    the system. Arrow's allocator and glibc's keep freed memory for reuse: after reading a 200 MB file,
    about as much again stays with the process until then."""
    import sys

    pyarrow = sys.modules.get("pyarrow")
    if pyarrow is not None:
        pyarrow.default_memory_pool().release_unused()
    if sys.platform.startswith("linux"):
        import contextlib
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6").malloc_trim(0)


def blank_mask(values: Any) -> Any:
    """:func:`is_blank` of every value of a pandas Series, as a numpy array (vectorised; Arrow-backed
    text is measured where it lies, without a trimmed copy)."""
    import pandas as pd

    missing = values.isna().to_numpy()
    if isinstance(values.array, pd.arrays.ArrowStringArray):
        import pyarrow.compute as pc

        text = values.array.__arrow_array__()
        blank = pc.or_(pc.equal(pc.binary_length(text), 0), pc.utf8_is_space(text))
        return missing | blank.fill_null(False).to_numpy(zero_copy_only=False)
    if values.dtype != object and not str(values.dtype).startswith(("str", "string")):
        return missing
    try:
        stripped = values.str.strip()  # not a string (a number, a list): NaN, so not blank
    except AttributeError:  # no strings at all (a column of numbers from Excel): nothing blank but gaps
        return missing
    return missing | (stripped == "").fillna(False).to_numpy(dtype=bool)


def is_blank(value: Any) -> bool:
    """Whether a cell holds no usable value (missing, NaN, or only whitespace)."""
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    pandas = sys.modules.get("pandas")
    if pandas is not None and value is pandas.NA:  # a missing cell of a nested Arrow column
        return True
    return isinstance(value, str) and not value.strip()
