"""The language the app speaks: --lang, then the user's choice, then the system's."""

from __future__ import annotations

import pytest

from desktop.core.system.language import ENGLISH, SIMPLIFIED, TRADITIONAL, choose, normalize, system_language


@pytest.mark.parametrize(
    ("name", "language"),
    [
        ("zh_CN.UTF-8", SIMPLIFIED),
        ("zh-CN", SIMPLIFIED),
        ("zh_SG", SIMPLIFIED),
        ("zh-Hans-CN", SIMPLIFIED),
        ("zh", SIMPLIFIED),
        ("zh_TW.UTF-8", TRADITIONAL),
        ("zh-HK", TRADITIONAL),
        ("zh_MO", TRADITIONAL),
        ("zh-Hant", TRADITIONAL),
        ("en_US.UTF-8", ENGLISH),
        ("C", ENGLISH),
        ("de_DE@euro", ENGLISH),
    ],
)
def test_locales_map_to_the_three_languages(name: str, language: str) -> None:
    assert normalize(name) == language


def test_the_posix_variables_are_read_in_their_order_of_precedence() -> None:
    assert system_language({"LANG": "en_US.UTF-8", "LC_ALL": "zh_TW.UTF-8"}) == TRADITIONAL
    assert system_language({"LANG": "zh_CN.UTF-8", "LC_MESSAGES": ""}) == SIMPLIFIED
    assert system_language({}) == ENGLISH


def test_lang_beats_the_saved_choice_which_beats_the_system() -> None:
    system = {"LANG": "zh_CN.UTF-8"}
    assert choose("zh_TW", "en", system) == TRADITIONAL
    assert choose("", "en", system) == ENGLISH
    assert choose("", "", system) == SIMPLIFIED
    assert choose("", "klingon", system) == SIMPLIFIED  # a damaged setting falls back
