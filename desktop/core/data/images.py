"""Pictures as training data: found in a folder of class folders or named by a table, checked before any
model loads, and read lazily.

- :func:`class_folders`: ``root/<label>/<image>`` (one folder per class), listed with ``os.scandir``
  (a 100,000-picture folder is listed, not opened);
- :func:`table_images`: a CSV / JSONL / Parquet table whose image column holds paths relative to the
  table's own folder (or absolute), beside a label column;
- the checks of every picture: :mod:`desktop.core.data.image_checks`;
- :func:`load_image`: a picture as the model sees it (EXIF rotation applied, RGB), from a bounded cache,
  and :func:`thumbnail` for the preview.

A picture's *source* is a path, or the bytes of the file (a hub dataset's image column: Arrow's
``{"bytes", "path"}`` structs); :func:`source_of` reads either from a cell.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PureWindowsPath
from typing import Any

from desktop.core.system.messages import msg

SUFFIXES = (".jpg", ".jpeg", ".jfif", ".jpe", ".png", ".bmp", ".gif", ".webp", ".tif", ".tiff", ".avif")
UNREAD_SUFFIXES = (".heic", ".heif")
"""Pictures Pillow cannot read (an iPhone's HEIC): listed all the same, so that the checks name them
instead of a folder losing them without a word."""
JPEGS = ("JPEG", "MPO")
"""Pillow's formats of JPEG files (MPO: many phones' photos), which decode at 1/2 to 1/8 scale."""
HUGE_PIXELS = 40_000_000
"""More pixels than this (e.g. 8000 x 5000) is named: decoding one takes 120 MB, and no model needs it."""
CACHE_IMAGES = 256
"""Pictures kept decoded (the preview's and the try-it panel's); the rest are read again when needed."""


@dataclass(frozen=True)
class ImageRow:
    """One picture of the data: where it is (a path, or the file's bytes), its label (``None`` without
    one), and its row (0-based)."""

    path: Path | bytes
    label: str | None
    row: int


Source = Path | bytes


def is_image(name: str) -> bool:
    return name.lower().endswith(SUFFIXES + UNREAD_SUFFIXES)


def source_of(value: Any) -> Source | None:
    """The picture a cell names: a path (text, or a ``file://`` address), or the bytes of the file
    (bytes, a ``data:`` URL, or a hub dataset's ``{"bytes": ..., "path": ...}``); ``None`` for a blank
    cell."""
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
        text = value.strip()
        if text.startswith("data:"):
            return _data_url(text)
        if text.startswith("file://"):
            return _file_address(text)
        return Path(text).expanduser()
    return None


def _file_address(text: str) -> Path:
    """The path a ``file://`` address names: ``file:///C:/a.png`` on Windows, a share's
    ``file://server/share/a.png`` as ``//server/share/a.png``; one that names no path (the checks then
    say it is missing) as it is written."""
    import urllib.parse
    import urllib.request

    parts = urllib.parse.urlparse(text)
    path = parts.path if parts.netloc in ("", "localhost") else f"//{parts.netloc}{parts.path}"
    try:
        return Path(urllib.request.url2pathname(path))
    except OSError:  # Windows: a drive or a name it refuses
        return Path(text)


def _data_url(text: str) -> bytes:
    """A ``data:`` URL's bytes; one that cannot be decoded as its own text, which the checks then name
    as not a picture."""
    import base64
    import binascii
    import urllib.parse

    header, _, payload = text.partition(",")
    try:
        if header.endswith(";base64"):
            return base64.b64decode(payload, validate=True)
        return urllib.parse.unquote_to_bytes(payload)
    except (binascii.Error, ValueError):
        return text.encode()


def open_picture(source: Source) -> Any:
    """The picture at ``source`` (a path or the file's bytes), opened lazily (Pillow's ``Image.open``).

    Pillow's warning about a picture of over 89 megapixels is silenced: the checks name such a picture
    (:data:`HUGE_PIXELS`) in words, and the warning's text would reach the user as a library's."""
    import warnings

    from PIL import Image

    # Each time, not once: a library's (or pytest's) catch_warnings() block restores the filters it found.
    warnings.filterwarnings("ignore", category=Image.DecompressionBombWarning)

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
    if labelled:
        _refuse_metadata_folder(root)
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
    if labelled:
        _refuse_split_folders(root, sorted({str(r.label) for r in rows}))
    columns = {"image": [str(r.path) for r in rows]}
    if labelled:
        columns["label"] = [r.label for r in rows]
    frame = pd.DataFrame(columns)
    names = [Path(os.path.relpath(r.path, root)).as_posix() for r in rows]
    return Table(frame, root.name, [(0, (root.name, "file"), names, 0)])


def read_picture(path: Path) -> Any:
    """One picture as a table of one row (a picture to predict), in the column ``image``."""
    import pandas as pd

    from desktop.core.data.tables import Table

    path = Path(path).absolute()
    return Table(
        pd.DataFrame({"image": [str(path)]}), path.name, [(0, (path.parent.name, "file"), [path.name], 0)]
    )


SPLIT_NAMES = frozenset(["train", "training", "val", "valid", "validation", "test", "testing", "eval", "dev"])
"""Folder names that say a part of the data (its training or evaluation pictures), not a class."""


METADATA_NAMES = ("metadata.csv", "metadata.jsonl", "metadata.parquet")
"""The table of the Hugging Face ``imagefolder`` layout: a ``file_name`` column and the labels."""


def _refuse_metadata_folder(root: Path) -> None:
    """A folder in the Hugging Face ``imagefolder`` layout keeps its labels in a metadata table (in it,
    or in each of its parts' folders, ``train/``, ``test/``): those are not classes. Said, with the
    table to choose instead (the training part's); a class folder's own notes are not looked at."""
    try:  # the folder itself, then its parts' folders, the training part first
        parts = [entry for entry in root.iterdir() if entry.is_dir() and entry.name.casefold() in SPLIT_NAMES]
    except OSError:
        return  # the listing says why
    parts.sort(key=lambda part: (not part.name.casefold().startswith("train"), part.name))
    places = [root, *parts]
    tables = [place / name for place in places for name in METADATA_NAMES]
    found = next((table for table in tables if table.is_file()), None)
    if found is None:
        return
    from desktop.core.system.errors import DataError

    raise DataError(
        msg(
            "{folder} is in the Hugging Face imagefolder layout: its labels are in {table}, not in the names "
            "of its folders.",
            folder=root.name,
            table=Path(os.path.relpath(found, root.parent)).as_posix(),
        ),
        msg(
            "Choose {table} as the data: its file_name column names the pictures, relative to its folder.",
            table=found,
        ),
    )


def _refuse_split_folders(root: Path, labels: list[str]) -> None:
    """A folder whose "classes" are the data's parts (``train/`` and ``val/``, each holding the class
    folders) would train a classifier of train against val: said instead."""
    if not labels or not {label.casefold() for label in labels} <= SPLIT_NAMES:
        return
    if not all(any(entry.is_dir() for entry in (root / label).iterdir()) for label in labels):
        return
    from desktop.core.system.errors import DataError

    raise DataError(
        msg(
            "{folder} holds the data's parts ({parts}), each with its class folders, not one folder "
            "per class.",
            folder=root.name,
            parts=", ".join(labels),
        ),
        msg(
            "Choose {folder}/{train} as the data, and the other part as the evaluation files "
            "(validation.files in a config).",
            folder=root.name,
            train=next((label for label in labels if label.casefold().startswith("train")), labels[0]),
        ),
    )


def resolve_paths(frame: Any, folder: Path) -> None:
    """Make the picture paths of a table read from a file in ``folder`` full paths (in place): a path in
    a table is relative to the table's own folder, wherever the app was started from."""
    for name in list(frame.columns):
        column = frame[name]
        if column.dtype != object and not str(column.dtype).startswith(("str", "string")):
            continue
        if looks_like_images(column.head(50).tolist()):
            frame[name] = [_full(v, folder) for v in column.tolist()]


def _full(value: Any, folder: Path) -> Any:
    """A cell's picture path made full: relative to ``folder``, ``\\`` read as a folder separator (a
    table written on Windows); a web address and a cell holding the picture's bytes kept as they are."""
    if isinstance(value, dict) and not value.get("bytes") and isinstance(value.get("path"), str):
        return {**value, "path": _full(value["path"], folder)}
    if not isinstance(value, str) or not value.strip() or "://" in value or value.startswith("data:"):
        return value
    text = value.strip()
    path = Path(text).expanduser()
    if not path.is_absolute() and not PureWindowsPath(text).is_absolute():
        path = folder / Path(*PureWindowsPath(text).parts)
    return str(path)


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


class _Cache:
    """The last :data:`CACHE_IMAGES` pictures decoded, by (path, size asked for); the preview's worker
    fills it while the window reads it (a lock around the order, never around the decoding)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.kept: OrderedDict[tuple[Any, int], Any] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple[Any, int], make: Callable[[], Any]) -> Any:
        with self.lock:
            if key in self.kept:
                self.kept.move_to_end(key)
                return self.kept[key]
        value = make()
        with self.lock:
            self.kept[key] = value
            if len(self.kept) > self.size:
                self.kept.popitem(last=False)
        return value


_CACHE = _Cache(CACHE_IMAGES)


def decode(source: Source, longest: int = 0, at_least: int = 0) -> Any:
    """The picture as the model sees it: turned as its EXIF says, RGB, and no larger than ``longest``
    pixels a side when that is given. ``at_least``: a JPEG may be decoded smaller, at 1/2 to 1/8 scale,
    while both its sides stay at least that long (a model that reads 224 pixels needs no 12 MP photo:
    decoding one at 1/4 takes a tenth of the time). Not cached (training reads each picture once an
    epoch)."""
    from PIL import ImageOps

    with open_picture(source) as image:
        if image.format in JPEGS and (longest or at_least):  # a small copy: decoded at 1/2 to 1/8 scale
            image.draft("RGB", (longest, longest) if longest else (at_least, at_least))
        turned = ImageOps.exif_transpose(image)
        picture = _rgb(turned)
    if longest:
        picture.thumbnail((longest, longest))
    return picture


def reading_side(processor: Any) -> int:
    """The side a picture may be decoded down to for ``processor`` (an image processor): twice the
    largest size it resizes or crops to, so that its own resizing still starts from more pixels than it
    keeps; 0 when it names no size."""
    sides = []
    for name in ("size", "crop_size"):
        value = getattr(processor, name, None)
        if isinstance(value, (int, float)):
            sides.append(int(value))
            continue
        for key in ("height", "width", "shortest_edge", "longest_edge"):  # a dict, or Transformers' SizeDict
            side = value.get(key) if isinstance(value, dict) else getattr(value, key, None)
            if isinstance(side, (int, float)):
                sides.append(int(side))
    return 2 * max(sides) if sides else 0


def _rgb(image: Any) -> Any:
    """A picture as RGB, transparent parts on white (converted directly, a black icon on a transparent
    background came out all black)."""
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        from PIL import Image

        rgba = image.convert("RGBA")
        white = Image.new("RGB", rgba.size, (255, 255, 255))
        white.paste(rgba, mask=rgba.getchannel("A"))
        return white
    return image.convert("RGB")


def load_image(path: Source, longest: int = 0) -> Any:
    """:func:`decode`, kept in a bounded cache (the preview's and the try-it panel's pictures)."""
    if isinstance(path, bytes):
        import hashlib

        key: Any = hashlib.blake2b(path, digest_size=16).digest()
    else:
        key = str(path)
    return _CACHE.get((key, longest), lambda: decode(path, longest))


PREVIEW_THUMBNAIL = 64
"""The side of a thumbnail in a preview table's row, in pixels."""


def warm_thumbnails(values: Sequence[Any], longest: int = PREVIEW_THUMBNAIL) -> None:
    """Decode the thumbnails of the cells ``values`` into the cache, off the window's thread: the
    preview then shows them without decoding a photo while the window waits."""
    for value in values:
        source = source_of(value)
        if source is None:
            continue
        try:
            thumbnail(source, longest)
        except Exception:  # missing, not a picture, truncated, huge: the data check names why
            continue


def thumbnail(path: Source, longest: int = 96) -> Any:
    """A small copy for the preview (see :func:`load_image`).

    Raises:
        ValueError: The picture is over :data:`HUGE_PIXELS` (not decoded: the check names it).
    """
    from PIL import Image

    with open_picture(path) as image:
        if image.width * image.height > HUGE_PIXELS:
            raise Image.DecompressionBombError(f"{image.width} x {image.height} pixels")
    return load_image(path, longest)
