"""The window's process keeps no library's source in memory for PySide6's look at each import."""

from __future__ import annotations

import linecache
import sys

from desktop.gui.app_support.import_hook import read_sources_cheaply


def test_imported_modules_leave_no_source_behind_and_pyside_users_are_still_known(tmp_path, monkeypatch):
    from PySide6.support import feature

    (tmp_path / "plain_module_for_hook.py").write_text("VALUE = 1\n" * 2000, encoding="utf-8")
    (tmp_path / "qt_module_for_hook.py").write_text("from PySide6.QtCore import QObject\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(feature, "_mod_uses_pyside", feature._mod_uses_pyside)  # undone after the test
    read_sources_cheaply()
    try:
        plain = __import__("plain_module_for_hook")  # through the import statement, as PySide6 hooks it
        __import__("qt_module_for_hook")
        assert plain.__file__ not in linecache.cache  # PySide6's own check kept every line of it
        assert feature.pyside_feature_dict["qt_module_for_hook"] == 0  # uses PySide6: switched as before
        assert feature.pyside_feature_dict["plain_module_for_hook"] == -1
    finally:
        for name in ("plain_module_for_hook", "qt_module_for_hook"):
            sys.modules.pop(name, None)
            feature.pyside_feature_dict.pop(name, None)
