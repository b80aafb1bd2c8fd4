"""Pictures checked before any model loads: every picture opened once, and each kind of problem said in a
sentence of its own with the rows (or the paths, in a folder of pictures) it was found in: a missing
file, one that is not a picture, a truncated one, CMYK or 16-bit pixels (which the processors of most
models misread), and pictures so large that decoding them could fill the memory. Left out on request
(``data.drop_bad_rows``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.core.data.images import (
    HUGE_PIXELS,
    JPEGS,
    UNREAD_SUFFIXES,
    ImageRow,
    Source,
    open_picture,
    table_images,
)
from desktop.core.system.messages import Msg, joined, msg

SHOWN_ROWS = 5


def check_tables(
    tables: list[Any], column: str, drop_bad: bool, rows_of: Callable[[Any], list[ImageRow]] | None = None
) -> tuple[list[Any], list[str]]:
    """:func:`check_table` of each table (the training and the evaluation rows, ``None`` where there
    are none), every bad picture of both named before anything is refused."""
    from desktop.core.system import progress
    from desktop.core.system.errors import DataError

    kept, notes, refused = [], [], []
    present = [t for t in tables if t is not None]
    done = 0
    for table in tables:
        if table is None:
            kept.append(None)
            continue
        total = max(1, sum(len(t) for t in present))
        with progress.part(done / total, (done + len(table)) / total):
            try:
                table, said = check_table(table, column, drop_bad, rows_of=rows_of)
            except DataError as exc:
                refused.append(exc)
            else:
                notes += said
        done += len(table)
        kept.append(table)
    if refused:
        raise DataError(joined(*(exc.message for exc in refused)), refused[0].hint)
    return kept, notes


def check_table(
    table: Any,
    column: str,
    drop_bad: bool,
    stop: Callable[[], bool] | None = None,
    rows_of: Callable[[Any], list[ImageRow]] | None = None,
) -> Any:
    """The rows of ``table`` (a :class:`~desktop.core.data.tables.Table`) whose picture in ``column``
    (or, with ``rows_of``, each of the pictures it finds in a row) can be used, and what was left out;
    every picture is opened once, with progress.

    Returns:
        ``(table, notes)``: the usable rows, and a sentence per kind of picture left out.

    Raises:
        DataError: Some pictures cannot be used and ``drop_bad`` is off (each kind in a sentence of its
            own with its rows), or none can.
    """
    from desktop.core.system import progress
    from desktop.core.system.errors import DataError

    def said(done: int, total: int) -> None:
        progress.report(done / max(1, total), msg("Checking {count} pictures", count=total))

    rows = rows_of(table) if rows_of is not None else table_images(table, Path(), column)
    found = check_images(rows, progress=said, stop=stop)
    bad = sorted(found.bad_rows())
    if not bad:
        return table, []
    folder = bool(table.segments) and table.segments[0][1][1] == "file"  # rows named by their paths
    named = {item.row: item.path.name for item in rows if isinstance(item.path, Path) and item.path.name}
    locate = table.locate_many if folder or rows_of is not None else _with_names(table, named)
    sentences = found.sentences(table.source, locate)
    looked = ""  # where a table's first missing picture was looked for (a row's one picture: its column's)
    if found.missing and not folder and rows_of is None:
        first = next((item.path for item in rows if item.row == min(found.missing)), None)
        if isinstance(first, Path):
            looked = msg(
                "The first was looked for at {path} (a relative path in a table is read from the table's own "
                "folder).",
                path=first,
            )
    if len(bad) == len(table):
        if folder:
            hint = msg("Check that the folder holds pictures that open in a picture viewer.")
        elif column and rows_of is None:
            hint = msg(
                "Check that the column {column} names the pictures, and that they are there.", column=column
            )
        else:
            hint = msg("Check that the conversations name their pictures, and that they are there.")
        raise DataError(joined(*sentences), joined(looked, hint))
    if not drop_bad:
        hint = msg(
            'Replace or remove those pictures, or leave them out: tick "Leave out rows with a missing or '
            'unreadable picture, or no label" under Columns (data.drop_bad_rows = true in a config).'
        )
        raise DataError(joined(*sentences), joined(looked, hint))
    import numpy as np

    usable = np.ones(len(table), dtype=bool)
    usable[bad] = False
    left = [msg("Left out: {problem}", problem=sentence) for sentence in sentences]
    return table.take(np.flatnonzero(usable)), left


def _with_names(table: Any, named: dict[int, str], limit: int = 5) -> Callable[[list[int]], str]:
    """Rows of a table as the user finds them: where each is and the picture its cell names
    (``reviews.csv row 28: cat-01.jpg``), the first ``limit`` of them and how many more."""

    def where(indices: list[int]) -> str:
        listed = ""
        for index in indices[:limit]:
            item = table.locate(index)
            if named.get(index):
                item = msg("{where}: {picture}", where=item, picture=named[index])
            listed = msg("{items}, {item}", items=listed, item=item) if listed else item
        more = len(indices) - limit
        return msg("{items} and {more} more", items=listed, more=more) if more > 0 else listed

    return where


@dataclass
class ImageProblems:
    """What :func:`check_images` found: each kind's rows (0-based), and the rows fit to train on."""

    missing: list[int] = field(default_factory=list)
    unreadable: list[int] = field(default_factory=list)
    heic: list[int] = field(default_factory=list)  # unreadable too: an iPhone's pictures, said as such
    truncated: list[int] = field(default_factory=list)
    odd_mode: list[tuple[int, str]] = field(default_factory=list)  # (row, mode): CMYK, I;16 ...
    huge: list[tuple[int, int]] = field(default_factory=list)  # (row, pixels)
    usable: list[int] = field(default_factory=list)

    def bad_rows(self) -> set[int]:
        return {
            *self.missing,
            *self.unreadable,
            *self.heic,
            *self.truncated,
            *(r for r, _ in self.odd_mode),
            *(r for r, _ in self.huge),
        }

    def sentences(self, source: str, locate: Callable[[list[int]], str] | None = None) -> list[Msg]:
        """One sentence per kind of problem, with the rows (``locate``: rows as the user counts them)."""
        where = locate or _rows_words
        said = []

        def rows_of(found: list[Any]) -> list[int]:
            return sorted(r if isinstance(r, int) else r[0] for r in found)

        for kind, found in (
            ("missing", self.missing),
            ("heic", self.heic),
            ("unreadable", self.unreadable),
            ("truncated", self.truncated),
            ("odd", self.odd_mode),
            ("huge", self.huge),
        ):
            if found:
                rows = rows_of(found)
                said.append(_sentence(kind, len(rows), source, where(rows)))
        return said


def _sentence(kind: str, count: int, source: str, rows: str) -> Msg:
    """One kind of problem in a sentence, for one picture or several."""
    one = count == 1
    if kind == "missing":
        if one:
            return msg("{source}: 1 picture is missing ({rows}).", source=source, rows=rows)
        return msg("{source}: {count} pictures are missing ({rows}).", source=source, count=count, rows=rows)
    if kind == "heic":
        if one:
            return msg(
                "{source}: 1 picture is in HEIC (as iPhones save them), which cannot be read here: "
                "convert it to JPEG ({rows}).",
                source=source,
                rows=rows,
            )
        return msg(
            "{source}: {count} pictures are in HEIC (as iPhones save them), which cannot be read here: "
            "convert them to JPEG ({rows}).",
            source=source,
            count=count,
            rows=rows,
        )
    if kind == "unreadable":
        if one:
            return msg(
                "{source}: 1 file is not a picture that can be read ({rows}).", source=source, rows=rows
            )
        return msg(
            "{source}: {count} files are not pictures that can be read ({rows}).",
            source=source,
            count=count,
            rows=rows,
        )
    if kind == "truncated":
        if one:
            return msg("{source}: 1 picture is cut short (truncated) ({rows}).", source=source, rows=rows)
        return msg(
            "{source}: {count} pictures are cut short (truncated) ({rows}).",
            source=source,
            count=count,
            rows=rows,
        )
    if kind == "odd":
        if one:
            return msg(
                "{source}: 1 picture has CMYK or 16-bit pixels, which models read wrongly ({rows}).",
                source=source,
                rows=rows,
            )
        return msg(
            "{source}: {count} pictures have CMYK or 16-bit pixels, which models read wrongly ({rows}).",
            source=source,
            count=count,
            rows=rows,
        )
    if one:
        return msg(
            "{source}: 1 picture is very large (over 40 megapixels) ({rows}).", source=source, rows=rows
        )
    return msg(
        "{source}: {count} pictures are very large (over 40 megapixels) ({rows}).",
        source=source,
        count=count,
        rows=rows,
    )


def _rows_words(rows: list[int]) -> str:
    if len(rows) == 1:
        return msg("row {row}", row=rows[0] + 1)
    shown = ", ".join(str(r + 1) for r in rows[:SHOWN_ROWS])
    return msg("rows {rows}", rows=shown + (", ..." if len(rows) > SHOWN_ROWS else ""))


def check_images(
    rows: Sequence[ImageRow],
    huge: int = HUGE_PIXELS,
    progress: Callable[[int, int], None] | None = None,
    stop: Callable[[], bool] | None = None,
) -> ImageProblems:
    """Open every picture once and sort the rows by what is wrong with them (nothing: ``usable``).

    A file's verdict is kept for this process by its path, size and time, so the preview's check and the
    run's are one reading of each file."""
    found = ImageProblems()
    for done, item in enumerate(rows):
        if stop is not None and stop():
            break
        if progress is not None and done % 500 == 0:
            progress(done, len(rows))
        kind, detail = _verdict(item.path, huge)
        if kind == "missing":
            found.missing.append(item.row)
        elif (
            kind == "unreadable"
            and isinstance(item.path, Path)
            and item.path.suffix.lower() in UNREAD_SUFFIXES
        ):
            found.heic.append(item.row)
        elif kind == "unreadable":
            found.unreadable.append(item.row)
        elif kind == "truncated":
            found.truncated.append(item.row)
        elif kind == "huge":
            found.huge.append((item.row, detail))
        elif kind == "odd":
            found.odd_mode.append((item.row, detail))
        else:
            found.usable.append(item.row)
    if progress is not None:
        progress(len(rows), len(rows))
    return found


ODD_MODES = ("CMYK", "I;16", "I;16B", "I;16L", "I", "F")
"""Pixel layouts the image processors of most models read wrongly (CMYK, 16-bit and float)."""
_VERDICTS: dict[tuple[str, int, int, int], tuple[str, Any]] = {}
MOST_VERDICTS = 1_000_000


def _verdict(source: Source, huge: int) -> tuple[str, Any]:
    """What is wrong with one picture: ``("missing" | "unreadable" | "truncated" | "huge" | "odd" |
    "usable", detail)``; a file's kept by its path, size and time."""
    if isinstance(source, bytes):
        return _read_verdict(source, huge)
    try:
        stat = source.stat()
    except OSError:
        return "missing", None
    if not source.is_file():
        return "missing", None
    key = (str(source), stat.st_size, stat.st_mtime_ns, huge)
    verdict = _VERDICTS.get(key)
    if verdict is None:
        verdict = _read_verdict(source, huge)
        if len(_VERDICTS) >= MOST_VERDICTS:
            _VERDICTS.clear()
        _VERDICTS[key] = verdict
    return verdict


def _read_verdict(source: Source, huge: int) -> tuple[str, Any]:
    from PIL import Image, UnidentifiedImageError

    try:
        with open_picture(source) as image:
            pixels = image.width * image.height
            if pixels > huge:
                return "huge", pixels  # not decoded: that is what it could cost
            mode = image.mode
            if image.format in JPEGS:  # every byte is still read (a cut file fails), the pixels at 1/8
                image.draft(image.mode, (max(1, image.width // 8), max(1, image.height // 8)))
            image.load()
    except UnidentifiedImageError:
        return "unreadable", None
    except Image.DecompressionBombError:
        return "huge", huge + 1
    except OSError as exc:
        return ("truncated" if "truncated" in str(exc).lower() else "unreadable"), None
    except (ValueError, SyntaxError):  # a header that lies about the pixels
        return "unreadable", None
    if mode in ODD_MODES:
        return "odd", mode
    return "usable", None
