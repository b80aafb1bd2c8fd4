"""Putting the data folder (runtime, runs, caches) and the model cache on another drive.

The system drive of a gaming laptop is often the small one: the runtime with a CUDA build of PyTorch
is 5-10 GB, and models and runs grow from there. The folder can move: the default data folder then
holds only ``location.json``, which says where the data is now (``data``) and where the model cache
went with it (``hf_home``, given to the hub libraries as ``HF_HOME`` unless the user set their own).

A move on the same drive renames; to another drive it copies with progress, then fixes the paths the
runtime holds (its ``pyvenv.cfg`` points at the Python it was made from, its scripts at its
interpreter), switches ``location.json`` and only then deletes the old copy. A move that fails or is
cancelled deletes what it copied and leaves everything where it was.

It never runs while Finetune Studio runs from the folder (a window, a run, the launcher's setup): the
launcher does it at its start, before the app.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from desktop.core.system.errors import InputError
from desktop.core.system.messages import msg
from desktop.core.system.paths import atomic_write_text, default_data_dir, folder_size

POINTER = "location.json"
UNINSTALL_POINTER = "location.txt"
STAYS = {POINTER, UNINSTALL_POINTER, "instances", "setup.lock"}
"""What stays in the old folder: the pointer, and the marks of running processes."""
CHUNK = 8 << 20


class MoveCancelled(InputError):
    """The user cancelled; nothing moved."""


@dataclass(frozen=True)
class Move:
    """What a move takes where.

    Attributes:
        source: The data folder now.
        target: Where it goes.
        models: The model cache to take along (``None``: the user set ``HF_HOME``, or there is none).
        size: Bytes to copy (0 when everything is renamed on one drive).
    """

    source: Path
    target: Path
    models: Path | None
    size: int


def default_model_cache() -> Path:
    """The hub libraries' cache when ``HF_HOME`` is not set."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "huggingface"


def use_moved_model_cache() -> None:
    """Point the hub libraries at the moved model cache (before they are imported); a cache the user
    chose with ``HF_HOME`` wins."""
    moved = _pointer().get("hf_home")
    if moved and not os.environ.get("HF_HOME"):
        os.environ["HF_HOME"] = moved


def _pointer() -> dict[str, str]:
    try:
        values = json.loads((default_data_dir() / POINTER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in values.items() if isinstance(v, str)} if isinstance(values, dict) else {}


def model_cache_to_move() -> Path | None:
    """The model cache a move can take along: the hub libraries' default one, when there is one and the
    user has not chosen their own with ``HF_HOME``."""
    if os.environ.get("HF_HOME") and os.environ.get("HF_HOME") != _pointer().get("hf_home"):
        return None
    cache = Path(_pointer().get("hf_home") or default_model_cache())
    return cache if cache.is_dir() else None


def plan_move(source: Path, target: Path, with_models: bool = False) -> Move:
    """Check that ``source`` can move to ``target`` (with the model cache when ``with_models``: other
    programs that use the Hugging Face cache then look for it in its old place unless ``HF_HOME`` tells
    them), and what it takes.

    Raises:
        InputError: The target is inside the data folder (or holds it), is not empty, cannot be
            written, or its drive has too little space.
    """
    source, target = Path(source).resolve(), Path(target).expanduser().resolve()
    if target == source:
        raise InputError(
            msg("The data folder is already {folder}.", folder=str(target)), msg("Choose another folder.")
        )
    if target.is_relative_to(source) or source.is_relative_to(target):
        raise InputError(
            msg("{target} is inside the data folder, or holds it.", target=str(target)),
            msg("Choose a folder beside it, for example on another drive."),
        )
    if target.exists() and (not target.is_dir() or any(p.name not in STAYS for p in target.iterdir())):
        raise InputError(
            msg("{target} is not empty.", target=str(target)),
            msg("Choose an empty or new folder: the data is moved into it, not merged."),
        )
    models = model_cache_to_move() if with_models else None
    if models is not None and models.resolve().is_relative_to(source):
        models = None  # moved into the data folder before: it goes along with it
    parent = _existing_parent(target)
    try:
        probe = parent / f".finetune-studio-write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise InputError(
            msg("{target} cannot be written: {error}", target=str(target), error=exc),
            msg("Choose a folder you can write to."),
        ) from exc
    size = sum(_size(path) for path in _entries(source) if not _same_drive(path, parent))
    if models is not None and not _same_drive(models, parent):
        size += _size(models)
    free = shutil.disk_usage(parent).free
    if size and free < size * 1.05:
        raise InputError(
            msg(
                "The data needs {needed} GB and the drive of {target} has {free} GB free.",
                needed=f"{size / 2**30:.1f}",
                target=str(target),
                free=f"{free / 2**30:.1f}",
            ),
            msg("Free some space there, or choose another drive."),
        )
    return Move(source, target, models, size)


def move_data(
    move: Move,
    on_progress: Callable[[int, int, str], None] = lambda done, total, name: None,
    cancel: threading.Event | None = None,
) -> None:
    """Move the data folder (and the model cache), then point the app at it.

    ``on_progress`` gets the bytes copied, the bytes to copy and the entry being moved.

    Raises:
        MoveCancelled: ``cancel`` was set; what was copied is deleted, nothing moved.
        OSError: Copying failed (a full or removed drive); what was copied is deleted.
    """
    cancel = cancel or threading.Event()
    made_target = not move.target.exists()
    move.target.mkdir(parents=True, exist_ok=True)
    pairs = [(entry, move.target / entry.name) for entry in _entries(move.source)]
    if move.models is not None:
        pairs.append((move.models, move.target / "huggingface"))
    done = [0]
    renamed: list[tuple[Path, Path]] = []
    try:
        for source, target in pairs:  # copies first: a failure leaves every source as it was
            if not _same_drive(source, move.target):
                _copy(source, target, move, done, on_progress, cancel)
        for source, target in pairs:
            if _same_drive(source, move.target):
                os.replace(source, target)
                renamed.append((source, target))
                on_progress(done[0], move.size, source.name)
    except BaseException:
        for source, target in reversed(renamed):
            os.replace(target, source)
        for source, target in pairs:
            if (source, target) not in renamed:
                _remove(target)
        if made_target:
            shutil.rmtree(move.target, ignore_errors=True)
        raise
    _fix_runtime_paths(move.target / "runtime", move.source, move.target)
    pointer = {"data": str(move.target)}
    fresh = (
        not os.environ.get("HF_HOME") and not default_model_cache().exists() and not _pointer().get("hf_home")
    )
    if move.models is not None or fresh:  # taken along, or none yet: models downloaded later go there too
        pointer["hf_home"] = str(move.target / "huggingface")
    elif before := _pointer().get("hf_home"):
        inside = Path(before).resolve().is_relative_to(move.source)
        pointer["hf_home"] = (
            str(move.target / Path(before).resolve().relative_to(move.source)) if inside else before
        )
    atomic_write_text(default_data_dir() / POINTER, json.dumps(pointer, indent=2, ensure_ascii=False))
    # For the uninstallers, which remove the moved folder too: the path alone (UTF-16 for NSIS).
    (default_data_dir() / UNINSTALL_POINTER).write_bytes(str(move.target).encode("utf-16-le"))
    for source, _target in pairs:  # the copies are in place and pointed at: the originals go
        _remove(source)


def _entries(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name not in STAYS) if folder.is_dir() else []


def _existing_parent(path: Path) -> Path:
    while not path.exists() and path.parent != path:
        path = path.parent
    return path


def _same_drive(path: Path, target: Path) -> bool:
    try:
        return os.stat(path, follow_symlinks=False).st_dev == os.stat(_existing_parent(target)).st_dev
    except OSError:
        return False


def _size(path: Path) -> int:
    if path.is_symlink() or path.is_file():
        return path.lstat().st_size
    return folder_size(path)


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
    elif path.exists():
        shutil.rmtree(path, ignore_errors=True)


def _copy(
    source: Path,
    target: Path,
    move: Move,
    done: list[int],
    on_progress: Callable[[int, int, str], None],
    cancel: threading.Event,
) -> None:
    """Copy ``source`` to ``target`` in chunks (Cancel answers within one); links stay links, those into
    the moved folders pointing into the new place."""
    items = [source] if not source.is_dir() or source.is_symlink() else [source, *sorted(source.rglob("*"))]
    for item in items:
        if cancel.is_set():
            raise MoveCancelled(msg("The move was cancelled."), msg("Everything is where it was."))
        dest = target / item.relative_to(source) if item != source else target
        if item.is_symlink():
            link = os.readlink(item)
            for old, new in ((move.source, move.target), (move.models, move.target / "huggingface")):
                if old is not None and Path(link).is_absolute() and Path(link).is_relative_to(old):
                    link = str(new / Path(link).relative_to(old))
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(link, dest)
        elif item.is_dir():
            dest.mkdir(parents=True, exist_ok=True)
        else:
            dest.parent.mkdir(parents=True, exist_ok=True)
            with open(item, "rb") as fin, open(dest, "wb") as fout:
                while chunk := fin.read(CHUNK):
                    if cancel.is_set():
                        raise MoveCancelled(
                            msg("The move was cancelled."), msg("Everything is where it was.")
                        )
                    fout.write(chunk)
                    done[0] += len(chunk)
                    on_progress(done[0], move.size, source.name)
            shutil.copystat(item, dest)


def _fix_runtime_paths(runtime: Path, old: Path, new: Path) -> None:
    """The runtime names the Python it was made from (``pyvenv.cfg``, the ``python`` links; uv keeps
    that Python in the data folder) and, in its scripts, its own interpreter: all point at ``old``."""
    if not runtime.is_dir():
        return
    before, after = str(old), str(new)
    config = runtime / "pyvenv.cfg"
    if config.is_file():
        config.write_text(config.read_text(encoding="utf-8").replace(before, after), encoding="utf-8")
    for folder in (runtime / "bin", runtime / "Scripts"):
        if not folder.is_dir():
            continue
        for item in folder.iterdir():
            if item.is_symlink():
                link = os.readlink(item)
                if link.startswith(before):
                    item.unlink()
                    os.symlink(after + link[len(before) :], item)
            elif item.is_file() and item.suffix.lower() not in (".exe", ".dll"):
                head = item.read_bytes()[:2]
                if head == b"#!":
                    text = item.read_text(encoding="utf-8", errors="surrogateescape")
                    if before in text:
                        item.write_text(
                            text.replace(before, after), encoding="utf-8", errors="surrogateescape"
                        )
