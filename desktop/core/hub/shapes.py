"""A model's parameter shapes, built on the ``meta`` device from its ``config.json`` alone.

No weights and no memory: what the memory estimate and the fit badge need of a model, local or on a
hub (where only ``config.json``, a few kB, is fetched).
"""

from __future__ import annotations

from typing import Any

from desktop.core.settings.config import RunConfig
from desktop.core.settings.memory import ParamShapes, shapes_of


def shapes_for_model_config(model_config: Any, config: RunConfig, lora: bool | None = None) -> ParamShapes:
    """Parameter shapes for a model's ``config.json`` (a transformers config), on the ``meta`` device.

    This is all the fit badge needs of a model on the hub: its config, never its weights.
    """
    import torch

    from desktop.core.system.lazy import transformers_names

    causal, seq2seq, sequence_classification, image_classification, image_text = transformers_names(
        "AutoModelForCausalLM",
        "AutoModelForSeq2SeqLM",
        "AutoModelForSequenceClassification",
        "AutoModelForImageClassification",
        "AutoModelForImageTextToText",
    )

    auto = {
        "classification": sequence_classification,
        "causal-lm": causal,
        "seq2seq": seq2seq,
        "preference": causal,
        "grpo": causal,
        "image-classification": image_classification,
        "vision-chat": image_text,
    }[config.task]
    with torch.device("meta"):
        model = auto.from_config(model_config, trust_remote_code=config.model.trust_remote_code)
        if config.task == "vision-chat" and not config.images.train_vision:  # as the run trains it
            from desktop.core.settings.options import freeze_vision

            freeze_vision(model)
        if (config.lora.enabled or config.lora.qlora) if lora is None else lora:
            from desktop.core.settings.options import apply_lora

            model = apply_lora(model, config)
    shapes = shapes_of(model, lm_head=config.task not in ("classification", "image-classification"))
    if config.task == "vision-chat":
        import dataclasses

        from desktop.core.settings.memory import vision_tokens

        tokens = vision_tokens(model_config.to_dict(), config.images.resolution)
        shapes = dataclasses.replace(shapes, picture_tokens=tokens)
    return shapes
