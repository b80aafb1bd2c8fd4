"""``--data-folder``: the launcher moves the data folder before it starts the app (the app asked, or the
user chose a place in the first-start window), with progress, once nothing runs from it."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from desktop.core.system.data_location import Move, move_data, plan_move
from desktop.core.system.errors import InputError
from desktop.core.system.messages import msg
from desktop.launcher.runtime import Runtime, SetupError
from desktop.launcher.swap import WAIT_S, running_from


def planned(source: Path, target: Path) -> Move:
    """The move, checked.

    Raises:
        SetupError: The target cannot take the data (the reason and what to do).
    """
    try:
        return plan_move(source, target)
    except InputError as exc:
        raise SetupError(exc.message, exc.hint) from exc


def wait_for_others(runtime: Runtime, wait_s: float = WAIT_S, cancel: threading.Event | None = None) -> None:
    """Wait until no Finetune Studio process uses the data folder (the window that asked for the move
    closes itself).

    Raises:
        SetupError: Something still runs after ``wait_s``.
    """
    from desktop.core.system.instance import others_running

    deadline = time.monotonic() + wait_s
    cancel = cancel or threading.Event()
    while True:
        users = [name for name in others_running() if not name.startswith("setup-")]
        users += running_from(runtime.root)
        if not users:
            return
        if time.monotonic() >= deadline or cancel.wait(0.5):
            raise SetupError(
                msg(
                    "The data folder was not moved: Finetune Studio is still running ({what}).",
                    what=", ".join(users),
                ),
                msg("Close every Finetune Studio window and command-line run, then try again."),
            )


def move_headless(move: Move) -> None:
    """Move, printing the progress.

    Raises:
        SetupError: The move failed; everything is where it was.
    """
    shown = [-1]

    def progress(done: int, total: int, name: str) -> None:
        percent = int(done * 100 / total) if total else 100
        if percent // 10 != shown[0]:
            shown[0] = percent // 10
            print(f"Moving the data folder: {percent}% ({name})", flush=True)

    _guarded(lambda: move_data(move, progress))


def move_in_window(move: Move) -> None:
    """Move with a progress window and a Cancel button (the copy runs on a thread; the window polls it).

    Raises:
        SetupError: The move failed or was cancelled; everything is where it was.
    """
    from PySide6.QtCore import QCoreApplication, QEventLoop, QTimer
    from PySide6.QtWidgets import QProgressDialog

    cancel = threading.Event()
    state: dict[str, object] = {"done": 0, "total": move.size, "error": None, "ended": False}

    def progress(done: int, total: int, name: str) -> None:
        state["done"], state["total"] = done, total

    def work() -> None:
        try:
            _guarded(lambda: move_data(move, progress, cancel))
        except SetupError as exc:
            state["error"] = exc
        state["ended"] = True

    dialog = QProgressDialog(
        QCoreApplication.translate("moving", "Moving the data folder to {target}…").format(
            target=move.target
        ),
        QCoreApplication.translate("moving", "Cancel"),
        0,
        1000,
    )
    dialog.setWindowTitle("Finetune Studio")
    dialog.setMinimumDuration(0)
    dialog.canceled.connect(cancel.set)
    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    loop = QEventLoop()
    timer = QTimer(interval=100)

    def poll() -> None:
        total = int(state["total"]) or 1
        dialog.setValue(min(999, int(int(state["done"]) * 1000 / total)))
        if state["ended"]:
            loop.quit()

    timer.timeout.connect(poll)
    timer.start()
    loop.exec()
    timer.stop()
    dialog.close()
    thread.join()
    if state["error"] is not None:
        raise state["error"]  # type: ignore[misc]


def _guarded(job: object) -> None:
    try:
        job()  # type: ignore[operator]
    except InputError as exc:  # cancelled
        raise SetupError(exc.message, exc.hint) from exc
    except OSError as exc:
        raise SetupError(
            msg("The data folder could not be moved: {error}", error=exc),
            msg("Everything is where it was. Free some space or choose another folder, then try again."),
        ) from exc
