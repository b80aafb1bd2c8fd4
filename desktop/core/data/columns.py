"""Column mapping: guess which column plays which role, and check the rows it selects."""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from typing import Any

from desktop.core.data.chats import parse_messages, unusable_chats
from desktop.core.data.tables import Table, is_blank
from desktop.core.settings.config import Columns
from desktop.core.settings.config_sections import IMAGE_TASKS
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
    "chosen": ("chosen", "preferred", "better", "good", "chosenresponse", "选中", "优选", "好回答", "选择"),
    "rejected": ("rejected", "dispreferred", "worse", "bad", "rejectedresponse", "拒绝", "被拒", "差回答"),
    "completion": ("completion", "response", "answer", "chosen", "回答", "答案"),
    "answer": (
        "answer",
        "solution",
        "reference",
        "groundtruth",
        "finalanswer",
        "label",
        "target",
        "答案",
        "参考答案",
        "标准答案",
        "正确答案",
    ),
    "image": (
        "image",
        "images",
        "img",
        "picture",
        "photo",
        "imagepath",
        "imagefile",
        "filepath",
        "file",
        "path",
        "filename",
        "图片",
        "图像",
        "图片路径",
        "照片",
    ),
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
VISION_FORMATS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # vision-language data: a picture, a question and its answer; or conversations holding pictures
    # (in their image parts, or in an images column they take in order)
    "question": (("image", "prompt", "completion"), ()),
    "picture-chat": (("messages",), ("image",)),
}
TASK_ROLES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "classification": (("text", "label"), ("text_pair",)),
    "seq2seq": (("source", "target"), ()),
    "preference": (("chosen", "rejected"), ("prompt",)),
    "grpo": (("prompt",), ("answer",)),
    "image-classification": (("image", "label"), ()),
    "vision-chat": (("image", "prompt", "completion"), ()),
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
    if task == "vision-chat":
        return VISION_FORMATS["picture-chat" if columns.messages else "question"]
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
    formats = {"causal-lm": CAUSAL_FORMATS, "vision-chat": VISION_FORMATS}.get(task)
    if formats is not None:
        options = [f for f, (req, _) in formats.items() if any(r in mapped for r in req)]
        options = options or list(formats)
    else:
        formats, options = TASK_ROLES, [task]
    # Names first for every format, so content never overrules a format the names spell out.
    partial = None  # with no format complete: the roles found for the task's first, so that a refusal
    for use_content in (False, True):  # names only the missing ones
        for option in options:
            required, optional = formats[option]
            trial, trial_found = dict(mapped), dict(found_by)
            _by_name(table, required + optional, trial, trial_found)
            if use_content:
                _by_content(table, option, trial, trial_found)
            if all(r in trial for r in required):
                return Guess(Columns(**trial), trial_found)
            if use_content and partial is None and task not in ("causal-lm", "vision-chat"):
                partial = Guess(Columns(**trial), trial_found)
    return partial or Guess(Columns(**mapped), found_by)


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
    if option == "picture-chat":
        from desktop.core.data.picture_chats import looks_like_picture_chats

        assign("messages", next((c for c in free if looks_like_picture_chats(sample[c].tolist())), None))
        return
    if option in ("image-classification", "question"):
        from desktop.core.data.images import looks_like_images

        assign("image", next((c for c in free if looks_like_images(sample[c].tolist())), None))
        if option == "question":  # a question and its answer about the picture, in that order
            in_order = [c for c in free if _mean_text_length(sample[c]) > 0]
            if "prompt" not in mapped and "completion" not in mapped and len(in_order) >= 2:
                assign("prompt", in_order[0])
                assign("completion", in_order[1])
            return
        labels = [c for c in free if _looks_like_labels(sample[c])]
        assign("label", min(labels, key=lambda c: sample[c].nunique(), default=None))
        return
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


# --------------------------------------------------------------------------- checking rows


_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def unique_values(values: Any) -> list[Any]:
    """The distinct values of a column (a label column holds few, whatever its length)."""
    return list(values.unique())


MISSING_WORDS = {"nan", "none", "null", "n/a", "#n/a"}
"""Labels that say a cell was empty where the file was written (pandas' "NaN", Excel's "#N/A"): no
label, not a class of their own."""


def missing_word_rows(values: Any) -> list[int]:
    """The rows whose label is one of :data:`MISSING_WORDS` (in any case)."""
    words = [v for v in unique_values(values) if isinstance(v, str) and v.strip().casefold() in MISSING_WORDS]
    if not words:
        return []
    import numpy as np

    return np.flatnonzero(values.isin(words).to_numpy()).tolist()


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
    # Preference pairs are read as pairs (an answer may be a list of messages), and each kind of bad
    # pair named in a sentence of its own: ``data.tasks.preference.check_pairs``.
    for role in required if task != "preference" else ():
        column = getattr(columns, role)
        if role == "messages" and task == "vision-chat":
            from desktop.core.data.picture_chats import unusable_picture_chats

            pictures = table.column(columns.image) if columns.image else None
            rows = unusable_picture_chats(table.column(column), pictures)
        elif role == "messages":
            rows = unusable_chats(table.column(column))
        elif role == "image":
            rows = _no_picture(table, column)
        else:
            rows = table.blank(column).nonzero()[0].tolist()
        if role == "label":
            rows = sorted({*rows, *missing_word_rows(table.column(column))})
        if len(rows) == len(table) and role == "messages" and not table.blank(column).all():
            raise DataError(
                msg(
                    '{source}: no row of the column "{column}" is a conversation this task reads.',
                    source=table.source,
                    column=column,
                ),
                msg(
                    'Each row needs a list of messages with "role" and "content" (or ShareGPT\'s "from" and '
                    '"value") and an assistant reply; for pictures, a picture for each image part or '
                    "<image> in the text (an images column lists them)."
                )
                if task == "vision-chat"
                else msg(
                    'Each row needs a list of messages with "role" and "content" texts, and an assistant '
                    "reply."
                ),
            )
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
                else msg("Map {role} to the column that holds the pictures.", role=role)
                if role == "image"
                else msg("Map {role} to the column that holds the texts.", role=role),
            )
        if rows and not drop_bad_rows:
            raise DataError(
                _bad_rows(role, len(rows), table.source, column, table.locate_many(rows), task),
                msg(
                    'Give those rows {fix}, or leave them out: tick "Leave out rows with a missing or '
                    'unreadable picture, or no label" under Columns (data.drop_bad_rows = true in a config).',
                    fix=_fix(role),
                )
                if task in IMAGE_TASKS  # the switch is named for pictures there
                else msg(
                    'Give those rows {fix}, or leave them out: tick "Leave out rows with a blank text or no '
                    'label" under Columns (data.drop_bad_rows = true in a config).',
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
    if task in ("classification", "image-classification") and training:
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


def _no_picture(table: Table, column: str) -> list[int]:
    """The rows whose cell names no picture (blank, or a hub dataset's image without bytes or path)."""
    from desktop.core.data.images import source_of

    return [i for i, value in enumerate(table.column(column)) if source_of(value) is None]


def _bad_rows(role: str, count: int, source: str, column: str, rows: str, task: str = "") -> str:
    """What is wrong with some rows: one whole sentence per problem, singular and plural."""
    values = {"source": source, "count": count, "column": column, "rows": rows}
    if role == "messages" and task == "vision-chat":  # or its pictures and image parts differ in number
        if count == 1:
            return msg(
                '{source}: 1 row has no conversation that can be read in column "{column}" ({rows}): it '
                "needs an assistant reply, and as many pictures as image parts.",
                **values,
            )
        return msg(
            '{source}: {count} rows have no conversation that can be read in column "{column}" ({rows}): '
            "each needs an assistant reply, and as many pictures as image parts.",
            **values,
        )
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
    if role == "image":
        if count == 1:
            return msg('{source}: 1 row names no picture in column "{column}" ({rows}).', **values)
        return msg('{source}: {count} rows name no picture in column "{column}" ({rows}).', **values)
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
    if role == "image":
        return msg("a picture")
    return msg("a label") if role == "label" else msg("text")


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
