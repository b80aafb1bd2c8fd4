"""Loading translations into Qt: Qt's own (dialog buttons, file dialogs) and the app's."""

from __future__ import annotations

from PySide6.QtCore import QLibraryInfo, QLocale, QTranslator
from PySide6.QtWidgets import QApplication

from desktop.core.system.language import ENGLISH
from desktop.core.system.translations import Translations, translations

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


def install(app: QApplication, language: str) -> list[QTranslator]:
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
        installed.append(qt)
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
