"""GGUF export: tiny models of each architecture written tensor by tensor and read back with gguf's reader,
then loaded by llama.cpp, whose answers and tokens must be transformers'.

The llama.cpp tests take the ``llama_cpp`` fixture (tests/conftest.py): without ``llama-cpp-python`` they
skip, saying so; CI installs it and sets ``FINETUNE_STUDIO_REQUIRE_LLAMA_CPP=1`` so that they fail there.
"""

from __future__ import annotations

import json
import shutil
import types
from pathlib import Path

import numpy as np
import pytest

from desktop.core.data.tasks.causal_lm import FALLBACK_CHAT_TEMPLATE
from desktop.core.results import gguf_check
from desktop.core.results.gguf_vocab import gguf_name
from desktop.core.results.gguf_writer import GgufCancelled, architecture_of, write_gguf
from desktop.core.system.errors import InputError
from tests.tiny_models import SPM_KINDS

KINDS = ["llama", "qwen2", "qwen3", "mistral", "phi3", "gemma2", "gemma3", "gpt2"]
ARCH = {"mistral": "llama"}  # kinds whose llama.cpp architecture has another name
EXTRA_TENSORS = {  # what each architecture has beyond the embeddings, norms and MLP
    "qwen3": {"blk.0.attn_q_norm.weight", "blk.0.attn_k_norm.weight"},
    "phi3": {"blk.0.attn_qkv.weight", "output.weight"},
    "gemma2": {"blk.0.post_attention_norm.weight", "blk.0.post_ffw_norm.weight"},
    "gemma3": {"blk.0.attn_q_norm.weight", "blk.0.post_ffw_norm.weight"},
}


@pytest.fixture
def models(tiny_gguf_models: dict[str, Path]) -> dict[str, Path]:
    return tiny_gguf_models


def _field(reader: object, key: str) -> object:
    field = reader.fields[key]
    return field.contents()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("quant", ["f16", "q8_0"])
def test_a_causal_lm_is_written_as_gguf_and_reads_back(
    models: dict, tmp_path: Path, kind: str, quant: str
) -> None:
    import gguf
    from safetensors import safe_open
    from transformers import AutoTokenizer

    folder = models[kind]
    arch = ARCH.get(kind, kind)
    done: list[tuple[int, int]] = []
    result = write_gguf(folder, tmp_path / "model.gguf", quant, progress=lambda i, n: done.append((i, n)))
    assert result.path.is_file() and not (tmp_path / "model.gguf.partial").exists()
    assert done[-1][0] == done[-1][1] == len(done)  # a step per tensor
    reader = gguf.GGUFReader(result.path)
    assert _field(reader, "general.architecture") == arch == result.architecture
    tensors = {t.name: t for t in reader.tensors}
    assert {"token_embd.weight", "output_norm.weight", "blk.1.ffn_down.weight"} | EXTRA_TENSORS.get(
        kind, set()
    ) <= set(tensors)
    tokens = _field(reader, "tokenizer.ggml.tokens")
    assert len(tokens) >= 600
    assert _field(reader, "tokenizer.ggml.model") == ("llama" if kind in SPM_KINDS else "gpt2")
    if kind != "gpt2":
        template = AutoTokenizer.from_pretrained(folder).chat_template
        assert _field(reader, "tokenizer.chat_template") == template == result.chat_template
        assert kind in SPM_KINDS or template == FALLBACK_CHAT_TEMPLATE
        assert _field(reader, f"{arch}.attention.head_count_kv") == 2
        base = {"qwen2": 1e6, "qwen3": 1e6, "gemma3": 1e6}.get(kind, 1e4)
        assert _field(reader, f"{arch}.rope.freq_base") == base
    down = tensors["blk.1.ffn_down.weight"]
    expected = gguf.GGMLQuantizationType.Q8_0 if quant == "q8_0" else gguf.GGMLQuantizationType.F16
    assert (
        down.tensor_type == expected
        and tensors["output_norm.weight"].tensor_type == gguf.GGMLQuantizationType.F32
    )
    key = {"gpt2": "transformer.h.1.mlp.c_proj.weight"}.get(kind, "model.layers.1.mlp.down_proj.weight")
    with safe_open(str(folder / "model.safetensors"), "pt") as weights:
        original = weights.get_tensor(key).float().numpy()
        norm = weights.get_tensor(
            "transformer.ln_f.weight" if kind == "gpt2" else "model.norm.weight"
        ).numpy()
    if kind == "gpt2":
        original = original.T  # Conv1D (in, out) as llama.cpp wants it (out, in)
    values = gguf.quants.dequantize(down.data, down.tensor_type).reshape(original.shape)
    tolerance = 0.01 * float(np.abs(original).max()) if quant == "q8_0" else 1e-3
    assert np.abs(values - original).max() <= tolerance
    shift = 1.0 if kind.startswith("gemma") else 0.0  # Gemma's norms multiply by (1 + weight)
    assert np.allclose(tensors["output_norm.weight"].data, norm + shift)


@pytest.mark.parametrize("kind", SPM_KINDS)
def test_a_sentencepiece_tokenizer_is_written_as_llama_cpps_llama_model(
    models: dict, tmp_path: Path, kind: str
):
    import gguf
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(models[kind])
    reader = gguf.GGUFReader(write_gguf(models[kind], tmp_path / "m.gguf").path)
    tokens = _field(reader, "tokenizer.ggml.tokens")
    types = _field(reader, "tokenizer.ggml.token_type")
    scores = _field(reader, "tokenizer.ggml.scores")
    assert (
        len(tokens)
        == len(types)
        == len(scores)
        == json.loads((models[kind] / "config.json").read_text())["vocab_size"]
    )
    assert tokens[tokenizer.convert_tokens_to_ids("<0x41>")] == "<0x41>"
    assert sum(t == gguf.TokenType.BYTE for t in types) == 256
    assert types[tokenizer.bos_token_id] == types[tokenizer.eos_token_id] == gguf.TokenType.CONTROL
    assert types[tokenizer.unk_token_id] == gguf.TokenType.UNKNOWN
    if kind == "phi3":  # padded to 64 rows: unused tokens past the tokenizer's
        assert types[-1] == gguf.TokenType.UNUSED and tokens[-1] == f"[PAD{len(tokens) - 1}]"
        assert "Phi-3" in _field(reader, "general.name")  # llama.cpp's rule for its chat tokens' rstrip
    # Merged tokens score by their merge's rank in tokenizer.json: earlier merges score higher.
    merges = json.loads(tokenizer.backend_tokenizer.to_str())["model"]["merges"]
    first, later = ("".join(merges[0]), "".join(merges[-1]))
    assert scores[tokenizer.convert_tokens_to_ids(first)] > scores[tokenizer.convert_tokens_to_ids(later)]
    assert _field(reader, "tokenizer.ggml.pre") == "default"
    assert _field(reader, "tokenizer.ggml.add_bos_token") is True
    assert _field(reader, "tokenizer.ggml.add_eos_token") is False
    assert _field(reader, "tokenizer.ggml.add_space_prefix") is (kind == "mistral")  # legacy: prefix always


def test_gemma_and_phi3_carry_what_llama_cpp_reads_beside_the_weights(models: dict, tmp_path: Path) -> None:
    import gguf

    def fields(kind: str) -> dict:
        reader = gguf.GGUFReader(write_gguf(models[kind], tmp_path / f"{kind}.gguf").path)
        return {
            key: field.contents() for key, field in reader.fields.items() if not key.startswith("tokenizer")
        }

    gemma2, gemma3, phi3, qwen3 = fields("gemma2"), fields("gemma3"), fields("phi3"), fields("qwen3")
    assert gemma2["gemma2.attn_logit_softcapping"] == 1.0 and gemma2["gemma2.final_logit_softcapping"] == 10.0
    assert gemma2["gemma2.attention.sliding_window"] == gemma3["gemma3.attention.sliding_window"] == 8
    assert gemma2["gemma2.attention.sliding_window_pattern"] == [True, False]  # layer 0 slides
    assert gemma3["gemma3.rope.freq_base_swa"] == 20_000.0 and gemma3["gemma3.rope.scaling.factor"] == 2.0
    assert gemma3["gemma3.rope.scaling.type"] == "linear"
    assert gemma3["gemma3.attention.key_length"] == 16 and qwen3["qwen3.attention.key_length"] == 32
    assert phi3["phi3.rope.scaling.original_context_length"] == 4096
    assert phi3["phi3.rope.dimension_count"] == 16


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


def _logit_difference(llama_cpp: types.ModuleType, gguf_path: Path, model_dir: Path, prompt: str) -> float:
    """llama.cpp's next-token logits at every position of a chat-templated ``prompt`` against
    transformers', the largest difference as a share of transformers' largest logit."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from desktop.core.data.tasks.causal_lm import ensure_chat_template

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    ensure_chat_template(tokenizer)
    chat = [{"role": "user", "content": prompt}]
    text = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    with torch.no_grad():
        expected = model(torch.tensor([ids])).logits[0].numpy()
    llama = llama_cpp.Llama(model_path=str(gguf_path), n_ctx=len(ids) + 8, logits_all=True, verbose=False)
    try:
        llama.eval(ids)
        got = np.array(llama.scores[: len(ids)])
    finally:
        llama.close()
    return float(np.abs(got - expected).max() / np.abs(expected).max())


@pytest.mark.parametrize("kind", KINDS)
def test_llama_cpp_answers_as_transformers_does(
    models: dict, tmp_path: Path, kind: str, llama_cpp: types.ModuleType
) -> None:
    """Greedy answers to five chat-templated prompts (English, Chinese, digits) for f16. A q8_0 file is
    held to its logits instead: a tiny random model's next tokens are near ties, which the rounding
    alone tips (2 to 5 of 5 answers agree); its logits stay within 4% of transformers' (f16: 0.2%),
    where a misplaced tensor is off by the whole scale."""
    f16 = write_gguf(models[kind], tmp_path / "f16.gguf", "f16").path
    checks = gguf_check.compare(f16, models[kind], list(gguf_check.FALLBACK_PROMPTS))
    agreeing = sum(check.agrees for check in checks)
    assert agreeing >= gguf_check.REQUIRED["f16"], [check.first_difference for check in checks]
    prompt = "用一句话介绍你自己。 Hello!  Who are you?"
    assert _logit_difference(llama_cpp, f16, models[kind], prompt) < 0.01
    q8_0 = write_gguf(models[kind], tmp_path / "q8_0.gguf", "q8_0").path
    assert _logit_difference(llama_cpp, q8_0, models[kind], prompt) < 0.06


CHATS = [
    [{"role": "user", "content": "Hello!  Who are you?\nTell me 3 things, 1234 in all."}],
    [
        {"role": "user", "content": "用一句话介绍你自己。 這部電影很好看！"},
        {"role": "assistant", "content": "我是一个模型 — fine, thanks."},
        {"role": "user", "content": "再见, bye"},
    ],
]


@pytest.mark.parametrize("kind", SPM_KINDS)
def test_llama_cpp_tokenizes_a_chat_as_transformers_does(
    models: dict, tmp_path: Path, kind: str, llama_cpp: types.ModuleType
) -> None:
    """Chat-templated English and Chinese (rare characters fall back to bytes), with a system prompt where
    the template takes one: the ids llama.cpp makes of the text are transformers'."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(models[kind])
    llama = llama_cpp.Llama(
        model_path=str(write_gguf(models[kind], tmp_path / "m.gguf").path), vocab_only=True, verbose=False
    )
    try:
        for chat in CHATS:
            if kind in ("phi3", "gemma3"):
                chat = [{"role": "system", "content": "Answer  briefly."}, *chat]
            text = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
            expected = tokenizer(text, add_special_tokens=False)["input_ids"]
            assert tokenizer.unk_token_id not in expected and any(
                t.startswith("<0x") for t in tokenizer.convert_ids_to_tokens(expected)
            )
            got = llama.tokenize(text.encode(), add_bos=False, special=True)
            assert got == expected, (
                tokenizer.convert_ids_to_tokens(expected),
                tokenizer.convert_ids_to_tokens(got),
            )
    finally:
        llama.close()


def _with_config(model: Path, folder: Path, **changes: object) -> Path:
    """The config and tokenizer of ``model`` (what ``architecture_of`` reads), with ``changes``."""
    folder.mkdir()
    config = json.loads((model / "config.json").read_text(encoding="utf-8"))
    (folder / "config.json").write_text(json.dumps({**config, **changes}), encoding="utf-8")
    shutil.copy2(model / "tokenizer.json", folder / "tokenizer.json")
    return folder


def test_what_llama_cpp_would_run_differently_is_refused_with_a_reason(models: dict, tmp_path: Path) -> None:
    scaled = _with_config(models["gemma2"], tmp_path / "a", query_pre_attn_scalar=256)
    with pytest.raises(InputError, match=r"by 1/sqrt\(16\), transformers by 1/sqrt\(256\)"):
        architecture_of(scaled)
    longrope = {"rope_type": "longrope", "short_factor": [1.0] * 8, "long_factor": [2.0] * 8}
    with pytest.raises(InputError, match=r"rope scaling \(longrope\)"):
        architecture_of(
            _with_config(models["phi3"], tmp_path / "b", rope_scaling=longrope, rope_parameters=None)
        )
    byte_level = _with_config(models["gemma2"], tmp_path / "c")
    shutil.copy2(models["gpt2"] / "tokenizer.json", byte_level / "tokenizer.json")
    with pytest.raises(InputError, match="Gemma2ForCausalLM models with a SentencePiece tokenizer"):
        architecture_of(byte_level)
    assert architecture_of(models["mistral"]) == ("llama", "default")
    assert architecture_of(models["qwen3"]) == ("qwen3", "qwen2")


def test_the_name_says_phi_3_exactly_when_the_special_tokens_eat_the_whitespace_after_them() -> None:
    assert gguf_name("run-7", "phi3", rstrips_specials=True) == "run-7 (Phi-3)"
    assert gguf_name("my-phi-3-run", "phi3", rstrips_specials=True) == "my-phi-3-run"
    assert gguf_name("phi3-copy", "llama", rstrips_specials=False) == "Phi 3-copy"
    assert gguf_name("run-7", "gemma2", rstrips_specials=False) == "run-7"


def test_llama_3_1s_rope_scaling_travels_as_llama_cpps_rotary_factors(
    tiny_gpt2: Path, tmp_path: Path, llama_cpp: types.ModuleType
) -> None:
    """Llama 3.1, 3.2 and 3.3 stretch their low rotary frequencies ("llama3" rope): the file carries the
    factors (``rope_freqs.weight``). Without them this model's logits are 0.76% off; with them, 0.06%."""
    import gguf
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig

    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2)
    tokenizer.chat_template = FALLBACK_CHAT_TEMPLATE
    rope = {"rope_type": "llama3", "rope_theta": 10000.0, "factor": 8.0, "low_freq_factor": 1.0}
    rope |= {"high_freq_factor": 4.0, "original_max_position_embeddings": 16}  # short: every factor shows
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        rope_parameters=rope,
    )
    torch.manual_seed(0)
    AutoModelForCausalLM.from_config(config).save_pretrained(tmp_path / "llama3")
    tokenizer.save_pretrained(tmp_path / "llama3")
    written = write_gguf(tmp_path / "llama3", tmp_path / "m.gguf").path
    factors = {t.name: t for t in gguf.GGUFReader(written).tensors}["rope_freqs.weight"]
    assert factors.data[-1] == 8.0 and factors.data[0] < 2.0  # the lowest frequencies / 8, the highest ~kept
    assert np.all(np.diff(factors.data) >= 0)
    prompt = "Please translate: My friend loves coffee and tea every morning, and so do I."
    assert _logit_difference(llama_cpp, written, tmp_path / "llama3", prompt) < 0.002


def test_gemma_3_4b_and_up_are_written_as_their_text_model(
    models: dict, tmp_path: Path, llama_cpp: types.ModuleType
) -> None:
    """Gemma 3 4B and larger are text-and-image models: the GGUF holds the text model (the image side is
    llama.cpp's separate mmproj file), and llama.cpp answers as transformers does."""
    import gguf

    folder = models["gemma3-vision"]
    written = write_gguf(folder, tmp_path / "model.gguf").path
    reader = gguf.GGUFReader(written)
    names = {t.name for t in reader.tensors}
    text_only = {
        t.name for t in gguf.GGUFReader(write_gguf(models["gemma3"], tmp_path / "text.gguf").path).tensors
    }
    assert _field(reader, "general.architecture") == "gemma3" and names == text_only
    assert _field(reader, "gemma3.block_count") == 2 and _field(reader, "gemma3.embedding_length") == 64
    checks = gguf_check.compare(written, folder, list(gguf_check.FALLBACK_PROMPTS))
    assert sum(check.agrees for check in checks) >= gguf_check.REQUIRED["f16"]
    assert _logit_difference(llama_cpp, written, folder, "用一句话介绍你自己。 Hello!  Who are you?") < 0.01


def test_a_qlora_runs_quantized_model_is_refused_before_anything_is_written(
    models: dict, tmp_path: Path
) -> None:
    folder = tmp_path / "qlora"
    shutil.copytree(models["llama"], folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config["quantization_config"] = {"quant_method": "bitsandbytes", "load_in_4bit": True}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(InputError, match=r"saved quantized \(bitsandbytes\)"):
        write_gguf(folder, tmp_path / "out" / "model.gguf")
    assert not (tmp_path / "out").exists()
