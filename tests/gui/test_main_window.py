"""The wizard's navigation, the sample, saved state and closing during a run."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QMessageBox

from desktop.core.settings.config import RunConfig, with_changes
from desktop.gui.main_window import MainWindow
from desktop.shared_ui import Key, Settings
from tests.gui.conftest import FakeController


def _step_enabled(win: MainWindow, index: int) -> bool:
    return bool(win.steps.item(index).flags() & Qt.ItemFlag.ItemIsEnabled)


def test_next_is_disabled_with_the_reason_until_the_data_page_is_complete(window: MainWindow, qtbot) -> None:
    assert window.stack.currentIndex() == 0 and window.next_button.isEnabled()
    qtbot.mouseClick(window.next_button, Qt.MouseButton.LeftButton)
    assert window.stack.currentIndex() == 1
    assert not window.next_button.isEnabled()
    assert "model" in window.reason.text().lower()
    assert not _step_enabled(window, 3) and not _step_enabled(window, 4)
    window.go_to(3)  # jumping ahead is refused
    assert window.stack.currentIndex() == 1


def test_try_the_sample_makes_every_step_reachable(window: MainWindow, qtbot) -> None:
    with qtbot.waitSignal(window.data_page.preview_loaded, timeout=30_000):
        qtbot.mouseClick(window.data_page.dataset_picker.sample_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.stack.currentIndex() == 1)  # the page a moment after its config
    assert window.data_page.column_mapping.mapping_combos["text"].currentText() == "text"
    assert window.data_page.column_mapping.mapping_combos["label"].currentText() == "label"
    assert window.next_button.isEnabled() and window.reason.text() == ""
    window.go_to(3)
    assert window.stack.currentIndex() == 3 and _step_enabled(window, 4)
    config = window.current_config()
    assert config.model.name == "bundled:all-minilm-l6-v2" and config.data.files[0].endswith("reviews.csv")
    # free navigation back to a finished step
    window.steps.setCurrentRow(1)
    assert window.stack.currentIndex() == 1


def test_the_sample_leaves_a_user_on_the_step_they_went_to_meanwhile(window: MainWindow, qtbot) -> None:
    qtbot.waitUntil(lambda: (window.go_to(1), window.stack.currentIndex() == 1)[1])  # "Try the sample"
    # The moment the data page would be shown, and the sample read all the same:
    with qtbot.waitSignals([window._sample_page.timeout, window.data_page.preview_loaded], timeout=30_000):
        window.load_sample()
        window.go_to(0)  # back, before the data page is shown
    assert window.stack.currentIndex() == 0


def test_the_sample_asks_before_replacing_a_model_and_data_the_user_chose(
    window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []

    def answer(text: str):
        def exec_(box: QMessageBox) -> int:
            asked.append(box.text())
            next(b for b in box.buttons() if b.text() == text).click()
            return 0

        return exec_

    window.set_config(
        with_changes(window.current_config(), {"model.name": "my-org/my-model", "data.files": ["mine.csv"]})
    )
    monkeypatch.setattr(QMessageBox, "exec", answer("Keep mine"))
    window.load_sample()
    assert "my-org/my-model" in asked[0] and "mine.csv" in asked[0]
    assert window.current_config().model.name == "my-org/my-model"  # kept
    monkeypatch.setattr(QMessageBox, "exec", answer("Load the sample"))
    window.load_sample()
    assert window.current_config().model.name == "bundled:all-minilm-l6-v2" and len(asked) == 2
    window.load_sample()  # the sample over the sample: nothing of the user's to lose, no question
    assert len(asked) == 2


def test_the_windows_thread_waits_at_most_a_millisecond_for_pythons_lock(qtbot, tmp_path: Path) -> None:
    """While another thread runs Python (an import in the background, the run's loop), each slot and
    paint of the window waits for Python's lock up to the switch interval; Python's 5 ms added up to
    stalls of 50-140 ms in the journey."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.005)  # Python's default, as in a process no window was made in yet
    try:
        window = MainWindow(Settings(tmp_path / "settings.ini"), FakeController())
        qtbot.addWidget(window)
        assert sys.getswitchinterval() <= 0.001
    finally:
        sys.setswitchinterval(before)


def test_the_window_asks_for_a_prompt_turn_on_a_core_from_its_own_thread(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The short time slice goes to the thread that runs the window, not to a background one."""
    import threading

    from desktop.core.system import processes

    asked: list[int] = []
    monkeypatch.setattr(processes, "request_short_time_slice", lambda: asked.append(threading.get_ident()))
    window = MainWindow(Settings(tmp_path / "settings.ini"), FakeController())
    qtbot.addWidget(window)
    assert asked == [threading.main_thread().ident]


def test_window_state_and_last_config_are_restored(qtbot, tmp_path: Path) -> None:
    settings = Settings(tmp_path / "settings.ini")
    first = MainWindow(settings, FakeController())
    qtbot.addWidget(first)
    first.show()
    config = RunConfig(task="seq2seq")
    config.model.name = "google-t5/t5-small"
    config.training.learning_rate = 3e-4
    first.set_config(config)
    first.resize(1111, 777)
    first.close()
    assert settings.bytes(Key.GEOMETRY) == first.saveGeometry()

    second = MainWindow(Settings(tmp_path / "settings.ini"), FakeController())
    qtbot.addWidget(second)
    second.show()
    restored = second.current_config()
    assert restored.task == "seq2seq" and restored.model.name == "google-t5/t5-small"
    assert restored.training.learning_rate == pytest.approx(3e-4)
    # Qt fits restored geometry to the (small, offscreen) screen, so compare with the default size.
    assert second.size() != QSize(1180, 780)


def test_closing_during_a_run_asks_stops_and_waits(
    window: MainWindow, fake_controller: FakeController, monkeypatch: pytest.MonkeyPatch, qtbot
) -> None:
    asked = []
    monkeypatch.setattr(
        QMessageBox, "question", lambda *a, **k: asked.append(a) or QMessageBox.StandardButton.Yes
    )
    fake_controller.start(RunConfig())
    window.close()
    assert asked and fake_controller.stop_requests == 1
    assert window.isVisible()  # still open until the run has ended
    fake_controller.end()
    qtbot.waitUntil(lambda: not window.isVisible())


def test_declining_to_close_keeps_training(
    window: MainWindow, fake_controller: FakeController, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.No)
    fake_controller.start(RunConfig())
    window.close()
    assert window.isVisible() and fake_controller.stop_requests == 0
    fake_controller.end()


def test_qt_dialogs_follow_the_chosen_language(qtbot) -> None:
    from PySide6.QtWidgets import QApplication, QMessageBox

    from desktop.shared_ui import install_translators

    app = QApplication.instance()
    translators = install_translators(app, "zh_CN")  # Qt's own translations ship with PySide6
    try:
        assert translators
        box = QMessageBox(QMessageBox.Icon.Question, "", "", QMessageBox.StandardButton.Yes)
        qtbot.addWidget(box)
        assert "是" in box.button(QMessageBox.StandardButton.Yes).text()
    finally:
        for translator in translators:
            app.removeTranslator(translator)
        import desktop.shared_ui

        desktop.shared_ui.current = "en"  # what a child process of the window is told to speak
        from PySide6.QtCore import QLocale

        QLocale.setDefault(QLocale("en_US"))


def test_view_language_offers_the_three_languages_and_remembers_the_choice(window, monkeypatch) -> None:
    from PySide6.QtWidgets import QMessageBox

    from desktop.shared_ui import Key

    assert [a.text() for a in window.menu_bar.language_actions.values()] == [
        "English",
        "简体中文",
        "繁體中文",
    ]
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.No)
    window.menu_bar.language_actions["zh_TW"].trigger()
    assert window.settings.text(Key.LANGUAGE) == "zh_TW"


def test_memory_and_speed_does_not_wait_for_a_background_import_to_look_up_packages(
    window: MainWindow, qtbot
) -> None:
    """A look-up of an installed package takes Python's global import lock, which a background import
    holds while it reads folders (5-16 ms a package from a cold disk): the warm-up looks them up
    ahead, and the page uses what it found."""
    import _imp
    import threading

    from desktop.gui.app_support.warmup import STACKS

    STACKS["data"].importer()  # the warm-up, at the window's first idle moment
    held, release = threading.Event(), threading.Event()

    def import_in_the_background() -> None:
        _imp.acquire_lock()  # as while a finder of a background import reads a folder
        held.set()
        release.wait(10)
        _imp.release_lock()

    thread = threading.Thread(target=import_in_the_background)
    thread.start()
    assert held.wait(10)
    try:
        started = time.monotonic()
        window.update_options_context()  # what opening Memory & speed does
        took = time.monotonic() - started
    finally:
        release.set()
        thread.join(10)
    assert took < 5, "the page waited for the background import"


@pytest.mark.parametrize(
    "available",
    [(1366, 728), (1093, 582), (1280, 680), (1024, 538)],  # 1366x768, 1280x720 at 100% and 125%
)
def test_the_first_window_fits_the_screen_with_back_and_next_on_it(
    qtbot, settings, fake_controller, monkeypatch: pytest.MonkeyPatch, available: tuple[int, int]
) -> None:
    """The first start opened at 1180 x 780 on a 768-pixel screen: Back and Next below its edge."""
    from PySide6.QtCore import QRect
    from PySide6.QtGui import QScreen

    from desktop.gui.app_support.geometry import FRAME

    area = QRect(0, 0, *available)
    monkeypatch.setattr(QScreen, "availableGeometry", lambda screen: area)
    window = MainWindow(settings, fake_controller)
    qtbot.addWidget(window)
    window.show()
    assert window.width() + FRAME[0] <= area.width() and window.height() + FRAME[1] <= area.height()
    assert area.contains(window.frameGeometry())
    for button in (window.back_button, window.next_button):
        corner = button.mapTo(window, button.rect().bottomRight())
        assert window.rect().contains(corner), (available, corner, window.size())


def test_the_help_menu_copies_the_diagnostics_and_opens_the_logs_folder(
    window: MainWindow, qtbot, monkeypatch: pytest.MonkeyPatch, app_home: Path
) -> None:
    from PySide6.QtGui import QDesktopServices, QGuiApplication

    titles = [action.text() for action in window.menu_bar.actions()]
    assert titles[-1] == "&Help"
    help_menu = window.menu_bar.actions()[-1].menu()
    copy, logs = help_menu.actions()
    qtbot.waitUntil(lambda: window.environment_page.report is not None, timeout=30_000)
    QGuiApplication.clipboard().setText("")
    copy.trigger()
    assert "Python" in QGuiApplication.clipboard().text()
    assert window.statusBar().currentMessage().startswith("Diagnostics copied")
    opened: list[str] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url.toLocalFile()) or True)
    logs.trigger()
    assert opened and Path(opened[0]).is_dir() and Path(opened[0]).name == "logs"
