"""Downloading a model or dataset as its own step: only the files needed, progress, cancel, resume.

Files go through the official clients (``huggingface_hub`` for Hugging Face and its mirrors,
``modelscope_hub`` for ModelScope) into their standard caches, where other tools find them too. The
clients check integrity (sizes and ETags / SHA-256) and resume a partial file (``.incomplete``) with an
HTTP ``Range`` request, so a cancel, a crash or a dropped connection costs only what was not yet
written. Progress comes back through the clients' own progress hooks; Cancel is raised from inside
them, between two chunks.
"""

from __future__ import annotations

import contextlib
import fnmatch
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.core.hub.clients import DownloadCancelled, RemoteFile
from desktop.core.hub.sources import MODELSCOPE, Source, offline, split_ref, token
from desktop.core.system.errors import DiskInputError, ModelError, free_mb, human_size
from desktop.core.system.messages import msg

SPACE_MARGIN = 1.05  # ask for 5 % more free space than the files take
_MODEL_FILES = (
    "config.json",
    "generation_config.json",
    "tokenizer*.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.*",
    "merges.txt",
    "*.model",
    "chat_template.*",
    "preprocessor_config.json",
    "README.md",
    "LICENSE*",
    "*.tiktoken",
    "spiece.model",
    "sentencepiece.bpe.model",
)
_DATA_FILES = ("*.csv", "*.tsv", "*.json", "*.jsonl", "*.parquet", "*.txt", "*.arrow", "*.xlsx", "README.md")


@dataclass(frozen=True)
class Progress:
    """Where a download stands."""

    done: int
    total: int
    speed: float  # bytes per second over the last seconds
    file: str = ""

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 0.0

    @property
    def eta_s(self) -> float | None:
        """Seconds left at the current speed (``None`` while unknown)."""
        if self.speed <= 0 or not self.total:
            return None
        return max(0.0, (self.total - self.done) / self.speed)


def needed_files(files: list[RemoteFile], dataset: bool = False) -> list[RemoteFile]:
    """The files a fine-tune needs: config, tokenizer and ``*.safetensors`` weights (``.bin`` only when
    there are no safetensors); never ONNX, GGUF, TensorFlow, Flax or files in sub-folders of a model."""
    if dataset:
        keep = [f for f in files if _matches(f.name.rsplit("/", 1)[-1], _DATA_FILES)]
        return keep or files
    top = [f for f in files if "/" not in f.name]
    safetensors = [
        f for f in top if f.name.endswith(".safetensors") or f.name == "model.safetensors.index.json"
    ]
    weights = safetensors or [
        f
        for f in top
        if fnmatch.fnmatch(f.name, "pytorch_model*.bin") or f.name == "pytorch_model.bin.index.json"
    ]
    others = [f for f in top if _matches(f.name, _MODEL_FILES) and f not in weights and "onnx" not in f.name]
    return sorted(others + weights, key=lambda f: f.size)


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatch(name, p) for p in patterns)


SPEED_WINDOW_S = 5.0
"""The speed is the bytes of the last seconds over their time: steady, and quick to follow a change."""


class _Meter:
    """Bytes done across all files of one download, the speed, and the cancel check."""

    def __init__(
        self, total: int, on_progress: Callable[[Progress], None] | None, cancel: threading.Event | None
    ):
        self.total, self.done, self.on_progress, self.cancel = total, 0, on_progress, cancel
        self._lock = threading.Lock()
        self._window: list[tuple[float, int]] = [(time.monotonic(), 0)]
        self._last_report = 0.0
        self.file = ""

    def skip(self, n: int) -> None:
        """Bytes already on this computer (whole files, the start of a partial one): done, and no part
        of the speed (counted as arriving, they made it read "50 GB/s")."""
        with self._lock:
            self.done += n
            now = time.monotonic()
            self._window = [(t, done + n) for t, done in self._window] or [(now, self.done)]

    def add(self, n: int, file: str = "") -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise DownloadCancelled()
        with self._lock:
            self.done += n
            self.file = file or self.file
            now = time.monotonic()
            if now - self._last_report < 0.1 and self.done < self.total:
                return
            self._last_report = now
            self._window.append((now, self.done))
            self._window = [w for w in self._window if now - w[0] <= SPEED_WINDOW_S] or [(now, self.done)]
            first = self._window[0]
            # Unknown until a second has passed: the first chunk in a few milliseconds is no speed.
            speed = (self.done - first[1]) / (now - first[0]) if now - first[0] >= 1.0 else 0.0
            progress = Progress(min(self.done, self.total), self.total, speed, self.file)
        if self.on_progress is not None:
            self.on_progress(progress)

    def finish(self) -> None:
        if self.on_progress is not None:
            self.on_progress(Progress(self.total, self.total, 0.0, ""))


def download(
    ref: str,
    source: Source,
    *,
    revision: str = "",
    dataset: bool = False,
    on_progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
    cache_dir: Path | None = None,
) -> Path:
    """Download what a fine-tune needs of ``ref`` and return its local folder.

    ``ref`` is a repository id, or ``modelscope:owner/name`` (always from ModelScope).

    Raises:
        DownloadCancelled: ``cancel`` was set; call again to resume.
        ModelError: Not found, gated (the message names the page where the license is accepted), the
            source does not answer, or the network is switched off.
        DiskInputError: Not enough free space in the cache for the files still missing.
    """
    forced, repo_id = split_ref(ref)
    if forced == MODELSCOPE and source.kind != MODELSCOPE:
        from desktop.core.hub.sources import candidates

        source = candidates()[MODELSCOPE]
    if offline():
        raise ModelError(
            msg("{name} cannot be downloaded: the network is switched off (HF_HUB_OFFLINE).", name=repo_id),
            msg("Unset HF_HUB_OFFLINE, or pick a model that is already on this computer."),
        )
    from desktop.core.hub.access import fail_fast, translate

    fail_fast(source, repo_id)
    from desktop.core.hub import clients as clients

    others = partial_files(repo_id, source, dataset, cache_dir)  # not this download's: never deleted
    try:
        files, commit = clients.list_files(source, repo_id, revision, dataset, token(source.kind))
        chosen = needed_files(files, dataset)
        missing = clients.missing(source, repo_id, commit, chosen, dataset, cache_dir)
        _check_space(clients.cache_root(source, cache_dir), sum(f.size for f in missing))
        stop = threading.Event()  # the caller's cancel, or Ctrl-C here
        meter = _Meter(sum(f.size for f in chosen), on_progress, stop)
        meter.skip(sum(f.size for f in chosen) - sum(f.size for f in missing))
        folder = _fetch_until_cancelled(
            lambda: clients.fetch(
                source, repo_id, commit, chosen, dataset, meter, token(source.kind), cache_dir
            ),
            cancel,
            stop,
        )
    except KeyboardInterrupt:
        forget_empty_partials(repo_id, source, dataset, cache_dir, keep=others)
        raise
    except (DiskInputError, ModelError):
        raise
    except Exception as exc:
        cancelled = next((e for e in _chain(exc) if isinstance(e, DownloadCancelled)), None)
        if cancelled is not None:
            forget_empty_partials(repo_id, source, dataset, cache_dir, keep=others)
            raise cancelled from None
        raise translate(exc, source, repo_id, dataset) from exc
    meter.finish()
    return folder


def partial_files(
    repo_id: str, source: Source, dataset: bool = False, cache_dir: Path | None = None
) -> set[Path]:
    """The partial files (``.incomplete``) of ``repo_id`` in the Hugging Face cache now."""
    from desktop.core.hub import clients

    cache = clients.cache_root(source, cache_dir)
    folder = cache / (("datasets--" if dataset else "models--") + repo_id.replace("/", "--")) / "blobs"
    return set(folder.glob("*.incomplete")) if folder.is_dir() else set()


def forget_empty_partials(
    repo_id: str,
    source: Source,
    dataset: bool = False,
    cache_dir: Path | None = None,
    keep: Collection[Path] = (),
) -> None:
    """A cancelled download's partial files that hold nothing yet (the client writes in chunks of
    megabytes): an empty ``.incomplete`` is no progress to resume, and looks like some.

    The cache is shared with other programs: only files that were not there before this download
    began (``keep``: :func:`partial_files` then) are ours to delete."""
    for partial in partial_files(repo_id, source, dataset, cache_dir) - set(keep):
        with contextlib.suppress(OSError):
            if partial.stat().st_size == 0:
                partial.unlink()


CANCEL_GRACE_S = 1.5
"""How long a cancelled download may take to stop at its next chunk before it is left to stop alone."""


def _fetch_until_cancelled(
    fetch: Callable[[], Path], cancel: threading.Event | None, stop: threading.Event
) -> Path:
    """Run ``fetch`` on a thread of its own and return within two seconds of a cancel or Ctrl-C.

    The client checks for a cancel between chunks; a connection that sends nothing (a stalled server,
    a network gone quiet) would hold it until its read timeout. The thread is then left to stop at its
    next chunk or timeout: what arrived stays in the partial file, and the next download resumes it.
    """
    outcome: dict[str, Any] = {}
    ended = threading.Event()  # not Thread.join: Ctrl-C in a join makes is_alive() False (CPython < 3.13)

    def work() -> None:
        try:
            outcome["folder"] = fetch()
        except BaseException as exc:  # handed to the caller's thread
            outcome["error"] = exc
        finally:
            ended.set()

    threading.Thread(target=work, name="download", daemon=True).start()
    try:
        while not ended.wait(0.1):
            if cancel is not None and cancel.is_set():
                stop.set()
                if not ended.wait(CANCEL_GRACE_S):
                    raise DownloadCancelled()
    except KeyboardInterrupt:
        stop.set()  # the thread stops at its next chunk; the caller says what happened
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["folder"]


def _chain(exc: BaseException):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def _check_space(folder: Path, needed: int) -> None:
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    free = free_mb(probe)
    if free is None or needed == 0:
        return
    if free * 2**20 < needed * SPACE_MARGIN:
        raise DiskInputError(
            msg(
                "The download needs {needed} and {folder} has {free} free.",
                needed=human_size(needed),
                folder=str(probe),
                free=human_size(free * 2**20),
            ),
            msg(
                "Free some space there, delete models you no longer need (Browse > On this computer), or set "
                "HF_HOME / MODELSCOPE_CACHE to a bigger disk."
            ),
        )
