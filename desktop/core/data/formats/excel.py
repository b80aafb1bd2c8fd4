"""Excel workbooks (.xlsx): the first sheet, whole and kept in the table cache, or its first rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from desktop.core.data.formats.parsing import Read, cache_name, drop_empty_rows, read_kept
from desktop.core.system.errors import DataError
from desktop.core.system.messages import msg


def read_xlsx(path: Path) -> Read:
    """The first sheet of a workbook, its rows without a value left out."""
    return drop_empty_rows(read_kept(path, "xlsx", lambda: _excel_frame(path)))


def head_xlsx(path: Path, rows: int) -> Read | None:
    """The first ``rows`` rows of a workbook's first sheet, the rest of the sheet left unread (150,000
    rows: 1.6 s instead of 8.4 s); ``None`` when the whole sheet is in the table cache, which maps it
    in a moment (see :func:`parsing.read_kept`)."""
    from desktop.core.data import arrow_cache

    if arrow_cache.has_table("tables", cache_name(path, "xlsx")):
        return None
    frame, numbers, word, offset, keep = drop_empty_rows(_excel_frame(path, rows))
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
