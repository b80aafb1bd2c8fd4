"""The launcher bundle keeps what each platform's Qt needs (checked against the real wheels' files)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "installer"))

from bundle_filter import keep  # noqa: E402

WINDOWS_WHEEL = Path(__file__).parent / "data" / "pyside6_essentials-6.11.3-win_amd64.txt"


def _windows_wheel() -> list[str]:
    return [
        line for line in WINDOWS_WHEEL.read_text(encoding="utf-8").splitlines() if not line.startswith("#")
    ]


def test_the_pinned_pyside6_is_the_one_whose_files_are_checked() -> None:
    pin = (ROOT / "installer" / "build-requirements.txt").read_text(encoding="utf-8")
    assert "pyside6-essentials==6.11.3" in pin.lower()


def test_windows_keeps_the_platform_plugin_the_style_and_the_icon_reader() -> None:
    names = _windows_wheel()
    plugins = {Path(n).name for n in names if "/plugins/" in n and keep(n, "windows")}
    assert plugins == {
        "qwindows.dll",
        "qoffscreen.dll",
        "qminimal.dll",
        "qmodernwindowsstyle.dll",
        "qico.dll",
    }
    kept = {Path(n).name for n in names if keep(n, "windows")}
    assert {"Qt6Core.dll", "Qt6Gui.dll", "Qt6Widgets.dll", "QtCore.pyd", "QtGui.pyd", "QtWidgets.pyd"} <= kept
    assert {"qtbase_zh_CN.qm", "qtbase_zh_TW.qm"} <= kept and "qtbase_ar.qm" not in kept


def test_windows_paths_with_backslashes_are_read_the_same() -> None:
    assert keep(r"PySide6\plugins\platforms\qwindows.dll", "windows")
    assert not keep(r"PySide6\plugins\sqldrivers\qsqlite.dll", "windows")


def test_linux_keeps_xcb_and_the_input_methods_but_not_wayland() -> None:
    assert keep("PySide6/Qt/plugins/platforms/libqxcb.so", "linux")
    assert keep("PySide6/Qt/plugins/platforminputcontexts/libibusplatforminputcontextplugin.so", "linux")
    assert not keep("PySide6/Qt/plugins/platforms/libqwayland-egl.so", "linux")
    assert not keep("libQt6Network.so.6", "linux") and keep("libQt6Widgets.so.6", "linux")


def _pe(subsystem_value: int) -> bytes:
    header = bytearray(0x200)
    header[:2] = b"MZ"
    header[0x3C:0x40] = (0x80).to_bytes(4, "little")
    header[0x80:0x84] = b"PE\0\0"
    optional = 0x80 + 4 + 20
    header[optional : optional + 2] = (0x20B).to_bytes(2, "little")  # PE32+
    header[optional + 68 : optional + 70] = subsystem_value.to_bytes(2, "little")
    return bytes(header)


def test_the_workflow_can_tell_a_windowed_pythonw_from_a_console_one(tmp_path: Path) -> None:
    from pe_subsystem import main, subsystem

    gui, console = tmp_path / "pythonw.exe", tmp_path / "python.exe"
    gui.write_bytes(_pe(2))
    console.write_bytes(_pe(3))
    assert (subsystem(gui), subsystem(console)) == ("gui", "console")
    assert main([str(gui), "--expect", "gui"]) == 0 and main([str(console), "--expect", "gui"]) == 1
