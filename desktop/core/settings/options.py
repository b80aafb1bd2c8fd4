"""Memory and speed options: checked against what this machine can do, then turned into Trainer arguments."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from dataclasses import dataclass, field
from typing import Any

from desktop.core.settings.config import RunConfig
from desktop.core.settings.config_sections import model_task
from desktop.core.system.errors import ConfigError, Problem
from desktop.core.system.messages import msg


@dataclass(frozen=True)
class Capabilities:
    """What the installed stack can do here.

    Attributes:
        cuda: A CUDA GPU is usable.
        bf16: The GPU computes in bfloat16.
        bitsandbytes: bitsandbytes imports (8-bit optimizers, 4-bit QLoRA).
        triton: Triton is installed (torch.compile's inductor backend on GPU).
        flash_attn: flash-attn is installed.
        liger: liger-kernel is installed (fused Triton kernels for common LLM architectures).
        windows: Running on Windows.
        cpp_compiler: A C++ compiler is on PATH (inductor compiles CPU kernels with it; on
            Windows that is MSVC's cl.exe, which few machines have).
    """

    cuda: bool = False
    bf16: bool = False
    bitsandbytes: bool = False
    triton: bool = False
    flash_attn: bool = False
    liger: bool = False
    windows: bool = sys.platform == "win32"
    cpp_compiler: bool = True

    @classmethod
    def detect(cls) -> Capabilities:
        """Ask torch and look for the optional packages (imports torch)."""
        import torch

        cuda = torch.cuda.is_available()
        return cls(
            cuda=cuda,
            bf16=cuda and torch.cuda.is_bf16_supported(),
            bitsandbytes=_works("bitsandbytes"),
            triton=installed("triton"),
            flash_attn=installed("flash_attn"),
            liger=installed("liger_kernel"),
            cpp_compiler=shutil.which("cl" if sys.platform == "win32" else "c++") is not None
            or shutil.which("g++") is not None,
        )


OPTIONAL_PACKAGES = ("bitsandbytes", "triton", "flash_attn", "liger_kernel", "deepspeed")
"""The optional packages whose presence the Memory & speed page shows (see :func:`installed`)."""

_installed: dict[str, bool] = {}


def installed(name: str) -> bool:
    """Whether the module ``name`` can be imported here, looked up once per process (or after
    :func:`forget_installed`).

    A look-up takes Python's global import lock, which a background import holds while each of its own
    look-ups reads folders: from a cold disk, the window's thread waited 5-16 ms for each package.
    The answers are kept, and looked up ahead by the warm-up (see ``desktop.gui.app_support.warmup``).
    """
    if name not in _installed:
        _installed[name] = importlib.util.find_spec(name) is not None
    return _installed[name]


def forget_installed() -> None:
    """Look the packages up again (packages were installed or removed: a repair of PyTorch)."""
    _installed.clear()


def _works(module: str) -> bool:
    if not installed(module):
        return False
    try:
        importlib.import_module(module)
    except Exception:  # bitsandbytes fails at import on some Windows set-ups
        return False
    return True


@dataclass
class Resolved:
    """The options as the Trainer and ``from_pretrained`` take them.

    Attributes:
        training_args: Keyword arguments for ``TrainingArguments``.
        model_kwargs: Keyword arguments for the model's ``from_pretrained`` (see :func:`model_kwargs`).
        notes: What "auto" chose, in words.
    """

    training_args: dict[str, Any] = field(default_factory=dict)
    model_kwargs: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    four_bit_compute: str = ""  # QLoRA: the precision the 4-bit base computes in


def resolve(config: RunConfig, caps: Capabilities) -> Resolved:
    """Check the options against ``caps`` and map them to transformers' names.

    Raises:
        ConfigError: Options this machine cannot run (fp16 on CPU, bf16 on a GPU without it,
            8-bit optimizers without bitsandbytes, inductor without Triton on GPU, ...).
    """
    p = config.performance
    problems: list[Problem] = []
    out = Resolved()
    precision = p.precision
    if precision == "auto":
        precision = "bf16" if caps.bf16 else ("fp16" if caps.cuda else "fp32")
        out.notes.append(msg("precision auto -> {precision}", precision=precision))
    if precision in ("fp16", "bf16") and not caps.cuda:
        problems.append(
            Problem(
                "performance.precision",
                msg(
                    "{precision} needs a CUDA GPU, and PyTorch sees none here; use auto or fp32 "
                    "(or fix PyTorch on the Environment page).",
                    precision=precision,
                ),
            )
        )
    elif precision == "bf16" and not caps.bf16:
        problems.append(
            Problem("performance.precision", msg("this GPU cannot compute in bf16; use fp16 or auto."))
        )
    if p.optimizer in ("adamw_bnb_8bit", "paged_adamw_8bit") and not caps.bitsandbytes:
        problems.append(
            Problem(
                "performance.optimizer",
                msg(
                    "8-bit optimizers need bitsandbytes, which is missing or broken here; "
                    "use adamw_torch or adafactor."
                ),
            )
        )
    if p.optimizer == "paged_adamw_8bit" and not caps.cuda:
        problems.append(Problem("performance.optimizer", msg("paged optimizers need a CUDA GPU.")))
    if p.torch_compile and p.compile_backend == "inductor" and caps.cuda and not caps.triton:
        problems.append(
            Problem(
                "performance.compile_backend",
                msg(
                    "inductor needs Triton on the GPU, which has no Windows builds; use aot_eager or eager, "
                    "or turn torch_compile off."
                )
                if caps.windows
                else msg(
                    "inductor needs Triton on the GPU, which is not installed; use aot_eager or eager, "
                    "or turn torch_compile off."
                ),
            )
        )
    if p.torch_compile and p.compile_backend == "inductor" and not caps.cuda and not caps.cpp_compiler:
        problems.append(
            Problem(
                "performance.compile_backend",
                msg(
                    "inductor compiles CPU training with a C++ compiler, and Visual Studio's cl.exe was not "
                    "found; use aot_eager, or turn torch_compile off."
                )
                if caps.windows
                else msg(
                    "inductor compiles CPU training with a C++ compiler, and none was found; use aot_eager, "
                    "or turn torch_compile off."
                ),
            )
        )
    if p.attention == "flash_attention_2" and not (caps.flash_attn and caps.cuda):
        problems.append(
            Problem(
                "performance.attention",
                msg("flash_attention_2 needs the flash-attn package and a CUDA GPU; use sdpa."),
            )
        )
    if p.liger_kernel and not (caps.cuda and caps.triton and caps.liger):
        problems.append(Problem("performance.liger_kernel", liger_problem(caps)))
    if config.lora.qlora and not (caps.cuda and caps.bitsandbytes):
        problems.append(
            Problem(
                "lora.qlora",
                msg(
                    "QLoRA needs a CUDA GPU and a working bitsandbytes; "
                    "use plain LoRA (lora.enabled) instead."
                ),
            )
        )
    for tracker in config.output.report_to:
        if tracker not in TRACKERS:
            problems.append(
                Problem(
                    "output.report_to",
                    msg(
                        "{tracker} is not supported; use {choices}.",
                        tracker=repr(tracker),
                        choices=" or ".join(TRACKERS),
                    ),
                )
            )
        elif importlib.util.find_spec(TRACKERS[tracker]) is None:
            problems.append(
                Problem(
                    "output.report_to",
                    msg(
                        "{tracker} is not installed: pip install {tracker}, "
                        "or remove it from output.report_to.",
                        tracker=tracker,
                    ),
                )
            )
    if problems:
        raise ConfigError(problems)
    out.training_args = {
        "report_to": list(config.output.report_to) or "none",
        "bf16": precision == "bf16",
        "fp16": precision == "fp16",
        "optim": p.optimizer,
        "gradient_checkpointing": p.gradient_checkpointing,
        "gradient_checkpointing_kwargs": {"use_reentrant": False} if p.gradient_checkpointing else None,
        "dataloader_pin_memory": p.pin_memory and caps.cuda,
        "dataloader_num_workers": p.dataloader_workers,
        "torch_empty_cache_steps": p.empty_cache_steps or None,
        "torch_compile": p.torch_compile,
        "use_liger_kernel": p.liger_kernel,
        "torch_compile_backend": p.compile_backend if p.torch_compile else None,
    }
    if p.attention != "auto":
        out.model_kwargs["attn_implementation"] = p.attention
    if config.lora.qlora:
        out.four_bit_compute = precision
        out.notes.append(msg("QLoRA: the base model is loaded in 4 bits (NF4)"))
    return out


LIGER_ARCHITECTURES = frozenset(
    {
        "llama",
        "mistral",
        "mixtral",
        "gemma",
        "gemma2",
        "gemma3",
        "qwen2",
        "qwen3",
        "qwen2_vl",
        "phi3",
        "granite",
    }
)
"""Model types liger-kernel patches (its ``apply_liger_kernel_to_*``); others train without its kernels."""


def liger_problem(caps: Capabilities) -> str:
    """Why Liger kernels cannot run here (they are Triton kernels for NVIDIA GPUs)."""
    if not caps.cuda:
        return msg("Liger kernels run on an NVIDIA GPU only; turn them off on this computer.")
    if not caps.triton:
        return (
            msg(
                "Liger kernels need Triton, which has no official Windows builds: pip install triton-windows."
            )
            if caps.windows
            else msg("Liger kernels need Triton, which is not installed: pip install triton.")
        )
    return msg("Liger kernels need the liger-kernel package: pip install liger-kernel.")


def model_kwargs(resolved: Resolved) -> dict[str, Any]:
    """``from_pretrained`` keyword arguments, the 4-bit config included (imports transformers)."""
    kwargs = dict(resolved.model_kwargs)
    if resolved.four_bit_compute:
        kwargs["quantization_config"] = four_bit_config(resolved.four_bit_compute)
    return kwargs


def four_bit_config(precision: str) -> Any:
    """The bitsandbytes 4-bit NF4 configuration QLoRA loads the frozen base model with."""
    import torch
    from transformers import BitsAndBytesConfig

    return BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_use_double_quant=True,
        bnb_4bit_compute_dtype=torch.bfloat16 if precision == "bf16" else torch.float16,
    )


TRACKERS = {"tensorboard": "tensorboard", "mlflow": "mlflow"}  # name -> module that must be installed
VISION_PARTS = ("vision_tower", "vision_model", "visual", "image_encoder", "vision_encoder")
"""Names of the modules that hold a vision-language model's vision tower (LLaVA, Gemma 3, SmolVLM:
``vision_tower`` / ``vision_model``; Qwen2-VL: ``visual``)."""


def freeze_vision(model: Any) -> int:
    """Freeze a vision-language model's vision tower (its :data:`VISION_PARTS`); the parameters frozen."""
    import re

    pattern = re.compile(r"(^|\.)(" + "|".join(VISION_PARTS) + r")(\.|$)")
    frozen = 0
    for name, parameter in model.named_parameters():
        if pattern.search(name):
            parameter.requires_grad_(False)
            frozen += parameter.numel()
    return frozen


LORA_TASK_TYPES = {
    "classification": "SEQ_CLS",
    "causal-lm": "CAUSAL_LM",
    "seq2seq": "SEQ_2_SEQ_LM",
    "vision-chat": "CAUSAL_LM",  # a vision-language model writes text: peft's causal-LM wrapper
}


def apply_lora(model: Any, config: RunConfig) -> Any:
    """Wrap ``model`` in LoRA adapters as ``config.lora`` says (peft)."""
    from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training

    lora = config.lora
    if lora.qlora:
        model = prepare_model_for_kbit_training(
            model, use_gradient_checkpointing=config.performance.gradient_checkpointing
        )
    targets = list(lora.target_modules) or find_target_modules(model)
    if not targets and config.task == "image-classification":
        raise ConfigError(
            [
                Problem(
                    "lora.enabled",
                    msg(
                        "LoRA adapts linear layers, and this model is a convolutional network with none "
                        "outside its head: train it whole (LoRA off), or pick a vision transformer (ViT)."
                    ),
                )
            ]
        )
    if not targets:
        raise ConfigError(
            [
                Problem(
                    "lora.target_modules",
                    "no linear layers were found to adapt in this model; "
                    'name them, e.g. target_modules = ["q_proj", "v_proj"].',
                )
            ]
        )
    from transformers.pytorch_utils import Conv1D

    # GPT-2-style Conv1D layers store their weight transposed; peft must be told.
    conv1d = any(
        isinstance(m, Conv1D) and name.split(".")[-1] in targets for name, m in model.named_modules()
    )
    adapted: list[str] | str = targets
    if config.task == "vision-chat" and not config.images.train_vision and not lora.target_modules:
        adapted = language_layers(targets)  # the vision tower stays as it is
    task_type = LORA_TASK_TYPES.get(model_task(config.task))
    extra: dict[str, Any] = {}
    if task_type is None:  # image classification: the new head trains whole beside the adapters
        extra["modules_to_save"] = [name for name in sorted(HEADS) if hasattr(model, name)]
    peft_config = LoraConfig(
        **extra,
        fan_in_fan_out=conv1d,
        task_type=task_type,
        r=lora.rank,
        lora_alpha=lora.alpha,
        lora_dropout=lora.dropout,
        target_modules=adapted,
    )
    return get_peft_model(model, peft_config)


def language_layers(names: list[str]) -> str:
    """A peft ``target_modules`` pattern: the layers named ``names`` outside a vision-language model's
    vision tower (peft matches a text pattern against each module's whole name)."""
    import re

    vision = "|".join(VISION_PARTS)
    layers = "|".join(re.escape(name) for name in names)
    return rf"^(?!(?:.*\.)?(?:{vision})\.).*\.(?:{layers})$"


HEADS = {"lm_head", "classifier", "score", "qa_outputs", "pooler", "dense_head"}


def find_target_modules(model: Any) -> list[str]:
    """Names of the layers LoRA can adapt: every Linear (and GPT-2's Conv1D) except output heads.

    peft's "all-linear" misses GPT-2-style Conv1D layers, which would leave nothing to train.
    """
    import torch
    from transformers.pytorch_utils import Conv1D

    names = set()
    for full_name, module in model.named_modules():
        if isinstance(module, (torch.nn.Linear, Conv1D)):
            parts = full_name.split(".")
            if not HEADS.intersection(parts):
                names.add(parts[-1])
    return sorted(names)
