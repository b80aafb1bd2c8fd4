"""Showing core's messages in the user's language."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QCoreApplication

from desktop.core.messages import Msg

CONTEXT = "core"


def shown(text: Any) -> str:
    """``text`` translated when it is a :class:`~desktop.core.messages.Msg` (its values too, when they
    are messages themselves); other text as it is."""
    if not isinstance(text, Msg):
        return "" if text is None else str(text)
    template = QCoreApplication.translate(CONTEXT, text.template)
    params = {key: shown(value) if isinstance(value, Msg) else value for key, value in text.params.items()}
    try:
        return template.format(**params)
    except (KeyError, IndexError, ValueError):  # a broken translation: the English text, not a crash
        return str(text)
