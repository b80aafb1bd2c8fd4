"""Child processes the way every part of the app starts and stops them.

On Windows a console program (uv, nvidia-smi, python.exe) started from a windowed app opens a console
window of its own, for as long as it runs; closing that window kills the program, uv in the middle of
a PyTorch swap included. Every child therefore gets ``CREATE_NO_WINDOW``, ``PYTHONUTF8=1`` (so the
output of a Python child with Chinese paths decodes as UTF-8 whatever the code page), and is stopped
with its whole process tree (uv starts its own children).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any

WINDOWS = sys.platform == "win32"
BELOW_NORMAL = subprocess.BELOW_NORMAL_PRIORITY_CLASS if WINDOWS else 0
"""``creationflags`` for a child that should leave the window the cores it needs (0 elsewhere)."""


THREAD_NICENESS = 10
"""The niceness of a thread that trains in the window's own process (Linux; the window runs at 0)."""


def lower_this_thread() -> None:
    """Run the calling thread below normal priority, so that the window's thread gets a core whenever
    it needs one (a run in the window's own process). On Linux the priority is per thread and the
    threads it starts inherit it: PyTorch's compute threads, started by the first operation, run below
    the window too. On Windows only this thread is lowered."""
    import threading

    if WINDOWS:
        import ctypes

        kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
        kernel32.SetThreadPriority(kernel32.GetCurrentThread(), -1)  # THREAD_PRIORITY_BELOW_NORMAL
    elif sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):  # lowering is always allowed; the thread is gone: nothing
            tid = threading.get_native_id()
            os.setpriority(os.PRIO_PROCESS, tid, max(os.getpriority(os.PRIO_PROCESS, tid), THREAD_NICENESS))


def creation_flags(detached: bool = False) -> int:
    """``creationflags`` for a child: no console window on Windows (0 elsewhere).

    Args:
        detached: The child outlives this process (the app started by the launcher).
    """
    if not WINDOWS:
        return 0
    if detached:
        return subprocess.DETACHED_PROCESS | subprocess.CREATE_NEW_PROCESS_GROUP
    return subprocess.CREATE_NO_WINDOW


def child_env(base: Mapping[str, str] | None = None, **extra: str) -> dict[str, str]:
    """The environment for a child: ``base`` (this process's by default) with ``PYTHONUTF8=1``."""
    env = dict(os.environ if base is None else base)
    env.setdefault("PYTHONUTF8", "1")
    env.update(extra)
    return env


def reset_frozen_dll_directory() -> None:
    """In the frozen Windows launcher, undo PyInstaller's ``SetDllDirectoryW(bundle)``.

    Children inherit the DLL search path: the runtime's Python (and PyTorch) would load the bundle's
    Qt and C++ runtime DLLs instead of their own.
    """
    if WINDOWS and getattr(sys, "frozen", False):
        import ctypes

        ctypes.windll.kernel32.SetDllDirectoryW(None)  # type: ignore[attr-defined]


def run(args: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess:
    """:func:`subprocess.run` with an argument list, no console window and a UTF-8 environment."""
    reset_frozen_dll_directory()
    kwargs.setdefault("creationflags", creation_flags())
    kwargs.setdefault("env", child_env())
    return subprocess.run(list(args), **kwargs)


def popen(args: Sequence[str], **kwargs: Any) -> subprocess.Popen:
    """:class:`subprocess.Popen` with an argument list, no console window and a UTF-8 environment."""
    reset_frozen_dll_directory()
    kwargs.setdefault("creationflags", creation_flags())
    kwargs.setdefault("env", child_env())
    return subprocess.Popen(list(args), **kwargs)


def kill_tree(pid: int, grace_s: float = 5.0) -> None:
    """Stop process ``pid`` and every process it started: ask first, then kill what is left.

    Windows has ``taskkill /T`` for the tree; elsewhere psutil finds the children (the frozen
    launcher has no psutil: there only ``pid`` itself is stopped, and uv's children end with it).
    """
    if WINDOWS:
        run(["taskkill", "/T", "/F", "/PID", str(pid)], capture_output=True, check=False)
        return
    try:
        import psutil
    except ImportError:
        import signal

        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        return

    try:
        root = psutil.Process(pid)
        family = [*root.children(recursive=True), root]
    except psutil.NoSuchProcess:
        return
    for proc in family:
        try:
            proc.terminate()
        except psutil.NoSuchProcess:
            continue
    _, alive = psutil.wait_procs(family, timeout=grace_s)
    for proc in alive:
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            continue


def package_path() -> str:
    """``PYTHONPATH`` for a Python child of the app: the folder that holds the ``desktop`` package first,
    so the child imports this app's code."""
    from pathlib import Path

    here = str(Path(__file__).resolve().parents[2])
    current = os.environ.get("PYTHONPATH", "")
    return os.pathsep.join([here, current]) if current else here


def own_session() -> dict[str, Any]:
    """``Popen`` arguments for a worker child: its own process group on POSIX (a Ctrl-C in the app's
    terminal goes to the app, not the child); on Windows no console window, and below normal priority
    (a child that keeps the cores busy leaves the window quick)."""
    if WINDOWS:
        return {"creationflags": subprocess.CREATE_NO_WINDOW | BELOW_NORMAL}
    return {"start_new_session": True}
