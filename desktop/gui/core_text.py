"""Showing core's messages in the user's language."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QCoreApplication

from desktop.core.translations import CORE, render


def shown(text: Any) -> str:
    """``text`` translated when it is a :class:`~desktop.core.messages.Msg` (its values too, when they
    are messages themselves); other text as it is."""
    return render(text, lambda template: QCoreApplication.translate(CORE, template))
