"""Write the picture samples in resources/samples/: shapes of several colours, drawn by us (no network).

- ``shapes/<shape>/<colour>-<n>.png``: 64 x 64 pictures of a circle, a square or a triangle, 30 of each,
  in six colours, at several sizes and places, on a light background with a little noise: a folder of
  class folders for image classification;
- ``shapes-vqa.jsonl``: the same pictures with a question and its answer (``image``, ``question``,
  ``answer``; paths relative to the file), for vision-language fine-tuning.

Deterministic (a fixed seed): run it to regenerate.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from PIL import Image, ImageDraw

OUT = Path(__file__).resolve().parent.parent / "resources" / "samples"
SIZE, PER_SHAPE = 64, 30
COLOURS = {
    "red": (214, 48, 49),
    "green": (39, 174, 96),
    "blue": (41, 128, 185),
    "yellow": (241, 196, 15),
    "purple": (142, 68, 173),
    "black": (30, 30, 30),
}
SHAPES = ("circle", "square", "triangle")


def draw(rng: random.Random, shape: str, colour: tuple[int, int, int]) -> Image.Image:
    picture = Image.new("RGB", (SIZE, SIZE), tuple(rng.randint(225, 250) for _ in range(3)))
    pen = ImageDraw.Draw(picture)
    side = rng.randint(22, 44)
    x, y = rng.randint(2, SIZE - side - 2), rng.randint(2, SIZE - side - 2)
    box = (x, y, x + side, y + side)
    if shape == "circle":
        pen.ellipse(box, fill=colour)
    elif shape == "square":
        pen.rectangle(box, fill=colour)
    else:
        pen.polygon([(x + side // 2, y), (x, y + side), (x + side, y + side)], fill=colour)
    for _ in range(40):  # a little noise, so that no two pictures are alike
        pen.point(
            (rng.randrange(SIZE), rng.randrange(SIZE)), fill=tuple(rng.randint(180, 255) for _ in range(3))
        )
    return picture


def main() -> None:
    rng = random.Random(20261205)
    folder = OUT / "shapes"
    rows = []
    for shape in SHAPES:
        (folder / shape).mkdir(parents=True, exist_ok=True)
        for n in range(PER_SHAPE):
            name = rng.choice(list(COLOURS))
            path = folder / shape / f"{name}-{n:02d}.png"
            draw(rng, shape, COLOURS[name]).save(path, optimize=True)
            rows.append(
                {
                    "image": path.relative_to(OUT).as_posix(),
                    "question": "What is in this picture?",
                    "answer": f"A {name} {shape}.",
                }
            )
    rng.shuffle(rows)
    with open(OUT / "shapes-vqa.jsonl", "w", encoding="utf-8", newline="\n") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)


if __name__ == "__main__":
    main()
