"""The helper process answers what the window would need PyTorch for, exactly as this process would."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from desktop.core import helper_process as helper
from desktop.core.hub.fit import shapes_with_and_without_lora
from desktop.core.settings.config import RunConfig
from desktop.core.system.errors import ModelError, StudioError

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"


@pytest.fixture
def own_helper(monkeypatch: pytest.MonkeyPatch):
    """A helper of the test's own, ended afterwards."""
    fresh = helper.Helper()
    monkeypatch.setattr(helper, "_helper", fresh)
    yield fresh
    fresh.close()


def _classification(model: Path) -> RunConfig:
    config = RunConfig()
    config.task = "classification"
    config.model.name = str(model)
    config.data.files = [str(SAMPLES / "reviews.csv")]
    return config


@pytest.mark.slow
def test_answers_are_those_of_this_process(own_helper: helper.Helper, tiny_bert: Path) -> None:
    config = _classification(tiny_bert)
    report = helper.token_statistics(config)
    assert own_helper.pid is not None and own_helper.pid != os.getpid()
    assert report == helper._token_statistics(config)
    assert report.token_stats["text"].count > 100
    assert helper.model_shapes(config) == shapes_with_and_without_lora(config)

    from desktop.core.hub.fit import fetch_config, fit

    model_config = fetch_config(str(tiny_bert))
    assert helper.model_fit(model_config, config, 8 * 2**30, 16 * 2**30) == fit(
        model_config, config, 8 * 2**30, 16 * 2**30
    )


@pytest.mark.slow
def test_one_helper_serves_every_question_until_the_environment_changes(
    own_helper: helper.Helper, tiny_gpt2: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = RunConfig()
    config.task = "causal-lm"
    config.model.name = str(tiny_gpt2)
    first = helper.model_shapes(config)
    pid = own_helper.pid
    monkeypatch.setenv("FINETUNE_STUDIO_HOME", str(Path(os.environ["FINETUNE_STUDIO_HOME"]) / "other"))
    assert helper.model_shapes(config) == first
    assert own_helper.pid == pid  # the app's folder travels with each question
    monkeypatch.setenv("HF_HUB_CACHE", str(Path(os.environ["FINETUNE_STUDIO_HOME"]) / "hf"))
    assert helper.model_shapes(config) == first
    assert own_helper.pid not in (None, pid)  # read once at import: a fresh helper


@pytest.mark.slow
def test_an_idle_helper_ends_and_the_next_question_starts_another(
    own_helper: helper.Helper, tiny_gpt2: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    monkeypatch.setattr(helper, "IDLE_S", 0.5)
    config = RunConfig()
    config.task = "causal-lm"
    config.model.name = str(tiny_gpt2)
    shapes = helper.model_shapes(config)
    first = own_helper.pid
    assert first is not None
    deadline = time.monotonic() + 30
    while own_helper.pid is not None and time.monotonic() < deadline:  # its memory goes back
        own_helper._idle.join(0.1)
    assert own_helper.pid is None
    assert helper.model_shapes(config) == shapes and own_helper.pid not in (None, first)


@pytest.mark.slow
def test_errors_keep_their_kind_and_message(
    own_helper: helper.Helper, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "not-a-model"
    folder.mkdir()
    (folder / "notes.txt").write_text("no config here", encoding="utf-8")
    config = _classification(folder)
    with pytest.raises(ModelError) as there:
        helper.token_statistics(config)
    in_this_process = helper.Helper()
    in_this_process.unavailable = True
    monkeypatch.setattr(helper, "_helper", in_this_process)
    with pytest.raises(ModelError) as here:
        helper.token_statistics(config)
    assert str(there.value) == str(here.value)
    assert there.value.message.template == here.value.message.template  # translated like our own


def test_without_a_helper_the_questions_are_answered_here(
    monkeypatch: pytest.MonkeyPatch, tiny_gpt2: Path, tmp_path: Path
) -> None:
    monkeypatch.setattr(helper, "_helper", helper.Helper(python=str(tmp_path / "no-python")))
    config = RunConfig()
    config.task = "causal-lm"
    config.model.name = str(tiny_gpt2)
    assert helper.model_shapes(config)[0].num_parameters > 0
    assert helper._helper.unavailable


@pytest.mark.slow
def test_a_helper_that_dies_is_reported_and_replaced(
    monkeypatch: pytest.MonkeyPatch, tiny_gpt2: Path, tmp_path: Path
) -> None:
    dying = tmp_path / "dying.py"
    dying.write_text("import sys\nsys.stdin.readline()\nsys.exit(3)\n", encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    broken = helper.Helper(module="dying")
    monkeypatch.setattr(helper, "_helper", broken)
    config = RunConfig()
    config.task = "causal-lm"
    config.model.name = str(tiny_gpt2)
    with pytest.raises(StudioError, match="ended unexpectedly \\(exit code 3\\)"):
        helper.model_shapes(config)
    broken.module = "desktop.helper"
    assert helper.model_shapes(config)[0].num_parameters > 0  # the next question starts a new one
    broken.close()


@pytest.mark.slow
def test_a_log_that_cannot_be_written_does_not_stop_the_helper(
    own_helper: helper.Helper, tiny_gpt2: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "a-file-not-a-folder"
    blocked.write_text("", encoding="utf-8")
    monkeypatch.setenv("FINETUNE_STUDIO_HOME", str(blocked))  # logs/ cannot be made under a file
    config = RunConfig()
    config.task = "causal-lm"
    config.model.name = str(tiny_gpt2)
    assert helper.model_shapes(config)[0].num_parameters > 0
    assert own_helper.pid is not None and not own_helper.unavailable
