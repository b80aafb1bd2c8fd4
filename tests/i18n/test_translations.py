"""Every string of the windows has a zh_CN and a zh_TW translation, current and with the same placeholders."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QLocale

from tests.scripts import script

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_translations_are_complete_current_and_keep_their_placeholders() -> None:
    done = subprocess.run(
        [sys.executable, "tools/i18n.py", "check"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _i18n():
    return script("tools/i18n.py")


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


def test_the_translation_files_compile_for_qt_linguist(tmp_path: Path) -> None:
    # The app reads the .ts files itself; translators still open and compile them with Qt's tools.
    for language in ("zh_CN", "zh_TW"):
        source = ROOT / "resources" / "i18n" / f"finetune_studio_{language}.ts"
        qm = tmp_path / f"{language}.qm"
        subprocess.run(
            [_i18n().tool("pyside6-lrelease"), str(source), "-qm", str(qm)], check=True, capture_output=True
        )
        assert qm.stat().st_size > 10_000


@pytest.fixture
def chinese(qapp):
    """The app's zh_CN translators installed, as the app installs them; removed afterwards."""
    from PySide6.QtCore import QCoreApplication

    from desktop import shared_ui
    from desktop.shared_ui import install_translators

    installed = install_translators(qapp, "zh_CN")
    yield
    for translator in installed:
        QCoreApplication.removeTranslator(translator)
    shared_ui.current = "en"
    QLocale.setDefault(QLocale(QLocale.Language.English))


def test_the_windows_speak_chinese_with_plural_forms(chinese) -> None:
    from PySide6.QtCore import QCoreApplication

    assert QCoreApplication.translate("MainWindow", "&File") == "文件(&F)"
    assert QCoreApplication.translate("ModelBrowser", "%n model(s) found.", "", 3) == "找到 3 个模型。"
    assert QCoreApplication.translate("QPlatformTheme", "Cancel") == "取消"  # Qt's own buttons


def test_traditional_chinese_uses_taiwan_words() -> None:
    from desktop.core.system.translations import translations

    table = translations("zh_TW")
    assert table.translate("MainWindow", "&File") == "檔案(&F)"
    assert table.translate("ModelBrowser", "%n model(s) found.", "", 3) == "找到 %n 個模型。"


def test_core_messages_stay_english_text_and_are_shown_translated(chinese) -> None:
    from desktop.core.hub.access import translate
    from desktop.core.hub.sources import MIRROR, Source
    from desktop.shared_ui import shown

    class GatedRepoError(Exception):
        pass

    error = translate(
        GatedRepoError("401"), Source("huggingface", "https://hf-mirror.com", MIRROR), "meta/llama"
    )
    assert error.message == (  # what the logs keep
        "meta/llama is gated: its authors ask you to accept their license before downloading it."
    )
    assert "Settings > Model sources (mirror (hf-mirror.com))" in error.hint
    assert shown(error.message) == "meta/llama 是受限模型：作者要求你先同意许可协议才能下载。"
    assert "（镜像站（hf-mirror.com））" in shown(error.hint)  # the source's name is translated too
    assert shown("plain text") == "plain text"


def test_placeholders_survive_translation_and_a_broken_one_falls_back_to_english() -> None:
    from desktop.core.system.messages import msg
    from desktop.core.system.translations import localized, render

    message = msg("{name} cannot be downloaded: the network is switched off (HF_HUB_OFFLINE).", name="org/m")
    assert localized(message, "zh_CN") == "无法下载 org/m：网络已关闭（HF_HUB_OFFLINE）。"
    assert localized(message, "zh_TW").startswith("無法下載 org/m")
    assert localized(message, "en") == str(message)
    assert render(message, lambda template: "坏的 {model}") == str(message)  # never a KeyError


def test_the_cli_speaks_chinese_when_the_system_does(tmp_path: Path) -> None:
    import os

    config = tmp_path / "bad.toml"
    config.write_text('task = "classification"\n[training]\nepochs = "three"\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("LC_ALL", "LC_MESSAGES", "LANGUAGE")}
    env.update(LANG="zh_CN.UTF-8", PYTHONIOENCODING="utf-8")
    command = [sys.executable, "-m", "desktop.cli", "validate", str(config)]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, encoding="utf-8")
    assert done.returncode == 2
    assert "错误：训练配置有 1 个问题：" in done.stderr
    assert "training.epochs：必须是数字，而不是 'three'。" in done.stderr
    traditional = subprocess.run(
        [*command, "--lang", "zh_TW"], cwd=ROOT, env=env, capture_output=True, text=True, encoding="utf-8"
    )
    assert "錯誤：訓練設定有 1 個問題：" in traditional.stderr


def test_cli_help_is_translated(capsys: pytest.CaptureFixture[str]) -> None:
    from desktop import cli
    from desktop.cli import text as cli_text

    for language, expected in (
        ("zh_CN", "检查配置及其数据，不进行训练"),
        ("zh_TW", "依訓練設定微調 Hugging Face 模型。"),
    ):
        try:
            with pytest.raises(SystemExit):
                cli.main(["--lang", language, "--help"])
        finally:
            cli_text.language = "en"
        assert expected in capsys.readouterr().out


def test_without_a_chinese_font_linux_says_which_package_to_install(monkeypatch, qapp) -> None:
    from PySide6.QtGui import QFontDatabase

    from desktop.shared_ui import chinese_font_missing, font_notice

    monkeypatch.setattr(QFontDatabase, "families", staticmethod(lambda *args: []))
    assert chinese_font_missing("zh_CN", platform="linux")
    assert not chinese_font_missing("zh_CN", platform="win32") and not chinese_font_missing("en", "linux")
    notice = font_notice("zh_TW")
    assert "Traditional Chinese" in notice and "fonts-noto-cjk" in notice
    assert notice.isascii()  # readable without the font it asks for


def test_english_has_its_plural_forms(qapp) -> None:
    from PySide6.QtCore import QCoreApplication

    from desktop.shared_ui import install_translators

    installed = install_translators(qapp, "en")
    try:
        translate = QCoreApplication.translate
        assert translate("ModelBrowser", "%n model(s) found.", "", 1) == "1 model found."
        assert translate("ModelBrowser", "%n model(s) found.", "", 12) == "12 models found."
        assert translate("OptionsPage", "Effective batch: %n example(s) per update", "", 1) == (
            "Effective batch: 1 example per update"
        )
        assert translate("MainWindow", "&File") == "&File"  # everything else is the source itself
    finally:
        for translator in installed:
            QCoreApplication.removeTranslator(translator)
