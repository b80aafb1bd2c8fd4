"""Connections a client cannot hold: a deadline for each request's headers and body, and a cap on the
connections open at once, per client and in all.

The API key is checked once a request's headers have arrived; a client without it that opens
connections and never finishes a request held them for as long as it liked (uvicorn has no header
timeout), and 2 x 10,500 such connections filled the server's file descriptors, so that the key holder
could not connect at all. Here each connection is uvicorn's own h11 protocol behind a thin wrapper that
only watches the bytes as they pass:

- a request's headers must arrive within :attr:`Deadlines.headers` seconds of its first byte (the first
  request's, of the connection), and its body within :attr:`Deadlines.body` more; otherwise the
  connection is closed. Where a request stands is h11's own state (the parser uvicorn reads it with),
  so chunked bodies, trailers and pipelined requests are read as uvicorn reads them;
- a client (an address) may hold :attr:`Deadlines.per_client` connections, and the server
  :attr:`Deadlines.total`; past that a new connection is closed at once, before it costs anything.

A connection waiting for its answer, or idle between requests (uvicorn's keep-alive timeout ends
those), has no deadline here: the deadlines are on what the client sends. A connection that sends
nothing at all has its first request's deadline from the moment it opens.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Deadlines:
    """How long a client may take to send a request, and how many connections it may hold."""

    headers: float = 10.0
    body: float = 30.0
    per_client: int = 32
    total: int = 256


def guarded_protocol(deadlines: Deadlines) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol class behind ``deadlines`` (``uvicorn.Config(http=...)``); the connection
    counts are shared by the connections of one server."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    open_by: Counter[str] = Counter()

    class GuardedProtocol(asyncio.Protocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.inner = H11Protocol(*args, **kwargs)
            self.client = ""
            self.transport: asyncio.Transport | None = None
            self.timer: asyncio.TimerHandle | None = None
            self.counted = False
            self.phase = "idle"

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            peer = transport.get_extra_info("peername")
            self.client = str(peer[0]) if isinstance(peer, tuple) and peer else ""
            if open_by[self.client] >= deadlines.per_client or sum(open_by.values()) >= deadlines.total:
                transport.close()  # never handed to uvicorn: it costs no task and no log line
                return
            open_by[self.client] += 1
            self.counted = True
            self.transport = transport  # type: ignore[assignment]
            self.inner.connection_made(transport)  # type: ignore[arg-type]
            self._deadline(deadlines.headers)  # a connection that sends nothing is closed too
            self.phase = "head"

        def data_received(self, data: bytes) -> None:
            self.inner.data_received(data)
            # h11 has read what it could of the bytes: its state says where the client's request stands.
            state = self.inner.conn.their_state
            if state is h11.IDLE:  # a request's head on its way (a whole one would have moved it on)
                if self.phase != "head":
                    self._deadline(deadlines.headers)
                    self.phase = "head"
            elif state is h11.SEND_BODY:
                if self.phase != "body":
                    self._deadline(deadlines.body)
                    self.phase = "body"
            else:  # the request is all here (or the connection is ending): it is being answered
                self._cancel()
                self.phase = "idle"

        def _deadline(self, seconds: float) -> None:
            self._cancel()
            loop = asyncio.get_running_loop()
            self.timer = loop.call_later(seconds, self._too_slow)

        def _cancel(self) -> None:
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None

        def _too_slow(self) -> None:
            self.timer = None
            log.info("closed a connection from %s: its request did not arrive in time", self.client[:64])
            if self.transport is not None and not self.transport.is_closing():
                self.transport.close()

        def eof_received(self) -> Any:
            return self.inner.eof_received() if self.counted else None

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel()
            if not self.counted:
                return
            self.counted = False
            open_by[self.client] -= 1
            if open_by[self.client] <= 0:
                del open_by[self.client]
            self.inner.connection_lost(exc)

        def pause_writing(self) -> None:
            self.inner.pause_writing()

        def resume_writing(self) -> None:
            self.inner.resume_writing()

    return GuardedProtocol


class BoundedLog(logging.Filter):
    """At most ``most`` records of one kind (logger and message template) per ``window`` seconds: a
    flood of connection errors once wrote 192 MB of tracebacks in 40 s. The first record after a quiet
    window says how many were left out."""

    def __init__(self, most: int = 5, window: float = 60.0) -> None:
        super().__init__()
        self.most, self.window = most, window
        self.seen: dict[tuple[str, str], list[float]] = {}  # kind: [window start, count, left out]

    def filter(self, record: logging.LogRecord) -> bool:
        kind = (record.name, str(record.msg)[:200])
        now = time.monotonic()
        start, count, left = self.seen.get(kind, (now, 0, 0))
        if now - start > self.window:
            if left:
                record.msg = f"{record.msg} ({left} more like it in the last minute were left out)"
            start, count, left = now, 0, 0
        count += 1
        allowed = count <= self.most
        self.seen[kind] = [start, count, left + (0 if allowed else 1)]
        if len(self.seen) > 1000:  # many kinds: the oldest are forgotten
            self.seen = dict(list(self.seen.items())[-500:])
        return allowed
