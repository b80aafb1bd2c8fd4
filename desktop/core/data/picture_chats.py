"""Conversations that hold pictures: the ``messages`` layout of vision-language data.

A row's ``messages`` is a list of ``{"role", "content"}``; a content is a text, or a list of parts:
``{"type": "text", "text": ...}`` and ``{"type": "image", ...}``. An image part names its picture
itself (``"image"``, ``"path"`` or ``"url"``: a path, relative to the data file, or a picture's
bytes), or is a bare placeholder that takes the next picture of the row's images column (a list of
pictures, in order: the layout of TRL's and the Hugging Face hub's vision datasets). OpenAI's
``{"type": "image_url", "image_url": {"url": ...}}`` is read as an image part too.

Two text layouts are read as well: a content that is a text with ``<image>`` where each picture goes
(LLaMA-Factory's ``messages`` + ``images``), and LLaVA's ShareGPT turns, ``{"from": "human" | "gpt",
"value": "<image>\n..."}`` in a ``conversations`` column beside an ``image`` column.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.core.data.chats import message_list
from desktop.core.data.images import Source, is_image, source_of

PICTURE_KEYS = ("image", "path", "url")
PLACEHOLDER = "<image>"
"""Where a picture goes in a text (LLaMA-Factory's and LLaVA's data)."""
SHAREGPT_ROLES = {
    "human": "user",
    "user": "user",
    "gpt": "assistant",
    "assistant": "assistant",
    "system": "system",
}
"""ShareGPT's speakers (``from``) as chat roles."""


@dataclass(frozen=True)
class PictureChat:
    """A conversation as a processor's chat template reads it (an image part a bare placeholder), and
    its pictures in the order of their placeholders."""

    messages: list[dict[str, Any]]
    pictures: list[Source]


def parse_picture_chat(value: Any, pictures: Any = None, answered: bool = True) -> PictureChat | None:
    """``value`` as a :class:`PictureChat`, or ``None`` when it is not a conversation with an assistant
    reply (``answered=False``: with or without one), or its placeholders and its pictures (``pictures``:
    the row's images column) do not match."""
    value = message_list(value)
    if value is None:
        return None
    given = _pictures(pictures)
    waiting = list(given)
    messages, found = [], []
    for message in value:
        message = _turn(message)
        if message is None:
            return None
        content = message.get("content")
        if hasattr(content, "tolist"):
            content = content.tolist()
        if isinstance(content, str):
            parts = _text_parts(content, waiting, found)
            if parts is None:
                return None
            messages.append({"role": message["role"], "content": parts})
            continue
        if not isinstance(content, list):
            return None
        parts = []
        for part in content:
            if not isinstance(part, dict):
                return None
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str):
                parts.append({"type": "text", "text": part["text"]})
            elif kind in ("image", "image_url"):
                named = _named_picture(part)
                if named is None:
                    if not waiting:
                        return None
                    named = waiting.pop(0)
                found.append(named)
                parts.append({"type": "image"})
            elif kind == "text" or kind is None:
                return None
        messages.append({"role": message["role"], "content": parts})
    if waiting or (answered and not any(m["role"] == "assistant" for m in messages)):
        return None
    return PictureChat(messages, found)


def question_of(chat: PictureChat) -> PictureChat | None:
    """A conversation up to its last user turn, with the pictures those turns hold: what a model is
    asked to answer next (``None`` when no user speaks)."""
    last = max((i for i, m in enumerate(chat.messages) if m["role"] == "user"), default=None)
    if last is None:
        return None
    asked = chat.messages[: last + 1]
    count = sum(
        1 for m in asked for part in m["content"] if isinstance(part, dict) and part.get("type") == "image"
    )
    return PictureChat(asked, chat.pictures[:count])


def _turn(message: Any) -> dict[str, Any] | None:
    """A message as ``{"role", "content"}`` (a ShareGPT turn's ``from`` and ``value`` read as those), or
    ``None``."""
    if not isinstance(message, dict):
        return None
    if isinstance(message.get("role"), str):
        return message
    role = SHAREGPT_ROLES.get(str(message.get("from", "")).lower())
    return {"role": role, "content": message.get("value")} if role and "value" in message else None


def _text_parts(text: str, waiting: list[Source], found: list[Source]) -> list[dict[str, Any]] | None:
    """A text's parts: its pieces of text, and an image part (taking the row's next picture) for each
    ``<image>`` in it; ``None`` when the row has fewer pictures than placeholders."""
    pieces = text.split(PLACEHOLDER)
    parts: list[dict[str, Any]] = []
    for i, piece in enumerate(pieces):
        if i:
            if not waiting:
                return None
            found.append(waiting.pop(0))
            parts.append({"type": "image"})
        if piece.strip() or len(pieces) == 1:
            parts.append({"type": "text", "text": piece.strip() if len(pieces) > 1 else piece})
    return parts


def _named_picture(part: dict[str, Any]) -> Source | None:
    if part.get("type") == "image_url":
        url = part.get("image_url")
        url = url.get("url") if isinstance(url, dict) else url
        return source_of(url)
    for key in PICTURE_KEYS:
        found = source_of(part.get(key))
        if found is not None:
            return found
    return None


def _pictures(value: Any) -> list[Source]:
    if value is None:
        return []
    if hasattr(value, "tolist"):
        value = value.tolist()
    values = value if isinstance(value, list) else [value]
    return [s for s in (source_of(v) for v in values) if s is not None]


def unusable_picture_chats(values: Any, pictures: Any = None) -> list[int]:
    """The rows whose cell holds no usable picture conversation (:func:`parse_picture_chat`)."""
    listed = list(pictures) if pictures is not None else [None] * len(values)
    return [
        i
        for i, (v, p) in enumerate(zip(list(values), listed, strict=True))
        if parse_picture_chat(v, p) is None
    ]


def looks_like_picture_chats(values: list[Any]) -> bool:
    """Whether a column's first cells are conversations (their pictures in them or in another column)."""
    found = [v for v in values if v is not None][:20]
    return bool(found) and all(_is_messages(v) for v in found)


def _is_messages(value: Any) -> bool:
    value = message_list(value)
    return value is not None and all(_turn(m) is not None and "content" in _turn(m) for m in value)


def resolve_chat_paths(value: Any, folder: Path) -> Any:
    """A conversation with its image parts' relative paths made full (relative to ``folder``); other
    values as they are."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if not isinstance(value, list):
        return value
    out = []
    for message in value:
        content = message.get("content") if isinstance(message, dict) else None
        if hasattr(content, "tolist"):
            content = content.tolist()
        if not isinstance(content, list):
            out.append(message)
            continue
        parts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "image":
                part = {
                    **part,
                    **{key: str(folder / part[key]) for key in PICTURE_KEYS if _relative(part.get(key))},
                }
            elif isinstance(part, dict) and part.get("type") == "image_url":  # OpenAI's, a string or {url}
                url = part.get("image_url")
                if isinstance(url, dict) and _relative(url.get("url")):
                    part = {**part, "image_url": {**url, "url": str(folder / url["url"])}}
                elif _relative(url):
                    part = {**part, "image_url": str(folder / url)}
            parts.append(part)
        out.append({**message, "content": parts})
    return out


def _relative(value: Any) -> bool:
    """Whether ``value`` is a picture's relative path (not a full one, nor a ``data:`` or web address)."""
    return (
        isinstance(value, str)
        and is_image(value)
        and "://" not in value
        and not value.startswith("data:")
        and not Path(value).is_absolute()
    )


def chat_picture_rows(table: Any, messages: str, images: str = "") -> list[Any]:
    """Every picture of a table's conversations, each as an
    :class:`~desktop.core.data.images.ImageRow` of its row (for the picture checks)."""
    from desktop.core.data.images import ImageRow

    listed = table.column(images) if images else [None] * len(table)
    rows = []
    for index, (value, pictures) in enumerate(zip(table.column(messages), listed, strict=True)):
        chat = parse_picture_chat(value, pictures)
        for source in chat.pictures if chat is not None else []:
            rows.append(ImageRow(source, None, index))
    return rows


def resolve_nested_paths(frame: Any, folder: Path) -> None:
    """Make the picture paths inside a table's lists full (in place, relative to ``folder``, the table's
    own): a column of lists of picture paths (an images column), or of conversations whose image parts
    name their pictures. :func:`~desktop.core.data.images.resolve_paths` does the plain columns."""
    for name in list(frame.columns):
        column = frame[name]
        if not _nested_pictures(column.head(20).tolist()):
            continue
        frame[name] = [_full_nested(v, folder) for v in column.tolist()]


def _nested_pictures(values: list[Any]) -> bool:
    """Whether cells are lists naming pictures: a list of picture paths, or a conversation with an image
    part that names its picture by a path."""
    from desktop.core.data.images import looks_like_images

    for value in values:
        if hasattr(value, "tolist"):
            value = value.tolist()
        if not isinstance(value, list) or not value:
            continue
        if all(isinstance(v, str) for v in value):
            return looks_like_images(value)
        return any(
            isinstance(part, dict) and _names_a_path(part)
            for message in value
            if isinstance(message, dict)
            for part in (_as_list(message.get("content")))
        )
    return False


def _names_a_path(part: dict[str, Any]) -> bool:
    """Whether an image part names its picture by a text: an image part's key, or OpenAI's URL."""
    if part.get("type") == "image":
        return any(isinstance(part.get(k), str) for k in PICTURE_KEYS)
    if part.get("type") == "image_url":
        url = part.get("image_url")
        return isinstance(url.get("url") if isinstance(url, dict) else url, str)
    return False


def _as_list(content: Any) -> list[Any]:
    if hasattr(content, "tolist"):
        content = content.tolist()
    return content if isinstance(content, list) else []


def _full_nested(value: Any, folder: Path) -> Any:
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return [str(folder / v) if _relative(v) else v for v in value]  # file://, data: as they are
    return resolve_chat_paths(value, folder)
