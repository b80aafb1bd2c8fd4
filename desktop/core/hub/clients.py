"""The two official hub clients behind one small interface: list, what is missing, fetch, local copy.

``huggingface_hub`` serves Hugging Face and any mirror of its API (the endpoint is passed to every
call); ``modelscope_hub`` serves ModelScope. Both are imported here only, when first needed.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urlsplit

from desktop.core.hub.sources import MODELSCOPE, Source, split_ref
from desktop.core.system.paths import file_sha256

PARTIAL_SUFFIX = ".finetune-studio.incomplete"  # the client's scan counts it as an incomplete file
RESUME_FROM = 8 * 2**20  # files from this size on resume across cancels and crashes
RETRIES = 5
"""Requests in a row that bring no byte of a file before its download gives up (the client's figure)."""


class DownloadCancelled(Exception):
    """The user pressed Cancel; what was downloaded stays in the cache and the next try resumes."""


@dataclass(frozen=True)
class RemoteFile:
    """A file of a hub repository and its size in bytes."""

    name: str
    size: int


class _Abort(BaseException):
    """Raised inside a client's progress hook on Cancel.

    A ``BaseException`` on purpose: the clients retry on ``Exception`` (ModelScope with a backoff of
    seconds), and Cancel must not be retried.
    """


def list_files(source: Source, repo_id: str, revision: str, dataset: bool, token: str | None):
    """The repository's files with their sizes, and the commit (or revision) they belong to."""

    if source.kind == MODELSCOPE:
        api = _ms_api(source, token)
        revision = revision or "master"
        infos = api.list_repo_files(repo_id, "dataset" if dataset else "model", revision=revision)
        return [RemoteFile(i.path, int(i.size or 0)) for i in infos if i.type != "tree"], revision
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError
    from huggingface_hub.hf_api import RepoFile

    # The same two requests snapshot_download makes: the revision's commit, then its file tree.
    api = HfApi(endpoint=source.endpoint, token=token or False)
    kind = "dataset" if dataset else "model"
    info = api.repo_info(repo_id, revision=revision or None, repo_type=kind)
    commit = info.sha or revision or "main"
    try:
        tree = api.list_repo_tree(repo_id, recursive=True, revision=commit, repo_type=kind)
        files = [RemoteFile(e.path, int(e.size or 0)) for e in tree if isinstance(e, RepoFile)]
    except HfHubHTTPError as exc:  # a hub without the tree API: the listing in the repository's info
        status = getattr(exc.response, "status_code", None)
        if status not in (404, 405, 501) or not info.siblings:
            raise
        files = [RemoteFile(s.rfilename, int(s.size or 0)) for s in info.siblings]
    return files, commit


def cache_root(source: Source, cache_dir: Path | None) -> Path:
    """The cache folder the files go to (for the free-space check)."""
    if cache_dir is not None:
        return cache_dir
    if source.kind == MODELSCOPE:
        return ms_cache()
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def ms_cache() -> Path:
    return Path(os.environ.get("MODELSCOPE_CACHE") or Path.home() / ".cache" / "modelscope").expanduser()


def missing(
    source: Source, repo_id: str, commit: str, files: list, dataset: bool, cache_dir: Path | None
) -> list:
    """The files of ``files`` that are not complete in the cache yet."""
    if source.kind == MODELSCOPE:
        folder = _ms_snapshot(repo_id, commit, dataset, cache_dir)
        return [
            f for f in files if not (folder / f.name).is_file() or (folder / f.name).stat().st_size != f.size
        ]
    from huggingface_hub import try_to_load_from_cache

    kind = "dataset" if dataset else None
    return [
        f
        for f in files
        if not isinstance(
            try_to_load_from_cache(repo_id, f.name, cache_dir=cache_dir, revision=commit, repo_type=kind), str
        )
    ]


def _ms_snapshot(repo_id: str, revision: str, dataset: bool, cache_dir: Path | None) -> Path:
    owner, name = repo_id.split("/", 1)
    return (
        (cache_dir or ms_cache())
        / ("datasets" if dataset else "models")
        / f"{owner}--{name}"
        / "snapshots"
        / revision
    )


def fetch(
    source: Source,
    repo_id: str,
    commit: str,
    files: list,
    dataset: bool,
    meter: Any,
    token: str | None,
    cache_dir: Path | None,
) -> Path:
    """Download ``files`` (resuming partial ones) and return the snapshot folder."""
    try:
        if source.kind == MODELSCOPE:
            return _ms_fetch(source, repo_id, commit, files, dataset, meter, token, cache_dir)
        return _hf_fetch(source, repo_id, commit, files, dataset, meter, token, cache_dir)
    except _Abort:
        raise DownloadCancelled() from None


def _hf_fetch(source, repo_id, commit, files, dataset, meter, token, cache_dir) -> Path:
    from tqdm.auto import tqdm

    class Bar(tqdm):  # the client's per-file progress bar, reporting to the meter
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)
            meter.skip(int(kwargs.get("initial") or 0))  # the start of a partial file, already here

        def update(self, n: float | None = 1) -> bool | None:
            self._report(int(n or 0))
            return None

        @staticmethod
        def _report(n: int) -> None:
            try:
                meter.add(n)
            except Exception as exc:  # DownloadCancelled
                raise _Abort() from exc

    from huggingface_hub import constants

    # The client writes and reports in chunks of this size (10 MB): a 4.5 MB file showed 0 bytes until
    # it had all arrived. 1 MB chunks show the bytes as they come, at no measurable cost in speed.
    constants.DOWNLOAD_CHUNK_SIZE = min(constants.DOWNLOAD_CHUNK_SIZE, 1 << 20)
    kind = "dataset" if dataset else "model"
    sizes = {f.name: f.size for f in files}
    paths = _parallel(
        lambda name: _hf_one(source, repo_id, kind, commit, name, token, cache_dir, Bar, sizes[name]),
        [f.name for f in files],
    )
    if not files:
        raise FileNotFoundError(f"{repo_id} has no files to download")
    snapshot = Path(paths[files[0].name])
    for _ in Path(files[0].name).parts:
        snapshot = snapshot.parent
    _hf_write_ref(snapshot, commit)
    return snapshot


def _hf_one(
    source: Source,
    repo_id: str,
    kind: str,
    commit: str,
    name: str,
    token: str | None,
    cache_dir: Path | None,
    bar: type,
    size: int = 0,
) -> str:
    """One file into Hugging Face's cache, resumable across cancels and crashes.

    ``huggingface_hub`` resumes a dropped connection within one call but starts a file over on the
    next call. So a plain-HTTP file is first fetched (:func:`_hf_stream`) into
    ``blobs/<etag>.finetune-studio.incomplete`` (a name of our own, so another tool's partial file is
    never resumed or removed; the client's cache scan counts it as an incomplete file),
    continuing from what is there; when complete and checked as the client checks it (the size the hub
    announced), it becomes the blob, and ``hf_hub_download`` links it into the snapshot as usual.
    Files stored with Xet go straight to ``hf_hub_download`` (Xet keeps its own chunk cache), and so do
    small files (under :data:`RESUME_FROM`): starting them over costs less than a request more.
    """
    from filelock import FileLock
    from huggingface_hub import constants, get_hf_file_metadata, hf_hub_download, hf_hub_url
    from huggingface_hub.utils import build_hf_headers

    def place() -> str:
        return hf_hub_download(
            repo_id,
            name,
            repo_type=kind if kind == "dataset" else None,
            revision=commit,
            endpoint=source.endpoint,
            token=token or False,
            cache_dir=cache_dir,
            tqdm_class=bar,
        )

    storage = hf_repo_folder(Path(cache_dir or constants.HF_HUB_CACHE), repo_id, kind)
    if 0 < size < RESUME_FROM:
        try:
            return _checked(place, storage, name)
        except DamagedDownload as exc:
            if exc.cached:
                raise
            return _checked(place, storage, name)  # removed: fetched once more; a second failure is said
    url = hf_hub_url(repo_id, name, repo_type=kind, revision=commit, endpoint=source.endpoint)
    meta = get_hf_file_metadata(url, token=token or False, endpoint=source.endpoint)
    etag = (meta.etag or "").strip('"').removeprefix("W/").strip('"')
    blob = storage / "blobs" / etag
    if etag and meta.xet_file_data is None and not blob.exists() and meta.size:
        blob.parent.mkdir(parents=True, exist_ok=True)
        partial = blob.with_name(etag + PARTIAL_SUFFIX)  # our own name: only our partial files are touched
        locks = Path(cache_dir or constants.HF_HUB_CACHE) / ".locks" / storage.name
        locks.mkdir(parents=True, exist_ok=True)
        with FileLock(str(locks / f"{etag}.resume.lock")):
            for attempt in (1, 2):  # a file that arrives damaged is fetched once more, from its start
                with open(partial, "ab") as fh:
                    done = fh.tell()
                    if done < meta.size:
                        headers = build_hf_headers(token=token or False)
                        if not same_origin(url, meta.location):  # a signed CDN address: no token
                            headers.pop("authorization", None)
                        _hf_stream(meta.location, fh, meta.size, headers, bar, name)
                    elif done:
                        bar(total=meta.size, initial=done)  # complete already: count it
                if partial.stat().st_size != meta.size:
                    partial.unlink()
                    raise OSError(f"{name}: size mismatch, the partial file was discarded")
                if not is_sha256(etag) or file_sha256(partial) == etag:
                    break
                partial.unlink()  # never kept, never resumed: its bytes are wrong somewhere
                if attempt == 2:
                    raise DamagedDownload(name)
            partial.replace(blob)
    return place()


def _hf_stream(url: str, fh: BinaryIO, size: int, headers: dict[str, str], bar: type, name: str) -> None:
    """The rest of a file into ``fh`` (open to append), from its end to ``size`` bytes.

    A connection that fails or drops is asked again for what is missing, until :data:`RETRIES`
    requests in a row bring nothing. ``bar`` (a ``tqdm`` class) counts the bytes, as
    ``hf_hub_download``'s ``tqdm_class`` does, and raises from ``update`` on Cancel.
    """
    progress = bar(total=size, initial=fh.tell(), unit="B", unit_scale=True, desc=name)
    try:
        fruitless = 0
        while fh.tell() < size:
            done = fh.tell()
            dropped = _hf_get_rest(url, fh, headers, progress)
            fruitless = 0 if fh.tell() > done else fruitless + 1
            if fruitless >= RETRIES:
                if dropped is not None:
                    raise dropped
                raise OSError(f"{name}: the server sent {fh.tell()} of {size} bytes and then nothing")
            if dropped is not None:
                progress.update(0)  # a download cancelled meanwhile ends here, not in a new request
                time.sleep(1)
    finally:
        progress.close()


def _hf_get_rest(url: str, fh: BinaryIO, headers: dict[str, str], progress: Any) -> Exception | None:
    """One request for what ``fh`` lacks (HTTP ``Range``), through the client's public HTTP session
    (``huggingface_hub.get_session``: its proxies and certificates). Returns the error of a connection
    that failed or dropped (whatever the HTTP library raised), or None; a refusal (``HfHubHTTPError``)
    is raised. A server that ignores the range (200, the whole file) starts the file over."""
    from huggingface_hub import constants, get_session
    from huggingface_hub.utils import hf_raise_for_status

    done = fh.tell()
    asked = {**headers, "Range": f"bytes={done}-"} if done else headers
    with contextlib.ExitStack() as stack:
        try:
            response = stack.enter_context(
                get_session().stream("GET", url, headers=asked, timeout=constants.HF_HUB_DOWNLOAD_TIMEOUT)
            )
        except Exception as exc:  # raised by the HTTP library: no connection
            return exc
        hf_raise_for_status(response)
        if done and response.status_code != 206:
            fh.seek(0)
            fh.truncate()
            progress.update(-done)
        chunks = response.iter_bytes(constants.DOWNLOAD_CHUNK_SIZE)
        while True:
            try:
                chunk = next(chunks, b"")
            except Exception as exc:  # raised by the HTTP library: the connection dropped
                return exc
            if not chunk:
                return None
            progress.update(len(chunk))  # first: on Cancel the chunk is not written
            fh.write(chunk)


def same_origin(url: str, other: str) -> bool:
    """Whether two addresses are served by the same scheme, host and port (a token goes to no other)."""
    a, b = urlsplit(url), urlsplit(other)
    return (a.scheme, a.hostname, a.port) == (b.scheme, b.hostname, b.port)


def hf_repo_folder(cache: Path, repo_id: str, kind: str = "model") -> Path:
    """The folder of a repository in a Hugging Face cache, ``<cache>/models--owner--name`` (or
    ``datasets--``): the layout the client documents ("Manage huggingface_hub cache-system"), which
    ``try_to_load_from_cache`` and ``scan_cache_dir`` read; the client's own helper for it is not part
    of its public API."""
    return cache / "--".join([f"{kind}s", *repo_id.split("/")])


class DamagedDownload(OSError):
    """A file's bytes do not match the hub's sha256: downloaded twice so (and deleted), or found so in
    the cache where this download did not write it (``cached``: left where it is, at ``path``)."""

    def __init__(self, name: str, cached: Path | None = None) -> None:
        super().__init__(f"{name}: its bytes do not match the hub's sha256")
        self.name, self.cached = name, cached


def is_sha256(etag: str) -> bool:
    """Whether an ETag is a file's sha256, as the hub gives for files stored with Git LFS."""
    return len(etag) == 64 and all(c in "0123456789abcdef" for c in etag)


def _checked(place: Callable[[], str], storage: Path, name: str) -> str:
    """A small file the client places, checked against the sha256 its blob is named after (an LFS
    file's). A damaged blob this call wrote is removed with its link, so that it is never used and the
    next try fetches it; one that was in the cache before (another tool's, or an earlier download's) is
    never deleted by us: the error says where it is."""
    blobs = storage / "blobs"
    before = {p.name for p in blobs.iterdir()} if blobs.is_dir() else set()
    path = place()
    blob = Path(path).resolve()
    if not is_sha256(blob.name) or file_sha256(blob) == blob.name:
        return path
    if blob.name in before:
        raise DamagedDownload(name, cached=blob)
    blob.unlink(missing_ok=True)  # written by this call: ours to remove
    Path(path).unlink(missing_ok=True)  # its link in the snapshot, made by the same call
    raise DamagedDownload(name)


def _hf_write_ref(snapshot: Path, commit: str) -> None:
    """Point ``refs/main`` at the downloaded commit (the files were fetched by commit id), so that
    loading by name finds them in the cache without the network."""
    refs = snapshot.parent.parent / "refs"
    main = refs / "main"
    if snapshot.name == commit and (not main.is_file() or main.read_text().strip() != commit):
        from desktop.core.system.paths import atomic_write_text

        atomic_write_text(main, commit)


def _ms_fetch(source, repo_id, commit, files, dataset, meter, token, cache_dir) -> Path:
    from modelscope_hub import ProgressCallback

    class Callback(ProgressCallback):
        def update(self, size: int) -> None:
            try:
                meter.add(int(size), self.filename)
            except Exception as exc:  # DownloadCancelled
                raise _Abort() from exc

    api = _ms_api(source, token)
    folder = api.download_repo(
        repo_id,
        "dataset" if dataset else "model",
        revision=commit,
        cache_dir=cache_dir or ms_cache(),  # the client remembers the first cache it saw
        allow_patterns=[f.name for f in files],
        progress_callbacks=[Callback],
        max_workers=4,
    )
    return Path(folder)


def _parallel(function, names: list[str]) -> dict[str, str]:
    """``function`` of each name on up to 8 threads; the first failure is raised once the others end.

    Daemon threads, not a ``ThreadPoolExecutor``: the interpreter joins an executor's threads at exit,
    so a request stuck on a stalled connection held a cancelled download's program open until its read
    timeout (Ctrl-C printed "Download stopped" and nothing ended)."""
    pending = list(names)  # popped from the end: the biggest first
    results: dict[str, str] = {}
    failures: list[BaseException] = []
    lock = threading.Lock()

    def work() -> None:
        while True:
            with lock:
                if not pending or failures:
                    return
                name = pending.pop()
            try:
                value = function(name)
            except BaseException as exc:  # handed to the caller's thread
                with lock:
                    failures.append(exc)
                return
            with lock:
                results[name] = value

    workers = [
        threading.Thread(target=work, daemon=True, name="hub-download")
        for _ in range(min(8, max(1, len(names))))
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    if failures:
        raise failures[0]
    return results


def _ms_api(source: Source, token: str | None) -> Any:
    from modelscope_hub import HubApi

    return HubApi(endpoint=source.endpoint, token=token or None)


def hf_local(repo_id: str, revision: str = "", dataset: bool = False) -> Path | None:
    """The cached Hugging Face snapshot of ``repo_id`` with a config (a dataset: with any file)."""
    from huggingface_hub import try_to_load_from_cache

    if dataset:  # this repository's snapshot that ``refs/main`` names (no scan of the whole cache)
        from huggingface_hub import constants

        storage = hf_repo_folder(Path(constants.HF_HUB_CACHE), repo_id, "dataset")
        ref = storage / "refs" / (revision or "main")
        commit = ref.read_text(encoding="utf-8").strip() if ref.is_file() else revision
        folder = storage / "snapshots" / commit if commit else None
        return folder if folder is not None and folder.is_dir() and any(folder.iterdir()) else None
    found = try_to_load_from_cache(repo_id, "config.json", revision=revision or None)
    return Path(found).parent if isinstance(found, str) else None


def ms_local(repo_id: str, dataset: bool = False, revision: str = "") -> Path | None:
    """The ModelScope cache's copy of ``repo_id`` (a model with a config, or a dataset with any file)."""
    if "/" not in repo_id:
        return None
    folder = _ms_snapshot(repo_id, revision or "master", dataset, None)
    if dataset:
        return folder if folder.is_dir() and any(folder.iterdir()) else None
    return folder if (folder / "config.json").is_file() else None


def local_copy(ref: str, revision: str = "", dataset: bool = False) -> Path | None:
    """The folder of ``ref`` on this computer (Hugging Face or ModelScope cache) when it is complete."""
    forced, repo_id = split_ref(ref)
    with contextlib.suppress(Exception):
        if forced != MODELSCOPE:
            found = hf_local(repo_id, revision, dataset)
            if found is not None:
                return found
        return ms_local(repo_id, dataset)
    return None
