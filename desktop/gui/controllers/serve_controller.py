"""The local server (``desktop.cli serve --events``) as a child process: start, read its events, stop.

The child speaks JSON lines on stdout and stops when its stdin says ``stop`` or closes; the pipe stays
open while it runs, so it never outlives the app, even one that crashed. A QProcess delivers its output
on the GUI thread, so no thread of our own is needed.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, QTimer, Signal, Slot

from desktop import shared_ui
from desktop.core.system import processes

STOP_TIMEOUT_MS = 10_000
"""How long a server may take to end after ``stop`` before its process tree is killed."""
STDERR_KEPT = 8000
"""Characters of the child's stderr kept for Details."""


class ServeController(QObject):
    """Runs at most one server; the serve panel connects only to these signals (a fake works)."""

    loading_started = Signal(str)
    """The child is loading the model: its folder."""
    server_ready = Signal(dict)
    """It answers requests: the ready event (``base_url``, ``port``, ``model``, ``task``, ``chat``,
    ``keyed``, ``device``)."""
    request_answered = Signal(dict)
    """One request was answered: ``method``, ``path``, ``status``, ``seconds``."""
    server_failed = Signal(str, str, str)
    port_taken = Signal()
    """The failure is a port in use (before ``server_failed``)."""
    """It could not start or ended unasked: the sentence, what to do, the details (stderr's tail)."""
    server_stopped = Signal()
    """It ended after :meth:`stop`; the model's memory is free again."""
    running_changed = Signal(bool)
    """A child was started (``True``) or has ended."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._process: QProcess | None = None
        self._stdout = b""
        self._stderr = ""
        self._failure: dict[str, Any] | None = None
        self._stopping = False
        self._kill_timer = QTimer(self, singleShot=True, interval=STOP_TIMEOUT_MS)
        self._kill_timer.timeout.connect(self._on_kill_timer_timeout)

    def is_running(self) -> bool:
        """Whether a server process is alive (loading, serving or stopping)."""
        return self._process is not None

    def pid(self) -> int:
        """The child's process id (0 when none runs)."""
        return int(self._process.processId()) if self._process is not None else 0

    def start(
        self,
        model: str | Path,
        host: str,
        port: int,
        key: str = "",
        hosts: Sequence[str] = (),
        origins: Sequence[str] = (),
        remote_pictures: bool = False,
    ) -> None:
        """Serve ``model`` (a run folder or a model folder) on ``host:port``; ``key`` is handed over in
        the environment only, never on the command line. ``hosts``: more names requests may be addressed
        to; ``origins``: web pages that may use the server from a browser; ``remote_pictures``: a
        vision-language model's requests may name pictures by web address, which the server fetches."""
        from desktop.core.serving.keys import KEY_ENV

        if self._process is not None:
            return
        arguments = ["-m", "desktop.cli", "--lang", shared_ui.current, "serve", str(model)]
        arguments += ["--port", str(port), "--host", host, "--events"]
        for name in hosts:
            arguments += ["--allow-host", name]
        for origin in origins:
            arguments += ["--allow-origin", origin]
        if remote_pictures:
            arguments.append("--allow-remote-images")
        env = processes.child_env(PYTHONUNBUFFERED="1", PYTHONPATH=processes.package_path())
        env.pop(KEY_ENV, None)
        if key:
            env[KEY_ENV] = key
        environment = QProcessEnvironment()
        for name, value in env.items():
            environment.insert(name, value)
        process = QProcess(self)
        process.setProgram(sys.executable)
        process.setArguments(arguments)
        process.setProcessEnvironment(environment)
        process.readyReadStandardOutput.connect(self._on_process_stdout)
        process.readyReadStandardError.connect(self._on_process_stderr)
        process.finished.connect(self._on_process_finished)
        process.errorOccurred.connect(self._on_process_error)
        self._process, self._stdout, self._stderr = process, b"", ""
        self._failure, self._stopping = None, False
        process.start()  # stdin stays open: the child stops when it closes
        self.running_changed.emit(True)

    def stop(self) -> None:
        """Ask the server to stop (it ends the answer under way and frees the model); kill its process
        tree if it has not ended in :data:`STOP_TIMEOUT_MS`."""
        process = self._process
        if process is None or self._stopping:
            return
        self._stopping = True
        if process.state() == QProcess.ProcessState.Running:
            process.write(b"stop\n")
            process.closeWriteChannel()
        self._kill_timer.start()

    def shutdown(self, wait_ms: int = 3000) -> None:
        """The app quits: stop the server, wait up to ``wait_ms``, then kill what is left."""
        process = self._process
        if process is None:
            return
        self.stop()
        if not process.waitForFinished(wait_ms):
            processes.kill_tree(self.pid(), grace_s=1.0)
            process.waitForFinished(2000)

    @Slot()
    def _on_kill_timer_timeout(self) -> None:
        if self._process is not None:
            processes.kill_tree(self.pid(), grace_s=1.0)

    @Slot()
    def _on_process_stdout(self) -> None:
        if self._process is None:
            return
        self._stdout += bytes(self._process.readAllStandardOutput().data())
        *lines, self._stdout = self._stdout.split(b"\n")
        for raw in lines:
            self._on_line(raw.decode("utf-8", errors="replace").strip())

    @Slot()
    def _on_process_stderr(self) -> None:
        if self._process is None:
            return
        text = bytes(self._process.readAllStandardError().data()).decode("utf-8", errors="replace")
        self._stderr = (self._stderr + text)[-STDERR_KEPT:]

    def _on_line(self, line: str) -> None:
        try:
            event = json.loads(line)
        except ValueError:
            event = None
        if not isinstance(event, dict):  # a library that prints: keep it for Details
            self._stderr = (self._stderr + line + "\n")[-STDERR_KEPT:]
            return
        kind = event.get("event")
        if kind == "loading":
            self.loading_started.emit(str(event.get("folder", "")))
        elif kind == "ready":
            self.server_ready.emit(event)
        elif kind == "request":
            self.request_answered.emit(event)
        elif kind == "failed":
            self._failure = event

    @Slot(int, QProcess.ExitStatus)
    def _on_process_finished(self, code: int, status: QProcess.ExitStatus) -> None:
        self._on_process_stdout()
        self._on_process_stderr()
        self._end()
        if self._failure is not None:
            failure = self._failure
            if failure.get("code") == "port_in_use":
                self.port_taken.emit()
            self.server_failed.emit(
                str(failure.get("message", "")), str(failure.get("hint", "")), self._stderr
            )
        elif self._stopping:
            self.server_stopped.emit()
        else:
            self.server_failed.emit(
                self.tr("The server ended unexpectedly (exit code {code}).").format(code=code),
                self.tr("Start it again; if it ends again, Details shows what it printed."),
                self._stderr,
            )

    @Slot(QProcess.ProcessError)
    def _on_process_error(self, error: QProcess.ProcessError) -> None:
        if error != QProcess.ProcessError.FailedToStart or self._process is None:
            return  # a crash or a kill also ends in finished(), which says so
        detail = self._process.errorString()
        self._end()
        self.server_failed.emit(
            self.tr("The server could not be started: {error}.").format(error=detail),
            self.tr("Check that the app's Python ({python}) runs, then try again.").format(
                python=sys.executable
            ),
            detail,
        )

    def _end(self) -> None:
        self._kill_timer.stop()
        process, self._process = self._process, None
        if process is not None:
            process.deleteLater()
            self.running_changed.emit(False)
