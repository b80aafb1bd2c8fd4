"""A file's contents decide what trains (issue 59): a CSV edited at the same size with its old modification
time put back (what ``cp -p``, ``rsync -a`` and ``tar x`` do) is read again, not taken from the caches,
and a resume names the change."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from desktop.core.data.checks import load_and_check
from desktop.core.data.formats.parsing import CACHE_FROM_BYTES
from desktop.core.runs.folders import RunDir
from desktop.core.system.events import ProgressEvent
from desktop.core.training.run import run_training
from tests.core.helpers import Recorder, make_config


def _reviews(path: Path, rows: int) -> Path:
    lines = ["text,label"]
    lines += [
        f"review number {i} was {'great' if i % 2 else 'awful'},{'pos' if i % 2 else 'neg'}"
        for i in range(rows)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _flip_labels_keeping_size_and_time(path: Path, count: int) -> None:
    """Swap ``count`` labels pos <-> neg (same byte length) and put the old modification time back."""
    before = path.stat()
    lines = path.read_text(encoding="utf-8").splitlines()
    for i in range(1, count + 1):
        text, label = lines[i].rsplit(",", 1)
        lines[i] = f"{text},{'neg' if label == 'pos' else 'pos'}"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def test_a_same_size_edit_with_its_old_time_is_read_again_not_taken_from_the_cache(
    tiny_bert: Path, tmp_path: Path
) -> None:
    data = _reviews(tmp_path / "reviews.csv", 40000)
    assert data.stat().st_size > CACHE_FROM_BYTES  # a file the table cache keeps
    config = make_config("classification", tiny_bert, [data], tmp_path / "runs")

    def labels() -> list[str]:
        checked = load_and_check(config)
        return [str(v) for v in checked.train.column("label")]

    first = labels()
    _flip_labels_keeping_size_and_time(data, 60)
    second = labels()

    assert len(first) == len(second) and first != second  # the new contents, not the cached old ones


@pytest.mark.slow
def test_a_resume_after_a_same_size_edit_names_the_change(tiny_bert: Path, tmp_path: Path) -> None:
    data = _reviews(tmp_path / "reviews.csv", 400)
    config = make_config("classification", tiny_bert, [data], tmp_path / "runs", max_steps=12, save_steps=100)
    stop = threading.Event()

    def stop_at_three(event: object) -> None:
        if isinstance(event, ProgressEvent) and event.step == 3:
            stop.set()

    stopped = run_training(config, stop_at_three, stop)
    assert stopped.status == "stopped"
    _flip_labels_keeping_size_and_time(data, 60)

    run = RunDir(stopped.run_dir)
    resumed = run_training(run.config(), Recorder().append, resume=run)

    assert resumed.status == "invalid"
    assert "reviews.csv was edited" in resumed.failure.reason
