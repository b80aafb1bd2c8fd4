"""The app's folders and crash-safe file writes."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

APP_NAME = "FinetuneStudio"


def resources_dir() -> Path:
    """The app's resources (style sheet, wheel table, samples, icon).

    In a source checkout (or an editable install) they are the repository's ``resources/``; an app
    installed from its wheel has them in ``<prefix>/share/finetune-studio/resources``.
    """
    source = Path(__file__).resolve().parents[3] / "resources"
    if (source / "torch_wheels.json").is_file():
        return source
    return Path(sys.prefix) / "share" / "finetune-studio" / "resources"


def data_dir() -> Path:
    """The per-user data folder: :func:`default_data_dir`, or where its ``location.json`` says when the
    user moved it (``desktop.core.system.data_location``)."""
    default = default_data_dir()
    try:
        moved = json.loads((default / "location.json").read_text(encoding="utf-8")).get("data")
    except (OSError, ValueError, AttributeError):
        moved = None
    return Path(moved) if isinstance(moved, str) and moved else default


def default_data_dir() -> Path:
    """The data folder's place unless it was moved: ``FINETUNE_STUDIO_HOME``, else the system's per-user
    data folder."""
    override = os.environ.get("FINETUNE_STUDIO_HOME")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def default_runs_dir() -> Path:
    """Where run folders go unless the config says otherwise."""
    return data_dir() / "runs"


def folder_size(folder: Path) -> int:
    """Bytes of the files in ``folder`` and below; links are not followed (a hub cache's snapshot links
    to its blobs, which would count twice)."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file, read in blocks (a 3 GB wheel or a data file never whole in memory)."""
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(8 << 20):
            digest.update(block)
    return digest.hexdigest()


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the new one, never half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
