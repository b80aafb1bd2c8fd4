"""Padding-free batches for causal-LM runs: a batch's examples one after another in one row.

A padded batch of chat examples from 8 to 500 tokens long spends most of its compute on padding.
:class:`PaddingFreeCollator` puts the examples of a batch end to end, with position ids that restart at
0 for each; the model's attention masks (SDPA, eager, FlashAttention varlen) read the restarts as
sequence boundaries, so no example attends to another. The first label of each example is set to -100,
which a padded batch never learns either (the shift drops it): the loss is the same.

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
    """A batch's examples end to end in as few rows as ``capacity`` tokens a row allows, filled evenly,
    with position ids restarting at each example and -100 as each example's first label; the rows are
    padded to the longest, the padding a separate sequence of its own (its positions restart too) that no
    example sees. Every batch carries ``use_cache=False``: with a cache, which a causal LM makes by
    default even in training, transformers reads no sequence boundaries from the position ids, and each
    example would attend to the ones before it.

    Why not transformers' ``DataCollatorWithFlattening``, which puts the whole batch in a single row: with
    SDPA or eager attention (every CPU, and GPUs without FlashAttention) the row's mask makes attention cost
    grow with the square of the batch's total tokens, not of each example's; for a small model on a CPU
    that cost more than the padding saved. Rows about the run's max length keep attention as cheap as in
    a padded batch, and the padding left is a few tokens per row.

    Args:
        pad_token_id: What fills the end of the shorter rows.
        capacity: About the most tokens in a row (the run's max length): a row can end a little beyond it
            when the examples do not split evenly.
    """

    def __init__(self, pad_token_id: int, capacity: int) -> None:
        self.pad_token_id, self.capacity = int(pad_token_id), int(capacity)
        self.last_counts: tuple[int, int, int] | None = None
        """The last batch's real tokens, its token slots (real and padding), and the slots the same
        examples padded to the longest would have taken: for the Train page's figures."""

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, Any]:
        import torch

        features = [f for f in features if len(f["input_ids"])]
        total = sum(len(f["input_ids"]) for f in features)
        # As few rows as the capacity allows, filled evenly (the longest example first, each to the row
        # with the fewest tokens so far): the rows end within a few tokens of each other.
        rows: list[list[dict[str, Any]]] = [[] for _ in range(max(1, -(-total // self.capacity)))]
        filled = [0] * len(rows)
        for feature in sorted(features, key=lambda f: -len(f["input_ids"])):
            row = filled.index(min(filled))
            rows[row].append(feature)
            filled[row] += len(feature["input_ids"])
        rows = [row for row in rows if row]
        width = max(sum(len(f["input_ids"]) for f in row) for row in rows)
        ids, labels, positions = [], [], []
        for row in rows:
            row_ids, row_labels, row_positions = [], [], []
            for feature in row:
                tokens = list(feature["input_ids"])
                learned = list(feature.get("labels", tokens))
                row_ids += tokens
                row_labels += [IGNORE, *learned[1:]]
                row_positions += range(len(tokens))
            fill = width - len(row_ids)
            ids.append(row_ids + [self.pad_token_id] * fill)
            labels.append(row_labels + [IGNORE] * fill)
            positions.append(row_positions + list(range(fill)))
        longest = max((len(f["input_ids"]) for f in features), default=0)
        self.last_counts = (total, len(rows) * width, len(features) * longest)
        return {
            "input_ids": torch.tensor(ids, dtype=torch.long),
            "labels": torch.tensor(labels, dtype=torch.long),
            "position_ids": torch.tensor(positions, dtype=torch.long),
            "use_cache": False,
        }


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
