"""Publishing from the Export step against a fake hub: the repository's address when done; a
repository holding other files replaced only after the user agrees; a token that may only read said in
the status line with nothing sent."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox

from desktop.core.hub import sources
from desktop.gui.widgets.publish_panel import PublishPanel
from tests.fakehub import READ_TOKEN, TOKEN, FakeHub, Repo


def _export(tmp_path: Path) -> Path:
    folder = tmp_path / "my-run"
    folder.mkdir()
    (folder / ".finetune-studio-export").write_text("{}", encoding="utf-8")
    (folder / "config.json").write_text('{"model_type": "gpt2"}', encoding="utf-8")
    (folder / "model.safetensors").write_bytes(b"w" * 4096)
    (folder / "README.md").write_text("---\ntags: [finetune-studio]\n---\n# my-run\n", encoding="utf-8")
    return folder


def _published(qtbot, panel: PublishPanel) -> None:
    with qtbot.waitSignal(panel.busy_changed, check_params_cb=lambda busy: not busy, timeout=30000):
        panel.publish_button.click()


def test_publishing_shows_the_repositorys_address(qtbot, fake_hub: FakeHub, tmp_path: Path) -> None:
    sources.set_token(sources.HUGGING_FACE, TOKEN)
    panel = PublishPanel()
    qtbot.addWidget(panel)
    panel.offer(_export(tmp_path), "folder", "my run (1)")
    assert panel.repo_edit.text() == "my-run-1" and panel.private_check.isChecked()
    _published(qtbot, panel)
    url = f"{fake_hub.url}/tester/my-run-1"
    assert f'<a href="{url}">{url}</a>' in panel.status.text()
    assert "The repository is private." in panel.status.text()
    repo = fake_hub.repos[("model", "tester/my-run-1")]
    assert set(repo.files) == {".gitattributes", "config.json", "model.safetensors", "README.md"}
    assert panel.publish_button.isEnabled() and not panel.busy.isVisible()


def test_a_repository_holding_other_files_is_replaced_once_agreed(
    qtbot, fake_hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sources.set_token(sources.HUGGING_FACE, TOKEN)
    fake_hub.add(Repo("tester/taken", {"old.bin": b"o" * 10}))
    asked: list[str] = []
    answer = QMessageBox.StandardButton.No

    def question(parent, title: str, text: str, *args):
        asked.append(text)
        return answer

    monkeypatch.setattr(QMessageBox, "question", question)
    panel = PublishPanel()
    qtbot.addWidget(panel)
    panel.offer(_export(tmp_path), "folder", "x")
    panel.repo_edit.setText("tester/taken")
    _published(qtbot, panel)
    assert "tester/taken already holds files (old.bin)" in asked[0]
    assert "nothing was sent" in panel.status.text() and fake_hub.commits == []

    answer = QMessageBox.StandardButton.Yes
    with qtbot.waitSignal(panel.published, timeout=30000):
        panel.publish_button.click()
    assert "old.bin" not in fake_hub.repos[("model", "tester/taken")].files
    assert "Published to" in panel.status.text()


def test_a_read_only_token_is_said_and_nothing_is_sent(qtbot, fake_hub: FakeHub, tmp_path: Path) -> None:
    sources.set_token(sources.HUGGING_FACE, READ_TOKEN)
    panel = PublishPanel()
    qtbot.addWidget(panel)
    panel.offer(_export(tmp_path), "folder", "x")
    _published(qtbot, panel)
    assert "may only read" in panel.status.text() and "Write role" in panel.status.text()
    assert not [p for m, p in fake_hub.requests if m in ("POST", "PUT")]
