"""Excel workbooks (.xlsx): the first sheet that holds data, whole and kept in the table cache, or its
first rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from desktop.core.data.formats.parsing import Read, cache_name, drop_empty_rows, read_kept
from desktop.core.system.errors import DataError
from desktop.core.system.messages import msg


def read_xlsx(path: Path) -> Read:
    """The first sheet with data of a workbook, its rows without a value left out."""
    sheet, _name = data_sheet(path)
    return drop_empty_rows(read_kept(path, "xlsx", lambda: _excel_frame(path, sheet=sheet)))


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
    frame, numbers, word, offset, keep = drop_empty_rows(_excel_frame(path, rows, sheet))
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
