"""Finding models: hub search (Hugging Face or a mirror, ModelScope), and what is on this computer.

Every figure comes from the hub's metadata (downloads, likes, date, license, gated, the safetensors
parameter counts); nothing is downloaded to describe a model.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.core.hub.sources import MODELSCOPE, MODELSCOPE_PREFIX, Source, token
from desktop.core.system.messages import msg
from desktop.core.system.paths import folder_size

# Our tasks -> the hub's pipeline tags worth searching (base encoders are "fill-mask").
HF_TASKS = {
    "classification": ("text-classification", "fill-mask"),
    "causal-lm": ("text-generation",),
    "seq2seq": ("text2text-generation", "translation", "summarization"),
    "preference": ("text-generation",),
    "grpo": ("text-generation",),
    "image-classification": ("image-classification", "image-feature-extraction"),
    "vision-chat": ("image-text-to-text",),
}
DTYPE_BYTES = {
    "F64": 8,
    "F32": 4,
    "BF16": 2,
    "F16": 2,
    "I64": 8,
    "I32": 4,
    "I16": 2,
    "I8": 1,
    "U8": 1,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    "BOOL": 1,
}
SORTS = ("downloads", "likes")
RUN = "run"
"""The source of a model a finished run of this app saved in its run folder (never deleted here)."""


@dataclass(frozen=True)
class ModelHit:
    """One model as the browser lists it; ``None`` where the hub does not say."""

    ref: str  # what goes into the config: an id, or modelscope:id
    repo_id: str
    source: str  # huggingface / mirror / modelscope / local / run
    downloads: int | None = None
    likes: int | None = None
    updated: str = ""  # YYYY-MM-DD
    parameters: int | None = None
    size_bytes: int | None = None
    license: str = ""
    gated: bool = False
    task: str = ""
    path: str = ""  # on this computer
    disk_bytes: int | None = None  # on this computer: every file, what deleting it frees
    languages: str = ""  # the catalogue's, e.g. "zh, en"
    note: str = ""  # the catalogue's one line about the model


def search(
    source: Source, query: str, task: str = "", sort: str = "downloads", limit: int = 30
) -> list[ModelHit]:
    """Models on ``source`` whose id matches ``query``, for ``task`` (one of ours, or all), most
    downloaded (or liked) first.

    Raises:
        ModelError: The source does not answer (within seconds), or answered with an error.
    """
    from desktop.core.hub.access import fail_fast, translate

    fail_fast(source, repr(query), searching=True)
    try:
        hits = (
            _ms_search(source, query, task, limit)
            if source.kind == MODELSCOPE
            else _hf_search(source, query, task, sort, limit)
        )
    except Exception as exc:
        raise translate(exc, source, query) from exc
    key = (lambda h: h.likes or 0) if sort == "likes" else (lambda h: h.downloads or 0)
    return sorted(hits, key=key, reverse=True)[:limit]


def _hf_search(source: Source, query: str, task: str, sort: str, limit: int) -> list[ModelHit]:
    from huggingface_hub import HfApi

    api = HfApi(endpoint=source.endpoint, token=token(source.kind) or False)
    expand = [
        "downloads",
        "likes",
        "lastModified",
        "safetensors",
        "gated",
        "cardData",
        "pipeline_tag",
        "tags",
    ]
    seen: dict[str, ModelHit] = {}
    for tag in HF_TASKS.get(task, (None,)):
        for info in api.list_models(
            search=query or None,
            pipeline_tag=tag,
            filter="transformers",
            sort=sort if sort in SORTS else "downloads",
            limit=limit,
            expand=expand,
        ):
            if info.id not in seen:
                seen[info.id] = _hf_hit(info, source)
    return list(seen.values())


def _hf_hit(info: Any, source: Source) -> ModelHit:
    params = size = None
    safetensors = getattr(info, "safetensors", None)
    if safetensors is not None:
        params = int(getattr(safetensors, "total", 0) or 0) or None
        by_dtype = getattr(safetensors, "parameters", None) or {}
        size = sum(int(n) * DTYPE_BYTES.get(str(d).upper(), 4) for d, n in by_dtype.items()) or None
    card = getattr(info, "card_data", None) or getattr(info, "cardData", None) or {}
    license_ = (card.get("license") if isinstance(card, dict) else getattr(card, "license", None)) or ""
    if not license_:
        license_ = next((t.removeprefix("license:") for t in info.tags or [] if t.startswith("license:")), "")
    updated = getattr(info, "last_modified", None) or getattr(info, "lastModified", None)
    return ModelHit(
        ref=info.id,
        repo_id=info.id,
        source=source.name,
        downloads=info.downloads,
        likes=info.likes,
        updated=str(updated)[:10] if updated else "",
        parameters=params,
        size_bytes=size,
        license=str(license_),
        gated=bool(info.gated),
        task=info.pipeline_tag or "",
    )


def _ms_search(source: Source, query: str, task: str, limit: int) -> list[ModelHit]:
    from modelscope_hub import HubApi

    api = HubApi(endpoint=source.endpoint, token=token(MODELSCOPE) or None)
    hits: dict[str, ModelHit] = {}
    for tag in HF_TASKS.get(task, (None,)):
        page = api.list_repos("model", search=query or None, page_size=min(limit, 50), task=tag)
        for repo in page.items:
            if repo.id in hits:
                continue
            updated = repo.last_modified.date().isoformat() if repo.last_modified else ""
            hits[repo.id] = ModelHit(
                ref=MODELSCOPE_PREFIX + repo.id,
                repo_id=repo.id,
                source=MODELSCOPE,
                downloads=repo.downloads,
                likes=repo.likes,
                updated=updated,
                size_bytes=repo.file_size or None,
                license=repo.license or "",
                gated=bool(repo.gated),
                task=(repo.tasks or [""])[0] if isinstance(repo.tasks, list) else "",
            )
    return list(hits.values())


def weights_info(ref: str, source: Source) -> tuple[int | None, int | None]:
    """Parameters and bytes of a hub model's ``*.safetensors`` weights: the sizes from the file listing,
    the parameters from each file's header (its first bytes, read with HTTP Range requests and never
    more, even from a server that ignores Range). ``(None, None)`` when it has no safetensors."""
    from desktop.core.hub.clients import list_files
    from desktop.core.hub.sources import candidates, split_ref

    forced, repo_id = split_ref(ref)
    if forced == MODELSCOPE:
        source = candidates()[MODELSCOPE]
    secret = token(source.kind)
    files, revision = list_files(source, repo_id, "", False, secret)
    weights = [f for f in files if f.name.endswith(".safetensors") and "/" not in f.name]
    if not weights:
        return None, None
    if source.kind == MODELSCOPE:
        url = f"{source.endpoint}/api/v1/models/{repo_id}/repo?Revision={revision}&FilePath={{name}}"
    else:
        url = f"{source.endpoint}/{repo_id}/resolve/{revision}/{{name}}"
    params = sum(_header_numel(url.format(name=f.name), secret) for f in weights)
    return params or None, sum(f.size for f in weights) or None


def with_weights_info(hits: list[ModelHit], source: Source, limit: int = 20) -> list[ModelHit]:
    """``hits`` with the parameters and size that the search left out read from the safetensors headers
    (for the first ``limit``, in parallel; a model whose headers cannot be read keeps its blanks)."""
    import concurrent.futures
    import dataclasses

    todo = [i for i, h in enumerate(hits[:limit]) if h.parameters is None]

    def one(index: int) -> tuple[int, tuple[int | None, int | None]]:
        try:
            return index, weights_info(hits[index].ref, source)
        except Exception:  # no safetensors, gated, or the hub went quiet: the figure stays unknown
            return index, (None, None)

    found = list(hits)
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        for index, (params, size) in pool.map(one, todo):
            old = found[index]
            found[index] = dataclasses.replace(old, parameters=params, size_bytes=old.size_bytes or size)
    return found


def _header_numel(url: str, secret: str | None) -> int:
    """Parameters in one safetensors file: its 8-byte header length, then its JSON header (Range)."""
    import struct
    import urllib.request

    def read(start: int, end: int) -> bytes:
        request = urllib.request.Request(url, headers={"Range": f"bytes={start}-{end}"})
        if secret:
            request.add_header("Authorization", f"Bearer {secret}")
        with urllib.request.urlopen(request, timeout=10) as response:  # follows the hub's redirects
            if response.status == 200 and start:  # the server ignored Range: skip to the bytes wanted
                response.read(start)
            return response.read(end - start + 1)  # never more, whatever the server sends

    (length,) = struct.unpack("<Q", read(0, 7))
    return _numel(json.loads(read(8, 8 + length - 1)))


def _numel(header: dict[str, Any]) -> int:
    import math

    return sum(math.prod(t["shape"]) for name, t in header.items() if name != "__metadata__")


def local_weights(folder: Path) -> tuple[int | None, int | None]:
    """Parameters and bytes of the weights in a model folder on this computer, counted as the hub
    counts them for Search (the tensors alone), so that the two agree; the folder also holds a tokenizer,
    perhaps a second copy in ``*.bin``. ``*.bin`` files count by size, without parameters."""
    import struct

    tensors = sorted(folder.glob("*.safetensors"))
    if not tensors:
        pickled = sorted(folder.glob("*.bin"))
        return None, sum(p.stat().st_size for p in pickled) or None
    params = size = 0
    for path in tensors:
        # The hub cache's links lead to the blobs.
        with (
            contextlib.suppress(OSError, ValueError, KeyError, TypeError, struct.error),
            open(path, "rb") as fh,
        ):
            (length,) = struct.unpack("<Q", fh.read(8))
            header = json.loads(fh.read(length))
            params += _numel(header)
            size += sum(
                t["data_offsets"][1] - t["data_offsets"][0] for k, t in header.items() if k != "__metadata__"
            )
    return params or None, size or None


# -- on this computer ------------------------------------------------------------------------------


def on_this_computer() -> list[ModelHit]:
    """Models in the Hugging Face and ModelScope caches and local folders used before, with sizes."""
    hits: list[ModelHit] = []
    try:
        from huggingface_hub import constants, scan_cache_dir

        for repo in scan_cache_dir(constants.HF_HUB_CACHE).repos:
            if repo.repo_type == "model":
                newest = max(repo.revisions, key=lambda r: r.last_modified, default=None)
                hits.append(
                    _local_hit(
                        repo.repo_id,
                        repo.repo_id,
                        "huggingface",
                        repo.repo_path,
                        newest and newest.snapshot_path,
                    )
                )
    except Exception:  # no cache yet, or one the client cannot read: nothing to list from it
        import logging

        logging.getLogger(__name__).debug("the Hugging Face cache was not listed", exc_info=True)
    from desktop.core.hub.clients import ms_cache

    models = ms_cache() / "models"
    for folder in sorted(models.glob("*--*")) if models.is_dir() else []:
        repo_id = folder.name.replace("--", "/", 1)
        hits.append(_local_hit(MODELSCOPE_PREFIX + repo_id, repo_id, MODELSCOPE, folder))
    for path in recent_folders():
        hits.append(_local_hit(str(path), path.name, "local", path))
    return hits


def run_model_hits(models: list[tuple[str, Path]]) -> list[ModelHit]:
    """Models finished runs saved, as (run name, model folder), listed beside those on this computer;
    ``repo_id`` is the run's name."""
    return [_local_hit(str(folder), name, RUN, folder) for name, folder in models]


def _local_hit(ref: str, repo_id: str, source: str, folder: Path, snapshot: Path | None = None) -> ModelHit:
    """A model on this computer: the weights' figures as Search gives them, and its size on disk."""
    params, weights = local_weights(snapshot or folder)
    disk = folder_size(folder)
    return ModelHit(
        ref=ref,
        repo_id=repo_id,
        source=source,
        parameters=params,
        size_bytes=weights or disk,
        path=str(folder),
        disk_bytes=disk,
    )


def delete_from_cache(hit: ModelHit) -> int:
    """Delete a cached model (never a local folder of the user's); returns the bytes freed."""
    if hit.source in ("local", RUN) or not hit.path:
        raise ValueError(msg("Only models in a hub cache can be deleted here."))
    if hit.source == MODELSCOPE:
        from desktop.core.hub.clients import ms_cache

        folder = Path(hit.path).resolve()
        models = (ms_cache() / "models").resolve()
        if folder.parent != models or "--" not in folder.name:
            raise ValueError(
                msg(
                    "{folder} is not a model folder in the ModelScope cache ({cache}).",
                    folder=str(folder),
                    cache=str(models),
                )
            )
        size = folder_size(folder)
        shutil.rmtree(folder)
        return size
    from huggingface_hub import constants, scan_cache_dir

    cache = scan_cache_dir(constants.HF_HUB_CACHE)
    hashes = [
        r.commit_hash for repo in cache.repos if str(repo.repo_path) == hit.path for r in repo.revisions
    ]
    strategy = cache.delete_revisions(*hashes)
    strategy.execute()
    return strategy.expected_freed_size


def _recent_path() -> Path:
    from desktop.core.system.paths import data_dir

    return data_dir() / "recent_models.json"


def recent_folders() -> list[Path]:
    """Local model folders used before that still exist, newest first."""
    try:
        names = json.loads(_recent_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [Path(n) for n in names if isinstance(n, str) and (Path(n) / "config.json").is_file()]


def remember_folder(folder: str | Path) -> None:
    """Put a local model folder at the top of the recent list (at most 20)."""
    from desktop.core.system.paths import atomic_write_text

    folder = str(Path(folder).expanduser().resolve())
    names = [folder] + [str(p) for p in recent_folders() if str(p) != folder]
    atomic_write_text(_recent_path(), json.dumps(names[:20], ensure_ascii=False, indent=1))
