"""Guessing the column mapping by name and by content, and rendering causal-LM rows."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from desktop.core.columns import causal_format, guess_columns
from desktop.core.config import Columns
from desktop.core.data import Table, read_file


def _table(rows: list[dict]) -> Table:
    return Table(pd.DataFrame(rows), "test", [(0, "test row", None, 1)])


def test_classification_by_english_names() -> None:
    table = _table(
        [
            {"id": 1, "Review": "great phone", "Sentiment": "pos"},
            {"id": 2, "Review": "bad", "Sentiment": "neg"},
        ]
    )
    guess = guess_columns(table, "classification")
    assert (guess.columns.text, guess.columns.label) == ("Review", "Sentiment")
    assert guess.found_by == {"text": "name", "label": "name"}


def test_classification_by_chinese_names() -> None:
    table = _table([{"评论": "很好", "类别": "好评"}, {"评论": "很差", "类别": "差评"}])
    guess = guess_columns(table, "classification")
    assert (guess.columns.text, guess.columns.label) == ("评论", "类别")


def test_classification_by_content_when_names_say_nothing() -> None:
    rows = [
        {"kol_a": lab, "kol_b": f"这是一条比较长的用户留言，编号 {i}，内容各不相同。"}
        for i, lab in enumerate(["满意", "不满意"] * 10)
    ]
    guess = guess_columns(_table(rows), "classification")
    assert (guess.columns.text, guess.columns.label) == ("kol_b", "kol_a")
    assert guess.found_by == {"text": "content", "label": "content"}


def test_config_choice_wins() -> None:
    table = _table([{"text": "a", "other": "b", "label": "x"}, {"text": "c", "other": "d", "label": "y"}])
    guess = guess_columns(table, "classification", Columns(text="other"))
    assert guess.columns.text == "other" and guess.found_by["text"] == "config"
    assert guess.columns.label == "label"


@pytest.mark.parametrize(
    ("rows", "fmt", "roles"),
    [
        (
            [{"instruction": "Add", "input": "1 2", "output": "3"}],
            "instruction",
            {"instruction", "input", "output"},
        ),
        ([{"prompt": "Q: 1+1", "completion": " 2"}], "prompt", {"prompt", "completion"}),
        (
            [{"conversations": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}],
            "chat",
            {"messages"},
        ),
        ([{"content": "Once upon a time"}], "text", {"text"}),
    ],
)
def test_causal_lm_formats(rows: list[dict], fmt: str, roles: set[str]) -> None:
    guess = guess_columns(_table(rows * 3), "causal-lm")
    assert causal_format(guess.columns) == fmt
    assert set(guess.columns.mapped()) == roles


def test_chat_by_content_in_a_csv_cell() -> None:
    cell = '[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]'
    guess = guess_columns(_table([{"dlg": cell}] * 3), "causal-lm")
    assert guess.columns.messages == "dlg" and guess.found_by["messages"] == "content"


def test_seq2seq_by_names_and_content(samples: Path) -> None:
    guess = guess_columns(read_file(samples / "translation.tsv"), "seq2seq")
    assert (guess.columns.source, guess.columns.target) == ("source", "target")
    rows = [{"英文": f"I like item {i}.", "中文": f"我喜欢第{i}件东西。"} for i in range(5)]
    guess = guess_columns(_table(rows), "seq2seq")
    assert (guess.columns.source, guess.columns.target) == ("英文", "中文")


def test_chats_are_checked_a_chunk_at_a_time_and_every_bad_one_is_found() -> None:
    from desktop.core.columns import _unusable_chats

    good = [{"role": "user", "content": "你好"}, {"role": "assistant", "content": "您好"}]
    no_reply = good[:1]
    values = pd.Series([good, no_reply, None, good, good, no_reply, "not json"])
    assert _unusable_chats(values, chunk=2) == [1, 2, 5, 6] == _unusable_chats(values)


def test_chats_kept_in_arrow_are_checked_as_python_checks_them(tmp_path) -> None:
    from desktop.core.columns import _unusable_arrow_chats, _usable_chat
    from desktop.core.data import read_file

    user, reply = {"role": "user", "content": "问"}, {"role": "assistant", "content": "答"}
    cells = [
        [user, reply],
        [user],  # no reply
        None,  # no chat
        [],
        [user, {"role": "assistant"}],  # a reply without its text
        [{"role": None, "content": "x"}, reply],
        [reply],
        [user, reply, user],
        [user, {"role": "assistant", "content": "好", "name": "bot"}],
    ] * 700  # more rows than one Arrow chunk holds, in some files
    path = tmp_path / "chats.jsonl"
    path.write_text("".join(json.dumps({"messages": c}, ensure_ascii=False) + "\n" for c in cells), "utf-8")
    column = read_file(path).column("messages")
    expected = [i for i, value in enumerate(column.tolist()) if not _usable_chat(value)]
    assert _unusable_arrow_chats(column) == expected and len(expected) == 5 * 700
