"""The rewards without code score known completions as their words say; the user's reward file's errors are
one sentence with its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.core.data import rewards
from desktop.core.settings.config_sections import Grpo
from desktop.core.system.errors import ConfigError

CHAT = [{"role": "user", "content": "Tom has 3 apples and buys 4 more. How many?"}]


def _texts(*completions: str) -> list[list[dict]]:
    """As TRL hands conversational completions to a reward."""
    return [[{"role": "assistant", "content": c}] for c in completions]


def test_the_answer_is_compared_as_text_as_a_number_or_as_a_label() -> None:
    line = rewards.format_pattern("answer-line")
    as_number = rewards.answer_reward("number", line)
    completions = _texts(
        "3 + 4 = 7\nAnswer: 7",
        "They have seven.\nAnswer: 7.0 apples",
        "3+4\n答案：７",  # full-width digit, Chinese colon
        "Answer: 8",
        "The answer is 7",  # no answer line: not the format, so no answer
        "Answer: 1,000,007",
    )
    assert as_number([CHAT] * 6, completions, answer=["7"] * 5 + ["1000007"]) == [1, 1, 1, 0, 0, 1]
    assert as_number([CHAT], _texts("Answer: 3/4"), answer=["0.75"]) == [1.0]
    assert as_number([CHAT], _texts("Answer: 75%"), answer=["0.75"]) == [1.0]
    assert as_number([CHAT, CHAT], _texts("Answer: 7", "Answer: 7"), answer=[None, ""]) == [None, None]

    as_text = rewards.answer_reward("text", line)
    got = as_text(
        [CHAT] * 3,
        _texts("Answer: **Paris**.", "Answer:  PARIS", "Answer: Paris, France"),
        answer=["Paris"] * 3,
    )
    assert got == [1, 1, 0]

    as_label = rewards.answer_reward("label", line, labels=["positive", "negative"])
    got = as_label(
        [CHAT] * 3, _texts("Answer: Positive", "Answer: negative", "Answer: good"), answer=["positive"] * 3
    )
    assert got == [1, 0, 0]


def test_each_format_preset_and_a_typed_expression_find_the_answer() -> None:
    think = rewards.format_pattern("think")
    assert rewards.answer_in("<think>3 and 4 make 7</think>\n7", think) == "7"
    assert rewards.answer_in("7 <think>late</think>", think) is None
    boxed = rewards.format_pattern("boxed")
    assert rewards.answer_in("so it is \\boxed{\\frac{3}{4}} in the end", boxed) == "\\frac{3}{4}"
    assert rewards.answer_in("Answer: 7", rewards.format_pattern("answer-line")) == "7"
    assert rewards.answer_in("Answer: 7\nbut wait, maybe 8", rewards.format_pattern("answer-line")) is None
    typed = rewards.format_pattern(r".*#### (?P<answer>-?\d+)")  # GSM8K's answers
    assert rewards.answer_in("work...\n#### 72", typed) == "72"
    fmt = rewards.format_reward(typed)
    assert fmt([CHAT, CHAT], _texts("x #### 72", "x = 72")) == [1.0, 0.0]

    with pytest.raises(ConfigError, match="not a valid regular expression"):
        rewards.format_pattern("(unclosed")
    with pytest.raises(ConfigError, match=r"no group to take the answer from"):
        rewards.format_pattern(r"Answer: \d+")


def test_length_and_language() -> None:
    length = rewards.length_reward(10, 20)
    assert length([CHAT] * 4, _texts("x" * 5, "x" * 15, "x" * 30, "x" * 45)) == [0.5, 1.0, 0.5, 0.0]

    language = rewards.language_reward()
    chinese = [{"role": "user", "content": "小明有3个苹果，又买了4个，一共几个？"}]
    got = language(
        [chinese, chinese, CHAT, CHAT],
        _texts("一共有7个苹果。答案：7", "He has 7 apples.", "He has 7.", "一共7个"),
    )
    assert got == [1.0, 0.0, 1.0, 0.0]


def test_a_reward_file_runs_and_its_errors_name_the_line(tmp_path: Path) -> None:
    good = tmp_path / "mine.py"
    good.write_text(
        "def reward(prompts, completions, answer=None, **columns):\n"
        "    return [1.0 if a in c else 0.0 for c, a in zip(completions, answer)]\n",
        encoding="utf-8",
    )
    mine = rewards.custom_reward(good)
    assert mine([CHAT, CHAT], _texts("it is 7", "it is 8"), answer=["7", "7"]) == [1.0, 0.0]

    broken = tmp_path / "broken.py"
    broken.write_text(
        "def reward(prompts, completions, **kw):\n    return [len(c) for c in completions\n", encoding="utf-8"
    )
    with pytest.raises(rewards.RewardFileError) as error:
        rewards.custom_reward(broken)
    assert str(error.value.message).startswith("broken.py, line 2:")

    failing = tmp_path / "failing.py"
    failing.write_text(
        "def helper(text):\n    return 1 / 0\n\ndef reward(prompts, completions, **kw):\n"
        "    return [helper(c) for c in completions]\n",
        encoding="utf-8",
    )
    with pytest.raises(rewards.RewardFileError) as error:
        rewards.custom_reward(failing)([CHAT], _texts("x"))
    assert str(error.value.message) == "failing.py, line 2: ZeroDivisionError: division by zero."

    wrong = tmp_path / "wrong.py"
    wrong.write_text("def reward(prompts, completions, **kw):\n    return 1.0\n", encoding="utf-8")
    with pytest.raises(rewards.RewardFileError, match="returned float instead of a list of 1 numbers"):
        rewards.custom_reward(wrong)([CHAT], _texts("x"))
    with pytest.raises(rewards.RewardFileError, match="has no function reward"):
        (tmp_path / "none.py").write_text("x = 1\n", encoding="utf-8")
        rewards.custom_reward(tmp_path / "none.py")


def test_the_preview_scores_the_reference_and_a_wrong_answer() -> None:
    settings = Grpo(format="answer-line", answer_check="number")
    rows = [(CHAT, "7"), ("12 - 5 = ?", "7"), ("2 * 3 = ?", "6")]
    first, *_ = rewards.preview(settings, rows)
    assert first.right == {"answer": 1.0, "format": 1.0}
    assert first.wrong_answer == "8" and first.wrong == {"answer": 0.0, "format": 1.0}


def test_answers_as_models_write_them() -> None:
    """What instruct models write, and GSM8K's references, score as a person would score them."""
    line = rewards.format_pattern("answer-line")
    as_number = rewards.answer_reward("number", line)
    cases = [
        ("Answer: 50%", "50"),  # a percentage of a percentage
        ("Answer: 75%", "0.75"),
        ("Answer: 7 apples (3 left over from 10)", "7"),  # the first number, not the last
        ("Answer: 3 + 4 = 7", "7"),  # after an "=", the last
        ("**Answer:** 72", "72"),  # Markdown bold, as Qwen's instruct models write it
        ("**Final Answer:** 72", "72"),
        ("Answer: $1,234.50", "1234.5"),
    ]
    assert (
        as_number([CHAT] * len(cases), _texts(*(c for c, _ in cases)), answer=[r for _, r in cases])
        == [1.0] * 7
    )
    assert rewards.reference_of("Natalia sold 48/2 = 24 clips in May.\n#### 72") == "72"  # GSM8K
    assert rewards.guess_check(["He has 3.\n#### 3", "So 10.\n#### 10"]) == ("number", [])
    think = rewards.format_pattern("think")  # DeepSeek-R1's template puts <think> in the prompt
    assert rewards.answer_in("let me see...</think>\n42", think) == "42"
    boxed = rewards.answer_reward("number", rewards.format_pattern("boxed"))
    assert boxed(
        [CHAT] * 2, _texts("\\boxed{\\frac{1}{4}}", "\\boxed{\\frac{3}{4}}"), answer=["\\frac{3}{4}", "0.75"]
    ) == [0.0, 1.0]


def test_a_reward_file_gets_the_data_columns_it_asks_for_and_never_trls_own(tmp_path: Path) -> None:
    mine = tmp_path / "mine.py"
    mine.write_text(
        "def reward(prompts, completions, answer):\n"
        "    return [1.0 if a in c else 0.0 for c, a in zip(completions, answer)]\n",
        encoding="utf-8",
    )
    scored = rewards.custom_reward(mine)(
        [CHAT], _texts("7"), answer=["7"], completion_ids=[[1]], trainer_state=None
    )
    assert scored == [1.0]


def test_the_preview_of_a_typed_format_compares_the_bare_answers() -> None:
    settings = Grpo(format=r"(?s).*#### (?P<answer>\S+)", answer_check="number")
    [first] = rewards.preview(settings, [("2 + 5 = ?", "Two and five.\n#### 7"), ("0 + 0 = ?", 0)], count=1)
    assert (first.reference, first.right, first.wrong) == ("7", {"answer": 1.0}, {"answer": 0.0})
