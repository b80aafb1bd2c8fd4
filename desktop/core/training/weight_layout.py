"""Checkpoints the Trainer can read back: written in the model's own layout of weight names.

Since Transformers 5, ``save_pretrained`` writes a model's weights under the names of its original
checkpoints (``save_original_format``, on by default: ViT's ``vit.layers.0.attention.q_proj`` is written
``vit.encoder.layer.0.attention.attention.query``, a mixture-of-experts model's fused experts one by one),
and ``from_pretrained`` renames them back. The Trainer's resume and its load of the best checkpoint read
a checkpoint with ``load_state_dict`` instead, which renames nothing: every renamed weight is "missing",
and the run goes on from random weights (transformers#43701, #48805; a fix is not released as of 5.25).

So a checkpoint (``checkpoint-N``) is written in the model's own layout, which both ``load_state_dict``
and ``from_pretrained`` read; the run's final model and every export keep the original names that other
tools expect.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

CHECKPOINT_PREFIX = "checkpoint-"


def checkpoints_in_own_layout(model: Any) -> None:
    """Make ``model.save_pretrained`` write ``checkpoint-N`` folders in the model's own layout."""
    save = getattr(model, "save_pretrained", None)
    if save is None or getattr(save, "studio_own_layout", False):
        return
    try:
        takes = "save_original_format" in inspect.signature(save).parameters
    except (TypeError, ValueError):
        return
    if not takes:  # a release before the renaming: nothing to do
        return
    import weakref

    # The class's method on a weak reference: the model holding a closure over its own bound method
    # would be a reference cycle, and a run's model is let go by reference counting, not a collection.
    unbound, owner = type(model).save_pretrained, weakref.ref(model)

    def saving(save_directory: Any, *args: Any, **kwargs: Any) -> Any:
        if Path(save_directory).name.startswith(CHECKPOINT_PREFIX):
            kwargs.setdefault("save_original_format", False)
        return unbound(owner(), save_directory, *args, **kwargs)

    saving.studio_own_layout = True  # type: ignore[attr-defined]
    model.save_pretrained = saving
