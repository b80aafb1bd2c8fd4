"""The Serve tab: a real local server started from the panel answers, its snippets work as shown, Stop
ends it, a taken port is said in one sentence, and a server for other computers needs the key."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from PySide6.QtCore import Qt

from desktop.core.serving.keys import KEY_ENV
from desktop.gui.controllers.serve_controller import ServeController
from desktop.gui.widgets.serve_panel import ServePanel

READY_S = 120_000
LEFT = Qt.MouseButton.LeftButton
READY_ON_GPU = {
    "base_url": "http://127.0.0.1:8000/v1",
    "port": 8000,
    "model": "one",
    "task": "causal-lm",
    "chat": True,
    "keyed": False,
    "device": "cuda:0",
}


@pytest.fixture
def panel(qtbot, tiny_chat_models: dict[str, Path]) -> Iterator[ServePanel]:
    widget = ServePanel(ServeController())
    qtbot.addWidget(widget)
    widget.set_model(tiny_chat_models["llama"])
    widget.port_box.setValue(0)  # any free port: no race with another program
    widget.show()
    yield widget
    widget.shutdown()


def start(qtbot, panel: ServePanel) -> dict:
    with qtbot.waitSignal(panel.controller.server_ready, timeout=READY_S) as ready:
        qtbot.mouseClick(panel.start_button, LEFT)
    return ready.args[0]


def get(url: str, key: str = "") -> tuple[int, dict]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"} if key else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def nobody_listens(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


@pytest.mark.slow
def test_the_panel_serves_the_model_its_python_snippet_works_and_stop_ends_the_server(
    qtbot, panel: ServePanel
) -> None:
    ready = start(qtbot, panel)
    base_url, pid = ready["base_url"], panel.controller.pid()
    assert panel.url_row.edit.text() == base_url
    assert base_url in panel.status.text()
    assert panel.connect_box.isVisible() and not panel.start_button.isEnabled()
    status, models = get(base_url + "/models")
    assert status == 200
    assert [m["id"] for m in models["data"]] == [panel.name_row.edit.text()] == [ready["model"]]

    code = panel.python_view.code.text()
    assert base_url in code and 'api_key="not-needed"' in code
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip()
    qtbot.waitUntil(lambda: "/v1/chat/completions 200" in panel.request_log.toPlainText())

    with qtbot.waitSignal(panel.controller.server_stopped, timeout=20_000):
        qtbot.mouseClick(panel.stop_button, LEFT)
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert nobody_listens(ready["port"])
    assert "free again" in panel.status.text()
    assert not panel.connect_box.isVisible() and panel.start_button.isEnabled()


@pytest.mark.slow
def test_a_port_in_use_is_said_in_one_sentence_and_the_port_box_gets_the_focus(
    qtbot, panel: ServePanel
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        panel.port_box.setValue(port)
        panel.activateWindow()
        with qtbot.waitSignal(panel.controller.server_failed, timeout=READY_S):
            qtbot.mouseClick(panel.start_button, LEFT)
    text = panel.status.text()
    assert str(port) in text and "already in use" in text
    assert text.count(str(port)) == 1
    assert not panel.connect_box.isVisible() and panel.start_button.isEnabled()
    qtbot.waitUntil(panel.port_box.hasFocus)


@pytest.mark.slow
def test_other_computers_need_the_key_shown_once_and_handed_to_the_server(
    qtbot, panel: ServePanel, keyring_backend: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    panel.network_radio.setChecked(True)
    assert panel.network_warning.isVisible()
    ready = start(qtbot, panel)
    key = panel.key_row.edit.text()
    assert ready["keyed"] and key.startswith("fts-")
    assert list(keyring_backend.values()) == [key]
    assert "kept in your OS keyring" in panel.key_note.text()
    assert key not in " ".join(psutil.Process(panel.controller.pid()).cmdline())

    models = ready["base_url"] + "/models"  # 0.0.0.0 is reached here through 127.0.0.1
    assert get(models)[0] == 401
    assert get(models, key)[0] == 200
    code = panel.python_view.code.text()
    assert KEY_ENV in code and key not in code
    env = {**os.environ, KEY_ENV: key}
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env, check=False
    )
    assert run.returncode == 0 and run.stdout.strip(), run.stderr[-2000:]

    with qtbot.waitSignal(panel.controller.server_stopped, timeout=20_000):
        panel.stop()
    assert panel.key_row.edit.text() == ""
    ready = start(qtbot, panel)  # the kept key again: not shown a second time
    assert ready["keyed"] and panel.key_row.edit.text() == ""
    assert not panel.key_row.isVisible()
    assert get(ready["base_url"] + "/models", key)[0] == 200


def test_changing_the_model_stops_the_server_and_says_so(qtbot, tmp_path: Path) -> None:
    controller = FakeServeController()
    panel = ServePanel(controller)
    qtbot.addWidget(panel)
    panel.set_model(tmp_path / "one")
    qtbot.mouseClick(panel.start_button, LEFT)
    controller.server_ready.emit(READY_ON_GPU)
    controller.request_answered.emit(
        {"method": "POST", "path": "/v1/chat/completions", "status": 200, "seconds": 0.41}
    )
    assert panel.request_log.toPlainText() == "POST /v1/chat/completions 200 0.41 s"
    panel.set_model(tmp_path / "two")
    assert controller.stops == 1
    controller.end()
    assert "another model" in panel.status.text()
    assert panel.model_label.text() == str(tmp_path / "two")
    assert controller.started == [(tmp_path / "one", "127.0.0.1", 8000, "")]


def test_a_failure_is_one_sentence_with_its_details_one_click_away(qtbot, tmp_path: Path) -> None:
    controller = FakeServeController()
    panel = ServePanel(controller)
    qtbot.addWidget(panel)
    panel.show()
    panel.set_model(tmp_path)
    panel.start()
    controller.fail("The model folder has no config.json.", "Choose a model folder.", "Traceback: ...")
    assert panel.status.text() == "The model folder has no config.json. Choose a model folder."
    assert not panel.details.isVisible()
    qtbot.mouseClick(panel.details_button, LEFT)
    assert panel.details.isVisible() and "Traceback" in panel.details.toPlainText()


class FakeServeController(ServeController):
    """The controller's signals, driven by the test: nothing is started."""

    def __init__(self) -> None:
        super().__init__()
        self.started: list[tuple] = []
        self.allowed: list[tuple] = []  # the names and web pages of each start
        self.stops = 0
        self.running = False

    def is_running(self) -> bool:
        return self.running

    def start(self, model, host, port, key="", hosts=(), origins=(), remote_pictures=False) -> None:
        self.started.append((model, host, port, key))
        self.allowed.append((list(hosts), list(origins)))
        self.running = True
        self.running_changed.emit(True)

    def stop(self) -> None:
        self.stops += 1

    def shutdown(self, wait_ms: int = 3000) -> None:
        self.running = False

    def end(self) -> None:
        self.running = False
        self.running_changed.emit(False)
        self.server_stopped.emit()

    def fail(self, message: str, hint: str, details: str) -> None:
        self.running = False
        self.running_changed.emit(False)
        self.server_failed.emit(message, hint, details)


@pytest.mark.slow
def test_the_export_page_serves_its_finished_run_and_ends_the_server_at_quit(qtbot, chat_run) -> None:
    from desktop.gui.pages.export_page import ExportPage

    page = ExportPage()
    qtbot.addWidget(page)
    page.show_result(chat_run)
    tabs = [page.tabs.tabText(i) for i in range(page.tabs.count())]
    assert tabs[tabs.index("Try it") + 1] == "Serve"
    assert page.serve.model == Path(chat_run.run_dir)  # the server reads the run's config
    page.serve.port_box.setValue(0)
    ready = start(qtbot, page.serve)
    assert ready["model"] == Path(chat_run.run_dir).name
    assert get(ready["base_url"] + "/models")[0] == 200
    pid = page.serve.controller.pid()

    page.shutdown()  # the app quits
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert nobody_listens(ready["port"])


def test_a_new_key_is_used_and_shown_at_the_next_start(qtbot, tmp_path: Path, keyring_backend: dict) -> None:
    controller = FakeServeController()
    panel = ServePanel(controller)
    qtbot.addWidget(panel)
    panel.show()
    panel.set_model(tmp_path)
    panel.network_radio.setChecked(True)
    assert panel.network_warning.isVisible() and panel.new_key_button.isVisible()
    qtbot.mouseClick(panel.new_key_button, LEFT)
    assert "new API key" in panel.status.text()
    (new,) = keyring_backend.values()
    qtbot.mouseClick(panel.start_button, LEFT)
    assert controller.started == [(tmp_path, "0.0.0.0", 8000, new)]
    controller.server_ready.emit({**READY_ON_GPU, "keyed": True})
    assert panel.key_row.isVisible() and panel.key_row.edit.text() == new


def test_web_pages_and_names_typed_are_handed_to_the_server_and_a_wrong_one_is_said(
    qtbot, tmp_path: Path
) -> None:
    controller = FakeServeController()
    panel = ServePanel(controller)
    qtbot.addWidget(panel)
    panel.set_model(tmp_path / "one")
    panel.origins_edit.setText("http://localhost:3000/chat")  # a page's address, not its origin

    qtbot.mouseClick(panel.start_button, LEFT)

    assert controller.started == []
    assert panel.status.text().startswith("http://localhost:3000/chat is not a web page's origin")
    panel.origins_edit.setText("http://LOCALHOST:3000/, https://chat.example.org")
    panel.hosts_edit.setText("my-pc.local")
    qtbot.mouseClick(panel.start_button, LEFT)
    assert controller.allowed == [(["my-pc.local"], ["http://localhost:3000", "https://chat.example.org"])]
    assert not panel.origins_edit.isEnabled() and not panel.hosts_edit.isEnabled()  # the running server's


@pytest.mark.slow
def test_a_web_page_allowed_in_the_panel_may_use_the_server_and_others_may_not(
    qtbot, panel: ServePanel
) -> None:
    panel.origins_edit.setText("http://localhost:3000")
    ready = start(qtbot, panel)

    def models(origin: str) -> tuple[int, str]:
        request = urllib.request.Request(ready["base_url"] + "/models", headers={"Origin": origin})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.headers.get("Access-Control-Allow-Origin", "")
        except urllib.error.HTTPError as exc:
            return exc.code, ""

    assert models("http://localhost:3000") == (200, "http://localhost:3000")
    assert models("http://evil.example")[0] == 403


def test_a_vision_language_model_may_fetch_web_pictures_when_the_user_says_so(
    qtbot, tiny_llava: Path, tiny_chat_models: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    controller = ServeController()
    asked: list[tuple] = []
    monkeypatch.setattr(controller, "start", lambda *args: asked.append(args))
    widget = ServePanel(controller)
    qtbot.addWidget(widget)
    widget.show()

    widget.set_model(tiny_chat_models["llama"])
    assert not widget.pictures_check.isVisible()  # a text model's requests hold no pictures
    widget.set_model(tiny_llava)
    assert widget.pictures_check.isVisible() and not widget.pictures_check.isChecked()  # off unless asked
    qtbot.mouseClick(widget.start_button, LEFT)
    widget.pictures_check.setChecked(True)
    qtbot.mouseClick(widget.start_button, LEFT)

    assert [call[-1] for call in asked] == [False, True]


def test_the_controller_hands_the_web_pictures_choice_to_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    from PySide6.QtCore import QProcess

    started: list[list[str]] = []
    monkeypatch.setattr(QProcess, "start", lambda process: started.append(process.arguments()))
    controller = ServeController()
    controller.start("model", "127.0.0.1", 8000, remote_pictures=True)

    assert "--allow-remote-images" in started[0]
