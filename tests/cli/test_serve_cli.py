"""``finetune-studio-cli serve``: a run served as the app starts it, keys, ports, a finished run by name."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from desktop.cli import main
from desktop.core.serving.keys import KEY_ENV, KEY_NAME, api_key
from desktop.core.serving.server import LocalServer
from desktop.core.system.secrets import KEYRING_SERVICE

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_app_s_server_says_ready_answers_and_ends_when_its_stdin_closes(
    tiny_chat_models: dict[str, Path],
) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-m", "desktop.cli", "serve", str(tiny_chat_models["llama"]), "--port", "0"]
    child = subprocess.Popen(
        [*command, "--events"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        events = [json.loads(child.stdout.readline()), json.loads(child.stdout.readline())]
        assert [e["event"] for e in events] == ["loading", "ready"]
        ready, name = events[1], tiny_chat_models["llama"].name
        assert (ready["model"], ready["task"], ready["chat"], ready["keyed"]) == (
            name,
            "causal-lm",
            True,
            False,
        )
        with urllib.request.urlopen(ready["base_url"] + "/models", timeout=30) as response:
            assert json.load(response)["data"][0]["id"] == name
        request = json.loads(child.stdout.readline())
        assert (request["event"], request["path"], request["status"]) == ("request", "/v1/models", 200)

        child.stdin.close()  # the app went away, even without saying stop
        assert child.wait(timeout=30) == 0
    finally:
        if child.poll() is None:
            child.kill()


def test_a_port_in_use_ends_the_command_with_one_sentence(tiny_chat_models: dict[str, Path], capsys) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = main(["--lang", "en", "serve", str(tiny_chat_models["llama"]), "--port", str(port)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"error: Port {port} on 127.0.0.1 is already in use by another program." in err
    assert f"--port {port + 1}" in err and "Traceback" not in err


def test_another_host_gets_a_key_shown_once_and_kept_in_the_keyring(
    tiny_chat_models: dict[str, Path], keyring_backend: dict, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    served: list[str] = []
    monkeypatch.setattr(LocalServer, "open", lambda self: self)
    monkeypatch.setattr(LocalServer, "serve", lambda self: served.append(self.options.key))
    monkeypatch.delenv(KEY_ENV, raising=False)
    folder = str(tiny_chat_models["llama"])

    monkeypatch.setattr("desktop.core.serving.addresses.lan_addresses", lambda: ["192.0.2.7"])
    assert main(["--lang", "en", "serve", folder, "--host", "0.0.0.0"]) == 0
    first = capsys.readouterr().out
    assert "From other computers: http://192.0.2.7:8000/v1" in first
    key = keyring_backend[(KEYRING_SERVICE, KEY_NAME)]
    assert f"API key (shown this once): {key}" in first and "kept in your OS keyring" in first
    assert f'"Authorization: Bearer ${KEY_ENV}"' in first  # the snippet reads it, never shows it

    assert main(["--lang", "en", "serve", folder, "--host", "0.0.0.0"]) == 0
    second = capsys.readouterr().out
    assert key not in second and f"set {KEY_ENV}" in second
    assert served == [key, key]

    assert main(["--lang", "en", "serve", folder, "--host", "0.0.0.0", "--new-key"]) == 0
    assert served[-1] != key and served[-1] == keyring_backend[(KEYRING_SERVICE, KEY_NAME)]
    assert served[-1] in capsys.readouterr().out


def test_names_and_web_pages_are_allowed_by_flag(
    tiny_chat_models: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    served: list = []
    monkeypatch.setattr(LocalServer, "open", lambda self: self)
    monkeypatch.setattr(LocalServer, "serve", lambda self: served.append(self.options))
    folder = str(tiny_chat_models["llama"])
    args = [
        "--allow-host",
        "studio.lan",
        "--allow-origin",
        "http://localhost:3000/",
        "--allow-origin",
        "app://x",
    ]
    assert main(["--lang", "en", "serve", folder, *args]) == 0
    assert served[0].hosts == ("studio.lan",)
    assert served[0].origins == ("http://localhost:3000", "app://x")  # as a browser sends it: no slash
    served.clear()
    assert main(["--lang", "en", "serve", folder, "--allow-origin", "localhost:3000"]) != 0  # no scheme
    assert served == []


def test_without_a_keyring_each_start_makes_a_new_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "keyring", None)
    first, second = api_key(), api_key()
    assert first.new and not first.kept and first.value != second.value


def test_a_run_without_a_model_is_refused(tmp_path: Path, capsys) -> None:
    run = tmp_path / "runs" / "unfinished"
    run.mkdir(parents=True)
    (run / "config.toml").write_text('task = "causal-lm"\n', encoding="utf-8")
    code = main(["--lang", "en", "serve", "unfinished", "--runs-dir", str(tmp_path / "runs")])
    assert code == 2 and "has no saved model yet" in capsys.readouterr().err


def _gguf_export(folder: Path) -> Path:
    folder.mkdir()
    (folder / "My Model-q8_0.gguf").write_bytes(b"GGUF")
    (folder / "Modelfile").write_text("FROM ./My Model-q8_0.gguf\n", encoding="utf-8")
    return folder


def test_a_gguf_export_is_handed_to_ollama_which_serves_the_same_api(
    fake_ollama: Path, ollama_server: None, tmp_path: Path, capsys
) -> None:
    folder = _gguf_export(tmp_path / "My Model")
    assert main(["--lang", "en", "serve", str(folder)]) == 0
    out = capsys.readouterr().out
    assert (folder / "args.txt").read_text() == f"create my-model -f {folder / 'Modelfile'}"
    assert f"Ollama serves my-model at {os.environ['OLLAMA_HOST'].join(['http://', '/v1'])}" in out
    assert '"model": "my-model"' in out  # the curl example names Ollama's model


def test_a_gguf_export_without_ollama_says_where_to_get_it(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no ollama program
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")  # nothing answers there
    folder = _gguf_export(tmp_path / "export")
    assert main(["--lang", "en", "serve", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "Ollama is not installed" in err and "finetune-studio-cli serve RUN" in err
