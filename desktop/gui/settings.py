"""UI state (geometry, last folders, last run config) in QSettings behind one small class."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings


class Key(str, Enum):
    """Every settings key the app uses."""

    GEOMETRY = "window/geometry"
    STEP = "window/step"
    LAST_DATA_FOLDER = "folders/data"
    LAST_MODEL_FOLDER = "folders/model"
    LAST_CONFIG = "run/last_config"
    INDEX_URL = "environment/index_url"
    DISMISSED_RESUME = "runs/dismissed_resume"
    LANGUAGE = "view/language"
    KEEP_AWAKE = "runs/keep_awake"


class Settings:
    """Typed access to the app's QSettings.

    Args:
        path: An INI file to use instead of the platform's store (tests point it at a temp file).
    """

    def __init__(self, path: Path | None = None) -> None:
        if path is not None:
            self._qs = QSettings(str(path), QSettings.Format.IniFormat)
        else:
            self._qs = QSettings(
                QSettings.Format.IniFormat, QSettings.Scope.UserScope, "FinetuneStudio", "FinetuneStudio"
            )

    def text(self, key: Key, default: str = "") -> str:
        """A text value."""
        value = self._qs.value(key.value, default)
        return value if isinstance(value, str) else default

    def set_text(self, key: Key, value: str) -> None:
        """Store a text value."""
        self._qs.setValue(key.value, value)

    def bytes(self, key: Key) -> QByteArray | None:
        """A binary value (window geometry)."""
        value = self._qs.value(key.value)
        return value if isinstance(value, QByteArray) else None

    def set_bytes(self, key: Key, value: QByteArray) -> None:
        """Store a binary value."""
        self._qs.setValue(key.value, value)

    def number(self, key: Key, default: int = 0) -> int:
        """A whole number."""
        try:
            return int(self._qs.value(key.value, default))
        except (TypeError, ValueError):
            return default

    def set_number(self, key: Key, value: int) -> None:
        """Store a whole number."""
        self._qs.setValue(key.value, value)

    def sync(self) -> None:
        """Write pending changes to disk."""
        self._qs.sync()
