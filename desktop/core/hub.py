"""Reaching the Hugging Face hub: offline first, and fail in seconds when it cannot be reached.

A model on the hub is used from the local cache when it is complete there, without the network.
Otherwise the endpoint (``HF_ENDPOINT``, e.g. a mirror) is probed with a short timeout first, so an
unreachable or blocked hub becomes one clear sentence within seconds instead of a minute of silent
retries inside the libraries.
"""

from __future__ import annotations

import os
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from desktop.core.errors import ModelError

DEFAULT_ENDPOINT = "https://huggingface.co"
PROBE_TIMEOUT_S = 3.0
_answers: dict[str, tuple[float, str]] = {}  # endpoint -> (when, problem or "")
_REMEMBER_S = 60.0

WEIGHT_PATTERNS = ("*.safetensors", "*.bin")
TOKENIZER_PATTERNS = ("tokenizer.json", "tokenizer_config.json", "vocab.*", "*.model", "merges.txt")


def endpoint() -> str:
    """The hub endpoint in use: ``HF_ENDPOINT`` (a mirror) or Hugging Face itself."""
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def offline() -> bool:
    """Whether the user asked for no network at all (``HF_HUB_OFFLINE``)."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def cached_snapshot(repo_id: str, revision: str = "") -> Path | None:
    """The local snapshot folder of a hub model, when its ``config.json`` is in the cache."""
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(repo_id, "config.json", revision=revision or None)
    except Exception:  # not a repo id the client accepts
        return None
    return Path(found).parent if isinstance(found, str) else None


def complete_in_cache(repo_id: str, revision: str = "", need: str = "model") -> bool:
    """Whether the cache holds what loading needs: the config (``need="config"``), or also weights
    and tokenizer files (``need="model"``)."""
    folder = cached_snapshot(repo_id, revision)
    if folder is None:
        return False
    if need == "config":
        return True
    has = lambda patterns: any(next(folder.glob(p), None) for p in patterns)  # noqa: E731
    return has(WEIGHT_PATTERNS) and has(TOKENIZER_PATTERNS)


def unreachable(repo_id: str = "") -> str:
    """Why the endpoint cannot be reached (``""`` when it answers); asked at most once a minute.

    Any HTTP answer, even 401 or 404, means the endpoint is reachable.
    """
    url = endpoint()
    when, problem = _answers.get(url, (0.0, ""))
    if time.monotonic() - when < _REMEMBER_S:
        return problem
    request = urllib.request.Request(f"{url}/api/models/{repo_id or 'gpt2'}", method="HEAD")
    try:
        with urllib.request.urlopen(request, timeout=PROBE_TIMEOUT_S):
            problem = ""
    except urllib.error.HTTPError:
        problem = ""
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        problem = str(reason) or type(exc).__name__
    _answers[url] = (time.monotonic(), problem)
    return problem


def access_kwargs(repo_id: str, revision: str = "", need: str = "model") -> dict[str, Any]:
    """Extra ``from_pretrained`` arguments for a hub model: the cache alone when it is complete there.

    Raises:
        ModelError: The model is not in the cache and the hub is off (``HF_HUB_OFFLINE``) or does
            not answer within :data:`PROBE_TIMEOUT_S`.
    """
    if complete_in_cache(repo_id, revision, need):
        return {"local_files_only": True}
    if offline():
        raise ModelError(
            f"{repo_id} is not on this computer, and the hub is switched off (HF_HUB_OFFLINE).",
            "Unset HF_HUB_OFFLINE to download it, or pick a local model folder.",
        )
    problem = unreachable(repo_id)
    if problem:
        raise ModelError(
            f"{repo_id} is not on this computer, and {endpoint()} did not answer within "
            f"{PROBE_TIMEOUT_S:.0f} s ({problem}).",
            "Check the network, or use a mirror (set HF_ENDPOINT, e.g. https://hf-mirror.com), or pick a "
            "local model folder.",
        )
    return {}
