"""Heavy libraries imported safely from several threads at once.

``transformers`` loads its classes lazily on first attribute access; two threads doing that at the
same time can fail with "cannot import name 'AutoTokenizer' from 'transformers'" (the app's data page
reads token statistics while the fit badge builds a model config). The first access goes through
one lock; after it the names are plain module attributes.

Imports in a background thread also hold up the window's thread, which needs the same interpreter
lock: :func:`stepping_aside` lets such an import wait while the user acts, and
:func:`load_extensions_without_gil` loads compiled libraries without that lock (Linux).

Python has no public API for what an import in progress holds, so this module, and no other, reads
three private names of CPython's import system: ``_imp.lock_held()`` (the global import lock; the
public ``imp.lock_held`` went with ``imp`` in 3.12), ``importlib._bootstrap._blocking_on`` (which
thread waits for which module's lock) and ``ModuleSpec._initializing`` (a module still being
imported). Each is read so that a Python without it changes nothing but speed: unknown means "never
hold anyone up" (:func:`import_lock_held`, :func:`threads_awaited`) or "imported" (:func:`imported`).
``tests/test_upstream_private_names.py`` fails on the Python release that changes them, and
``tests/test_house_rules.py`` keeps them out of every other module.
"""

from __future__ import annotations

import _imp
import importlib._bootstrap
import importlib.machinery
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_lock = threading.Lock()
_names_wanted = 0  # threads waiting for ``_lock``
_hook_lock = threading.Lock()  # for _names_wanted and installing _import
_aside = threading.local()  # ``busy``: set in a thread that steps aside (see stepping_aside)
_builtin_import: Callable[..., Any] | None = None
PAUSE_S = 0.02
"""How often a thread that steps aside looks whether it may go on."""


def imported(name: str) -> bool:
    """Whether module ``name`` is imported, and done: a module that another thread is importing is in
    ``sys.modules`` from the start, and importing it then waits until that thread is done (the window's
    thread froze 8 s so, for pyqtgraph imported in the background from a cold disk)."""
    import sys

    module = sys.modules.get(name)
    spec = getattr(module, "__spec__", None)
    return module is not None and not getattr(spec, "_initializing", False)  # see the module's doc


def transformers_names(*names: str) -> tuple[Any, ...]:
    """``transformers.<name>`` for each of ``names``, imported under one process-wide lock."""
    global _names_wanted
    with _hook_lock:
        _names_wanted += 1  # a thread stepping aside inside the lock goes on (see _awaited)
    try:
        _lock.acquire()
    finally:
        with _hook_lock:
            _names_wanted -= 1
    try:
        import transformers

        return tuple(getattr(transformers, name) for name in names)
    finally:
        _lock.release()


@contextmanager
def stepping_aside(busy: Callable[[], bool]) -> Iterator[None]:
    """Imports this thread makes inside the block wait, at each ``import`` statement, while ``busy()``
    is true (the user at work in the window), unless another thread waits for a module this one is
    in the middle of importing.

    A module's code runs holding the interpreter's lock, handing it over every 5 ms at best and not at
    all inside a C call (PyTorch's core sets itself up in one of 60-95 ms): a stack imported in the
    background still makes the window's thread wait, in slices, each time it runs Python. Stepping
    aside moves that work to moments without input. A module already being imported goes on to its
    end; nothing waits while another thread needs a module this one holds (Python's import lock for
    it), or :func:`transformers_names`, so a step that needs the stack never waits for the user.
    """
    _install_import_hook()
    _aside.busy = busy
    try:
        yield
    finally:
        _aside.busy = None


def _install_import_hook() -> None:
    global _builtin_import
    import builtins

    with _hook_lock:
        if _builtin_import is None:
            _builtin_import = builtins.__import__
            builtins.__import__ = _import


def _import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
    """``builtins.__import__`` that first waits while this thread steps aside and the window is busy."""
    _step_aside()
    return _builtin_import(name, globals, locals, fromlist, level)


def _step_aside() -> None:
    """Wait while this thread steps aside and the user is at work (see :func:`stepping_aside`)."""
    busy = getattr(_aside, "busy", None)
    # Never while holding Python's global import lock (an import statement run by a finder): every
    # thread's next import would wait for the user too, the window's thread among them. No import in
    # here: it would come back here.
    if busy is not None and not import_lock_held():
        me = threading.get_ident()
        while busy() and not _awaited(me):
            time.sleep(PAUSE_S)


def _awaited(me: int) -> bool:
    """Whether another thread waits for a module thread ``me`` is importing, or for ``_lock``."""
    if _names_wanted:
        return True
    owners = threads_awaited()
    return owners is None or me in owners  # unknown: never hold others up


def import_lock_held() -> bool:
    """Whether this thread holds Python's global import lock (it runs a finder); True where this
    Python cannot say, so that nothing waits there. No import in here (see :func:`_step_aside`)."""
    lock_held = getattr(_imp, "lock_held", None)  # CPython's own; see the module's doc
    return True if lock_held is None else bool(lock_held())


def threads_awaited() -> set[int] | None:
    """The threads that hold a module's import lock which another thread is waiting for; None where
    this Python keeps that table otherwise. No import in here (see :func:`_step_aside`)."""
    try:
        # Python 3.10-3.11: a dict, thread -> the module lock it waits for; 3.12 on: a dict of weak
        # references to a list of them. See the module's doc.
        table = importlib._bootstrap._blocking_on
        if isinstance(table, dict):
            entries = list(table.values())
        else:
            entries = [ref() for ref in list(table.data.values())]
        return {
            lock.owner
            for waited in entries
            for lock in (waited if isinstance(waited, list) else (waited,))
            if getattr(lock, "owner", None) is not None
        }
    except Exception:  # an interpreter that keeps this otherwise
        return None


class _LibraryLoader(importlib.machinery.ExtensionFileLoader):
    """Python's loader of a compiled module, which first loads the module's shared library with the
    interpreter's lock released (see :class:`_LoadedOutsideTheLock`): when the module is made, not
    when it is found, which happens under Python's global import lock (held there, the library's
    100-350 ms would hold up every other thread's next import, the window's thread among them)."""

    def create_module(self, spec: Any) -> Any:
        if _outside is not None:
            _outside.dlopen(os.fsencode(self.path), sys.getdlopenflags())
            # The load can take seconds from a cold disk (the user was away at the import statement,
            # the last look); one who came back meanwhile is not made to wait for the module's set-up,
            # one C call that holds the lock (PyTorch's core: 60-95 ms measured warm).
            _step_aside()
        return super().create_module(spec)


class _LoadedOutsideTheLock:
    """A finder first on ``sys.meta_path`` that gives a compiled extension module a loader
    (:class:`_LibraryLoader`) that loads its shared library with the global interpreter lock
    released, before Python's own loader loads it again (which is then only a look-up).

    On Linux, CPython's loader calls ``dlopen`` holding the lock; a big library (``libtorch_cpu``,
    ``libarrow``) takes 100-350 ms to map, relocate and initialise, and the window's thread waits all
    that time, however background the importing thread. ``ctypes`` calls C with the lock released. The
    library is loaded with the flags Python uses (``sys.getdlopenflags()``), so Python's ``dlopen``
    returns the same handle. Any failure is left to Python's loader to report.
    """

    def __init__(self) -> None:
        import ctypes

        self.dlopen = ctypes.CDLL(None).dlopen
        self.dlopen.restype = ctypes.c_void_p
        self.dlopen.argtypes = [ctypes.c_char_p, ctypes.c_int]
        self._busy = threading.local()

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if getattr(self._busy, "on", False):
            return None
        self._busy.on = True
        try:
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    if type(spec.loader) is importlib.machinery.ExtensionFileLoader:
                        spec.loader = _LibraryLoader(spec.loader.name, spec.loader.path)
                    return spec
            return None
        finally:
            self._busy.on = False


_outside: _LoadedOutsideTheLock | None = None


def load_extensions_without_gil() -> None:
    """From now on, this process loads compiled extension modules without holding the interpreter's
    lock (Linux; see :class:`_LoadedOutsideTheLock`), so that importing PyTorch, Arrow or pandas in a
    background thread never freezes the window's thread. Idempotent.

    Not on Windows: there PyTorch loads its DLLs itself through ``ctypes`` (the lock released already),
    and nothing was measured; not on macOS, which the app does not target.
    """
    global _outside
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
