"""Text files, one example a line: Arrow's parser for UTF-8, the careful way for the rest."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from desktop.core.data.encodings import decode_text
from desktop.core.data.formats import parsing
from desktop.core.data.formats.parsing import (
    Read,
    arrow_to_pandas,
    collected,
    empty_file_error,
    is_utf16,
    read_cached,
    reported,
)
from desktop.core.data.tables import blank_mask

_LINE_END = re.compile(r"\r\n|\r|\n")
"""What ends a line of a text file (as Arrow's parser takes them): not the other breaks Python's
``splitlines`` knows (form feed, U+2028...), which sit inside lines of scraped text."""


def read_txt(path: Path) -> Read:
    """The lines of a text file as one column, ``text``, stripped; blank lines left out."""
    fast = _read_txt_fast(path)
    if fast is not None:
        return fast
    import pandas as pd

    text = decode_text(path.read_bytes(), path.name)
    lines = [(n, line.strip()) for n, line in enumerate(_LINE_END.split(text), 1) if line.strip()]
    if not lines:
        raise empty_file_error(path)
    return pd.DataFrame({"text": [t for _, t in lines]}), [n for n, _ in lines], "line", 1, None


TXT_DELIMITER = "\x1f"
"""The field separator Arrow is given for a text file (the ASCII unit separator: never in a text; a
line holding one makes Arrow refuse the file, which is then read the careful way)."""


def _read_txt_fast(path: Path) -> Read | None:
    """A UTF-8 text file read by Arrow, one example a line, parsed once (see :func:`parsing.read_cached`):
    a corpus of millions of lines without a Python string per line. Lines are stripped; blank ones are
    left out of the view and keep their numbers. ``None`` sends the file the careful way (another
    encoding)."""

    def parse(cache_name: str | None) -> Any:
        with open(path, "rb") as fh:
            if is_utf16(fh.read(4)):
                return None
        return _parse_txt(path, cache_name)

    table = read_cached(path, "txt", parse)
    if table is None or table.num_rows == 0:
        return None
    frame = arrow_to_pandas(table)
    import numpy as np

    keep = np.flatnonzero(~blank_mask(frame["text"]))
    if len(keep) == 0:
        raise empty_file_error(path)
    return frame, None, "line", 1, None if len(keep) == len(frame) else keep


def _parse_txt(path: Path, cache_name: str | None) -> Any:
    """The lines of a text file as an Arrow table of one column, ``text``, stripped, a block at a
    time (as :func:`delimited._parse_delimited`)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    schema = pa.schema([("text", pa.large_string())])
    options = {
        "read_options": pacsv.ReadOptions(block_size=parsing.READ_BLOCK, column_names=["text"]),
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
        batches = reported(stripped(reader), path)
        return collected(batches, schema, cache_name)
