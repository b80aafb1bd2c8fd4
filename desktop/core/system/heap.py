"""The objects that heavy imports make, kept out of the cycle collector's reach for good.

Once PyTorch and Transformers are imported, the heap holds about half a million objects that live as
long as the process, and a full collection walks them all holding Python's lock (0.2-0.3 s).
:func:`freeze_imports` moves every object alive out of the collector's reach (``gc.freeze``) just
after the training stack is imported, before a run makes anything of its own; the heap is never
unfrozen. Core collects through :func:`collect`, which the window hands to its own thread. Figures:
docs/decisions/005-cycle-collection.md.
"""

from __future__ import annotations

import gc
from collections.abc import Callable

from desktop.core.system.lazy import imported

TRAINING_STACK = ("torch", "transformers.trainer")
"""The modules that show the training stack imported (:func:`desktop.core.system.lazy.import_training_stack`):
``transformers`` alone is a lazy shell, and the Trainer's modules are 40% of the stack's objects (a
heap frozen before them left 197 thousand objects to each of a run's collections: 117-232 ms)."""

_training_stack_frozen = False
_router: Callable[[int], None] | None = None


def collect(generation: int = 2) -> None:
    """``gc.collect(generation)`` where the process collects cycles: the window's thread in the app
    (see :func:`route_collections`), here elsewhere. Core collects through this, never ``gc.collect``:
    a collection frees whatever cycles it finds, and Qt objects freed off the GUI thread can deadlock."""
    router = _router
    if router is None:
        gc.collect(generation)
    else:
        router(generation)


def route_collections(router: Callable[[int], None] | None) -> Callable[[int], None] | None:
    """Hand every :func:`collect` to ``router`` (``None``: collect in the calling thread); returns the
    router it replaces, to put back."""
    global _router
    previous, _router = _router, router
    return previous


def freeze_imports() -> None:
    """Freeze every object alive now (call it just after a heavy import), young garbage collected
    first; notes whether the training stack was among them."""
    global _training_stack_frozen
    collect(0)
    gc.freeze()
    if all(imported(name) for name in TRAINING_STACK):
        _training_stack_frozen = True


def freeze_training_stack() -> None:
    """Freeze the heap once the training stack is imported, unless that was done (by the window, after
    importing it at an idle moment)."""
    if not _training_stack_frozen:
        freeze_imports()


def training_stack_frozen() -> bool:
    """Whether the heap was frozen after the training stack was imported."""
    return _training_stack_frozen


def release_memory() -> None:
    """Give a run's memory (and GPU memory) back once the run is over.

    The trainer and model hold reference cycles, so their tensors are freed only by a full collection.
    With the imports frozen (:mod:`desktop.core.system.heap`) it walks the objects made since, and costs
    about what freeing the run's objects costs (14-21 ms for MiniLM, measured), here, rather than at
    the next run's start (accelerate collects there). Without them frozen it would walk half a million
    objects (0.2-0.3 s): on a CPU the next automatic collection frees them then.
    """
    import sys

    torch = sys.modules.get("torch")
    gpu = torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized()
    if gpu or training_stack_frozen():
        collect()
    if gpu:
        torch.cuda.empty_cache()
