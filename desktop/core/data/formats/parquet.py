"""Parquet files: decompressed once, a row group at a time, into the table cache."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from desktop.core.data.formats.parsing import Read, arrow_to_pandas, collected, read_cached
from desktop.core.system.errors import DataError
from desktop.core.system.messages import msg


def read_parquet(path: Path) -> Read:
    """A Parquet file decompressed once, a row group at a time, into the cache (see
    :func:`parsing.read_cached`), and read from there memory-mapped; text columns stay Arrow's."""
    table = read_cached(path, "parquet", lambda cache_name: _parse_parquet(path, cache_name))
    if table is not None:
        return arrow_to_pandas(table), None, "row", 1, None
    import pandas as pd

    try:  # what Arrow refused, read whole by pandas, which says why it cannot be read
        return pd.read_parquet(path), None, "row", 1, None
    except Exception as exc:
        raise DataError(
            msg("{file} is not a readable Parquet file ({error}).", file=path.name, error=exc),
            msg("Export it again."),
        ) from None


def _parse_parquet(path: Path, cache_name: str | None) -> Any:
    """The rows of a Parquet file as an Arrow table, a row group at a time (progress and stop as
    :func:`delimited._parse_delimited`); text columns as ``large_string`` (pandas takes them without a
    copy)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from desktop.core.system import progress

    with pq.ParquetFile(path) as source:
        if source.metadata.num_rows == 0:
            return None
        schema = pa.schema(
            [
                field.with_type(pa.large_string()) if pa.types.is_string(field.type) else field
                for field in source.schema_arrow
            ],
            metadata=source.schema_arrow.metadata,  # pandas' own: an index it saved is one again
        )
        total = max(1, source.metadata.num_rows)

        def batches() -> Any:
            done = 0
            for batch in source.iter_batches(batch_size=1 << 16):
                done += batch.num_rows
                yield batch.cast(schema)
                progress.report(done / total, msg("Reading {file}", file=path.name))

        return collected(batches(), schema, cache_name)
