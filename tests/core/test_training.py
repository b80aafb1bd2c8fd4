"""End-to-end runs of each task on CPU with tiny models."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
import torch

from desktop.core.runs.folders import RunDir
from desktop.core.runs.listing import list_runs
from desktop.core.system.events import (
    CheckpointEvent,
    FailedEvent,
    FinishedEvent,
    LogEvent,
    MemoryEvent,
    ProgressEvent,
    StartedEvent,
    StoppedEvent,
    event_from_json,
)
from desktop.core.training.run import run_training
from tests.core.helpers import Recorder, make_config


def _assert_learned(events: Recorder) -> None:
    losses = events.losses()
    assert len(losses) >= 4
    assert sum(losses[-2:]) / 2 < sum(losses[:2]) / 2 * 0.9, losses


def test_classification_trains_and_reloads(tiny_bert: Path, samples: Path, tmp_path: Path) -> None:
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    both = [samples / "reviews.csv", samples / "reviews-zh.csv"]  # the tiny tokenizer reads both
    config = make_config("classification", tiny_bert, both, tmp_path / "runs", max_steps=60)
    events = Recorder()
    result = run_training(config, events.append)

    assert result.status == "finished", result.failure
    _assert_learned(events)
    assert {"eval_accuracy", "eval_macro_f1", "eval_loss"} <= set(result.metrics)
    model = AutoModelForSequenceClassification.from_pretrained(result.model_dir)
    tokenizer = AutoTokenizer.from_pretrained(result.model_dir)
    assert model.config.id2label == {0: "negative", 1: "positive"}
    inputs = tokenizer(["The battery is excellent.", "客服态度很差。"], return_tensors="pt", padding=True)
    with torch.no_grad():
        predicted = model(**inputs).logits.argmax(-1).tolist()
    assert [model.config.id2label[i] for i in predicted] == ["positive", "negative"]


@pytest.mark.slow
def test_causal_lm_learns_responses_only_and_reloads(tiny_gpt2: Path, samples: Path, tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    config = make_config(
        "causal-lm", tiny_gpt2, [samples / "instructions.jsonl"], tmp_path / "runs", max_steps=60
    )
    events = Recorder()
    result = run_training(config, events.append)

    assert result.status == "finished", result.failure
    _assert_learned(events)
    assert result.metrics["eval_perplexity"] == pytest.approx(
        2.718281828 ** result.metrics["eval_loss"], rel=1e-4
    )
    tokenizer = AutoTokenizer.from_pretrained(result.model_dir)
    assert tokenizer.chat_template  # the fallback template travels with the model
    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": "What is the capital of Japan?"}],
        tokenize=False,
        add_generation_prompt=True,
    )
    model = AutoModelForCausalLM.from_pretrained(result.model_dir)
    ids = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
    out = model.generate(**ids, max_new_tokens=5, do_sample=False, pad_token_id=tokenizer.pad_token_id)
    assert out.shape[1] > ids["input_ids"].shape[1]


@pytest.mark.slow
def test_seq2seq_trains_and_reloads(tiny_t5: Path, samples: Path, tmp_path: Path) -> None:
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    config = make_config("seq2seq", tiny_t5, [samples / "translation.tsv"], tmp_path / "runs", max_steps=60)
    events = Recorder()
    result = run_training(config, events.append)

    assert result.status == "finished", result.failure
    _assert_learned(events)
    assert "eval_loss" in result.metrics
    model = AutoModelForSeq2SeqLM.from_pretrained(result.model_dir)
    tokenizer = AutoTokenizer.from_pretrained(result.model_dir)
    out = model.generate(**tokenizer(["I like tea."], return_tensors="pt"), max_new_tokens=6)
    assert tokenizer.decode(out[0], skip_special_tokens=True).strip()  # it writes something back


def test_events_are_recorded_in_the_run_folder(tiny_bert: Path, samples: Path, tmp_path: Path) -> None:
    config = make_config(
        "classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs", max_steps=10
    )
    events = Recorder()
    result = run_training(config, events.append)

    run = RunDir(result.run_dir)
    started = events.of(StartedEvent)[0]
    assert started.total_steps == 10 and started.device == "cpu"
    assert started.num_train_examples + started.num_eval_examples == 150
    progress = events.of(ProgressEvent)
    assert [p.step for p in progress] == list(range(1, 11))
    assert (
        progress[-1].eta_s == 0 and progress[-1].samples_per_second > 0 and progress[-1].tokens_per_second > 0
    )
    memory = events.of(MemoryEvent)
    assert memory and memory[0].rss_bytes > 0 and memory[0].allocated_bytes is None
    assert any("learning_rate" in e.metrics and "grad_norm" in e.metrics for e in events.of(LogEvent))
    assert isinstance(events[-1], FinishedEvent)
    # events.jsonl holds the same events, one JSON line each, readable back
    lines = run.events_path.read_text(encoding="utf-8").splitlines()
    assert [event_from_json(line) for line in lines] == [e for e in events if e.kind != "preparing"]
    assert run.log_path.is_file() and run.status() == "finished"
    saved = run.config()
    assert saved.columns.text == "text" and saved.columns.label == "label"  # the guessed mapping is kept
    assert (run.model_dir / "config.json").is_file() and not (run.path / "model.partial").exists()


def test_stop_keeps_a_checkpoint_and_resume_continues(tiny_bert: Path, samples: Path, tmp_path: Path) -> None:
    config = make_config(
        "classification",
        tiny_bert,
        [samples / "reviews.csv"],
        tmp_path / "runs",
        max_steps=12,
        save_steps=100,
        eval_steps=100,
    )
    stop = threading.Event()
    events = Recorder()

    def on_event(event: object) -> None:
        events.append(event)
        if isinstance(event, ProgressEvent) and event.step == 5:
            stop.set()

    result = run_training(config, on_event, stop)

    assert result.status == "stopped" and result.exit_code == 130
    stopped = events.of(StoppedEvent)[0]
    assert stopped.step == 5 and Path(stopped.checkpoint).name == "checkpoint-5"
    assert events.of(CheckpointEvent)[-1].step == 5
    run = RunDir(result.run_dir)
    assert run.status() == "stopped" and run.resumable() and not run.model_dir.exists()
    assert list_runs(tmp_path / "runs")[0].resumable

    resumed = Recorder()
    result = run_training(run.config(), resumed.append, resume=run)

    assert result.status == "finished", result.failure
    assert resumed.of(StartedEvent)[0].resumed_from_step == 5
    assert [p.step for p in resumed.of(ProgressEvent)] == list(range(6, 13))
    # "Elapsed" goes on from where the first part left it, not from 0.
    assert resumed.of(ProgressEvent)[0].elapsed_s > events.of(ProgressEvent)[-1].elapsed_s
    assert run.status() == "finished" and (run.model_dir / "model.safetensors").is_file()


def test_a_stop_saves_once_and_runs_no_evaluation(tiny_bert: Path, samples: Path, tmp_path: Path) -> None:
    """A stop ended the epoch, whose end then evaluated the whole validation split and saved again:
    about 20 s after "Stopping" on the walk's run."""
    config = make_config("classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs", epochs=5)
    config.training.max_steps, config.training.save_steps, config.training.eval_steps = 0, 0, 0  # by epoch
    stop = threading.Event()
    events = Recorder()

    def on_event(event: object) -> None:
        events.append(event)
        if isinstance(event, ProgressEvent) and event.step == 3:
            stop.set()

    result = run_training(config, on_event, stop)

    assert result.status == "stopped"
    assert [c.step for c in events.of(CheckpointEvent)] == [3]  # once, where it stopped
    evaluated = [e for e in events.of(LogEvent) if any(k.startswith("eval_") for k in e.metrics)]
    assert [e.step for e in evaluated if e.step > 0] == []  # the base model's evaluation only, at step 0


def test_runs_leave_the_imports_frozen_and_their_own_models_collectable(
    tiny_bert: Path, samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What PyTorch's and Transformers' imports made stays out of the cycle collector's reach after a run:
    a full collection (accelerate's at a run's start, the one that gives a GPU's memory back at its end,
    the window's when the user is idle) then walks the run's objects, not the half million of the
    imports (0.2-0.3 s of frozen window). The model of each run is freed by the time the run is over,
    also where automatic collection is off (the window's process: desktop.gui.app_support.collector)."""
    import gc
    import weakref

    import transformers

    from desktop.core.system.heap import training_stack_frozen

    models: list[weakref.ref] = []

    class Remembering(transformers.Trainer):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)
            models.append(weakref.ref(self.model))

    monkeypatch.setattr(transformers, "Trainer", Remembering)
    config = make_config(
        "classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs", max_steps=2
    )
    gc.disable()
    try:
        assert run_training(config, Recorder().append).status == "finished"
        frozen = gc.get_freeze_count()
        assert frozen > 0 and training_stack_frozen()
        assert len(models) == 1 and models[0]() is None
        assert run_training(config, Recorder().append).status == "finished"
    finally:
        gc.enable()

    assert 0 < gc.get_freeze_count() <= frozen  # nothing unfrozen, nothing of the second run frozen
    assert len(models) == 2 and models[1]() is None


def test_bad_data_fails_clearly_and_leaves_no_run(tiny_bert: Path, tmp_path: Path) -> None:
    data = tmp_path / "one_class.csv"
    data.write_text("text,label\ngood,pos\nfine,pos\ngreat,pos\n", encoding="utf-8")
    config = make_config("classification", tiny_bert, [data], tmp_path / "runs")
    events = Recorder()
    result = run_training(config, events.append)

    assert result.status == "invalid" and result.exit_code == 2
    failed = events.of(FailedEvent)[0]
    assert "at least two classes" in failed.reason and failed.remedy
    assert "Traceback" in failed.detail
    assert not (tmp_path / "runs").exists()


def test_wrong_model_kind_is_explained(tiny_bert: Path, samples: Path, tmp_path: Path) -> None:
    config = make_config("seq2seq", tiny_bert, [samples / "translation.tsv"], tmp_path / "runs")
    result = run_training(config, Recorder().append)

    assert result.status == "invalid"
    assert "cannot be used for sequence-to-sequence" in result.failure.reason
    assert "T5" in result.failure.remedy


def test_out_of_memory_with_recovery_off_offers_remedies_and_apply_and_retry_works(
    tiny_bert: Path, samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from transformers import Trainer

    from desktop.core.settings.config import with_changes

    def out_of_memory(self: object, *args: object, **kwargs: object) -> None:
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(Trainer, "training_step", out_of_memory)
    config = make_config(
        "classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs", max_steps=4
    )
    config.performance.oom_recovery = False
    events = Recorder()
    result = run_training(config, events.append)

    assert result.status == "failed" and result.exit_code == 1
    assert result.failure.reason == "The GPU ran out of memory in the forward pass."
    assert "OutOfMemoryError" in result.failure.detail
    remedies = result.failure.remedies
    assert remedies[0]["changes"] == {"training.batch_size": 8, "training.gradient_accumulation": 2}
    assert {"performance.gradient_checkpointing": True} in [r["changes"] for r in remedies]
    run = RunDir(result.run_dir)
    assert run.status() == "failed"
    last = json.loads(run.events_path.read_text(encoding="utf-8").splitlines()[-1])
    assert last["event"] == "failed" and last["remedies"] == remedies

    monkeypatch.undo()  # "Apply and retry" with the first remedy
    retry = with_changes(config, remedies[0]["changes"])
    result = run_training(retry, Recorder().append)
    assert result.status == "finished", result.failure
    assert RunDir(result.run_dir).config().training.batch_size == 8


def test_a_second_ctrl_c_while_saving_leaves_no_partial_checkpoint(
    tiny_bert: Path, samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from transformers import Trainer

    def interrupted_save(self: Trainer, *args: object, **kwargs: object) -> None:
        folder = Path(self.args.output_dir) / f"checkpoint-{self.state.global_step}"
        folder.mkdir(parents=True)
        (folder / "model.safetensors").write_bytes(b"half")
        raise KeyboardInterrupt  # the user pressed Ctrl-C again while it was written

    monkeypatch.setattr(Trainer, "_save_checkpoint", interrupted_save)
    config = make_config(
        "classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs", max_steps=20
    )
    events = Recorder()
    with pytest.raises(KeyboardInterrupt):
        run_training(config, events.append)

    run = RunDir(next((tmp_path / "runs").iterdir()))
    assert run.checkpoints() == [] and run.status() == "stopped"
    assert events.of(StoppedEvent)[-1].step == 15 and not run.is_locked()


@pytest.mark.parametrize(
    "phase", ["Reading the data", "Loading PyTorch and Transformers", "Loading the tokenizer and the model"]
)
def test_stop_works_during_preparation_and_leaves_nothing_behind(
    phase: str, tiny_bert: Path, samples: Path, tmp_path: Path
) -> None:
    import threading

    from desktop.core.system.events import PreparingEvent, StartedEvent, StoppedEvent

    config = make_config("classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs")
    stop, events = threading.Event(), Recorder()

    def on_event(event: object) -> None:
        events.append(event)
        if isinstance(event, PreparingEvent) and event.message == phase:
            stop.set()  # the user presses Stop while this phase runs

    result = run_training(config, on_event, stop)
    assert result.status == "stopped" and result.run_dir is None
    assert isinstance(events[-1], StoppedEvent) and not events.of(StartedEvent)
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_tokens_per_second_counts_the_real_tokens_not_padding(tiny_bert: Path) -> None:
    from transformers import AutoTokenizer, DataCollatorWithPadding

    from desktop.core.training.callbacks import CountingCollator, TokenCount

    tokenizer = AutoTokenizer.from_pretrained(tiny_bert)
    texts = ["short", "a much longer text with many more words in it than the first one has"]
    features = [tokenizer(text) for text in texts]
    count = TokenCount()
    batch = CountingCollator(DataCollatorWithPadding(tokenizer), count)(features)
    real = sum(len(f["input_ids"]) for f in features)
    assert count.tokens == real < batch["input_ids"].numel()  # the padding is not counted


def test_the_tokens_curve_is_measured_not_a_copy_of_the_samples_curve(
    tiny_bert: Path, tmp_path: Path
) -> None:
    samples = Path(__file__).resolve().parents[2] / "resources" / "samples"
    config = make_config(
        "classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs", max_steps=30
    )
    config.training.batch_size = 2
    events: list = []
    assert run_training(config, events.append).status == "finished"
    ratios = {
        round(e.tokens_per_second / e.samples_per_second, 3)
        for e in events
        if isinstance(e, ProgressEvent) and e.tokens_per_second and e.samples_per_second
    }
    assert len(ratios) > 5  # batches of different lengths: tokens per sample changes along the run


def test_a_second_run_on_the_same_data_skips_tokenizing(
    tiny_bert: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desktop.core.data.tasks import classification
    from desktop.core.system.events import PreparingEvent

    samples = Path(__file__).resolve().parents[2] / "resources" / "samples"
    config = make_config(
        "classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs", max_steps=2
    )
    calls = []
    real = classification._encode
    monkeypatch.setattr(classification, "_encode", lambda *a, **k: calls.append(1) or real(*a, **k))
    first: list[object] = []
    assert run_training(config, first.append).status == "finished"
    said = [str(e.message) for e in first if isinstance(e, PreparingEvent)]
    assert "Tokenizing 135 training rows: 100%" in said and calls
    calls.clear()
    assert run_training(config, lambda e: None).status == "finished"
    assert calls == []  # read from the cache
    config.training.max_length = 32  # another setting: tokenized again
    assert run_training(config, lambda e: None).status == "finished" and calls


def test_tokenizing_reports_progress_by_chunk_and_stops_between_chunks(tmp_path: Path) -> None:
    import pandas as pd

    from desktop.core.data.tables import Table
    from desktop.core.data.tasks import CHUNK_ROWS, Tokenizing

    table = Table(
        pd.DataFrame({"text": [str(i) for i in range(CHUNK_ROWS * 3 + 5)]}),
        "t.csv",
        [(0, ("t.csv", "row"), None, 2)],
    )
    seen: list[float] = []
    rows = Tokenizing(report=lambda part, n, share: seen.append(share)).rows(
        "train", table, None, lambda t: [{"input_ids": [int(v)], "labels": 0} for v in t.column("text")]
    )
    total = CHUNK_ROWS * 3 + 5
    assert [row["input_ids"][0] for row in rows] == list(range(total))
    assert seen == [start / total for start in (0, CHUNK_ROWS, 2 * CHUNK_ROWS, 3 * CHUNK_ROWS)] + [1.0]

    class Stopped(Exception):
        pass

    def stop_after_first() -> None:
        if len(seen) > 5:
            raise Stopped

    with pytest.raises(Stopped):
        Tokenizing(report=lambda part, n, share: seen.append(share), check_stop=stop_after_first).rows(
            "train", table, None, lambda t: [{"labels": 0}] * len(t)
        )


def test_tokenized_rows_are_arrow_columns_read_as_the_dicts_they_were() -> None:
    import pyarrow as pa

    from desktop.core.data.examples import Examples, to_batch

    rows = [
        {"input_ids": [101, 7, 30521, 102], "attention_mask": [1, 1, 1, 1], "labels": 2},
        {"input_ids": [101, 102], "attention_mask": [1, 1], "labels": 0},
    ]
    examples = Examples.from_batches([to_batch(rows), None, to_batch(rows[::-1])])
    assert list(examples) == rows + rows[::-1]
    assert examples[-1] == rows[0] and examples[1:3] == [rows[1], rows[1]]
    assert examples.lengths().tolist() == [4, 2, 2, 4]
    assert examples.table.column("input_ids").type == pa.large_list(pa.int32())  # 4 bytes a token
    seq2seq = [{"input_ids": [5, 6], "labels": [7, -100]}]
    assert list(Examples.from_batches([to_batch(seq2seq)])) == seq2seq


def test_the_tokenized_cache_is_an_arrow_file_that_a_loader_worker_maps_again(
    tiny_bert: Path, tmp_path: Path
) -> None:
    import functools
    import pickle

    from transformers import AutoTokenizer

    from desktop.core.data import arrow_cache
    from desktop.core.data.local_files import read_file
    from desktop.core.data.tasks import Tokenizing, classification

    samples = Path(__file__).resolve().parents[2] / "resources" / "samples"
    config = make_config("classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs")
    tokenizer = AutoTokenizer.from_pretrained(tiny_bert)
    table = read_file(samples / "reviews.csv")
    columns = classification.Columns(text="text", label="label")
    labels = {label: i for i, label in enumerate(sorted(set(table.column("label"))))}
    encode = functools.partial(
        classification._encode, columns=columns, tokenizer=tokenizer, max_length=32, label2id=labels
    )
    folder = arrow_cache.folder("tokenized")
    folder.mkdir(parents=True)
    (folder / f"{'0' * 32}.pkl").write_bytes(b"tokenized rows of an older version")
    rows = Tokenizing(config, tokenizer, cache=True).rows("train", table, columns, encode)
    assert [p.suffix for p in folder.iterdir()] == [".arrow"]  # the older cache file went
    sent = pickle.dumps(rows)  # to a data loader worker (a new process on Windows)
    assert len(sent) < 1000 and list(pickle.loads(sent)) == encode(table)


def test_a_chunk_whose_rows_all_go_makes_no_batch_and_the_cache_still_holds_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pandas as pd

    from desktop.core.data import tasks
    from desktop.core.data.tables import Table
    from desktop.core.data.tasks import Tokenizing
    from desktop.core.settings.config import Columns, RunConfig

    class Vocabulary:  # what the cache key reads of a tokenizer
        name_or_path = "test"

        def __len__(self) -> int:
            return 100

    monkeypatch.setattr(tasks, "CHUNK_ROWS", 2)
    table = Table(pd.DataFrame({"text": ["", "", "a", "b", "c"]}), "t.csv", [(0, ("t.csv", "row"), None, 2)])

    def encode(chunk: Table) -> list[dict]:  # rows with nothing to learn are left out (causal-LM)
        return [{"input_ids": [len(text)], "labels": 0} for text in chunk.column("text") if text]

    columns = Columns(text="text")
    rows = Tokenizing(RunConfig(), Vocabulary(), cache=True).rows("train", table, columns, encode)
    assert list(rows) == [{"input_ids": [1], "labels": 0}] * 3  # the first chunk made none


@pytest.mark.slow
def test_large_data_is_tokenized_by_several_processes_in_order(
    tiny_bert: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import functools

    from transformers import AutoTokenizer

    from desktop.core.data import tasks
    from desktop.core.data.local_files import read_file
    from desktop.core.data.tasks import Tokenizing, classification

    samples = Path(__file__).resolve().parents[2] / "resources" / "samples"
    table = read_file(samples / "reviews.csv")  # 150 rows: 4 chunks of 40
    monkeypatch.setattr(tasks, "CHUNK_ROWS", 40)
    monkeypatch.setattr(tasks, "parallel_workers", lambda rows: 2)
    tokenizer = AutoTokenizer.from_pretrained(tiny_bert)
    labels = {label: i for i, label in enumerate(sorted(set(table.frame["label"])))}
    columns = classification.Columns(text="text", label="label")
    encode = functools.partial(
        classification._encode, columns=columns, tokenizer=tokenizer, max_length=32, label2id=labels
    )
    shares: list[float] = []
    rows = Tokenizing(report=lambda part, n, share: shares.append(share)).rows(
        "train", table, columns, encode
    )
    assert list(rows) == encode(table)  # the same examples, in the same order, as in one process
    assert shares == [0.25, 0.5, 0.75, 1.0, 1.0]
    checks: list[int] = []

    def stop_while_the_processes_work() -> None:
        checks.append(1)
        if len(checks) == 2:  # the first check is before the processes start
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        Tokenizing(check_stop=stop_while_the_processes_work).rows("train", table, columns, encode)
