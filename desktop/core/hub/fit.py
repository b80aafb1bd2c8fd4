"""The fit badge: will this model train on this computer with the current Memory & speed options?

Computed by :mod:`desktop.core.settings.memory` from the model's ``config.json`` alone (fetched from the hub,
a few kB; the model is built on the ``meta`` device, so no weights and no memory). On a machine without
an NVIDIA GPU the answer is the RAM needed and a rough time per epoch instead.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.core.hub.sources import MODELSCOPE, Source, split_ref, token
from desktop.core.settings.config import RunConfig
from desktop.core.settings.memory import ParamShapes

# A rough CPU training speed (FLOP/s per core, fp32, forward + backward) for the time per epoch.
CPU_FLOPS_PER_CORE = 15e9


@dataclass(frozen=True)
class Fit:
    """How a model fits: ``verdict`` is ``fits``, ``tight`` or ``will not fit``.

    Attributes:
        needed: Bytes one training step needs with the current options.
        available: Free GPU memory (``on_gpu``), or available RAM.
        with_lora / with_qlora: The verdict with LoRA / QLoRA, when that changes the answer.
        epoch_s: Without a GPU: a rough time per epoch for ``rows`` rows (``None`` when unknown).
    """

    verdict: str
    needed: int
    available: int
    on_gpu: bool
    parameters: int
    with_lora: str = ""
    with_qlora: str = ""
    epoch_s: float | None = None

    @property
    def badge(self) -> str:
        """The short text on the badge: ``fits``, ``tight``, ``fits with LoRA``, ``fits with QLoRA`` or
        ``does not fit``."""
        if self.verdict in ("fits", "tight"):
            return self.verdict
        if self.with_lora in ("fits", "tight"):
            return "fits with LoRA"
        if self.with_qlora in ("fits", "tight"):
            return "fits with QLoRA"
        return "does not fit"


def fetch_config(ref: str, source: Source | None = None) -> dict[str, Any]:
    """A model's ``config.json``: from its folder, the cache, or (a few kB) from the hub.

    Raises:
        ModelError: It cannot be had (with why and what to do).
    """
    folder = Path(ref).expanduser()
    if ref.startswith("bundled:"):
        from desktop.core.hub.models import resolve
        from desktop.core.settings.config import ModelSource

        folder = Path(resolve(ModelSource(name=ref)))
    if folder.is_dir():
        return json.loads((folder / "config.json").read_text(encoding="utf-8"))
    from desktop.core.hub.clients import local_copy

    cached = local_copy(ref)
    if cached is not None and (cached / "config.json").is_file():
        return json.loads((cached / "config.json").read_text(encoding="utf-8"))
    from desktop.core.hub.access import fail_fast, translate
    from desktop.core.hub.sources import candidates, resolve

    forced, repo_id = split_ref(ref)
    source = candidates()[MODELSCOPE] if forced == MODELSCOPE else (source or resolve())
    fail_fast(source, repo_id)
    try:
        if source.kind == MODELSCOPE:
            from modelscope_hub import HubApi

            from desktop.core.hub.clients import ms_cache

            path = HubApi(endpoint=source.endpoint, token=token(MODELSCOPE) or None).download_file(
                repo_id, "model", "config.json", cache_dir=ms_cache()
            )
        else:
            from huggingface_hub import hf_hub_download

            path = hf_hub_download(
                repo_id, "config.json", endpoint=source.endpoint, token=token(source.kind) or False
            )
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except Exception as exc:
        raise translate(exc, source, repo_id) from exc


def config_for_fit(ref: str, source: Source | None = None) -> dict[str, Any]:
    """What the fit badge reads: :func:`fetch_config` for a folder, a bundled model or one in the cache;
    the catalogue's copy for a recommended model (no network); else the hub's ``config.json``.

    Raises:
        ModelError: It cannot be had (with why and what to do).
    """
    from desktop.core.hub.catalogue import model_config
    from desktop.core.hub.clients import local_copy

    stored = model_config(ref)
    here = ref.startswith("bundled:") or Path(ref).expanduser().is_dir() or local_copy(ref) is not None
    if stored is not None and not here:
        return stored
    return fetch_config(ref, source)


def fit(
    model_config: dict[str, Any],
    config: RunConfig,
    gpu_free: int | None,
    ram_available: int,
    rows: int | None = None,
) -> Fit:
    """The fit of a model (its ``config.json`` as a dict) for ``config``'s options on this computer.

    Args:
        gpu_free: Free memory of the NVIDIA GPU, or ``None`` without one (then RAM is what counts).
        ram_available: Available RAM in bytes.
        rows: Training rows, for the rough time per epoch without a GPU.
    """
    from desktop.core.system.lazy import transformers_names

    (AutoConfig,) = transformers_names("AutoConfig")

    from desktop.core.hub.shapes import shapes_for_model_config
    from desktop.core.settings.memory import estimate, mixed_precision

    values = dict(model_config)
    model_type = values.pop("model_type", "")
    transformers_config = AutoConfig.for_model(model_type, **values)
    on_gpu = gpu_free is not None
    available = gpu_free if on_gpu else ram_available
    mixed = mixed_precision(config, on_gpu)

    def verdict_for(run: RunConfig, lora: bool | None = None) -> tuple[str, int, int]:
        shapes = shapes_for_model_config(transformers_config, run, lora)
        result = estimate(shapes, run, mixed_precision=mixed)
        return result.verdict(available), result.total, shapes.num_parameters

    verdict, needed, parameters = verdict_for(config)
    with_lora = with_qlora = ""
    using_adapters = config.lora.enabled or config.lora.qlora
    if verdict == "will not fit" and not using_adapters:
        with_lora = verdict_for(config, lora=True)[0]
    if verdict == "will not fit" and on_gpu and not config.lora.qlora and with_lora not in ("fits", "tight"):
        qlora = dataclasses.replace(config, lora=dataclasses.replace(config.lora, enabled=True, qlora=True))
        with_qlora = verdict_for(qlora)[0]
    epoch_s = None
    if not on_gpu and rows:
        tokens = rows * config.training.max_length
        epoch_s = 6 * parameters * tokens / (CPU_FLOPS_PER_CORE * (os.cpu_count() or 1))
    return Fit(verdict, needed, available, on_gpu, parameters, with_lora, with_qlora, epoch_s)


def shapes_for_config(config: RunConfig, lora: bool | None = None) -> ParamShapes:
    """Parameter shapes of the configured model, built on the ``meta`` device (no memory, no weights).

    Args:
        config: Model source, task and LoRA settings.
        lora: Override ``config.lora.enabled`` (to compare with and without adapters).
    """
    from desktop.core.system.lazy import transformers_names

    (AutoConfig,) = transformers_names("AutoConfig")

    from desktop.core.hub.access import complete_in_cache
    from desktop.core.hub.catalogue import model_config as stored_config
    from desktop.core.hub.models import pretrained_kwargs, resolve
    from desktop.core.hub.shapes import shapes_for_model_config

    name = config.model.name.strip()
    stored = stored_config(name)
    downloaded = complete_in_cache(name, config.model.revision, "config")
    if stored is not None and not downloaded:  # a recommended model: its shapes are known offline
        model_type = stored.pop("model_type")
        return shapes_for_model_config(AutoConfig.for_model(model_type, **stored), config, lora)
    fetch_model_config(config)
    model_config = AutoConfig.from_pretrained(
        resolve(config.model), **pretrained_kwargs(config.model, need="config")
    )
    return shapes_for_model_config(model_config, config, lora)


def fetch_model_config(config: RunConfig) -> None:
    """Bring a hub model's ``config.json`` alone (a few kB, never the weights) into the hub's cache, so
    that :func:`shapes_for_config` reads it offline. Nothing to do for a local or bundled model.

    Raises:
        ModelError: The hub cannot be reached or has no such model.
    """
    from desktop.core.hub.access import complete_in_cache

    name, revision = config.model.name.strip(), config.model.revision
    on_hub = name and not name.startswith("bundled:") and not Path(name).expanduser().is_dir()
    if on_hub and not complete_in_cache(name, revision, "config"):
        fetch_config(name)


def shapes_with_and_without_lora(config: RunConfig) -> tuple[ParamShapes, ParamShapes | None]:
    """The model's shapes as it is and with LoRA adapters (``None`` for a model LoRA cannot adapt):
    what the Memory & speed page compares."""
    full = shapes_for_config(config, lora=False)
    try:
        with_lora = shapes_for_config(config, lora=True)
    except Exception:  # a model LoRA cannot adapt: no LoRA suggestions
        with_lora = None
    return full, with_lora
