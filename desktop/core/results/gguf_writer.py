"""A fine-tuned causal LM as one GGUF file, the format llama.cpp, Ollama and LM Studio load.

Built on the ``gguf`` package (llama.cpp's own Python writer: its tensor-name map, quantizer and file
layout); the model-specific work is ours. Tensors go from the model's safetensors files one at a time
(memory-mapped), so converting never holds two copies of the model: a first pass over the files'
headers lays out the GGUF's tensor table, the second converts and writes each tensor. The file is
written as ``NAME.partial`` and renamed into place when whole.

Architectures: Llama (and Mistral, the same layout), Qwen2 and GPT-2; any other is refused before
anything is written, with a sentence that names it. Tokenizers: byte-level BPE (``tokenizer.json``);
special tokens and the chat template travel in the GGUF's metadata. Quantizations: ``f16`` and
``q8_0``, which need nothing native.
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
ARCHITECTURES = {  # transformers' class -> (llama.cpp's architecture, its BPE pre-tokenizer name)
    "LlamaForCausalLM": ("llama", "llama-bpe"),
    "MistralForCausalLM": ("llama", "llama-bpe"),
    "Qwen2ForCausalLM": ("qwen2", "qwen2"),
    "GPT2LMHeadModel": ("gpt2", "gpt-2"),
}
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
    """llama.cpp's architecture and BPE pre-tokenizer for the model in ``model_dir``.

    Raises:
        InputError: The model's architecture (or its tokenizer) cannot be written as GGUF yet.
    """
    config = _config(model_dir)
    name = next(iter(config.get("architectures") or []), config.get("model_type", "?"))
    if name not in ARCHITECTURES:
        raise InputError(
            msg("GGUF export does not know the {architecture} architecture yet.", architecture=name),
            msg("GGUF is written for Llama, Mistral, Qwen2 and GPT-2 models; export this one as a folder."),
        )
    rope = _rope(config)
    if rope.get("rope_type", "default") != "default":
        raise InputError(
            msg(
                "GGUF export does not carry this model's rope scaling ({kind}) yet.",
                kind=str(rope["rope_type"]),
            ),
            msg("Export it as a folder: llama.cpp's own converter can turn that into GGUF."),
        )
    if not (model_dir / "tokenizer.json").is_file():
        raise InputError(
            msg("GGUF export needs the model's tokenizer.json (a fast tokenizer)."),
            msg("SentencePiece-only tokenizers are not written as GGUF yet: export this one as a folder."),
        )
    return ARCHITECTURES[name]


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
    import gguf

    if quant not in QUANTS:
        raise InputError(msg("Unknown GGUF quantization {quant}; use f16 or q8_0.", quant=quant))
    arch, pre = architecture_of(model_dir)
    import contextlib
    import os

    from safetensors import safe_open

    config = _config(model_dir)
    # This process's own partial file, made here and nowhere else: the only file a failure deletes.
    partial = out.with_name(f"{out.name}.{os.getpid()}.partial")
    try:
        partial.open("xb").close()
    except FileExistsError:
        raise InputError(
            msg("{file} is in the way of the export.", file=str(partial)),
            msg("Delete it, or export to another folder."),
        ) from None
    writer = gguf.GGUFWriter(partial, arch)
    try:
        _metadata(writer, arch, config, model_dir, quant)
        chat_template, eos_token = _tokenizer(writer, model_dir, pre)
        plan = list(_plan(model_dir, arch, config, quant))
        for name, _, _, shape, dtype, nbytes, raw in plan:
            writer.add_tensor_info(name, shape, dtype, nbytes, raw_dtype=raw)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_ti_data_to_file()
        with contextlib.ExitStack() as files:  # each safetensors file mapped once, not once per tensor
            opened: dict[Path, Any] = {}
            for done, (_, source, key, _, _, _, raw) in enumerate(plan, 1):
                if cancelled is not None and cancelled():
                    raise GgufCancelled
                if source not in opened:
                    opened[source] = files.enter_context(safe_open(str(source), "pt"))
                tensor = opened[source].get_tensor(key).float().numpy()
                writer.write_tensor_data(_converted(tensor, key, arch, config, raw))
                if progress is not None:
                    progress(done, len(plan))
        writer.close()
        partial.replace(out)
    except BaseException:
        writer.close()
        partial.unlink(missing_ok=True)
        raise
    return GgufResult(out, out.stat().st_size, arch, quant, chat_template, eos_token)


class GgufCancelled(Exception):
    """The user cancelled between two tensors; nothing was left behind."""


def _config(model_dir: Path) -> dict[str, Any]:
    return json.loads((model_dir / "config.json").read_text(encoding="utf-8"))


def _rope(config: dict[str, Any]) -> dict[str, Any]:
    """The rotary settings: transformers 5 saves them as ``rope_parameters``, older configs (most on the
    hub) as ``rope_theta`` and ``rope_scaling``. A Qwen model saved by a run has only the first: read
    the old way, its base of 1,000,000 became llama.cpp's default 10,000, and long answers went wrong."""
    rope = dict(config.get("rope_parameters") or {})
    scaling = config.get("rope_scaling") or {}
    rope.setdefault("rope_theta", config.get("rope_theta"))
    rope.setdefault("rope_type", scaling.get("rope_type") or scaling.get("type") or "default")
    return rope


def _metadata(writer: Any, arch: str, config: dict[str, Any], model_dir: Path, quant: str) -> None:
    import gguf

    writer.add_name(model_dir.name)
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
    writer.add_context_length(config.get("max_position_embeddings", 2048))
    writer.add_embedding_length(hidden)
    writer.add_block_count(config["num_hidden_layers"])
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_head_count(heads)
    writer.add_head_count_kv(config.get("num_key_value_heads") or heads)
    writer.add_layer_norm_rms_eps(config.get("rms_norm_eps", 1e-6))
    writer.add_rope_freq_base(float(_rope(config).get("rope_theta") or 10000.0))
    writer.add_rope_dimension_count(config.get("head_dim") or hidden // heads)
    writer.add_vocab_size(config["vocab_size"])


def _tokenizer(writer: Any, model_dir: Path, pre: str) -> tuple[str, str]:
    """Tokens, their types, merges, special tokens and the chat template (byte-level BPE); returns the
    chat template and the end token."""
    import gguf
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    spec = json.loads((model_dir / "tokenizer.json").read_text(encoding="utf-8"))
    if spec.get("model", {}).get("type") != "BPE":
        raise InputError(
            msg(
                "GGUF export writes byte-level BPE tokenizers; this model's is {kind}.",
                kind=spec["model"]["type"],
            ),
            msg("Export it as a folder."),
        )
    vocab = tokenizer.get_vocab()
    size = max(max(vocab.values()) + 1, _config(model_dir).get("vocab_size") or 0)
    by_id = {i: t for t, i in vocab.items()}
    added = dict(getattr(tokenizer, "added_tokens_decoder", {}))  # id -> AddedToken
    tokens, types = [], []
    for i in range(size):
        token = by_id.get(i)
        if token is None:
            tokens.append(f"[PAD{i}]")
            types.append(gguf.TokenType.UNUSED)
        elif i in added:
            tokens.append(token)
            types.append(gguf.TokenType.CONTROL if added[i].special else gguf.TokenType.USER_DEFINED)
        else:
            tokens.append(token)
            types.append(gguf.TokenType.NORMAL)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre(pre)
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    merges = spec["model"].get("merges", [])
    writer.add_token_merges([m if isinstance(m, str) else " ".join(m) for m in merges])
    for kind in ("bos", "eos", "unk", "pad"):
        token_id = getattr(tokenizer, f"{kind}_token_id", None)
        if token_id is not None:
            getattr(writer, f"add_{kind}_token_id")(int(token_id))
    writer.add_add_bos_token(bool(getattr(tokenizer, "add_bos_token", False)))
    if getattr(tokenizer, "chat_template", None):
        writer.add_chat_template(tokenizer.chat_template)
    return tokenizer.chat_template or "", tokenizer.eos_token or ""


def _plan(model_dir: Path, arch: str, config: dict[str, Any], quant: str) -> Iterator[tuple]:
    """Each tensor to write, from the safetensors headers alone: (GGUF name, file, key, shape, numpy
    dtype, bytes, GGML type or ``None``)."""
    import gguf
    import numpy as np
    from safetensors import safe_open

    model_arch = {
        "llama": gguf.MODEL_ARCH.LLAMA,
        "qwen2": gguf.MODEL_ARCH.QWEN2,
        "gpt2": gguf.MODEL_ARCH.GPT2,
    }
    layers = config.get("num_hidden_layers") or config.get("n_layer")
    names = gguf.TensorNameMap(model_arch[arch], layers)
    for source in sorted(model_dir.glob("*.safetensors")):
        with safe_open(str(source), "pt") as tensors:
            for key in tensors.keys():  # noqa: SIM118  (a safetensors handle, not a dict)
                if key.endswith((".attn.bias", ".attn.masked_bias", "rotary_emb.inv_freq")):
                    continue  # buffers, not weights
                name = names.get_name(key, try_suffixes=(".weight", ".bias"))
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


def _converted(data: Any, key: str, arch: str, config: dict[str, Any], raw: Any) -> Any:
    """One tensor (float32, as the safetensors file has it) as the GGUF holds it: in llama.cpp's
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
