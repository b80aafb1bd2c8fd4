"""Preference pairs from the layouts people have, and the checks that name the bad rows (issue 38)."""

from __future__ import annotations

import json

from desktop.core.data.tasks.preference import Pair, content_problems, length_problems, read_pair


def test_prompt_chosen_rejected_as_text() -> None:
    pair = read_pair({"prompt": "2 + 2?", "chosen": "4", "rejected": "5"}, prompt="prompt")
    assert pair == Pair([{"role": "user", "content": "2 + 2?"}], "4", "5")


def test_ultrafeedbacks_two_conversations_share_the_prompt() -> None:
    asked = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "法国的首都是哪里？"}]
    row = {
        "prompt": "法国的首都是哪里？",
        "chosen": json.dumps([*asked, {"role": "assistant", "content": "巴黎。"}], ensure_ascii=False),
        "rejected": [*asked, {"role": "assistant", "content": "我不知道。"}],
    }
    assert read_pair(row, prompt="prompt") == Pair(asked, "巴黎。", "我不知道。")
    parted = {
        "chosen": [*asked, {"role": "assistant", "content": "a"}],
        "rejected": [asked[1], {"role": "assistant", "content": "b"}],
    }
    assert read_pair(parted) is None  # two different prompts: not one pair


def test_anthropic_hh_finds_the_shared_prompt_by_the_common_beginning() -> None:
    chosen = (
        "\n\nHuman: Hi!\n\nAssistant: Hello.\n\nHuman: Tell me a joke."
        "\n\nAssistant: Why did the GPU cross the road?"
    )
    rejected = "\n\nHuman: Hi!\n\nAssistant: Hello.\n\nHuman: Tell me a joke.\n\nAssistant: No."
    pair = read_pair({"chosen": chosen, "rejected": rejected})
    assert pair is not None and pair.prompt == [
        {"role": "user", "content": "Hi!"},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "Tell me a joke."},
    ]
    assert (pair.chosen, pair.rejected) == ("Why did the GPU cross the road?", "No.")
    unlined = read_pair({"chosen": chosen.lstrip(), "rejected": rejected.lstrip()})  # "Human:" first
    assert unlined == pair
    # Answers that begin alike ("Why ..." / "Why not") still part after the last shared Assistant: turn.
    alike = read_pair({"chosen": chosen, "rejected": chosen.replace("the GPU cross", "not")})
    assert alike is not None and alike.rejected == "Why did not the road?"


def test_each_bad_pair_is_named_with_its_rows() -> None:
    pairs = [
        Pair([{"role": "user", "content": "q"}], "same", "same "),
        Pair([{"role": "user", "content": "q"}], "", "no"),
        Pair([{"role": "user", "content": "long " * 50}], "a", "b"),
        Pair([{"role": "user", "content": "q"}], "a long answer " * 10, "b"),
        None,
        Pair([{"role": "user", "content": "q"}], "fine", "also fine"),
    ]

    def tokens(pair: Pair) -> tuple[int, int, int]:
        return len(pair.prompt[0]["content"].split()), len(pair.chosen.split()), len(pair.rejected.split())

    def pair_problems(pairs: list, locate: object, tokens: object, max_length: int) -> list[str]:
        return content_problems(pairs, locate)[1] + length_problems(pairs, locate, tokens, max_length)[1]

    found = pair_problems(pairs, lambda rows: ", ".join(f"row {i + 2}" for i in rows), tokens, max_length=20)
    assert found == [
        "Rows with no readable prompt, chosen and rejected answer (1): row 6.",
        "Rows whose chosen answer is the rejected one (1): row 2. Such a pair teaches nothing.",
        "Rows with an empty answer (1): row 3.",
        "Rows whose prompt alone fills the max length of 20 tokens, so that both answers would be cut to "
        "nothing (1): row 4.",
        "The max length of 20 tokens cuts the answers of 1 of 6 pairs (17%): row 5.",
        "A max length of 48 keeps 95% of the pairs whole.",  # whole: 2, 3, 31 and 51 tokens
    ]
    assert pair_problems(pairs[-1:], str, tokens, 20) == []


def test_the_bad_pairs_refusal_is_one_message_in_the_users_language(tmp_path) -> None:
    import pandas as pd
    import pytest

    from desktop.core.data.tables import Table
    from desktop.core.data.tasks.preference import check_pairs
    from desktop.core.settings.config import Columns
    from desktop.core.system.errors import DataError
    from desktop.core.system.translations import localized

    rows = pd.DataFrame(
        {"prompt": ["q", "q", "q"], "chosen": ["a", "same", ""], "rejected": ["b", "same", "no"]}
    )
    segments = [(0, ("pairs.jsonl", "line"), None, 1)]
    columns = Columns(prompt="prompt", chosen="chosen", rejected="rejected")
    with pytest.raises(DataError) as refused:
        check_pairs(Table(rows, "pairs.jsonl", segments), columns, drop_bad_rows=False)
    said = localized(refused.value.message, "zh_CN")
    assert "Rows" not in said and "pairs.jsonl" in said and "空" in said, said
