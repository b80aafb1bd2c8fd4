"""The models finished runs saved, as the start of another run: a chat model's preference tuning."""

from __future__ import annotations

from pathlib import Path

from desktop.core.runs.folders import RunDir
from desktop.core.runs.listing import RunInfo, list_runs


def saved_chat_model(info: RunInfo) -> Path | None:
    """The model folder of a finished causal-LM (chat) run, which a preference run can start from;
    ``None`` for another task, a run that did not finish, or one whose model is not there (deleted)."""
    if info.task != "causal-lm" or info.status != "finished":
        return None
    folder = RunDir(info.path).model_dir
    return folder if (folder / "config.json").is_file() else None


def finished_chat_models(runs_dir: Path) -> list[tuple[str, Path]]:
    """The finished chat runs below ``runs_dir`` that saved a model, newest first: (run name, model
    folder)."""
    found = []
    for info in list_runs(runs_dir):
        folder = saved_chat_model(info)
        if folder is not None:
            found.append((info.name, folder))
    return found
