"""Try-it: each task's trained model answers a prompt, from the run folder and from an export."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from desktop.core.results.export import export_run
from desktop.core.results.tryit import Playground, inspect_folder
from desktop.core.system.errors import ModelError
from tests.core.test_export import _finished_run


def test_classification_gives_every_label_with_probabilities(request, tmp_path: Path) -> None:
    run = _finished_run(request, "classification", "tiny_bert", "reviews.csv", tmp_path)
    info = inspect_folder(run.model_dir, run.config_path)
    assert info.task == "classification"
    playground = Playground(info)
    playground.load()

    ranked = playground.classify("Great phone, the battery lasts all day.")

    assert {label for label, _ in ranked} == {"positive", "negative"}
    assert sum(p for _, p in ranked) == pytest.approx(1.0, abs=1e-5)
    assert ranked[0][1] >= ranked[1][1]


def test_causal_lm_streams_its_reply_through_the_chat_template(request, tmp_path: Path) -> None:
    run = _finished_run(request, "causal-lm", "tiny_gpt2", "instructions.jsonl", tmp_path)
    exported = export_run(run, tmp_path / "export", verify=False).folder
    info = inspect_folder(exported)  # an export knows its task and format from its own copy of the config
    assert (info.task, info.chat) == ("causal-lm", True)
    playground = Playground(info)
    playground.load()
    pieces: list[str] = []

    text = playground.generate("Name a colour.", max_new_tokens=12, temperature=0, on_text=pieces.append)

    assert pieces and "".join(pieces) == text
    assert text == playground.generate("Name a colour.", max_new_tokens=12, temperature=0)  # greedy repeats


def test_generation_stops_when_asked(request, tmp_path: Path) -> None:
    run = _finished_run(request, "causal-lm", "tiny_gpt2", "instructions.jsonl", tmp_path)
    playground = Playground(inspect_folder(run.model_dir, run.config_path))
    playground.load()
    stop, pieces = threading.Event(), []

    def on_text(piece: str) -> None:
        pieces.append(piece)
        stop.set()

    playground.generate("Tell a long story.", max_new_tokens=200, temperature=0, on_text=on_text, stop=stop)

    assert 1 <= len(pieces) <= 2  # the piece that set the flag, and at most what was already decoded


def test_seq2seq_generates_text(request, tmp_path: Path) -> None:
    run = _finished_run(request, "seq2seq", "tiny_t5", "translation.tsv", tmp_path)
    info = inspect_folder(run.model_dir)  # no run config: the task comes from config.json
    assert info.task == "seq2seq"
    playground = Playground(info)
    playground.load()

    pieces: list[str] = []
    reply = playground.generate(
        "The weather is nice today.", max_new_tokens=8, temperature=0, on_text=pieces.append
    )
    assert reply.strip() and reply == "".join(pieces)  # text came back, and was streamed as it came
    assert (
        playground.generate("The weather is nice today.", max_new_tokens=8, temperature=0) == reply
    )  # greedy


def test_a_folder_without_a_model_is_refused_with_advice(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="holds no model"):
        inspect_folder(tmp_path)


def test_an_adapter_only_export_runs_on_its_base_model(request, tmp_path: Path) -> None:
    run = _finished_run(request, "causal-lm", "tiny_gpt2", "instructions.jsonl", tmp_path, lora__enabled=True)
    merged = Playground(inspect_folder(export_run(run, tmp_path / "merged", verify=False).folder))
    info = inspect_folder(export_run(run, tmp_path / "adapter", lora="adapter").folder)
    assert info.adapter and info.task == "causal-lm" and Path(info.base_model).is_dir()
    adapter = Playground(info)
    merged.load()
    adapter.load()

    prompt = "What is the capital of Japan?"
    assert adapter.generate(prompt, 10, temperature=0) == merged.generate(prompt, 10, temperature=0)


def test_the_base_model_answers_beside_the_fine_tuned_one(request, tmp_path: Path) -> None:
    from desktop.core.results.tryit import base_playground
    from desktop.core.training import evaluation

    run = _finished_run(request, "classification", "tiny_bert", "reviews.csv", tmp_path)
    info = inspect_folder(run.model_dir, run.config_path)
    base = base_playground(info)
    base.load()
    tuned = Playground(info)
    tuned.load()
    text = "Great phone, the battery lasts all day."

    before, after = dict(base.classify(text)), dict(tuned.classify(text))
    assert set(before) == set(after) == {"positive", "negative"}  # the same labels, a new head
    assert before != after
    # The base model here is the one the run evaluated before its first step: the same head, the same answer.
    saved = evaluation.load(run.path)["base"]
    predicted = next(p for p in range(2) for t in range(2) if 0 in saved.cells[t][p])  # row 0's cell
    assert max(base.classify(saved.texts[0]), key=lambda pair: pair[1])[0] == saved.labels[predicted]


def test_a_causal_lm_base_answers_through_the_runs_chat_template(request, tmp_path: Path) -> None:
    from desktop.core.results.tryit import base_playground

    run = _finished_run(request, "causal-lm", "tiny_gpt2", "instructions.jsonl", tmp_path)
    info = inspect_folder(run.model_dir, run.config_path)
    base = base_playground(info)
    base.load()
    assert base.info.chat and base.tokenizer.chat_template  # the fine-tuned folder's tokenizer
    assert isinstance(base.generate("Name a colour.", max_new_tokens=6, temperature=0), str)


def test_a_conversation_is_answered_as_generate_on_its_chat_template(request, tmp_path: Path) -> None:
    run = _finished_run(request, "causal-lm", "tiny_gpt2", "instructions.jsonl", tmp_path)
    playground = Playground(inspect_folder(run.model_dir, run.config_path))
    playground.load()
    messages = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Name a colour."},
        {"role": "assistant", "content": "Blue."},
        {"role": "user", "content": "And another one?"},
    ]

    reply = playground.generate(messages, max_new_tokens=12, temperature=0)

    model, tokenizer = playground.model, playground.tokenizer
    encoded = tokenizer.apply_chat_template(
        messages, add_generation_prompt=True, return_dict=True, return_tensors="pt"
    )
    ids = encoded["input_ids"]
    out = model.generate(
        ids, attention_mask=encoded["attention_mask"], max_new_tokens=12, do_sample=False,
        pad_token_id=tokenizer.pad_token_id,
    )  # fmt: skip
    assert reply and reply == tokenizer.decode(out[0, ids.shape[1] :], skip_special_tokens=True)
    assert "You are a helpful assistant." in tokenizer.decode(ids[0])  # the system prompt was read
