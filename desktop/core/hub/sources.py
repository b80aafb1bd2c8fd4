"""Where models and datasets come from: Hugging Face, a mirror of it, or ModelScope, and Auto.

The choice is a small settings file (``hub.json`` in the data folder); tokens are never in it, they
live in the OS keyring (:func:`token`). The environment wins over the file: ``HF_ENDPOINT`` is the
Hugging Face endpoint (usually a mirror), ``MODELSCOPE_ENDPOINT`` the ModelScope one, ``HF_HUB_OFFLINE``
switches the network off. Endpoints are always passed to the clients explicitly, so it does not matter
that ``huggingface_hub`` read ``HF_ENDPOINT`` when it was imported.

*Auto* probes the candidates in parallel with a short timeout and keeps the fastest that answers
(remembered for a day, so a start-up costs no probe).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path

from desktop.core.system.paths import atomic_write_text, data_dir

HUGGING_FACE = "huggingface"
MIRROR = "mirror"
MODELSCOPE = "modelscope"
AUTO = "auto"
CHOICES = (AUTO, HUGGING_FACE, MIRROR, MODELSCOPE)

HF_URL = "https://huggingface.co"
MIRROR_URL = "https://hf-mirror.com"
MODELSCOPE_URL = "https://www.modelscope.cn"
PROBE_TIMEOUT_S = 3.0
AUTO_REMEMBER_S = 24 * 3600
MODELSCOPE_PREFIX = "modelscope:"
_KEYRING_NAMES = {HUGGING_FACE: "huggingface-token", MODELSCOPE: "modelscope-token"}


@dataclass(frozen=True)
class Source:
    """One place to download from.

    Attributes:
        kind: ``huggingface`` (Hugging Face or a mirror of its API) or ``modelscope``.
        endpoint: Base URL, without a trailing slash.
        name: What the user calls it: ``huggingface``, ``mirror`` or ``modelscope``.
    """

    kind: str
    endpoint: str
    name: str

    @property
    def label(self) -> str:
        """``Hugging Face``, ``mirror (hf-mirror.com)`` or ``ModelScope``, for messages (translatable)."""
        from desktop.core.system.messages import msg

        if self.kind != MODELSCOPE and (self.name == MIRROR or self.endpoint != HF_URL):
            return msg("mirror ({host})", host=self.endpoint.split("://", 1)[-1])
        return msg("ModelScope") if self.kind == MODELSCOPE else msg("Hugging Face")

    def model_page(self, repo_id: str, dataset: bool = False) -> str:
        """The web page of a repository (where a gated model's license is accepted)."""
        if self.kind == MODELSCOPE:
            return f"{self.endpoint}/{'datasets' if dataset else 'models'}/{repo_id}"
        return f"{self.endpoint}/{'datasets/' if dataset else ''}{repo_id}"


@dataclass
class HubSettings:
    """The user's choice of source, saved in ``hub.json`` (no secrets)."""

    source: str = AUTO
    mirror_url: str = MIRROR_URL
    auto_picked: str = ""  # what Auto chose last, and when
    auto_picked_at: float = 0.0
    probes: dict[str, float] = field(default_factory=dict)  # name -> seconds, or -1 (no answer)


def settings_path() -> Path:
    return data_dir() / "hub.json"


def load_settings() -> HubSettings:
    """The saved settings; defaults when there are none or the file is unreadable."""
    try:
        raw = json.loads(settings_path().read_text(encoding="utf-8"))
        known = {k: v for k, v in raw.items() if k in HubSettings.__dataclass_fields__}
        settings = HubSettings(**known)
    except (OSError, ValueError, TypeError):
        return HubSettings()
    if settings.source not in CHOICES:
        settings.source = AUTO
    return settings


def save_settings(settings: HubSettings) -> None:
    atomic_write_text(settings_path(), json.dumps(asdict(settings), indent=2) + "\n")


def offline() -> bool:
    """Whether the user switched the network off (``HF_HUB_OFFLINE`` or ``MODELSCOPE_OFFLINE``)."""
    return any(
        os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")
        for name in ("HF_HUB_OFFLINE", "MODELSCOPE_OFFLINE")
    )


def candidates(settings: HubSettings | None = None) -> dict[str, Source]:
    """Every source by name, with the environment's endpoints applied."""
    settings = settings or load_settings()
    hf = (os.environ.get("HF_ENDPOINT") or HF_URL).rstrip("/")
    mirror = (settings.mirror_url or MIRROR_URL).rstrip("/")
    ms = (os.environ.get("MODELSCOPE_ENDPOINT") or MODELSCOPE_URL).rstrip("/")
    if not ms.startswith(("http://", "https://")):
        ms = f"https://{ms}"
    return {
        HUGGING_FACE: Source(HUGGING_FACE, hf, HUGGING_FACE),
        MIRROR: Source(HUGGING_FACE, mirror, MIRROR),
        MODELSCOPE: Source(MODELSCOPE, ms, MODELSCOPE),
    }


def resolve(
    choice: str = "", endpoint: str = "", settings: HubSettings | None = None, probe_if_stale: bool = False
) -> Source:
    """The source to use now.

    Args:
        choice: ``huggingface``, ``mirror``, ``modelscope`` or ``auto``; empty: the saved setting.
        endpoint: An explicit endpoint (the CLI's ``--endpoint``): Hugging Face's API at that URL,
            or ModelScope's when ``choice`` is ``modelscope``.
        settings: The saved settings (read when not given).
        probe_if_stale: With Auto and no pick from the last day, probe the sources now (at most
            :data:`PROBE_TIMEOUT_S`) instead of assuming Hugging Face.
    """
    settings = settings or load_settings()
    choice = choice or os.environ.get("FINETUNE_STUDIO_SOURCE", "") or settings.source
    if endpoint:
        kind = MODELSCOPE if choice == MODELSCOPE else HUGGING_FACE
        name = kind if kind == MODELSCOPE else (HUGGING_FACE if endpoint.rstrip("/") == HF_URL else MIRROR)
        return Source(kind, endpoint.rstrip("/"), name)
    everything = candidates(settings)
    if choice in everything:
        return everything[choice]
    if os.environ.get("HF_ENDPOINT"):  # the environment names the endpoint: no guessing
        return everything[HUGGING_FACE]
    fresh = time.time() - settings.auto_picked_at < AUTO_REMEMBER_S
    if fresh and settings.auto_picked in everything:
        return everything[settings.auto_picked]
    if probe_if_stale and not offline():
        chosen, _ = pick(settings)
        if chosen is not None:
            return chosen
    return everything[HUGGING_FACE]


def auto_is_stale(settings: HubSettings | None = None) -> bool:
    """Whether the source is Auto and its pick is missing or older than a day (the app probes then)."""
    settings = settings or load_settings()
    if (os.environ.get("FINETUNE_STUDIO_SOURCE") or settings.source) != AUTO or os.environ.get("HF_ENDPOINT"):
        return False
    return time.time() - settings.auto_picked_at >= AUTO_REMEMBER_S and not offline()


@dataclass(frozen=True)
class Probe:
    """How one source answered: ``seconds`` to answer, or ``problem`` when it did not."""

    name: str
    endpoint: str
    seconds: float
    problem: str = ""

    @property
    def ok(self) -> bool:
        return not self.problem


def probe(source: Source, timeout: float = PROBE_TIMEOUT_S) -> Probe:
    """Ask ``source`` one cheap question; any HTTP answer (even 401 or 404) means it is reachable."""
    path = (
        "/api/v1/models/Qwen/Qwen2.5-0.5B-Instruct/revisions"
        if source.kind == MODELSCOPE
        else "/api/models/gpt2"
    )
    request = urllib.request.Request(source.endpoint + path, method="HEAD")
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=timeout):
            pass
    except urllib.error.HTTPError:
        pass
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return Probe(source.name, source.endpoint, -1.0, str(reason) or type(exc).__name__)
    return Probe(source.name, source.endpoint, time.monotonic() - started)


def pick(
    settings: HubSettings | None = None, timeout: float = PROBE_TIMEOUT_S
) -> tuple[Source | None, list[Probe]]:
    """Probe every source in parallel and remember the fastest that answers (Auto).

    Returns:
        The chosen source (``None`` when none answers) and every probe, for display.
    """
    settings = settings or load_settings()
    everything = candidates(settings)
    with concurrent.futures.ThreadPoolExecutor(len(everything)) as pool:
        probes = list(pool.map(lambda s: probe(s, timeout), everything.values()))
    answering = sorted((p for p in probes if p.ok), key=lambda p: p.seconds)
    settings.probes = {p.name: round(p.seconds, 3) for p in probes}
    chosen = everything[answering[0].name] if answering else None
    if chosen is not None:
        settings.auto_picked, settings.auto_picked_at = chosen.name, time.time()
    with contextlib.suppress(OSError):
        save_settings(settings)
    return chosen, probes


# -- tokens: in the OS keyring, never in a file --------------------------------------------------


def token(kind: str) -> str | None:
    """The saved token for ``huggingface`` or ``modelscope`` (the environment's ``HF_TOKEN`` /
    ``MODELSCOPE_API_TOKEN`` first), or ``None``."""
    env = os.environ.get("HF_TOKEN" if kind == HUGGING_FACE else "MODELSCOPE_API_TOKEN")
    if env:
        return env
    from desktop.core.system.secrets import KEYRING_SERVICE, keyring_backend

    keyring = keyring_backend()
    if keyring is None:
        return None
    try:
        return keyring.get_password(KEYRING_SERVICE, _KEYRING_NAMES[kind]) or None
    except Exception:  # no usable backend
        return None


def set_token(kind: str, value: str) -> bool:
    """Keep ``value`` in the OS keyring (empty: forget it). False when there is no usable keyring."""
    from desktop.core.system.secrets import KEYRING_SERVICE, keyring_backend

    keyring = keyring_backend()
    if keyring is None:
        return False
    try:
        if value.strip():
            keyring.set_password(KEYRING_SERVICE, _KEYRING_NAMES[kind], value.strip())
        else:
            with contextlib.suppress(Exception):
                keyring.delete_password(KEYRING_SERVICE, _KEYRING_NAMES[kind])
    except Exception:
        return False
    return True


def split_ref(ref: str) -> tuple[str, str]:
    """``("modelscope", "Qwen/Qwen2.5-0.5B")`` for ``modelscope:Qwen/Qwen2.5-0.5B``; else ``("", ref)``."""
    if ref.startswith(MODELSCOPE_PREFIX):
        return MODELSCOPE, ref.removeprefix(MODELSCOPE_PREFIX)
    return "", ref
