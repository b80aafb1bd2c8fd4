"""Layer rules: the core, CLI and worker never import Qt, and stay light to import."""

from __future__ import annotations

import importlib.util
import pkgutil
import subprocess
import sys

import pytest

QT = ("PySide6", "shiboken6", "pyqtgraph", "desktop.gui", "desktop.shared_ui")
HEAVY = ("torch", "transformers", "datasets", "peft", "accelerate")
ROOTS = ("desktop.core", "desktop.cli", "desktop.worker", "desktop.helper")
SUBCLASS_THE_STACK = {"desktop.core.training.callbacks", "desktop.core.training.trackers"}
"""Modules whose classes derive from Transformers' (a TrainerCallback): only a run imports them, inside
the function that trains, once the stack is loaded."""


def _modules() -> list[str]:
    """Every module of core, the CLI, the worker and the helper process, found on disk."""
    found = []
    for root in ROOTS:
        found.append(root)
        spec = importlib.util.find_spec(root)
        if spec.submodule_search_locations:  # a package: all of it, subpackages too
            walked = pkgutil.walk_packages(spec.submodule_search_locations, prefix=f"{root}.")
            found += [m.name for m in walked if not m.name.endswith(".__main__")]
    return found


def _loaded_after_import(modules: list[str]) -> set[str]:
    # A fresh interpreter: in this one pytest-qt has loaded Qt already.
    code = "import sys\n" + "".join(f"import {m}\n" for m in modules) + "print('\\n'.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_every_module_is_walked() -> None:
    modules = _modules()
    assert len(modules) > 60  # a walk that found nothing would prove nothing
    assert {"desktop.core.training.run", "desktop.core.data.tasks.seq2seq", "desktop.worker"} <= set(modules)


@pytest.mark.slow
def test_core_cli_and_worker_never_import_qt() -> None:
    loaded = _loaded_after_import(_modules())
    assert not [m for m in loaded if m.split(".")[0] in QT or m.startswith(QT)]


def test_entry_points_do_not_import_heavy_libraries() -> None:
    loaded = _loaded_after_import([m for m in _modules() if m not in SUBCLASS_THE_STACK])
    assert not [m for m in loaded if m.split(".")[0] in HEAVY]
