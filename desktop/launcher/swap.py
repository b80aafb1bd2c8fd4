"""Swap the runtime's PyTorch at the launcher's start, the way that cannot leave it broken.

The app asked for it (``desktop.core.environment.swap_request``). The launcher, which never loads
PyTorch, builds a complete runtime with the requested build in ``runtime.staging`` beside the old one
(the old one keeps working meanwhile; the app's libraries come from uv's cache), waits until no
process of the old runtime is left (the window, its helper, a worker and its data loader workers,
TensorBoard, a command-line run), then renames the old runtime aside, the new one into its place,
and deletes the old one. A swap that fails at any point leaves the old runtime as it was.

A launcher killed between the two renames is finished by the next start (:func:`recover`).
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from desktop.core.environment.swap_request import SwapRequest, forget_swap
from desktop.core.system.messages import msg
from desktop.launcher.runtime import Bundle, Options, Runtime, SetupError, TorchChoice, setup

WAIT_S = 120.0
"""How long the launcher waits for the old runtime's processes to end before it leaves the swap to the
next start (the new runtime is kept, so that start only renames)."""


class StillInUse(SetupError):
    """The new runtime is ready, but processes of the old one still run: the swap waits for the next
    start, which needs no download."""


def staging(runtime: Runtime) -> Runtime:
    """Where the new runtime is built: beside the old one, on the same drive (a rename, not a copy)."""
    return Runtime(runtime.root.with_name(runtime.root.name + ".staging"))


def retired(runtime: Runtime) -> Path:
    """Where the old runtime goes for the moment between the two renames."""
    return runtime.root.with_name(runtime.root.name + ".old")


def recover(runtime: Runtime) -> str:
    """Finish or undo a swap a killed launcher left half-done; what was done ("" when nothing)."""
    old, new = retired(runtime), staging(runtime)
    if not runtime.root.exists():
        if new.marker() is not None:
            os.replace(new.root, runtime.root)
            done = "the new runtime was put in place"
        elif old.exists():
            os.replace(old, runtime.root)
            done = "the old runtime was put back"
        else:
            return ""
    else:
        done = ""
    if old.exists():
        shutil.rmtree(old, ignore_errors=True)  # a file still locked by Windows: the next start
        done = done or "the old runtime was deleted"
    return done


def swap_torch(
    runtime: Runtime,
    bundle: Bundle,
    options: Options,
    data_dir: Path,
    request: SwapRequest,
    on_line: Callable[[str], None] = lambda line: None,
    on_progress: Callable[[float, str], None] = lambda fraction, step: None,
    cancel: threading.Event | None = None,
    wait_s: float = WAIT_S,
) -> None:
    """Build the runtime with ``request``'s PyTorch beside the old one, then swap it in.

    Raises:
        SetupError: Building the new runtime failed (it is deleted; the request is forgotten, so the
            next start does not try again unasked). The old runtime is untouched.
        StillInUse: The old runtime is still in use after ``wait_s``; the new one and the request are
            kept for the next start.
    """
    new = staging(runtime)
    marker = new.marker()
    if marker is None or marker.torch != request.requirement or new.state(bundle) != "ready":
        index = options.torch_index_url.strip() or request.index_url
        choice = TorchChoice(
            request.requirement, index, msg("asked for on the Environment page"), "+cu" in request.requirement
        )
        try:
            setup(
                new,
                bundle,
                options,
                data_dir,
                fresh=True,
                on_line=on_line,
                on_progress=lambda fraction, key: on_progress(fraction * 0.95, key),
                cancel=cancel,
                torch=choice,
                companions=tuple(request.companions),
            )
        except SetupError:
            shutil.rmtree(new.root, ignore_errors=True)  # gigabytes; the wheel download is kept apart
            forget_swap(data_dir)
            raise
    else:
        on_line(f"The runtime with {request.requirement} was built at an earlier start.")
    on_progress(0.95, "swap")
    old = retired(runtime)
    shutil.rmtree(old, ignore_errors=True)  # what an earlier swap could not delete
    wait_until_unused(runtime, cancel, wait_s, on_line)  # and moved it to `old`
    try:
        os.replace(new.root, runtime.root)
    except OSError:
        if old.exists():
            os.replace(old, runtime.root)
        raise
    forget_swap(data_dir)
    shutil.rmtree(old, ignore_errors=True)
    on_line(f"PyTorch is now {request.requirement}.")
    on_progress(1.0, "ready")


def wait_until_unused(
    runtime: Runtime,
    cancel: threading.Event | None,
    wait_s: float,
    on_line: Callable[[str], None],
) -> None:
    """Return once no process uses ``runtime``, having moved it to :func:`retired` (on Windows the
    move itself is the last proof: it fails while any file in the folder is open or loaded).

    Raises:
        StillInUse: Still in use after ``wait_s``; the runtime is where it was.
        SetupError: Cancelled while waiting.
    """
    from desktop.core.system.instance import others_running

    cancel = cancel or threading.Event()
    deadline = time.monotonic() + wait_s
    said = ""
    while True:
        users = [name for name in others_running() if not name.startswith("setup-")]
        users += running_from(runtime.root)
        if not users:
            if not runtime.root.exists():
                return
            try:
                os.replace(runtime.root, retired(runtime))
                return
            except PermissionError:
                users = ["a file of the runtime is in use"]
        waiting = ", ".join(users)
        if waiting != said:
            on_line(f"Waiting for these to end: {waiting}")
            said = waiting
        if time.monotonic() >= deadline:
            raise StillInUse(
                msg(
                    "The new PyTorch is ready, but Finetune Studio is still running ({what}), so it was "
                    "not swapped in.",
                    what=waiting,
                ),
                msg(
                    "Close every Finetune Studio window and command-line run, then start Finetune "
                    "Studio: the new PyTorch goes in at once."
                ),
            )
        if cancel.wait(1.0):
            raise SetupError(msg("Cancelled."), msg("The PyTorch you had is unchanged."))


def running_from(root: Path) -> list[str]:
    """Processes that run from ``root`` or have a file of it loaded, as ``name-pid`` (Linux; on
    Windows the rename in :func:`wait_until_unused` finds them)."""
    proc = Path("/proc")
    if not sys.platform.startswith("linux") or not proc.is_dir():
        return []
    inside = str(root.resolve()) + os.sep
    found = []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv0 = (entry / "cmdline").read_bytes().split(b"\0", 1)[0].decode(errors="replace")
            maps = (entry / "maps").read_text(errors="replace")
        except OSError:
            continue  # ended meanwhile, or another user's
        if argv0.startswith(inside) or inside in maps:
            found.append(f"{Path(argv0).name or 'process'}-{entry.name}")
    return found
