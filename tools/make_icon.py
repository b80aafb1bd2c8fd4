"""Draw the app icon: resources/icon.png (256 px) and resources/icon.ico (for Windows and NSIS).

Run: python tools/make_icon.py   (PySide6 only; the files are committed, so this is needed only to
change the icon.)
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QBuffer, QIODevice, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage, QLinearGradient, QPainter, QPainterPath, QPen

RESOURCES = Path(__file__).resolve().parents[1] / "resources"


def draw(size: int) -> QImage:
    """A blue rounded square with a falling loss curve and a bright end point."""
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    p = QPainter(image)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    s = size / 256
    gradient = QLinearGradient(0, 0, size, size)
    gradient.setColorAt(0, QColor("#3b82f6"))
    gradient.setColorAt(1, QColor("#1e3a8a"))
    p.setBrush(gradient)
    p.setPen(Qt.PenStyle.NoPen)
    p.drawRoundedRect(QRectF(8 * s, 8 * s, 240 * s, 240 * s), 52 * s, 52 * s)
    grid = QPen(QColor(255, 255, 255, 50), 4 * s)
    p.setPen(grid)
    for y in (88, 136, 184):
        p.drawLine(QPointF(48 * s, y * s), QPointF(208 * s, y * s))
    curve = QPainterPath(QPointF(48 * s, 60 * s))
    curve.cubicTo(QPointF(90 * s, 170 * s), QPointF(130 * s, 185 * s), QPointF(200 * s, 192 * s))
    p.setPen(QPen(QColor("white"), 16 * s, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
    p.setBrush(Qt.BrushStyle.NoBrush)
    p.drawPath(curve)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(QColor("#fbbf24"))
    p.drawEllipse(QPointF(200 * s, 192 * s), 20 * s, 20 * s)
    p.end()
    return image


def png_bytes(image: QImage) -> bytes:
    """The image as PNG file bytes."""
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(buffer.data())


def ico_bytes(sizes: tuple[int, ...] = (16, 24, 32, 48, 64, 128, 256)) -> bytes:
    """A Windows .ico holding one PNG per size (Windows Vista and later read PNG entries)."""
    images = [png_bytes(draw(size)) for size in sizes]
    header = struct.pack("<HHH", 0, 1, len(images))
    offset = len(header) + 16 * len(images)
    entries = b""
    for size, data in zip(sizes, images, strict=True):
        side = 0 if size >= 256 else size  # 0 means 256 in an icon directory
        entries += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(data), offset)
        offset += len(data)
    return header + entries + b"".join(images)


def main() -> int:
    QGuiApplication(sys.argv)
    (RESOURCES / "icon.png").write_bytes(png_bytes(draw(256)))
    (RESOURCES / "icon.ico").write_bytes(ico_bytes())
    return 0


if __name__ == "__main__":
    sys.exit(main())
