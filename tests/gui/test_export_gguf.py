"""The Export step writes a chat run as GGUF, says what llama.cpp made of it, and adds it to Ollama."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from desktop.core.results import gguf_check
from desktop.gui.pages.export_page import ExportPage


def _page(qtbot, chat_run: object, dest: Path) -> ExportPage:
    page = ExportPage()
    qtbot.addWidget(page)
    page.show_result(chat_run)
    page.tabs.setCurrentIndex(page.tabs.count() - 1)  # Export a copy
    page.format_combo.setCurrentIndex(page.format_combo.findData("gguf"))
    page.dest_edit.setText(str(dest))
    return page


def _export(qtbot, page: ExportPage) -> None:
    with qtbot.waitSignal(page.busy_changed, timeout=60_000, check_params_cb=lambda busy: not busy):
        page.export_button.click()


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="the fake ollama is a script with a shebang")
def test_an_unverified_file_says_where_the_answers_part_and_goes_to_ollama(
    qtbot,
    chat_run,
    tmp_path: Path,
    parting_llama,
    fake_ollama,
    ollama_server,
) -> None:
    page = _page(qtbot, chat_run, tmp_path / "out")
    assert page.quant_combo.isVisibleTo(page) and not page.dtype_combo.isVisibleTo(page)
    assert not page._llama_row.isVisibleTo(page)  # llama.cpp is there (a stand-in)
    page.quant_combo.set_value("q8_0")
    _export(qtbot, page)
    written = tmp_path / "out" / f"{Path(chat_run.run_dir).name}-Q8_0-unverified.gguf"
    panel = page.gguf_panel
    assert written.is_file() and panel.isVisibleTo(page)
    assert f"Exported to {written}" in panel.written.text() and "Unverified: only" in panel.verdict.text()
    assert "the answers part at token" in panel.difference.text()
    assert "is running" in panel.ollama_status.text() and panel.ollama_button.isVisibleTo(page)
    assert not panel.quantize_check.isVisibleTo(page)  # Ollama quantizes f16 files only
    panel.ollama_button.click()
    qtbot.waitUntil(lambda: not panel.is_busy(), timeout=30_000)
    assert "ollama run" in panel.ollama_status.text(), panel.ollama_status.text()
    name = f"{Path(chat_run.run_dir).name}-q8_0".lower()
    assert f"ollama run {name}" in panel.ollama_status.text() and panel.copy_button.isVisibleTo(page)
    assert (tmp_path / "out" / "args.txt").read_text() == f"create {name} -f {tmp_path / 'out' / 'Modelfile'}"


@pytest.mark.slow
def test_without_llama_cpp_the_step_offers_it_and_refuses_q4_with_the_reason(
    qtbot, chat_run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gguf_check, "llama_cpp_available", lambda: False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no Ollama either
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")
    page = _page(qtbot, chat_run, tmp_path / "out")
    assert page._llama_row.isVisibleTo(page) and page.llama_button.isVisibleTo(page)
    page.quant_combo.set_value("q4_k_m")
    assert "q4_k_m needs its quantizer" in page.llama_hint.text() and not page.export_button.isEnabled()
    page.quant_combo.set_value("f16")
    assert page.export_button.isEnabled() and "not checked" in page.llama_hint.text()
    _export(qtbot, page)
    panel = page.gguf_panel
    assert "Not verified: llama.cpp (the llama-cpp-python package) is not installed." in panel.verdict.text()
    assert panel.install_button.isVisibleTo(page)
    assert "https://ollama.com/download" in panel.ollama_status.text() and panel.ollama_check.isVisibleTo(
        page
    )
    assert not panel.ollama_button.isVisibleTo(page)


@pytest.mark.slow
def test_a_cancelled_gguf_export_leaves_nothing(qtbot, chat_run, tmp_path: Path) -> None:
    page = _page(qtbot, chat_run, tmp_path / "cancelled")
    page.quant_combo.set_value("f16")
    with qtbot.waitSignal(page.busy_changed, timeout=60_000, check_params_cb=lambda busy: not busy):
        page.export_button.click()
        page.cancel_button.click()  # at once: before the first tensor is written
    assert "nothing was written" in page.export_status.text() and not (tmp_path / "cancelled").exists()


@pytest.mark.slow
def test_the_next_export_goes_beside_the_last_one(qtbot, chat_run, tmp_path: Path) -> None:
    from desktop.shared_ui import Key, Settings

    settings = Settings(tmp_path / "s.ini")
    page = ExportPage(settings)
    qtbot.addWidget(page)
    page.show_result(chat_run)
    assert "Finetune Studio" in page.dest_edit.text()  # the first time: in Documents
    page.tabs.setCurrentIndex(page.tabs.count() - 1)
    page.format_combo.setCurrentIndex(page.format_combo.findData("folder"))
    (tmp_path / "exports").mkdir()
    page.dest_edit.setText(str(tmp_path / "exports" / "first"))
    _export(qtbot, page)
    assert settings.text(Key.LAST_EXPORT_FOLDER) == str(tmp_path / "exports")

    again = ExportPage(Settings(tmp_path / "s.ini"))  # the app started again
    qtbot.addWidget(again)
    again.show_result(chat_run)
    assert Path(again.dest_edit.text()).parent == tmp_path / "exports"
