"""The fit badge's words, shared by the model browser and the data page (translated in one context)."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication


def badge_text(badge: str) -> str:
    """``fits``, ``tight``, ``fits with LoRA``, ``fits with QLoRA`` or ``does not fit``, for the screen."""
    tr = lambda text: QCoreApplication.translate("FitBadge", text)  # noqa: E731
    return {
        "fits": tr("fits"),
        "tight": tr("tight"),
        "fits with LoRA": tr("fits with LoRA"),
        "fits with QLoRA": tr("fits with QLoRA"),
        "does not fit": tr("does not fit"),
    }[badge]
