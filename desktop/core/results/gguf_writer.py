"""A fine-tuned causal LM as one GGUF file, the format llama.cpp, Ollama and LM Studio load.

Built on the ``gguf`` package (llama.cpp's own Python writer: its tensor-name map, quantizer and file
layout); the model-specific work is ours. Tensors go from the model's safetensors files one at a time
(memory-mapped), so converting never holds two copies of the model: a first pass over the files'
headers lays out the GGUF's tensor table, the second converts and writes each tensor. The file is
written as ``NAME.partial`` and renamed into place when whole.

Architectures: Llama and Mistral (llama.cpp's ``llama``), Qwen2, Qwen3, Gemma 2, Gemma 3 (text only),
Phi-3 and GPT-2; any other is refused before anything is written, with a sentence that names it.
Tokenizers (:mod:`gguf_vocab`): byte-level BPE, and SentencePiece as transformers keeps it (BPE with
byte fallback); special tokens and the chat template travel in the GGUF's metadata. Quantizations:
``f16`` and ``q8_0``, which need nothing native.

What llama.cpp needs beyond the weights, as its own converter writes it: Llama's query and key rows in
its rotary order; Gemma's norm weights plus one (transformers multiplies by ``1 + weight``), its logit
soft-capping, sliding window and which layers use it; Gemma 3's rotary base for those layers; Phi-3's
fused ``qkv_proj`` and ``gate_up_proj`` as they are. llama.cpp scales Gemma's embeddings by
sqrt(hidden) itself, as transformers does, and ignores Phi-3's sliding window (answers agree while the
prompt and answer fit in it, 2,047 tokens for Phi-3 mini).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.core.system.errors import InputError
from desktop.core.system.messages import msg

QUANTS = ("f16", "q8_0")
ARCHITECTURES = {  # transformers' class -> (llama.cpp's architecture, its byte-level BPE pre-tokenizer)
    "LlamaForCausalLM": ("llama", "llama-bpe"),
    "MistralForCausalLM": ("llama", "llama-bpe"),
    "Qwen2ForCausalLM": ("qwen2", "qwen2"),
    "Qwen3ForCausalLM": ("qwen3", "qwen2"),  # Qwen3 kept Qwen2's tokenizer
    "Gemma2ForCausalLM": ("gemma2", ""),  # "": SentencePiece tokenizers only
    "Gemma3ForCausalLM": ("gemma3", ""),
    "Gemma3ForConditionalGeneration": ("gemma3", ""),  # 4B and up: the text model, the vision part left out
    "Phi3ForCausalLM": ("phi3", ""),
    "GPT2LMHeadModel": ("gpt2", "gpt-2"),
}
GEMMA = ("gemma2", "gemma3")
GEMMA_27B_LAYERS = {"gemma2": 46, "gemma3": 62}  # llama.cpp scales the 27B models' attention otherwise
Q8_BLOCK = 32


@dataclass(frozen=True)
class GgufResult:
    """What :func:`write_gguf` wrote: the file, its size, the architecture, the quantization, and the chat
    template and end token it carries (what the Modelfile is written from)."""

    path: Path
    size: int
    architecture: str
    quant: str
    chat_template: str = ""
    eos_token: str = ""


def architecture_of(model_dir: Path) -> tuple[str, str]:
    """llama.cpp's architecture and pre-tokenizer (``default`` for SentencePiece) for ``model_dir``.

    Raises:
        InputError: The model's architecture, its settings or its tokenizer cannot be written as GGUF yet.
    """
    from desktop.core.results.gguf_vocab import tokenizer_kind

    config = _config(model_dir)
    name = next(iter(config.get("architectures") or []), config.get("model_type", "?"))
    if name not in ARCHITECTURES:
        raise InputError(
            msg("GGUF export does not know the {architecture} architecture yet.", architecture=name),
            msg(
                "GGUF is written for Llama, Mistral, Qwen2, Qwen3, Gemma 2, Gemma 3, Phi-3 and GPT-2 "
                "models; export this one as a folder."
            ),
        )
    arch, pre = ARCHITECTURES[name]
    quantized = config.get("quantization_config")
    if quantized:  # a QLoRA run's model, saved in 4 bits: its tensors are packed bytes and their scales
        raise InputError(
            msg(
                "GGUF export reads 16- and 32-bit weights; this model was saved quantized ({method}).",
                method=str(quantized.get("quant_method", "?")) if isinstance(quantized, dict) else "?",
            ),
            msg("Train with LoRA rather than QLoRA to export GGUF, or export this run as a folder."),
        )
    full, sliding = _rope(config)
    kinds = {"gemma3": ("default", "linear"), "llama": ("default", "llama3")}.get(arch, ("default",))
    # linear: Gemma 3 4B and up; llama3: Llama 3.1, 3.2 and 3.3 (their low frequencies stretched)
    for rope, allowed in ((full, kinds), (sliding, ("default",))):
        if rope["rope_type"] not in allowed:
            raise InputError(
                msg(
                    "GGUF export does not carry this model's rope scaling ({kind}) yet.",
                    kind=str(rope["rope_type"]),
                ),
                msg("Export it as a folder: llama.cpp's own converter can turn that into GGUF."),
            )
    if arch in GEMMA:
        _check_gemma(arch, config)
    kind = tokenizer_kind(model_dir)
    if kind == "bpe" and not pre:
        raise InputError(
            msg(
                "GGUF export writes {architecture} models with a SentencePiece tokenizer; this one's is "
                "byte-level BPE.",
                architecture=name,
            ),
            msg("Export it as a folder."),
        )
    return arch, pre if kind == "bpe" else "default"


def _check_gemma(arch: str, config: dict[str, Any]) -> None:
    """Refuse what llama.cpp would run differently: an attention scale other than the one it derives,
    and (Gemma 2) an output layer of its own."""
    hidden, heads = config["hidden_size"], config["num_attention_heads"]
    head_dim = config.get("head_dim") or hidden // heads
    used = hidden / heads if config["num_hidden_layers"] == GEMMA_27B_LAYERS[arch] else head_dim
    scalar = config.get("query_pre_attn_scalar") or head_dim
    if abs(float(scalar) - used) > 1e-6:
        raise InputError(
            msg(
                "llama.cpp scales this Gemma model's attention by 1/sqrt({used}), transformers by "
                "1/sqrt({scalar}) (query_pre_attn_scalar).",
                used=f"{used:g}",
                scalar=f"{float(scalar):g}",
            ),
            msg("Export it as a folder."),
        )
    if arch == "gemma2" and config.get("tie_word_embeddings") is False:
        raise InputError(
            msg("llama.cpp runs Gemma 2 with its output layer tied to the embeddings; this model's is not."),
            msg("Export it as a folder."),
        )


def write_gguf(
    model_dir: Path,
    out: Path,
    quant: str = "f16",
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> GgufResult:
    """Write the causal LM in ``model_dir`` (a merged, complete export) as the GGUF file ``out``.

    Args:
        quant: ``f16`` or ``q8_0`` (norms and biases stay f32, as llama.cpp keeps them).
        progress: Called with (tensors written, tensors in all).
        cancelled: Asked between tensors; when it says so, the partial file is deleted.

    Raises:
        InputError: An architecture, tokenizer or quantization this export cannot write.
    """
    import contextlib

    import gguf
    import numpy as np
    from safetensors import safe_open

    from desktop.core.results.gguf_vocab import gguf_name, tokenizer_kind, write_vocab

    if quant not in QUANTS:
        raise InputError(msg("Unknown GGUF quantization {quant}; use f16 or q8_0.", quant=quant))
    arch, pre = architecture_of(model_dir)

    config = _config(model_dir)
    partial = own_partial(out)
    writer = gguf.GGUFWriter(partial, arch)
    try:
        _metadata(writer, arch, config, quant)
        vocab_size = config.get("vocab_size") or 0
        vocab = write_vocab(writer, model_dir, tokenizer_kind(model_dir), pre, vocab_size)
        writer.add_name(gguf_name(model_dir.name, arch, vocab.rstrips_specials))
        plan = list(_plan(model_dir, arch, config, quant))
        for name, _, _, shape, dtype, nbytes, raw in plan:
            writer.add_tensor_info(name, shape, dtype, nbytes, raw_dtype=raw)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_ti_data_to_file()
        with contextlib.ExitStack() as files:  # each safetensors file mapped once, not once per tensor
            opened: dict[Path, Any] = {}
            for done, (_, source, key, _, dtype, _, raw) in enumerate(plan, 1):
                if cancelled is not None and cancelled():
                    raise GgufCancelled
                if source is None:  # made here, not read: Llama 3.1's rotary factors
                    writer.write_tensor_data(_rope_factors(config))
                    continue
                if source not in opened:
                    opened[source] = files.enter_context(safe_open(str(source), "pt"))
                tensor = opened[source].get_tensor(key)
                # Straight to f16 where it is written as f16: no float32 copy of the embeddings at the peak.
                tensor = (tensor.half() if dtype == np.float16 else tensor.float()).numpy()
                writer.write_tensor_data(_converted(tensor, key, arch, config, raw))
                if progress is not None:
                    progress(done, len(plan))
        writer.close()
        partial.replace(out)
    except BaseException:
        writer.close()
        partial.unlink(missing_ok=True)
        raise
    return GgufResult(out, out.stat().st_size, arch, quant, vocab.chat_template, vocab.eos_token)


def own_partial(out: Path, kind: str = "partial") -> Path:
    """This process's own work file for ``out`` (``NAME.PID.KIND``), made here, exclusively (empty): the
    only kind of file a failure or a cancel deletes, for no one else can have made it.

    Raises:
        InputError: A file of that name is in the way (never overwritten).
    """
    import os

    partial = out.with_name(f"{out.name}.{os.getpid()}.{kind}")
    try:
        partial.open("xb").close()
    except FileExistsError:
        raise InputError(
            msg("{file} is in the way of the export.", file=str(partial)),
            msg("Delete it, or export to another folder."),
        ) from None
    return partial


class GgufCancelled(Exception):
    """The user cancelled between two tensors; nothing was left behind."""


def _config(model_dir: Path) -> dict[str, Any]:
    """The model's ``config.json``; for a text-and-image model, its text model's settings."""
    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    if isinstance(config.get("text_config"), dict):
        outer = {k: v for k, v in config.items() if k in ("architectures", "tie_word_embeddings")}
        return {**config["text_config"], **outer}
    return config


VISION_PARTS = (
    "vision_tower.",
    "multi_modal_projector.",
    "model.vision_tower.",
    "model.multi_modal_projector.",
)
TEXT_PREFIXES = {"language_model.model.": "model.", "model.language_model.": "model.", "language_model.": ""}
"""Gemma 3 4B and up keep the text model's tensors under ``language_model``; the GGUF is text only."""


def _text_key(key: str) -> str:
    for prefix, plain in TEXT_PREFIXES.items():
        if key.startswith(prefix):
            return plain + key[len(prefix) :]
    return key


def _rope(config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The rotary settings of the full-attention layers and of the sliding-window ones (Gemma 3's own
    base). transformers 5 saves them as ``rope_parameters`` (by layer type for Gemma 3), older configs
    (most on the hub) as ``rope_theta``, ``rope_local_base_freq`` and ``rope_scaling``. A Qwen model saved
    by a run has only the first: read the old way, its base of 1,000,000 became llama.cpp's default
    10,000, and long answers went wrong."""
    params = dict(config.get("rope_parameters") or {})
    if "full_attention" in params or "sliding_attention" in params:
        full, sliding = dict(params.get("full_attention") or {}), dict(params.get("sliding_attention") or {})
    else:
        full, sliding = params, {}
    scaling = config.get("rope_scaling") or {}
    for key, value in scaling.items():
        full.setdefault("rope_type" if key == "type" else key, value)
    full.setdefault("rope_theta", config.get("rope_theta"))
    full.setdefault("rope_type", "default")
    sliding.setdefault("rope_theta", config.get("rope_local_base_freq") or full["rope_theta"])
    sliding.setdefault("rope_type", "default")
    return full, sliding


def _metadata(writer: Any, arch: str, config: dict[str, Any], quant: str) -> None:
    import gguf

    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0 if quant == "q8_0" else gguf.LlamaFileType.MOSTLY_F16)
    if arch == "gpt2":
        hidden = config["n_embd"]
        writer.add_context_length(config["n_positions"])
        writer.add_embedding_length(hidden)
        writer.add_block_count(config["n_layer"])
        writer.add_feed_forward_length(config.get("n_inner") or 4 * hidden)
        writer.add_head_count(config["n_head"])
        writer.add_layer_norm_eps(config.get("layer_norm_epsilon", 1e-5))
        return
    hidden, heads = config["hidden_size"], config["num_attention_heads"]
    head_dim = config.get("head_dim") or hidden // heads
    context = config.get("max_position_embeddings", 2048)
    full, sliding = _rope(config)
    writer.add_context_length(context)
    writer.add_embedding_length(hidden)
    writer.add_block_count(config["num_hidden_layers"])
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_head_count(heads)
    writer.add_head_count_kv(config.get("num_key_value_heads") or heads)
    writer.add_key_length(head_dim)  # Qwen3's and Gemma's are not hidden / heads
    writer.add_value_length(head_dim)
    writer.add_layer_norm_rms_eps(config.get("rms_norm_eps", 1e-6))
    writer.add_rope_freq_base(float(full.get("rope_theta") or 10000.0))
    partial = full.get("partial_rotary_factor") or config.get("partial_rotary_factor") or 1.0
    writer.add_rope_dimension_count(int(head_dim * partial))
    if full["rope_type"] == "linear":
        writer.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
        writer.add_rope_scaling_factor(float(full["factor"]))
    writer.add_vocab_size(config["vocab_size"])
    if arch in GEMMA:
        for key in ("attn_logit_softcapping", "final_logit_softcapping"):
            if config.get(key) is not None:
                getattr(writer, f"add_{key}")(float(config[key]))
        if config.get("sliding_window"):
            writer.add_sliding_window(config["sliding_window"])
            writer.add_sliding_window_pattern(_sliding_layers(arch, config))
        if arch == "gemma3":
            writer.add_rope_freq_base_swa(float(sliding["rope_theta"] or 10000.0))
    if arch == "phi3":
        writer.add_rope_scaling_orig_ctx_len(config.get("original_max_position_embeddings") or context)
        writer.add_sliding_window(config.get("sliding_window") or 0)  # read, and set aside, by llama.cpp


def _sliding_layers(arch: str, config: dict[str, Any]) -> list[bool]:
    """Which layers attend through the sliding window: transformers 5 lists the layer types, older
    configs give the pattern (every 2nd layer is global in Gemma 2, every 6th in Gemma 3)."""
    types = config.get("layer_types")
    if types:
        return [kind == "sliding_attention" for kind in types]
    every = config.get("sliding_window_pattern") or (2 if arch == "gemma2" else 6)
    return [bool((i + 1) % every) for i in range(config["num_hidden_layers"])]


def _plan(model_dir: Path, arch: str, config: dict[str, Any], quant: str) -> Iterator[tuple]:
    """Each tensor to write, from the safetensors headers alone: (GGUF name, file, key, shape, numpy
    dtype, bytes, GGML type or ``None``)."""
    import gguf
    import numpy as np
    from safetensors import safe_open

    if _rope(config)[0]["rope_type"] == "llama3":
        factors = _rope_factors(config)
        yield "rope_freqs.weight", None, "", list(factors.shape), np.dtype(np.float32), factors.nbytes, None
    model_arch = {name: key for key, name in gguf.MODEL_ARCH_NAMES.items()}[arch]
    layers = config.get("num_hidden_layers") or config.get("n_layer")
    names = gguf.TensorNameMap(model_arch, layers)
    for source in sorted(model_dir.glob("*.safetensors")):
        with safe_open(str(source), "pt") as tensors:
            for key in tensors.keys():  # noqa: SIM118  (a safetensors handle, not a dict)
                if key.endswith((".attn.bias", ".attn.masked_bias", "rotary_emb.inv_freq")):
                    continue  # buffers, not weights
                if key.startswith(VISION_PARTS):
                    continue  # the image side of a text-and-image model: llama.cpp's mmproj, not this file
                if arch == "gemma2" and _text_key(key) == "lm_head.weight":
                    continue  # tied (checked): llama.cpp reads the embeddings
                name = names.get_name(_text_key(key), try_suffixes=(".weight", ".bias"))
                if name is None:
                    raise InputError(
                        msg("GGUF export cannot place the tensor {key}.", key=key),
                        msg("Export it as a folder."),
                    )
                shape = list(tensors.get_slice(key).get_shape())
                if arch == "gpt2" and len(shape) == 2 and ".h." in key and not key.endswith("wte.weight"):
                    shape = shape[::-1]  # GPT-2's Conv1D stores (in, out)
                count = int(np.prod(shape))
                if len(shape) < 2:
                    yield name, source, key, shape, np.dtype(np.float32), 4 * count, None
                elif quant == "q8_0" and shape[-1] % Q8_BLOCK == 0:
                    byte_shape = [*shape[:-1], shape[-1] // Q8_BLOCK * 34]
                    yield (
                        name,
                        source,
                        key,
                        byte_shape,
                        np.dtype(np.uint8),
                        int(np.prod(byte_shape)),
                        gguf.GGMLQuantizationType.Q8_0,
                    )
                else:
                    yield name, source, key, shape, np.dtype(np.float16), 2 * count, None


def _rope_factors(config: dict[str, Any]) -> Any:
    """Llama 3.1's rotary scaling as llama.cpp reads it (``rope_freqs.weight``): by how much each rotary
    frequency is divided. Short wavelengths are kept, those longer than the original context are divided
    by ``factor``, and the ones between are blended (transformers' ``_compute_llama3_parameters``)."""
    import math

    import numpy as np

    full, _ = _rope(config)
    head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    base, factor = float(full.get("rope_theta") or 10000.0), float(full["factor"])
    low, high = float(full.get("low_freq_factor", 1.0)), float(full.get("high_freq_factor", 4.0))
    original = float(full.get("original_max_position_embeddings", 8192))
    factors = []
    for i in range(0, head_dim, 2):
        wavelength = 2 * math.pi * base ** (i / head_dim)
        if wavelength < original / high:
            factors.append(1.0)
        elif wavelength > original / low:
            factors.append(factor)
        else:
            smooth = (original / wavelength - low) / (high - low)
            factors.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(factors, dtype=np.float32)


def _converted(data: Any, key: str, arch: str, config: dict[str, Any], raw: Any) -> Any:
    """One tensor (float32, or float16 where it is written as such) as the GGUF holds it: in llama.cpp's
    layout, and in its type."""
    import gguf
    import numpy as np

    if arch == "gpt2" and data.ndim == 2 and ".h." in key:
        data = data.T  # Conv1D (in, out) -> (out, in)
    if arch == "llama" and key.endswith(("q_proj.weight", "k_proj.weight")):
        heads = config["num_attention_heads"]
        if key.endswith("k_proj.weight"):
            heads = config.get("num_key_value_heads") or heads
        data = _rotary_order(data, heads)
    if arch in GEMMA and key.endswith("norm.weight"):
        data = data + 1.0  # Gemma's RMSNorm multiplies by (1 + weight); llama.cpp's by the weight
    if data.ndim < 2:
        return np.ascontiguousarray(data, dtype=np.float32)
    if raw == gguf.GGMLQuantizationType.Q8_0:
        return gguf.quants.quantize(np.ascontiguousarray(data, dtype=np.float32), raw)
    return np.ascontiguousarray(data, dtype=np.float16)


def _rotary_order(weight: Any, heads: int) -> Any:
    """Llama's query and key rows from transformers' half-split rotary order to llama.cpp's interleaved
    one (what llama.cpp's converter calls ``permute``)."""
    rows = weight.shape[0]
    return (
        weight.reshape(heads, 2, rows // heads // 2, *weight.shape[1:]).swapaxes(1, 2).reshape(weight.shape)
    )
