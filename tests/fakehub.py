"""A fake model hub on 127.0.0.1 that speaks the HTTP the official clients use.

It serves the Hugging Face API (``/api/models``, ``/api/models/{id}``, ``/api/models/{id}/tree/...``,
``/{id}/resolve/{rev}/{file}``, and the same for datasets) and the ModelScope API (``/openapi/v1/models``,
``/api/v1/models/{id}/repo/files``, ``/api/v1/models/{id}/repo?FilePath=...``), with ``Range`` and
``ETag``, gated repositories (401 without the token), 404s, a file that stalls until released
(to cancel in the middle of it) and a connection dropped in the middle of a file (to resume).

Uploads go the way ``huggingface_hub`` sends them over HTTP: ``/api/whoami-v2``, ``/api/repos/create``,
``/api/models/{id}/preupload/{rev}``, the LFS batch API (``/{id}.git/info/lfs/objects/batch``) with
its ``PUT`` of each large file, and ``/api/models/{id}/commit/{rev}`` (ndjson). LFS objects are kept by
their SHA-256 whether or not a commit names them, as the real hub keeps them: a second push of the same
large file is told that it is there already.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

from tests.fakehub_uploads import ROUTES as UPLOAD_ROUTES
from tests.fakehub_uploads import UploadRoutes, git_oid

TOKEN = "hf_fake_token_for_tests"
READ_TOKEN = "hf_fake_read_only_token"
USER = "tester"
LFS_PATTERNS = (".safetensors", ".gguf", ".bin", ".pt")
"""Large files by name, as the hub's default ``.gitattributes`` says (besides anything over 10 MB)."""


@dataclass
class Repo:
    """One repository on the fake hub."""

    repo_id: str
    files: dict[str, bytes]
    kind: str = "model"  # or "dataset"
    gated: bool = False
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def sha(self) -> str:
        """The commit id: from the file names and sizes (cheap on every request, like a real hub's)."""
        digest = hashlib.sha1()
        for name in sorted(self.files):
            digest.update(f"{name}:{len(self.files[name])};".encode())
        return digest.hexdigest()


class FakeHub:
    """Start with :meth:`start`; ``url`` is the endpoint; ``requests`` logs ``(method, path)``."""

    def __init__(self) -> None:
        self.repos: dict[tuple[str, str], Repo] = {}
        self.requests: list[tuple[str, str]] = []
        self.stall: dict[str, threading.Event] = {}  # file name -> released when set
        self.stalled = threading.Event()  # set when a download reached a stall point
        self.drop_once: set[str] = set()  # file names whose first download is cut in the middle
        self.vanished: set[str] = set()  # file names listed in the tree but gone when downloaded
        self.corrupt: dict[str, int] = {}  # file name -> how many more downloads of it arrive damaged
        self.served: list[tuple[str, int]] = []  # (file name, first byte sent) for every GET of a file
        self.sent: dict[str, int] = {}  # file name -> bytes of it sent in all
        self.uploads = True  # False: a read-only mirror (whoami and every upload route are 404)
        self.lfs: dict[str, bytes] = {}  # SHA-256 -> the bytes of every large file received
        self.received: dict[str, int] = {}  # SHA-256 -> bytes of that large file received by PUT, in all
        self.commits: list[dict[str, Any]] = []  # repo, summary, description, files, deleted
        self.refuse_once: set[str] = set()  # SHA-256s of large files whose first PUT is answered 400
        self.put_started = threading.Event()  # set when a large file's PUT has begun
        self._server: ThreadingHTTPServer | None = None
        self._digests: dict[int, tuple[bytes, str]] = {}

    def digest(self, data: bytes) -> str:
        """SHA-256 of a file's bytes, computed once (bytes never change; a new version is a new object)."""
        key = id(data)
        if key not in self._digests or self._digests[key][0] is not data:
            self._digests[key] = (data, hashlib.sha256(data).hexdigest())
        return self._digests[key][1]

    def add(self, repo: Repo) -> Repo:
        self.repos[(repo.kind, repo.repo_id)] = repo
        return repo

    def add_folder(self, repo_id: str, folder: Path, **kwargs: Any) -> Repo:
        files = {
            p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
        }
        return self.add(Repo(repo_id, files, **kwargs))

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> FakeHub:
        hub = self

        class Handler(_Handler):
            fake = hub

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        for event in self.stall.values():
            event.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


def search_entry(repo: Repo) -> dict[str, Any]:
    """What ``/api/models`` lists for a repository (with the ``expand`` fields the app asks for)."""
    meta = repo.meta
    entry: dict[str, Any] = {
        "id": repo.repo_id,
        "modelId": repo.repo_id,
        "sha": repo.sha,
        "downloads": meta.get("downloads", 0),
        "likes": meta.get("likes", 0),
        "lastModified": meta.get("lastModified", "2026-10-01T12:00:00.000Z"),
        "createdAt": "2025-01-01T00:00:00.000Z",
        "pipeline_tag": meta.get("pipeline_tag", "text-generation"),
        "library_name": meta.get("library_name", "transformers"),
        "tags": ["transformers", f"license:{meta.get('license', 'apache-2.0')}"],
        "gated": "manual" if repo.gated else False,
        "private": bool(meta.get("private", False)),
        "cardData": {"license": meta.get("license", "apache-2.0")},
    }
    if "parameters" in meta:
        entry["safetensors"] = {"parameters": {"F32": meta["parameters"]}, "total": meta["parameters"]}
    return entry


class _Handler(UploadRoutes, BaseHTTPRequestHandler):
    fake: FakeHub
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def handle(self) -> None:
        with contextlib.suppress(ConnectionError, OSError):  # the client went away (a cancel)
            super().handle()

    # -- plumbing -------------------------------------------------------------------------------
    def _send_json(self, data: Any, status: int = 200, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _error(self, status: int, code: str, message: str) -> None:
        headers = {"X-Error-Code": code, "X-Error-Message": message} if code else {"X-Error-Message": message}
        self._send_json({"error": message, "Code": status, "Message": message}, status, headers)

    def _authorised(self, repo: Repo) -> bool:
        if not repo.gated:
            return True
        auth = self.headers.get("Authorization", "")
        cookie = self.headers.get("Cookie", "")
        return auth.endswith(TOKEN) or TOKEN in cookie

    def do_HEAD(self) -> None:
        self._route()

    def do_GET(self) -> None:
        self._route()

    def do_POST(self) -> None:
        self._route()

    def do_PUT(self) -> None:
        self._route()

    def _route(self) -> None:
        parsed = urlparse(self.path)
        path, query = unquote(parsed.path), parse_qs(parsed.query)
        self.fake.requests.append((self.command, self.path))
        routes = UPLOAD_ROUTES if self.command in ("POST", "PUT") else _ROUTES
        for pattern, handler in routes:
            match = re.fullmatch(pattern, path)
            if match:
                return handler(self, query, **match.groupdict())
        self._error(404, "EntryNotFound", f"no route for {path}")

    def _repo(self, kind: str, repo_id: str) -> Repo | None:
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Bearer ") and not auth.endswith(TOKEN):  # as the real hub answers any request
            self._error(401, "", "Invalid credentials in Authorization header")
            return None
        repo = self.fake.repos.get((kind, repo_id))
        if repo is None:
            self._error(404, "RepoNotFound", f"Repository {repo_id} not found")
            return None
        if not self._authorised(repo):
            self._error(
                401, "GatedRepo", f"Access to model {repo_id} is restricted. You must have access to it."
            )
            return None
        return repo

    # -- Hugging Face ----------------------------------------------------------------------------
    def hf_search(self, query: dict[str, list[str]], kind: str) -> None:
        text = (query.get("search") or [""])[0].lower()
        task = (query.get("pipeline_tag") or [""])[0]
        found = [
            r
            for (k, _), r in self.fake.repos.items()
            if k == kind.rstrip("s")
            and text in r.repo_id.lower()
            and (not task or r.meta.get("pipeline_tag", "text-generation") == task)
        ]
        sort = (query.get("sort") or ["downloads"])[0]
        found.sort(key=lambda r: r.meta.get(sort, 0), reverse=True)
        limit = int((query.get("limit") or ["50"])[0])
        self._send_json([search_entry(r) for r in found[:limit]])

    def hf_info(self, query: dict[str, list[str]], kind: str, repo_id: str, rev: str = "") -> None:
        repo = self.fake.repos.get((kind.rstrip("s"), repo_id))
        if repo is None:
            return self._error(404, "RepoNotFound", f"Repository {repo_id} not found")
        entry = search_entry(repo)  # model info is public even for gated repositories
        entry["siblings"] = [{"rfilename": n, "size": len(b)} for n, b in sorted(repo.files.items())]
        self._send_json(entry)

    def hf_tree(self, query: dict[str, list[str]], kind: str, repo_id: str, rev: str, sub: str = "") -> None:
        repo = self._repo(kind.rstrip("s"), repo_id)
        if repo is None:
            return
        entries = [
            {"type": "file", "path": n, "size": len(b), "oid": git_oid(b)}
            for n, b in sorted(repo.files.items())
        ]
        self._send_json(entries)

    def hf_resolve(
        self, query: dict[str, list[str]], repo_id: str, rev: str, name: str, kind: str = "model"
    ) -> None:
        repo = self._repo(kind, repo_id)
        if repo is None:
            return
        if name not in repo.files or name in self.fake.vanished:
            return self._error(404, "EntryNotFound", f"{name} not found")
        self._send_file(repo, name, {"X-Repo-Commit": repo.sha})

    def _send_file(self, repo: Repo, name: str, extra: dict[str, str]) -> None:
        data = repo.files[name]
        etag = '"' + self.fake.digest(data) + '"'
        start, end = 0, len(data) - 1
        ranged = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
        if ranged:
            start = int(ranged.group(1))
            end = min(end, int(ranged.group(2))) if ranged.group(2) else end
        self.send_response(206 if ranged else 200)
        self.send_header("Content-Length", str(end + 1 - start))
        self.send_header("ETag", etag)
        self.send_header("Accept-Ranges", "bytes")
        if ranged:
            self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
        for key, value in extra.items():
            self.send_header(key, value)
        self.end_headers()
        if self.command == "HEAD":
            return
        body = data[start : end + 1]
        if self.fake.corrupt.get(name) and body:
            self.fake.corrupt[name] -= 1
            body = bytes([body[0] ^ 0xFF]) + body[1:]  # one byte flipped on the way
        self.fake.served.append((name, start))
        self.fake.sent[name] = self.fake.sent.get(name, 0) + len(body)
        half = len(body) // 2
        if name in self.fake.drop_once and half:
            self.fake.drop_once.discard(name)
            self.wfile.write(body[:half])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)  # the connection drops in the middle of the file
            return
        stall = self.fake.stall.get(name)
        if stall is not None and half:
            self.wfile.write(body[:half])
            self.wfile.flush()
            self.fake.stalled.set()
            if not stall.wait(timeout=30):
                return
            self.wfile.write(body[half:])
            return
        self.wfile.write(body)

    # -- ModelScope -----------------------------------------------------------------------------
    def ms_search(self, query: dict[str, list[str]]) -> None:
        text = (query.get("search") or [""])[0].lower()
        found = [r for (k, _), r in self.fake.repos.items() if k == "model" and text in r.repo_id.lower()]
        items = [
            {
                "id": r.repo_id,
                "name": r.repo_id.split("/")[1],
                "owner": r.repo_id.split("/")[0],
                "downloads": r.meta.get("downloads", 0),
                "likes": r.meta.get("likes", 0),
                "license": r.meta.get("license", "apache-2.0"),
                "last_modified": "2026-10-01T12:00:00Z",
                "tasks": [r.meta.get("pipeline_tag", "text-generation")],
            }
            for r in found
        ]
        self._send_json(
            {
                "success": True,
                "data": {"models": items, "total_count": len(items), "page_number": 1, "page_size": 10},
            }
        )

    def ms_files(self, query: dict[str, list[str]], kind: str, repo_id: str) -> None:
        repo = self._repo(kind.rstrip("s"), repo_id)
        if repo is None:
            return
        files = [
            {
                "Name": n.split("/")[-1],
                "Path": n,
                "Size": len(b),
                "Sha256": self.fake.digest(b),
                "Type": "blob",
                "Revision": repo.sha,
            }
            for n, b in sorted(repo.files.items())
        ]
        self._send_json({"Code": 200, "Success": True, "Data": {"Files": files}})

    def ms_file(self, query: dict[str, list[str]], kind: str, repo_id: str) -> None:
        repo = self._repo(kind.rstrip("s"), repo_id)
        if repo is None:
            return
        name = (query.get("FilePath") or [""])[0]
        if name not in repo.files or name in self.fake.vanished:
            return self._error(404, "EntryNotFound", f"{name} not found")
        self._send_file(repo, name, {})

    def ms_revisions(self, query: dict[str, list[str]], kind: str, repo_id: str) -> None:
        repo = self._repo(kind.rstrip("s"), repo_id)
        if repo is None:
            return
        self._send_json(
            {
                "Code": 200,
                "Success": True,
                "Data": {"RevisionMap": {"Branches": [{"Revision": "master"}], "Tags": []}},
            }
        )


_ID = r"(?P<repo_id>[^/]+/[^/]+)"
_ROUTES: list[tuple[str, Any]] = [
    (r"/api/whoami-v2", _Handler.hf_whoami),
    (r"/api/(?P<kind>models|datasets)", _Handler.hf_search),
    (rf"/api/(?P<kind>models|datasets)/{_ID}/tree/(?P<rev>[^/]+)(?P<sub>/.*)?", _Handler.hf_tree),
    (rf"/api/(?P<kind>models|datasets)/{_ID}/revision/(?P<rev>[^/]+)", _Handler.hf_info),
    (rf"/api/(?P<kind>models|datasets)/{_ID}", _Handler.hf_info),
    (
        rf"/datasets/{_ID}/resolve/(?P<rev>[^/]+)/(?P<name>.+)",
        lambda h, q, **kw: _Handler.hf_resolve(h, q, kind="dataset", **kw),
    ),
    (rf"/{_ID}/resolve/(?P<rev>[^/]+)/(?P<name>.+)", _Handler.hf_resolve),
    (r"/openapi/v1/models", _Handler.ms_search),
    (rf"/api/v1/(?P<kind>models|datasets)/{_ID}/repo/(files|tree)", _Handler.ms_files),
    (rf"/api/v1/(?P<kind>models|datasets)/{_ID}/revisions", _Handler.ms_revisions),
    (rf"/api/v1/(?P<kind>models|datasets)/{_ID}/repo", _Handler.ms_file),
]


def main() -> None:
    """Serve folders as repositories from a process of its own: ``python -m tests.fakehub ID=FOLDER ...``.

    Prints the endpoint's URL on the first line, then serves until killed (used by bench/download.py,
    so that the server does not share the client's interpreter).
    """
    import sys

    hub = FakeHub()
    for spec in sys.argv[1:]:
        repo_id, folder = spec.split("=", 1)
        hub.add_folder(repo_id, Path(folder))
    hub.start()
    print(hub.url, flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
