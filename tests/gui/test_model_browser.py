"""The model browser against a fake hub on 127.0.0.1: search with fit badges, download, use."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocumentFragment
from PySide6.QtWidgets import QMessageBox

from desktop.core.settings.config import RunConfig
from desktop.gui.dialogs.model_browser_dialog import FIT_COLUMN, ModelBrowser
from tests.fakehub import FakeHub

GB = 2**30


def _rows(table) -> list[str]:
    return [table.item(r, 0).text() for r in range(table.rowCount())]


@pytest.mark.slow
def test_recommended_search_badge_download_and_use(qtbot, fake_hub: FakeHub) -> None:
    config = RunConfig(task="causal-lm")
    browser = ModelBrowser(config, gpu_free=8 * GB, ram=16 * GB)
    qtbot.addWidget(browser)
    assert "Qwen/Qwen2.5-0.5B-Instruct" in _rows(browser.recommended)  # the catalogue, for this task
    assert all("bert" not in r.lower() for r in _rows(browser.recommended))
    browser.tabs.setCurrentIndex(1)
    browser.query.setText("tiny")
    browser.search()
    qtbot.waitUntil(lambda: browser.results.rowCount() == 1, timeout=20_000)
    assert browser.results.item(0, 4).text() == "500"  # downloads, from the hub's metadata
    qtbot.waitUntil(
        lambda: browser.results.item(0, FIT_COLUMN).data(Qt.ItemDataRole.UserRole) == "fits", timeout=30_000
    )  # from config.json alone
    browser.results.selectRow(0)
    with qtbot.waitSignal(browser.downloaded, timeout=30_000):
        browser.download_selected()
    assert browser.progress.isHidden() and "is on this computer" in browser.status.text()
    browser.tabs.setCurrentIndex(2)
    qtbot.waitUntil(lambda: "tiny/gpt2" in _rows(browser.local), timeout=10_000)
    here = _rows(browser.local).index("tiny/gpt2")
    for column in (1, 2):  # parameters and weights: the same figures as Search gave
        assert browser.local.item(here, column).text() == browser.results.item(0, column).text() != "?"
    browser.local.selectRow(here)
    with qtbot.waitSignal(browser.chosen) as chosen:
        browser.use_button.click()
    assert chosen.args == ["tiny/gpt2"]


@pytest.mark.slow
def test_a_hub_that_does_not_answer_is_one_sentence_in_the_dialog(qtbot, monkeypatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    from desktop.core.hub import access as hub

    monkeypatch.setattr(hub, "_answers", {})
    browser = ModelBrowser(RunConfig(task="classification"), gpu_free=None, ram=16 * GB)
    qtbot.addWidget(browser)
    browser.query.setText("bert")
    browser.search()
    qtbot.waitUntil(lambda: browser.search_button.isEnabled(), timeout=10_000)
    status = QTextDocumentFragment.fromHtml(browser.status.text()).toPlainText()  # as it reads
    assert "did not answer within 3 s" in status and "Traceback" not in status
    assert status.count("127.0.0.1:9") == 1  # the host once, not "(host) (http://host)"
    assert "--source" not in status and "Settings > Model sources" in status
    assert "Errno" not in status  # our words for the OS's
    shown: list[str] = []  # ... and the OS's one click away
    monkeypatch.setattr(QMessageBox, "exec", lambda box: shown.append(box.text()) or 0)
    browser.status.linkActivated.emit("details")
    assert shown and "refused" in shown[0].lower()
    for row in range(browser.recommended.rowCount()):  # known offline: bundled, or the catalogue's config
        qtbot.waitUntil(
            lambda row=row: (
                browser.recommended.item(row, FIT_COLUMN).data(Qt.ItemDataRole.UserRole)
                in ("fits", "tight", "fits with LoRA", "does not fit")
            ),
            timeout=20_000,
        )


def test_the_source_settings_say_which_endpoint_is_in_use(qtbot, monkeypatch) -> None:
    """They showed hf-mirror.com while HF_ENDPOINT pointed elsewhere."""
    from desktop.gui.dialogs.hub_settings_dialog import HubSettingsDialog

    monkeypatch.setenv("HF_ENDPOINT", "http://models.example.com:8080")
    dialog = HubSettingsDialog()
    qtbot.addWidget(dialog)
    assert "In use now: mirror (models.example.com:8080)." in dialog.in_use.text()
    assert "HF_ENDPOINT is set in the environment" in dialog.in_use.text()


def test_source_settings_save_the_choice_and_keep_the_token_in_the_keyring(
    qtbot, fake_hub: FakeHub, keyring_backend: dict
) -> None:
    from desktop.core.hub import sources
    from desktop.gui.dialogs.hub_settings_dialog import HubSettingsDialog

    dialog = HubSettingsDialog()
    qtbot.addWidget(dialog)
    dialog.mirror.setText(fake_hub.url)
    dialog.check()
    qtbot.waitUntil(lambda: dialog.check_button.isEnabled(), timeout=10_000)
    assert f"{fake_hub.url}: answered in" in dialog.answers.text()
    dialog.source.setCurrentIndex(dialog.source.findData(sources.MODELSCOPE))
    dialog.hf_token.setText("hf_secret_value")
    dialog.save()
    assert sources.load_settings().source == sources.MODELSCOPE
    assert "hf_secret_value" in keyring_backend.values()
    assert "hf_secret_value" not in sources.settings_path().read_text(encoding="utf-8")


@pytest.mark.slow
def test_the_data_page_downloads_a_hub_model_and_dataset_before_training(
    qtbot, window, fake_hub: FakeHub, samples
) -> None:
    from tests.fakehub import Repo

    fake_hub.add(
        Repo("someone/reviews", {"train.csv": (samples / "reviews.csv").read_bytes()}, kind="dataset")
    )
    page = window.data_page
    picker, dataset = page.model_picker, page.dataset_picker
    picker.model_edit.setText("tiny/gpt2")
    picker.model_edit.editingFinished.emit()
    assert picker.model_download.isVisibleTo(page) and "Not on this computer yet" in picker.model_info.text()
    with qtbot.waitSignal(page.preview_loaded, timeout=30_000):
        dataset.data_edit.setText("someone/reviews")
        dataset.data_edit.editingFinished.emit()
    assert "not on this computer yet" in dataset.data_error.text() and dataset.data_download.isVisibleTo(page)
    with qtbot.waitSignal(page.preview_loaded, timeout=30_000):
        dataset.download_dataset()  # its own window, progress and Cancel; the preview follows
    assert dataset.data_error.isHidden() and not dataset.data_download.isVisibleTo(page)
    picker.download_model()
    with qtbot.waitSignal(picker.browser.downloaded, timeout=30_000):
        pass
    qtbot.waitUntil(lambda: not picker.model_download.isVisibleTo(page), timeout=10_000)
    assert "training needs no network" in picker.model_info.text()
    assert "Download the model" not in page.problem()
    qtbot.waitUntil(
        lambda: "Fit here: fits" in picker.fit_badge.text(), timeout=20_000
    )  # the chosen model's badge
    assert "RAM (no NVIDIA GPU)" in picker.fit_badge.text() and "min per epoch" in picker.fit_badge.text()


@pytest.mark.slow
def test_a_gated_model_offers_to_enter_a_token(qtbot, fake_hub: FakeHub) -> None:
    fake_hub.repos[("model", "tiny/gpt2")].gated = True
    browser = ModelBrowser(RunConfig(task="causal-lm"), gpu_free=None, ram=16 * GB)
    qtbot.addWidget(browser)
    with qtbot.waitSignal(browser.panel.ended, timeout=20_000):
        browser.download("tiny/gpt2")
    assert "is gated" in browser.status.text() and f"{fake_hub.url}/tiny/gpt2" in browser.status.text()
    assert browser.panel.token_button.isVisibleTo(browser)
    browser.panel.token_button.click()
    assert browser.panel.token_dialog is not None and browser.panel.token_dialog.isVisible()
    browser.panel.token_dialog.reject()


@pytest.mark.slow
def test_search_can_ask_modelscope_and_local_folders_used_before_are_listed(
    qtbot, fake_hub: FakeHub, tiny_gpt2
) -> None:
    from desktop.core.hub.search import remember_folder

    remember_folder(tiny_gpt2)
    browser = ModelBrowser(RunConfig(task="causal-lm"), gpu_free=None, ram=16 * GB)
    qtbot.addWidget(browser)
    qtbot.waitUntil(lambda: str(tiny_gpt2) in _rows(browser.local), timeout=10_000)
    browser.tabs.setCurrentIndex(1)
    browser.where.setCurrentIndex(browser.where.findText("ModelScope"))
    browser.query.setText("tiny")
    browser.search()
    qtbot.waitUntil(lambda: browser.results.rowCount() == 1, timeout=20_000)
    assert browser.results.item(0, 0).text() == "modelscope:tiny/gpt2"
    qtbot.waitUntil(lambda: browser.results.item(0, 1).text() not in ("?", ""), timeout=20_000)  # headers
