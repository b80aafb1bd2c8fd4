"""Reaching a hub: offline first, fail in seconds, and one clear sentence for every failure.

A model on a hub is used from a local cache (Hugging Face's or ModelScope's) when it is there, without
the network. Otherwise the source is probed with a short timeout first, so an unreachable or blocked
hub becomes one sentence within seconds instead of a minute of silent retries inside the libraries.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from desktop.core.hub.sources import (
    HUGGING_FACE,
    MODELSCOPE,
    PROBE_TIMEOUT_S,
    Source,
    offline,
    probe,
    resolve,
    split_ref,
    token,
)
from desktop.core.system.errors import ModelError
from desktop.core.system.messages import msg

_answers: dict[str, tuple[float, str]] = {}  # endpoint -> (when, problem or "")
_REMEMBER_S = 60.0

WEIGHT_PATTERNS = ("*.safetensors", "*.bin")
TOKENIZER_PATTERNS = ("tokenizer.json", "tokenizer_config.json", "vocab.*", "*.model", "merges.txt")


def complete(folder: Path | None, need: str = "model") -> bool:
    """Whether ``folder`` holds what loading needs: the config (``need="config"``), or also weights
    and tokenizer files (``need="model"``)."""
    if folder is None or not (folder / "config.json").is_file():
        return False
    if need == "config":
        return True
    has = lambda patterns: any(next(folder.glob(p), None) for p in patterns)  # noqa: E731
    return has(WEIGHT_PATTERNS) and has(TOKENIZER_PATTERNS)


def cached_snapshot(ref: str, revision: str = "") -> Path | None:
    """The local folder of a hub model (either cache) when its ``config.json`` is there."""
    from desktop.core.hub.clients import local_copy

    return local_copy(ref, revision)


def complete_in_cache(ref: str, revision: str = "", need: str = "model") -> bool:
    return complete(cached_snapshot(ref, revision), need)


def unreachable(source: Source | None = None) -> str:
    """Why ``source`` cannot be reached (``""`` when it answers); asked at most once a minute."""
    source = source or resolve()
    when, problem = _answers.get(source.endpoint, (0.0, ""))
    if time.monotonic() - when < _REMEMBER_S:
        return problem
    problem = probe(source, PROBE_TIMEOUT_S).problem
    _answers[source.endpoint] = (time.monotonic(), problem)
    return problem


def unreachable_error(what: str, source: Source, problem: str, searching: bool = False) -> ModelError:
    """``source`` did not answer; ``what`` is the model wanted, or the search's words (``searching``)."""
    host = source.endpoint.split("://", 1)[-1]
    # The host once: a mirror's label already holds it ("mirror (127.0.0.1:37545)").
    named = source.label if host in source.label else msg("{source} ({host})", source=source.label, host=host)
    common = {"source": named, "seconds": f"{PROBE_TIMEOUT_S:.0f}", "problem": network_words(problem, host)}
    error = ModelError(
        msg(
            "The search for {query} could not run: {source} did not answer within {seconds} s ({problem}).",
            query=what,
            **common,
        )
        if searching
        else msg(
            "{name} is not on this computer, and {source} did not answer within {seconds} s ({problem}).",
            name=what,
            **common,
        ),
        msg(
            "Check the network, or switch the source (a mirror such as https://hf-mirror.com, or ModelScope) "
            "in Settings > Model sources, or pick a local model folder."
        ),
    )
    error.detail = problem
    error.cli_hint = msg(  # type: ignore[attr-defined]  # what the command line says instead
        "Check the network, or switch the source: --source mirror (https://hf-mirror.com) or --source "
        "modelscope, or HF_ENDPOINT; or give a local model folder."
    )
    return error


def network_words(problem: str, host: str) -> str:
    """A library's or the OS's words for a failed connection ("[Errno -2] Name or service not known"),
    as ours; anything else as it came."""
    text = problem.lower()
    if "timed out" in text or "timeout" in text:
        return msg("no answer")
    if any(w in text for w in ("name or service not known", "getaddrinfo failed", "nodename nor servname")):
        return msg("the name {host} could not be looked up: no network, or no DNS", host=host.split(":")[0])
    if "connection refused" in text or "actively refused" in text:
        return msg("the connection was refused")
    if "certificate" in text:
        return msg("its certificate is not trusted on this computer")
    if "network is unreachable" in text or "no route to host" in text:
        return msg("no network")
    return problem


def fail_fast(source: Source, repo_id: str, searching: bool = False) -> None:
    """Raise at once when ``source`` does not answer (``repo_id``: the model wanted, or the search's
    words when ``searching``).

    Raises:
        ModelError: The source did not answer within :data:`PROBE_TIMEOUT_S`.
    """
    problem = unreachable(source)
    if problem:
        raise unreachable_error(repo_id, source, problem, searching)


def access_kwargs(ref: str, revision: str = "", need: str = "model") -> dict[str, Any]:
    """Extra ``from_pretrained`` arguments for a hub model in Hugging Face's cache: the cache alone.

    A model is downloaded as its own step (:mod:`desktop.core.hub.downloads`), never inside loading.

    Raises:
        ModelError: The model is not on this computer (with what to do; ``HF_HUB_OFFLINE`` named).
    """
    forced, repo_id = split_ref(ref)
    if forced != MODELSCOPE and complete(hf_only(repo_id, revision), need):
        return {"local_files_only": True}
    if offline():
        raise ModelError(
            msg(
                "{name} is not on this computer, and the hub is switched off (HF_HUB_OFFLINE).", name=repo_id
            ),
            msg("Unset HF_HUB_OFFLINE to download it, or pick a local model folder."),
        )
    raise not_downloaded(ref)


def not_downloaded(ref: str) -> ModelError:
    _, repo_id = split_ref(ref)
    return ModelError(
        msg("{name} is not on this computer yet.", name=repo_id),
        msg(
            "Download it first: Browse > Download on the Model & data step, or "
            "finetune-studio-cli models download {ref}",
            ref=ref,
        ),
    )


def hf_only(repo_id: str, revision: str) -> Path | None:
    from desktop.core.hub.clients import hf_local

    try:
        return hf_local(repo_id, revision)
    except Exception:  # not a repo id the client accepts
        return None


class GatedError(ModelError):
    """The model's authors ask users to accept their license (and to sign in with a token) first."""


def translate(exc: BaseException, source: Source, repo_id: str, dataset: bool = False) -> ModelError:
    """One sentence and what to do, for whatever the hub clients raised; their own words in ``detail``."""
    error = _in_our_words(exc, source, repo_id, dataset)
    error.detail = f"{type(exc).__name__}: {exc}"
    return error


def _in_our_words(exc: BaseException, source: Source, repo_id: str, dataset: bool) -> ModelError:
    from desktop.core.system.errors import exception_chain

    names = {type(e).__name__ for e in exception_chain(exc)}
    statuses = {getattr(getattr(e, "response", None), "status_code", None) for e in exception_chain(exc)}
    statuses |= {getattr(e, "status_code", None) for e in exception_chain(exc)}
    page = source.model_page(repo_id, dataset)
    if 401 in statuses and "GatedRepoError" not in names and token(source.kind):
        return ModelError(
            msg("{source} rejected the access token (it is wrong, expired or revoked).", source=source.label),
            msg(
                "Enter a new token in Settings > Model sources, or remove it there to download public "
                "models without one; on the command line the token comes from {variable}.",
                variable="HF_TOKEN" if source.kind == HUGGING_FACE else "MODELSCOPE_API_TOKEN",
            ),
        )
    damaged = next((e for e in exception_chain(exc) if type(e).__name__ == "DamagedDownload"), None)
    for error in exception_chain(exc):  # ModelScope's client checks the sha256 its listing publishes
        failed = getattr(error, "failed_files", None) or {}
        damaged_file = next((p for p, e in failed.items() if type(e).__name__ == "FileIntegrityError"), None)
        if damaged is None and damaged_file is not None:
            damaged = SimpleNamespace(name=damaged_file)
    if damaged is not None and getattr(damaged, "cached", None) is not None:
        return ModelError(
            msg(
                "{file} of {name} in the download cache does not match the hub's checksum.",
                file=damaged.name,
                name=repo_id,
            ),
            msg(
                "It was not written by this download, so it was left where it is: delete {path} and "
                "download again.",
                path=str(damaged.cached),
            ),
        )
    if damaged is not None:
        return ModelError(
            msg(
                "{file} of {name} arrived damaged from {source} each time it was fetched: its bytes do not "
                "match the hub's checksum, so it was deleted.",
                file=getattr(damaged, "name", "?"),
                name=repo_id,
                source=source.label,
            ),
            msg(
                "Try again later, or switch the source (a mirror, or ModelScope); a proxy or an antivirus "
                "that changes downloads causes this too."
            ),
        )
    if names & {"EntryNotFoundError", "RemoteEntryNotFoundError"}:
        found = re.search(r"/resolve/[^/\s]+/([^\s?#]+?)\.?(?:\s|$)", str(exc))
        return ModelError(
            msg(
                "{name} on {source} has no file {file}.",
                name=repo_id,
                source=source.label,
                file=found.group(1) if found else "?",
            ),
            msg("The repository exists but lacks that file: check the revision, or pick another model."),
        )
    if names & {"GatedRepoError", "AuthenticationError", "PermissionDeniedError"} or statuses & {401, 403}:
        return GatedError(
            msg(
                "{name} is gated: its authors ask you to accept their license before downloading it.",
                name=repo_id,
            ),
            msg(
                "Accept the license at {page} while signed in, then enter an access token in "
                "Settings > Model sources ({source}).",
                page=page,
                source=source.label,
            ),
        )
    if names & {"RevisionNotFoundError"}:
        return ModelError(
            msg("{name} has no revision by that name on {source}.", name=repo_id, source=source.label),
            msg("Check the revision, or leave it empty for the newest."),
        )
    if names & {"RepositoryNotFoundError", "NotExistError"} or 404 in statuses:
        missing = (
            msg("There is no dataset named {name} on {source}.", name=repo_id, source=source.label)
            if dataset
            else msg("There is no model named {name} on {source}.", name=repo_id, source=source.label)
        )
        return ModelError(
            missing,
            msg(
                "Check the id (owner/name, as on the model's page), or find it with Browse; on ModelScope "
                "some models have other ids than on Hugging Face."
            ),
        )
    if names & {
        "ConnectError",
        "ConnectTimeout",
        "ReadTimeout",
        "TimeoutException",
        "NetworkError",
        "RequestTimeoutError",
        "ConnectionError",
        "RemoteProtocolError",
        "ReadError",
    }:
        return ModelError(
            msg(
                "The download of {name} from {source} was interrupted: the connection failed.",
                name=repo_id,
                source=source.label,
            ),
            msg("Try again: the download resumes where it stopped. If it keeps failing, switch the source."),
        )
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return ModelError(
        msg(
            "{name} could not be downloaded from {source}: {error}",
            name=repo_id,
            source=source.label,
            error=first,
        ),
        msg("Try again, or switch the source."),
    )
