"""Credentials in URLs: redacted wherever they are shown, kept in the OS keyring, never in a file."""

from __future__ import annotations

import sys
import types

import pytest

from desktop.core.system.secrets import recall_url, redact, remember_url

URL = "https://alice:s3cret@mirror.example.cn/pytorch/cu128"


@pytest.fixture
def fake_keyring(monkeypatch: pytest.MonkeyPatch) -> dict:
    store: dict = {}
    module = types.SimpleNamespace(
        set_password=lambda service, name, value: store.__setitem__((service, name), value),
        get_password=lambda service, name: store.get((service, name)),
        delete_password=lambda service, name: store.pop((service, name)),
    )
    monkeypatch.setitem(sys.modules, "keyring", module)
    return store


def test_redact_hides_user_and_token_in_every_url() -> None:
    text = f"pip install torch --index-url {URL} --extra-index-url https://tok@x.example/simple"
    assert redact(text) == (
        "pip install torch --index-url https://***@mirror.example.cn/pytorch/cu128 "
        "--extra-index-url https://***@x.example/simple"
    )
    assert redact("https://pypi.org/simple") == "https://pypi.org/simple"


def test_a_remembered_url_keeps_its_credentials_in_the_keyring_only(fake_keyring: dict) -> None:
    saved = remember_url("launcher/index_url", URL)
    assert "s3cret" not in saved and saved == "https://***@mirror.example.cn/pytorch/cu128"
    assert recall_url("launcher/index_url", saved) == URL
    assert remember_url("launcher/index_url", "https://pypi.org/simple") == "https://pypi.org/simple"
    assert fake_keyring == {}  # a plain URL replaces the secret one


def test_without_a_keyring_credentials_are_dropped_not_written(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "keyring", None)  # import fails, as in the frozen launcher
    saved = remember_url("x", URL)
    assert "s3cret" not in saved
    assert recall_url("x", saved) == "https://mirror.example.cn/pytorch/cu128"


def test_the_launcher_never_writes_a_token_to_its_settings(tmp_path, fake_keyring: dict) -> None:
    from desktop.launcher.main import LauncherSettings

    settings = LauncherSettings(tmp_path / "launcher.json")
    settings.save_mirrors({"index_url": URL})
    assert "s3cret" not in (tmp_path / "launcher.json").read_text(encoding="utf-8")
    assert LauncherSettings(tmp_path / "launcher.json").get("index_url") == URL


def test_access_tokens_are_redacted_in_messages_and_logs() -> None:
    line = "401 for https://hf.example/api with Authorization: Bearer hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345"
    assert redact(line) == "401 for https://hf.example/api with Authorization: Bearer ***"
    assert redact("token hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345 rejected") == "token *** rejected"
    assert redact("hf_short and hf_hub_download") == "hf_short and hf_hub_download"  # not tokens
