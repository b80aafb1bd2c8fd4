"""Publishing files to a hub repository: the token checked first, the repository made or checked, then
one commit, with progress, Cancel, and large files never sent twice.

Hugging Face (and any mirror of its API that takes uploads) goes through ``huggingface_hub``'s commit
API over HTTP: every large file is sent (``preupload_lfs_files``) before the one commit that names them
all (``create_commit``), so a cancelled or failed push leaves the repository as it was, and the next
push is told by the hub which large files it holds already and sends only the rest. The files are
handed over as open files, which is what keeps the upload on HTTP rather than ``hf_xet``: our reader
counts the bytes (progress) and stops at Cancel, neither of which ``hf_xet`` lets a caller do
(docs/decisions/015). ModelScope goes through its own client (``modelscope_hub``).
"""

from __future__ import annotations

import io
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.core.hub.downloads import SPEED_WINDOW_S, Progress
from desktop.core.hub.pushed import KEPT_FILES, Pushed, UploadCancelled, holds_other_files
from desktop.core.hub.sources import HF_URL, MODELSCOPE, Source
from desktop.core.hub.sources import token as saved_token
from desktop.core.system.errors import InputError, ModelError, StudioError, human_size
from desktop.core.system.messages import msg

log = logging.getLogger(__name__)

HF_TOKENS_PAGE = "https://huggingface.co/settings/tokens"
OnProgress = Callable[[str, Progress], None]
"""Told the stage (``check``: reading the files to hash them; ``send``: uploading) and where it stands."""


class _OurChoice(logging.Filter):
    """Drops the client's warning that open files go over HTTP rather than Xet: that is our choice."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "binary IO buffer" not in record.getMessage()


logging.getLogger("huggingface_hub._commit_api").addFilter(_OurChoice())


class _Abort(BaseException):
    """Raised inside a read on Cancel: a ``BaseException``, so the clients' retries do not retry it."""


class _Meter:
    """Bytes read of each file, the speed over the last seconds, and the Cancel check."""

    def __init__(
        self, stage: str, total: int, on_progress: OnProgress | None, cancel: threading.Event | None
    ):
        self.stage, self.total, self.on_progress, self.cancel = stage, total, on_progress, cancel
        self.reached: dict[str, int] = {}  # file -> the furthest byte read (a retry reads again)
        self._lock = threading.Lock()
        self._window: list[tuple[float, int]] = [(time.monotonic(), 0)]
        self._last, self._file = 0.0, ""

    @property
    def done(self) -> int:
        return sum(self.reached.values())

    def skip(self, name: str, size: int) -> None:
        """A file the hub held already: done, and no part of the speed."""
        with self._lock:
            added = size - self.reached.get(name, 0)
            self.reached[name] = size
            self._window = [(t, done + added) for t, done in self._window]
        self.at(name, size, force=True)

    def check(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise _Abort()

    def at(self, name: str, position: int, force: bool = False) -> None:
        with self._lock:
            self.reached[name] = max(self.reached.get(name, 0), position)
            now = time.monotonic()
            if not force and now - self._last < 0.1 and name == self._file:
                return  # a new file is always told: "now sending X"
            self._last, self._file = now, name
            done = self.done
            self._window = [w for w in self._window if now - w[0] <= SPEED_WINDOW_S] + [(now, done)]
            first = self._window[0]
            speed = (done - first[1]) / (now - first[0]) if now - first[0] >= 1.0 else 0.0
            progress = Progress(min(done, self.total), self.total, speed, name)
        if self.on_progress is not None:
            self.on_progress(self.stage, progress)


class _Watched(io.BufferedReader):
    """A file opened for reading that tells a meter how far it has been read and stops at Cancel."""

    def __init__(self, path: Path, name: str) -> None:
        super().__init__(io.FileIO(path, "rb"), buffer_size=2**20)
        self.name_in_repo = name
        self.meter: _Meter | None = None

    def read(self, size: int | None = -1) -> bytes:
        if self.meter is not None:
            self.meter.check()
        data = super().read(size)
        if self.meter is not None:
            self.meter.at(self.name_in_repo, self.tell())
        return data


def push_files(
    source: Source,
    repo_id: str,
    files: dict[str, Path],
    message: str,
    description: str = "",
    private: bool = True,
    replace: bool = False,
    token: str | None = None,
    on_progress: OnProgress | None = None,
    cancel: threading.Event | None = None,
) -> Pushed:
    """Upload ``files`` (name in the repository -> local file) to ``repo_id`` in one commit.

    Args:
        source: Where to: Hugging Face (or a mirror, which must take uploads) or ModelScope.
        repo_id: ``owner/name``, or ``name`` for the token's own account.
        message: The commit's message.
        description: The commit's longer description.
        private: Make a new repository private (an existing one keeps its visibility).
        replace: Let the commit replace a repository that already holds other files: ours are written
            and the rest deleted. Without it such a repository is refused and nothing is sent.
        token: The token; by default the saved one (``HF_TOKEN`` / ``MODELSCOPE_API_TOKEN`` first).

    Raises:
        InputError: No token, a read-only or refused token, a mirror that takes no uploads, a
            repository that holds other files (without ``replace``), or one this token may not write.
        ModelError: The hub could not be reached or refused the upload.
        UploadCancelled: Cancel was pressed; the repository is as it was.
    """
    if source.kind == MODELSCOPE:
        from desktop.core.hub.uploads_modelscope import push_to_modelscope

        return push_to_modelscope(
            source, repo_id, files, message, description, private, replace, token, on_progress, cancel
        )
    token = _token(token)
    from huggingface_hub import HfApi

    api = HfApi(endpoint=source.endpoint, token=token)
    sending = False  # before anything is sent, a failure is the hub not answering, not an upload stopped
    try:
        user = _writer(api, source)
        repo_id = repo_id if "/" in repo_id else f"{user}/{repo_id}"
        repository = _repository(api, source, repo_id, set(files), private, replace)
        sending = True
        return _commit(api, source, repo_id, files, message, description, repository, on_progress, cancel)
    except _Abort:
        raise UploadCancelled(
            msg("Publishing cancelled; the repository was not changed."),
            msg("Publish again to go on: large files the hub already received are not sent again."),
        ) from None
    except StudioError:
        raise
    except Exception as exc:
        raise _in_our_words(exc, source, repo_id, sending) from exc


def push_source(to: str = "hf", endpoint: str = "") -> Source:
    """Where a push goes: ModelScope (``to="modelscope"``), or Hugging Face's API at ``endpoint``, else
    where the settings say (``HF_ENDPOINT``, or the mirror when the user chose one: a mirror that takes
    no uploads is named then). Auto's pick is for downloads; a push under Auto goes to Hugging Face."""
    import os

    from desktop.core.hub.sources import HUGGING_FACE, MIRROR, load_settings, resolve

    if to == "modelscope":
        return resolve(MODELSCOPE, endpoint)
    if endpoint:
        return resolve(HUGGING_FACE, endpoint)
    chosen = os.environ.get("FINETUNE_STUDIO_SOURCE") or load_settings().source
    return resolve(MIRROR if chosen == MIRROR else HUGGING_FACE)


def who_may_write(source: Source, token: str | None = None) -> str:
    """The account the saved token (or ``token``) belongs to, once it is known that it may write there.

    Raises:
        InputError: No token, a refused or read-only one, or a mirror that takes no uploads.
        ModelError: The hub could not be reached.
    """
    if source.kind == MODELSCOPE:
        from desktop.core.hub.uploads_modelscope import modelscope_user

        return modelscope_user(source, token)
    from huggingface_hub import HfApi

    api = HfApi(endpoint=source.endpoint, token=_token(token))
    try:
        return _writer(api, source)
    except StudioError:
        raise
    except Exception as exc:
        raise _in_our_words(exc, source, "") from exc


def _token(token: str | None) -> str:
    token = token or saved_token("huggingface")
    if not token:
        raise InputError(
            msg("Publishing needs a Hugging Face token, and none is saved."),
            msg(
                "Make one with the Write role at {page} and add it in Settings > Model sources "
                "(or set HF_TOKEN).",
                page=HF_TOKENS_PAGE,
            ),
        )
    return token


def _writer(api: Any, source: Source) -> str:
    """The token's user name, once the token is known to be one that may write."""
    from huggingface_hub.errors import HfHubHTTPError

    try:
        who = api.whoami()
    except HfHubHTTPError as exc:
        status = getattr(exc.response, "status_code", None)
        if status == 401:
            raise InputError(
                msg(
                    "{source} refused the saved Hugging Face token (it may be mistyped or deleted).",
                    source=source.label,
                ),
                msg(
                    "Make a new one with the Write role at {page} and save it in Settings > Model sources.",
                    page=HF_TOKENS_PAGE,
                ),
            ) from None
        raise _no_uploads(source) from None
    except ValueError:  # an answer that is not JSON: a web page, not the hub's API
        raise _no_uploads(source) from None
    if not isinstance(who, dict) or "name" not in who:
        raise _no_uploads(source)
    role = ((who.get("auth") or {}).get("accessToken") or {}).get("role", "")
    if role == "read":
        raise InputError(
            msg(
                "The saved Hugging Face token of {user} may only read; publishing needs one that may write.",
                user=who["name"],
            ),
            msg(
                "Make a token with the Write role at {page} and save it in Settings > Model sources.",
                page=HF_TOKENS_PAGE,
            ),
        )
    return str(who["name"])


def _no_uploads(source: Source) -> InputError:
    """A mirror that answers downloads only."""
    if source.endpoint == HF_URL:
        return ModelError(
            msg("Hugging Face did not answer the question of who the token is."),
            msg("Try again in a while."),
        )
    return InputError(
        msg("{source} does not take uploads: it only mirrors downloads.", source=source.label),
        msg(
            "Publish to Hugging Face itself: choose Hugging Face in Settings > Model sources "
            "(command line: --endpoint {url}).",
            url=HF_URL,
        ),
    )


@dataclass(frozen=True)
class _Repository:
    created: bool
    private: bool
    deletions: list[str]
    blobs: dict[str, str]  # a file the repository holds -> its git blob id (unchanged small files stay)


def _repository(
    api: Any, source: Source, repo_id: str, ours: set[str], private: bool, replace: bool
) -> _Repository:
    """Make the repository, or check what the existing one holds."""
    from huggingface_hub.errors import RepositoryNotFoundError
    from huggingface_hub.hf_api import RepoFile

    try:
        info = api.repo_info(repo_id, repo_type="model")
    except RepositoryNotFoundError:
        api.create_repo(repo_id, repo_type="model", private=private, exist_ok=True)
        return _Repository(True, private, [], {})
    tree = [
        e for e in api.list_repo_tree(repo_id, recursive=True, repo_type="model") if isinstance(e, RepoFile)
    ]
    held = [e.path for e in tree if e.path not in KEPT_FILES]
    if held and not replace:
        raise holds_other_files(repo_id, held)
    blobs = {e.path: str(e.blob_id) for e in tree if e.blob_id}
    return _Repository(False, bool(getattr(info, "private", False)), sorted(set(held) - ours), blobs)


def _git_blob_id(path: Path) -> str:
    """Git's id of a file's contents (what the hub calls a regular file's ``blob_id``)."""
    import hashlib

    data = path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _commit(
    api: Any,
    source: Source,
    repo_id: str,
    files: dict[str, Path],
    message: str,
    description: str,
    repository: _Repository,
    on_progress: OnProgress | None,
    cancel: threading.Event | None,
) -> Pushed:
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    sizes = {name: path.stat().st_size for name, path in files.items()}
    total = sum(sizes.values())
    opened: list[_Watched] = []
    try:
        checking = _Meter("check", total, on_progress, cancel)
        operations = []
        for name, path in files.items():
            watched = _Watched(path, name)
            opened.append(watched)
            watched.meter = checking
            checking.check()
            operations.append(CommitOperationAdd(path_in_repo=name, path_or_fileobj=watched))
            checking.at(name, sizes[name], force=True)
        sending = _Meter("send", total, on_progress, cancel)
        for watched in opened:
            watched.meter = sending
        credited: dict[str, int] = {}
        for operation, watched in zip(operations, opened, strict=True):
            sending.check()
            api.preupload_lfs_files(repo_id, additions=[operation], repo_type="model", num_threads=1)
            name = watched.name_in_repo
            credited[name] = sending.reached.get(name, 0)
            sending.skip(name, sizes[name])  # sent, held by the hub already, or going in the commit
        sending.check()
        committing = _Meter("commit", total, None, None)  # small files go inside the commit itself
        for watched in opened:
            watched.meter = committing
        removals = [CommitOperationDelete(path_in_repo=name) for name in repository.deletions]
        info = api.create_commit(
            repo_id,
            operations=[*operations, *removals],
            commit_message=message,
            commit_description=description,
            repo_type="model",
        )
    finally:
        for watched in opened:
            watched.close()
    # A large file never read to be sent, and a small one the same as the hub's, were there already (the
    # client reads a small file to compare it, then leaves an unchanged one out of the commit).
    read = committing.reached
    same = {n for n in read if n in repository.blobs and _git_blob_id(files[n]) == repository.blobs[n]}
    small = {n: size for n, size in committing.reached.items() if n not in same}
    kept = [n for n, size in sizes.items() if size and not credited.get(n) and not small.get(n)]
    sent = sum(credited.values()) + sum(small.values())
    log.info("pushed %s: %d files, %s sent", repo_id, len(files), human_size(sent))
    return Pushed(
        url=source.model_page(repo_id),
        commit_url=str(getattr(info, "commit_url", "") or ""),
        files=len(files),
        sent=sent,
        kept=len(kept),
        kept_bytes=sum(sizes[n] for n in kept),
        created=repository.created,
        private=repository.private,
    )


def _in_our_words(exc: BaseException, source: Source, repo_id: str, sending: bool = False) -> StudioError:
    """A client's exception (or the HTTP error under it) as one sentence (``sending``: files were on
    their way; before that, the hub did not answer)."""
    from huggingface_hub.errors import HfHubHTTPError

    from desktop.core.hub.access import network_words
    from desktop.core.system.errors import exception_chain

    http = next((e for e in exception_chain(exc) if isinstance(e, HfHubHTTPError)), None)
    status = getattr(getattr(http, "response", None), "status_code", None)
    if status == 403:
        return InputError(
            msg("{source} does not let this token write to {repo}.", source=source.label, repo=repo_id),
            msg(
                "Publish under your own account or an organization you may write to, or use a token that "
                "may write there."
            ),
        )
    again = msg("Publish again: large files the hub already received are not sent again.")
    if http is not None:
        server = getattr(http, "server_message", "") or str(http)
        reason = server.strip().splitlines()[0][:300] if server.strip() else str(status)
        return ModelError(
            msg(
                "{source} refused the upload to {repo}: {reason}",
                source=source.label,
                repo=repo_id,
                reason=reason,
            ),
            again,
        )
    host = source.endpoint.split("://", 1)[-1]
    innermost = list(exception_chain(exc))[-1]
    problem = network_words(str(innermost) or type(innermost).__name__, host)
    if not sending:
        return ModelError(
            msg("{source} could not be reached: {problem}.", source=source.label, problem=problem),
            msg("Check the network, then publish again; nothing was sent."),
        )
    return ModelError(
        msg(
            "The upload to {source} stopped: {problem}.",
            source=source.label,
            problem=problem,
        ),
        again,
    )
