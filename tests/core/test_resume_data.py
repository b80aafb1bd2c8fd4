"""Resuming after the data changed: a new label set is refused in one sentence with nothing renamed,
other changes are named and resumed on only when the user says so, and a checkpoint is never called
damaged because the model made for new data has other shapes."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import pytest

from desktop.core.runs import data_record
from desktop.core.runs.folders import RunDir
from desktop.core.system.errors import InputError
from desktop.core.system.events import ProgressEvent, StartedEvent
from desktop.core.training.resume import train_from
from desktop.core.training.run import RESUME_ON_NEW_DATA, run_training
from tests.core.helpers import Recorder, make_config


def _stopped_run(tiny_bert: Path, data: Path, runs: Path) -> RunDir:
    config = make_config(
        "classification", tiny_bert, [data], runs, max_steps=8, save_steps=100, eval_steps=100
    )
    stop = threading.Event()

    def on_event(event: object) -> None:
        if isinstance(event, ProgressEvent) and event.step == 3:
            stop.set()

    result = run_training(config, on_event, stop)
    assert result.status == "stopped", result.failure
    return RunDir(result.run_dir)


def _left_as_it_was(run: RunDir) -> None:
    assert run.status() == "stopped" and run.resumable()
    assert [p.name for p in run.path.iterdir() if p.name.startswith("damaged")] == []
    assert run.latest_checkpoint() is not None and run.latest_checkpoint().name == "checkpoint-3"


def test_a_new_class_is_refused_in_one_sentence_and_the_old_data_resumes(
    tiny_bert: Path, samples: Path, tmp_path: Path
) -> None:
    data = tmp_path / "reviews.csv"
    shutil.copy(samples / "reviews.csv", data)
    original = data.read_bytes()
    run = _stopped_run(tiny_bert, data, tmp_path / "runs")
    recorded = json.loads((run.path / data_record.RECORD_FILE).read_text(encoding="utf-8"))
    assert recorded["labels"] == ["negative", "positive"] and str(data) in recorded["files"]

    extra = "".join(f"It was fine and nothing more {i}.,neutral\n" for i in range(12))
    data.write_bytes(original + extra.encode())
    refused = run_training(run.config(), Recorder().append, resume=run)

    assert refused.status == "invalid"
    assert "2 classes -> 3: neutral was added" in refused.failure.reason
    assert "Put the data the run started with back" in refused.failure.remedy
    _left_as_it_was(run)  # not damaged, not failed, not renamed

    data.write_bytes(original)  # the user puts the old data back
    resumed = Recorder()
    result = run_training(run.config(), resumed.append, resume=run)
    assert result.status == "finished", result.failure
    assert resumed.of(StartedEvent)[0].resumed_from_step == 3


def test_changed_rows_are_named_and_resumed_on_when_the_user_accepts_them(
    tiny_bert: Path, samples: Path, tmp_path: Path
) -> None:
    data = tmp_path / "reviews.csv"
    shutil.copy(samples / "reviews.csv", data)
    run = _stopped_run(tiny_bert, data, tmp_path / "runs")
    lines = data.read_text(encoding="utf-8").splitlines(keepends=True)
    data.write_text("".join(lines[:-20]), encoding="utf-8")  # 20 rows removed, both classes still there

    refused = run_training(run.config(), Recorder().append, resume=run)
    assert refused.status == "invalid"
    reason = refused.failure.reason
    assert "reviews.csv was edited" in reason and "training rows: 135 -> 117" in reason, reason
    assert [r["action"] for r in refused.failure.remedies] == [RESUME_ON_NEW_DATA]
    _left_as_it_was(run)

    data_record.accept_new_data(run.path)  # "Resume on the new data" (the CLI: --resume --new-data)
    resumed = Recorder()
    result = run_training(run.config(), resumed.append, resume=run)
    assert result.status == "finished", result.failure
    assert resumed.of(StartedEvent)[0].resumed_from_step == 3
    now = data_record.load(run.path)
    assert now is not None and now.rows["train"] == 117 and not now.accepted  # the next change is asked again


def test_a_checkpoint_of_another_shape_is_not_called_damaged(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "run")
    checkpoint = run.path / "checkpoint-3"
    checkpoint.mkdir(parents=True)

    class Trainer:
        def add_callback(self, callback: object) -> None:
            pass

        def remove_callback(self, callback: object) -> None:
            pass

        def train(self, resume_from_checkpoint: str | None = None) -> None:
            self._load_from_checkpoint(resume_from_checkpoint)

        def _load_from_checkpoint(self, folder: str | None) -> None:
            raise RuntimeError(
                "Error(s) in loading state_dict for BertForSequenceClassification:\n\tsize mismatch "
                "for classifier.weight: copying a param with shape torch.Size([2, 32]) from checkpoint, "
                "the shape in current model is torch.Size([3, 32])."
            )

    with pytest.raises(InputError) as refused:
        train_from(Trainer(), run, checkpoint, lambda event: None)
    assert "does not fit the model this data makes" in refused.value.message
    assert "classifier.weight" in refused.value.message and "[3, 32]" in refused.value.message
    assert checkpoint.is_dir()  # kept as it is


def test_a_resume_computes_the_sha256_again_only_when_the_contents_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "rows.csv"
    data.write_text("text,label\n" + "a,b\n" * 1000, encoding="utf-8")
    first = data_record.describe([data], "", {"train": 1000}, ["b"])
    reads: list[Path] = []
    real = data_record.file_sha256

    def counted(path: Path) -> str:
        reads.append(path)
        return real(path)

    monkeypatch.setattr(data_record, "file_sha256", counted)
    again = data_record.describe([data], "", {"train": 1000}, ["b"], first)
    assert reads == [] and again.files == first.files
    data.write_text("text,label\n" + "a,c\n" * 1000, encoding="utf-8")  # same size, other contents
    changed = data_record.describe([data], "", {"train": 1000}, ["c"], first)
    assert reads == [data] and changed.files[str(data)]["sha256"] != first.files[str(data)]["sha256"]
