"""The run config: TOML round trip, validation that lists every problem, overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.core.settings.config import RunConfig, load_config, with_overrides
from desktop.core.system.errors import ConfigError


def _config(tmp_path: Path) -> RunConfig:
    data = tmp_path / "data.csv"
    data.write_text("text,label\na,x\nb,y\n", encoding="utf-8")
    config = RunConfig(task="seq2seq")
    config.model.name = "google-t5/t5-small"
    config.model.revision = "main"
    config.data.files = [str(data)]
    config.columns.source, config.columns.target = "text", "label"
    config.validation.fraction = 0.2
    config.training.learning_rate = 3e-4
    config.training.warmup = 0.05
    return config


@pytest.mark.parametrize("comments", [False, True])
def test_round_trips_through_toml(tmp_path: Path, comments: bool) -> None:
    config = _config(tmp_path)
    path = tmp_path / "run.toml"
    config.save(path, comments=comments)

    assert load_config(path) == config
    assert ("# Passes over the training data." in path.read_text(encoding="utf-8")) is comments


def test_relative_paths_are_taken_from_the_config_folder(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "train.csv").write_text("text,label\na,x\n", encoding="utf-8")
    (tmp_path / "run.toml").write_text(
        'schema_version = "1.0"\n[model]\nname = "bert-base-uncased"\n[data]\nfiles = ["sub/train.csv"]\n',
        encoding="utf-8",
    )
    config = load_config(tmp_path / "run.toml")
    assert config.data.files == [str((tmp_path / "sub" / "train.csv").resolve())]
    assert config.validate() == []


def test_validate_lists_every_problem_with_its_field(tmp_path: Path) -> None:
    config = RunConfig(task="regression")
    config.data.files = [str(tmp_path / "missing.csv"), str(tmp_path / "notes.docx")]
    config.training.learning_rate = 5
    config.training.batch_size = 0
    config.validation.fraction = 1.5

    problems = {p.field: p.message for p in config.validate()}

    assert set(problems) >= {
        "task",
        "model.name",
        "data.files",
        "training.learning_rate",
        "training.batch_size",
        "validation.fraction",
    }
    assert "classification, causal-lm, seq2seq" in problems["task"]
    assert "hub id" in problems["model.name"]


def test_unknown_fields_and_wrong_types_are_reported_together(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_text(
        'schema_version = "1.0"\n[training]\nlearning_rat = 0.1\nepochs = "three"\nbatch_size = 2.5\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as info:
        load_config(path)
    fields = {p.field: p.message for p in info.value.problems}
    assert 'did you mean "learning_rate"' in fields["training.learning_rat"]
    assert "must be a number" in fields["training.epochs"]
    assert "whole number" in fields["training.batch_size"]
    assert info.value.exit_code == 2


def test_other_schema_major_is_refused_with_advice(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_text('schema_version = "2.0"\ntask = "classification"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="finetune-studio-cli init"):
        load_config(path)


def test_not_toml_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_text("task = = classification\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(path)


def test_overrides_set_typed_values(tmp_path: Path) -> None:
    config = with_overrides(
        _config(tmp_path),
        ["training.epochs=2", "training.learning_rate=1e-3", "model.name=gpt2", "data.drop_bad_rows=true"],
    )
    assert config.training.epochs == 2.0 and config.training.learning_rate == 1e-3
    assert config.model.name == "gpt2" and config.data.drop_bad_rows is True
    with pytest.raises(ConfigError) as info:
        with_overrides(config, ["training.epoch=2", "nonsense"])
    assert [p.field for p in info.value.problems] == ["nonsense", "training.epoch"]


def test_bundled_and_local_models_are_checked(tmp_path: Path) -> None:
    config = _config(tmp_path)
    config.model.name = "bundled:nope"
    assert any("unknown bundled model" in p.message for p in config.validate())
    config.model.name = str(tmp_path)
    assert any("no config.json" in p.message for p in config.validate())


def test_a_hand_written_file_without_version_reads_as_current(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text("text,label\na,x\n", encoding="utf-8")
    (tmp_path / "run.toml").write_text('[model]\nname = "gpt2"\n[data]\nfiles = "d.csv"\n', encoding="utf-8")
    config = load_config(tmp_path / "run.toml")
    assert config.data.files == [str((tmp_path / "d.csv").resolve())] and config.validate() == []
