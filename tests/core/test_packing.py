"""Padding-free causal-LM batches: the same loss as padded ones, no example sees another, prompts masked."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from desktop.core.data.tables import Table
from desktop.core.data.tasks.causal_lm import IGNORE, encode
from desktop.core.data.tasks.packing import PaddingFreeCollator, keeps_examples_apart, padding_share
from desktop.core.settings.config import Columns

QUESTIONS = [
    ("Hi", "Hello."),
    ("What is the capital of Japan? Answer in one sentence, please.", "The capital of Japan is Tokyo."),
    ("2 + 2?", "4"),
    (
        "Name three colours of the rainbow and say which one comes first.",
        "Red, orange and yellow; red first.",
    ),
]


def _examples(tokenizer: object) -> list[dict]:
    rows = [{"instruction": q, "input": "", "output": a} for q, a in QUESTIONS]
    table = Table(pd.DataFrame(rows), "test", [(0, "test row", None, 1)])
    examples, _ = encode(
        table, Columns(instruction="instruction", input="input", output="output"), tokenizer, 128
    )
    return [dict(e) for e in examples]


def _llama_like(vocab: int) -> object:
    from transformers import AutoModelForCausalLM, LlamaConfig

    config = LlamaConfig(
        vocab_size=vocab, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, pad_token_id=0,
    )  # fmt: skip
    return AutoModelForCausalLM.from_config(config)


@pytest.fixture
def tokenizer(tiny_gpt2: Path) -> object:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2)
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
    return tokenizer


@pytest.mark.parametrize(("architecture", "capacity"), [("gpt2", 128), ("llama", 128), ("llama", 40)])
def test_padded_and_padding_free_batches_give_the_same_loss(
    tiny_gpt2: Path, tokenizer, architecture: str, capacity: int
) -> None:
    import torch
    from transformers import AutoModelForCausalLM, DataCollatorForSeq2Seq

    torch.manual_seed(0)
    model = (
        AutoModelForCausalLM.from_pretrained(tiny_gpt2)
        if architecture == "gpt2"
        else _llama_like(len(tokenizer))
    )
    model.train()  # as the Trainer runs it: a causal LM keeps a cache by default even here
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    examples = _examples(tokenizer)
    padded = model(**DataCollatorForSeq2Seq(tokenizer, label_pad_token_id=IGNORE)(examples)).loss
    free = model(**PaddingFreeCollator(tokenizer.pad_token_id, capacity)(examples)).loss
    assert abs(float(padded) - float(free)) < 1e-4


def test_the_second_example_of_a_row_does_not_see_the_first(tiny_gpt2: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_gpt2)
    assert keeps_examples_apart(model)

    class SeesAcross(torch.nn.Module):  # a model that builds its mask without reading the position ids
        def __init__(self) -> None:
            super().__init__()
            self.inner, self.config = model, model.config

        def get_input_embeddings(self) -> torch.nn.Module:
            return model.get_input_embeddings()

        def forward(self, input_ids, position_ids, use_cache=False):
            return self.inner(input_ids=input_ids, position_ids=position_ids, use_cache=True)

    assert not keeps_examples_apart(SeesAcross())


def _segments(batch: dict) -> list[tuple[list, list]]:
    """Each stretch of a row whose positions count up from 0: (input ids, labels)."""
    found = []
    for ids, labels, positions in zip(
        batch["input_ids"], batch["labels"], batch["position_ids"], strict=True
    ):
        for i, position in enumerate(positions.tolist()):
            if position == 0:
                found.append(([], []))
            found[-1][0].append(int(ids[i]))
            found[-1][1].append(int(labels[i]))
    return found


@pytest.mark.parametrize("capacity", [128, 40])
def test_prompts_stay_masked_and_positions_restart_at_each_example(tokenizer, capacity: int) -> None:
    examples = _examples(tokenizer)
    batch = PaddingFreeCollator(tokenizer.pad_token_id, capacity)(examples)
    assert batch["use_cache"] is False
    real = sum(len(e["input_ids"]) for e in examples)
    assert len(batch["input_ids"]) == min(-(-real // capacity), len(examples))  # as few rows as it allows
    segments = _segments(batch)
    expected = [(e["input_ids"], [IGNORE, *e["labels"][1:]]) for e in examples]
    for example in expected:  # each example whole, once, its answer learned and its prompt still -100
        assert segments.count(example) == 1
    padding = [s for s in segments if s not in expected]
    assert all(set(labels) == {IGNORE} for _, labels in padding)  # the rows' padding learns nothing
    assert batch["input_ids"].numel() - real == sum(len(ids) for ids, _ in padding)


def test_the_padding_share_of_a_batch_order() -> None:
    assert padding_share([10, 10, 10, 10], 2) == 0.0
    assert padding_share([2, 10, 2, 10], 2) == pytest.approx(0.4)  # 24 real tokens in 40 slots
    assert padding_share([2, 2, 10, 10], 2) == 0.0  # the same examples, grouped by length


def test_the_tokens_counted_leave_the_padding_out(tokenizer) -> None:
    from transformers import DataCollatorForSeq2Seq

    from desktop.core.training.callbacks import CountingCollator, TokenCount

    examples = _examples(tokenizer)
    real = sum(len(e["input_ids"]) for e in examples)
    for collate in (PaddingFreeCollator(tokenizer.pad_token_id, 40), DataCollatorForSeq2Seq(tokenizer)):
        count = TokenCount()
        batch = CountingCollator(collate, count)([dict(e) for e in examples])
        assert count.tokens == real and count.slots == batch["input_ids"].numel() > real
        longest = max(len(e["input_ids"]) for e in examples)
        assert count.padded == len(examples) * longest  # what padding would have cost
