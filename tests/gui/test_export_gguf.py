"""The Export step writes a causal-LM run as GGUF with a Modelfile, with progress, and says how to use it."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.core.training.run import run_training
from desktop.gui.pages.export_page import ExportPage
from tests.core.helpers import make_config


@pytest.mark.slow
def test_a_chat_run_is_exported_as_gguf_from_the_export_step(
    qtbot, tiny_gpt2: Path, samples: Path, tmp_path: Path
) -> None:
    config = make_config(
        "causal-lm", tiny_gpt2, [samples / "instructions.jsonl"], tmp_path / "runs", max_steps=2
    )
    result = run_training(config, lambda event: None)
    assert result.status == "finished", result.failure
    page = ExportPage()
    qtbot.addWidget(page)
    page.show_result(result)
    page.tabs.setCurrentIndex(page.tabs.count() - 1)  # Export a copy
    page.format_combo.setCurrentIndex(page.format_combo.findData("gguf"))
    assert page.quant_combo.isVisibleTo(page) and not page.dtype_combo.isVisibleTo(page)
    page.quant_combo.set_value("q8_0")
    page.dest_edit.setText(str(tmp_path / "out"))
    with qtbot.waitSignal(page.busy_changed, timeout=60_000, check_params_cb=lambda busy: not busy):
        page.export_button.click()
    written = tmp_path / "out" / f"{Path(result.run_dir).name}-Q8_0.gguf"
    assert written.is_file() and (tmp_path / "out" / "Modelfile").is_file()
    assert (
        f"Exported to {written}" in page.export_status.text() and "ollama create" in page.export_status.text()
    )
    page.dest_edit.setText(str(tmp_path / "cancelled"))
    page.quant_combo.set_value("f16")
    with qtbot.waitSignal(page.busy_changed, timeout=60_000, check_params_cb=lambda busy: not busy):
        page.export_button.click()
        page.cancel_button.click()  # at once: before the first tensor is written
    assert "nothing was written" in page.export_status.text() and not (tmp_path / "cancelled").exists()
