"""The main window's menus: File, Runs, View › Language, Settings."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, Signal
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMenu, QMenuBar

from desktop.shared_ui import Key, Settings


class MainMenuBar(QMenuBar):
    """The menus, each item a request the window carries out; the language and keeping the computer
    awake are remembered in ``settings``.

    The words are translated in the context ``MainWindow`` (spelled out in each call, so that
    pyside6-lupdate finds them there).
    """

    sample_requested = Signal()
    """File › Try the sample."""
    open_requested = Signal()
    """File › Open run config."""
    save_requested = Signal()
    """File › Save run config."""
    quit_requested = Signal()
    """File › Quit."""
    history_requested = Signal()
    """Runs › Run history."""
    try_folder_requested = Signal()
    """Runs › Try a model folder."""
    language_chosen = Signal(str)
    """View › Language: the code of the language chosen (``en``, ``zh_CN``, ``zh_TW``)."""
    sources_requested = Signal()
    move_data_requested = Signal()
    """Settings › Model sources and tokens."""
    diagnostics_requested = Signal()
    """Help › Copy diagnostics for a problem report."""
    logs_requested = Signal()
    """Help › Open the logs folder."""
    keep_awake_toggled = Signal(bool)
    """Settings › Keep the computer awake while training: whether it is on now (remembered already)."""

    def __init__(self, settings: Settings) -> None:
        super().__init__()
        self._settings = settings
        translate = QCoreApplication.translate
        file_menu = self.addMenu(translate("MainWindow", "&File"))
        sample = QAction(translate("MainWindow", "Try the &sample"), self)
        sample.triggered.connect(self.sample_requested)
        open_action = QAction(
            translate("MainWindow", "&Open run config…"), self, shortcut=QKeySequence.StandardKey.Open
        )
        open_action.triggered.connect(self.open_requested)
        save_action = QAction(
            translate("MainWindow", "&Save run config…"), self, shortcut=QKeySequence.StandardKey.Save
        )
        save_action.triggered.connect(self.save_requested)
        quit_action = QAction(translate("MainWindow", "&Quit"), self, shortcut=QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.quit_requested)
        for action in (sample, open_action, save_action):
            file_menu.addAction(action)
        file_menu.addSeparator()
        file_menu.addAction(quit_action)
        runs_menu = self.addMenu(translate("MainWindow", "&Runs"))
        history = QAction(translate("MainWindow", "&Run history…"), self, shortcut=QKeySequence("Ctrl+R"))
        history.triggered.connect(self.history_requested)
        try_folder = QAction(translate("MainWindow", "&Try a model folder…"), self)
        try_folder.triggered.connect(self.try_folder_requested)
        runs_menu.addAction(history)
        runs_menu.addAction(try_folder)
        view_menu = self.addMenu(translate("MainWindow", "&View"))
        language_menu = view_menu.addMenu(translate("MainWindow", "&Language"))
        self.language_actions = self._language_actions(language_menu)
        """The language actions by code; the one in use is checked."""
        settings_menu = self.addMenu(translate("MainWindow", "&Settings"))
        sources_action = QAction(translate("MainWindow", "Model &sources and tokens…"), self)
        sources_action.triggered.connect(self.sources_requested)
        settings_menu.addAction(sources_action)
        move_action = QAction(translate("MainWindow", "&Move the data folder…"), self)
        move_action.setToolTip(
            translate(
                "MainWindow",
                "Runs, the runtime and caches (and, if you choose, the downloaded models) to another drive",
            )
        )
        move_action.triggered.connect(self.move_data_requested)
        settings_menu.addAction(move_action)
        self.keep_awake_action = QAction(
            translate("MainWindow", "&Keep the computer awake while training"), self
        )
        self.keep_awake_action.setCheckable(True)
        self.keep_awake_action.setChecked(bool(settings.number(Key.KEEP_AWAKE, 1)))
        self.keep_awake_action.toggled.connect(self._on_keep_awake_action_toggled)
        settings_menu.addAction(self.keep_awake_action)
        help_menu = self.addMenu(translate("MainWindow", "&Help"))
        diagnostics = QAction(translate("MainWindow", "Copy &diagnostics for a problem report"), self)
        diagnostics.setToolTip(
            translate(
                "MainWindow", "This computer's GPUs, drivers and libraries, ready to paste into a report"
            )
        )
        diagnostics.triggered.connect(self.diagnostics_requested)
        logs = QAction(translate("MainWindow", "Open the &logs folder"), self)
        logs.setToolTip(
            translate("MainWindow", "The app's own log; each run keeps its train.log in its folder")
        )
        logs.triggered.connect(self.logs_requested)
        help_menu.addAction(diagnostics)
        help_menu.addAction(logs)

    def _language_actions(self, menu: QMenu) -> dict[str, QAction]:
        """English, 简体中文, 繁體中文: each named as its readers write it; the one in use checked."""
        from desktop.core.system.language import LANGUAGES, choose

        current = choose("", self._settings.text(Key.LANGUAGE))
        group = QActionGroup(self)
        actions = {}
        for code, name in LANGUAGES.items():
            action = QAction(name, self, checkable=True, checked=code == current)
            action.triggered.connect(lambda _=False, code=code: self.language_chosen.emit(code))
            group.addAction(action)
            menu.addAction(action)
            actions[code] = action
        return actions

    def _on_keep_awake_action_toggled(self, on: bool) -> None:
        self._settings.set_number(Key.KEEP_AWAKE, int(on))
        self.keep_awake_toggled.emit(on)
