"""GGUF export: tiny Llama, Qwen2 and GPT-2 written tensor by tensor and read back with gguf's reader."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from desktop.core.data.tasks.causal_lm import FALLBACK_CHAT_TEMPLATE
from desktop.core.results.gguf_writer import GgufCancelled, architecture_of, write_gguf
from desktop.core.system.errors import InputError


def _tiny(kind: str, tokenizer_dir: Path, folder: Path) -> Path:
    """A random 2-layer ``kind`` model with the tiny GPT-2 tokenizer (byte-level BPE) and a chat template."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, Qwen2Config

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    tokenizer.chat_template = FALLBACK_CHAT_TEMPLATE
    sizes = {
        "vocab_size": len(tokenizer),
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
    }
    heads = {"num_attention_heads": 4, "num_key_value_heads": 2, "tie_word_embeddings": kind == "qwen2"}
    heads["rope_theta"] = 1_000_000.0 if kind == "qwen2" else 10_000.0  # saved as rope_parameters
    config = (LlamaConfig if kind == "llama" else Qwen2Config)(**sizes, **heads)
    torch.manual_seed(0)
    AutoModelForCausalLM.from_config(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def models(tiny_gpt2: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    gpt2 = tmp_path_factory.mktemp("gpt2")
    shutil.copytree(tiny_gpt2, gpt2, dirs_exist_ok=True)
    return {
        "gpt2": gpt2,
        "llama": _tiny("llama", tiny_gpt2, tmp_path_factory.mktemp("llama")),
        "qwen2": _tiny("qwen2", tiny_gpt2, tmp_path_factory.mktemp("qwen2")),
    }


def _field(reader: object, key: str) -> object:
    field = reader.fields[key]
    return field.contents()


@pytest.mark.parametrize("kind", ["llama", "qwen2", "gpt2"])
@pytest.mark.parametrize("quant", ["f16", "q8_0"])
def test_a_causal_lm_is_written_as_gguf_and_reads_back(
    models: dict, tmp_path: Path, kind: str, quant: str
) -> None:
    import gguf
    from safetensors import safe_open

    folder = models[kind]
    done: list[tuple[int, int]] = []
    result = write_gguf(folder, tmp_path / "model.gguf", quant, progress=lambda i, n: done.append((i, n)))
    assert result.path.is_file() and not (tmp_path / "model.gguf.partial").exists()
    assert done[-1][0] == done[-1][1] == len(done)  # a step per tensor
    reader = gguf.GGUFReader(result.path)
    assert _field(reader, "general.architecture") == kind
    tensors = {t.name: t for t in reader.tensors}
    assert {"token_embd.weight", "output_norm.weight", "blk.1.ffn_down.weight"} <= set(tensors)
    tokens = _field(reader, "tokenizer.ggml.tokens")
    assert len(tokens) >= 600 and _field(reader, "tokenizer.ggml.model") == "gpt2"
    if kind != "gpt2":
        assert _field(reader, "tokenizer.chat_template") == FALLBACK_CHAT_TEMPLATE
        assert _field(reader, f"{kind}.attention.head_count_kv") == 2
        assert _field(reader, f"{kind}.rope.freq_base") == (1e6 if kind == "qwen2" else 1e4)
    down = tensors["blk.1.ffn_down.weight"]
    expected = gguf.GGMLQuantizationType.Q8_0 if quant == "q8_0" else gguf.GGMLQuantizationType.F16
    assert (
        down.tensor_type == expected
        and tensors["output_norm.weight"].tensor_type == gguf.GGMLQuantizationType.F32
    )
    key = {"gpt2": "transformer.h.1.mlp.c_proj.weight"}.get(kind, "model.layers.1.mlp.down_proj.weight")
    with safe_open(str(folder / "model.safetensors"), "pt") as weights:
        original = weights.get_tensor(key).float().numpy()
    if kind == "gpt2":
        original = original.T  # Conv1D (in, out) as llama.cpp wants it (out, in)
    values = gguf.quants.dequantize(down.data, down.tensor_type).reshape(original.shape)
    tolerance = 0.01 * float(np.abs(original).max()) if quant == "q8_0" else 1e-3
    assert np.abs(values - original).max() <= tolerance


def test_other_architectures_are_refused_by_name_before_anything_is_written(
    tiny_bert: Path, tmp_path: Path
) -> None:
    with pytest.raises(InputError, match="does not know the BertModel architecture"):
        architecture_of(tiny_bert)
    with pytest.raises(InputError):
        write_gguf(tiny_bert, tmp_path / "model.gguf")
    assert list(tmp_path.iterdir()) == []


def test_a_cancelled_export_leaves_nothing_behind(models: dict, tmp_path: Path) -> None:
    with pytest.raises(GgufCancelled):
        write_gguf(models["llama"], tmp_path / "model.gguf", cancelled=lambda: True)
    assert list(tmp_path.iterdir()) == []


def test_the_llama_cpp_check_says_where_the_answers_part(models: dict, tmp_path: Path, monkeypatch) -> None:
    """With a stand-in for llama.cpp's binding (not installed here): its tokens against transformers'."""
    import sys
    import types

    from desktop.core.results.gguf_check import compare

    answers: list[list[int]] = []

    class FakeLlama:
        def __init__(self, model_path: str, **kwargs: object) -> None:
            assert Path(model_path).is_file()

        def reset(self) -> None:
            pass

        def token_eos(self) -> int:
            return -1

        def generate(self, ids: list[int], **kwargs: object):
            yield from answers.pop(0) if answers else []

    monkeypatch.setitem(sys.modules, "llama_cpp", types.SimpleNamespace(Llama=FakeLlama))
    gguf_file = write_gguf(models["llama"], tmp_path / "m.gguf").path
    (first,) = compare(gguf_file, models["llama"], ["Hi"], tokens=4)  # transformers' answer, nothing back
    assert len(first.expected) == 4 and first.got == [] and first.first_difference == 0
    answers.extend([list(first.expected), [*first.expected[:2], 99999, 7]])
    same, parted = compare(gguf_file, models["llama"], ["Hi", "Hi"], tokens=4)
    assert same.agrees and same.first_difference is None
    assert not parted.agrees and parted.first_difference == 2


def test_only_the_exports_own_partial_file_is_ever_deleted(models: dict, tmp_path: Path) -> None:
    import os

    theirs = tmp_path / "model.gguf.partial"  # another program's, or an older export's: not ours to delete
    theirs.write_bytes(b"keep")
    with pytest.raises(GgufCancelled):
        write_gguf(models["llama"], tmp_path / "model.gguf", cancelled=lambda: True)
    assert (
        sorted(p.name for p in tmp_path.iterdir()) == ["model.gguf.partial"]
        and theirs.read_bytes() == b"keep"
    )
    ours = tmp_path / f"model.gguf.{os.getpid()}.partial"
    ours.write_bytes(b"in the way")
    with pytest.raises(InputError, match="in the way of the export"):
        write_gguf(models["llama"], tmp_path / "model.gguf")
    assert ours.read_bytes() == b"in the way"  # refused, not overwritten
