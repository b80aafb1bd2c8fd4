"""How much of the app is still in English when it runs in Chinese.

    QT_QPA_PLATFORM=offscreen python tools/english_share.py [zh_CN|zh_TW]

Starts the app in that language with the sample loaded (the train and export pages with the synthetic
run of the screenshots), visits every page, the run history, the model browser, the model sources
dialog and the menus, and collects every text a user sees: labels, buttons, group and tab titles,
table headers, menu items, placeholders and tooltips. The user's own data (table cells, the text in
editors) is not counted, nor are texts made only of names, units and ids (PyTorch, GPU, LoRA, fp16,
GB, model ids, paths, config keys, numbers). Prints the English ones and their share.
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

NAMES = {
    # products, libraries, hardware and formats, written the same way in Chinese text
    "finetune",
    "studio",
    "pytorch",
    "torch",
    "cuda",
    "nvidia",
    "nvml",
    "gpu",
    "gpus",
    "cpu",
    "ram",
    "vram",
    "lora",
    "qlora",
    "hugging",
    "face",
    "modelscope",
    "hub",
    "adamw",
    "adafactor",
    "bf16",
    "fp16",
    "fp32",
    "sdpa",
    "eager",
    "inductor",
    "auto",
    "json",
    "jsonl",
    "csv",
    "tsv",
    "txt",
    "xlsx",
    "parquet",
    "safetensors",
    "mlflow",
    "tensorboard",
    "uv",
    "python",
    "pip",
    "alpha",
    "dropout",
    "token",
    "tokens",
    "epoch",
    "logits",
    "alpaca",
    "zip",
    "url",
    "id",
    "ok",
    "geforce",
    "rtx",
    "ms",
    "gb",
    "mb",
    "kb",
    "linear",
    "cosine",
    "constant",
    "pin",
    "memory",
    "compile",
    "rank",
    "simulated",
    "english",
    "transformers",
    "pipeline",
    "from_pretrained",
    "model",
    "import",
    "pipe",
    "positive",
    "negative",
    "loss",
    "accuracy",
    "train_loss",
    "eval_loss",
    "eval_accuracy",
    "eval_macro_f1",
    "apache",
    "llama",
    "qwen",
    "research",
    "zh",
    "en",
    "multilingual",
    "instruct",
    "chat",
    "lr",
    "polynomial",
    "cosine_with_restarts",
    "inverse_sqrt",  # scheduler names, values of the config
}
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
WORD = re.compile(r"[A-Za-z][A-Za-z']+")


def is_english(text: str) -> bool:
    """Whether ``text`` is a sentence or phrase in English (not Chinese, not only names and ids)."""
    if CJK.search(text):
        return False
    cleaned = re.sub(r"\S*[/\\_.:@=]\S*", " ", text)  # paths, ids, urls, config keys, file names
    words = [w.lower() for w in WORD.findall(cleaned)]
    return any(w not in NAMES and len(w) > 2 for w in words)


def visible_texts(widget: object, data: tuple = ()) -> list[str]:
    """The texts a user reads in ``widget`` and its children (not the data they typed or loaded, nor
    the ``data`` widgets: the preview of their file, a code sample)."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import (
        QAbstractButton,
        QComboBox,
        QGroupBox,
        QLabel,
        QLineEdit,
        QTableView,
        QTableWidget,
        QTabWidget,
        QWidget,
    )

    found = []
    for child in [widget, *widget.findChildren(QWidget)]:
        if (not child.isVisibleTo(widget) and child is not widget) or child in data:
            continue
        if child.toolTip():
            found.append(child.toolTip())
        if isinstance(child, (QLabel, QAbstractButton)) and child.text():
            found.append(child.text())
        elif isinstance(child, QGroupBox) and child.title():
            found.append(child.title())
        elif isinstance(child, QTabWidget):
            found += [child.tabText(i) for i in range(child.count())]
        elif isinstance(child, QLineEdit) and child.placeholderText():
            found.append(child.placeholderText())
        elif isinstance(child, QComboBox):
            found += [child.itemText(i) for i in range(child.count())]
        elif isinstance(child, QTableWidget):
            for column in range(child.columnCount()):
                header = child.horizontalHeaderItem(column)
                if header is not None:
                    found.append(header.text())
        elif isinstance(child, QTableView) and child.model() is not None:
            model = child.model()
            found += [str(model.headerData(c, Qt.Orientation.Horizontal)) for c in range(model.columnCount())]
            if model.rowCount():
                found.append(str(model.index(0, 1).data()))  # a status, in the user's language
    return [re.sub(r"<[^>]+>", "", text).replace("&", "").strip() for text in found if text.strip()]


def main(language: str) -> int:
    from PySide6.QtWidgets import QApplication, QLabel

    from desktop.gui.app_support import screenshots
    from desktop.gui.main_window import MainWindow
    from desktop.shared_ui import Settings, install_translators

    app = QApplication.instance() or QApplication(sys.argv[:1])
    install_translators(app, language)
    tmp = Path(tempfile.mkdtemp(prefix="fs-english-"))
    window = MainWindow(Settings(tmp / "settings.ini"))
    window.resize(1280, 820)
    window.show()
    window.environment_page.check()
    screenshots.wait_for(window.environment_page.checked)
    window.load_sample()
    screenshots.wait_for(window.data_page.preview_loaded)
    screenshots.wait_for(window.data_page.token_stats_loaded)
    screenshots.synthetic_run(window, tmp / "runs" / "20261130-101500-classification-all-minilm-l6-v2")
    window.update_options_context()
    screenshots.wait_for(window.options_page.estimate_updated)
    texts = []
    code = [label for label in window.export_page.findChildren(QLabel) if "import" in label.text()]
    # The user's file and its column names, and a code sample: not the app's words.
    data = (window.data_page.table, *window.data_page.column_mapping.mapping_combos.values(), *code)
    for index in range(len(window.pages)):
        window.stack.setCurrentIndex(index)
        app.processEvents()
        texts += visible_texts(window, data)
    for menu_action in window.menuBar().actions():
        texts.append(menu_action.text())
        texts += [a.text() for a in menu_action.menu().actions() if a.text()]
    from desktop.core.settings.config import RunConfig
    from desktop.gui.dialogs.hub_settings_dialog import HubSettingsDialog
    from desktop.gui.dialogs.model_browser_dialog import ModelBrowser
    from desktop.gui.dialogs.runs_dialog import RunsDialog

    screenshots.synthetic_history(tmp / "history")
    for dialog in (
        RunsDialog(tmp / "history", window),
        ModelBrowser(RunConfig(task="causal-lm"), gpu_free=None, ram=16 * 2**30, parent=window),
        HubSettingsDialog(window),
    ):
        dialog.show()
        if isinstance(dialog, RunsDialog):
            screenshots.wait_for(dialog.listed)
            dialog.select(*[info.name for info in dialog.infos][:2])
            screenshots.wait_for(dialog.curves_shown)
        app.processEvents()
        texts += visible_texts(dialog)
        dialog.close()
    screenshots.settle()
    unique = sorted(set(t.replace("&", "").strip() for t in texts if t.strip()))
    english = [t for t in unique if is_english(t)]
    for text in english:
        print(f"  English: {text!r}")
    share = len(english) / len(unique) if unique else 0.0
    print(f"{language}: {len(english)} of {len(unique)} distinct visible texts in English ({share:.1%}).")
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "zh_CN"))
