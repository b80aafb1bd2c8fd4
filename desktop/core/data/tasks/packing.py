"""Padding-free batches for causal-LM runs: a batch's examples one after another in one row.

A padded batch of chat examples from 8 to 500 tokens long spends most of its compute on padding.
Transformers' ``DataCollatorWithFlattening`` puts the examples of a batch end to end in a single row,
with position ids that restart at 0 for each; the model's attention masks (SDPA, eager, FlashAttention
varlen) read the restarts as sequence boundaries, so no example attends to another. The first label of
each example is set to -100, which a padded batch never learns either (the shift drops it): the loss is
the same.

Not every architecture reads boundaries from position ids (those that build their masks themselves and
ignore them would let each example see the one before): :func:`keeps_examples_apart` tries the loaded
model on two short sequences before training, and the run pads when it does not.
"""

from __future__ import annotations

from typing import Any

IGNORE = -100
CHECK_TOKENS = 12
"""Tokens in each of the two sequences of :func:`keeps_examples_apart`: enough for attention to matter,
a moment even on a CPU for a 7B model."""


class PaddingFreeCollator:
    """Transformers' flattening collator (input ids, labels with -100 at each example's start, position
    ids), and ``use_cache=False`` in every batch: with a cache, which a causal LM makes by default even in
    training, transformers reads no sequence boundaries from the position ids, and each example would
    attend to the ones before it in the row."""

    def __init__(self) -> None:
        from transformers import DataCollatorWithFlattening

        self.flatten = DataCollatorWithFlattening(return_position_ids=True, separator_id=IGNORE)

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, Any]:
        batch = self.flatten(features)
        batch["use_cache"] = False
        return batch


def keeps_examples_apart(model: Any) -> bool:
    """Whether ``model`` keeps two examples in one padding-free row apart: the logits of a second sequence
    are the same after a first one in the same row as alone. A model that lets the second see the first
    (it ignores position ids when it builds its attention mask) fails this check."""
    import torch

    vocab = int(model.get_input_embeddings().num_embeddings)
    if vocab < 2:
        return False
    parameter = next(model.parameters())
    generator = torch.Generator().manual_seed(0)
    first = torch.randint(1, vocab, (CHECK_TOKENS,), generator=generator)
    second = torch.randint(1, vocab, (CHECK_TOKENS,), generator=generator)
    positions = torch.arange(CHECK_TOKENS)
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            alone = model(
                input_ids=second[None].to(parameter.device),
                position_ids=positions[None].to(parameter.device),
                use_cache=False,
            ).logits[0]
            row = model(
                input_ids=torch.cat([first, second])[None].to(parameter.device),
                position_ids=torch.cat([positions, positions])[None].to(parameter.device),
                use_cache=False,  # with a cache, transformers reads no sequence boundaries from positions
            ).logits[0, CHECK_TOKENS:]
    except Exception:  # an architecture that refuses position ids, or one row of this length
        return False
    finally:
        model.train(was_training)
    alone, row = alone.float(), row.float()
    scale = float(alone.abs().max()) or 1.0
    tolerance = 1e-3 if parameter.dtype == torch.float32 else 3e-2  # half precision rounds differently
    return float((alone - row).abs().max()) <= tolerance * scale


def padding_share(lengths: list[int], batch_size: int) -> float:
    """The share of a padded batch's tokens that are padding, for batches of ``batch_size`` in this order."""
    if not lengths or batch_size < 1:
        return 0.0
    slots = sum(
        max(lengths[i : i + batch_size]) * len(lengths[i : i + batch_size])
        for i in range(0, len(lengths), batch_size)
    )
    return 1 - sum(lengths) / slots if slots else 0.0
