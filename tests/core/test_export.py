"""Export: a complete folder that reloads with the same outputs, written all or nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from desktop.core.errors import InputError
from desktop.core.export import export_run, verify_export
from desktop.core.runs import RunDir
from desktop.core.training import run_training
from tests.core.helpers import Recorder, make_config

TASKS = [
    ("classification", "tiny_bert", "reviews.csv"),
    ("causal-lm", "tiny_gpt2", "instructions.jsonl"),
    ("seq2seq", "tiny_t5", "translation.tsv"),
]


def _finished_run(
    request: pytest.FixtureRequest, task: str, fixture: str, data: str, tmp_path: Path, **extra: object
) -> RunDir:
    samples = Path(__file__).resolve().parents[2] / "resources" / "samples"
    config = make_config(
        task, request.getfixturevalue(fixture), [samples / data], tmp_path / "runs", max_steps=6
    )
    for key, value in extra.items():
        section, name = key.split("__")
        setattr(getattr(config, section), name, value)
    result = run_training(config, Recorder().append)
    assert result.status == "finished", result.failure
    return RunDir(result.run_dir)


@pytest.mark.parametrize(("task", "fixture", "data"), TASKS)
def test_export_reloads_with_the_same_outputs(
    request, task: str, fixture: str, data: str, tmp_path: Path
) -> None:
    run = _finished_run(request, task, fixture, data, tmp_path)
    result = export_run(run, tmp_path / "export", archive=True)

    folder = result.folder
    assert (folder / "model.safetensors").is_file() and (folder / "config.json").is_file()
    assert (folder / "tokenizer.json").is_file() and (folder / "finetune-studio-config.toml").is_file()
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "## Results" in card and "from_pretrained" in card and "finetune-studio-cli train" in card
    assert (folder / "loss.png").read_bytes().startswith(b"\x89PNG")
    assert result.verification.ok and result.verification.max_abs_diff < 1e-4 and result.verification.examples
    assert result.archive is not None and result.archive.is_file()
    if task != "classification":
        assert (folder / "generation_config.json").is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".export.partial")]


def test_fp16_export_halves_the_weights(request, tmp_path: Path) -> None:
    run = _finished_run(request, "classification", "tiny_bert", "reviews.csv", tmp_path)
    full = export_run(run, tmp_path / "fp32", verify=False).folder
    half = export_run(run, tmp_path / "fp16", dtype="fp16").folder
    ratio = (half / "model.safetensors").stat().st_size / (full / "model.safetensors").stat().st_size
    assert 0.45 < ratio < 0.6


def test_merged_lora_matches_the_unmerged_model(request, tmp_path: Path) -> None:
    import torch
    from peft import AutoPeftModelForCausalLM
    from transformers import AutoModelForCausalLM, AutoTokenizer

    run = _finished_run(request, "causal-lm", "tiny_gpt2", "instructions.jsonl", tmp_path, lora__enabled=True)
    merged = export_run(run, tmp_path / "merged").folder
    adapter = export_run(run, tmp_path / "adapter", lora="adapter").folder
    assert (adapter / "adapter_config.json").is_file() and not (adapter / "model.safetensors").exists()
    tokenizer = AutoTokenizer.from_pretrained(merged)
    inputs = tokenizer("What is the capital of Japan?", return_tensors="pt")
    with torch.no_grad():
        a = AutoModelForCausalLM.from_pretrained(merged)(**inputs).logits
        b = AutoPeftModelForCausalLM.from_pretrained(adapter)(**inputs).logits
    assert (a - b).abs().max().item() < 1e-4


def test_failure_mid_write_leaves_nothing(request, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = _finished_run(request, "classification", "tiny_bert", "reviews.csv", tmp_path)

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError("simulated write error")

    monkeypatch.setattr("desktop.core.export._model_card", broken)
    with pytest.raises(OSError, match="simulated"):
        export_run(run, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert not [p for p in tmp_path.iterdir() if ".partial" in p.name]


def test_disk_space_and_overwrite_are_checked_first(
    request, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _finished_run(request, "classification", "tiny_bert", "reviews.csv", tmp_path)
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "keep.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(InputError, match="is not empty"):
        export_run(run, tmp_path / "taken")
    assert (tmp_path / "taken" / "keep.txt").read_text(encoding="utf-8") == "mine"

    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage._replace(free=1000))
    with pytest.raises(InputError, match="Not enough disk space") as info:
        export_run(run, tmp_path / "new")
    assert "another folder" in info.value.hint and not (tmp_path / "new").exists()


def test_verification_notices_a_different_model(request, tmp_path: Path) -> None:
    run = _finished_run(request, "classification", "tiny_bert", "reviews.csv", tmp_path)
    other = tmp_path / "other-runs"
    second = _finished_run(
        request, "classification", "tiny_bert", "reviews.csv", other, training__learning_rate=0.05
    )
    check = verify_export(run, second.model_dir, "classification", ["good", "bad"])
    assert not check.ok and check.max_abs_diff > 1e-2
