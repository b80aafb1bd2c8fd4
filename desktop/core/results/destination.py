"""Where an export goes: what may be replaced, a lock per destination, and a swap into place that never
leaves an old export half-deleted with the new one lost."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from desktop.core.runs.folders import RunDir
from desktop.core.system.errors import DiskInputError, InputError, disk_error
from desktop.core.system.messages import msg

MARKER_NAME = ".finetune-studio-export"
"""Written into every exported folder: only such a folder (or an empty one) is ever replaced."""


def check_destination(dest: Path, run: RunDir, config: Any) -> None:
    """Refuse a destination whose replacement would destroy something the user did not ask to.

    Raises:
        InputError: ``dest`` is a file; is, holds or lies inside a run folder, the runs folder, the
            source model or the app's data folder; or is a non-empty folder no export wrote.
    """
    from desktop.core.system.paths import data_dir, default_runs_dir

    if dest.exists() and not dest.is_dir():
        raise InputError(
            msg("{folder} is a file, not a folder.", folder=str(dest)),
            msg("Give the name of a new or empty folder to export to."),
        )
    protected = [
        (run.path, msg("the run folder")),
        (run.path.parent, msg("the runs folder")),
        (default_runs_dir(), msg("the runs folder")),
        (data_dir(), msg("Finetune Studio's data folder")),
    ]
    model = Path(config.model.name).expanduser()
    if config.model.name and model.is_dir():
        protected.append((model, msg("the model this run started from")))
    real = dest.resolve()
    for path, what in protected:
        other = Path(path).resolve()
        if real == other or other in real.parents or real in other.parents:
            values = {"folder": str(dest), "what": what, "other": str(other)}
            if real == other:
                problem = msg("{folder} is {what} ({other}); exporting there could overwrite it.", **values)
            elif other in real.parents:
                problem = msg(
                    "{folder} lies inside {what} ({other}); exporting there could overwrite it.", **values
                )
            else:
                problem = msg(
                    "{folder} holds {what} ({other}); exporting there could overwrite it.", **values
                )
            raise InputError(
                problem, msg("Export to a new folder elsewhere, for example in your Documents folder.")
            )
    if real.is_dir() and any(real.iterdir()):
        if next(real.glob(f"*/{_RUN_MARK}"), None) is not None or (real / _RUN_MARK).is_file():
            raise InputError(
                msg("{folder} holds run folders; exporting there could overwrite them.", folder=str(dest)),
                msg("Export to a new folder elsewhere."),
            )
        if not (real / MARKER_NAME).is_file():
            raise InputError(
                msg(
                    "{folder} is not empty and was not written by an export, so it will not be replaced.",
                    folder=str(dest),
                ),
                msg("Choose a new or empty folder, or a folder an earlier export wrote."),
            )


_RUN_MARK = "events.jsonl"


def write_marker(folder: Path, run: RunDir) -> None:
    import time

    record = {"run": str(run.path), "written": time.strftime("%Y-%m-%dT%H:%M:%S"), "pid": os.getpid()}
    (folder / MARKER_NAME).write_text(json.dumps(record), encoding="utf-8")


def lock_destination(dest: Path) -> Any:
    """An OS-level lock on exporting to ``dest``: a second export there is refused at once."""
    import hashlib

    import filelock

    from desktop.core.system.paths import data_dir

    # In the app's folder, not beside the export: nothing is left in the user's folder.
    key = hashlib.sha256(str(dest.resolve()).encode("utf-8")).hexdigest()[:20]
    folder = data_dir() / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    lock = filelock.FileLock(folder / f"export-{key}.lock", timeout=0, thread_local=False)
    try:
        lock.acquire()
    except filelock.Timeout:
        raise InputError(
            msg("Another export to {folder} is running right now.", folder=str(dest)),
            msg("Wait for it to finish, or export to another folder."),
        ) from None
    return _Held(lock)


class _Held:
    """A held lock as a context manager that releases it."""

    def __init__(self, lock: Any) -> None:
        self.lock = lock

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        self.lock.release()


def replace_folder(new: Path, dest: Path) -> None:
    """Put ``new`` at ``dest``; an old folder is renamed aside first and deleted only after.

    A file held open in the old folder (a viewer, antivirus, the try-it panel on Windows) then
    costs at most a leftover hidden folder, never the old export half-deleted with the new one lost.
    """
    if not dest.exists():
        new.rename(dest)
        return
    aside = Path(tempfile.mkdtemp(prefix=f".{dest.name}.old-{os.getpid()}-", dir=dest.parent))
    aside.rmdir()
    dest.rename(aside)
    try:
        new.rename(dest)
    except BaseException:
        aside.rename(dest)
        raise
    remove_tree(aside)


def remove_ours(folder: Path) -> bool:
    """Delete ``folder`` only when it carries the export marker (the app wrote it: a partial export, a
    set-aside old one, a push's temporary folder); whether it was ours. A folder without the marker is
    never touched, whatever its name."""
    if not (folder / MARKER_NAME).is_file():
        return False
    remove_tree(folder)  # marked as the app's own, checked above
    return True


def remove_tree(folder: Path, tries: int = 5) -> None:
    import time

    for attempt in range(tries):
        try:
            shutil.rmtree(folder)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.2 * (attempt + 1))  # a scanner or preview lets go of its file soon


def disk_input_error(exc: OSError, folder: Path, needed: int) -> InputError:
    found = disk_error(exc, folder, needed)
    if found is None:
        return InputError(
            msg("Cannot write in {folder}: {error}.", folder=str(folder), error=exc.strerror or exc),
            msg("Choose another folder."),
        )
    return DiskInputError(found.message, found.hint, found.kind)


def remove_stale_partials(dest: Path) -> None:
    """Delete what an export that was killed (power cut, task manager) left beside ``dest``."""
    import psutil

    for kind in ("partial", "old"):
        for folder in dest.parent.glob(f".{dest.name}.{kind}-*"):
            pid = folder.name.removeprefix(f".{dest.name}.{kind}-").split("-")[0]
            if not pid.isdigit() or psutil.pid_exists(int(pid)):
                continue
            # Both a partial and a set-aside old export carry the export marker; anything else is left alone.
            remove_ours(folder)
