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
import platform
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

WINDOWS = sys.platform == "win32"
BELOW_NORMAL = subprocess.BELOW_NORMAL_PRIORITY_CLASS if WINDOWS else 0
"""``creationflags`` for a child that should leave the window the cores it needs (0 elsewhere)."""


THREAD_NICENESS = 10
"""The niceness of what a run in the window's own process computes with: its compute threads and its
processes (the window runs at 0)."""


GIL_SWITCH_INTERVAL_S = 0.001
"""How long a thread that runs Python keeps Python's lock once another thread asks for it, in the
window's process (Python's default: 5 ms)."""


def set_gil_switch_interval() -> None:
    """Make a thread that runs Python hand Python's lock over within :data:`GIL_SWITCH_INTERVAL_S` of another
    thread asking for it (the window's process calls this at start): the window's thread takes the lock
    at each slot, timer and plot item it paints. Figures: docs/decisions/001-gil-switch-interval.md.
    """
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)


WINDOW_SLICE_NS = 500_000
"""The time slice the window's thread asks Linux for (the default is 0.7-3 ms, by the number of cores:
1.4 ms on two)."""

_SCHED_SETATTR = {"x86_64": 314, "aarch64": 274}
"""The number of the ``sched_setattr`` system call (no C library wraps it); ``sched_getattr`` is one more."""
_SCHED_FLAG_RESET_ON_FORK = 0x01
_SCHED_ATTR = struct.Struct("IIQiIQQQ")
"""``struct sched_attr`` as its first version (48 bytes): size, policy, flags, nice, priority, runtime,
deadline, period."""


def _sched_setattr_number() -> int | None:
    """``sched_setattr``'s number here (``None``: not Linux, or a machine it is not known for)."""
    return _SCHED_SETATTR.get(platform.machine()) if sys.platform.startswith("linux") else None


def request_short_time_slice() -> bool:
    """Ask Linux to run the calling thread, the window's, on a core soon after it wakes; whether the
    system took it (Linux 6.12 and newer, where ``sched_runtime`` sets a normal thread's time slice).

    A shorter slice gives the thread no more of the cores, only an earlier turn; threads and processes
    started from this one get the system's default again (``SCHED_FLAG_RESET_ON_FORK``). Elsewhere,
    nothing. Figures: docs/decisions/002-window-thread-time-slice.md.
    """
    number = _sched_setattr_number()
    if number is None:
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        nice = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())  # kept: only root may raise it
        attr = ctypes.create_string_buffer(
            _SCHED_ATTR.pack(
                _SCHED_ATTR.size, os.SCHED_OTHER, _SCHED_FLAG_RESET_ON_FORK, nice, 0, WINDOW_SLICE_NS, 0, 0
            )
        )
        if libc.syscall(number, 0, attr, 0) != 0:  # refused (a container's seccomp profile): as it was
            return False
        return time_slice_ns() == WINDOW_SLICE_NS  # older systems take the call and keep their slice
    except (OSError, AttributeError):
        return False


def time_slice_ns() -> int | None:
    """The calling thread's time slice on Linux 6.12 and newer (``None`` where it cannot be read)."""
    number = _sched_setattr_number()
    if number is None:
        return None
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    attr = ctypes.create_string_buffer(_SCHED_ATTR.size)
    if libc.syscall(number + 1, 0, attr, _SCHED_ATTR.size, 0) != 0:
        return None
    runtime = _SCHED_ATTR.unpack(attr.raw)[5]
    return runtime or None


class ComputePriority:
    """Runs the threads that this process starts from now on below normal priority, except those that
    run Python (Linux), and the processes it starts (every system): PyTorch's compute threads, the
    tokenizers' and Arrow's, the data loader's and the compiler's processes, which take every core
    they get, so that the window's thread gets one whenever it needs one.

    A thread that runs Python stays at the window's priority: the window waits for Python's lock
    whenever such a thread holds it. Threads and processes are looked at when :meth:`lower_new` is
    called (the run calls it with each of its events; processes at most every
    :data:`CHILDREN_EVERY_S`). A thread runs Python if ``threading`` started it or it runs inside
    :func:`running_python`. On Windows no thread is lowered (priorities there are strict). Why, with
    figures: docs/decisions/003-compute-thread-priority.md.
    """

    CHILDREN_EVERY_S = 1.0

    def __init__(self) -> None:
        self._threads = _thread_ids()
        self._children = _children()
        self._children_looked = -self.CHILDREN_EVERY_S

    def lower_new(self) -> int:
        """Lower the threads started since the last look that do not run Python, and the processes;
        how many."""
        return self._lower_threads() + self._lower_children()

    def _lower_threads(self) -> int:
        if not self._threads:  # no per-thread priorities to set here
            return 0
        current = _thread_ids()
        new = current - self._threads
        self._threads = current
        python = {thread.native_id for thread in threading.enumerate()} | _python_threads
        lowered = 0
        for tid in new - python:
            try:
                niceness = max(os.getpriority(os.PRIO_PROCESS, tid), THREAD_NICENESS)
                os.setpriority(os.PRIO_PROCESS, tid, niceness)
            except OSError:  # ended meanwhile
                continue
            lowered += 1
        return lowered

    def _lower_children(self) -> int:
        import time

        now = time.monotonic()
        if now - self._children_looked < self.CHILDREN_EVERY_S:  # a look reads every process's state
            return 0
        self._children_looked = now
        current = _children()
        new = {pid: child for pid, child in current.items() if pid not in self._children}
        self._children = current
        lowered = 0
        for child in new.values():
            try:
                _lower(child)
            except Exception:  # ended meanwhile, or not ours to change
                continue
            lowered += 1
        return lowered


def lower_this_process() -> None:
    """Run this process below normal priority: a child of the app that works beside the window on the
    same cores (one that tokenizes). It has its own Python lock, so the window never waits for it."""
    try:
        import psutil

        _lower(psutil.Process())
    except Exception:  # a system that refuses: it works at normal priority
        return


def _lower(process: Any) -> None:
    """Run ``process`` (``psutil.Process``) below normal priority, never above where it is: its main
    thread and the threads it starts from now on on Linux, the whole process on Windows."""
    import psutil

    if WINDOWS:
        if process.nice() == psutil.NORMAL_PRIORITY_CLASS:
            process.nice(psutil.BELOW_NORMAL_PRIORITY_CLASS)
    else:
        process.nice(max(process.nice(), THREAD_NICENESS))


_python_threads: set[int] = set()


@contextlib.contextmanager
def running_python() -> Iterator[None]:
    """The calling thread, one that ``threading`` did not start (a ``QThread``), runs Python inside the
    block: :class:`ComputePriority` leaves it at the window's priority, and on Linux it runs as a
    batch thread meanwhile (:func:`as_batch_thread`)."""
    tid = threading.get_native_id()
    _python_threads.add(tid)
    try:
        with as_batch_thread():
            yield
    finally:
        _python_threads.discard(tid)


@contextlib.contextmanager
def as_batch_thread() -> Iterator[None]:
    """Run the calling thread under Linux's batch policy inside the block (elsewhere: unchanged).

    A batch thread gets the same share of the cores as a normal one, but waking up it does not take
    the core of the thread that woke it: the window's thread, which wakes the app's background threads
    each time it hands Python's lock over. The threads and processes it starts inherit the policy.
    Figures: docs/decisions/003-compute-thread-priority.md.
    """
    before = None
    if hasattr(os, "SCHED_BATCH"):
        try:
            if os.sched_getscheduler(0) == os.SCHED_OTHER:
                os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
                before = os.SCHED_OTHER
        except OSError:  # not allowed here (a container's seccomp profile): the thread stays as it is
            pass
    try:
        yield
    finally:
        if before is not None:
            with contextlib.suppress(OSError):
                os.sched_setscheduler(0, before, os.sched_param(0))


def _children() -> dict[int, Any]:
    """This process's child processes and theirs (``psutil.Process`` by id)."""
    try:
        import psutil

        return {child.pid: child for child in psutil.Process().children(recursive=True)}
    except Exception:  # psutil refused: nothing is lowered
        return {}


def _thread_ids() -> set[int]:
    """The ids of this process's threads (Linux); an empty set elsewhere."""
    if not sys.platform.startswith("linux"):
        return set()
    try:
        return {int(name) for name in os.listdir("/proc/self/task")}
    except OSError:
        return set()


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


def kill_when(
    child: subprocess.Popen, cancelled: Callable[[], bool] | None
) -> tuple[threading.Event, threading.Event]:
    """Watch ``cancelled`` five times a second (a child process, not a Qt signal) and stop ``child`` and
    its own children when it says so. Returns two events: set ``ended`` when done with the child (it
    ends the watcher); ``stopped`` is set when the child was stopped for a cancel."""
    ended, stopped = threading.Event(), threading.Event()

    def watch() -> None:
        while not ended.wait(0.2):
            if cancelled is not None and cancelled():
                stopped.set()
                kill_tree(child.pid)
                return

    threading.Thread(target=watch, daemon=True).start()
    return ended, stopped


def package_path() -> str:
    """``PYTHONPATH`` for a Python child of the app: the folder that holds the ``desktop`` package first,
    so the child imports this app's code."""
    from pathlib import Path

    here = str(Path(__file__).resolve().parents[3])
    current = os.environ.get("PYTHONPATH", "")
    return os.pathsep.join([here, current]) if current else here


def own_session() -> dict[str, Any]:
    """``Popen`` arguments for a worker child: its own process group on POSIX (a Ctrl-C in the app's
    terminal goes to the app, not the child); on Windows no console window, and below normal priority
    (a child that keeps the cores busy leaves the window quick)."""
    if WINDOWS:
        return {"creationflags": subprocess.CREATE_NO_WINDOW | BELOW_NORMAL}
    return {"start_new_session": True}
