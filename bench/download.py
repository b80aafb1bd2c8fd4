"""Download throughput against a plain ``huggingface_hub.snapshot_download`` of the same repository from
the same local server, and the time to fail on an endpoint that never answers.

Usage: python bench/download.py [--mb 256]
Prints: both throughputs, the ratio of each round (ours / plain, same round) and their median
(target >= 0.95), and the seconds to fail (target < 5).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import socket
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=256, help="size of the weights file")
    parser.add_argument("--rounds", type=int, default=5, help="downloads of each kind, alternating")
    args = parser.parse_args()
    os.environ.pop("HF_HUB_OFFLINE", None)
    import subprocess

    folder = Path(tempfile.mkdtemp())
    (folder / "config.json").write_text('{"model_type": "gpt2"}')
    (folder / "tokenizer.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(os.urandom(args.mb * 2**20))
    # The server runs in a process of its own, as a real hub would: it does not share the client's GIL.
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.fakehub", f"bench/model={folder}"],
        cwd=Path(__file__).resolve().parents[1],
        stdout=subprocess.PIPE,
        text=True,
    )
    url = server.stdout.readline().strip()
    os.environ["HF_ENDPOINT"] = url
    import huggingface_hub.constants as constants
    from huggingface_hub import snapshot_download

    from desktop.core.hub import downloads, sources

    constants.HF_HUB_OFFLINE = False
    size = float(args.mb)
    plain_runs, our_runs = [], []
    for _ in range(args.rounds):  # alternating, so neither gets a warmer machine
        with tempfile.TemporaryDirectory() as plain_dir, tempfile.TemporaryDirectory() as ours_dir:
            started = time.perf_counter()
            snapshot_download("bench/model", endpoint=url, cache_dir=plain_dir)
            plain_runs.append(size / (time.perf_counter() - started))
            started = time.perf_counter()
            downloads.download("bench/model", sources.resolve(endpoint=url), cache_dir=Path(ours_dir))
            our_runs.append(size / (time.perf_counter() - started))
    middle = len(plain_runs) // 2
    plain, ours = sorted(plain_runs)[middle], sorted(our_runs)[middle]
    ratios = sorted(o / p for o, p in zip(our_runs, plain_runs, strict=True))
    print(
        f"{size:.0f} MB, medians of {args.rounds} rounds: snapshot_download {plain:.0f} MB/s, "
        f"Finetune Studio {ours:.0f} MB/s; ratio {ratios[middle]:.2f} (the median of the rounds' ratios: "
        f"{', '.join(f'{r:.2f}' for r in ratios)})"
    )
    server.kill()
    server.wait()
    shutil.rmtree(folder, ignore_errors=True)

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # accepts connections, never answers: a blocked network
    from desktop.core.hub import access as hub_module
    from desktop.core.system.errors import ModelError

    hub_module._answers.clear()
    started = time.perf_counter()
    with contextlib.suppress(ModelError):
        downloads.download(
            "someone/model", sources.resolve(endpoint=f"http://127.0.0.1:{silent.getsockname()[1]}")
        )
    print(f"time to fail on an endpoint that never answers: {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
