"""An unreachable hub fails in seconds with one clear sentence; offline means offline."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from desktop.core.hub import access as hub
from desktop.core.hub import downloads, sources
from desktop.core.hub import search as hub_search
from desktop.core.hub.models import load_tokenizer
from desktop.core.settings.config import ModelSource
from desktop.core.system.errors import ModelError


@pytest.fixture
def silent_endpoint(monkeypatch: pytest.MonkeyPatch):
    """An endpoint on 127.0.0.1 that accepts connections and never answers (a blocked network)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.getsockname()[1]}")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(hub, "_answers", {})
    yield
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


@pytest.mark.slow
def test_an_endpoint_that_never_answers_fails_within_seconds(silent_endpoint: None) -> None:
    source = sources.resolve()
    started = time.monotonic()
    with pytest.raises(ModelError) as caught:
        downloads.download("someone/not-downloaded-model", source)
    assert time.monotonic() - started < 5
    message = caught.value.message
    assert "is not on this computer" in message and "did not answer within 3 s" in message
    assert "hf-mirror.com" in caught.value.hint and "ModelScope" in caught.value.hint
    started = time.monotonic()  # asked again at once: the answer is remembered, not probed again
    with pytest.raises(ModelError):
        hub_search.search(source, "bert")
    assert time.monotonic() - started < 1


def test_loading_never_downloads_it_says_to_download_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    with pytest.raises(ModelError) as caught:
        load_tokenizer(ModelSource("someone/not-downloaded-model"))
    assert caught.value.message == "someone/not-downloaded-model is not on this computer yet."
    assert "models download someone/not-downloaded-model" in caught.value.hint


def test_offline_says_so_instead_of_retrying(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelError, match="switched off"):
        load_tokenizer(ModelSource("someone/not-downloaded-model"))


def test_auto_probes_when_its_pick_is_stale_and_not_when_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    monkeypatch.setattr(
        sources, "pick", lambda settings=None, timeout=3.0: calls.append(settings) or (None, [])
    )
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert not sources.auto_is_stale()  # offline: nothing to probe
    assert sources.resolve(sources.AUTO, probe_if_stale=True).name == sources.HUGGING_FACE and not calls
    monkeypatch.delenv("HF_HUB_OFFLINE")
    assert sources.auto_is_stale()  # never picked
    sources.resolve(sources.AUTO, probe_if_stale=True)
    assert len(calls) == 1
    fresh = sources.HubSettings(auto_picked=sources.MODELSCOPE, auto_picked_at=time.time())
    assert sources.resolve(sources.AUTO, settings=fresh, probe_if_stale=True).name == sources.MODELSCOPE
    assert len(calls) == 1  # a pick from today is used as it is
