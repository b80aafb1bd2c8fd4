"""Keep the computer from going to sleep while a run is in progress (the display may still turn off).

- Windows: ``SetThreadExecutionState(ES_CONTINUOUS | ES_SYSTEM_REQUIRED)`` from the thread that holds
  the run (the state belongs to that thread; Windows drops it when the process ends, however it ends).
- Linux: the login manager's inhibitor lock, through ``systemd-inhibit --what=sleep --mode=block`` around
  a ``cat`` that reads a pipe this process holds: closing the pipe (a release, or this process dying in a
  crash) ends ``cat`` and with it the lock. No D-Bus library needed.
- Elsewhere, or without ``systemd-inhibit``: nothing is held, and :attr:`KeepAwake.held` says so.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

ES_CONTINUOUS = 0x80000000
ES_SYSTEM_REQUIRED = 0x00000001
WHO = "Finetune Studio"
SYSTEM_BUS = "/run/dbus/system_bus_socket"


class KeepAwake:
    """While held, the computer does not sleep; :meth:`release` (or the process ending) lets it again.

    Args:
        why: What the lock is for, as the system's power settings show it.
    """

    def __init__(self, why: str = "Training a model") -> None:
        self.why = why
        self.held = False
        self._inhibitor: subprocess.Popen | None = None

    @staticmethod
    def supported() -> bool:
        """Whether this system could be kept awake: Windows, or Linux with ``systemd-inhibit`` and a
        system bus to ask logind on (containers and WSL without systemd have none, nor do they sleep)."""
        if _on_windows():
            return True
        return shutil.which("systemd-inhibit") is not None and Path(SYSTEM_BUS).exists()

    def acquire(self, wait: bool = True) -> bool:
        """Ask the system to stay awake; whether it agreed. Holding it twice is holding it once.

        ``wait=False`` (a window's thread): on Linux, the login manager's answer is not waited for
        (an inhibitor that ends within 0.2 s was refused); :meth:`check` tells later.
        """
        if self.held:
            return True
        try:
            self.held = _windows_hold() if _on_windows() else self._linux_hold(wait)
        except Exception:  # no way to hold it here: the run goes on, the page says sleep may interrupt it
            log.warning("could not keep the computer awake", exc_info=True)
            self.held = False
        return self.held

    def check(self) -> bool:
        """Whether the computer is still kept awake (on Linux: the inhibitor still runs; it ends at once
        where there is no login manager to hold the lock)."""
        inhibitor = self._inhibitor
        if self.held and inhibitor is not None and inhibitor.poll() is not None:
            self._inhibitor, self.held = None, False
        return self.held

    def release(self) -> None:
        """Let the computer sleep again."""
        if not self.held:
            return
        self.held = False
        if _on_windows():
            _windows_release()
            return
        inhibitor, self._inhibitor = self._inhibitor, None
        if inhibitor is not None:
            try:
                if inhibitor.stdin is not None:
                    inhibitor.stdin.close()  # cat ends, and systemd-inhibit with it
                inhibitor.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                inhibitor.kill()

    def __enter__(self) -> KeepAwake:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _linux_hold(self, wait: bool = True) -> bool:
        program = shutil.which("systemd-inhibit")
        if program is None or not Path(SYSTEM_BUS).exists():  # no login manager to ask (a container)
            return False
        from desktop.core.system import processes

        self._inhibitor = processes.popen(
            [
                program,
                "--what=sleep",
                f"--who={WHO}",
                f"--why={self.why}",
                "--mode=block",
                "cat",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if not wait:
            return True
        try:
            self._inhibitor.wait(timeout=0.2)  # ended at once: no login manager (a container, WSL)
        except subprocess.TimeoutExpired:
            return True
        self._inhibitor = None
        return False


def _on_windows() -> bool:
    """Whether this is Windows (a function, so tests can say it is)."""
    return sys.platform == "win32"


def _kernel32() -> Any:
    import ctypes

    return ctypes.windll.kernel32  # type: ignore[attr-defined]


def _windows_hold() -> bool:
    return bool(_kernel32().SetThreadExecutionState(ES_CONTINUOUS | ES_SYSTEM_REQUIRED))


def _windows_release() -> None:
    _kernel32().SetThreadExecutionState(ES_CONTINUOUS)
