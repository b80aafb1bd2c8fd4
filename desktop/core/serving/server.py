"""A model folder served over HTTP: bind the port, load the model, run uvicorn until stopped.

The port is bound before the model loads, so a port in use is said at once, in one sentence. The
socket is handed to uvicorn as it is (no second bind, no race with another program). Stopping ends
the generation that runs, lets uvicorn close its connections and frees the model's memory.
"""

from __future__ import annotations

import dataclasses
import errno
import logging
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.core.serving.addresses import is_local
from desktop.core.serving.connections import Deadlines
from desktop.core.serving.engine import Engine, Limits
from desktop.core.system.errors import InputError
from desktop.core.system.messages import msg

log = logging.getLogger(__name__)

DEFAULT_PORT = 8000
SHUTDOWN_GRACE_S = 3


@dataclass(frozen=True)
class ServeOptions:
    """Where and how to serve.

    Attributes:
        host: The address to listen on; ``127.0.0.1`` (this computer only) unless asked otherwise.
        port: 0 takes any free port.
        name: The model's name in the API (``model`` in requests); default: the folder's.
        key: The API key every request must carry; required for a host other computers can reach.
        hosts: More names requests may be addressed to (``--allow-host``).
        origins: Web pages that may use the server from a browser (``--allow-origin``).
        deadlines: How long a client may take to send a request, and the connections it may hold.
        remote_pictures: See the field.
    """

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    name: str = ""
    key: str = ""
    limits: Limits = field(default_factory=Limits)
    hosts: tuple[str, ...] = ()
    origins: tuple[str, ...] = ()
    deadlines: Deadlines = field(default_factory=Deadlines)
    remote_pictures: bool = False
    """A vision-language model's requests may name pictures on the web, which the server then fetches."""


PICTURE_BODY_BYTES = 32 << 20
"""A vision-language model's largest request: a few pictures as base64 data URLs."""


class PortInUse(InputError):
    """The port is taken (another program, or another server of this app)."""


class LocalServer:
    """One model folder behind the OpenAI-compatible routes of :mod:`desktop.core.serving.api`.

    :meth:`open` binds and loads; then :meth:`serve` (blocks) or :meth:`start` (a thread); :meth:`stop`
    from any thread.
    """

    def __init__(
        self,
        folder: str | Path,
        options: ServeOptions,
        run_config: Path | None = None,
        on_request: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        from desktop.core.results.tryit import inspect_folder

        if not is_local(options.host) and not options.key:
            raise InputError(
                msg("A server other computers can reach needs an API key."),
                msg("Serve on 127.0.0.1, or let the app make a key."),
            )
        self.info = inspect_folder(folder, run_config)
        if self.info.task == "image-classification":
            raise InputError(
                msg("The server answers text models; {folder} is an image classifier.", folder=str(folder)),
                msg(
                    "Label pictures with predict (a folder of pictures: finetune-studio-cli predict RUN "
                    "FOLDER), or try them on the Export step."
                ),
            )
        self.options = options
        self.name = options.name or Path(folder).name
        limits = options.limits
        if self.info.task == "vision-chat":  # pictures come in the body (data URLs), or named
            limits = dataclasses.replace(
                limits,
                body_bytes=max(limits.body_bytes, PICTURE_BODY_BYTES),
                remote_pictures=options.remote_pictures,
                local_pictures=is_local(options.host),
            )
        self.engine = Engine(self.info, limits)
        self.on_request = on_request
        self._socket: socket.socket | None = None
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._started = threading.Event()
        self._stopping = threading.Event()

    @property
    def port(self) -> int:
        return self._socket.getsockname()[1] if self._socket is not None else self.options.port

    @property
    def base_url(self) -> str:
        """``http://HOST:PORT/v1``: what a client's ``base_url`` is set to."""
        host = self.options.host
        if host in ("0.0.0.0", ""):
            host = "127.0.0.1"  # reachable from here; other computers use this one's address
        elif host == "::":
            host = "::1"
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}/v1"

    def open(self) -> LocalServer:
        """:meth:`bind`, then :meth:`load`."""
        return self.bind().load()

    def bind(self) -> LocalServer:
        """Take the port (a port in use is said now, before a minute of loading)."""
        self._socket = bind(self.options.host, self.options.port)
        return self

    def load(self) -> LocalServer:
        """Load the model (slow: seconds to minutes); the port is let go if it fails."""
        try:
            self.engine.load()
        except BaseException:
            if self._socket is not None:
                self._socket.close()
            raise
        return self

    def serve(self) -> None:
        """Answer requests until :meth:`stop`; then free the model."""
        import uvicorn

        from desktop.core.serving.api import build_app

        assert self._socket is not None, "open() first"
        from desktop.core.serving.guard import Access

        options = self.options
        access = Access(options.host, options.hosts, options.origins)
        app = build_app(self.engine, self.name, options.key, self.on_request, access)
        from desktop.core.serving.connections import BoundedLog, guarded_protocol

        config = uvicorn.Config(
            app,
            http=guarded_protocol(options.deadlines),  # h11, with deadlines and a connection cap
            log_level="warning",
            access_log=False,
            lifespan="off",
            ws="none",
            timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
        )
        bounded = BoundedLog()
        loggers = [logging.getLogger(name) for name in ("uvicorn.error", "asyncio")]
        for logger in loggers:
            logger.addFilter(bounded)
        started, engine = self._started, self.engine

        class Server(uvicorn.Server):
            async def startup(self, sockets: Any = None) -> None:
                await super().startup(sockets=sockets)
                started.set()

            def handle_exit(self, sig: int, frame: Any) -> None:  # Ctrl+C, SIGTERM
                engine.stop()  # the answers that run or wait end now, not after the grace period
                super().handle_exit(sig, frame)

        self._server = Server(config)
        if self._stopping.is_set():
            self._server.should_exit = True
        try:
            self._server.run(sockets=[self._socket])
        finally:
            self._started.set()  # a waiting start() returns even when startup failed
            for logger in loggers:
                logger.removeFilter(bounded)
            self.engine.close()
            self._socket.close()

    def start(self, timeout: float = 60) -> LocalServer:
        """:meth:`serve` on a thread; returns when the server accepts requests."""
        self._thread = threading.Thread(target=self.serve, name="local-server", daemon=True)
        self._thread.start()
        if not self._started.wait(timeout):
            raise TimeoutError("the server did not start")
        return self

    def stop(self) -> None:
        """End the running generation and the server (from any thread); the model's memory is freed."""
        self._stopping.set()
        self.engine.stop()
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=SHUTDOWN_GRACE_S + 30)


def bind(host: str, port: int) -> socket.socket:
    """A listening-ready socket on ``host:port``, or :class:`PortInUse` in one sentence."""
    if not 0 <= port <= 65535:
        raise InputError(
            msg("{port} is not a port number.", port=port),
            msg("Choose a port from 1024 to 65535, e.g. 8000."),
        )
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named, not 0: asyncio turns Nagle's algorithm off (TCP_NODELAY) only for sockets whose
    # protocol says TCP, and with it on every answer sent in two writes waited ~40 ms for an ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        if hasattr(socket, "SO_EXCLUSIVEADDRUSE"):  # Windows: never share a port with another program
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_EXCLUSIVEADDRUSE, 1)
        else:  # a port left in TIME_WAIT by the last server may be taken again; one listening may not
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno in (errno.EADDRINUSE, getattr(errno, "WSAEADDRINUSE", -1)) or _in_use(exc):
            error = PortInUse(
                msg("Port {port} on {host} is already in use by another program.", port=port, host=host),
                msg("Choose another port in the Port box, or stop the program that uses it."),
            )
            error.cli_hint = msg("Choose another port with --port, e.g. --port {port}.", port=port + 1)
            raise error from exc
        raise InputError(
            msg(
                "The server cannot listen on {host}:{port}: {error}", host=host, port=port, error=exc.strerror
            ),
            msg("Check the address: 127.0.0.1 is this computer only, 0.0.0.0 every network."),
        ) from exc
    return sock


def _in_use(exc: OSError) -> bool:
    return getattr(exc, "winerror", None) in (10048, 10013)
