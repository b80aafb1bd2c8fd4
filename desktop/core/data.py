"""Reading training data from local files or the hub, with clear errors for bad input."""

from __future__ import annotations

import bisect
import csv
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop.core.errors import DataError
from desktop.core.messages import msg

if TYPE_CHECKING:
    import pandas as pd

    from desktop.core.config import RunConfig

ENCODING_CANDIDATES = ["gb18030", "big5", "cp1252", "shift_jis", "euc_kr", "utf_16"]


@dataclass
class Table:
    """Rows of data with the columns of the source, plus where each row is in its file.

    Attributes:
        frame: The rows (``pandas.DataFrame``); blank cells are ``None``.
        source: The file name(s) or hub id, for messages.
    """

    frame: pd.DataFrame
    source: str
    # (first row, (file name, "row" or "line"), line numbers or None, number of the first row) per source file
    segments: list[tuple[int, tuple[str, str], list[int] | None, int]] = field(
        default_factory=list, repr=False
    )
    # original row index of each row, once rows were filtered or shuffled
    origin: list[int] | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.frame)

    @property
    def columns(self) -> list[str]:
        """The column names."""
        return [str(c) for c in self.frame.columns]

    def locate(self, index: int) -> str:
        """How a user finds row ``index`` in the source, e.g. ``reviews.csv row 7``."""
        index = self.origin[index] if self.origin is not None else index
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
        """A new table of the given rows (a list or an array of positions), which keep their locations."""
        import numpy as np

        positions = np.asarray(indices, dtype=np.int64)
        frame = self.frame.iloc[positions].reset_index(drop=True)
        origin = np.asarray(self.origin)[positions] if self.origin is not None else positions
        return Table(frame, self.source, self.segments, origin)

    def take_apart(self, *parts: Any) -> list[Table]:
        """Tables of the given rows each (arrays of positions), made a column at a time, each column
        of this table dropped once it is copied: the peak is this table and one column more, not two
        tables. This table is left without columns: it must not be used after."""
        import numpy as np
        import pandas as pd

        positions = [np.asarray(part, dtype=np.int64) for part in parts]
        names = list(self.frame.columns)
        columns: list[dict[Any, Any]] = [{} for _ in positions]
        for name in names:
            column = self.frame[name]
            for taken, rows in zip(columns, positions, strict=True):
                taken[name] = column.take(rows).reset_index(drop=True)
            del column
            del self.frame[name]
        origin = np.asarray(self.origin) if self.origin is not None else None
        return [
            Table(
                pd.DataFrame(taken, columns=names),
                self.source,
                self.segments,
                origin[rows] if origin is not None else rows,
            )
            for taken, rows in zip(columns, positions, strict=True)
        ]


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
    frame, numbers, word, offset = reader(path)
    if len(frame) == 0:
        raise DataError(
            msg("{file} has no data rows.", file=path.name), msg("Add examples below the header row.")
        )
    frame.columns = [str(c).strip() for c in frame.columns]
    frame = _nulls_to_none(frame)
    return Table(frame, path.name, [(0, (path.name, word), numbers, offset)])


READ_BLOCK = 1 << 24
"""Bytes of a CSV or TSV that Arrow parses at a time (16 MB; progress is said after each)."""


def _read_delimited(path: Path, sep: str) -> tuple[Any, list[int], str, int]:
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


def _read_delimited_fast(path: Path, sep: str) -> tuple[Any, Any, str, int] | None:
    """A UTF-8 CSV or TSV read by Arrow's parser (multithreaded, from the file, no Python string of it
    whole): ten times faster than through pandas on a file of millions of rows. ``None`` sends the file
    the careful way: another encoding, a blank line (rows are numbered as a spreadsheet numbers them),
    or anything Arrow refuses (the careful way then says what is wrong, and where)."""
    import mmap

    import pyarrow as pa
    import pyarrow.csv as pacsv

    with open(path, "rb") as fh:
        try:
            view = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return None
        with view:
            if _unusual(view[:4]) or view.find(b"\n\n") >= 0 or view.find(b"\n\r\n") >= 0:
                return None
            end = view.find(b"\n")
            header = _csv_header(view[: end if end >= 0 else len(view)], sep)
    if header is None:
        return None
    from desktop.core import progress

    size, block = max(1, path.stat().st_size), READ_BLOCK
    batches = []
    try:
        # A block at a time (as fast as one read here), so a window can show how far it is and stop.
        with pacsv.open_csv(path, **_arrow_csv_options(header, sep, block)) as reader:
            schema = reader.schema
            for batch in reader:
                batches.append(batch)
                progress.report(len(batches) * block / size, msg("Reading {file}", file=path.name))
    except (pa.ArrowInvalid, OSError):
        return None
    table = pa.Table.from_batches(batches, schema=schema)
    del batches
    frame = _arrow_frame(table)
    del table
    release_memory()  # the parser's buffers
    return frame


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
            column_types={name: pa.string() for name in header},
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


def _arrow_frame(table: Any) -> tuple[Any, Any, str, int] | None:
    """An Arrow table of strings as a pandas frame, Arrow-backed: the text stays in Arrow's buffers
    (no Python object per cell) and string checks run in Arrow's kernels. Rows whose every cell is
    blank are left out, as the careful way leaves them; the rest keep their spreadsheet row numbers."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    if table.num_rows == 0:
        return None
    blank = None
    for column in table.columns:
        empty = pc.equal(pc.utf8_trim_whitespace(column), "")
        blank = empty if blank is None else pc.and_(blank, empty)
    keep = np.flatnonzero(~blank.to_numpy(zero_copy_only=False))
    if len(keep) < table.num_rows:
        table = table.take(pa.array(keep))
    frame = table.to_pandas(types_mapper={pa.string(): pd.StringDtype("pyarrow")}.get)
    frame.columns = [str(c).lstrip("\ufeff") for c in frame.columns]
    return frame, keep + 2, "row", 2


def read_head(path: str | Path, rows: int = 1000) -> Table:
    """The first ``rows`` data rows of a file, in a moment however large the file: a UTF-8 CSV or TSV
    is read a block at a time until there are enough; other files are read whole.

    Raises:
        DataError: As :func:`read_file`.
    """
    path = Path(path)
    sep = {".csv": ",", ".tsv": "\t"}.get(path.suffix.lower())
    if sep is not None and path.is_file():
        head = _head_delimited(path, sep, rows)
        if head is not None:
            frame, numbers, word, offset = head
            return Table(frame, path.name, [(0, (path.name, word), numbers, offset)])
    table = read_file(path)
    return table.take(list(range(min(rows, len(table)))))


def _head_delimited(path: Path, sep: str, rows: int) -> tuple[Any, Any, str, int] | None:
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
    frame, numbers, word, offset = found
    return frame.head(rows), numbers[:rows], word, offset


def _empty(path: Path) -> DataError:
    return DataError(
        msg("{file} is empty.", file=path.name), msg("Choose a file that holds your training examples.")
    )


def _drop_empty_rows(frame: Any) -> tuple[Any, list[int], str, int]:
    import numpy as np

    # Numbers as a spreadsheet shows them: the header is row 1, and blank lines count as rows.
    blank = np.ones(len(frame), dtype=bool)
    for name in frame.columns:
        blank &= blank_mask(frame[name])
    keep = np.flatnonzero(~blank)
    return frame.iloc[keep].reset_index(drop=True), keep + 2, "row", 2


def _read_csv(path: Path) -> tuple[Any, list[int], str, int]:
    return _read_delimited(path, ",")


def _read_tsv(path: Path) -> tuple[Any, list[int], str, int]:
    return _read_delimited(path, "\t")


def _read_txt(path: Path) -> tuple[Any, list[int], str, int]:
    import pandas as pd

    text = decode_text(path.read_bytes(), path.name)
    lines = [(n, line.strip()) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not lines:
        raise _empty(path)
    return pd.DataFrame({"text": [t for _, t in lines]}), [n for n, _ in lines], "line", 1


def _read_jsonl(path: Path) -> tuple[Any, list[int], str, int]:
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
                    error=exc.msg,
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
    return pd.DataFrame.from_records(records), numbers, "line", 1


def _read_json(path: Path) -> tuple[Any, None, str, int]:
    import pandas as pd

    text = decode_text(path.read_bytes(), path.name)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(
            msg(
                "{file} is not valid JSON: {error} at line {line}, column {column}.",
                file=path.name,
                error=exc.msg,
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
    return pd.DataFrame.from_records(data), None, "item", 1


def _read_parquet(path: Path) -> tuple[Any, None, str, int]:
    import pandas as pd

    try:
        return pd.read_parquet(path), None, "row", 1
    except Exception as exc:
        raise DataError(
            msg("{file} is not a readable Parquet file ({error}).", file=path.name, error=exc),
            msg("Export it again."),
        ) from None


def _read_xlsx(path: Path) -> tuple[Any, list[int], str, int]:
    import pandas as pd

    try:
        frame = pd.read_excel(path, sheet_name=0, dtype=object, engine="openpyxl")
    except Exception as exc:
        raise DataError(
            msg("{file} is not a readable Excel workbook ({error}).", file=path.name, error=exc),
            msg("Save it from Excel as .xlsx (the first sheet is used, with a header row)."),
        ) from None
    return _drop_empty_rows(frame)


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
    """Missing cells as ``None`` (the rest of the app's one spelling of "no value"). A frame of Arrow
    strings without missing cells (a CSV read by Arrow: a blank cell is ``""``) is left as it is."""
    arrow = all(
        str(dtype) == "string" and getattr(dtype, "storage", "") == "pyarrow" for dtype in frame.dtypes
    )
    if arrow and not frame.isna().to_numpy().any():
        return frame
    frame = frame.astype(object)
    return frame.where(frame.notna(), None)


def concat(tables: list[Table]) -> Table:
    """Join tables (several files of one dataset) into one."""
    import pandas as pd

    if len(tables) == 1:
        return tables[0]
    frame = pd.concat([t.frame for t in tables], ignore_index=True)
    segments, start = [], 0
    for t in tables:
        segments += [(start + s, label, numbers, first) for s, label, numbers, first in t.segments]
        start += len(t)
    return Table(_nulls_to_none(frame), ", ".join(t.source for t in tables), segments)


def read_files(paths: list[str]) -> Table:
    """Read and join local data files (progress: each file its share by size, see :mod:`progress`)."""
    from desktop.core import progress

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

    A dataset is downloaded as its own step (:mod:`desktop.core.downloads`), never inside loading.

    Raises:
        DataError: The dataset is not on this computer yet, or the configuration or split cannot be loaded.
    """
    import datasets

    from desktop.core.downloads import local_copy

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
    frame = _nulls_to_none(ds.to_pandas())
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
    """Hold out ``fraction`` of the rows (at least one) at random, reproducibly. ``table`` is taken
    apart (see :meth:`Table.take_apart`)."""
    import numpy as np

    order = np.random.default_rng(seed).permutation(len(table))
    n_eval = min(len(table) - 1, max(1, math.floor(len(table) * fraction + 0.5)))
    kept, held_out = table.take_apart(np.sort(order[n_eval:]), np.sort(order[:n_eval]))
    del table, order
    release_memory()
    return kept, held_out


def release_memory() -> None:
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
    """:func:`is_blank` of every value of a pandas Series, as a numpy array (vectorised)."""

    missing = values.isna().to_numpy()
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
    return isinstance(value, str) and not value.strip()
