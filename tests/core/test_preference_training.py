"""Preference tuning end to end (issue 38): DPO and ORPO learn which answer is better, the pairs are
checked before a model loads, a stopped run resumes against the same reference, memory counts both."""

from __future__ import annotations

import importlib.util
import json
import threading
from pathlib import Path

import pytest

from desktop.core.data.columns import guess_columns
from desktop.core.data.preview import preview
from desktop.core.data.tables import Table
from desktop.core.runs.folders import RunDir
from desktop.core.settings.config import RunConfig
from desktop.core.system.errors import DataError
from desktop.core.system.events import LogEvent, ProgressEvent, StartedEvent
from desktop.core.training import evaluation
from desktop.core.training.preference_evaluation import PreferenceReport
from desktop.core.training.run import run_training
from tests.conftest import llama_cpp_installed
from tests.core.helpers import Recorder, make_config, preference_pairs

NEEDS_TRL = pytest.mark.skipif(
    importlib.util.find_spec("trl") is None, reason="TRL, which trains preferences, needs Python 3.11"
)


def _config(model: Path, data: Path, runs: Path, method: str, **training: object) -> RunConfig:
    config = make_config("preference", model, [data], runs, learning_rate=5e-3, **training)
    config.preference.method = method
    config.validation.fraction = 0.2
    return config


@NEEDS_TRL
@pytest.mark.slow
@pytest.mark.parametrize("method", ["dpo", "orpo"])
def test_dpo_and_orpo_learn_which_answer_is_better(
    method: str, tiny_chat_models: dict[str, Path], tmp_path: Path
) -> None:
    data = preference_pairs(tmp_path / "pairs.jsonl")
    config = _config(tiny_chat_models["qwen2"], data, tmp_path / "runs", method, max_steps=40, eval_steps=20)
    events = Recorder()

    result = run_training(config, events.append)

    assert result.status == "finished", result.failure
    evals = [e.metrics for e in events.of(LogEvent) if "eval_rewards/accuracies" in e.metrics]
    assert [round(m["eval_rewards/margins"], 6) > 0 for m in evals] == [True, True]
    assert evals[-1]["eval_rewards/accuracies"] > 0.9
    assert any("rewards/accuracies" in e.metrics and "logps/chosen" in e.metrics for e in events.of(LogEvent))
    assert all(p.tokens_per_second for p in events.of(ProgressEvent)[1:])  # both methods' batches counted
    saved = evaluation.load(Path(result.run_dir))
    base, tuned = saved["base"], saved["fine_tuned"]
    assert isinstance(base, PreferenceReport) and isinstance(tuned, PreferenceReport)
    assert base.rows == tuned.rows == 80  # every held-out pair, before and after
    assert 0.3 <= base.accuracy <= 0.7 and tuned.accuracy > 0.9
    assert tuned.margin > base.margin and tuned.method == method
    assert tuned.reward_accuracy == evals[-1]["eval_rewards/accuracies"]
    assert len(tuned.improved) == 3 and all(e["before"] <= 0 < e["after"] for e in tuned.improved)
    card = evaluation.card_section(Path(result.run_dir), tmp_path)
    assert "| preference accuracy |" in card and "Now preferring the chosen answer" in card


@NEEDS_TRL
@pytest.mark.slow
def test_a_stopped_lora_dpo_run_resumes_against_the_same_reference(
    tiny_chat_models: dict[str, Path], tmp_path: Path
) -> None:
    data = preference_pairs(tmp_path / "pairs.jsonl", rows=200)

    def config(runs: str) -> RunConfig:
        made = _config(
            tiny_chat_models["qwen2"],
            data,
            tmp_path / runs,
            "dpo",
            max_steps=20,
            eval_steps=20,
            save_steps=10,
        )
        made.lora.enabled, made.training.batch_size = True, 8
        made.validation.evaluate_base = False
        return made

    whole = Recorder()
    assert run_training(config("whole"), whole.append).status == "finished"

    stop, first = threading.Event(), Recorder()

    def on_event(event: object) -> None:
        first.append(event)
        if isinstance(event, ProgressEvent) and event.step == 10:
            stop.set()

    stopped = run_training(config("parts"), on_event, stop)
    assert stopped.status == "stopped"
    run = RunDir(stopped.run_dir)
    resumed = Recorder()
    assert run_training(run.config(), resumed.append, resume=run).status == "finished"

    assert resumed.of(StartedEvent)[0].resumed_from_step == 10

    def last_eval(events: Recorder) -> dict[str, float]:
        return [e.metrics for e in events.of(LogEvent) if "eval_rewards/margins" in e.metrics][-1]

    # Rewards are log-ratios against the reference: a resumed run measured against anything but the base
    # model (its own checkpoint, a second adapter) would end with other margins than the run not stopped.
    assert last_eval(resumed)["eval_rewards/margins"] == pytest.approx(
        last_eval(whole)["eval_rewards/margins"], rel=1e-3
    )
    assert last_eval(resumed)["eval_rewards/margins"] > 0.05
    assert not any(path.name == "ref" for path in run.path.rglob("*") if path.is_dir())


def _rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


def test_each_bad_pair_stops_the_run_before_a_model_loads_naming_its_rows(
    tiny_chat_models: dict[str, Path], tmp_path: Path
) -> None:
    good = [{"prompt": f"q{i}", "chosen": "apple", "rejected": "saw"} for i in range(20)]
    rows = [
        *good[:3],
        {"prompt": "q", "chosen": "same answer", "rejected": "same answer "},  # line 4
        {"prompt": "q", "chosen": "", "rejected": "no"},  # line 5
        {"prompt": "q", "chosen": ["not", "a", "chat"], "rejected": "no"},  # line 6
        *good[3:],
    ]
    data = _rows(tmp_path / "pairs.jsonl", rows)
    config = _config(tiny_chat_models["qwen2"], data, tmp_path / "runs", "dpo")
    config.validation.fraction = 0

    with pytest.raises(DataError) as refused:
        preview(config)

    message = str(refused.value.message)
    assert "Rows whose chosen answer is the rejected one (1): pairs.jsonl line 4." in message
    assert "Rows with an empty answer (1): pairs.jsonl line 5." in message
    assert "Rows with no readable prompt, chosen and rejected answer (1): pairs.jsonl line 6." in message
    events = Recorder()
    assert run_training(config, events.append).status == "invalid"  # the same refusal, nothing trained

    config.data.drop_bad_rows = True
    shown = preview(config)
    assert shown.num_train == 20
    assert any("Left out 3 of 23 rows of pairs.jsonl" in note for note in shown.notes)


def test_prompts_that_fill_the_max_length_and_cut_answers_are_named(
    tiny_chat_models: dict[str, Path], tmp_path: Path
) -> None:
    from transformers import AutoTokenizer

    rows = [{"prompt": f"q{i}", "chosen": "apple", "rejected": "saw"} for i in range(10)]
    rows[2] = {"prompt": "word " * 80, "chosen": "apple", "rejected": "saw"}  # line 3
    rows[5] = {"prompt": "q", "chosen": "long answer " * 40, "rejected": "saw"}  # line 6
    data = _rows(tmp_path / "pairs.jsonl", rows)
    config = _config(tiny_chat_models["qwen2"], data, tmp_path / "runs", "dpo")
    config.validation.fraction, config.training.max_length = 0, 48
    tokenizer = AutoTokenizer.from_pretrained(tiny_chat_models["qwen2"])

    notes = preview(config, tokenizer=tokenizer).notes

    assert any(
        n.startswith("Rows whose prompt alone fills the max length of 48 tokens") and n.endswith("line 3.")
        for n in notes
    )
    assert "The max length of 48 tokens cuts the answers of 1 of 10 pairs (10%): pairs.jsonl line 6." in notes
    keep = next(n for n in notes if n.endswith("keeps 95% of the pairs whole."))
    assert int(keep.split()[4]) > 48  # a longer max length than the one that cuts


def test_the_public_layouts_are_guessed() -> None:
    import pandas as pd

    hh = Table(pd.DataFrame({"chosen": ["\n\nHuman: a\n\nAssistant: b"], "rejected": ["x"]}), "hh.jsonl")
    assert guess_columns(hh, "preference").columns.mapped() == {"chosen": "chosen", "rejected": "rejected"}
    mapped = guess_columns(
        Table(pd.DataFrame({"question": ["q"], "good": ["a"], "bad": ["b"]}), "mine.csv"), "preference"
    ).columns.mapped()
    assert mapped == {"prompt": "question", "chosen": "good", "rejected": "bad"}


def test_the_memory_estimate_counts_the_reference_and_two_sequences(
    tiny_chat_models: dict[str, Path],
) -> None:
    from transformers import AutoConfig

    from desktop.core.hub.shapes import shapes_for_model_config
    from desktop.core.settings.memory import estimate

    model_config = AutoConfig.from_pretrained(tiny_chat_models["qwen2"])
    model_config.vocab_size = 151_936  # Qwen2.5's: the logits are what DPO's fused head saves

    def terms(task: str, method: str = "dpo", lora: bool = False) -> object:
        config = RunConfig(task=task)
        config.preference.method, config.lora.enabled = method, lora
        return estimate(shapes_for_model_config(model_config, config), config, mixed_precision=True)

    chat, dpo, orpo, lora_dpo = (
        terms("causal-lm"),
        terms("preference"),
        terms("preference", "orpo"),
        terms("preference", lora=True),
    )
    assert dpo.reference == dpo.weights and dpo.activations == 2 * chat.activations
    assert orpo.logits == 2 * chat.logits  # ORPO computes the logits whole, of both sequences
    assert dpo.logits == 8 * 4096 * 32768 < orpo.logits  # TRL's DPO: one fp32 tile and its gradient
    assert orpo.reference == 0 and orpo.activations == dpo.activations
    assert lora_dpo.reference == 0
    assert "reference model (DPO)" in dpo.breakdown() and "reference model (DPO)" not in orpo.breakdown()


@NEEDS_TRL
@pytest.mark.slow
def test_dpo_across_two_processes_trains_and_saves_one_model(
    tiny_chat_models: dict[str, Path], tmp_path: Path
) -> None:
    from desktop.core.training.supervisor import ChildRun

    data = preference_pairs(tmp_path / "pairs.jsonl", rows=120)
    config = _config(tiny_chat_models["qwen2"], data, tmp_path / "runs", "dpo", max_steps=6, eval_steps=6)
    config.training.batch_size, config.training.logging_steps = 4, 1
    config.launch.num_processes = 2
    events = Recorder()

    result = ChildRun(config, events.append).run(threading.Event(), threading.Event())

    assert result.status == "finished", result.failure
    assert events.of(StartedEvent)[0].processes == 2
    logged = [e.step for e in events.of(LogEvent) if "rewards/accuracies" in e.metrics]
    assert logged == list(range(1, 7))  # rank 0 alone reports, once a step
    assert (Path(result.run_dir) / "model" / "config.json").is_file()


@pytest.mark.parametrize("name", ["preferences.jsonl", "preferences-zh.jsonl"])
def test_the_samples_are_clean_pairs(
    name: str, samples: Path, tiny_chat_models: dict[str, Path], tmp_path: Path
) -> None:
    from desktop.core.data.tasks.preference import read_pairs

    config = _config(tiny_chat_models["qwen2"], samples / name, tmp_path / "runs", "dpo")
    config.validation.fraction = 0

    shown = preview(config)

    assert shown.num_train >= 30 and shown.notes == []
    import pandas as pd

    pairs = read_pairs(Table(pd.DataFrame(shown.rows), name), shown.guess.columns)
    assert all(pair is not None and pair.prompt[-1]["role"] == "user" for pair in pairs)


@NEEDS_TRL
@pytest.mark.slow
def test_a_lora_dpo_run_exports_merged_and_as_gguf_like_a_chat_run(
    tiny_chat_models: dict[str, Path], samples: Path, tmp_path: Path
) -> None:
    from desktop.core.results.export import export_run
    from desktop.core.results.gguf_check import example_prompts
    from desktop.core.results.gguf_export import export_run_gguf
    from desktop.core.results.tryit import inspect_folder

    config = _config(
        tiny_chat_models["qwen2"], samples / "preferences-zh.jsonl", tmp_path / "runs", "dpo", max_steps=4
    )
    config.lora.enabled, config.training.batch_size, config.training.max_length = True, 4, 96
    result = run_training(config, Recorder().append)
    assert result.status == "finished", result.failure
    run = RunDir(result.run_dir)

    exported = export_run(run, tmp_path / "merged")
    assert exported.verification.ok and (exported.folder / "model.safetensors").is_file()
    card = (exported.folder / "README.md").read_text(encoding="utf-8")
    assert "tags: [finetune-studio, preference, trl, dpo]" in card and "| preference accuracy |" in card
    info = inspect_folder(exported.folder)
    assert (info.task, info.chat, info.trained_from) == ("causal-lm", True, str(tiny_chat_models["qwen2"]))

    prompts, system = example_prompts(run)
    lines = (samples / "preferences-zh.jsonl").read_text(encoding="utf-8").splitlines()
    assert prompts[0] in {json.loads(line)["chosen"][1]["content"] for line in lines}
    assert system == "你是一个简洁、准确、有礼貌的助手。"  # the pairs' own system prompt goes to Ollama
    gguf = export_run_gguf(run, tmp_path / "gguf")
    if llama_cpp_installed():  # CI has llama.cpp (and fails without it): there the file is checked
        assert gguf.path.is_file() and gguf.verification.verified, gguf.verification
    else:
        assert gguf.path.is_file() and not gguf.verification.checked, gguf.verification
        not_checked = "Not verified: llama.cpp (the llama-cpp-python package) is not installed."
        assert gguf.verification.summary() == not_checked


@NEEDS_TRL
@pytest.mark.slow
@pytest.mark.parametrize("method", ["dpo", "orpo"])
def test_the_longest_pairs_are_tried_first_and_an_oom_halves_the_batch(
    method: str, tiny_chat_models: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    from desktop.core.system.events import AdjustedEvent
    from desktop.core.training import recovery

    rows = [{"prompt": f"q{i}", "chosen": "apple", "rejected": "saw"} for i in range(64)]
    for i in range(0, 16, 2):  # a long prompt with short answers, and a short prompt with a long answer
        rows[i] = {"prompt": "word " * 30, "chosen": "apple", "rejected": "saw"}
        rows[i + 1] = {"prompt": "q", "chosen": "apple " * 45, "rejected": "saw"}
    data = _rows(tmp_path / "pairs.jsonl", rows)
    probed: list[list[int]] = []
    real_probe = recovery.probe_longest_batch

    def probe(trainer: object) -> list[int]:
        if trainer.args.per_device_train_batch_size > 8:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        used = real_probe(trainer)  # TRL's collator and loss on the longest pairs, on the CPU here
        probed.append(used)
        return used

    monkeypatch.setattr(recovery, "probe_wanted", lambda args: True)  # as on a CUDA GPU
    monkeypatch.setattr(recovery, "probe_longest_batch", probe)
    config = _config(tiny_chat_models["qwen2"], data, tmp_path / "runs", method, max_steps=3)
    config.validation.fraction, config.training.max_length = 0, 256
    events = Recorder()

    result = run_training(config, events.append)

    assert result.status == "finished", result.failure
    (adjusted,) = events.of(AdjustedEvent)
    assert adjusted.changes == {"training.batch_size": 8, "training.gradient_accumulation": 2}
    ((used),) = probed
    assert sorted(used) == list(range(1, 16, 2))  # the long answers: a prompt counts once


def test_a_held_out_pair_longer_than_the_model_is_measured_as_training_cut_it(tiny_gpt2: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from desktop.core.data.tasks.preference import Pair
    from desktop.core.training.preference_evaluation import measure

    model, tokenizer = (
        AutoModelForCausalLM.from_pretrained(tiny_gpt2),
        AutoTokenizer.from_pretrained(tiny_gpt2),
    )
    longest = model.config.n_positions
    pairs = [Pair([{"role": "user", "content": "q"}], "apple " * longest, "saw"), *_short_pairs(3)]

    report = measure(model, tokenizer, pairs, "cpu", max_length=64)

    assert report.rows == 4 and len(report.margins) == 4
    with pytest.raises(IndexError):  # uncut, the pair would not fit the model's positions
        measure(model, tokenizer, pairs, "cpu")


def _short_pairs(count: int) -> list:
    from desktop.core.data.tasks.preference import Pair

    return [Pair([{"role": "user", "content": f"q{i}"}], "apple", "saw") for i in range(count)]
