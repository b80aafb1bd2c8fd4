"""Guessing the column mapping by name and by content, and rendering causal-LM rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from desktop.core.data.columns import causal_format, guess_columns
from desktop.core.data.local_files import read_file
from desktop.core.data.tables import Table
from desktop.core.settings.config import Columns


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
    from desktop.core.data.chats import unusable_chats

    good = [{"role": "user", "content": "你好"}, {"role": "assistant", "content": "您好"}]
    no_reply = good[:1]
    values = pd.Series([good, no_reply, None, good, good, no_reply, "not json"])
    assert unusable_chats(values, chunk=2) == [1, 2, 5, 6] == unusable_chats(values)


def test_chats_kept_in_arrow_are_checked_as_python_checks_them(tmp_path) -> None:
    from desktop.core.data.chats import _unusable_arrow_chats, _usable_chat
    from desktop.core.data.local_files import read_file

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


def _chat_csv(path, cells) -> Any:
    """The chat column of a CSV file whose cells are ``cells`` (JSON text, as exported chats are)."""
    pd.DataFrame({"id": range(len(cells)), "messages": cells}).to_csv(path, index=False)
    return read_file(path).column("messages")


USER, REPLY = {"role": "user", "content": "问"}, {"role": "assistant", "content": "答"}


def test_chats_held_as_json_text_are_checked_by_arrow_as_python_checks_them(tmp_path, monkeypatch) -> None:
    from desktop.core.data import chats

    cells = [
        json.dumps([USER, REPLY], ensure_ascii=False),
        json.dumps([USER]),  # no reply
        "",  # no chat
        "null",
        "[]",
        json.dumps([USER, {"role": "assistant"}]),  # a reply without its text
        json.dumps([{"role": None, "content": "x"}, REPLY]),
        json.dumps([USER, dict(REPLY, name="bot")], ensure_ascii=False),  # more than role and content
        json.dumps([USER, REPLY], ensure_ascii=False, indent=2),  # over several lines
        "[null]",
    ] * 300
    column = _chat_csv(tmp_path / "chats.csv", cells)
    expected = [i for i, value in enumerate(column.tolist()) if not chats._usable_chat(value)]

    def python(*args: Any) -> list[int]:
        raise AssertionError("every cell here is JSON that Arrow reads: no Python objects")

    monkeypatch.setattr(chats, "_unusable_python_chats", python)
    assert chats.unusable_chats(column) == expected and len(expected) == 7 * 300


def test_json_text_that_arrow_refuses_is_checked_by_python_a_piece_at_a_time(tmp_path, monkeypatch) -> None:
    """A number for a role, text that is not JSON, an object for the list: Python's answer, for the
    piece that holds such a cell only."""
    from desktop.core.data import chats

    good = json.dumps([USER, REPLY], ensure_ascii=False)
    cells = [good] * 3000
    cells[10] = json.dumps([{"role": 1, "content": "x"}, REPLY])
    cells[1500] = "not json"
    cells[2999] = json.dumps({"role": "user", "content": "x"})
    column = _chat_csv(tmp_path / "chats.csv", cells)
    by_python: list[int] = []
    python = chats._unusable_python_chats

    def counted(values: Any, chunk: int = 10_000) -> list[int]:
        by_python.append(len(values))
        return python(values, chunk)

    monkeypatch.setattr(chats, "_unusable_python_chats", counted)
    monkeypatch.setattr(chats, "JSON_BYTES", 4096)  # pieces of about 100 cells
    assert chats.unusable_chats(column) == [10, 1500, 2999]
    assert len(by_python) == 3 and sum(by_python) < 400


def test_a_refusal_names_only_the_roles_not_found(tmp_path: Path) -> None:
    """A table with a label but no pictures said "no column was found for image, label"."""
    from desktop.core.data.columns import check_rows
    from desktop.core.system.errors import DataError

    path = tmp_path / "labels.csv"
    path.write_text("id,label\n1,cat\n2,dog\n3,cat\n", encoding="utf-8")
    table = read_file(path, pictures=True)

    guess = guess_columns(table, "image-classification")

    assert guess.columns.label == "label" and not guess.columns.image
    with pytest.raises(DataError, match=r"no column was found for image \(columns: id, label\)"):
        check_rows(table, "image-classification", guess.columns)
