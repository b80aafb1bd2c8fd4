"""A download on screen against a fake hub that holds the weights half-way: bytes as they arrive, and
Cancel that says so at once and ends within two seconds."""

from __future__ import annotations

import threading

import pytest

from desktop.core.hub import sources
from desktop.gui.widgets.download_panel import DownloadPanel
from tests.fakehub import FakeHub


@pytest.mark.slow
def test_progress_shows_the_bytes_and_cancel_answers_at_once(
    qtbot, fake_hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Today the file read 0 bytes until it had all arrived, and Cancel changed nothing for 17-33 s."""
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "DOWNLOAD_CHUNK_SIZE", 16 * 1024)  # a tiny model's "MB"
    release = fake_hub.stall["model.safetensors"] = threading.Event()
    panel = DownloadPanel()
    qtbot.addWidget(panel)
    panel.start("tiny/gpt2", sources.resolve())
    try:
        assert fake_hub.stalled.wait(30)
        qtbot.waitUntil(lambda: " of " in panel.status.text() and not panel.status.text().startswith("0 B"))

        with qtbot.waitSignal(panel.ended, timeout=2500):  # the server sends nothing: Cancel still ends it
            panel.cancel()
            assert panel.status.text() == "Cancelling…" and not panel.cancel_button.isEnabled()
        assert panel.status.text().startswith("Download cancelled. What was downloaded is kept")
    finally:
        release.set()
