"""Pictures of the data as Qt shows them: thumbnails decoded once (the core's bounded cache)."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QImage, QPixmap

from desktop.core.data.images import PREVIEW_THUMBNAIL as THUMBNAIL  # the size the preview decoded


def pixmap_of(picture: Any) -> QPixmap:
    """A Pillow picture (RGB) as a ``QPixmap``."""
    rgb = picture.convert("RGB")
    data = rgb.tobytes("raw", "RGB")
    image = QImage(data, rgb.width, rgb.height, 3 * rgb.width, QImage.Format.Format_RGB888)
    return QPixmap.fromImage(image.copy())  # the copy owns its pixels: ``data`` may go


def thumbnail_pixmap(value: Any, longest: int = THUMBNAIL) -> QPixmap | None:
    """A cell's picture (a path, the file's bytes, a hub dataset's ``{"bytes", "path"}``) as a small
    ``QPixmap``; ``None`` when it cannot be read (the data check names why)."""
    from desktop.core.data.images import source_of, thumbnail

    source = source_of(value)
    if source is None:
        return None
    try:
        return pixmap_of(thumbnail(source, longest))
    except Exception:  # missing, not a picture, truncated, huge: the data check names why
        return None


def picture_words(value: Any) -> str:
    """What a picture cell reads as text: the file's name (its path in the tooltip), or the size of a
    picture held as bytes."""
    from pathlib import Path

    from desktop.core.data.images import source_of

    source = source_of(value)
    if isinstance(source, bytes):
        return f"{len(source) / 1024:.0f} KB"
    return Path(source).name if source is not None else ""
