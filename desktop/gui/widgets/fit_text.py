"""The fit badge's words, shared by the model browser and the data page (translated in one context)."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication


def badge_text(badge: str) -> str:
    """``fits``, ``tight``, ``fits with LoRA``, ``fits with QLoRA`` or ``does not fit``, for the screen."""
    translate = QCoreApplication.translate
    words = {  # spelled out one by one so that pyside6-lupdate finds them
        "fits": translate("FitBadge", "fits"),
        "tight": translate("FitBadge", "tight"),
        "fits with LoRA": translate("FitBadge", "fits with LoRA"),
        "fits with QLoRA": translate("FitBadge", "fits with QLoRA"),
        "does not fit": translate("FitBadge", "does not fit"),
    }
    return words[badge]
