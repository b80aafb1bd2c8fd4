"""Loading translations into Qt: Qt's own (dialog buttons, file dialogs) and the app's, when present."""

from __future__ import annotations

from PySide6.QtCore import QLibraryInfo, QLocale, QTranslator
from PySide6.QtWidgets import QApplication

from desktop.core.language import ENGLISH
from desktop.core.paths import resources_dir


def install(app: QApplication, language: str) -> list[QTranslator]:
    """Install the translators for ``language`` (``zh_CN`` / ``zh_TW``; nothing for English).

    Qt's base translations ship with PySide6, so message-box buttons and file dialogs follow the
    language even for texts the app has not translated yet. Returns the translators installed.
    """
    if language == ENGLISH:
        return []
    QLocale.setDefault(QLocale(language))
    installed = []
    qt_folder = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    # qtbase_*.qm, not the qt_*.qm meta catalogue: that one also wants modules PySide6-Essentials leaves out.
    for folder, base in ((qt_folder, "qtbase"), (str(resources_dir() / "i18n"), "finetune_studio")):
        translator = QTranslator(app)
        if translator.load(f"{base}_{language}", folder):
            app.installTranslator(translator)
            installed.append(translator)
    return installed
