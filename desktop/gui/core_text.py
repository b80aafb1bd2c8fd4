"""Showing core's messages in the user's language."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QCoreApplication

from desktop.core.system.translations import CORE, render


def shown(text: Any) -> str:
    """``text`` translated when it is a :class:`~desktop.core.system.messages.Msg` (its values too, when they
    are messages themselves); other text as it is."""
    return render(text, lambda template: QCoreApplication.translate(CORE, template))


def error_text(exc: BaseException, separator: str = "\n") -> str:
    """What a failure says to the user, in the user's language: a :class:`StudioError`'s message and
    hint; any other exception's own text."""
    from desktop.core.system.errors import StudioError
    from desktop.core.system.messages import Msg

    if not isinstance(exc, StudioError):
        first = exc.args[0] if len(exc.args) == 1 else None
        return shown(first) if isinstance(first, Msg) else str(exc)  # ValueError(msg("..."))
    message, hint = shown(exc.message), shown(exc.hint)
    return f"{message}{separator}{hint}" if hint else message


def sentences(*texts: str) -> str:
    """Whole sentences, already in the user's language, one after another (empty ones left out): a
    space between English sentences, none between Chinese ones (the translation of ``{first} {then}``)."""
    joined = ""
    for text in texts:
        if text:
            joined = (
                QCoreApplication.translate(CORE, "{first} {then}").format(first=joined, then=text)
                if joined
                else text
            )
    return joined
