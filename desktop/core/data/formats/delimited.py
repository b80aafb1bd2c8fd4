"""CSV and TSV files: Arrow's parser for UTF-8, pandas' the careful way, and the first rows alone."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from desktop.core.data.encodings import decode_text
from desktop.core.data.formats import parsing
from desktop.core.data.formats.parsing import (
    Read,
    arrow_to_pandas,
    collected,
    drop_empty_rows,
    empty_file_error,
    is_utf16,
    plain_lines,
    read_cached,
    reported,
)
from desktop.core.system.errors import DataError
from desktop.core.system.messages import msg


def read_csv(path: Path) -> Read:
    """The rows of a CSV file (comma-separated, quoted fields; a TSV named ``.csv`` as TSV)."""
    return _read_delimited(path, csv_separator(path))


def csv_separator(path: Path) -> str:
    """``","``, or a tab for a file named ``.csv`` whose header line has tabs and no comma: a TSV that
    a program saved as ``.csv`` (read with commas it was one column holding every name and value)."""
    with open(path, "rb") as fh:
        start = fh.read(64 << 10)
    header = next((line for line in start.splitlines() if line.strip(b" \t\r\x00\xef\xbb\xbf")), b"")
    return "\t" if b"\t" in header and b"," not in header else ","


def read_tsv(path: Path) -> Read:
    """The rows of a TSV file (tab-separated, no quoting)."""
    return _read_delimited(path, "\t")


def _read_delimited(path: Path, sep: str) -> Read:
    fast = _read_delimited_fast(path, sep)
    if fast is not None:
        return fast
    import pandas as pd

    text = decode_text(path.read_bytes(), path.name)
    if not text.strip():
        raise empty_file_error(path)
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
        raise empty_file_error(path) from None
    return drop_empty_rows(frame)


def _read_delimited_fast(path: Path, sep: str) -> Read | None:
    """A UTF-8 CSV or TSV read by Arrow's parser (multithreaded, from the file, no Python string of it
    whole): ten times faster than through pandas on a file of millions of rows, and parsed once (see
    :func:`parsing.read_cached`). ``None`` sends the file the careful way: another encoding, a blank line
    (rows are numbered as a spreadsheet numbers them), or anything Arrow refuses (the careful way then
    says what is wrong, and where)."""

    def parse(cache_name: str | None) -> Any:
        first = plain_lines(path)
        header = _csv_header(first, sep) if first is not None else None
        return None if header is None else _parse_delimited(path, sep, header, cache_name)

    table = read_cached(path, f"delimited {sep}", parse)
    return _arrow_frame(table) if table is not None else None


def _parse_delimited(path: Path, sep: str, header: list[str], cache_name: str | None) -> Any:
    """The rows of a CSV or TSV as an Arrow table, parsed a block at a time (so a window can show how
    far it is, and stop) into the cache file ``cache_name`` (or kept in memory: ``None``)."""
    import pyarrow.csv as pacsv

    with pacsv.open_csv(path, **_arrow_csv_options(header, sep, parsing.READ_BLOCK)) as reader:
        batches = reported(reader, path)
        return collected(batches, reader.schema, cache_name)


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
    frame = arrow_to_pandas(table)
    frame.columns = [str(c).lstrip("\ufeff") for c in frame.columns]
    return drop_empty_rows(frame)


def head_delimited(path: Path, sep: str, rows: int) -> Read | None:
    """The first ``rows`` rows of a UTF-8 CSV or TSV, read by Arrow a block at a time until there are
    enough; ``None`` (another encoding, a blank line, names that repeat, anything Arrow refuses) leaves
    the file to :func:`~desktop.core.data.local_files.read_file`."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    with open(path, "rb") as fh:
        start = fh.read(4 << 20)
    if is_utf16(start) or b"\n\n" in start or b"\n\r\n" in start:
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
