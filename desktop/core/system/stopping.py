"""Every way a terminal asks a process to end, turned into one graceful stop.

Ctrl-C (SIGINT), SIGTERM (systemd, ``docker stop``, ``timeout``) and, on Windows, Ctrl-Break and
closing the console window all set the same stop flag, so a run checkpoints and ends as
"stopped". A second Ctrl-C stops at once.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

EXIT_CODE_BY_SIGNAL = {"SIGINT": 130, "SIGTERM": 143, "SIGBREAK": 130, "CONSOLE_CLOSE": 130}
CLOSE_GRACE_S = 4.5  # Windows ends a process about 5 s after its console window was closed


class GracefulStop:
    """Installs the handlers for the duration of a ``with`` block.

    Args:
        stop: Set by the first request to end.
        on_request: Told the first request's name (``SIGINT``, ``SIGTERM``...), e.g. to print a line.
        hard_second: Whether a second Ctrl-C raises ``KeyboardInterrupt`` (the CLI) or is ignored.

    Attributes:
        reason: The name of the first request, or ``""``.
        done: Set by the owner when the run has ended; a closing Windows console waits for it.
    """

    def __init__(
        self,
        stop: threading.Event,
        on_request: Callable[[str], None] | None = None,
        hard_second: bool = True,
    ) -> None:
        self.stop = stop
        self.on_request = on_request
        self.hard_second = hard_second
        self.reason = ""
        self.done = threading.Event()
        self._previous: dict[int, Any] = {}
        self._console_handler: Any = None

    @property
    def exit_code(self) -> int:
        """The exit code a stopped run gets: 130 after Ctrl-C, 143 after SIGTERM."""
        return EXIT_CODE_BY_SIGNAL.get(self.reason, 130)

    def request(self, reason: str) -> None:
        """Ask for a graceful stop (what each handler does)."""
        if self.stop.is_set():
            if reason == "SIGINT" and self.hard_second:
                raise KeyboardInterrupt
            return
        self.reason = reason
        self.stop.set()
        if self.on_request is not None:
            self.on_request(reason)

    def __enter__(self) -> GracefulStop:
        names = ["SIGINT", "SIGTERM"] + (["SIGBREAK"] if hasattr(signal, "SIGBREAK") else [])
        for name in names:
            number = getattr(signal, name)
            self._previous[number] = signal.signal(number, lambda *_, n=name: self.request(n))
        if sys.platform == "win32":
            self._install_console_handler()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        for number, previous in self._previous.items():
            signal.signal(number, previous)
        if self._console_handler is not None:
            import ctypes

            ctypes.windll.kernel32.SetConsoleCtrlHandler(self._console_handler, False)  # type: ignore[attr-defined]

    def on_console_event(self, kind: int) -> bool:
        """Windows console events: close, log-off and shut-down stop the run and wait for it.

        Returning from the handler lets Windows end the process, so it waits (up to the grace
        Windows gives) for the checkpoint to be written. Ctrl-C and Ctrl-Break arrive as signals.
        """
        if kind not in (2, 5, 6):  # CTRL_CLOSE_EVENT, CTRL_LOGOFF_EVENT, CTRL_SHUTDOWN_EVENT
            return False
        self.request("CONSOLE_CLOSE")
        self.done.wait(CLOSE_GRACE_S)
        return True

    def _install_console_handler(self) -> None:
        import ctypes
        from ctypes import wintypes

        prototype = ctypes.WINFUNCTYPE(wintypes.BOOL, wintypes.DWORD)  # type: ignore[attr-defined]
        self._console_handler = prototype(self.on_console_event)
        ctypes.windll.kernel32.SetConsoleCtrlHandler(self._console_handler, True)  # type: ignore[attr-defined]
