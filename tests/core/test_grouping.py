"""Batches grouped by length: every example once per epoch, far less padding, in random order."""

from __future__ import annotations

import random
from pathlib import Path

from desktop.core.data.examples import Examples, to_batch
from desktop.core.data.tasks.packing import padding_share
from desktop.core.training.grouping import length_grouped


def _batches(tiny_bert: Path, tmp_path: Path, lengths: list[int], seed: int) -> list[list[int]]:
    from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments

    rows = [{"input_ids": [5] * n, "attention_mask": [1] * n, "labels": i} for i, n in enumerate(lengths)]
    examples = Examples.from_batches([to_batch(rows)])
    args = TrainingArguments(
        output_dir=str(tmp_path), per_device_train_batch_size=8, seed=seed, report_to="none",
        remove_unused_columns=False, disable_tqdm=True, use_cpu=True,
    )  # fmt: skip
    model = AutoModelForSequenceClassification.from_pretrained(tiny_bert, num_labels=2)
    trainer = length_grouped(Trainer)(
        model=model, args=args, train_dataset=examples, data_collator=lambda f: [int(x["labels"]) for x in f]
    )
    return [list(batch) for batch in trainer.get_train_dataloader()]


def test_grouped_batches_hold_every_example_once_with_little_padding(tiny_bert: Path, tmp_path: Path) -> None:
    rng = random.Random(0)
    lengths = [round(8 * 32 ** rng.random()) for _ in range(800)]  # 8 to 256 tokens, many short
    batches = _batches(tiny_bert, tmp_path, lengths, seed=1)
    order = [i for batch in batches for i in batch]
    assert sorted(order) == list(range(len(lengths)))  # each example once in the epoch
    shuffled = list(range(len(lengths)))
    rng.shuffle(shuffled)
    grouped, plain = (
        padding_share([lengths[i] for i in order], 8),
        padding_share([lengths[i] for i in shuffled], 8),
    )
    assert grouped < 0.1 < 0.5 < plain  # measured: about 4% against 60%
    longest = [max(lengths[i] for i in batch) for batch in batches]
    assert longest[0] == max(lengths)  # an out-of-memory error at the first step, not an hour in
    assert longest[1:20] != sorted(longest[1:20], reverse=True)  # consecutive steps: lengths at random
    assert order != _flat(_batches(tiny_bert, tmp_path, lengths, seed=2))  # another seed, another order


def _flat(batches: list[list[int]]) -> list[int]:
    return [i for batch in batches for i in batch]
