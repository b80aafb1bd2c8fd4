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
    """One picture of the data: where it is, its label (``None`` without one), and its row (0-based)."""

    path: Path
    label: str | None
    row: int


def is_image(name: str) -> bool:
    return name.lower().endswith(SUFFIXES)


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
        text = "" if value is None else str(value).strip()
        path = Path(text).expanduser() if text else Path()
        rows.append(
            ImageRow(path if path.is_absolute() else base / path, None if label is None else str(label), i)
        )
    return rows


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
    """Open every picture once and sort the rows by what is wrong with them (nothing: ``usable``)."""
    from PIL import Image, UnidentifiedImageError

    found = ImageProblems()
    for done, item in enumerate(rows):
        if stop is not None and stop():
            break
        if progress is not None and done % 500 == 0:
            progress(done, len(rows))
        if not item.path.is_file():
            found.missing.append(item.row)
            continue
        try:
            with Image.open(item.path) as image:
                pixels = image.width * image.height
                if pixels > huge:
                    found.huge.append((item.row, pixels))  # not decoded: that is what it could cost
                    continue
                image.load()
                mode = image.mode
        except UnidentifiedImageError:
            found.unreadable.append(item.row)
            continue
        except Image.DecompressionBombError:
            found.huge.append((item.row, huge + 1))
            continue
        except OSError as exc:
            (found.truncated if "truncated" in str(exc).lower() else found.unreadable).append(item.row)
            continue
        except (ValueError, SyntaxError):  # a header that lies about the pixels
            found.unreadable.append(item.row)
            continue
        if mode in ("CMYK", "I;16", "I;16B", "I;16L", "I", "F"):
            found.odd_mode.append((item.row, mode))
            continue
        found.usable.append(item.row)
    if progress is not None:
        progress(len(rows), len(rows))
    return found


class _Cache:
    """The last :data:`CACHE_IMAGES` pictures decoded, by (path, size asked for)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.kept: OrderedDict[tuple[str, int], Any] = OrderedDict()

    def get(self, key: tuple[str, int], make: Callable[[], Any]) -> Any:
        if key in self.kept:
            self.kept.move_to_end(key)
            return self.kept[key]
        value = make()
        self.kept[key] = value
        if len(self.kept) > self.size:
            self.kept.popitem(last=False)
        return value


_CACHE = _Cache(CACHE_IMAGES)


def load_image(path: Path, longest: int = 0) -> Any:
    """The picture at ``path`` as the model sees it: turned as its EXIF says, RGB, and no larger than
    ``longest`` pixels a side when that is given (a thumbnail). Kept in a bounded cache."""

    def make() -> Any:
        from PIL import Image, ImageOps

        with Image.open(path) as image:
            turned = ImageOps.exif_transpose(image)
            picture = turned.convert("RGB")
        if longest:
            picture.thumbnail((longest, longest))
        return picture

    return _CACHE.get((str(path), longest), make)


def thumbnail(path: Path, longest: int = 96) -> Any:
    """A small copy for the preview (see :func:`load_image`)."""
    return load_image(path, longest)
