"""Causal-LM preprocessing: the loss covers the responses, never the prompts."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from desktop.core.data.tables import Table
from desktop.core.data.tasks.causal_lm import IGNORE, encode
from desktop.core.settings.config import Columns


def _table(rows: list[dict]) -> Table:
    return Table(pd.DataFrame(rows), "test", [(0, "test row", None, 1)])


def _learned_text(tokenizer: object, example: dict) -> str:
    ids = [tok for tok, label in zip(example["input_ids"], example["labels"], strict=True) if label != IGNORE]
    return tokenizer.decode(ids)


def test_instruction_rows_learn_only_the_answer(tiny_gpt2: Path) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2)
    rows = [
        {
            "instruction": "What is the capital of Japan?",
            "input": "",
            "output": "The capital of Japan is Tokyo.",
        }
    ]
    examples, notes = encode(
        _table(rows), Columns(instruction="instruction", input="input", output="output"), tokenizer, 128
    )
    full = tokenizer.decode(examples[0]["input_ids"])
    assert full.startswith("<|user|>\nWhat is the capital of Japan?")
    assert _learned_text(tokenizer, examples[0]).strip() == "The capital of Japan is Tokyo.<|endoftext|>"
    assert notes == []


def test_chat_learns_every_assistant_turn(tiny_gpt2: Path) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2)
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Capital of Italy?"},
        {"role": "assistant", "content": "Rome."},
        {"role": "user", "content": "In Chinese?"},
        {"role": "assistant", "content": "罗马。"},
    ]
    examples, _ = encode(_table([{"messages": messages}]), Columns(messages="messages"), tokenizer, 256)
    learned = _learned_text(tokenizer, examples[0])
    assert "Rome." in learned and "罗马。" in learned
    assert "Capital of Italy" not in learned and "Be brief" not in learned


def test_prompt_completion_and_truncated_prompts(tiny_gpt2: Path) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2)
    rows = [{"prompt": "Q: 2+2=", "completion": " 4"}, {"prompt": "long " * 200, "completion": " x"}]
    examples, notes = encode(_table(rows), Columns(prompt="prompt", completion="completion"), tokenizer, 32)
    assert len(examples) == 1
    assert _learned_text(tokenizer, examples[0]) == " 4<|endoftext|>"
    assert "1 of 2 rows" in notes[0] and "max_length" in notes[0]


def test_plain_text_is_packed_into_blocks(tiny_gpt2: Path) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2)
    rows = [{"text": "The movie is great and the coffee is good. " * 3}] * 10
    examples, _ = encode(_table(rows), Columns(text="text"), tokenizer, 16)
    assert all(len(e["input_ids"]) == 16 for e in examples[:-1])
    assert all(e["labels"] == e["input_ids"] for e in examples)
