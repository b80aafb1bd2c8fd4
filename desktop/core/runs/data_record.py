"""What data a run trained on, so that a resume can tell when it changed.

A run records its data when it starts (``data.json`` in the run folder): each local file's size,
modification time and SHA-256, the hub dataset it read, the training and evaluation row counts and,
for classification, the label set. A resume compares the data it reads now with that record before it
loads a checkpoint:

- a changed **label set** is refused: the checkpoints' classifier has one output per class, so they
  cannot go on with another set (and are not damaged for it). Putting the old data back resumes.
- **other changes** (a file edited, rows added or removed) are named, and the user chooses: resume on
  the new data (:func:`accept_new_data`, then resume again), or start a new run.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from desktop.core.data.digest import file_digest, folder_digest
from desktop.core.system.errors import InputError
from desktop.core.system.messages import msg
from desktop.core.system.paths import atomic_write_text, file_sha256

RECORD_FILE = "data.json"


class LabelsChanged(InputError):
    """The data's label set is not the one the run's checkpoints were trained on."""


class DataChanged(InputError):
    """The data changed since the run started (not its labels): resume on it only when the user says so."""


@dataclass
class DataRecord:
    """A run's data, as a resume compares it.

    Attributes:
        files: Each local file (its path as the config gives it): ``size``, ``mtime_ns``, ``xxh3``,
            ``sha256``.
        hub: The hub dataset, ``id`` with its ``config`` and ``split``, or ``""``.
        rows: ``train`` and ``eval`` row counts, after the checks.
        labels: Classification: the classes, as text, sorted; ``None`` for other tasks.
        accepted: The user chose to resume on changed data: the next resume records the data it reads.
    """

    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    hub: str = ""
    rows: dict[str, int] = field(default_factory=dict)
    labels: list[str] | None = None
    accepted: bool = False


def describe(
    files: list[Path],
    hub: str,
    rows: dict[str, int],
    labels: list[Any] | None,
    before: DataRecord | None = None,
) -> DataRecord:
    """The record of this data. Each file's contents are read for its ``xxh3`` (:func:`file_digest`,
    0.12 s per GB): an edit that keeps the size and the modification time is still a change. Where that
    digest matches ``before``'s, the slower SHA-256 is kept instead of computed again."""
    known = before.files if before is not None else {}
    described = {}
    for path in files:
        if path.is_dir():  # a folder of pictures: its listing
            listing, size = folder_digest(path)
            described[str(path)] = {"size": size, "mtime_ns": 0, "xxh3": listing, "sha256": listing}
            continue
        stat = path.stat()
        old = known.get(str(path), {})
        quick = file_digest(path)
        digest = old["sha256"] if old.get("xxh3") == quick and old.get("sha256") else file_sha256(path)
        described[str(path)] = {
            "size": stat.st_size,
            "mtime_ns": stat.st_mtime_ns,
            "xxh3": quick,
            "sha256": digest,
        }
    classes = sorted({str(label) for label in labels}) if labels is not None else None
    return DataRecord(described, hub, dict(rows), classes)


def save(run_path: Path, record: DataRecord) -> None:
    atomic_write_text(Path(run_path) / RECORD_FILE, json.dumps(asdict(record), indent=2, ensure_ascii=False))


def load(run_path: Path) -> DataRecord | None:
    """The run's record; ``None`` for a run from before records were kept, or an unreadable one."""
    try:
        values = json.loads((Path(run_path) / RECORD_FILE).read_text(encoding="utf-8"))
        return DataRecord(**values)
    except (OSError, ValueError, TypeError):
        return None


def accept_new_data(run_path: Path) -> None:
    """The user chose to resume on the changed data (the label set must still be the same)."""
    record = load(run_path)
    if record is not None:
        record.accepted = True
        save(run_path, record)


def check_unchanged(before: DataRecord, now: DataRecord) -> None:
    """Refuse a resume on other data, in one sentence naming the change.

    Raises:
        LabelsChanged: The label set differs (always refused).
        DataChanged: Anything else differs and the user has not accepted it.
    """
    if before.labels is not None and now.labels is not None and before.labels != now.labels:
        raise LabelsChanged(
            msg(
                "The data's classes changed since this run started: {change}. Its checkpoints were "
                "trained for the old classes and cannot go on with these.",
                change=label_change(before.labels, now.labels),
            ),
            msg(
                "Put the data the run started with back to resume it (nothing was changed in the run), "
                "or start a new run on this data."
            ),
        )
    changes = data_changes(before, now)
    if changes and not before.accepted:
        raise DataChanged(
            msg("The data changed since this run started: {changes}.", changes=_listed(changes)),
            msg(
                "Resume on the new data (in the app: the button below; on the command line: add "
                "--new-data), or start a new run on it. The run's checkpoints are kept either way."
            ),
        )


def label_change(before: list[str], now: list[str]) -> str:
    """``2 classes -> 3: neutral was added``."""
    added = [label for label in now if label not in before]
    removed = [label for label in before if label not in now]
    parts = []
    if added:
        parts.append(msg("{labels} was added", labels=", ".join(added)))
    if removed:
        parts.append(msg("{labels} was removed", labels=", ".join(removed)))
    return msg(
        "{before} classes -> {now}: {what}",
        before=len(before),
        now=len(now),
        what=_listed(parts),
    )


def _listed(parts: list[str]) -> str:
    """Phrases one after another, as one translatable message (each phrase stays a message)."""
    text = parts[0] if parts else ""
    for part in parts[1:]:
        text = msg("{first}; {then}", first=text, then=part)
    return text


def data_changes(before: DataRecord, now: DataRecord) -> list[str]:
    """Each difference other than the labels, as a phrase (empty when the data is the same)."""
    changes = []
    if before.hub != now.hub:
        was, now_hub = before.hub or "-", now.hub or "-"
        changes.append(msg("the dataset is {now}, was {before}", now=now_hub, before=was))
    for name in sorted(set(before.files) | set(now.files)):
        shown = Path(name).name
        old, new = before.files.get(name), now.files.get(name)
        if old is None:
            changes.append(msg("{file} was added", file=shown))
        elif new is None:
            changes.append(msg("{file} is no longer used", file=shown))
        elif old.get("sha256") != new.get("sha256"):
            changes.append(msg("{file} was edited", file=shown))
    for part, said in (("train", msg("training rows")), ("eval", msg("evaluation rows"))):
        if before.rows.get(part) != now.rows.get(part) and part in before.rows:
            was, count = before.rows[part], now.rows.get(part, 0)
            changes.append(msg("{what}: {before} -> {now}", what=said, before=was, now=count))
    return changes
