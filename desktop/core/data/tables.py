"""Rows of training data: the :class:`Table`, joining tables, missing and blank cells."""

from __future__ import annotations

import bisect
import math
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from desktop.core.system.messages import msg

if TYPE_CHECKING:
    import pandas as pd


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
    # (first row, (file name, "row" or "line"), line numbers or None, number of the first row) per source
    # file; a folder of pictures: (0, (folder name, "file"), each picture's path in the folder, 0)
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
        if word == "file":  # a folder of pictures: the picture's path in it
            return f"{name}/{numbers[index - start]}"
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


def nulls_to_none(frame: Any) -> Any:
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
    return Table(nulls_to_none(frame), ", ".join(t.source for t in tables), segments)


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
