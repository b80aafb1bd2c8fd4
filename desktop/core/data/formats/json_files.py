"""JSON Lines files and JSON arrays of records: parsed by Arrow a record at a time, or read whole."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from desktop.core.data.encodings import decode_text
from desktop.core.data.formats import parsing
from desktop.core.data.formats.parsing import (
    Read,
    arrow_to_pandas,
    collected,
    empty_file_error,
    plain_lines,
    read_cached,
    read_kept,
    reported,
)
from desktop.core.system.errors import DataError
from desktop.core.system.messages import msg

HEAD_JSON_BYTES = 64 << 20
"""The most of a JSON or JSONL file read for its first rows; past it (records that long, or a file that
is not what it says), the file is read whole."""


def read_jsonl(path: Path) -> Read:
    """The records of a JSON Lines file, one JSON object a line; a broken line is named."""
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
        raise empty_file_error(path)
    return pd.DataFrame.from_records(records), numbers, "line", 1, None


def _read_jsonl_fast(path: Path) -> Read | None:
    """A UTF-8 JSONL file read by Arrow's JSON parser, parsed once (see :func:`parsing.read_cached`): a
    file of a million chats or reviews without a Python object per field. ``None`` sends it the careful
    way: a blank line, another encoding, or anything Arrow refuses (a line that is not a JSON object, a
    field whose type changes): the careful way names the line."""

    def parse(cache_name: str | None) -> Any:
        first = plain_lines(path)
        if first is None or first.startswith(b"\xef\xbb\xbf"):
            return None
        return _parse_jsonl(path, cache_name)

    table = read_cached(path, "jsonl", parse)
    if table is None or table.num_rows == 0:
        return None
    return arrow_to_pandas(table), None, "line", 1, None


def _parse_jsonl(path: Path, cache_name: str | None) -> Any:
    """The records of a JSONL file as an Arrow table, a block at a time (as
    :func:`delimited._parse_delimited`)."""
    import pyarrow.json as pajson

    def checked(reader: Any) -> Any:
        for batch in reader:
            batch.validate(full=True)  # Arrow's JSON parser takes any bytes for text: UTF-8 only here
            yield batch

    # One thread: Arrow's parallel parse holds several blocks and their batches at once. 1.75 M rows,
    # first read: 500 -> 470 MB at the peak, 3.2 -> 3.6 s.
    with pajson.open_json(
        path, read_options=pajson.ReadOptions(block_size=parsing.READ_BLOCK, use_threads=False)
    ) as reader:
        batches = reported(checked(reader), path)
        return collected(batches, reader.schema, cache_name)


def read_json(path: Path) -> Read:
    """The records of a JSON file that holds an array of objects (or an object holding one)."""
    fast = _read_json_fast(path)
    if fast is not None:
        return fast
    return read_kept(path, "json", lambda: _json_frame(path)), None, "item", 1, None


def _read_json_fast(path: Path) -> Read | None:
    """A UTF-8 JSON array of records (reviews, instructions, chats) parsed by Arrow's JSON parser, fed
    one record at a time as JSON Lines, once (see :func:`parsing.read_cached`): the file's records are never
    in memory together as Python objects (a 260 MB array: 1.9 GB so). ``None`` sends the file the whole
    way, which reads it as before: a small one (parsed in a moment), a field whose type changes,
    another encoding or shape, a broken file (the whole read names what is wrong)."""
    if path.stat().st_size < parsing.CACHE_FROM_BYTES:
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
            lines, read_options=pajson.ReadOptions(block_size=parsing.READ_BLOCK, use_threads=False)
        ) as reader:
            return collected(reported(checked(reader), path), reader.schema, cache_name)

    table = read_cached(path, "json-lines", parse)
    if table is None or table.num_rows == 0:
        return None
    return arrow_to_pandas(table), None, "item", 1, None


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


def head_jsonl(path: Path, rows: int) -> Read | None:
    """The first ``rows`` records of a UTF-8 JSONL file, read a line at a time.

    ``None`` (no record, another encoding, a line that is not a JSON object) leaves the file to
    :func:`~desktop.core.data.local_files.read_file`, which reads it whole and names what is wrong.
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


def head_json_array(path: Path, rows: int) -> Read | None:
    """The first ``rows`` records of a UTF-8 file that holds one JSON array of objects, decoded a record
    at a time from the start (a chat export of gigabytes shows its first rows in a moment).

    ``None`` (another encoding or shape, a record that does not decode) leaves the file to
    :func:`~desktop.core.data.local_files.read_file`, which reads it whole and names what is wrong.
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
