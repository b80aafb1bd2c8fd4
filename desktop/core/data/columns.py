"""Column mapping: guess which column plays which role, and check the rows it selects."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from desktop.core.data.tables import Table, is_blank
from desktop.core.settings.config import Columns
from desktop.core.system.errors import DataError
from desktop.core.system.messages import msg

# Names that say what a column holds, English and Chinese; compared after lower-casing and
# removing spaces, dashes and underscores.
ROLE_NAMES: dict[str, tuple[str, ...]] = {
    "text": (
        "text",
        "sentence",
        "sentence1",
        "content",
        "review",
        "comment",
        "document",
        "body",
        "tweet",
        "utterance",
        "query",
        "文本",
        "内容",
        "句子",
        "评论",
        "正文",
        "评价",
    ),
    "text_pair": ("textpair", "text2", "sentence2", "hypothesis", "question2", "文本2", "句子2"),
    "label": (
        "label",
        "labels",
        "class",
        "category",
        "sentiment",
        "intent",
        "tag",
        "target",
        "y",
        "标签",
        "类别",
        "分类",
        "情感",
        "类型",
        "意图",
    ),
    "instruction": ("instruction", "instruct", "指令", "任务"),
    "input": ("input", "context", "输入", "上下文"),
    "output": ("output", "response", "answer", "输出", "回答", "答案", "回复"),
    "messages": ("messages", "conversations", "conversation", "dialog", "dialogue", "chat", "对话"),
    "prompt": ("prompt", "question", "问题", "提示"),
    "completion": ("completion", "response", "answer", "chosen", "回答", "答案"),
    "source": ("source", "src", "input", "document", "article", "question", "原文", "源文", "输入", "问题"),
    "target": (
        "target",
        "tgt",
        "output",
        "summary",
        "translation",
        "answer",
        "译文",
        "目标",
        "摘要",
        "输出",
        "答案",
    ),
}

CAUSAL_FORMATS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # format: (required roles, optional roles)
    "chat": (("messages",), ()),
    "instruction": (("instruction", "output"), ("input",)),
    "prompt": (("prompt", "completion"), ()),
    "text": (("text",), ()),
}
TASK_ROLES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "classification": (("text", "label"), ("text_pair",)),
    "seq2seq": (("source", "target"), ()),
}


@dataclass(frozen=True)
class Guess:
    """A column mapping with how each role was found (``"name"``, ``"content"`` or ``"config"``)."""

    columns: Columns
    found_by: dict[str, str]


def _norm(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name.lower())


def causal_format(columns: Columns) -> str | None:
    """The causal-LM data format the mapping selects, or ``None`` when no format is complete."""
    for fmt, (required, _) in CAUSAL_FORMATS.items():
        if all(getattr(columns, r) for r in required):
            return fmt
    return None


def roles_for(task: str, columns: Columns) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The (required, optional) roles of a task; for causal-LM, of the mapping's format."""
    if task == "causal-lm":
        return CAUSAL_FORMATS[causal_format(columns) or "text"]
    return TASK_ROLES[task]


def guess_columns(table: Table, task: str, given: Columns | None = None) -> Guess:
    """Fill the roles the task needs: keep the config's choices, then match names, then content.

    Args:
        table: The data.
        task: ``classification``, ``causal-lm`` or ``seq2seq``.
        given: Roles already set (they win).
    """
    given = given or Columns()
    mapped = given.mapped()
    found_by = {role: "config" for role in mapped}
    if task == "causal-lm":
        options = [f for f, (req, _) in CAUSAL_FORMATS.items() if any(r in mapped for r in req)]
        options = options or list(CAUSAL_FORMATS)
    else:
        options = [task]
    # Names first for every format, so content never overrules a format the names spell out.
    for use_content in (False, True):
        for option in options:
            required, optional = CAUSAL_FORMATS[option] if task == "causal-lm" else TASK_ROLES[option]
            trial, trial_found = dict(mapped), dict(found_by)
            _by_name(table, required + optional, trial, trial_found)
            if use_content:
                _by_content(table, option, trial, trial_found)
            if all(r in trial for r in required):
                return Guess(Columns(**trial), trial_found)
    return Guess(Columns(**mapped), found_by)


def _by_name(table: Table, roles: tuple[str, ...], mapped: dict[str, str], found_by: dict[str, str]) -> None:
    for role in roles:
        if role in mapped:
            continue
        taken = set(mapped.values())
        for column in table.columns:
            if column not in taken and _norm(column) in ROLE_NAMES[role]:
                mapped[role], found_by[role] = column, "name"
                break


def _by_content(table: Table, option: str, mapped: dict[str, str], found_by: dict[str, str]) -> None:
    free = [c for c in table.columns if c not in mapped.values()]
    sample = table.head(500).frame

    def assign(role: str, column: str | None) -> None:
        if column is not None and role not in mapped:
            mapped[role], found_by[role] = column, "content"
            free.remove(column)

    if option == "chat":
        assign("messages", next((c for c in free if _looks_like_chat(sample[c])), None))
        return
    texts = sorted(
        (c for c in free if _mean_text_length(sample[c]) > 0), key=lambda c: -_mean_text_length(sample[c])
    )
    if option == "classification":
        if "label" not in mapped:
            labels = [c for c in free if _looks_like_labels(sample[c])]
            assign("label", min(labels, key=lambda c: sample[c].nunique(), default=None))
            texts = [c for c in texts if c in free]
        assign("text", texts[0] if texts else None)
    elif option == "text":
        assign("text", texts[0] if texts else None)
    elif option in ("seq2seq", "prompt", "instruction"):
        first, second = {
            "seq2seq": ("source", "target"),
            "prompt": ("prompt", "completion"),
            "instruction": ("instruction", "output"),
        }[option]
        in_order = [c for c in free if c in texts]
        if first not in mapped and second not in mapped and len(in_order) >= 2:
            assign(first, in_order[0])
            assign(second, in_order[1])


def _strings(series: Any) -> list[str]:
    return [v for v in series if isinstance(v, str) and v.strip()]


def _mean_text_length(series: Any) -> float:
    values = _strings(series)
    if len(values) < max(1, len(series) // 2):
        return 0.0
    return sum(len(v) for v in values) / len(values)


def _looks_like_labels(series: Any) -> bool:
    values = [v for v in series if not is_blank(v)]
    if len(values) < 2 or isinstance(values[0], (list, dict)):
        return False
    unique = {str(v) for v in values}
    short = sum(len(str(v)) for v in values) / len(values) <= 24
    return 2 <= len(unique) <= max(2, min(100, len(values) // 2)) and short


def _looks_like_chat(series: Any) -> bool:
    values = [v for v in series if not is_blank(v)][:20]
    return bool(values) and all(parse_messages(v) is not None for v in values)


def parse_messages(value: Any) -> list[dict[str, str]] | None:
    """A chat conversation as a list of ``{"role", "content"}``, or ``None`` if it is not one.

    Cells from CSV files may hold the list as JSON text.
    """
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return None
    if hasattr(value, "tolist"):
        value = value.tolist()
    if not isinstance(value, list) or not value:
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


# --------------------------------------------------------------------------- checking rows


_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def unique_values(values: Any) -> list[Any]:
    """The distinct values of a column (a label column holds few, whatever its length)."""
    return list(values.unique())


def label_key(value: Any) -> str:
    """A label as one class: ``1``, ``1.0``, ``" 1"`` and ``"1.0"`` are all ``"1"``; text is trimmed."""
    if isinstance(value, str):
        text = value.strip()
        if not _NUMBER.match(text):
            return text
        value = float(text)
    if isinstance(value, float) and math.isfinite(value):
        return str(int(value)) if value.is_integer() else repr(value)
    return str(value).strip()


def check_rows(
    table: Table, task: str, columns: Columns, drop_bad_rows: bool = False, training: bool = True
) -> tuple[Table, list[str]]:
    """Check the mapped columns of every row; return the usable rows and notes on dropped ones.

    ``training`` is false for evaluation rows, which may hold a single class.

    Raises:
        DataError: A mapped column is missing, a required role is unmapped, texts are blank or
            labels missing (unless ``drop_bad_rows``), or a classification has one class only.
    """
    required, optional = roles_for(task, columns)
    unmapped = [r for r in required if not getattr(columns, r)]
    if unmapped:
        raise DataError(
            msg(
                "{source}: no column was found for {roles} (columns: {columns}).",
                source=table.source,
                roles=", ".join(unmapped),
                columns=", ".join(table.columns),
            ),
            msg(
                'Map the columns yourself, e.g. columns.{role} = "<column name>" in the config.',
                role=unmapped[0],
            ),
        )
    for role in required + optional:
        column = getattr(columns, role)
        if column and column not in table.columns:
            raise DataError(
                msg(
                    '{source}: the column "{column}" (mapped as {role}) is not in the data.',
                    source=table.source,
                    column=column,
                    role=role,
                ),
                msg(
                    "Its columns are: {columns}. Pick one of them for columns.{role}.",
                    columns=", ".join(table.columns),
                    role=role,
                ),
            )
    bad: set[int] = set()
    for role in required:
        column = getattr(columns, role)
        if role == "messages":
            rows = _unusable_chats(table.column(column))
        else:
            rows = table.blank(column).nonzero()[0].tolist()
        if len(rows) == len(table):
            raise DataError(
                msg(
                    '{source}: the column "{column}" ({role}) is empty in every row.',
                    source=table.source,
                    column=column,
                    role=role,
                ),
                msg("Map {role} to the column that holds the labels.", role=role)
                if role == "label"
                else msg("Map {role} to the column that holds the texts.", role=role),
            )
        if rows and not drop_bad_rows:
            raise DataError(
                _bad_rows(role, len(rows), table.source, column, table.locate_many(rows)),
                msg(
                    "Give those rows {fix}, or set data.drop_bad_rows = true to leave them out.",
                    fix=_fix(role),
                ),
            )
        bad.update(rows)
    notes = []
    if bad:
        notes.append(
            msg(
                "Left out {bad} of {total} rows of {source} ({rows}).",
                bad=len(bad),
                total=len(table),
                source=table.source,
                rows=table.locate_many(sorted(bad)),
            )
        )
        import numpy as np

        usable = np.ones(len(table), dtype=bool)
        usable[list(bad)] = False
        table = table.take(np.flatnonzero(usable))
    if task == "classification" and training:
        classes = {label_key(v) for v in unique_values(table.column(columns.label))}
        if len(classes) < 2:
            raise DataError(
                msg(
                    '{source}: every row has the label "{label}"; a classifier needs at least two classes.',
                    source=table.source,
                    label=next(iter(classes)),
                ),
                msg("Add examples of the other classes, or check that columns.label is the right column."),
            )
    return table, notes


def _bad_rows(role: str, count: int, source: str, column: str, rows: str) -> str:
    """What is wrong with some rows: one whole sentence per problem, singular and plural."""
    values = {"source": source, "count": count, "column": column, "rows": rows}
    if role == "messages":
        if count == 1:
            return msg(
                "{source}: 1 row has no chat conversation with an assistant reply "
                'in column "{column}" ({rows}).',
                **values,
            )
        return msg(
            "{source}: {count} rows have no chat conversation with an assistant reply "
            'in column "{column}" ({rows}).',
            **values,
        )
    if role == "label":
        if count == 1:
            return msg('{source}: 1 row has no label in column "{column}" ({rows}).', **values)
        return msg('{source}: {count} rows have no label in column "{column}" ({rows}).', **values)
    if count == 1:
        return msg('{source}: 1 row has an empty text in column "{column}" ({rows}).', **values)
    return msg('{source}: {count} rows have an empty text in column "{column}" ({rows}).', **values)


def _fix(role: str) -> str:
    if role == "messages":
        return msg('lists of messages with "role" and "content"')
    return msg("a label") if role == "label" else msg("text")


def _unusable_chats(values: Any, chunk: int = 10_000) -> list[int]:
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
    """:func:`_unusable_chats`, each cell made a Python object, ``chunk`` of them at a time."""
    return [
        start + i
        for start in range(0, len(values), chunk)
        for i, value in enumerate(values.iloc[start : start + chunk].tolist())
        if not _usable_chat(value)
    ]


def _unusable_arrow_chats(values: Any) -> list[int] | None:
    """:func:`_unusable_chats` of a chat column kept in Arrow (a JSON or JSONL file's), without a Python
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
    """:func:`_unusable_chats` of a column of text (a CSV file's chats, as JSON text), parsed by Arrow's
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


def describe(guess: Guess) -> list[str]:
    """Lines like ``text  <- review  (by name)`` for previews."""
    how = {"name": msg("by name"), "content": msg("by content"), "config": msg("from the config")}
    return [
        msg(
            "{role} <- {column}  ({how})",
            role=f"{role:<12}",
            column=column,
            how=how.get(guess.found_by.get(role, ""), "?"),
        )
        for role, column in dataclasses.asdict(guess.columns).items()
        if column
    ]


def label_counts(values: Any) -> dict[str, int]:
    """Rows per label, labels written as the model names them (of a list, or of a pandas Series:
    counted by pandas, without a Python object per row)."""
    from collections import Counter

    if not hasattr(values, "value_counts"):
        return dict(Counter(label_key(v) for v in values))
    counts: Counter[str] = Counter()
    for value, count in values.value_counts(dropna=False, sort=False).items():
        counts[label_key(value)] += int(count)
    return dict(counts)
