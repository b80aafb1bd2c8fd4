"""Reading local data files of any supported format into a :class:`~desktop.core.data.tables.Table`."""

from __future__ import annotations

from pathlib import Path

from desktop.core.data.formats.delimited import csv_separator, head_delimited, read_csv, read_tsv
from desktop.core.data.formats.excel import data_sheet, head_xlsx, read_xlsx
from desktop.core.data.formats.json_files import head_json_array, head_jsonl, read_json, read_jsonl
from desktop.core.data.formats.parquet import read_parquet
from desktop.core.data.formats.parsing import empty_file_error
from desktop.core.data.formats.text_files import read_txt
from desktop.core.data.tables import Table, concat, nulls_to_none
from desktop.core.system.errors import DataError, NoRowsError
from desktop.core.system.messages import msg


def read_file(path: str | Path, pictures: bool = False) -> Table:
    """Read one local data file into a :class:`Table` (``pictures``: data of a task on pictures, whose
    picture paths are made full, relative to the file's folder; a folder is read as class folders).

    Raises:
        DataError: The file is missing, empty, unreadable or malformed; the message says where.
    """
    path = Path(path)
    if path.is_dir():  # a folder of class folders (image classification)
        from desktop.core.data.images import read_folder

        return read_folder(path)
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
        raise empty_file_error(path)
    frame, numbers, word, offset, rows = reader(path)
    if (len(frame) if rows is None else len(rows)) == 0:
        raise NoRowsError(
            msg("{file} has no data rows.", file=path.name), msg("Add examples below the header row.")
        )
    frame.columns = [str(c).strip() for c in frame.columns]
    frame = nulls_to_none(frame)
    if pictures:  # a table's picture paths are relative to the table
        full_picture_paths(frame, path.parent)
    source = source_name(path)
    return Table(frame, source, [(0, (source, word), numbers, offset)], rows, rows)


def full_picture_paths(frame: object, folder: Path) -> None:
    """Make a table's picture paths full (in place): plain columns' and those inside lists and
    conversations, relative to ``folder``, the table's own."""
    from desktop.core.data.images import resolve_paths
    from desktop.core.data.picture_chats import resolve_nested_paths

    resolve_paths(frame, folder)
    resolve_nested_paths(frame, folder)


def source_name(path: Path) -> str:
    """How messages name the file: a workbook read from another sheet than its first names it too."""
    if path.suffix.lower() == ".xlsx" and (sheet := data_sheet(path))[0] > 0:
        return msg("{file} (sheet {sheet})", file=path.name, sheet=sheet[1])
    return path.name


_READERS = {
    ".csv": read_csv,
    ".tsv": read_tsv,
    ".txt": read_txt,
    ".jsonl": read_jsonl,
    ".json": read_json,
    ".parquet": read_parquet,
    ".xlsx": read_xlsx,
}


def read_head(path: str | Path, rows: int = 1000, pictures: bool = False) -> Table:
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
        sep = csv_separator(path) if sep == "," else sep
        head = head_delimited(path, sep, rows)
        if head is not None:
            frame, numbers, word, offset, keep = head
            if pictures:
                full_picture_paths(frame, path.parent)
            return Table(frame, path.name, [(0, (path.name, word), numbers, offset)], keep, keep)
    reader = {".jsonl": head_jsonl, ".json": head_json_array, ".xlsx": head_xlsx}.get(suffix)
    head = reader(path, rows) if reader is not None and path.is_file() else None
    if head is not None:  # as read_file makes its frame
        frame, numbers, word, offset, keep = head
        frame.columns = [str(c).strip() for c in frame.columns]
        frame = nulls_to_none(frame)
        if pictures:
            full_picture_paths(frame, path.parent)
        source = source_name(path)
        return Table(frame, source, [(0, (source, word), numbers, offset)], keep, keep)
    table = read_file(path, pictures)
    return table.take(list(range(min(rows, len(table)))))


def read_files(paths: list[str], pictures: bool = False) -> Table:
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
            tables.append(read_file(p, pictures))
        done += size
    return concat(tables)
