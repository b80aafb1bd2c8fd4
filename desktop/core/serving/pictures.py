"""Pictures in chat requests to a vision-language model: OpenAI's ``image_url`` parts read into bytes.

A part's URL may be a data URL (``data:image/png;base64,...``: what OpenAI's clients send for a local
picture), a file on this computer (``file://`` or a path; only when the server listens on this computer
alone: a server others can reach reads no file on request), or a web address (only when the user
started the server allowing it: fetching any address a request names is the server's risk, not the
client's). Each is read whole, at most :data:`MOST_BYTES`, and checked to be a picture before the model
sees it.
"""

from __future__ import annotations

import base64
import binascii
from pathlib import Path
from typing import Any

from desktop.core.serving.guard import Refused

MOST_BYTES = 20 << 20
"""The largest picture read (a 20 MB photo is already far larger than a model's input)."""
FETCH_TIMEOUT_S = 15


def read_picture(url: str, remote: bool, local: bool) -> bytes:
    """The bytes of the picture ``url`` names, or the refusal that says why it cannot be read.

    Raises:
        Refused: Not a picture, too large, a web address on a server that does not fetch them, a file
            on a server others can reach.
    """
    if url.startswith("data:"):
        data = _data_url(url)
    elif url.startswith(("http://", "https://")):
        if not remote:
            raise Refused(
                400,
                "This server does not fetch pictures from the web: send the picture as a data URL "
                "(data:image/png;base64,...), or start the server allowing web pictures "
                "(--allow-remote-images).",
                "remote_images_off",
                "messages",
            )
        data = _fetch(url)
    else:
        data = _file(url, local)
    _check(data)
    return data


def _data_url(url: str) -> bytes:
    header, _, payload = url.partition(",")
    if ";base64" not in header:
        raise Refused(
            400, "A picture's data URL must be base64 (data:image/png;base64,...).", param="messages"
        )
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise Refused(400, "A picture's data URL is not valid base64.", param="messages") from None
    if len(data) > MOST_BYTES:
        raise _too_large()
    return data


def _fetch(url: str) -> bytes:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT_S) as answer:  # http(s) only: checked above
            data = answer.read(MOST_BYTES + 1)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise Refused(
            400, f"The picture at {url[:200]} could not be fetched: {exc}.", param="messages"
        ) from None
    if len(data) > MOST_BYTES:
        raise _too_large()
    return data


def _file(url: str, local: bool) -> bytes:
    if not local:
        raise Refused(
            400,
            "This server reads no file on request (it can be reached from other computers): send the "
            "picture as a data URL (data:image/png;base64,...).",
            "local_images_off",
            "messages",
        )
    path = Path(url.removeprefix("file://")).expanduser()
    try:
        if path.stat().st_size > MOST_BYTES:
            raise _too_large()
        return path.read_bytes()
    except OSError:
        raise Refused(
            400, f"There is no picture at {str(path)[:300]} on the server's computer.", param="messages"
        ) from None


def _too_large() -> Refused:
    return Refused(
        413, f"A picture is larger than {MOST_BYTES >> 20} MB: send a smaller one.", param="messages"
    )


def _check(data: bytes) -> None:
    """Refuse what is not a picture, and a picture too large to decode (a small file can hold a
    20000 x 20000 picture: Pillow refuses to open it, and it would fill the memory)."""
    from PIL import Image, UnidentifiedImageError

    from desktop.core.data.images import HUGE_PIXELS, open_picture

    try:
        with open_picture(data) as picture:
            width, height = picture.size
            if width * height > HUGE_PIXELS:
                raise _too_many_pixels(width, height)
            picture.verify()
    except Image.DecompressionBombError:
        raise _too_many_pixels(0, 0) from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError):
        raise Refused(
            400, "A picture in the request is not a picture that can be read.", param="messages"
        ) from None


def _too_many_pixels(width: int, height: int) -> Refused:
    from desktop.core.data.images import HUGE_PIXELS

    size = f" ({width} x {height})" if width else ""
    return Refused(
        400,
        f"A picture in the request is too large to read{size}: send one of at most "
        f"{HUGE_PIXELS // 1_000_000} megapixels.",
        param="messages",
    )


def picture_conversation(
    messages: list[Any], remote: bool, local: bool
) -> tuple[list[dict[str, Any]], list[bytes]]:
    """The request's messages as a processor's chat template reads them (each picture a placeholder
    part) and the pictures, in order."""
    conversation, pictures = [], []
    for message in messages:
        role = "system" if message.role == "developer" else message.role
        content = message.content
        if content is None or isinstance(content, str):
            conversation.append({"role": role, "content": [{"type": "text", "text": content or ""}]})
            continue
        parts = []
        for part in content:
            if part.type == "text":
                parts.append({"type": "text", "text": part.text})
            else:
                pictures.append(read_picture(part.image_url.url, remote, local))
                parts.append({"type": "image"})
        conversation.append({"role": role, "content": parts})
    return conversation, pictures
