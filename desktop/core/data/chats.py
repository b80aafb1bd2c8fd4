"""Chat columns: a conversation as messages, and which rows hold no usable chat (in Arrow's kernels)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any


def message_list(value: Any) -> list[Any] | None:
    """A cell's conversation as a non-empty Python list (its messages not yet checked), or ``None``.

    Cells from CSV files may hold the list as JSON text; Arrow's lists come as NumPy arrays.
    """
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return None
    if hasattr(value, "tolist"):
        value = value.tolist()
    return value if isinstance(value, list) and value else None


def parse_messages(value: Any) -> list[dict[str, str]] | None:
    """A chat conversation as a list of ``{"role", "content"}``, or ``None`` if it is not one."""
    value = message_list(value)
    if value is None:
        return None
    out = []
    for m in value:
        if (
            not isinstance(m, dict)
            or not isinstance(m.get("role"), str)
            or not isinstance(m.get("content"), str)
        ):
            return None
        out.append({"role": m["role"], "content": m["content"]})
    return out


def unusable_chats(values: Any, chunk: int = 10_000) -> list[int]:
    """The positions of the cells that hold no usable chat (see :func:`_usable_chat`): in Arrow's
    kernels for a column kept in Arrow as lists of ``{role, content}`` texts or holding them as JSON
    text (a CSV file's), else ``chunk`` conversations made Python objects at a time (all of them at
    once took as much memory as reading the file as Python objects)."""
    fast = _unusable_arrow_chats(values)
    if fast is None:
        fast = _unusable_json_chats(values, python_chunk=chunk)
    if fast is not None:
        return fast
    return _unusable_python_chats(values, chunk)


def _unusable_python_chats(values: Any, chunk: int = 10_000) -> list[int]:
    """:func:`unusable_chats`, each cell made a Python object, ``chunk`` of them at a time."""
    return [
        start + i
        for start in range(0, len(values), chunk)
        for i, value in enumerate(values.iloc[start : start + chunk].tolist())
        if not _usable_chat(value)
    ]


def _unusable_arrow_chats(values: Any) -> list[int] | None:
    """:func:`unusable_chats` of a chat column kept in Arrow (a JSON or JSONL file's), without a Python
    object per message (300,000 chats: 0.01 s instead of 4 s); ``None`` for any other column."""
    import pandas as pd

    if not isinstance(values.dtype, pd.ArrowDtype) or not _is_chat_type(values.dtype.pyarrow_dtype):
        return None
    import numpy as np

    bad, start = [], 0
    for part in values.array.__arrow_array__().chunks:
        bad.append(_bad_chats_in(part) + start)
        start += len(part)
    return np.concatenate(bad).tolist() if bad else []


def _is_chat_type(kind: Any) -> bool:
    """Whether Arrow type ``kind`` is a list of structs with ``role`` and ``content`` texts."""
    import pyarrow as pa

    if not (pa.types.is_list(kind) or pa.types.is_large_list(kind)):
        return False
    if not pa.types.is_struct(kind.value_type):
        return False
    fields = {field.name: field.type for field in kind.value_type}
    return all(name in fields and pa.types.is_string(fields[name]) for name in ("role", "content"))


def _bad_chats_in(part: Any) -> Any:
    """The positions (NumPy) of the cells of Arrow chat array ``part`` (:func:`_is_chat_type`) that hold
    no usable chat: none, no message, a message without its role or text, or no assistant reply."""
    import numpy as np
    import pyarrow.compute as pc

    count = len(part)
    messages = pc.list_flatten(part)  # every message of the non-null chats, in order
    parents = pc.list_parent_indices(part).to_numpy()
    role = pc.struct_field(messages, "role")
    broken = pc.or_(pc.is_null(role), pc.is_null(pc.struct_field(messages, "content")))
    broken = pc.or_(broken, pc.is_null(messages)).to_numpy(zero_copy_only=False)
    reply = pc.equal(role, "assistant").fill_null(False).to_numpy(zero_copy_only=False)
    has_reply = np.zeros(count, dtype=bool)
    has_reply[parents[reply]] = True
    has_broken = np.zeros(count, dtype=bool)
    has_broken[parents[broken]] = True
    empty = pc.list_value_length(part).fill_null(0).to_numpy(zero_copy_only=False) == 0
    return np.flatnonzero(empty | ~has_reply | has_broken)


JSON_BYTES = 8 << 20
"""At most this much JSON text of a chat column parsed by Arrow at a time (:func:`_unusable_json_chats`)."""


def _unusable_json_chats(values: Any, python_chunk: int = 10_000) -> list[int] | None:
    """:func:`unusable_chats` of a column of text (a CSV file's chats, as JSON text), parsed by Arrow's
    JSON reader :data:`JSON_BYTES` of text at a time (300,000 chats: 0.3 s instead of 1.4 s);
    ``None`` for a column that is not text.

    Each cell becomes one line ``{"m": <cell>}`` read with a schema that wants a list of ``role`` and
    ``content`` texts: the reader keeps what Python would keep and refuses what Python would refuse
    (a number for a text, an object for the list, a key twice, anything after the list), and a piece
    it refuses, or that does not come back one row per cell, is checked by Python instead.
    """
    import pandas as pd
    import pyarrow as pa

    dtype = values.dtype
    if isinstance(dtype, pd.ArrowDtype) or (isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow"):
        data = values.array.__arrow_array__()  # the column's own Arrow memory
        chunks = data.chunks if isinstance(data, pa.ChunkedArray) else [data]
        if not all(pa.types.is_string(c.type) or pa.types.is_large_string(c.type) for c in chunks):
            return None
    elif pd.api.types.is_object_dtype(dtype) or isinstance(dtype, pd.StringDtype):
        # A piece at a time: the whole column as Arrow text at once would be a second copy of it.
        chunks = _arrow_text_pieces(values, python_chunk)
    else:
        return None
    bad: list[int] = []
    start = 0
    for chunk in chunks:
        if chunk is None:  # a piece of a Python column that is not all text (lists, numbers)
            chunk_len = min(python_chunk, len(values) - start)
            bad.extend(start + i for i in _unusable_python_chats(values.iloc[start : start + chunk_len]))
            start += chunk_len
            continue
        for piece in _by_size(chunk, JSON_BYTES):
            found = _bad_json_chats_in(piece)
            if found is None:
                found = _unusable_python_chats(values.iloc[start : start + len(piece)], python_chunk)
            bad.extend(start + i for i in found)
            start += len(piece)
    return bad


def _arrow_text_pieces(values: Any, step: int) -> Iterator[Any]:
    """The cells of Python column ``values`` as Arrow text, ``step`` at a time; ``None`` for a piece
    that is not all text."""
    import pyarrow as pa

    for start in range(0, len(values), step):
        try:
            yield pa.array(values.iloc[start : start + step], type=pa.large_string(), from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            yield None


def _by_size(array: Any, limit: int) -> Iterator[Any]:
    """Slices of Arrow text ``array`` in order, each of at most ``limit`` bytes of text (or one cell)."""
    import numpy as np
    import pyarrow.compute as pc

    sizes = pc.binary_length(array).fill_null(0).to_numpy(zero_copy_only=False)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    begin = 0
    while begin < len(array):
        end = int(np.searchsorted(offsets, offsets[begin] + limit, side="right")) - 1
        end = max(begin + 1, min(end, len(array)))
        yield array.slice(begin, end - begin)
        begin = end


def _bad_json_chats_in(part: Any) -> list[int] | None:
    """The positions of the cells of Arrow text array ``part`` that hold no usable chat as JSON text, or
    ``None`` where Arrow's JSON reader cannot tell (see :func:`_unusable_json_chats`)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj

    message = pa.struct([("role", pa.string()), ("content", pa.string())])
    schema = pa.schema([("m", pa.list_(message))])

    def text(value: str) -> Any:
        return pa.scalar(value, pa.large_string())

    cells = pc.fill_null(part.cast(pa.large_string()), text("null"))
    cells = pc.if_else(pc.equal(pc.utf8_trim_whitespace(cells), ""), text("null"), cells)  # no JSON, no chat
    lines = pc.binary_join_element_wise(text('{"m":'), cells, text("}\n"), text(""))
    _, offsets, data = lines.buffers()
    ends = np.frombuffer(offsets, dtype=np.int64, count=len(lines) + 1, offset=lines.offset * 8)
    joined = data[int(ends[0]) : int(ends[-1])]  # every line, one after the other
    options = pj.ParseOptions(
        explicit_schema=schema, newlines_in_values=True, unexpected_field_behavior="ignore"
    )
    try:
        table = pj.read_json(
            pa.BufferReader(joined),
            read_options=pj.ReadOptions(use_threads=False, block_size=max(1 << 20, len(joined) + 1)),
            parse_options=options,
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # a cell that is not such JSON: Python says which
        return None
    if table.num_rows != len(part):
        return None
    chats = table.column("m").combine_chunks()
    return _bad_chats_in(chats).tolist()


def _usable_chat(value: Any) -> bool:
    messages = parse_messages(value)
    return messages is not None and any(m["role"] == "assistant" for m in messages)
