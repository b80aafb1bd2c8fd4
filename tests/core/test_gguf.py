"""GGUF export: tiny Llama, Qwen2 and GPT-2 written tensor by tensor and read back with gguf's reader."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from desktop.core.data.tasks.causal_lm import FALLBACK_CHAT_TEMPLATE
from desktop.core.results.gguf_writer import GgufCancelled, architecture_of, write_gguf
from desktop.core.system.errors import InputError


@pytest.fixture
def models(tiny_chat_models: dict[str, Path]) -> dict[str, Path]:
    return tiny_chat_models


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
