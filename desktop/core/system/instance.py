"""Which Finetune Studio processes are running, so nothing swaps their runtime from under them.

Every app window and command-line run holds an :class:`InstanceMark` while it runs: an OS-level
lock on a file of its own in the data folder (released by the OS however the process ends, so a
crash leaves nothing that blocks), and on Windows also a named mutex that the uninstaller can see.
The PyTorch repair, the launcher's update and the uninstaller refuse to touch the runtime while
:func:`others_running` names a process; on Windows a running process keeps PyTorch's DLLs locked, and
uv would stop at the first locked file with PyTorch half-removed.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path
from typing import Any

MUTEX_NAME = "FinetuneStudio.Running"
"""The named mutex the Windows uninstaller looks for (installer/finetune-studio.nsi)."""


_MARK_NAME = re.compile(r"[a-z]+-\d+")  # kind-pid, as InstanceMark names its files


def _folder() -> Path:
    from desktop.core.system.paths import data_dir

    return data_dir() / "instances"


class InstanceMark:
    """Marks this process as a running Finetune Studio (``kind``: ``app`` or ``cli``) until released."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.path = _folder() / f"{kind}-{os.getpid()}.lock"
        self._lock: Any = None
        self._mutex: Any = None

    def acquire(self) -> InstanceMark:
        """Take the mark; a folder that cannot be written only means others cannot see this process."""
        import filelock

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._lock = filelock.FileLock(self.path, timeout=0, thread_local=False)
            self._lock.acquire()
        except (OSError, filelock.Timeout):
            self._lock = None
        if sys.platform == "win32":
            import ctypes

            self._mutex = ctypes.windll.kernel32.CreateMutexW(None, False, MUTEX_NAME)  # type: ignore[attr-defined]
        return self

    def release(self) -> None:
        """Drop the mark."""
        if self._lock is not None:
            self._lock.release()
            self._lock = None
            self.path.unlink(missing_ok=True)
        if self._mutex:
            import ctypes

            ctypes.windll.kernel32.CloseHandle(self._mutex)  # type: ignore[attr-defined]
            self._mutex = None

    def __enter__(self) -> InstanceMark:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def others_running() -> list[str]:
    """The other Finetune Studio processes running now, as ``kind-pid`` (stale marks are removed)."""
    import filelock

    folder = _folder()
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.glob("*.lock")):
        if path.stem.endswith(f"-{os.getpid()}") or not _MARK_NAME.fullmatch(path.stem):
            continue  # this process's own mark, or a file this module did not write
        probe = filelock.FileLock(path, timeout=0, thread_local=False)
        try:
            probe.acquire()
        except filelock.Timeout:
            found.append(path.stem)
            continue
        except OSError:
            continue
        probe.release()
        path.unlink(missing_ok=True)  # its process is gone
    return found


def wait_for_exit(pid: int, timeout_s: float = 60.0) -> bool:
    """Wait until process ``pid`` has ended (the window that asked for a restart); whether it did."""
    import psutil

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not psutil.pid_exists(pid):
            return True
        try:
            psutil.Process(pid).wait(timeout=min(1.0, max(0.0, deadline - time.monotonic())))
            return True
        except psutil.TimeoutExpired:
            continue
        except psutil.NoSuchProcess:
            return True
    return not psutil.pid_exists(pid)
