"""Application start-up: Qt application, theme, settings and the main window."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QPalette
from PySide6.QtWidgets import QApplication

from desktop.core.system.paths import resources_dir

RESOURCES = resources_dir()


def dark_palette() -> QPalette:
    """Fusion's palette in dark colours."""
    p = QPalette()
    colors = {
        QPalette.ColorRole.Window: "#202124",
        QPalette.ColorRole.WindowText: "#e8eaed",
        QPalette.ColorRole.Base: "#17181a",
        QPalette.ColorRole.AlternateBase: "#2a2b2e",
        QPalette.ColorRole.Text: "#e8eaed",
        QPalette.ColorRole.Button: "#2d2e31",
        QPalette.ColorRole.ButtonText: "#e8eaed",
        QPalette.ColorRole.Highlight: "#2f6fde",
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.ToolTipBase: "#2d2e31",
        QPalette.ColorRole.ToolTipText: "#e8eaed",
        QPalette.ColorRole.PlaceholderText: "#9aa0a6",
        QPalette.ColorRole.Link: "#8ab4f8",
    }
    for role, color in colors.items():
        p.setColor(role, QColor(color))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText, QPalette.ColorRole.WindowText):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor("#6f7378"))
    return p


def apply_theme(app: QApplication, theme: str = "auto") -> None:
    """Fusion style, light or dark as the OS says (or as ``theme`` forces); plots follow the palette."""
    app.setStyle("Fusion")
    dark = theme == "dark" or (
        theme == "auto" and QGuiApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark
    )
    palette = dark_palette() if dark else app.style().standardPalette()
    app.setPalette(palette)
    app.setStyleSheet((RESOURCES / "style.qss").read_text(encoding="utf-8"))


def windowed_streams() -> None:
    """Give a windowed app (``pythonw``) somewhere to write: its ``sys.stdout`` and ``sys.stderr`` are
    ``None`` there, and libraries that print (tqdm, warnings) would raise. They go to the app's log."""
    if sys.stdout is not None and sys.stderr is not None:
        return
    from desktop.core.system.paths import data_dir

    try:
        folder = data_dir() / "logs"
        folder.mkdir(parents=True, exist_ok=True)
        log = open(folder / "app-output.log", "a", encoding="utf-8", buffering=1)  # noqa: SIM115
    except OSError:
        log = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
    sys.stdout = sys.stdout or log
    sys.stderr = sys.stderr or log


APP_USER_MODEL_ID = "FinetuneStudio.App"
"""The Windows taskbar identity of the app's windows; the installer gives its shortcuts the same, so
the window groups under them and pinning it pins the launcher (installer/finetune-studio.nsi)."""


def windows_identity() -> None:
    """On Windows, show the taskbar button as Finetune Studio (with its icon), not pythonw.exe."""
    if sys.platform == "win32":
        import ctypes

        ctypes.windll.shell32.SetCurrentProcessExplicitAppUserModelID(APP_USER_MODEL_ID)  # type: ignore[attr-defined]


def main(argv: list[str] | None = None) -> int:
    """Start the desktop app."""
    windowed_streams()
    windows_identity()
    parser = argparse.ArgumentParser(prog="finetune-studio")
    parser.add_argument("--screenshots", type=Path, metavar="DIR", help="save a PNG of every page and quit")
    parser.add_argument("--theme", choices=("auto", "light", "dark"), default="auto")
    parser.add_argument(
        "--lang",
        choices=("en", "zh_CN", "zh_TW"),
        help="the language (default: as chosen, else the system's)",
    )
    parser.add_argument("--sample", action="store_true", help="open with the bundled sample loaded")
    parser.add_argument("--repair", action="store_true", help="install the matching PyTorch first thing")
    parser.add_argument(
        "--wait-pid", type=int, help=argparse.SUPPRESS
    )  # the window that restarted for --repair
    parser.add_argument("--settings", type=Path, help=argparse.SUPPRESS)  # an INI file, for tests and benches
    parser.add_argument("--quit-when-shown", action="store_true", help=argparse.SUPPRESS)  # start-up bench
    args = parser.parse_args(argv)
    from desktop.core.system.data_location import use_moved_model_cache

    use_moved_model_cache()  # before the hub libraries read HF_HOME
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Finetune Studio")
    app.setOrganizationName("FinetuneStudio")
    app.setWindowIcon(QIcon(str(RESOURCES / "icon.png")))
    apply_theme(app, args.theme)
    from desktop import shared_ui
    from desktop.core.system.language import choose
    from desktop.shared_ui import Key, Settings, chinese_font_missing, install_translators

    settings = Settings(args.settings)
    language = choose(args.lang or "", settings.text(Key.LANGUAGE))
    font_notice = ""
    if chinese_font_missing(language):  # boxes instead of characters: English, and what to install
        font_notice, language = shared_ui.font_notice(language), "en"
        logging.warning("no font with Chinese characters: %s", font_notice)
    install_translators(app, language)
    if args.screenshots:
        from desktop.gui.app_support.screenshots import save_screenshots
        from desktop.gui.app_support.workers import leave

        save_screenshots(args.screenshots, args.theme)
        return leave(0)  # the windows it showed may have started background work

    from desktop.core.system.instance import InstanceMark, wait_for_exit
    from desktop.gui.app_support.import_hook import read_sources_cheaply

    read_sources_cheaply()  # before the window's own modules are imported, not only those after it
    from desktop.gui.main_window import MainWindow

    if args.wait_pid and not wait_for_exit(args.wait_pid):
        logging.warning("the window that asked for the repair (process %s) is still open", args.wait_pid)
    mark = InstanceMark("app").acquire()  # the launcher, the repair and the uninstaller see this window

    window = MainWindow(settings, repair_on_start=args.repair)
    window.show()
    if font_notice:
        from PySide6.QtWidgets import QMessageBox

        QTimer.singleShot(0, lambda: QMessageBox.information(window, "Finetune Studio", font_notice))
    if args.sample:
        window.load_sample()
    if args.theme == "auto":  # follow the OS when the user switches between light and dark
        QGuiApplication.styleHints().colorSchemeChanged.connect(lambda _: apply_theme(app, "auto"))
    if args.quit_when_shown:
        QTimer.singleShot(0, lambda: (print("shown", flush=True), window.close(), app.quit()))
    code = app.exec()
    mark.release()
    from desktop.gui.app_support.workers import leave

    return leave(code)


if __name__ == "__main__":
    sys.exit(main())
