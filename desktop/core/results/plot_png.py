"""A small line chart as PNG, with numpy and zlib only (the model card's loss curve; no plotting library)."""

from __future__ import annotations

import itertools
import struct
import zlib
from pathlib import Path

WIDTH, HEIGHT, MARGIN = 640, 320, 40
COLORS = [(47, 111, 222), (232, 121, 58), (58, 165, 93)]


def _png(pixels: object) -> bytes:
    import numpy as np

    rows = np.asarray(pixels, dtype=np.uint8)
    raw = b"".join(b"\x00" + rows[y].tobytes() for y in range(rows.shape[0]))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", rows.shape[1], rows.shape[0], 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def line_chart(series: dict[str, list[tuple[float, float]]], path: Path) -> Path:
    """Draw each series (x, y points) as a line on shared axes and save a PNG at ``path``.

    Axes are drawn as lines; values are in the model card's text, so the image needs no fonts.
    """
    import numpy as np

    image = np.full((HEIGHT, WIDTH, 3), 255, dtype=np.uint8)
    image[HEIGHT - MARGIN, MARGIN : WIDTH - MARGIN // 2] = (90, 90, 90)
    image[MARGIN // 2 : HEIGHT - MARGIN + 1, MARGIN] = (90, 90, 90)
    points = [p for values in series.values() for p in values]
    if points:
        xs, ys = [p[0] for p in points], [p[1] for p in points]
        x0, x1 = min(xs), max(xs) or 1
        y0, y1 = min(0.0, min(ys)), max(ys) or 1

        def to_pixel(x: float, y: float) -> tuple[int, int]:
            px = MARGIN + (x - x0) / ((x1 - x0) or 1) * (WIDTH - 1.5 * MARGIN)
            py = HEIGHT - MARGIN - (y - y0) / ((y1 - y0) or 1) * (HEIGHT - 1.5 * MARGIN)
            return round(px), round(py)

        for color, values in zip(COLORS, series.values(), strict=False):
            pixels = [to_pixel(x, y) for x, y in values]
            for (ax, ay), (bx, by) in itertools.pairwise(pixels):
                steps = max(abs(bx - ax), abs(by - ay), 1)
                for t in np.linspace(0, 1, steps + 1):
                    x, y = round(float(ax + (bx - ax) * t)), round(float(ay + (by - ay) * t))
                    image[max(0, y - 1) : y + 2, max(0, x - 1) : x + 2] = color
    path.write_bytes(_png(image))
    return path
