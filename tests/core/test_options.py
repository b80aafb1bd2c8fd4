"""Memory and speed options: refused when this machine cannot run them, and in effect when it can."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from desktop.core.settings.config import RunConfig
from desktop.core.settings.options import Capabilities, resolve
from desktop.core.system.errors import ConfigError
from desktop.core.training.callbacks import EventCallback
from desktop.core.training.run import run_training
from tests.core.helpers import Recorder, make_config

GPU = Capabilities(cuda=True, bf16=True, bitsandbytes=True, triton=True, flash_attn=True, windows=False)
OLD_GPU = Capabilities(cuda=True, bf16=False, triton=True)
CPU = Capabilities()


def _config(**performance: object) -> RunConfig:
    config = RunConfig()
    for key, value in performance.items():
        setattr(config.performance, key, value)
    return config


@pytest.mark.parametrize(("caps", "precision"), [(GPU, "bf16"), (OLD_GPU, "fp16"), (CPU, "fp32")])
def test_auto_precision(caps: Capabilities, precision: str) -> None:
    args = resolve(_config(), caps).training_args
    assert (args["bf16"], args["fp16"]) == (precision == "bf16", precision == "fp16")


def test_options_map_to_transformers_names() -> None:
    config = _config(
        optimizer="adamw_bnb_8bit",
        gradient_checkpointing=True,
        pin_memory=True,
        dataloader_workers=2,
        empty_cache_steps=50,
        torch_compile=True,
        compile_backend="inductor",
        attention="sdpa",
    )
    resolved = resolve(config, GPU)
    assert resolved.training_args == {
        "bf16": True,
        "fp16": False,
        "optim": "adamw_bnb_8bit",
        "gradient_checkpointing": True,
        "gradient_checkpointing_kwargs": {"use_reentrant": False},
        "dataloader_pin_memory": True,
        "dataloader_num_workers": 2,
        "torch_empty_cache_steps": 50,
        "torch_compile": True,
        "torch_compile_backend": "inductor",
        "use_liger_kernel": False,
        "report_to": "none",
    }
    assert resolved.model_kwargs == {"attn_implementation": "sdpa"}
    assert (
        resolve(_config(), CPU).training_args["dataloader_pin_memory"] is False
    )  # nothing to pin for on CPU


@pytest.mark.parametrize(
    ("options", "caps", "field", "words"),
    [
        ({"precision": "fp16"}, CPU, "performance.precision", "needs a CUDA GPU"),
        ({"precision": "bf16"}, OLD_GPU, "performance.precision", "cannot compute in bf16"),
        ({"optimizer": "adamw_bnb_8bit"}, OLD_GPU, "performance.optimizer", "bitsandbytes"),
        (
            {"torch_compile": True},
            Capabilities(cuda=True, windows=True),
            "performance.compile_backend",
            "no Windows builds",
        ),
        ({"attention": "flash_attention_2"}, OLD_GPU, "performance.attention", "flash-attn"),
        ({"liger_kernel": True}, CPU, "performance.liger_kernel", "NVIDIA GPU only"),
        (
            {"liger_kernel": True},
            Capabilities(cuda=True, windows=True, liger=True),
            "performance.liger_kernel",
            "pip install triton-windows",
        ),
        (
            {"liger_kernel": True},
            Capabilities(cuda=True, triton=True),
            "performance.liger_kernel",
            "liger-kernel",
        ),
    ],
)
def test_impossible_options_are_refused_with_the_reason(
    options: dict, caps: Capabilities, field: str, words: str
) -> None:
    with pytest.raises(ConfigError) as info:
        resolve(_config(**options), caps)
    assert [p.field for p in info.value.problems] == [field] and words in info.value.problems[0].message


def test_fp16_on_this_cpu_machine_stops_before_a_run_folder(
    tiny_bert: Path, samples: Path, tmp_path: Path
) -> None:
    config = make_config("classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs")
    config.performance.precision = "fp16"
    result = run_training(config, Recorder().append)
    assert result.status == "invalid" and "needs a CUDA GPU" in result.failure.reason
    assert not (tmp_path / "runs").exists()


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> dict:
    """What the Trainer actually used, captured when training begins."""
    captured: dict = {}
    original = EventCallback.on_train_begin

    def spy(self, args, state, control, **kwargs):
        model = kwargs["model"]
        captured.update(
            args=args,
            model=model,
            optimizer=kwargs.get("optimizer"),
            trainable=sum(p.numel() for p in model.parameters() if p.requires_grad),
            total=sum(p.numel() for p in model.parameters()),
        )
        return original(self, args, state, control, **kwargs)

    monkeypatch.setattr(EventCallback, "on_train_begin", spy)
    return captured


def test_checkpointing_adafactor_and_empty_cache_take_effect(
    tiny_bert: Path, samples: Path, tmp_path: Path, seen: dict
) -> None:
    config = make_config(
        "classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs", max_steps=4
    )
    config.performance.gradient_checkpointing = True
    config.performance.optimizer = "adafactor"
    config.performance.empty_cache_steps = 2
    result = run_training(config, Recorder().append)

    assert result.status == "finished", result.failure
    assert seen["model"].is_activation_checkpointing
    assert (
        type(
            seen["optimizer"].optimizer if hasattr(seen["optimizer"], "optimizer") else seen["optimizer"]
        ).__name__
        == "Adafactor"
    )
    assert seen["args"].torch_empty_cache_steps == 2


@pytest.mark.slow
def test_compile_with_the_eager_backend(tiny_bert: Path, samples: Path, tmp_path: Path, seen: dict) -> None:
    config = make_config(
        "classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs", max_steps=3
    )
    config.performance.torch_compile = True
    config.performance.compile_backend = "eager"
    result = run_training(config, Recorder().append)
    assert result.status == "finished", result.failure
    assert seen["args"].torch_compile and seen["args"].torch_compile_backend == "eager"


def test_lora_trains_adapters_and_saves_a_merged_model(
    tiny_gpt2: Path, samples: Path, tmp_path: Path, seen: dict
) -> None:
    from transformers import AutoModelForCausalLM

    config = make_config(
        "causal-lm", tiny_gpt2, [samples / "instructions.jsonl"], tmp_path / "runs", max_steps=6
    )
    config.lora.enabled = True
    config.lora.rank = 4
    result = run_training(config, Recorder().append)

    assert result.status == "finished", result.failure
    assert 0 < seen["trainable"] < seen["total"] / 5
    assert (Path(result.run_dir) / "adapter" / "adapter_config.json").is_file()
    merged = AutoModelForCausalLM.from_pretrained(result.model_dir)  # a plain model: LoRA merged in
    assert not any("lora" in name for name, _ in merged.named_parameters())


def test_lora_targets_are_found_in_each_model_family(tiny_gpt2: Path, tiny_bert: Path, tiny_t5: Path) -> None:
    from transformers import AutoModel, AutoModelForCausalLM, AutoModelForSeq2SeqLM

    from desktop.core.settings.options import find_target_modules

    assert find_target_modules(AutoModelForCausalLM.from_pretrained(tiny_gpt2)) == [
        "c_attn",
        "c_fc",
        "c_proj",
    ]
    bert = find_target_modules(AutoModel.from_pretrained(tiny_bert))
    assert {"query", "key", "value"} <= set(bert) and "pooler" not in bert
    t5 = find_target_modules(AutoModelForSeq2SeqLM.from_pretrained(tiny_t5))
    assert {"q", "k", "v", "o", "wi", "wo"} <= set(t5) and "lm_head" not in t5


def test_qlora_needs_a_gpu_and_bitsandbytes_and_loads_the_base_in_4_bits() -> None:
    config = _config()
    config.lora.qlora = True
    with pytest.raises(ConfigError, match="QLoRA needs a CUDA GPU"):
        resolve(config, CPU)
    from desktop.core.settings.options import model_kwargs

    resolved = resolve(config, GPU)
    quant = model_kwargs(resolved)["quantization_config"]
    assert quant.load_in_4bit and quant.bnb_4bit_quant_type == "nf4"
    assert str(quant.bnb_4bit_compute_dtype) == "torch.bfloat16"


def test_qlora_estimate_counts_half_a_byte_per_frozen_weight(tiny_gpt2: Path) -> None:
    from desktop.core.hub.fit import shapes_for_config
    from desktop.core.settings.memory import estimate

    config = make_config("causal-lm", tiny_gpt2, [], Path("."))
    config.lora.enabled = True
    shapes = shapes_for_config(config)
    lora_weights = estimate(shapes, config).weights
    config.lora.qlora = True
    frozen = shapes.num_parameters - shapes.num_trainable
    assert (
        estimate(shapes, config).weights == int(0.5 * 1.03 * frozen) + 4 * shapes.num_trainable < lora_weights
    )


def test_experiment_trackers_only_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    config = _config()
    config.output.report_to = ["tensorboard"]
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "tensorboard" else real(name, *a)
    )
    with pytest.raises(ConfigError, match="tensorboard is not installed"):
        resolve(config, CPU)
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: object() if name == "tensorboard" else real(name, *a)
    )
    assert resolve(config, CPU).training_args["report_to"] == ["tensorboard"]
    config.output.report_to = ["wandb"]
    with pytest.raises(ConfigError, match="not supported"):
        resolve(config, CPU)


def test_inductor_on_a_windows_cpu_without_a_compiler_is_refused() -> None:
    config = RunConfig(task="causal-lm")
    config.performance.torch_compile, config.performance.compile_backend = True, "inductor"
    with pytest.raises(ConfigError, match=r"cl\.exe"):
        resolve(config, Capabilities(windows=True, cpp_compiler=False))
    config.performance.compile_backend = "aot_eager"
    resolve(config, Capabilities(windows=True, cpp_compiler=False))  # this one needs no compiler


def test_the_seq2seq_collator_can_go_to_data_loader_workers(
    tiny_t5: Path, samples: Path, tmp_path: Path
) -> None:
    import pickle

    from desktop.core.data.checks import load_and_check
    from desktop.core.data.tasks import seq2seq
    from desktop.core.hub.models import load_tokenizer

    config = make_config("seq2seq", tiny_t5, [samples / "translation.tsv"], tmp_path / "runs")
    checked = load_and_check(config)
    tokenizer = load_tokenizer(config.model)
    task = seq2seq.prepare(config, tokenizer, checked.train, checked.eval, checked.guess.columns)
    collator = pickle.loads(pickle.dumps(task.collator))  # Windows spawns workers: everything is pickled
    batch = collator(task.train[:2])
    assert "decoder_input_ids" not in batch  # the model makes them from the labels
    loss = task.model(**batch).loss
    assert loss.isfinite() and loss.item() > 0


def test_a_package_installed_by_a_repair_is_seen_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desktop.core.settings.options import forget_installed, installed

    monkeypatch.syspath_prepend(str(tmp_path))
    assert not installed("studio_fake_bitsandbytes")
    (tmp_path / "studio_fake_bitsandbytes.py").write_text("", encoding="utf-8")  # the repair installs it
    importlib.invalidate_caches()
    assert not installed("studio_fake_bitsandbytes")  # looked up once per process
    forget_installed()  # what the repair's end does
    assert installed("studio_fake_bitsandbytes")
    forget_installed()


def test_liger_kernels_reach_the_trainer_and_the_fastest_preset_where_they_run() -> None:
    from desktop.core.settings.presets import apply_preset

    ready = Capabilities(cuda=True, bf16=True, triton=True, liger=True)
    assert resolve(_config(liger_kernel=True), ready).training_args["use_liger_kernel"] is True
    assert resolve(_config(), ready).training_args["use_liger_kernel"] is False
    assert apply_preset(_config(), "fastest", ready).config.performance.liger_kernel
    for caps in (
        CPU,
        Capabilities(cuda=True, triton=True),
        Capabilities(cuda=True, liger=True, windows=True),
    ):
        assert not apply_preset(_config(), "fastest", caps).config.performance.liger_kernel  # refused there
