"""Every way a terminal asks a run to end is one graceful stop."""

from __future__ import annotations

import os
import signal
import sys
import threading

import pytest

from desktop.core.system.stopping import GracefulStop


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigterm_then_ctrl_c(capsys: pytest.CaptureFixture) -> None:
    stop, said = threading.Event(), []
    with GracefulStop(stop, said.append) as graceful:
        os.kill(os.getpid(), signal.SIGTERM)
        assert stop.wait(5) and said == ["SIGTERM"] and graceful.exit_code == 143
        with pytest.raises(KeyboardInterrupt):  # a second Ctrl-C stops at once
            os.kill(os.getpid(), signal.SIGINT)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # handlers restored


def test_closing_the_windows_console_stops_and_waits_for_the_checkpoint() -> None:
    stop = threading.Event()
    graceful = GracefulStop(stop)
    finished = threading.Timer(0.2, graceful.done.set)  # the run ends after its checkpoint
    finished.start()
    assert graceful.on_console_event(2) is True  # CTRL_CLOSE_EVENT: handled, after the run ended
    assert stop.is_set() and graceful.done.is_set() and graceful.reason == "CONSOLE_CLOSE"
    assert graceful.on_console_event(0) is False  # Ctrl-C arrives as a signal instead
