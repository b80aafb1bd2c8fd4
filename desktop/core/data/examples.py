"""Tokenized examples kept in Arrow: what the Trainer reads, 4 bytes a token.

A list of ``{"input_ids": [...], "attention_mask": [...], "labels": ...}`` dicts costs a Python object
per token (a million rows of 30 tokens: several GB). :class:`Examples` holds the same rows as Arrow
columns, memory-mapped from the tokenized cache (:mod:`arrow_cache`) when there is one, and hands the
Trainer, the collator and the data loader's workers one example at a time as the same dict of lists.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def to_batch(rows: list[dict[str, Any]]) -> Any:
    """Examples (dicts of token lists and numbers) as an Arrow record batch, or ``None`` for none.

    Lists of token ids become ``large_list<int32>``, single numbers ``int64``.
    """
    import numpy as np
    import pyarrow as pa

    if not rows:
        return None
    arrays, names = [], list(rows[0])
    for name in names:
        values = [row[name] for row in rows]
        if isinstance(values[0], list | tuple):
            lengths = np.fromiter((len(v) for v in values), dtype=np.int64, count=len(values))
            offsets = np.zeros(len(values) + 1, dtype=np.int64)
            np.cumsum(lengths, out=offsets[1:])
            flat = np.fromiter((t for v in values for t in v), dtype=np.int32, count=int(offsets[-1]))
            arrays.append(pa.LargeListArray.from_arrays(pa.array(offsets), pa.array(flat)))
        else:
            arrays.append(pa.array(np.asarray(values, dtype=np.int64)))
    return pa.RecordBatch.from_arrays(arrays, names=names)


class Examples(Sequence):
    """Tokenized examples in an Arrow table, read as a list of dicts.

    Args:
        table: Columns of ``large_list<int32>`` (token lists) or ``int64`` (a label per example).
        path: The cache file the table is mapped from: a data loader worker (a new process on
            Windows) maps it again instead of receiving a copy.
    """

    def __init__(self, table: Any, path: str | None = None) -> None:
        import numpy as np

        self.table, self.path = table, path
        self._starts = np.cumsum([0] + [batch.num_rows for batch in table.to_batches()])
        self._batches = [self._columns(batch) for batch in table.to_batches()]

    @staticmethod
    def _columns(batch: Any) -> dict[str, tuple[Any, Any]]:
        """Each column of a batch as numpy views (no copy): (values, offsets) or (numbers, None)."""
        import pyarrow as pa

        out = {}
        for name, column in zip(batch.schema.names, batch.columns, strict=True):
            if pa.types.is_large_list(column.type) or pa.types.is_list(column.type):
                out[name] = (
                    column.values.to_numpy(zero_copy_only=False),
                    column.offsets.to_numpy(zero_copy_only=False),
                )
            else:
                out[name] = (column.to_numpy(zero_copy_only=False), None)
        return out

    @classmethod
    def from_batches(cls, batches: list[Any]) -> Examples:
        """Examples held in memory (no cache)."""
        import pyarrow as pa

        batches = [b for b in batches if b is not None]
        return cls(pa.Table.from_batches(batches) if batches else pa.table({}))

    def __len__(self) -> int:
        return int(self._starts[-1])

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        import numpy as np

        which = int(np.searchsorted(self._starts, index, side="right")) - 1
        row = index - int(self._starts[which])
        example = {}
        for name, (values, offsets) in self._batches[which].items():
            if offsets is None:
                example[name] = int(values[row])
            else:
                example[name] = values[offsets[row] : offsets[row + 1]].tolist()
        return example

    def lengths(self) -> Any:
        """Tokens of each example, input and label lists together (numpy), without reading them."""
        import numpy as np

        parts = []
        for which, columns in enumerate(self._batches):
            total = np.zeros(int(self._starts[which + 1] - self._starts[which]), dtype=np.int64)
            for name in ("input_ids", "labels"):
                offsets = columns.get(name, (None, None))[1]
                if offsets is not None:
                    total += np.diff(offsets)
            parts.append(total)
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    def __reduce__(self) -> tuple[Any, ...]:
        if self.path is not None:
            return (_mapped, (self.path,))
        return (Examples, (self.table,))


def _mapped(path: str) -> Examples:
    """Examples from a cache file, mapped again (in a data loader worker)."""
    import pyarrow as pa

    return Examples(pa.ipc.open_file(pa.memory_map(path)).read_all(), path)
