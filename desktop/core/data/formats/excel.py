"""Excel workbooks (.xlsx): the first sheet that holds data, whole and kept in the table cache, or its
first rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from desktop.core.data.formats.parsing import Read, cache_name, drop_empty_rows, read_kept
from desktop.core.system.errors import DataError
from desktop.core.system.messages import msg


def read_xlsx(path: Path) -> Read:
    """The first sheet with data of a workbook, its rows without a value left out (but for the rows
    a merged cell covers: they show its value in Excel, so they are data with an empty cell)."""
    sheet, _name = data_sheet(path)
    return _keep_merged(
        path, sheet, drop_empty_rows(read_kept(path, "xlsx", lambda: _excel_frame(path, sheet=sheet)))
    )


def merged_rows(path: Path, sheet: int) -> set[int]:
    """The sheet rows (numbered from 1) that a merged cell covers below its first row: Excel shows the
    merged value there, but the file holds it in the first cell only, so these cells read as empty.

    Read from the sheet's ``<mergeCells>``, which follows its rows: the sheet's XML is streamed to it
    without being parsed (openpyxl's read-only mode, which reads the rows, does not keep merges).
    """
    import re
    import zipfile
    import zlib
    from xml.etree import ElementTree

    rows: set[int] = set()
    try:
        with zipfile.ZipFile(path) as book:
            member = _sheet_member(book, sheet)
            if member is None:
                return rows
            tail, found = b"", b""
            with book.open(member) as stream:
                while chunk := stream.read(1 << 20):
                    tail += chunk
                    if found or (at := tail.find(b"<mergeCells")) >= 0:
                        found += tail if found else tail[at:]
                        tail = b""
                    else:
                        tail = tail[-16:]  # a tag cut between two chunks
    except (OSError, zipfile.BadZipFile, KeyError, ElementTree.ParseError, zlib.error):
        return rows
    for first, last in re.findall(rb'<mergeCell [^>]*ref="[A-Z]+(\d+):[A-Z]+(\d+)"', found):
        rows.update(range(int(first) + 1, int(last) + 1))
    return rows


def _sheet_member(book: Any, sheet: int) -> str | None:
    """The zip member of sheet number ``sheet`` (in workbook order) of an opened .xlsx."""
    from xml.etree import ElementTree

    main = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
    relation = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
    sheets = ElementTree.fromstring(book.read("xl/workbook.xml")).iter(f"{main}sheet")
    wanted = next((s.get(relation) for i, s in enumerate(sheets) if i == sheet), None)
    links = ElementTree.fromstring(book.read("xl/_rels/workbook.xml.rels"))
    target = next((link.get("Target") for link in links if link.get("Id") == wanted), None)
    if not target:
        return None
    return target.lstrip("/") if target.startswith("/") else f"xl/{target}"


def _keep_merged(path: Path, sheet: int, read: Read) -> Read:
    """``read`` with the rows a merged cell covers kept (see :func:`merged_rows`)."""
    import numpy as np

    frame, numbers, word, offset, keep = read
    if keep is None:
        return read
    covered = [row - offset for row in merged_rows(path, sheet) if 0 <= row - offset < len(frame)]
    if covered:
        keep = np.union1d(keep, np.asarray(covered, dtype=keep.dtype))
    return frame, numbers, word, offset, None if len(keep) == len(frame) else keep


def data_sheet(path: Path) -> tuple[int, str]:
    """The first sheet that holds data (a row of names and a row below it): its index and name. A
    workbook opened on an empty cover sheet, or with notes first, is read from its data sheet.

    Raises:
        DataError: No sheet holds data; the message names the sheets.
    """
    from openpyxl import load_workbook

    try:
        book = load_workbook(path, read_only=True, data_only=True)
    except Exception:  # not a workbook openpyxl reads: the read itself says what is wrong
        return 0, ""
    try:
        names = list(book.sheetnames)
        for index, name in enumerate(names):
            filled = 0
            for row in book[name].iter_rows(max_row=200, values_only=True):
                filled += any(v is not None and str(v).strip() for v in row)
                if filled >= 2:
                    return index, name
    finally:
        book.close()
    raise DataError(
        msg(
            "{file} holds no data: none of its sheets ({sheets}) has a row of column names with rows "
            "below it.",
            file=path.name,
            sheets=", ".join(names),
        ),
        msg("Put the data on one sheet, with the column names in its first row."),
    )


def head_xlsx(path: Path, rows: int) -> Read | None:
    """The first ``rows`` rows of a workbook's first sheet, the rest of the sheet left unread (150,000
    rows: 1.6 s instead of 8.4 s); ``None`` when the whole sheet is in the table cache, which maps it
    in a moment (see :func:`parsing.read_kept`)."""
    from desktop.core.data import arrow_cache

    if arrow_cache.has_table("tables", cache_name(path, "xlsx")):
        return None
    sheet, _name = data_sheet(path)
    frame, numbers, word, offset, keep = _keep_merged(
        path, sheet, drop_empty_rows(_excel_frame(path, rows, sheet))
    )
    if len(frame) == 0 or (keep is not None and len(keep) == 0):
        return None  # no data in the first rows: read whole, which says so or finds the data below
    return frame, numbers, word, offset, keep


def _excel_frame(path: Path, rows: int | None = None, sheet: int = 0) -> Any:
    """Sheet ``sheet`` of a workbook, or its first ``rows`` rows."""
    import pandas as pd

    try:
        return pd.read_excel(path, sheet_name=sheet, dtype=object, engine="openpyxl", nrows=rows)
    except Exception as exc:
        raise DataError(
            msg("{file} is not a readable Excel workbook ({error}).", file=path.name, error=exc),
            msg("Save it from Excel as .xlsx (the first sheet with data is used, with a header row)."),
        ) from None
