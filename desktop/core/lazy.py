"""Heavy libraries imported safely from several threads at once.

``transformers`` loads its classes lazily on first attribute access; two threads doing that at the
same time can fail with "cannot import name 'AutoTokenizer' from 'transformers'" (the app's data page
reads token statistics while the fit badge builds a model config). The first access goes through
one lock; after it the names are plain module attributes.
"""

from __future__ import annotations

import threading
from typing import Any

_lock = threading.Lock()


def imported(name: str) -> bool:
    """Whether module ``name`` is imported, and done: a module that another thread is importing is in
    ``sys.modules`` from the start, and importing it then waits until that thread is done (the window's
    thread froze 8 s so, for pyqtgraph imported in the background from a cold disk)."""
    import sys

    module = sys.modules.get(name)
    return module is not None and not getattr(getattr(module, "__spec__", None), "_initializing", False)


def transformers_names(*names: str) -> tuple[Any, ...]:
    """``transformers.<name>`` for each of ``names``, imported under one process-wide lock."""
    with _lock:
        import transformers

        return tuple(getattr(transformers, name) for name in names)


class _LoadedOutsideTheLock:
    """A finder first on ``sys.meta_path`` that, for a compiled extension module, loads its shared
    library with the global interpreter lock released, before Python's own loader loads it again
    (which is then only a look-up).

    On Linux, CPython's loader calls ``dlopen`` holding the lock; a big library (``libtorch_cpu``,
    ``libarrow``) takes 100-350 ms to map, relocate and initialise, and the window's thread waits all
    that time, however background the importing thread. ``ctypes`` calls C with the lock released. The
    library is loaded with the flags Python uses (``sys.getdlopenflags()``), so Python's ``dlopen``
    returns the same handle. Any failure is left to Python's loader to report.
    """

    def __init__(self) -> None:
        import ctypes

        self._dlopen = ctypes.CDLL(None).dlopen
        self._dlopen.restype = ctypes.c_void_p
        self._dlopen.argtypes = [ctypes.c_char_p, ctypes.c_int]
        self._busy = threading.local()

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        import importlib.machinery
        import os
        import sys

        if getattr(self._busy, "on", False):
            return None
        self._busy.on = True
        try:
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    if isinstance(spec.loader, importlib.machinery.ExtensionFileLoader) and spec.origin:
                        self._dlopen(os.fsencode(spec.origin), sys.getdlopenflags())
                    return spec
            return None
        finally:
            self._busy.on = False


_outside: _LoadedOutsideTheLock | None = None


def load_libraries_outside_the_lock() -> None:
    """From now on, this process loads compiled extension modules without holding the interpreter's
    lock (Linux; see :class:`_LoadedOutsideTheLock`), so that importing PyTorch, Arrow or pandas in a
    background thread never freezes the window's thread. Idempotent.

    Not on Windows: there PyTorch loads its DLLs itself through ``ctypes`` (the lock released already),
    and nothing was measured; not on macOS, which the app does not target.
    """
    global _outside
    import sys

    if _outside is not None or not sys.platform.startswith("linux"):
        return
    try:
        _outside = _LoadedOutsideTheLock()
    except (OSError, AttributeError):  # no dlopen to call: imports stay as they are
        return
    sys.meta_path.insert(0, _outside)


def import_data_stack() -> None:
    """Import what reading and checking data needs (Arrow, pandas, NumPy)."""
    import numpy  # noqa: F401
    import pandas  # noqa: F401
    import pyarrow.compute
    import pyarrow.csv  # noqa: F401


def import_training_stack() -> None:
    """Import what training, export and try-it need in this process (PyTorch, Transformers, the
    Trainer and the model classes), so that none of them waits for it later."""
    import torch  # noqa: F401
    import transformers  # noqa: F401

    transformers_names(
        "Trainer",
        "TrainingArguments",
        "AutoTokenizer",
        "AutoModelForSequenceClassification",
        "AutoModelForCausalLM",
        "AutoModelForSeq2SeqLM",
    )
