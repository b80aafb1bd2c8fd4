"""Image classification: pictures as data, a run that trains, resumes, evaluates, exports and answers."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import pytest

from desktop.core.data.checks import load_and_check
from desktop.core.data.local_files import read_file
from desktop.core.runs.folders import RunDir
from desktop.core.system.errors import DataError, ModelError
from desktop.core.system.events import ProgressEvent, StartedEvent
from desktop.core.training.run import run_training
from tests.core.helpers import Recorder, make_config


def _picture(path: Path, colour: str = "red", size: tuple[int, int] = (16, 16), mode: str = "RGB") -> Path:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new(mode, size, colour if mode == "RGB" else 0).save(path)
    return path


def _shapes(samples: Path, tmp_path: Path) -> Path:
    """A copy of the sample pictures the test may spoil."""
    folder = tmp_path / "shapes"
    shutil.copytree(samples / "shapes", folder)
    return folder


def _config(model: Path, data: list[Path], tmp_path: Path, **training: object):
    values = {"max_steps": 40, "learning_rate": 1e-2, "save_steps": 20, "eval_steps": 20, **training}
    config = make_config("image-classification", model, data, tmp_path / "runs", **values)
    config.validation.fraction = 0.2
    return config


def test_a_folder_of_class_folders_is_read_as_pictures_with_labels(samples: Path) -> None:
    table = read_file(samples / "shapes")

    assert table.columns == ["image", "label"] and len(table) == 90
    assert sorted(set(table.column("label"))) == ["circle", "square", "triangle"]
    assert Path(table.column("image")[0]).is_absolute()
    assert table.locate(0) == "shapes/circle/black-02.png"  # a row is named by its picture


def test_picture_paths_in_a_table_are_relative_to_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    _picture(data / "pictures" / "a.png")
    (data / "labels.csv").write_text("file,label\npictures/a.png,cat\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # wherever the app was started from

    table = read_file(data / "labels.csv", pictures=True)

    assert Path(table.column("file")[0]) == data / "pictures" / "a.png"
    assert read_file(data / "labels.csv").column("file")[0] == "pictures/a.png"  # a text task's: as written


def test_each_kind_of_bad_picture_is_named_with_its_rows_before_any_model_loads(
    samples: Path, tmp_path: Path
) -> None:
    folder = _shapes(samples, tmp_path)
    good = (folder / "circle" / "black-02.png").read_bytes()
    (folder / "circle" / "cut.png").write_bytes(good[: len(good) // 2])
    (folder / "square" / "notes.png").write_text("not a picture", encoding="utf-8")
    _picture(folder / "triangle" / "print.jpg", mode="CMYK")
    config = _config(Path("no-model-needed"), [folder], tmp_path)

    with pytest.raises(DataError) as refused:
        load_and_check(config)

    said = str(refused.value)
    assert "cut short (truncated) (shapes/circle/cut.png)" in said
    assert "1 file is not a picture that can be read (shapes/square/notes.png)" in said
    assert "CMYK or 16-bit pixels" in said and "shapes/triangle/print.jpg" in said
    assert "drop_bad_rows" in refused.value.hint

    config.data.drop_bad_rows = True
    checked = load_and_check(config)

    assert len(checked.train) + len(checked.eval) == 90  # the three left out, the 90 good ones kept
    assert sum("Left out" in note for note in checked.notes) == 3

    for good in (folder / "triangle").glob("*.png"):  # every triangle spoilt: the class is gone, and said
        good.write_text("not a picture any more", encoding="utf-8")
    checked = load_and_check(config)
    gone = "No picture of the class triangle is left to train on: the model will not learn it."
    assert gone in checked.notes

    broken = tmp_path / "broken"  # nothing in it can be read: said of the folder, not of a "column"
    for name in ("a/1.png", "a/2.png", "b/3.png", "b/4.png"):
        (broken / name).parent.mkdir(parents=True, exist_ok=True)
        (broken / name).write_text("not a picture", encoding="utf-8")
    with pytest.raises(DataError) as refused:
        load_and_check(_config(Path("no-model-needed"), [broken], tmp_path))
    assert refused.value.hint == "Check that the folder holds pictures that open in a picture viewer."


def test_the_hold_out_is_drawn_from_the_usable_pictures_so_leaving_bad_ones_out_never_empties_it(
    tmp_path: Path,
) -> None:
    from desktop.core.data.train_eval import load_train_eval

    folder = tmp_path / "few"
    for index in range(5):
        _picture(folder / "red" / f"{index}.png", "red")
        _picture(folder / "blue" / f"{index}.png", "blue")
    config = _config(Path("no-model-needed"), [folder], tmp_path)
    _, held = load_train_eval(config)
    spoilt = sorted(Path(p) for p in held.column("image"))  # the two held out, one of each class
    for path in spoilt:
        path.write_text("not a picture", encoding="utf-8")
    config.data.drop_bad_rows = True

    checked = load_and_check(config)  # before, "every picture is bad": the held-out part was all bad

    assert checked.eval is not None and len(checked.eval) == 2 and len(checked.train) == 6
    assert sorted(set(checked.eval.column("label"))) == ["blue", "red"]  # still one of each class
    assert not {Path(p) for p in checked.eval.column("image")} & set(spoilt)
    assert sum("Left out" in note for note in checked.notes) == 1


def test_missing_pictures_of_both_parts_are_one_sentence_that_says_where_they_were_looked_for(
    tmp_path: Path,
) -> None:
    """Before: "labels.csv: 2 pictures are missing (...). labels.csv: 1 picture is missing (...)", the
    training and the held-out rows apart, and nothing said of where a path is read from."""
    from desktop.core.data.train_eval import load_train_eval

    data = tmp_path / "data"
    names = [f"{colour}-{i}.png" for colour in ("red", "blue") for i in range(5)]
    for name in names:
        _picture(data / "pictures" / name, name.split("-")[0])
    rows = "".join(f"pictures/{name},{name.split('-')[0]}\n" for name in names)
    (data / "labels.csv").write_text("file,label\n" + rows, encoding="utf-8")
    config = _config(Path("no-model-needed"), [data / "labels.csv"], tmp_path)
    train, held = load_train_eval(config)
    gone = [Path(p) for p in [*list(train.column("file"))[:2], held.column("file")[0]]]
    for path in gone:
        path.unlink()

    with pytest.raises(DataError) as refused:
        load_and_check(config)

    said = refused.value.message
    assert said.count("missing") == 1 and said.startswith("labels.csv: 3 pictures are missing (")
    first = min(gone, key=lambda p: names.index(p.name))
    assert refused.value.hint.startswith(f"The first was looked for at {first} (a relative path in a table")


def test_a_row_without_a_label_and_bad_pictures_are_named_at_once(tmp_path: Path) -> None:
    """The missing label hid the pictures' problems, which came after it was fixed: in rounds."""
    data = tmp_path / "data"
    rows = []
    for i in range(10):
        _picture(data / f"{i}.png", "red" if i % 2 else "blue")
        rows.append(f"{i}.png,{'red' if i % 2 else 'blue'}" if i != 4 else f"{i}.png,")
    (data / "7.png").write_text("not a picture", encoding="utf-8")
    (data / "labels.csv").write_text("file,label\n" + "\n".join(rows) + "\n", encoding="utf-8")

    with pytest.raises(DataError) as refused:
        load_and_check(_config(Path("no-model-needed"), [data / "labels.csv"], tmp_path))

    said = refused.value.message
    assert said.startswith('labels.csv: 1 row has no label in column "label" (labels.csv row 6).')
    assert "1 file is not a picture that can be read (labels.csv row 9: 7.png)" in said


def test_a_text_model_or_a_folder_without_its_image_processor_is_refused(
    tiny_bert: Path, tiny_vit: Path, samples: Path, tmp_path: Path
) -> None:
    with pytest.raises(ModelError) as refused:
        load_and_check(_config(tiny_bert, [samples / "shapes"], tmp_path))
    assert "does not see pictures" in str(refused.value)

    bare = tmp_path / "bare-vit"
    shutil.copytree(tiny_vit, bare)
    (bare / "preprocessor_config.json").unlink()
    with pytest.raises(ModelError) as refused:
        load_and_check(_config(bare, [samples / "shapes"], tmp_path))
    assert "preprocessor_config.json" in str(refused.value)


def test_a_hub_datasets_pictures_held_as_bytes_are_checked_and_trained_on(tmp_path: Path) -> None:
    import pandas as pd

    from desktop.core.data import image_checks
    from desktop.core.data.tables import Table
    from desktop.core.data.tasks.image_classification import ImageCollator, examples
    from desktop.core.settings.config import Columns

    png = _picture(tmp_path / "p.png", "blue").read_bytes()
    frame = pd.DataFrame(
        {"img": [{"bytes": png, "path": "p.png"}, {"bytes": b"junk", "path": "q.png"}], "label": ["a", "b"]}
    )
    table = Table(frame, "owner/pets[train]", [(0, ("owner/pets[train]", "row"), None, 1)])

    with pytest.raises(DataError) as refused:
        image_checks.check_table(table, "img", drop_bad=False)
    assert "owner/pets[train] row 2" in str(refused.value)

    kept, notes = image_checks.check_table(table, "img", drop_bad=True)
    from transformers import ViTImageProcessor

    batch = ImageCollator(ViTImageProcessor(size={"height": 8, "width": 8}))(
        [examples(kept, Columns(image="img", label="label"), {"a": 0})[0]]
    )
    assert len(kept) == 1 and notes
    assert tuple(batch["pixel_values"].shape) == (1, 3, 8, 8) and batch["labels"].tolist() == [0]


def test_an_image_classifier_trains_evaluates_with_its_pictures_and_exports_verified(
    tiny_vit: Path, samples: Path, tmp_path: Path
) -> None:
    from desktop.core.results.export import export_run
    from desktop.core.results.tryit import Playground, inspect_folder

    events = Recorder()
    result = run_training(_config(tiny_vit, [samples / "shapes"], tmp_path, max_steps=120), events.append)

    assert result.status == "finished", result.failure
    losses = events.losses()
    assert sum(losses[-3:]) / 3 < sum(losses[:3]) / 3 * 0.9, losses
    assert {"eval_accuracy", "eval_macro_f1"} <= set(result.metrics)
    saved = json.loads((Path(result.run_dir) / "evaluation.json").read_text(encoding="utf-8"))
    tuned, base = saved["fine_tuned"], saved["base"]
    assert tuned["pictures"] and tuned["labels"] == ["circle", "square", "triangle"]
    assert sum(map(sum, tuned["matrix"])) == sum(map(sum, base["matrix"])) == 18
    assert all(Path(error["text"]).is_file() for error in tuned["errors"])  # the wrong pictures, whole paths

    exported = export_run(RunDir(Path(result.run_dir)), tmp_path / "exported")

    assert exported.verification.ok and exported.verification.examples == 4
    assert (tmp_path / "exported" / "preprocessor_config.json").is_file()
    assert 'pipeline("image-classification"' in (tmp_path / "exported" / "README.md").read_text("utf-8")
    playground = Playground(inspect_folder(tmp_path / "exported"))
    playground.load()
    ranked = playground.classify_picture(next((samples / "shapes" / "square").glob("*.png")))
    assert sorted(label for label, _ in ranked) == ["circle", "square", "triangle"]
    assert abs(sum(p for _, p in ranked) - 1) < 1e-5


def test_a_stopped_image_run_resumes_from_its_checkpoint_not_from_random_weights(
    tiny_vit: Path, samples: Path, tmp_path: Path
) -> None:
    """ViT's weights are renamed by Transformers 5 when saved; a checkpoint written that way was read
    back by the Trainer with every renamed weight missing (random), so a resumed run started over."""
    config = _config(tiny_vit, [samples / "shapes"], tmp_path, max_steps=60, save_steps=100, eval_steps=100)
    stop = threading.Event()
    first = Recorder()

    def on_event(event: object) -> None:
        first.append(event)
        if isinstance(event, ProgressEvent) and event.step == 40:
            stop.set()

    assert run_training(config, on_event, stop).status == "stopped"
    run = RunDir(Path(first.of(StartedEvent)[0].run_dir))
    resumed = Recorder()

    assert run_training(run.config(), resumed.append, resume=run).status == "finished"
    assert resumed.of(StartedEvent)[0].resumed_from_step == 40
    log = (run.path / "train.log").read_text(encoding="utf-8")
    assert "missing keys" not in log.lower()
    before, after = first.losses(), resumed.losses()
    assert after[0] < before[0] * 0.95, (before, after)  # goes on from where it was, not from the start


def test_lora_on_an_image_model_trains_the_new_head_whole(
    tiny_vit: Path, samples: Path, tmp_path: Path
) -> None:
    config = _config(tiny_vit, [samples / "shapes"], tmp_path, max_steps=10)
    config.lora.enabled = True
    config.validation.evaluate_base = False

    result = run_training(config, Recorder().append)

    assert result.status == "finished", result.failure
    adapter = json.loads((Path(result.run_dir) / "adapter" / "adapter_config.json").read_text("utf-8"))
    assert adapter["modules_to_save"] == ["classifier"]


def test_predict_labels_a_folder_a_table_or_one_picture_and_names_the_unread(
    tiny_vit: Path,
    samples: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import pandas as pd

    from desktop.core.results.predict import predict_file

    result = run_training(_config(tiny_vit, [samples / "shapes"], tmp_path, max_steps=5), Recorder().append)
    pictures = tmp_path / "new"
    shutil.copytree(samples / "shapes" / "square", pictures)
    (pictures / "broken.png").write_text("no", encoding="utf-8")

    written = predict_file(result.run_dir, pictures, tmp_path / "predicted.csv")

    frame = pd.read_csv(tmp_path / "predicted.csv", keep_default_na=False)
    assert written.rows == 31 and list(frame.columns) == ["image", "prediction", "probability"]
    broken = frame[frame["image"].str.endswith("broken.png")]
    assert broken["prediction"].tolist() == broken["probability"].tolist() == [""]  # the others labelled
    assert set(frame["prediction"]) - {""} <= {"circle", "square", "triangle"}
    assert written.notes == [
        "1 of 31 pictures could not be read (missing, not a picture, cut short or too large); their rows "
        "have no prediction: new/broken.png."
    ]

    # A table's paths are read relative to it, and written back as they were (not made full, no "\/").
    square = next(pictures.glob("*.png")).name
    table = tmp_path / "list.jsonl"
    table.write_text(f'{{"file": "new/{square}"}}\n{{"file": "new/gone.png"}}\n', encoding="utf-8")
    written = predict_file(result.run_dir, table, tmp_path / "list.predicted.jsonl")
    lines = (tmp_path / "list.predicted.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    assert [r["file"] for r in rows] == [f"new/{square}", "new/gone.png"] and "\\/" not in lines[0]
    assert rows[0]["prediction"] in {"circle", "square", "triangle"} and rows[1]["prediction"] == ""
    assert "1 of 2 pictures could not be read" in written.notes[0] and "line 2" in written.notes[0]

    one = predict_file(result.run_dir, pictures / square, tmp_path / "one.csv")  # a picture alone
    assert one.rows == 1 and not one.notes
    assert pd.read_csv(tmp_path / "one.csv")["prediction"].tolist()[0] in {"circle", "square", "triangle"}
    from desktop.cli import main

    alone = ["predict", str(result.run_dir), str(pictures / square), "-o", str(tmp_path / "cli.csv")]
    assert main(alone) == 0
    assert capsys.readouterr().out.startswith("The picture is labelled; written to ")  # not "1 of 1 pictures"

    # A picture the model cannot take fails its own row, not its batch of 32 (nor the file).
    from desktop.core.results.tryit import Playground

    real = Playground.classify_pictures

    def picky(self: Playground, given: list) -> list:
        if any(p.size == (1, 1) for p in given):
            raise ValueError("too small")
        return real(self, given)

    monkeypatch.setattr(Playground, "classify_pictures", picky)
    (pictures / "broken.png").unlink()
    _picture(pictures / "dot.png", size=(1, 1))
    written = predict_file(result.run_dir, pictures, tmp_path / "picky.csv")
    frame = pd.read_csv(tmp_path / "picky.csv", keep_default_na=False)
    assert (frame["prediction"] == "").sum() == 1 and "new/dot.png" in written.notes[0]


def test_a_folder_of_the_datas_parts_is_not_read_as_two_classes(samples: Path, tmp_path: Path) -> None:
    for part in ("train", "val"):
        shutil.copytree(samples / "shapes", tmp_path / "pets" / part)

    with pytest.raises(DataError) as refused:
        read_file(tmp_path / "pets")

    assert "the data's parts (train, val)" in str(refused.value)
    assert "pets/train" in refused.value.hint


def test_the_hugging_face_imagefolder_layout_points_to_its_metadata_table(tmp_path: Path) -> None:
    """Its train/ folder was read as the one class "train": "a classifier needs at least two classes"."""
    for name in ("test", "train"):  # the training part named, though "test" comes first
        part = tmp_path / "pets" / name
        for i in range(4):
            _picture(part / f"{i}.png")
        (part / "metadata.csv").write_text(
            "file_name,label\n" + "".join(f"{i}.png,{'ab'[i % 2]}\n" for i in range(4)), encoding="utf-8"
        )

    with pytest.raises(DataError) as refused:
        read_file(tmp_path / "pets")

    assert refused.value.message == (
        "pets is in the Hugging Face imagefolder layout: its labels are in pets/train/metadata.csv, not in "
        "the names of its folders."
    )
    assert str(part / "metadata.csv") in refused.value.hint
    table = read_file(part / "metadata.csv", pictures=True)  # as the hint says: it reads
    assert Path(table.column("file_name")[0]) == part / "0.png"
    for name in ("cat", "dog"):  # a class folder's own notes: still a folder of class folders
        _picture(tmp_path / "cls" / name / "1.png")
    (tmp_path / "cls" / "cat" / "metadata.jsonl").write_text("{}\n", encoding="utf-8")
    assert sorted(set(read_file(tmp_path / "cls").column("label"))) == ["cat", "dog"]


def test_a_network_that_cannot_checkpoint_trains_without_and_says_so(samples: Path, tmp_path: Path) -> None:
    """ResNet and ConvNeXt have no gradient checkpointing; the Lowest memory preset turns it on."""
    from transformers import ResNetConfig, ResNetForImageClassification, ViTImageProcessor

    folder = tmp_path / "resnet"
    config = ResNetConfig(embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], num_labels=1000)
    ResNetForImageClassification(config).save_pretrained(folder)
    ViTImageProcessor(size={"height": 32, "width": 32}).save_pretrained(folder)
    run = _config(folder, [samples / "shapes"], tmp_path, max_steps=4)
    run.performance.gradient_checkpointing = True
    events = Recorder()

    result = run_training(run, events.append)

    assert result.status == "finished", result.failure
    said = " ".join(str(getattr(e, "message", "")) for e in events)
    assert "cannot recompute its activations (gradient checkpointing): it trains without" in said


def test_a_transparent_picture_is_read_on_white(tmp_path: Path) -> None:
    from PIL import Image

    from desktop.core.data.images import decode

    icon = Image.new("RGBA", (4, 4), (0, 0, 0, 0))
    icon.putpixel((0, 0), (0, 0, 0, 255))
    icon.save(tmp_path / "icon.png")

    picture = decode(tmp_path / "icon.png")

    assert picture.mode == "RGB" and picture.getpixel((0, 0)) == (0, 0, 0)
    assert picture.getpixel((3, 3)) == (255, 255, 255)  # the transparent part: white, not black


def test_the_previews_thumbnails_are_decoded_by_its_worker_not_the_window(
    samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desktop.core.data import images
    from desktop.core.data.preview import preview_head

    folder = _shapes(samples, tmp_path)
    shown = preview_head(_config(Path("no-model-needed"), [folder], tmp_path), num_rows=10)
    again = lambda *a, **k: pytest.fail("decoded again, on the window's thread")  # noqa: E731
    monkeypatch.setattr(images, "decode", again)

    for row in shown.rows:  # what the preview table asks for as it fills its rows
        assert images.thumbnail(images.source_of(row["image"]), images.PREVIEW_THUMBNAIL).size[0] <= 64


def test_a_bad_picture_of_a_table_is_named_by_its_row_and_its_file(tmp_path: Path) -> None:
    data = tmp_path / "data"
    for name in ("a", "b", "c", "d"):
        _picture(data / "pictures" / f"{name}.png")
    rows = "".join(f"pictures/{n}.png,{'cat' if n in 'ab' else 'dog'}\n" for n in "abcd")
    (data / "labels.csv").write_text(f"file,label\n{rows}pictures/gone.png,dog\n", encoding="utf-8")
    config = _config(Path("no-model-needed"), [data / "labels.csv"], tmp_path)
    config.validation.fraction = 0

    with pytest.raises(DataError) as refused:
        load_and_check(config)

    assert refused.value.message == "labels.csv: 1 picture is missing (labels.csv row 6: gone.png)."
