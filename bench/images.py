"""Pictures as data: how long a folder of many small pictures takes to list and preview, and the memory.

Writes ``--count`` pictures (16 x 16 PNG, 10 class folders) into a temporary folder, then times, in a fresh
process: listing the class folders (``images.class_folders``: names only, nothing opened), the preview's
first rows (thumbnails of the first 8, decoded through the bounded cache), and checking every picture
(``images.check_images``: each opened once), with the process's peak RSS. The issue's target: the preview
in about the time of listing the folder. Training throughput against a plain Trainer comes with the
image-classification task.

    python bench/images.py [--count 100000]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def write(root: Path, count: int) -> None:
    from PIL import Image

    picture = Image.new("RGB", (16, 16), "teal")
    for i in range(count):
        folder = root / f"class{i % 10}"
        folder.mkdir(exist_ok=True)
        picture.save(folder / f"{i:06d}.png")


def measure(root: Path) -> dict:
    from desktop.core.data import images

    started = time.perf_counter()
    rows = images.class_folders(root)
    listed = time.perf_counter()
    for row in rows[:8]:
        images.thumbnail(row.path)
    previewed = time.perf_counter()
    found = images.check_images(rows)
    checked = time.perf_counter()
    return {
        "pictures": len(rows),
        "list_s": listed - started,
        "preview_s": previewed - started,
        "check_s": checked - previewed,
        "usable": len(found.usable),
        "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.root:
        print(json.dumps(measure(Path(args.root))))
        return
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        write(Path(tmp), args.count)
        print(f"wrote {args.count} pictures in {time.perf_counter() - started:.1f} s", flush=True)
        done = subprocess.run(
            [sys.executable, __file__, "--root", tmp], capture_output=True, text=True, check=True
        )
        r = json.loads(done.stdout.splitlines()[-1])
    print(
        f"{r['pictures']} pictures: listed in {r['list_s']:.2f} s, preview (listing + 8 thumbnails) "
        f"{r['preview_s']:.2f} s ({r['preview_s'] / r['list_s']:.2f}x the listing), every picture checked in "
        f"{r['check_s']:.1f} s ({r['check_s'] / r['pictures'] * 1e6:.0f} us each), "
        f"peak RSS {r['rss_mib']:.0f} MiB"
    )


if __name__ == "__main__":
    main()
