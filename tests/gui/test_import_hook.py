"""The window's process keeps no library's source in memory for PySide6's look at each import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# In a process of its own: PySide6 looks only at imports made while no other thread is importing,
# and a window of an earlier test may still be importing in the background here.
CHECK = """
import json, linecache, sys
from PySide6.QtCore import QObject
from PySide6.support import feature
from desktop.gui.app_support.import_hook import read_sources_cheaply

read_sources_cheaply()
plain = __import__("plain_module_for_hook")  # through the import statement, as PySide6 hooks it
__import__("qt_module_for_hook")
print(json.dumps({
    "source_kept": plain.__file__ in linecache.cache,
    "qt": feature.pyside_feature_dict.get("qt_module_for_hook"),
    "plain": feature.pyside_feature_dict.get("plain_module_for_hook"),
}))
"""


def test_imported_modules_leave_no_source_behind_and_pyside_users_are_still_known(tmp_path: Path) -> None:
    (tmp_path / "plain_module_for_hook.py").write_text("VALUE = 1\n" * 2000, encoding="utf-8")
    (tmp_path / "qt_module_for_hook.py").write_text("from PySide6.QtCore import QObject\n", encoding="utf-8")
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", CHECK],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(root)])},
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    assert not found["source_kept"]  # PySide6's own check kept every line of it
    assert found["qt"] == 0  # uses PySide6: switched as before
    assert found["plain"] == -1
