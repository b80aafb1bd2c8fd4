"""Pictures as data: class folders and tables listed, every bad kind of picture named with its rows before
a model loads, EXIF rotation applied, decoded pictures kept in a bounded cache."""

from __future__ import annotations

import io
import warnings
from pathlib import Path

import pytest
from PIL import Image

from desktop.core.data import image_checks, images


def _picture(path: Path, size: tuple[int, int] = (32, 24), mode: str = "RGB", **save: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new(mode, size, "red" if mode in ("RGB", "CMYK") else 200).save(path, **save)
    return path


def test_class_folders_are_listed_by_label_and_name(tmp_path: Path) -> None:
    for name in ("circle/b.png", "circle/a.png", "square/x/deep.jpg", "square/c.webp", "square/d.JFIF"):
        _picture(tmp_path / name)
    (tmp_path / "square" / "IMG_0001.HEIC").write_bytes(b"ftypheic")  # an iPhone's: listed, to be named
    (tmp_path / "square" / "notes.txt").write_text("not a picture", encoding="utf-8")
    (tmp_path / ".cache").mkdir()
    rows = images.class_folders(tmp_path)
    assert [(r.label, r.path.relative_to(tmp_path).as_posix(), r.row) for r in rows] == [
        ("circle", "circle/a.png", 0),
        ("circle", "circle/b.png", 1),
        ("square", "square/IMG_0001.HEIC", 2),
        ("square", "square/c.webp", 3),
        ("square", "square/d.JFIF", 4),
        ("square", "square/x/deep.jpg", 5),
    ]


def test_a_table_names_pictures_relative_to_its_own_folder(tmp_path: Path) -> None:
    class Table:
        def column(self, name: str) -> list:
            return {"file": ["pics/a.png", str(tmp_path / "b.png"), None], "label": ["cat", "dog", "cat"]}[
                name
            ]

    rows = images.table_images(Table(), tmp_path, "file", "label")
    assert [r.path for r in rows[:2]] == [tmp_path / "pics" / "a.png", tmp_path / "b.png"]
    assert [r.label for r in rows] == ["cat", "dog", "cat"]


def test_every_bad_kind_of_picture_is_named_with_its_rows(tmp_path: Path) -> None:
    good = _picture(tmp_path / "good.png")
    jpeg = io.BytesIO()
    Image.effect_noise((64, 64), 50).convert("RGB").save(jpeg, "JPEG")
    cut = tmp_path / "cut.jpg"
    cut.write_bytes(jpeg.getvalue()[: len(jpeg.getvalue()) // 2])
    not_a_picture = tmp_path / "text.jpg"
    not_a_picture.write_bytes(b"hello, I am text")
    cmyk = _picture(tmp_path / "print.jpg", mode="CMYK")
    deep = _picture(tmp_path / "scan.png", mode="I;16")
    huge = _picture(tmp_path / "huge.png", size=(300, 200))
    iphone = tmp_path / "IMG_0001.heic"
    iphone.write_bytes(b"\0\0\0\x18ftypheic")
    paths = [good, cut, not_a_picture, cmyk, deep, huge, tmp_path / "gone.png", iphone]
    rows = [images.ImageRow(p, "x", i) for i, p in enumerate(paths)]

    found = image_checks.check_images(rows, huge=50_000)

    assert found.usable == [0]
    assert (found.truncated, found.unreadable, found.missing, found.heic) == ([1], [2], [6], [7])
    assert found.odd_mode == [(3, "CMYK"), (4, "I;16")]
    assert found.huge == [(5, 60_000)]
    said = [str(s) for s in found.sentences("pictures.csv")]
    assert said == [
        "pictures.csv: 1 picture is missing (row 7).",
        "pictures.csv: 1 picture is in HEIC (as iPhones save them), which cannot be read here: convert it "
        "to JPEG (row 8).",
        "pictures.csv: 1 file is not a picture that can be read (row 3).",
        "pictures.csv: 1 picture is cut short (truncated) (row 2).",
        "pictures.csv: 2 pictures have CMYK or 16-bit pixels, which models read wrongly (rows 4, 5).",
        "pictures.csv: 1 picture is very large (over 40 megapixels) (row 6).",
    ]
    assert found.bad_rows() == {1, 2, 3, 4, 5, 6, 7}


def test_a_picture_is_turned_as_its_exif_says_and_kept_in_a_bounded_cache(tmp_path: Path) -> None:
    path = tmp_path / "phone.jpg"
    exif = Image.Exif()
    exif[0x0112] = 6  # "rotate 90 degrees clockwise to view": taken with the phone on its side
    Image.new("RGB", (40, 20), "blue").save(path, exif=exif)
    picture = images.load_image(path)
    assert picture.size == (20, 40) and picture.mode == "RGB"
    assert images.load_image(path) is picture  # decoded once
    assert images.thumbnail(path, 10).size == (5, 10)
    for i in range(images.CACHE_IMAGES + 5):
        images.load_image(_picture(tmp_path / f"p{i}.png", size=(4, 4)))
    assert len(images._CACHE.kept) == images.CACHE_IMAGES


def test_the_picture_samples_are_clean_and_labelled(samples: Path) -> None:
    rows = images.class_folders(samples / "shapes")
    assert len(rows) == 90 and {r.label for r in rows} == {"circle", "square", "triangle"}
    assert image_checks.check_images(rows).usable == list(range(90))
    import json

    asked = [
        json.loads(line) for line in (samples / "shapes-vqa.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert len(asked) == 90 and all((samples / row["image"]).is_file() for row in asked)
    assert all(
        row["answer"].split()[-1].rstrip(".") in row["image"] for row in asked
    )  # "A red circle." of circle/


def test_a_very_large_picture_is_named_in_words_not_by_pillows_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1_000)  # Pillow warns from here, as over 89 MP
    big = _picture(tmp_path / "big.png", size=(40, 40))

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = image_checks.check_images([images.ImageRow(big, "x", 0)], huge=1_500)
        images.decode(big)

    assert found.huge == [(0, 1_600)]
    assert not [w for w in caught if issubclass(w.category, Image.DecompressionBombWarning)]


def test_a_large_photo_is_decoded_no_larger_than_the_model_needs(tmp_path: Path) -> None:
    from transformers import ViTImageProcessor

    photo = _picture(tmp_path / "photo.jpg", size=(2000, 1500))
    side = images.reading_side(ViTImageProcessor(size={"height": 224, "width": 224}))

    decoded = images.decode(photo, at_least=side)

    assert side == 448 and decoded.size == (1000, 750)  # half the pixels a side, both sides over 448
    assert images.decode(_picture(tmp_path / "small.jpg", size=(300, 200)), at_least=side).size == (300, 200)


def test_file_addresses_and_data_urls_name_their_pictures_and_stay_as_written(tmp_path: Path) -> None:
    import base64

    import pandas as pd

    from desktop.core.data.images import source_of
    from desktop.core.data.picture_chats import resolve_nested_paths

    picture = tmp_path / "a b.png"
    assert source_of(picture.as_uri()) == picture  # "file:///.../a%20b.png"
    assert source_of("file://server/share/a.png") == Path("//server/share/a.png")  # a share keeps its host
    assert source_of("data:image/png;base64," + base64.b64encode(b"PNG").decode()) == b"PNG"
    assert source_of("data:image/png;base64,@@") == b"data:image/png;base64,@@"  # named as not a picture
    frame = pd.DataFrame({"images": [[picture.as_uri(), "b.png"]]})
    resolve_nested_paths(frame, tmp_path / "data")
    assert frame["images"][0] == [picture.as_uri(), str(tmp_path / "data" / "b.png")]  # not data/file:/...
