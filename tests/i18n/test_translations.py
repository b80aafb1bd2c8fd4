"""Every string of the windows has a zh_CN and a zh_TW translation, current and with the same placeholders."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_translations_are_complete_current_and_keep_their_placeholders() -> None:
    done = subprocess.run(
        [sys.executable, "tools/i18n.py", "check"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _i18n():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import i18n
    finally:
        sys.path.remove(str(ROOT / "tools"))
    return i18n


def test_the_check_finds_a_missing_translation_and_a_broken_placeholder(tmp_path: Path) -> None:
    i18n = _i18n()
    ts = tmp_path / "x_zh_CN.ts"
    ts.write_text(
        """<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>Page</name>
    <message><source>Saved {path}</source><translation>已保存 {folder}</translation></message>
    <message><source>Stop</source><translation type="unfinished"></translation></message>
    <message><source>Start</source><translation>开始</translation></message>
</context>
</TS>
""",
        encoding="utf-8",
    )
    found = i18n.problems(ts)
    assert len(found) == 2
    assert "placeholders" in found[0] and "unfinished" in found[1]


def test_the_compiled_translations_speak_chinese(tmp_path: Path, qapp) -> None:
    from PySide6.QtCore import QCoreApplication, QTranslator

    for language, expected in (("zh_CN", "文件(&F)"), ("zh_TW", "檔案(&F)")):
        qm = tmp_path / f"finetune_studio_{language}.qm"
        source = ROOT / "resources" / "i18n" / f"finetune_studio_{language}.ts"
        subprocess.run(
            [_i18n().tool("pyside6-lrelease"), str(source), "-qm", str(qm)], check=True, capture_output=True
        )
        translator = QTranslator()
        assert translator.load(str(qm))
        QCoreApplication.installTranslator(translator)
        try:
            assert QCoreApplication.translate("MainWindow", "&File") == expected
            assert QCoreApplication.translate("ModelBrowser", "%n model(s) found.", "", 3) == (
                "找到 3 个模型。" if language == "zh_CN" else "找到 3 個模型。"
            )
        finally:
            QCoreApplication.removeTranslator(translator)


def test_core_messages_stay_english_text_and_are_shown_translated(tmp_path: Path, qapp) -> None:
    from PySide6.QtCore import QCoreApplication, QTranslator

    from desktop.core.hub import translate
    from desktop.core.sources import MIRROR, Source
    from desktop.gui.core_text import shown

    class GatedRepoError(Exception):
        pass

    error = translate(
        GatedRepoError("401"), Source("huggingface", "https://hf-mirror.com", MIRROR), "meta/llama"
    )
    assert error.message == (  # what the CLI prints and the logs keep
        "meta/llama is gated: its authors ask you to accept their license before downloading it."
    )
    assert "Settings > Model sources (mirror (hf-mirror.com))" in error.hint
    qm = tmp_path / "zh_CN.qm"
    source = ROOT / "resources" / "i18n" / "finetune_studio_zh_CN.ts"
    subprocess.run(
        [_i18n().tool("pyside6-lrelease"), str(source), "-qm", str(qm)], check=True, capture_output=True
    )
    translator = QTranslator()
    assert translator.load(str(qm))
    QCoreApplication.installTranslator(translator)
    try:
        assert shown(error.message) == "meta/llama 是受限模型：作者要求你先同意许可协议才能下载。"
        assert "（镜像站（hf-mirror.com））" in shown(error.hint)  # the source's name is translated too
        assert shown("plain text") == "plain text"
    finally:
        QCoreApplication.removeTranslator(translator)
