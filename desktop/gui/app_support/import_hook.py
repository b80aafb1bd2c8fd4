"""PySide6's import hook, made to read each module's file once instead of keeping its source.

PySide6 (PYSIDE-2029) looks at every module imported after it, in any thread, to know whether the
module uses PySide6 (``__feature__`` switching): it takes the module's source with
``inspect.getsource``, which decodes and tokenizes the file and keeps its lines in ``linecache`` for
the life of the process. Importing PyTorch and Transformers (3,300 modules) so kept 62 MB of source
text (peak memory +150 MB) and spent about a second, on the window's thread too, when a step first
imported one of the app's own modules (5-15 ms each). The same question is answered from the file's
bytes here: ``"PySide6"`` is the same bytes in every encoding Python source uses.
"""

from __future__ import annotations

import sys
from types import ModuleType


def _uses_pyside(module: ModuleType) -> bool:
    """Whether ``module``'s source names PySide6 (what PySide6 asks), from the file's bytes."""
    path = getattr(module, "__file__", None)
    if not isinstance(path, str) or not path.endswith(".py"):
        return False  # PySide6's own answer where there is no source (built-in, compiled, frozen)
    try:
        with open(path, "rb") as fh:
            return b"PySide6" in fh.read()
    except OSError:
        return False


def read_sources_cheaply() -> None:
    """Replace PySide6's check of each imported module (see the module's doc). Nothing changes where
    PySide6 has no such check (another version): the app works either way."""
    feature = sys.modules.get("PySide6.support.feature") or sys.modules.get("shibokensupport.feature")
    if feature is not None and callable(getattr(feature, "_mod_uses_pyside", None)):
        feature._mod_uses_pyside = _uses_pyside
