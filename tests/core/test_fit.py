"""The fit badge from a config.json alone: what a GPU (or the RAM) can train, and what LoRA/QLoRA change."""

from __future__ import annotations

import pytest

from desktop.core.hub.fit import fit
from desktop.core.settings.config import RunConfig

GB = 2**30


def _llama(hidden: int, layers: int, intermediate: int) -> dict:
    return {
        "model_type": "llama",
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "intermediate_size": intermediate,
        "num_attention_heads": hidden // 128,
        "num_key_value_heads": hidden // 128,
        "vocab_size": 32000,
    }


def _config() -> RunConfig:
    config = RunConfig(task="causal-lm")
    config.training.batch_size, config.training.max_length = 1, 512
    config.performance.gradient_checkpointing = True
    return config


def test_a_7b_model_on_a_24_gb_gpu_fits_only_with_qlora() -> None:
    result = fit(_llama(4096, 32, 11008), _config(), gpu_free=24 * GB, ram_available=64 * GB)
    assert 6.5e9 < result.parameters < 7e9
    assert (result.verdict, result.with_lora, result.with_qlora) == ("will not fit", "will not fit", "fits")
    assert result.badge == "fits with QLoRA"


def test_a_1b_model_on_a_12_gb_gpu_fits_with_lora() -> None:
    result = fit(_llama(2048, 16, 5632), _config(), gpu_free=12 * GB, ram_available=64 * GB)
    assert result.verdict == "will not fit" and result.badge == "fits with LoRA"


def test_without_an_nvidia_gpu_it_is_ram_and_a_rough_time_per_epoch() -> None:
    small = {
        "model_type": "bert",
        "hidden_size": 256,
        "num_hidden_layers": 4,
        "num_attention_heads": 4,
        "intermediate_size": 1024,
        "vocab_size": 21128,
    }
    config = RunConfig(task="classification")
    result = fit(small, config, gpu_free=None, ram_available=8 * GB, rows=10_000)
    assert not result.on_gpu and result.available == 8 * GB and result.badge == "fits"
    assert result.epoch_s == pytest.approx(
        6 * result.parameters * 10_000 * config.training.max_length / (15e9 * __import__("os").cpu_count())
    )
