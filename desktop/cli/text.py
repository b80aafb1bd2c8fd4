"""The command line's words in the user's language: ``--lang``, else the system's (``LC_ALL`` /
``LC_MESSAGES`` / ``LANG``; the Windows display language).

The CLI's own sentences are written as ``say("template with {names}", names=...)``; core's messages
(:func:`desktop.core.system.messages.msg`) go through :func:`text`. Both come from the same translation files
as the windows' (``resources/i18n``, context ``core``), collected by ``tools/i18n.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from desktop.core.system.language import ENGLISH, LANGUAGES, choose
from desktop.core.system.messages import Msg
from desktop.core.system.translations import localized

language = ENGLISH
"""The language the CLI speaks in this process."""


def set_language(argv: Sequence[str]) -> list[str]:
    """Choose the language from ``--lang X`` / ``--lang=X`` anywhere in ``argv`` (read before the
    parser, whose help texts are translated too), else the system's; ``argv`` without that option."""
    global language
    explicit, rest, skip = "", [], False
    for i, arg in enumerate(argv):
        if skip:
            skip = False
        elif arg == "--lang" and i + 1 < len(argv):
            explicit, skip = argv[i + 1], True
        elif arg.startswith("--lang="):
            explicit = arg.partition("=")[2]
        else:
            rest.append(arg)
    if explicit and explicit not in LANGUAGES:
        rest += ["--lang", explicit]  # the parser says what is allowed
    language = choose(explicit if explicit in LANGUAGES else "")
    return rest


def say(template: str, **params: Any) -> str:
    """A sentence of the CLI, translated; ``template`` is a literal with ``{name}`` placeholders."""
    return localized(Msg(template, **params), language)


def text(value: Any) -> str:
    """A core message (or plain text) in the CLI's language."""
    return localized(value, language)
