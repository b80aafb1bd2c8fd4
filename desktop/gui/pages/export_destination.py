"""Where the Export step's "Export a copy" goes unless the user picks a folder."""

from __future__ import annotations

from pathlib import Path

from desktop.core.system.events import RunResult


def default_destination(result: RunResult, beside: Path | None = None) -> Path:
    """Where "Export a copy" goes unless the user picks a folder: a new folder named after the run in
    the folder the last export went to (``beside``), else in the user's Documents (not inside the run
    folder, which the export refuses)."""
    from PySide6.QtCore import QStandardPaths

    documents = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    base = (
        beside
        if beside is not None and beside.is_dir()
        else Path(documents or Path.home()) / "Finetune Studio"
    )
    name = Path(result.run_dir).name if result.run_dir else "model"
    candidate, number = base / name, 2
    while candidate.exists():
        candidate, number = base / f"{name}-{number}", number + 1
    return candidate
