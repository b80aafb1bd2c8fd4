"""The launcher's setup window: progress while setting up, a clear failure with Try again."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from desktop.launcher import window as window_module
from desktop.launcher.runtime import Bundle, Options, Runtime, SetupError
from desktop.launcher.window import SetupWindow


@pytest.fixture
def make_window(qtbot, tmp_path: Path):
    wheel = tmp_path / "finetune_studio-0.3.0-py3-none-any.whl"
    wheel.write_bytes(b"app")
    saved: list[dict] = []  # what the window asks the launcher to remember

    def make(interactive: bool = True) -> SetupWindow:
        win = SetupWindow(
            Runtime(tmp_path / "runtime"),
            Bundle(tmp_path / "uv", wheel),
            Options(),
            tmp_path,
            True,
            interactive,
            saved.append,
        )
        qtbot.addWidget(win)
        return win

    make.saved = saved
    return make


def test_progress_then_success(make_window, qtbot, monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_setup(*args, on_line, on_progress, cancel, **kwargs) -> None:
        for i, key in enumerate(("python", "torch", "app", "check")):
            on_progress(i / 4, key)
            on_line(f"[{key}] working")

    monkeypatch.setattr(window_module, "setup", fake_setup)
    win = make_window()
    with qtbot.waitSignal(win.finished_setup, timeout=10_000):
        win.start()
    assert win.ok and "[check] working" in win.log.toPlainText()
    assert win.progress.value() == 750


def test_a_failure_is_explained_and_try_again_works(
    make_window, qtbot, monkeypatch: pytest.MonkeyPatch
) -> None:
    attempts: list[str] = []
    proxies: list[str] = []

    def flaky_setup(*args, on_line, on_progress, cancel, **kwargs) -> None:
        attempts.append(args[2].index_url)  # the Options: the mirror the user typed
        proxies.append(args[2].proxy)
        if len(attempts) == 1:
            raise SetupError(
                "Could not download the packages.", "Check the connection, or set a mirror.", "dns error"
            )

    monkeypatch.setattr(window_module, "setup", flaky_setup)
    win = make_window()
    win.start()
    qtbot.waitUntil(lambda: not win.retry_button.isHidden())
    assert "Could not download the packages." in win.problem.text() and not win.ok
    assert not win.mirrors.isHidden()  # a network failure offers the mirror fields

    win.mirror.setText("https://pypi.tuna.tsinghua.edu.cn/simple")
    win.proxy.setText("http://proxy.corp.example:8080")
    with qtbot.waitSignal(win.finished_setup, timeout=10_000):
        win.retry_button.click()
    assert win.ok and attempts == ["", "https://pypi.tuna.tsinghua.edu.cn/simple"]
    assert proxies == ["", "http://proxy.corp.example:8080"]
    assert make_window.saved[-1]["index_url"] == "https://pypi.tuna.tsinghua.edu.cn/simple"  # remembered
    assert make_window.saved[-1]["proxy"] == "http://proxy.corp.example:8080"


def test_without_a_user_a_failure_ends_at_once(make_window, qtbot, monkeypatch: pytest.MonkeyPatch) -> None:
    def failing(*args, **kwargs) -> None:
        raise SetupError("The disk became full while installing.", "Free space.")

    monkeypatch.setattr(window_module, "setup", failing)
    win = make_window(interactive=False)
    with qtbot.waitSignal(win.finished_setup, timeout=10_000):
        win.start()
    assert not win.ok and "disk became full" in win.log.toPlainText()


def test_the_first_start_says_where_the_data_goes_and_can_put_it_elsewhere(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PySide6.QtWidgets import QFileDialog

    from desktop.core.system.paths import data_dir

    data = data_dir()
    data.mkdir(parents=True, exist_ok=True)
    (data / "runtime-setup.log").write_text("launcher 0.3.0: runtime missing\n", encoding="utf-8")
    wheel = tmp_path / "finetune_studio-0.3.0-py3-none-any.whl"
    wheel.write_bytes(b"app")
    drive = tmp_path / "D"
    (drive / "Games").mkdir(parents=True)  # a drive with other things on it
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *args: str(drive))
    built: list[Path] = []
    monkeypatch.setattr(window_module, "setup", lambda runtime, *args, **kwargs: built.append(runtime.root))
    win = SetupWindow(
        Runtime(data / "runtime"), Bundle(tmp_path / "uv", wheel), Options(), data, True, choose_place=True
    )
    qtbot.addWidget(win)
    win.show()
    assert win.waits_for_install and win.place.text() == str(data) and "10 GB" in win.step.text()

    qtbot.mouseClick(win.change_place_button, Qt.MouseButton.LeftButton)
    assert win.place.text() == str(drive / "FinetuneStudio") == str(data_dir())  # beside Games, not in it
    assert (drive / "FinetuneStudio" / "runtime-setup.log").is_file()
    with qtbot.waitSignal(win.finished_setup, timeout=10_000):
        qtbot.mouseClick(win.install_button, Qt.MouseButton.LeftButton)
    assert built == [drive / "FinetuneStudio" / "runtime"] and win.ok
