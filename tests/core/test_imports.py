"""Layer rules: the core, CLI and worker never import Qt, and stay light to import."""

from __future__ import annotations

import subprocess
import sys

MODULES = [
    "desktop.core.settings.config",
    "desktop.core.data.tables",
    "desktop.core.data.columns",
    "desktop.core.system.events",
    "desktop.core.system.errors",
    "desktop.core.runs.folders",
    "desktop.core.hub.models",
    "desktop.core.data.preview",
    "desktop.core.training.run",
    "desktop.core.data.tasks.classification",
    "desktop.core.data.tasks.causal_lm",
    "desktop.core.data.tasks.seq2seq",
    "desktop.core.system.paths",
    "desktop.cli",
    "desktop.worker",
]
QT = ("PySide6", "shiboken6", "pyqtgraph", "desktop.gui")
HEAVY = ("torch", "transformers", "datasets", "peft", "accelerate")


def _loaded_after_import(modules: list[str]) -> set[str]:
    # A fresh interpreter: in this one pytest-qt has loaded Qt already.
    code = "import sys\n" + "".join(f"import {m}\n" for m in modules) + "print('\\n'.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_core_cli_and_worker_never_import_qt() -> None:
    loaded = _loaded_after_import(MODULES)
    assert not [m for m in loaded if m.split(".")[0] in QT or m.startswith("desktop.gui")]


def test_entry_points_do_not_import_heavy_libraries() -> None:
    loaded = _loaded_after_import(MODULES)
    assert not [m for m in loaded if m.split(".")[0] in HEAVY]
