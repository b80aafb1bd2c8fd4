"""Export: a complete folder that reloads with the same outputs, written all or nothing."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from desktop.core.results import reload_check
from desktop.core.results.export import ExportCancelled, export_run, verify_export
from desktop.core.runs.folders import RunDir
from desktop.core.system.errors import InputError
from desktop.core.training.run import run_training
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


@pytest.mark.slow
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
    # The card carries the run's evaluation, base model -> fine-tuned.
    assert "## Evaluation" in card and "| | base model | fine-tuned |" in card
    if task == "classification":
        assert "| label | precision | recall | F1 | rows |" in card and "](confusion_matrix.svg)" in card
        svg = (folder / "confusion_matrix.svg").read_text(encoding="utf-8")
        assert svg.startswith("<svg") and svg.count("<rect") == 1 + 2 * 2  # background and 2 x 2 cells
    else:
        assert "| perplexity |" in card and "| prompt | reference | answer |" in card
    if task == "seq2seq":
        assert "| BLEU |" in card and "| chrF |" in card
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".export.partial")]

    # A fresh, isolated Python that never imports this app loads the folder and agrees with the run.
    script = Path(reload_check.__file__)
    code = (
        "import json, runpy, sys; sys.argv = sys.argv[1:]; "
        "runpy.run_path(sys.argv[0], run_name='__main__'); "
        "assert not [m for m in sys.modules if m.split('.')[0] == 'desktop'], 'imported the app'"
    )
    texts = ["Great value, works well.", "不好用"]
    done = subprocess.run(
        [sys.executable, "-I", "-c", code, str(script), str(folder), task, json.dumps(texts)],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    fresh = json.loads(done.stdout.strip().splitlines()[-1])
    here = reload_check.output_logits(run.model_dir, task, texts)
    assert max(abs(a - b) for x, y in zip(fresh, here, strict=True) for a, b in zip(x, y, strict=True)) < 1e-4


@pytest.mark.slow
def test_fp16_export_halves_the_weights(request, tmp_path: Path) -> None:
    run = _finished_run(request, "classification", "tiny_bert", "reviews.csv", tmp_path)
    full = export_run(run, tmp_path / "fp32", verify=False).folder
    half = export_run(run, tmp_path / "fp16", dtype="fp16").folder
    ratio = (half / "model.safetensors").stat().st_size / (full / "model.safetensors").stat().st_size
    assert 0.45 < ratio < 0.6


@pytest.mark.slow
def test_merged_lora_matches_the_unmerged_model(request, tmp_path: Path) -> None:
    import torch
    from peft import AutoPeftModelForCausalLM
    from transformers import AutoModelForCausalLM, AutoTokenizer

    run = _finished_run(request, "causal-lm", "tiny_gpt2", "instructions.jsonl", tmp_path, lora__enabled=True)
    merged = export_run(run, tmp_path / "merged").folder
    adapter = export_run(run, tmp_path / "adapter", lora="adapter").folder
    assert (adapter / "adapter_config.json").is_file() and not (adapter / "model.safetensors").exists()
    assert (run.adapter_dir / "training_args.bin").is_file() and not (adapter / "training_args.bin").exists()
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

    monkeypatch.setattr("desktop.core.results.model_card.write_model_card", broken)
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


@pytest.mark.slow
def test_verification_notices_a_different_model(request, tmp_path: Path) -> None:
    run = _finished_run(request, "classification", "tiny_bert", "reviews.csv", tmp_path)
    other = tmp_path / "other-runs"
    second = _finished_run(
        request, "classification", "tiny_bert", "reviews.csv", other, training__learning_rate=0.05
    )
    check = verify_export(run, second.model_dir, "classification", ["good", "bad"])
    assert not check.ok and check.max_abs_diff > 1e-2


@pytest.mark.slow
def test_progress_rises_and_a_cancel_leaves_nothing(request, tmp_path: Path) -> None:
    run = _finished_run(request, "classification", "tiny_bert", "reviews.csv", tmp_path)
    seen: list[tuple[str, float]] = []
    export_run(run, tmp_path / "out", on_progress=lambda m, f: seen.append((m, f)))
    fractions = [f for _, f in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert [m for m, _ in seen] == ["load", "weights", "tokenizer", "card", "place", "verify", "done"]

    cancel = threading.Event()

    def cancel_while_writing(message: str, fraction: float) -> None:
        if "weights" in message:
            cancel.set()  # the user clicks Cancel while the weights are being written

    with pytest.raises(ExportCancelled):
        export_run(run, tmp_path / "cancelled", on_progress=cancel_while_writing, cancel=cancel)
    assert not (tmp_path / "cancelled").exists()
    assert not [p for p in tmp_path.iterdir() if ".partial" in p.name]


@pytest.mark.slow
def test_a_killed_export_leaves_no_model_and_the_next_one_cleans_up(request, tmp_path: Path) -> None:
    run = _finished_run(request, "classification", "tiny_bert", "reviews.csv", tmp_path)
    dest = tmp_path / "out"
    code = (
        "import sys, time; from pathlib import Path; from desktop.core.results.export import export_run; "
        "from desktop.core.runs.folders import RunDir\n"
        "def hang(stage, fraction):\n"
        "    if stage == 'card':\n"
        "        print('writing', flush=True); time.sleep(120)\n"
        "export_run(RunDir(sys.argv[1]), Path(sys.argv[2]), on_progress=hang)\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code, str(run.path), str(dest)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout.readline().strip() == "writing"  # the weights are on disk, the card is next
    child.kill()  # as the task manager or a power cut would
    child.wait()
    assert not dest.exists()
    assert [p for p in tmp_path.iterdir() if ".partial" in p.name]  # the half-written copy, hidden

    export_run(run, dest, verify=False)
    assert (dest / "README.md").is_file()
    assert not [p for p in tmp_path.iterdir() if ".partial" in p.name]


@pytest.mark.slow
def test_verification_takes_texts_longer_than_a_windows_command_line(request, tmp_path: Path) -> None:
    run = _finished_run(request, "classification", "tiny_bert", "reviews.csv", tmp_path)
    long_texts = [
        "这个耳机非常好用。 " * 4000,
        "The battery died after two days. " * 1500,
    ]  # ~80,000 characters
    assert sum(len(t) for t in long_texts) > 32_767
    check = verify_export(run, run.model_dir, "classification", long_texts)
    assert check.ok and check.examples == 2, check.error


def test_a_leftover_folder_is_removed_only_when_an_export_made_it(tmp_path: Path) -> None:
    from desktop.core.results.destination import MARKER_NAME, remove_stale_partials

    dest = tmp_path / "model"
    dead = 999_999_999  # no such process
    partial = tmp_path / f".model.partial-{dead}-abc"
    old_export = tmp_path / f".model.old-{dead}-def"
    look_alike = tmp_path / f".model.old-{dead}-ghi"
    partial_look_alike = tmp_path / f".model.partial-{dead}-jkl"
    for folder in (partial, old_export, look_alike, partial_look_alike):
        folder.mkdir()
    for folder in (partial, old_export):  # an export marks its folder from the moment it makes it
        (folder / MARKER_NAME).write_text("{}", encoding="utf-8")
    for folder in (look_alike, partial_look_alike):
        (folder / "notes.txt").write_text("not ours", encoding="utf-8")

    remove_stale_partials(dest)

    assert not partial.exists() and not old_export.exists()
    assert (look_alike / "notes.txt").read_text(encoding="utf-8") == "not ours"
    assert (partial_look_alike / "notes.txt").read_text(encoding="utf-8") == "not ours"


def test_the_model_card_has_a_section_in_the_apps_language(request, tmp_path: Path) -> None:
    run = _finished_run(request, "classification", "tiny_bert", "reviews.csv", tmp_path)
    english = (export_run(run, tmp_path / "en", verify=False).folder / "README.md").read_text(
        encoding="utf-8"
    )
    chinese = export_run(run, tmp_path / "zh", verify=False, language="zh_CN").folder / "README.md"
    card = chinese.read_text(encoding="utf-8")
    assert card.startswith(english.split("## Options used")[0])  # the English card, whole, first
    assert "## 关于这个模型" in card and "上针对 classification 任务微调而成。" in card
    assert "## 关于这个模型" not in english and "eval_loss = " in card.split("## 关于这个模型")[1]
