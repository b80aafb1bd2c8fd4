"""The model a run names, checked before it loads: a folder with what reading the data needs (tokenizer
files, or an image processor for pictures), a model that fits the task, a max length it can read.

Reads ``config.json`` and file names only; a model not on this computer yet is checked when it is
downloaded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from desktop.core.settings.config import RunConfig
from desktop.core.settings.config_sections import IMAGE_TASKS
from desktop.core.system.errors import ModelError, Problem
from desktop.core.system.messages import msg

TOKENIZER_FILES = ("tokenizer.json", "vocab.*", "*.model", "*.spm", "merges.txt", "*.tiktoken", "tekken.json")
"""What a folder needs so that a tokenizer with a real vocabulary can be built from it."""

ENCODER_ONLY = frozenset(
    [
        "albert",
        "bert",
        "big_bird",
        "camembert",
        "convbert",
        "data2vec-text",
        "deberta",
        "deberta-v2",
        "distilbert",
        "electra",
        "ernie",
        "esm",
        "flaubert",
        "funnel",
        "ibert",
        "layoutlm",
        "longformer",
        "megatron-bert",
        "mobilebert",
        "modernbert",
        "mpnet",
        "nezha",
        "rembert",
        "roberta",
        "roberta-prelayernorm",
        "roc_bert",
        "roformer",
        "squeezebert",
        "xlm-roberta",
        "xlm-roberta-xl",
        "xmod",
    ]
)
"""Model families that read text but cannot write it: no causal-LM fine-tuning."""

ENCODER_DECODER = frozenset(
    [
        "bart",
        "bigbird_pegasus",
        "blenderbot",
        "blenderbot-small",
        "encoder-decoder",
        "fsmt",
        "led",
        "longt5",
        "m2m_100",
        "marian",
        "mbart",
        "mt5",
        "mvp",
        "nllb-moe",
        "pegasus",
        "pegasus_x",
        "plbart",
        "prophetnet",
        "switch_transformers",
        "t5",
        "t5gemma",
        "umt5",
    ]
)
"""Model families with an encoder and a decoder: the ones sequence-to-sequence training needs."""

TASK_NEEDS = {
    "causal-lm": msg(
        "Pick a decoder model such as Qwen (Qwen/Qwen2.5-0.5B-Instruct), GPT-2 (gpt2) or Llama."
    ),
    "preference": msg(
        "Pick a chat model such as Qwen (Qwen/Qwen2.5-0.5B-Instruct), or one of your finished chat runs."
    ),
    "grpo": msg(
        "Pick a chat model such as Qwen (Qwen/Qwen2.5-0.5B-Instruct), or one of your finished chat runs."
    ),
    "seq2seq": msg(
        "Pick an encoder-decoder model such as T5 (t5-small), mT5 (google/mt5-small) or "
        "BART (facebook/bart-base)."
    ),
    "vision-chat": msg(
        "Pick a vision-language model such as SmolVLM (HuggingFaceTB/SmolVLM-256M-Instruct) or Qwen2-VL "
        "(Qwen/Qwen2-VL-2B-Instruct)."
    ),
    "image-classification": msg(
        "Pick an image model such as ViT (google/vit-base-patch16-224-in21k), ConvNeXt "
        "(facebook/convnext-tiny-224) or ResNet (microsoft/resnet-50)."
    ),
}
IMAGE_PROCESSOR_FILES = ("preprocessor_config.json", "processor_config.json")
"""What a folder needs so that its pictures are resized and scaled the way the model was trained."""
VISION_KEYS = ("num_channels", "image_size", "vision_config", "patch_size")
"""Keys of a model's ``config.json`` that only models which see pictures have."""


def model_folder(config: RunConfig) -> Path | None:
    """The folder the model loads from, when it is on this computer (local, bundled or cached)."""
    from desktop.core.hub.models import resolve

    try:
        path = Path(resolve(config.model))
    except ModelError:
        return None
    if path.is_dir():
        return path
    from desktop.core.hub.access import cached_snapshot

    return cached_snapshot(config.model.name, config.model.revision)


def check_model_folder(config: RunConfig) -> None:
    """Refuse a model folder without tokenizer files, and a model that does not fit the task.

    Reads ``config.json`` and file names only. Models not on this computer yet are checked when
    they are downloaded.

    Raises:
        ModelError: What is missing or why the model does not fit, with what to pick instead.
    """
    folder = model_folder(config)
    if folder is None:
        return
    from desktop.core.hub.access import complete

    name = config.model.name.strip()
    from_hub = not Path(name).expanduser().is_dir() and not name.startswith("bundled:")
    # A hub model whose config alone is cached (the fit badge fetched it): the download brings the rest.
    partial_download = from_hub and not complete(folder, "model")
    if config.task in IMAGE_TASKS:
        _check_task(config, folder)  # a text model is named as such, not as one lacking a processor
        if not partial_download and not any((folder / name).is_file() for name in IMAGE_PROCESSOR_FILES):
            raise ModelError(
                msg(
                    "The model folder {folder} has no preprocessor_config.json; without it the pictures "
                    "cannot be resized and scaled the way the model was trained to see them.",
                    folder=str(folder),
                ),
                msg(
                    "Copy preprocessor_config.json from where the model came from into the folder, or pick "
                    "the model's complete folder."
                ),
            )
    elif not partial_download and not any(next(folder.glob(pattern), None) for pattern in TOKENIZER_FILES):
        raise ModelError(
            msg(
                "The model folder {folder} has no tokenizer files (tokenizer.json, or vocab.txt, vocab.json "
                "with merges.txt, or a SentencePiece .model file); without them the texts cannot be read "
                "the way the model was trained to read them.",
                folder=str(folder),
            ),
            msg(
                "Copy the tokenizer files from where the model came from into the folder, or pick the "
                "model's complete folder."
            ),
        )
    _check_task(config, folder)


def _check_task(config: RunConfig, folder: Path) -> None:
    try:
        model_config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # the config's own validation names a missing config.json
    problem = task_mismatch(config.task, model_config, config.model.name)
    if problem:
        raise ModelError(problem, TASK_NEEDS[config.task])


ROBERTA_LIKE = {"roberta", "xlm-roberta", "camembert", "longformer", "roberta-prelayernorm", "xmod"}
"""Models whose position table starts after the padding index: 514 entries read 512 tokens."""


def readable_positions(model_config: dict[str, Any]) -> int | None:
    """The most tokens the model reads at once (its position table), or ``None`` when it has no fixed
    limit in its config (T5's relative positions, rotary models that state none)."""
    for key in ("max_position_embeddings", "n_positions", "max_sequence_length"):
        value = model_config.get(key)
        if isinstance(value, int) and value > 0:
            if model_config.get("model_type") in ROBERTA_LIKE:
                value -= int(model_config.get("pad_token_id") or 0) + 1
            return value
    return None


def length_problems(config: RunConfig) -> list[Problem]:
    """A max length longer than the model can read: the run would fail at its first step with a tensor
    size error. Read from ``config.json`` of a model on this computer; nothing for one not here yet."""
    folder = model_folder(config)
    try:
        model_config = json.loads((folder / "config.json").read_text(encoding="utf-8")) if folder else {}
    except (OSError, ValueError):
        return []
    positions = readable_positions(model_config)
    length = config.training.max_length
    if positions is None or length <= positions:
        return []
    return [
        Problem(
            "training.max_length",
            msg(
                "is {length}, but {model} reads at most {positions} tokens at once (its position table), "
                "so training would stop at its first step. Set it to {positions} or less.",
                length=length,
                model=config.model.name,
                positions=positions,
            ),
        )
    ]


def task_mismatch(task: str, model_config: dict[str, Any], model: str) -> str:
    """Why a model with this ``config.json`` cannot be trained for ``task`` (one sentence), or ``""``."""
    kind = str(model_config.get("model_type", ""))
    if task == "vision-chat":
        if "vision_config" not in model_config:
            return msg(
                "{model} cannot be used for vision-language fine-tuning: it does not read pictures beside "
                "text ({kind}).",
                model=model,
                kind=kind or "unknown type",
            )
        return ""
    if task in IMAGE_TASKS:
        if not any(key in model_config for key in VISION_KEYS):
            return msg(
                "{model} cannot be used for image classification: it does not see pictures ({kind}).",
                model=model,
                kind=kind or "unknown type",
            )
        return ""
    encoder_decoder = bool(model_config.get("is_encoder_decoder")) or kind in ENCODER_DECODER
    if task == "grpo" and (encoder_decoder or (kind in ENCODER_ONLY and not model_config.get("is_decoder"))):
        return msg(
            "{model} cannot be used for reasoning with rewards: it is not a decoder model that writes text "
            "({kind}), and GRPO teaches a chat model from the answers it writes.",
            model=model,
            kind=kind or "unknown type",
        )
    if task == "preference" and (
        encoder_decoder or (kind in ENCODER_ONLY and not model_config.get("is_decoder"))
    ):
        return msg(
            "{model} cannot be used for preference tuning: it is not a decoder model that writes text "
            "({kind}), and preference tuning teaches a chat model which of its answers is better.",
            model=model,
            kind=kind or "unknown type",
        )
    if task == "causal-lm":
        if encoder_decoder:
            return msg(
                "{model} cannot be used for causal-LM fine-tuning: it is an encoder-decoder model ({kind}), "
                "and causal-LM fine-tuning needs a decoder model that writes text.",
                model=model,
                kind=kind,
            )
        if kind in ENCODER_ONLY and not model_config.get("is_decoder"):
            return msg(
                "{model} cannot be used for causal-LM fine-tuning: it is an encoder-only model ({kind}) that "
                "cannot generate text, and causal-LM fine-tuning needs a decoder model that writes text.",
                model=model,
                kind=kind,
            )
    if task == "seq2seq" and not encoder_decoder:
        return msg(
            "{model} cannot be used for sequence-to-sequence: it is not an encoder-decoder model ({kind}), "
            "and sequence-to-sequence training needs an encoder-decoder model.",
            model=model,
            kind=kind or "unknown type",
        )
    return ""
