"""The window's one run config: who changed what is said once per field; a copy is what runs."""

from __future__ import annotations

from desktop.core.settings.config import Columns, RunConfig
from desktop.gui.config_model import RunConfigModel


def _heard(model: RunConfigModel) -> list[str]:
    paths: list[str] = []
    model.changed.connect(paths.append)
    return paths


def test_a_field_set_is_said_once_by_its_path_and_an_unchanged_one_not_at_all(qtbot) -> None:
    model = RunConfigModel()
    heard = _heard(model)
    model.set("training.max_length", 64)
    model.set("task", "causal-lm")
    model.set("training.max_length", 64)
    model.set("columns", Columns(text="review"))
    assert heard == ["training.max_length", "task", "columns.text"]
    assert model.config.training.max_length == 64 and model.config.columns.text == "review"


def test_an_edit_says_each_field_it_changed(qtbot) -> None:
    model = RunConfigModel()
    heard = _heard(model)

    def write(config: RunConfig) -> None:
        config.training.batch_size = 4
        config.lora.enabled = True
        config.output.report_to = ["tensorboard"]

    model.edit(write)
    assert sorted(heard) == ["lora.enabled", "output.report_to", "training.batch_size"]


def test_a_new_config_replaces_a_copy_and_a_snapshot_is_a_copy(qtbot) -> None:
    model = RunConfigModel()
    heard = _heard(model)
    config = RunConfig(task="seq2seq")
    model.replace(config)
    config.task = "classification"
    assert heard == [""] and model.config.task == "seq2seq"
    snapshot = model.snapshot()
    snapshot.training.epochs = 99
    assert model.config.training.epochs != 99
