"""The Environment page with the real PyTorch probe (a child process; this one never imports torch)."""

from __future__ import annotations

from desktop.core.torch_probe import probe_torch
from desktop.gui.pages.environment_page import EnvironmentPage


def test_shows_where_training_runs(qtbot, monkeypatch) -> None:
    monkeypatch.setattr("desktop.gui.pages.environment_page.probe_torch", probe_torch)
    page = EnvironmentPage()
    qtbot.addWidget(page)
    page.check()
    assert not page.check_button.isEnabled()
    qtbot.waitUntil(lambda: page.info is not None, timeout=60_000)
    assert page.info.installed and page.info.version
    assert page.verdict.text().startswith("Training runs on the")
    assert page.info.version.split("+")[0] in page.torch_label.text()
    assert page.check_button.isEnabled()
