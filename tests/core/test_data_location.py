"""Moving the data folder (and the model cache) to another drive: with progress, the runtime's paths fixed,
and a move that fails or is cancelled leaves everything where it was."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from desktop.core.system import data_location
from desktop.core.system.data_location import MoveCancelled, move_data, plan_move, use_moved_model_cache
from desktop.core.system.errors import InputError
from desktop.core.system.paths import data_dir, default_data_dir


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data folder as the launcher leaves it, and a model cache in the default place."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HOME", "")  # recorded, so what use_moved_model_cache sets is undone after
    monkeypatch.delenv("HF_HOME")
    folder = data_dir()
    python = folder / "python" / "cpython-3.12" / "bin" / "python3.12"
    python.parent.mkdir(parents=True)
    python.write_text("the interpreter", encoding="utf-8")
    runtime = folder / "runtime"
    (runtime / "bin").mkdir(parents=True)
    (runtime / "pyvenv.cfg").write_text(f"home = {python.parent}\nversion = 3.12\n", encoding="utf-8")
    os.symlink(python, runtime / "bin" / "python")
    (runtime / "bin" / "accelerate").write_text(f"#!{runtime}/bin/python\nimport sys\n", encoding="utf-8")
    (folder / "runs" / "run-1").mkdir(parents=True)
    (folder / "runs" / "run-1" / "model.safetensors").write_bytes(os.urandom(3 << 20))
    (folder / "instances").mkdir()
    blob = tmp_path / "cache" / "huggingface" / "hub" / "models--a--b" / "blobs" / "123"
    blob.parent.mkdir(parents=True)
    blob.write_bytes(b"weights")
    return folder


def _moved_as_a_user_sees_it(old: Path, new: Path) -> None:
    assert data_dir() == new and default_data_dir() == old
    assert sorted(p.name for p in old.iterdir()) == ["instances", "location.json", "location.txt"]
    assert (old / "location.txt").read_bytes().decode("utf-16-le") == str(new)  # for the uninstallers
    assert (new / "runs" / "run-1" / "model.safetensors").stat().st_size == 3 << 20
    runtime = new / "runtime"
    home = new / "python" / "cpython-3.12" / "bin"
    assert f"home = {home}" in (runtime / "pyvenv.cfg").read_text(encoding="utf-8")
    assert (runtime / "bin" / "python").read_text(encoding="utf-8") == "the interpreter"  # the link follows
    assert (runtime / "bin" / "accelerate").read_text(encoding="utf-8").startswith(f"#!{runtime}/bin/python")
    assert (new / "huggingface" / "hub" / "models--a--b" / "blobs" / "123").read_bytes() == b"weights"
    use_moved_model_cache()
    assert os.environ["HF_HOME"] == str(new / "huggingface")  # where the hub libraries look from now on


def test_a_move_on_one_drive_renames_and_fixes_the_runtimes_paths(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "D" / "FinetuneStudio"
    move = plan_move(data, target, with_models=True)
    assert move.size == 0 and move.models is not None  # a rename copies nothing

    move_data(move)
    _moved_as_a_user_sees_it(data, target)


def test_a_move_to_another_drive_copies_with_progress(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(data_location, "_same_drive", lambda path, target: False)
    target = tmp_path / "E" / "Studio"
    move = plan_move(data, target, with_models=True)
    seen: list[tuple[int, int]] = []

    move_data(move, lambda done, total, name: seen.append((done, total)))

    assert move.size > 3 << 20 and seen[-1] == (move.size, move.size)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)  # it only goes forward
    _moved_as_a_user_sees_it(data, target)
    assert not (tmp_path / "cache" / "huggingface").exists()  # the old copies are gone


@pytest.mark.parametrize("how", ["cancel", "failure"])
def test_a_cancelled_or_failed_copy_leaves_everything_where_it_was(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    monkeypatch.setattr(data_location, "_same_drive", lambda path, target: False)
    monkeypatch.setattr(data_location, "CHUNK", 1 << 20)
    before = sorted(str(p.relative_to(data)) for p in data.rglob("*"))
    target = tmp_path / "E" / "Studio"
    cancel = threading.Event()

    def progress(done: int, total: int, name: str) -> None:
        if done >= 2 << 20:  # in the middle of the 3 MB file
            if how == "cancel":
                cancel.set()
            else:
                raise OSError(28, "No space left on device")

    with pytest.raises(MoveCancelled if how == "cancel" else OSError):
        move_data(plan_move(data, target, with_models=True), progress, cancel)

    assert data_dir() == data and sorted(str(p.relative_to(data)) for p in data.rglob("*")) == before
    assert not target.exists() and not (tmp_path / "E" / "Studio").exists()  # nothing half-copied is left
    assert (tmp_path / "cache" / "huggingface" / "hub").is_dir()


def test_a_target_that_cannot_take_the_data_is_refused_before_anything_moves(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(InputError, match="inside the data folder"):
        plan_move(data, data / "runs" / "elsewhere")
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "photos").mkdir()
    with pytest.raises(InputError, match="is not empty"):
        plan_move(data, busy)

    monkeypatch.setattr(data_location, "_same_drive", lambda path, target: False)
    monkeypatch.setattr(data_location.shutil, "disk_usage", lambda path: SimpleNamespace(free=2 << 20))
    with pytest.raises(InputError, match="GB free"):
        plan_move(data, tmp_path / "small")
    assert data_dir() == data


def test_a_second_move_takes_the_moved_model_cache_along_and_the_first_leaves_it_unless_asked(
    data: Path, tmp_path: Path
) -> None:
    move_data(plan_move(data, tmp_path / "D" / "Studio"))  # without the model cache: it is shared
    assert (tmp_path / "cache" / "huggingface" / "hub").is_dir()
    use_moved_model_cache()
    assert "HF_HOME" not in os.environ

    move_data(plan_move(data_dir(), tmp_path / "D" / "Studio2", with_models=True))
    move_data(plan_move(data_dir(), tmp_path / "E" / "Studio"))
    use_moved_model_cache()
    assert os.environ["HF_HOME"] == str(tmp_path / "E" / "Studio" / "huggingface")  # followed its folder
    assert (tmp_path / "E" / "Studio" / "huggingface" / "hub" / "models--a--b" / "blobs" / "123").is_file()


def test_with_no_model_cache_yet_the_models_downloaded_later_go_with_the_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("HF_HOME", "")
    monkeypatch.delenv("HF_HOME")
    (data_dir() / "runs").mkdir(parents=True)
    move_data(plan_move(data_dir(), tmp_path / "D" / "Studio"))  # the first start's Change…
    use_moved_model_cache()
    assert os.environ["HF_HOME"] == str(tmp_path / "D" / "Studio" / "huggingface")
