"""Predict on a file: the rows, columns and encoding kept, the predictions added, nothing half-written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.core.results.predict import predict_file
from desktop.core.system.errors import InputError
from desktop.core.system.progress import Cancelled, reporting
from desktop.core.training.run import run_training
from tests.core.helpers import Recorder, make_config


@pytest.fixture(scope="module")
def classifier(tiny_bert: Path, samples: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("runs")
    result = run_training(
        make_config("classification", tiny_bert, [samples / "reviews.csv"], runs, max_steps=4),
        Recorder().append,
    )
    assert result.status == "finished"
    return result.run_dir


def test_an_excel_file_gets_the_label_and_its_probability(classifier: Path, tmp_path: Path) -> None:
    import pandas as pd

    source = tmp_path / "new.xlsx"
    pd.DataFrame({"id": [1, 2, 3], "text": ["great value", "broke in a day", "fine"]}).to_excel(
        source, index=False
    )
    result = predict_file(classifier, source, tmp_path / "out.xlsx")

    written = pd.read_excel(result.out)
    assert list(written.columns) == ["id", "text", "prediction", "probability"]
    assert list(written["id"]) == [1, 2, 3] and result.column == "text"
    assert set(written["prediction"]) <= {"positive", "negative"}
    assert all(0.5 <= p <= 1 for p in written["probability"])


def test_cancel_leaves_nothing_behind(classifier: Path, tmp_path: Path) -> None:
    source = tmp_path / "rows.csv"
    source.write_text("text\n" + "\n".join(f"row {i}" for i in range(100)), encoding="utf-8")
    out = tmp_path / "out.csv"
    seen: list[float] = []
    with (
        reporting(lambda share, what: seen.append(share), cancelled=lambda: len(seen) >= 2),
        pytest.raises(Cancelled),
    ):
        predict_file(classifier, source, out)
    assert not out.exists() and not list(tmp_path.glob("*.partial"))


def test_the_column_is_asked_for_when_it_cannot_be_told(classifier: Path, tmp_path: Path) -> None:
    source = tmp_path / "two.csv"
    source.write_text("标题,正文\n好,很好用\n", encoding="utf-8")
    with pytest.raises(InputError, match="标题, 正文"):
        predict_file(classifier, source, tmp_path / "out.csv")
    assert predict_file(classifier, source, tmp_path / "out.csv", column="正文").rows == 1


def test_a_causal_lm_writes_its_answers_into_jsonl(tiny_gpt2: Path, tmp_path: Path) -> None:
    source = tmp_path / "prompts.jsonl"
    rows = [{"prompt": "正面 很好", "n": 1}, {"prompt": "the movie was", "n": 2}]
    source.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    result = predict_file(tiny_gpt2, source, tmp_path / "answers.jsonl", max_new_tokens=4)

    written = [json.loads(line) for line in result.out.read_text(encoding="utf-8").splitlines()]
    assert [(w["prompt"], w["n"]) for w in written] == [("正面 很好", 1), ("the movie was", 2)]
    assert all(isinstance(w["generated"], str) for w in written) and result.added == ["generated"]


def test_an_output_open_in_another_program_is_explained(
    classifier: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    source = tmp_path / "rows.csv"
    source.write_text("text\ngreat\n", encoding="utf-8")
    out = tmp_path / "out.csv"
    out.write_text("old", encoding="utf-8")

    def locked(src: object, dst: object) -> None:  # as Windows answers while Excel has the file open
        raise PermissionError(13, "The process cannot access the file", str(dst))

    monkeypatch.setattr(os, "replace", locked)
    with pytest.raises(InputError, match="another program"):
        predict_file(classifier, source, out)
    assert out.read_text(encoding="utf-8") == "old" and not list(tmp_path.glob("*.partial"))


@pytest.mark.parametrize("inside", ["events.jsonl", "model/predictions.csv"])
def test_predictions_never_go_into_a_run_folder(classifier: Path, samples: Path, inside: str) -> None:
    """Today ``-o RUN/events.jsonl --force`` replaced the run's event log with predictions."""
    events = (classifier / "events.jsonl").read_bytes()
    with pytest.raises(InputError, match="inside the run folder") as info:
        predict_file(classifier, samples / "reviews.csv", classifier / inside)
    assert str(classifier.parent) in info.value.hint  # where to write instead
    assert (classifier / "events.jsonl").read_bytes() == events
    assert inside == "events.jsonl" or not (classifier / inside).exists()


def test_an_output_that_cannot_be_written_is_found_before_the_rows_are_read(
    classifier: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import desktop.core.data.local_files as local_files

    read: list[Path] = []
    monkeypatch.setattr(local_files, "read_file", lambda path, *a, **k: read.append(path))
    not_a_folder = tmp_path / "notes.txt"
    not_a_folder.write_text("a file where the output's folder would be", encoding="utf-8")
    with pytest.raises(InputError, match="cannot be written"):
        predict_file(classifier, tmp_path / "rows.csv", not_a_folder / "out.csv")
    assert read == []  # refused before 30,000 rows were read and the model loaded


@pytest.mark.parametrize("content", ["", "text\n"])
def test_a_file_without_rows_says_there_is_nothing_to_predict(
    classifier: Path, tmp_path: Path, content: str
) -> None:
    source = tmp_path / "rows.csv"
    source.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as info:
        predict_file(classifier, source, tmp_path / "out.csv")
    assert "no rows to predict" in info.value.message and "training" not in info.value.hint
