"""What the frozen launcher and the window share: core's messages in the user's language, Qt's
translators, and the settings file.

The launcher is frozen with PySide6 and ``desktop.core.system`` / ``environment`` only, so this module
imports nothing else of the app (an import-linter contract in pyproject.toml holds it to that).
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QCoreApplication, QLibraryInfo, QLocale, QSettings, QTranslator
from PySide6.QtWidgets import QApplication

from desktop.core.system.language import ENGLISH
from desktop.core.system.translations import CORE, Translations, render, translations

# --------------------------------------------------------------------------- core's messages


def shown(text: Any) -> str:
    """``text`` translated when it is a :class:`~desktop.core.system.messages.Msg` (its values too, when they
    are messages themselves); other text as it is."""
    return render(text, lambda template: QCoreApplication.translate(CORE, template))


def error_text(exc: BaseException, separator: str = "\n") -> str:
    """What a failure says to the user, in the user's language: a :class:`StudioError`'s message and
    hint; an operating system's error in our words (its own text is the error's ``detail``); any other
    exception's own text."""
    from desktop.core.system.errors import StudioError, os_error
    from desktop.core.system.messages import Msg

    exc = os_error(exc) or exc  # "[Errno 13] Permission denied: ..." in our words
    if not isinstance(exc, StudioError):
        first = exc.args[0] if len(exc.args) == 1 else None
        return shown(first) if isinstance(first, Msg) else str(exc)  # ValueError(msg("..."))
    message, hint = shown(exc.message), shown(exc.hint)
    if separator == " ":  # on one line: as the language joins sentences (no space after "。")
        return sentences(message, hint)
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


# --------------------------------------------------------------------------- settings


class Key(str, Enum):  # noqa: UP042 - QSettings takes the members as plain str; StrEnum's str() differs
    """Every settings key the app uses."""

    GEOMETRY = "window/geometry"
    STEP = "window/step"
    LAST_DATA_FOLDER = "folders/data"
    LAST_MODEL_FOLDER = "folders/model"
    LAST_EXPORT_FOLDER = "folders/export"
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


# --------------------------------------------------------------------------- translators


current = ENGLISH
"""The language the app's translators were installed for (the model card gets a section in it)."""


class TableTranslator(QTranslator):
    """A translator over the app's :class:`~desktop.core.system.translations.Translations`, which are read
    from the ``.ts`` files themselves (no compiled ``.qm``)."""

    def __init__(self, table: Translations, parent: QApplication | None = None) -> None:
        super().__init__(parent)
        self.table = table

    def translate(self, context, source_text, disambiguation=None, n=-1):
        # None: no translation here, and Qt asks the next translator (an empty text would end the search).
        return self.table.translate(context, source_text, disambiguation or "", n)

    def isEmpty(self) -> bool:
        return not len(self.table)


class QtMnemonicTranslator(QTranslator):
    """Qt's own strings that gained a keyboard mnemonic after its translations were made: Qt 6.11's file
    dialog asks for "&Look in:" and "Files of &type:", while ``qtbase_zh_CN.qm`` has only "Look in:" and
    "Files of type:", so those labels showed in English in the Chinese window. Such a string is
    translated as its plain form is, with the mnemonic after it as Chinese menus write it:
    "查找范围(&L)：".
    """

    def __init__(self, qt: QTranslator, parent: QApplication | None = None) -> None:
        super().__init__(parent)
        self.qt = qt

    def translate(self, context, source_text, disambiguation=None, n=-1):
        at = source_text.find("&")
        if at < 0 or at + 1 >= len(source_text) or not context.startswith("Q"):
            return None  # Qt asks the next translator
        if self.qt.translate(context, source_text, disambiguation, n):
            return None  # Qt's own translation has it
        plain = self.qt.translate(context, source_text[:at] + source_text[at + 1 :], disambiguation, n)
        if not plain:
            return None
        end = plain[-1] if plain[-1] in ":：" else ""
        return f"{plain.removesuffix(end)}(&{source_text[at + 1].upper()}){end}"

    def isEmpty(self) -> bool:
        return self.qt.isEmpty()


def install_translators(app: QApplication, language: str) -> list[QTranslator]:
    """Install the translators for ``language`` (``zh_CN`` / ``zh_TW``; English's plural forms).

    Qt's base translations ship with PySide6, so message-box buttons and file dialogs follow the
    language too. Returns the translators installed.
    """
    global current
    current = language
    if language == ENGLISH:  # only the plural forms: "1 row", "2 rows"
        plurals = TableTranslator(translations(ENGLISH), app)
        if not plurals.isEmpty():
            app.installTranslator(plurals)
            return [plurals]
        return []
    QLocale.setDefault(QLocale(language))
    installed: list[QTranslator] = []
    qt_folder = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    # qtbase_*.qm, not the qt_*.qm meta catalogue: that one also wants modules PySide6-Essentials leaves out.
    qt = QTranslator(app)
    if qt.load(f"qtbase_{language}", qt_folder):
        installed += [qt, QtMnemonicTranslator(qt, app)]  # installed later, asked first
    ours = TableTranslator(translations(language), app)
    if not ours.isEmpty():
        installed.append(ours)
    for translator in installed:
        app.installTranslator(translator)
    return installed


FONT_PACKAGES = (
    "Debian / Ubuntu: sudo apt install fonts-noto-cjk",
    "Fedora: sudo dnf install google-noto-sans-cjk-fonts",
    "Arch: sudo pacman -S noto-fonts-cjk",
    "openSUSE: sudo zypper install noto-sans-cjk-fonts",
)


def chinese_font_missing(language: str, platform: str | None = None) -> bool:
    """Whether ``language`` is Chinese and this Linux has no font with Chinese characters (each would
    show as a box). Windows and macOS always have one."""
    import sys

    from PySide6.QtGui import QFontDatabase

    if language == ENGLISH or (platform or sys.platform) != "linux":
        return False
    system = (
        QFontDatabase.WritingSystem.TraditionalChinese
        if language == "zh_TW"
        else QFontDatabase.WritingSystem.SimplifiedChinese
    )
    return not QFontDatabase.families(system)


def font_notice(language: str) -> str:
    """What to install for Chinese text, in English and in Chinese's own characters' absence: the app
    shows this (in English, which every font can draw) and stays in English until a font is there."""
    name = {"zh_CN": "Simplified Chinese", "zh_TW": "Traditional Chinese"}.get(language, "Chinese")
    return (
        f"Finetune Studio is set to {name}, but this computer has no font with Chinese characters, so "
        "the app stays in English for now. Install one, then start the app again:\n\n"
        + "\n".join(FONT_PACKAGES)
    )
