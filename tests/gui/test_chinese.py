"""The app in Chinese: the language switch, core's failures in Chinese, pages that fit at 1024 x 576."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QLocale
from PySide6.QtWidgets import QAbstractButton, QApplication, QLabel, QMessageBox

from desktop.gui.main_window import MainWindow
from desktop.shared_ui import Key, Settings


@pytest.fixture
def language(qapp):
    """Install a language's translators as the app does at start-up; English again afterwards."""
    from desktop import shared_ui

    installed = []

    def use(code: str) -> None:
        installed.extend(shared_ui.install_translators(qapp, code))

    yield use
    for translator in installed:
        QCoreApplication.removeTranslator(translator)
    shared_ui.current = "en"
    QLocale.setDefault(QLocale(QLocale.Language.English))


def _texts(window: MainWindow) -> list[str]:
    return [action.text() for action in window.menuBar().actions()] + [
        window.steps.item(i).text() for i in range(window.steps.count())
    ]


def test_choosing_a_language_is_remembered_and_the_restarted_window_speaks_it(
    window: MainWindow, qtbot, language, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert "&File" in _texts(window)
    asked: list[str] = []

    def no_restart(*args: object) -> QMessageBox.StandardButton:
        asked.append(str(args[2]))
        return QMessageBox.StandardButton.No

    monkeypatch.setattr(QMessageBox, "question", no_restart)
    window.menu_bar.language_actions["zh_CN"].trigger()
    assert window.settings.text(Key.LANGUAGE) == "zh_CN" and "next start" in asked[0]

    from desktop.core.system.language import choose

    language(choose("", window.settings.text(Key.LANGUAGE)))  # what the next start does
    restarted = MainWindow(Settings(tmp_path / "settings.ini"))
    qtbot.addWidget(restarted)
    texts = _texts(restarted)
    assert "文件(&F)" in texts and any("模型与数据" in text for text in texts)
    assert restarted.menu_bar.language_actions["zh_CN"].isChecked()


def test_a_core_failure_is_shown_in_chinese(window: MainWindow, qtbot, language, tmp_path: Path) -> None:
    language("zh_CN")
    data = tmp_path / "empty.csv"
    data.write_text("", encoding="utf-8")
    page = window.data_page
    picker, dataset = page.model_picker, page.dataset_picker
    picker.model_edit.setText("bert-base-uncased")
    picker.model_edit.editingFinished.emit()
    with qtbot.waitSignal(page.preview_loaded, timeout=30_000):
        dataset.data_edit.setText(str(data))
        dataset.data_edit.editingFinished.emit()
    assert "empty.csv 是空的。" in dataset.data_error.text()
    assert "请选择包含训练样本的文件" in dataset.data_error.text()  # and what to do, in Chinese too


def _cut(widget: object) -> list[str]:
    """Visible labels and buttons narrower than their one-line text (word-wrapped labels excepted)."""
    found = []
    for child in widget.findChildren(QLabel) + widget.findChildren(QAbstractButton):
        if not child.isVisibleTo(widget) or not child.text().strip():
            continue
        if isinstance(child, QLabel) and (child.wordWrap() or child.textFormat() == 1 or "<" in child.text()):
            continue
        if child.width() + 1 < child.minimumSizeHint().width():
            found.append(
                f"{type(child).__name__} {child.text()!r}: {child.width()} < {child.sizeHint().width()}"
            )
    return found


@pytest.mark.parametrize("code", ["zh_CN", "zh_TW"])
def test_every_page_fits_at_1024_by_576_in_chinese(
    qtbot, language, code: str, tmp_path: Path, samples: Path
) -> None:
    language(code)
    window = MainWindow(Settings(tmp_path / "settings.ini"))
    qtbot.addWidget(window)
    window.show()
    window.resize(1024, 576)
    with qtbot.waitSignal(window.data_page.preview_loaded, timeout=60_000):
        window.load_sample()  # the pages with content, as a user sees them
    assert window.minimumSizeHint().width() <= 1024 and window.minimumSizeHint().height() <= 576
    for index in range(len(window.pages)):
        window.stack.setCurrentIndex(index)
        QApplication.processEvents()
        assert window.size().width() <= 1024 and window.size().height() <= 576
        assert _cut(window.pages[index]) == [], f"page {index + 1} in {code}"
    window.close()


def test_metric_task_and_column_keys_read_as_chinese_words(qapp, language) -> None:
    """The files keep eval_accuracy, causal-lm and prediction; the screens say them in Chinese."""
    from desktop.gui.widgets.metric_text import column_name, metric_name, metrics_line, task_name

    language("zh_CN")
    assert (
        metrics_line({"eval_accuracy": 0.9333, "train_loss": 0.2412})
        == "验证集准确率 0.9333   训练损失 0.2412"
    )
    assert task_name("causal-lm") == "因果语言模型 / 对话微调" and task_name("seq2seq") == "序列到序列"
    assert column_name("prediction") == "预测（prediction）"  # the key too: it is the file's column
    assert column_name("probability_new") == "概率（probability_new）"
    assert metric_name("eval_rouge_lsum") == "eval_rouge_lsum"  # a key we do not know stays as it is


def test_option_values_keep_their_name_with_chinese_words_beside_it(qtbot, language) -> None:
    from desktop.core.settings.config_sections import OPTIMIZERS, SCHEDULERS
    from desktop.gui.widgets.choice_combo import ChoiceCombo

    language("zh_CN")
    optimizer, scheduler = ChoiceCombo(OPTIMIZERS), ChoiceCombo(SCHEDULERS)
    qtbot.addWidget(optimizer)
    qtbot.addWidget(scheduler)
    optimizer.set_value("adamw_torch_fused")
    assert optimizer.currentText() == "adamw_torch_fused：融合版 AdamW，GPU 上更快"
    assert optimizer.value() == "adamw_torch_fused"  # what the config keeps
    assert all("：" in scheduler.itemText(i) for i in range(scheduler.count()))


def test_an_os_error_reads_in_chinese_with_its_own_words_behind_details(
    qtbot, language, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from PySide6.QtGui import QTextDocumentFragment

    from desktop.gui.widgets.error_label import show_error

    language("zh_CN")
    label = QLabel()
    qtbot.addWidget(label)
    show_error(label, FileNotFoundError(errno.ENOENT, "No such file or directory", "/data/评论.csv"))
    seen = QTextDocumentFragment.fromHtml(label.text()).toPlainText()
    assert "/data/评论.csv" in seen and "Errno" not in seen and "No such file" not in seen
    assert seen.endswith("详细信息")
    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "exec", lambda box: shown.append(box.text()) or 0)
    label.linkActivated.emit("details")
    assert shown == ["[Errno 2] No such file or directory: '/data/评论.csv'"]


@pytest.mark.parametrize(("code", "look_in"), [("zh_CN", "查找范围(&L)："), ("zh_TW", "尋找於(&L)：")])
def test_qts_own_file_dialog_speaks_the_language(qtbot, language, code: str, look_in: str) -> None:
    """The walk saw "Look in:" and "Files of type:" in the Chinese window: Qt's own strings come from
    its qtbase translations, which the app installs with its own."""
    from PySide6.QtWidgets import QFileDialog

    language(code)
    dialog = QFileDialog(None, "", "", "CSV (*.csv)")
    dialog.setOption(QFileDialog.Option.DontUseNativeDialog)
    qtbot.addWidget(dialog)
    labels = {label.objectName(): label.text() for label in dialog.findChildren(QLabel)}
    assert labels["lookInLabel"] == look_in
    assert not [text for text in labels.values() if text.isascii() and text]  # each label in Chinese
