"""The upload half of the fake hub (:mod:`tests.fakehub`): who the token is, new repositories, and
commits with their large files sent through the LFS batch API, as ``huggingface_hub`` sends them.

A token is :data:`tests.fakehub.TOKEN` (may write) or :data:`tests.fakehub.READ_TOKEN` (may only read);
anything else is refused as the real hub refuses it (401).
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

GITATTRIBUTES = (
    b"*.safetensors filter=lfs diff=lfs merge=lfs -text\n*.gguf filter=lfs diff=lfs merge=lfs -text\n"
)
LFS_FROM = 10 * 2**20  # any file this large is LFS, whatever its name


class UploadRoutes:
    """Mixed into the fake hub's request handler (which gives ``fake``, ``_send_json`` and ``_error``)."""

    fake: Any
    headers: Any
    rfile: Any
    command: str

    # -- who is asking ---------------------------------------------------------------------------
    def _role(self) -> str:
        """``write``, ``read``, or ``""`` (no token, or one the hub does not know)."""
        from tests.fakehub import READ_TOKEN, TOKEN

        auth = self.headers.get("Authorization", "")
        return "write" if auth == f"Bearer {TOKEN}" else "read" if auth == f"Bearer {READ_TOKEN}" else ""

    def _may_write(self) -> bool:
        """Answer and return False unless the token may write (401 unknown, 403 read-only)."""
        if not self.fake.uploads:
            self._error(404, "", "Not Found")
            return False
        role = self._role()
        if not role:
            self._error(401, "", "Invalid credentials in Authorization header")
            return False
        if role != "write":
            self._error(403, "", "You don't have the rights to write to this repository (read-only token)")
            return False
        return True

    def _body(self) -> bytes:
        """The request's body, sent with a length or in chunks (a streamed file)."""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def hf_whoami(self, query: dict[str, list[str]]) -> None:
        from tests.fakehub import USER

        if not self.fake.uploads:
            return self._error(404, "", "Not Found")
        role = self._role()
        if not role:
            return self._error(401, "", "Invalid credentials in Authorization header")
        self._send_json(
            {"type": "user", "name": USER, "auth": {"accessToken": {"displayName": "tests", "role": role}}}
        )

    def hf_validate_yaml(self, query: dict[str, list[str]]) -> None:
        """The check of a model card's metadata that every commit of a ``README.md`` asks for."""
        import yaml

        content = json.loads(self._body() or b"{}").get("content", "")
        try:
            meta = yaml.safe_load(content.split("---", 2)[1]) if content.startswith("---") else {}
        except (yaml.YAMLError, IndexError) as exc:
            return self._send_json({"errors": [{"message": f"Invalid YAML: {exc}"}]}, 400)
        if not isinstance(meta, dict):
            return self._send_json({"errors": [{"message": "The metadata must be a mapping"}]}, 400)
        self._send_json({"errors": [], "warnings": []})

    # -- repositories and commits ----------------------------------------------------------------
    def hf_create(self, query: dict[str, list[str]]) -> None:
        from tests.fakehub import Repo

        body = json.loads(self._body() or b"{}")
        if not self._may_write():
            return
        repo_id = f"{body.get('organization') or 'tester'}/{body['name']}"
        kind = body.get("type") or "model"
        url = f"{self.fake.url}/{repo_id}"
        if (kind, repo_id) in self.fake.repos:
            return self._send_json({"error": "You already created this model repo", "url": url}, 409)
        private = body.get("visibility", "private" if body.get("private") else "public") != "public"
        self.fake.add(Repo(repo_id, {".gitattributes": GITATTRIBUTES}, kind=kind, meta={"private": private}))
        self._send_json({"url": url, "name": repo_id, "id": repo_id})

    def hf_preupload(self, query: dict[str, list[str]], kind: str, repo_id: str, rev: str) -> None:
        body = json.loads(self._body() or b"{}")
        if not self._may_write():
            return
        repo = self.fake.repos.get((kind.rstrip("s"), repo_id))
        if repo is None:
            return self._error(404, "RepoNotFound", f"Repository {repo_id} not found")
        files = []
        for entry in body.get("files", []):
            path, size = entry["path"], int(entry["size"])
            large = path.endswith(_lfs_suffixes()) or size >= LFS_FROM
            old = repo.files.get(path)
            oid = git_oid(old) if old is not None and not large else None
            files.append(
                {"path": path, "uploadMode": "lfs" if large else "regular", "shouldIgnore": False, "oid": oid}
            )
        self._send_json({"files": files, "commitOid": repo.sha})

    def hf_lfs_batch(self, query: dict[str, list[str]], repo_id: str) -> None:
        body = json.loads(self._body() or b"{}")
        if not self._may_write():
            return
        objects = []
        for entry in body.get("objects", []):
            oid, size = entry["oid"], int(entry["size"])
            item: dict[str, Any] = {"oid": oid, "size": size}
            if oid not in self.fake.lfs:  # the hub has it already: no action, the client skips it
                item["actions"] = {"upload": {"href": f"{self.fake.url}/lfs-upload/{repo_id}/{oid}"}}
            objects.append(item)
        self._send_json({"transfer": "basic", "objects": objects})

    def hf_lfs_put(self, query: dict[str, list[str]], repo_id: str, oid: str) -> None:
        self.fake.put_started.set()
        data = self._body()
        self.fake.received[oid] = self.fake.received.get(oid, 0) + len(data)
        if oid in self.fake.refuse_once:
            self.fake.refuse_once.discard(oid)
            return self._error(400, "", "The storage refused this file (a test's refusal)")
        if hashlib.sha256(data).hexdigest() != oid:
            return self._error(400, "", f"The object's content does not match its id {oid}")
        self.fake.lfs[oid] = data
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.send_header("ETag", f'"{oid}"')
        self.end_headers()

    def hf_commit(self, query: dict[str, list[str]], kind: str, repo_id: str, rev: str) -> None:
        lines = [json.loads(line) for line in self._body().splitlines() if line.strip()]
        if not self._may_write():
            return
        repo = self.fake.repos.get((kind.rstrip("s"), repo_id))
        if repo is None:
            return self._error(404, "RepoNotFound", f"Repository {repo_id} not found")
        record: dict[str, Any] = {"repo": repo_id, "files": {}, "deleted": []}
        for line in lines:
            key, value = line["key"], line["value"]
            if key == "header":
                record["summary"], record["description"] = (
                    value.get("summary", ""),
                    value.get("description", ""),
                )
            elif key == "file":
                record["files"][value["path"]] = base64.b64decode(value["content"])
            elif key == "lfsFile":
                if value["oid"] not in self.fake.lfs:
                    return self._error(
                        400, "", f"LFS object {value['oid']} of {value['path']} was never uploaded"
                    )
                record["files"][value["path"]] = self.fake.lfs[value["oid"]]
            elif key == "deletedFile":
                record["deleted"].append(value["path"])
        for path in record["deleted"]:
            repo.files.pop(path, None)
        repo.files.update(record["files"])
        self.fake.commits.append(record)
        sha = repo.sha
        self._send_json(
            {"commitUrl": f"{self.fake.url}/{repo_id}/commit/{sha}", "commitOid": sha, "success": True}
        )


def _lfs_suffixes() -> tuple[str, ...]:
    from tests.fakehub import LFS_PATTERNS

    return LFS_PATTERNS


def git_oid(data: bytes) -> str:
    """Git's id of a blob (what the hub calls a regular file's ``oid``)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


_ID = r"(?P<repo_id>[^/]+/[^/]+)"
ROUTES: list[tuple[str, Any]] = [
    (r"/api/repos/create", UploadRoutes.hf_create),
    (r"/api/validate-yaml", UploadRoutes.hf_validate_yaml),
    (rf"/api/(?P<kind>models|datasets)/{_ID}/preupload/(?P<rev>[^/]+)", UploadRoutes.hf_preupload),
    (rf"/api/(?P<kind>models|datasets)/{_ID}/commit/(?P<rev>[^/]+)", UploadRoutes.hf_commit),
    (rf"/{_ID}\.git/info/lfs/objects/batch", UploadRoutes.hf_lfs_batch),
    (rf"/lfs-upload/{_ID}/(?P<oid>[0-9a-f]{{64}})", UploadRoutes.hf_lfs_put),
]
