"""The Memory & speed page: every option reaches the run config; bad values are shown, not accepted."""

from __future__ import annotations

import re

import pytest
from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit, QSpinBox

from desktop.core.settings.config import RunConfig
from desktop.gui.main_window import MainWindow
from desktop.gui.widgets.fit_badge_widget import FitBadgeWidget


def test_options_reach_the_run_config(window: MainWindow) -> None:
    page = window.options_page
    page.batch_size.setValue(4)
    page.accumulation.setValue(8)
    assert page.effective.text() == "Effective batch: 32 examples per update"
    bound = page.bound
    bound[("performance", "precision")].set_value("bf16")
    bound[("performance", "optimizer")].set_value("adafactor")
    bound[("performance", "gradient_checkpointing")].setChecked(True)
    bound[("performance", "empty_cache_steps")].setValue(25)
    bound[("lora", "enabled")].setChecked(True)
    bound[("lora", "rank")].setValue(16)
    bound[("lora", "target_modules")].setText("q_proj, v_proj")

    config = window.current_config()
    assert (config.training.batch_size, config.training.gradient_accumulation) == (4, 8)
    p = config.performance
    assert (p.precision, p.optimizer, p.gradient_checkpointing, p.empty_cache_steps) == (
        "bf16",
        "adafactor",
        True,
        25,
    )
    assert (
        config.lora.enabled and config.lora.rank == 16 and config.lora.target_modules == ["q_proj", "v_proj"]
    )
    assert isinstance(bound[("performance", "pin_memory")], QCheckBox)
    assert isinstance(bound[("performance", "attention")], QComboBox)
    assert isinstance(bound[("performance", "dataloader_workers")], QSpinBox)
    assert isinstance(bound[("lora", "target_modules")], QLineEdit)
    assert "20% slower" in bound[("performance", "gradient_checkpointing")].toolTip()


def test_loaded_config_shows_its_options_and_bad_values_block_next(window: MainWindow) -> None:
    config = RunConfig()
    config.performance.optimizer = "adamw_torch_fused"
    config.lora.alpha = 32
    window.set_config(config)
    page = window.options_page
    assert page.bound[("performance", "optimizer")].value() == "adamw_torch_fused"
    assert page.bound[("lora", "alpha")].value() == 32
    page.bound[("lora", "rank")].setValue(0)
    words, under_rank = page.field_errors["lora.rank"]
    assert page.problem() == "Rank: must be 1 or more; 8 or 16 is usual." and words == "Rank"
    assert not under_rank.isHidden() and under_rank.text() == "must be 1 or more; 8 or 16 is usual."
    assert page.error.isHidden()  # said once, under its field, and in words
    assert "lora." not in page.problem()


@pytest.mark.slow
def test_estimate_presets_and_fit_my_gpu(window: MainWindow, qtbot, tiny_gpt2) -> None:
    from desktop.core.settings.options import Capabilities

    config = RunConfig(task="causal-lm")
    config.model.name = str(tiny_gpt2)
    config.training.batch_size, config.training.gradient_accumulation, config.training.max_length = (
        64,
        1,
        2048,
    )
    window.set_config(config)
    page = window.options_page
    estimate = page.estimate
    gpu_free = 2**30  # a tiny fake GPU: the CUDA context alone takes 500 MB
    with qtbot.waitSignal(page.estimate_updated, timeout=60_000):
        page.set_context(window.current_config(), "Fake GPU", gpu_free, Capabilities(cuda=True, bf16=True))
    assert "will not fit in the 1.0 GB free on Fake GPU" in estimate.fit_label.text()
    assert "weights:" in estimate.breakdown.text() and "logits:" in estimate.breakdown.text()
    assert "0.00 GB" not in estimate.breakdown.text() and " MB" in estimate.breakdown.text()  # tiny parts

    estimate.preset_buttons["fit"].click()
    tuned = window.current_config()
    assert tuned.training.batch_size < 64
    assert tuned.training.batch_size * tuned.training.gradient_accumulation == 64
    assert "batch size 64 ->" in estimate.changes_label.text() and not estimate.undo_button.isHidden()
    assert "will not fit" not in estimate.fit_label.text()

    estimate.undo_button.click()
    assert window.current_config().training.batch_size == 64 and estimate.undo_button.isHidden()

    estimate.preset_buttons["lowest_memory"].click()
    low = window.current_config()
    assert low.performance.gradient_checkpointing and low.lora.enabled and low.training.batch_size == 1


def test_options_this_machine_cannot_run_are_refused_on_the_page(window: MainWindow, qtbot) -> None:
    from desktop.core.settings.options import Capabilities

    page = window.options_page
    with qtbot.waitSignal(window.data_page.preview_loaded, timeout=30_000):
        window.load_sample()
    window.go_to(window.pages.index(page))
    page.set_context(window.current_config(), "", None, Capabilities())  # CPU only: no model, no GPU
    page.bound[("performance", "precision")].set_value("fp16")
    assert "fp16 needs a CUDA GPU" in page.problem()
    assert window.current_page() is page and not window.next_button.isEnabled()
    assert "fp16 needs a CUDA GPU" in window.reason.text()
    page.bound[("performance", "precision")].set_value("auto")
    assert page.problem() == "" and window.next_button.isEnabled()


def test_without_an_nvidia_gpu_the_page_talks_about_ram_and_time(
    window: MainWindow, qtbot, tiny_gpt2
) -> None:
    from desktop.core.settings.options import Capabilities

    config = RunConfig(task="causal-lm")
    config.model.name = str(tiny_gpt2)
    config.training.batch_size, config.training.max_length = 64, 512  # activations that count
    window.set_config(config)
    page = window.options_page
    estimate = page.estimate
    with qtbot.waitSignal(page.estimate_updated, timeout=30_000):
        page.set_context(config, "", None, Capabilities())
    text = estimate.fit_label.text() + estimate.breakdown.text()
    assert "of RAM" in text and "slower than on a GPU" in text
    badge = FitBadgeWidget()  # the model page's line: the same figure, in the same words
    qtbot.addWidget(badge)
    badge.update_for(config, None, 0)
    qtbot.waitUntil(lambda: "Fit here" in badge.text(), timeout=30_000)
    need = re.search(r"Needs about (\S+ [KMG]B)", badge.text()).group(1)
    assert f"needs about {need} of RAM" in estimate.fit_label.text()
    assert "GPU memory" not in text and "CUDA" not in text
    assert (
        estimate.preset_buttons["fastest"].isHidden() and not estimate.preset_buttons["balanced"].isHidden()
    )
    assert estimate.preset_buttons["fit"].isHidden()
    estimate.preset_buttons["lowest_memory"].click()
    assert "makes every step slower" in estimate.changes_label.text() and not estimate.undo_button.isHidden()
    estimate.preset_buttons["lowest_memory"].click()  # again: nothing left to change, so nothing to undo
    assert estimate.changes_label.text().startswith("Nothing changed") and estimate.undo_button.isHidden()
    assert "makes every step slower" in estimate.changes_label.text()  # the caveat still holds
    speed = page.sections[0].editors  # the GPU-only options say so instead of doing nothing
    for name in ("pin_memory", "empty_cache_steps", "oom_recovery"):
        editor = speed[("performance", name)]
        assert not editor.isEnabled() and "Only with an NVIDIA GPU" in editor.toolTip()
    assert speed[("performance", "gradient_checkpointing")].isEnabled()


def test_every_page_is_usable_on_a_1024_by_576_screen(window: MainWindow) -> None:
    window.resize(1024, 576)
    hint = window.minimumSizeHint().expandedTo(window.minimumSize())
    assert hint.width() <= 1024 and hint.height() <= 576
    for page in window.pages:  # each scrolls rather than squeezing its fields
        assert page.parentWidget().parentWidget().inherits("QScrollArea")


def test_an_accumulation_longer_than_an_epoch_is_shown_under_its_field(window: MainWindow, qtbot) -> None:
    with qtbot.waitSignal(window.data_page.preview_loaded, timeout=30_000):
        window.load_sample()
    assert window.data_page.problem() == ""  # the data page leaves the schedule to this page
    window.go_to(2)
    page = window.options_page
    page.accumulation.setValue(50)  # the sample: 127 rows, batches of 16
    _, label = page.field_errors["training.gradient_accumulation"]
    assert "one pass over the 127 training rows is only 8 batches of 16" in label.text()
    assert not label.isHidden() and not window.next_button.isEnabled()
    page.accumulation.setValue(4)
    assert label.isHidden() and window.next_button.isEnabled()


def test_on_windows_a_run_too_big_for_the_gpu_is_said_to_spill_not_fail(
    window: MainWindow, qtbot, tiny_gpt2, monkeypatch
) -> None:
    from desktop.core.settings.options import Capabilities
    from desktop.gui.widgets import memory_estimate_widget

    monkeypatch.setattr(memory_estimate_widget, "_on_windows", lambda: True)
    config = RunConfig(task="causal-lm")
    config.model.name = str(tiny_gpt2)
    config.training.batch_size, config.training.max_length = 64, 2048
    window.set_config(config)
    page = window.options_page
    estimate = page.estimate
    with qtbot.waitSignal(page.estimate_updated, timeout=60_000):
        page.set_context(window.current_config(), "RTX 4060", 2**30, Capabilities(cuda=True, bf16=True))
    assert "will not fit" in estimate.fit_label.text() and "shared system memory" in estimate.fit_label.text()
    estimate.preset_buttons["fit"].click()
    assert "shared system memory" not in estimate.fit_label.text()


def test_the_columns_stack_rather_than_run_off_a_1024_pixel_window(window: MainWindow, qtbot) -> None:
    """In English the two columns (labels like "Empty the GPU cache every (steps)", the estimate's
    text) are wider than the page at 1024 x 576: side by side, the right one ran off the window."""
    from PySide6.QtWidgets import QBoxLayout, QScrollArea

    with qtbot.waitSignal(window.data_page.preview_loaded, timeout=30_000):
        window.load_sample()
    page = window.options_page
    window.resize(1280, 820)  # first side by side, the estimate's text in
    window.show()
    with qtbot.waitSignal(page.estimate_updated, timeout=30_000):
        window.go_to(window.pages.index(page))
    window.go_to(0)
    window.resize(1024, 576)  # on another step, as a user who makes the window smaller there
    window.go_to(window.pages.index(page))
    scroll = page.findChild(QScrollArea)
    qtbot.waitUntil(lambda: scroll.horizontalScrollBar().maximum() == 0, timeout=5_000)
    assert page._columns.direction() == QBoxLayout.Direction.TopToBottom
    for part in (page.estimate, *page.sections):  # each whole inside the page, none cut at its right
        assert part.geometry().right() < scroll.viewport().width()
    window.resize(1600, 900)
    qtbot.waitUntil(lambda: page._columns.direction() == QBoxLayout.Direction.LeftToRight, timeout=5_000)


def test_best_checkpoint_and_early_stopping_are_options_and_a_wrong_metric_is_said(
    window: MainWindow,
) -> None:
    page = window.options_page
    assert page.keep_best.isChecked() and page.best_metric.value() == "loss"  # the defaults, shown
    assert page.early_stopping.value() == 3
    page.keep_best.setChecked(False)
    page.early_stopping.setValue(0)
    t = window.current_config().training
    assert (t.keep_best, t.early_stopping) == (False, 0)
    assert page.early_stopping.text() == "never"

    page.best_metric.set_value("accuracy")  # a classification figure, on a causal-LM run
    config = window.current_config()
    config.task = "causal-lm"
    window.set_config(config)
    assert page.problem().startswith("Best by: must be loss for this task")
