"""Pictures as training data: found in a folder of class folders or named by a table, checked before any
model loads, and read lazily.

- :func:`class_folders`: ``root/<label>/<image>`` (one folder per class), listed with ``os.scandir``
  (a 100,000-picture folder is listed, not opened);
- :func:`table_images`: a CSV / JSONL / Parquet table whose image column holds paths relative to the
  table's own folder (or absolute), beside a label column;
- :func:`check_images`: every picture opened once (the header, then its pixels) and each kind of problem
  said in a sentence of its own with the rows it was found in: a missing file, one that is not a picture,
  a truncated one, CMYK or 16-bit pixels (which the processors of most models misread), and pictures so
  large that decoding them could fill the memory;
- :func:`load_image`: a picture as the model sees it (EXIF rotation applied, RGB), from a bounded cache,
  and :func:`thumbnail` for the preview.

A picture's *source* is a path, or the bytes of the file (a hub dataset's image column: Arrow's
``{"bytes", "path"}`` structs); :func:`source_of` reads either from a cell.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.core.system.messages import Msg, msg

SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp", ".tif", ".tiff")
HUGE_PIXELS = 40_000_000
"""More pixels than this (e.g. 8000 x 5000) is named: decoding one takes 120 MB, and no model needs it."""
CACHE_IMAGES = 256
"""Pictures kept decoded (the preview's and the try-it panel's); the rest are read again when needed."""
SHOWN_ROWS = 5


@dataclass(frozen=True)
class ImageRow:
    """One picture of the data: where it is (a path, or the file's bytes), its label (``None`` without
    one), and its row (0-based)."""

    path: Path | bytes
    label: str | None
    row: int


Source = Path | bytes


def is_image(name: str) -> bool:
    return name.lower().endswith(SUFFIXES)


def source_of(value: Any) -> Source | None:
    """The picture a cell names: a path (text), or the bytes of the file (bytes, or a hub dataset's
    ``{"bytes": ..., "path": ...}``); ``None`` for a blank cell."""
    if isinstance(value, dict):
        data = value.get("bytes")
        if data:
            return bytes(data)
        value = value.get("path")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value) or None
    if isinstance(value, Path):
        return value
    if isinstance(value, str) and value.strip():
        return Path(value.strip()).expanduser()
    return None


def _open(source: Source) -> Any:
    from PIL import Image

    if isinstance(source, bytes):
        import io

        return Image.open(io.BytesIO(source))
    return Image.open(source)


def looks_like_images(values: Sequence[Any]) -> bool:
    """Whether most non-blank cells of a column name pictures (file names with a picture's suffix, or
    the bytes of files)."""
    found = [v for v in values if v is not None and not (isinstance(v, str) and not v.strip())][:50]
    if not found:
        return False
    named = sum(
        1
        for v in found
        if (isinstance(v, str) and is_image(v.strip()))
        or (isinstance(v, dict) and (v.get("bytes") or is_image(str(v.get("path") or ""))))
        or isinstance(v, (bytes, bytearray))
    )
    return named >= max(1, len(found) * 0.8)


def read_folder(root: Path, labelled: bool = True) -> Any:
    """A folder of class folders as a :class:`~desktop.core.data.tables.Table` with the columns ``image``
    (each picture's full path) and ``label`` (its folder's name); a row is located by its path in the
    folder (``shapes/circle/circle-001.png``). ``labelled=False``: every picture under the folder, in
    the column ``image`` alone (pictures to predict).

    Raises:
        DataError: The folder holds no class folders with pictures in them (no pictures at all).
    """
    import pandas as pd

    from desktop.core.data.tables import Table
    from desktop.core.system.errors import DataError

    root = Path(root).absolute()
    try:
        rows = class_folders(root) if labelled else all_pictures(root)
    except OSError as exc:
        raise DataError(
            msg("The folder {folder} could not be read: {error}", folder=str(root), error=exc),
            msg("Check that the folder exists and that you may read it."),
        ) from None
    if not rows and not labelled:
        raise DataError(
            msg("{folder} holds no pictures.", folder=str(root)),
            msg("Choose the folder with the pictures (.jpg, .png, .webp ...)."),
        )
    if not rows:
        raise DataError(
            msg("{folder} holds no class folders with pictures in them.", folder=str(root)),
            msg(
                "Put the pictures of each class in a folder of its own named after the class, e.g. "
                "{folder}/cat/1.jpg and {folder}/dog/2.jpg.",
                folder=root.name,
            ),
        )
    columns = {"image": [str(r.path) for r in rows]}
    if labelled:
        columns["label"] = [r.label for r in rows]
    frame = pd.DataFrame(columns)
    names = [Path(os.path.relpath(r.path, root)).as_posix() for r in rows]
    return Table(frame, root.name, [(0, (root.name, "file"), names, 0)])


def resolve_paths(frame: Any, folder: Path) -> None:
    """Make the picture paths of a table read from a file in ``folder`` full paths (in place): a path in
    a table is relative to the table's own folder, wherever the app was started from."""
    for name in list(frame.columns):
        column = frame[name]
        if column.dtype != object and not str(column.dtype).startswith(("str", "string")):
            if _nested_pictures(column.head(20).tolist()):  # a conversation's or a list's pictures
                frame[name] = [_full_nested(v, folder) for v in column.tolist()]
            continue
        head = column.head(50).tolist()
        if looks_like_images(head):
            frame[name] = [_full(v, folder) for v in column.tolist()]
        elif _nested_pictures(head):
            frame[name] = [_full_nested(v, folder) for v in column.tolist()]


def _nested_pictures(values: list[Any]) -> bool:
    """Whether cells are lists naming pictures: a list of picture paths, or a conversation whose image
    parts name theirs."""
    for value in values:
        if hasattr(value, "tolist"):
            value = value.tolist()
        if not isinstance(value, list) or not value:
            continue
        if all(isinstance(v, str) for v in value):
            return looks_like_images(value)
        text = str(value)
        return "'type': 'image'" in text and any(key in text for key in ("'image': '", "'path': '"))
    return False


def _full_nested(value: Any, folder: Path) -> Any:
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return [_full(v, folder) for v in value]
    from desktop.core.data.picture_chats import resolve_chat_paths

    return resolve_chat_paths(value, folder)


def _full(value: Any, folder: Path) -> Any:
    if not isinstance(value, str) or not value.strip():
        return value
    path = Path(value.strip()).expanduser()
    return str(path if path.is_absolute() else folder / path)


def all_pictures(root: Path) -> list[ImageRow]:
    """Every picture under ``root`` (sub-folders included), without labels, sorted by path."""
    found: list[str] = []
    stack = [str(root)]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                if entry.is_dir():
                    stack.append(entry.path)
                elif is_image(entry.name):
                    found.append(entry.path)
    return [ImageRow(Path(p), None, i) for i, p in enumerate(sorted(found))]


def class_folders(root: Path) -> list[ImageRow]:
    """The pictures of ``root/<label>/...`` (sub-folders of a class folder included), sorted by label and
    name; files that are not pictures by their name are skipped. A folder with no class folders gives
    nothing."""
    rows: list[ImageRow] = []
    with os.scandir(root) as entries:
        classes = sorted(e.name for e in entries if e.is_dir() and not e.name.startswith("."))
    for label in classes:
        found: list[str] = []
        stack = [os.path.join(root, label)]
        while stack:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    if entry.name.startswith("."):
                        continue
                    if entry.is_dir():
                        stack.append(entry.path)
                    elif is_image(entry.name):
                        found.append(entry.path)
        rows += [ImageRow(Path(p), label, 0) for p in sorted(found)]
    return [ImageRow(r.path, r.label, i) for i, r in enumerate(rows)]


def table_images(table: Any, base: Path, image_column: str, label_column: str = "") -> list[ImageRow]:
    """The pictures a table names (``table``: the app's :class:`~desktop.core.data.tables.Table`, or
    anything with ``column(name)``), paths taken from ``base`` (the table's folder) when relative."""
    paths = list(table.column(image_column))
    labels = list(table.column(label_column)) if label_column else [None] * len(paths)
    rows = []
    for i, (value, label) in enumerate(zip(paths, labels, strict=True)):
        source = source_of(value)
        if source is None:
            source = Path()  # a blank cell: missing
        if isinstance(source, Path) and not source.is_absolute():
            source = base / source
        rows.append(ImageRow(source, None if label is None else str(label), i))
    return rows


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
        raise DataError(" ".join(exc.message for exc in refused), refused[0].hint)
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
    sentences = found.sentences(table.source, table.locate_many)
    if len(bad) == len(table):
        raise DataError(
            " ".join(sentences),
            msg("Check that the column {column} names the pictures, and that they are there.", column=column)
            if column and rows_of is None
            else msg("Check that the conversations name their pictures, and that they are there."),
        )
    if not drop_bad:
        raise DataError(
            " ".join(sentences),
            msg(
                'Replace or remove those pictures, or leave them out: tick "Leave out rows with a missing or '
                'unreadable picture, or no label" under Columns (data.drop_bad_rows = true in a config).'
            ),
        )
    import numpy as np

    usable = np.ones(len(table), dtype=bool)
    usable[bad] = False
    left = [msg("Left out: {problem}", problem=sentence) for sentence in sentences]
    return table.take(np.flatnonzero(usable)), left


@dataclass
class ImageProblems:
    """What :func:`check_images` found: each kind's rows (0-based), and the rows fit to train on."""

    missing: list[int] = field(default_factory=list)
    unreadable: list[int] = field(default_factory=list)
    truncated: list[int] = field(default_factory=list)
    odd_mode: list[tuple[int, str]] = field(default_factory=list)  # (row, mode): CMYK, I;16 ...
    huge: list[tuple[int, int]] = field(default_factory=list)  # (row, pixels)
    usable: list[int] = field(default_factory=list)

    def bad_rows(self) -> set[int]:
        return {
            *self.missing,
            *self.unreadable,
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

        if self.missing:
            rows = rows_of(self.missing)
            said.append(
                msg(
                    "{source}: {count} pictures are missing ({rows}).",
                    source=source,
                    count=len(rows),
                    rows=where(rows),
                )
            )
        if self.unreadable:
            rows = rows_of(self.unreadable)
            said.append(
                msg(
                    "{source}: {count} files are not pictures that can be read ({rows}).",
                    source=source,
                    count=len(rows),
                    rows=where(rows),
                )
            )
        if self.truncated:
            rows = rows_of(self.truncated)
            said.append(
                msg(
                    "{source}: {count} pictures are cut short (truncated) ({rows}).",
                    source=source,
                    count=len(rows),
                    rows=where(rows),
                )
            )
        if self.odd_mode:
            rows = rows_of(self.odd_mode)
            said.append(
                msg(
                    "{source}: {count} pictures have CMYK or 16-bit pixels, which models read wrongly "
                    "({rows}).",
                    source=source,
                    count=len(rows),
                    rows=where(rows),
                )
            )
        if self.huge:
            rows = rows_of(self.huge)
            said.append(
                msg(
                    "{source}: {count} pictures are very large (over 40 megapixels) ({rows}).",
                    source=source,
                    count=len(rows),
                    rows=where(rows),
                )
            )
        return said


def _rows_words(rows: list[int]) -> str:
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
        with _open(source) as image:
            pixels = image.width * image.height
            if pixels > huge:
                return "huge", pixels  # not decoded: that is what it could cost
            mode = image.mode
            if image.format == "JPEG":  # every byte is still read (a cut file fails), the pixels at 1/8
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


class _Cache:
    """The last :data:`CACHE_IMAGES` pictures decoded, by (path, size asked for)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.kept: OrderedDict[tuple[Any, int], Any] = OrderedDict()

    def get(self, key: tuple[Any, int], make: Callable[[], Any]) -> Any:
        if key in self.kept:
            self.kept.move_to_end(key)
            return self.kept[key]
        value = make()
        self.kept[key] = value
        if len(self.kept) > self.size:
            self.kept.popitem(last=False)
        return value


_CACHE = _Cache(CACHE_IMAGES)


def decode(source: Source, longest: int = 0) -> Any:
    """The picture as the model sees it: turned as its EXIF says, RGB, and no larger than ``longest``
    pixels a side when that is given. Not cached (training reads each picture once an epoch)."""
    from PIL import ImageOps

    with _open(source) as image:
        turned = ImageOps.exif_transpose(image)
        picture = turned.convert("RGB")
    if longest:
        picture.thumbnail((longest, longest))
    return picture


def load_image(path: Source, longest: int = 0) -> Any:
    """:func:`decode`, kept in a bounded cache (the preview's and the try-it panel's pictures)."""
    if isinstance(path, bytes):
        import hashlib

        key: Any = hashlib.blake2b(path, digest_size=16).digest()
    else:
        key = str(path)
    return _CACHE.get((key, longest), lambda: decode(path, longest))


def thumbnail(path: Source, longest: int = 96) -> Any:
    """A small copy for the preview (see :func:`load_image`)."""
    return load_image(path, longest)
