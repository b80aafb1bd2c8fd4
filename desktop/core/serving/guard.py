"""What a request must be before a route reads it: addressed to this server, not sent by a web page the
user did not allow, JSON, within the size, and with the API key when one is required.

:class:`Guard` is ASGI middleware in front of the routes; it refuses before FastAPI reads the body, so a
refused request costs no more than its headers. Each refusal is OpenAI's error shape with one sentence
that says what to change:

- **Host** (403): a web page can reach a server on this computer through a name of its own that
  resolves here (DNS rebinding, the hole behind Ollama's CVE-2024-28224); its requests then carry that
  name. Only this computer's names are answered: the loopback names, and when served on the network
  the address served on, this computer's addresses and name, and the names the user adds.
- **Origin** (403): a browser names the page that sends a request; no page may use the server unless
  the user allows its origin (then the browser is also told so, through Starlette's CORS middleware).
- **Content type** (415): a POST must say it is JSON. A page may send a "simple" cross-origin POST of
  text without asking first; requiring JSON makes every page ask, and be refused. Checked here, not left
  to the version of FastAPI installed (0.131 ran such a POST).
- **Size** (413) and **key** (401), as before.
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from desktop.core.serving.addresses import is_local, this_computer
from desktop.core.serving.protocol import error_body

DRAIN_LIMIT = 64 << 20
"""A refused body up to this size is read and dropped, so that its client gets the 413 (not a reset)."""
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
DOCKER_HOST = "host.docker.internal"
"""What a container (Open WebUI's, say) calls this computer: a name no web page can make resolve here."""


class Refused(Exception):
    """A request this server will not run: answered with ``status`` and OpenAI's error shape."""

    def __init__(self, status: int, message: str, code: str | None = None, param: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.code, self.param = status, message, code, param

    def response(self) -> JSONResponse:
        kind = "server_error" if self.status >= 500 else "invalid_request_error"
        body = error_body(self.message, kind, code=self.code, param=self.param)
        # A refused body's client may still be sending it: this connection is done.
        headers = {"Connection": "close"} if self.status in (413, 415) else None
        return JSONResponse(body, status_code=self.status, headers=headers)


class TooLarge(HTTPException):
    """A body sent without ``Content-Length`` grew past the limit (an HTTP error, so that FastAPI's body
    reader passes it on as it is)."""

    def __init__(self, refusal: Refused) -> None:
        super().__init__(refusal.status, refusal.message)
        self.refusal = refusal


@dataclass(frozen=True)
class Access:
    """Who may use the server.

    Attributes:
        host: The address served on (``127.0.0.1``, ``0.0.0.0``, a LAN address).
        hosts: More names requests may be addressed to (a name in the local DNS, a reverse proxy's).
        origins: Web pages (``scheme://host[:port]``) that may use the server from a browser.
    """

    host: str = "127.0.0.1"
    hosts: tuple[str, ...] = ()
    origins: tuple[str, ...] = ()

    def names(self) -> set[str]:
        """The host names (lower case, no port) requests may be addressed to."""
        # A name given as "my-pc.local:8000" or "http://my-pc.local/" is the name a Host header carries.
        given = {host_name(name.split("://", 1)[-1].split("/", 1)[0]) for name in self.hosts}
        names = set(LOOPBACK_NAMES) | {name.strip("[]") for name in given if name}
        names |= {self.host.lower().strip("[]"), DOCKER_HOST}  # 127.0.0.2 is itself; Docker's name for here
        if not is_local(self.host):
            names |= {self.host.lower().strip("[]"), *this_computer()}
            names.discard("0.0.0.0")
            names.discard("::")
        return names


def host_name(header: str) -> str:
    """The host of a ``Host`` header, without its port, in lower case (``[::1]:8000`` -> ``::1``)."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class Guard:
    """ASGI middleware: the request's host, origin, content type, size and key, and a line per request
    for the log.

    It runs before FastAPI reads the body, so a request without the key or with a 10 MB body is
    refused without reading it.
    """

    def __init__(
        self,
        app: Any,
        key: str,
        limit: int,
        on_request: Callable[[dict[str, Any]], None] | None,
        access: Access | None = None,
    ) -> None:
        self.app, self.key, self.limit, self.on_request = app, key, limit, on_request
        self.access = access or Access()
        self.names = self.access.names()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        began, status = time.monotonic(), [0]

        async def sending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            refusal = self._check(scope)
            if refusal is not None:
                if refusal.status in (413, 415):
                    await _drain(receive, DRAIN_LIMIT)
                await refusal.response()(scope, receive, sending)
                return
            await self.app(scope, self._bounded(receive), sending)
        except TooLarge as exc:
            if status[0] == 0:
                await exc.refusal.response()(scope, receive, sending)
        finally:
            if self.on_request is not None:
                self.on_request(
                    {
                        "method": scope.get("method", ""),
                        "path": scope.get("path", "")[:200],  # a log line stays a line
                        "status": status[0] or 499,
                        "seconds": round(time.monotonic() - began, 3),
                    }
                )

    def _check(self, scope: dict[str, Any]) -> Refused | None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        host = headers.get("host")
        if host is not None and host_name(host) not in self.names:
            return Refused(
                403,
                f"This server answers requests addressed to {', '.join(sorted(self.names))}; this one was "
                f"addressed to '{host[:100]}'. A web page may be trying to reach it under a name of its "
                "own. To use another name for this computer, serve with --allow-host NAME.",
                "host_not_allowed",
            )
        origin = headers.get("origin")
        if origin is not None and origin not in self.access.origins:
            return Refused(
                403,
                f"Requests from web pages are refused; this one came from {origin[:100]}. Any page you "
                "visit could otherwise use this server. To let one page use it, serve with "
                "--allow-origin ORIGIN.",
                "origin_not_allowed",
            )
        if scope.get("method") == "OPTIONS" and origin is not None:
            return None  # an allowed page's browser asking first: the CORS middleware answers it
        if self.key:
            given = headers.get("authorization", "")
            token = given[7:].strip() if given[:7].lower() == "bearer " else ""
            if not hmac.compare_digest(token.encode(), self.key.encode()):
                return Refused(
                    401,
                    "This server needs its API key: send it as the header 'Authorization: Bearer KEY' "
                    "(the openai client's api_key). "
                    + ("The key sent is not the server's." if token else "No key was sent."),
                    "invalid_api_key",
                )
        if scope.get("method") == "POST":
            kind = headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if kind != "application/json":
                return Refused(
                    415,
                    "Send the body as JSON, with the header 'Content-Type: application/json'"
                    + (f" (this one said '{kind[:100]}')." if kind else " (this one said none)."),
                    "unsupported_media_type",
                )
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > self.limit:
            return self._too_large()
        return None

    def _too_large(self) -> Refused:
        return Refused(
            413,
            f"The request body is larger than this server accepts ({self.limit // 1024} KiB).",
            "request_too_large",
        )

    def _bounded(self, receive: Any) -> Any:
        """``receive`` that stops a body without a length once it passes the limit."""
        read = [0]

        async def bounded() -> dict[str, Any]:
            message = await receive()
            if message["type"] == "http.request":
                read[0] += len(message.get("body", b""))
                if read[0] > self.limit:
                    raise TooLarge(self._too_large())
            return message

        return bounded


async def _drain(receive: Any, most: int) -> None:
    """Read and drop a refused body, so that the client, still sending it, reads the refusal instead of
    a reset connection; past ``most`` bytes the connection is simply closed."""
    read = 0
    while read <= most:
        message = await receive()
        if message["type"] != "http.request":
            return
        read += len(message.get("body", b""))
        if not message.get("more_body", False):
            return


def origin_of(text: str) -> str | None:
    """A web page's origin as its browser sends it (``scheme://host[:port]``, lower case, no path), from
    what a user typed (``None``: not an origin, e.g. a path or no scheme)."""
    from urllib.parse import urlsplit

    typed = text.strip().rstrip("/")
    try:
        parts = urlsplit(typed)
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        return None
    if not parts.scheme or not parts.hostname or parts.path or parts.query:  # app:// pages are origins too
        return None
    if parts.fragment or parts.username or parts.password:
        return None
    try:  # as a browser sends it: an international name in its ASCII form, no default port
        host = parts.hostname.encode("idna").decode("ascii")
    except UnicodeError:
        return None
    host = f"[{host}]" if ":" in host else host
    default = {"http": 80, "https": 443}.get(parts.scheme.lower())
    port = f":{parts.port}" if parts.port is not None and parts.port != default else ""
    return f"{parts.scheme.lower()}://{host}{port}"
