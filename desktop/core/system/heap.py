"""The objects that heavy imports make, kept out of the cycle collector's reach for good.

Once PyTorch and Transformers are imported, the heap holds about half a million objects (their
modules, classes and functions) that live as long as the process. A full collection walks them all
and holds Python's lock meanwhile, 0.2-0.3 s (measured on two cores: 226-274 ms), and every other
thread waits, the window's too. Full collections happen at a run's start (accelerate's), after a
run on a GPU (the run's tensors are freed by one, see :func:`release_memory`),
and in the window's process whenever the user is idle (:mod:`desktop.gui.app_support.collector`).

:func:`freeze_imports` moves every object alive out of the collector's reach (``gc.freeze``); it is
called just after the training stack is imported, before a run makes anything of its own, and the
heap is never unfrozen: what was alive then stays where it is, and a later full collection walks only
what came after (the run's model and trainer: about 15 thousand objects, 2 ms, in the responsiveness
bench). Objects frozen there are still freed when nothing refers to them any more; only those in a
reference cycle would stay, which is why nothing is frozen while a run's model exists.
"""

from __future__ import annotations

import gc

from desktop.core.system.lazy import imported

TRAINING_STACK = ("torch", "transformers.trainer")
"""The modules that show the training stack imported (:func:`desktop.core.system.lazy.import_training_stack`):
``transformers`` alone is a lazy shell, and the Trainer's modules are 40% of the stack's objects (a
heap frozen before them left 197 thousand objects to each of a run's collections: 117-232 ms)."""

_training_stack_frozen = False


def freeze_imports() -> None:
    """Freeze every object alive now (call it just after a heavy import), young garbage collected
    first; notes whether the training stack was among them."""
    global _training_stack_frozen
    gc.collect(0)
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
        gc.collect()
    if gpu:
        torch.cuda.empty_cache()
