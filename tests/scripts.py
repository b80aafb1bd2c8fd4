"""The repository's scripts (installer/build.py, tools/*.py) as modules, for tests of their functions."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def script(relative: str) -> ModuleType:
    """The script at ``relative`` (``"installer/build.py"``), imported from its file."""
    path = ROOT / relative
    spec = importlib.util.spec_from_file_location(f"script_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
