"""Which finished runs saved a chat model that preference tuning can start from."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.core.hub.search import RUN, ModelHit, delete_from_cache, run_model_hits
from desktop.core.runs.folders import RunDir
from desktop.core.runs.run_models import finished_chat_models
from desktop.core.settings.config import RunConfig
from desktop.core.system.events import FinishedEvent, StartedEvent, StoppedEvent
from tests.core.helpers import fake_run


def _run(runs: Path, name: str, task: str, end: object) -> RunDir:
    config = RunConfig(task=task)
    config.output.name = name
    run = RunDir.create(runs, config)
    run.append(StartedEvent(str(run.path), 10, 9, 1, "cpu"))
    run.append(end)
    run.close()
    run.unlock()
    run.model_dir.mkdir()
    (run.model_dir / "config.json").write_text("{}", encoding="utf-8")
    return run


def test_only_finished_chat_runs_with_their_model_are_listed(tmp_path: Path) -> None:
    chat = _run(tmp_path, "chat", "causal-lm", FinishedEvent(10, "", {}))
    _run(tmp_path, "stopped", "causal-lm", StoppedEvent(10, ""))
    _run(tmp_path, "pairs", "preference", FinishedEvent(10, "", {}))
    gone = _run(tmp_path, "gone", "causal-lm", FinishedEvent(10, "", {}))
    (gone.model_dir / "config.json").unlink()
    fake_run(tmp_path, "classifier", FinishedEvent(20, "", {}))

    assert finished_chat_models(tmp_path) == [(chat.path.name, chat.model_dir)]
    (hit,) = run_model_hits(finished_chat_models(tmp_path))
    assert (hit.ref, hit.repo_id, hit.source, hit.path) == (
        str(chat.model_dir),
        chat.path.name,
        RUN,
        str(chat.model_dir),
    )


def test_a_runs_model_is_never_deleted_as_a_cached_one(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    with pytest.raises(ValueError):
        delete_from_cache(ModelHit(ref=str(folder), repo_id="run", source=RUN, path=str(folder)))
    assert folder.is_dir()
