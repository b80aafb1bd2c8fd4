"""Decoding text files: UTF-8 first, then the most likely of the common encodings."""

from __future__ import annotations

from desktop.core.system.errors import DataError
from desktop.core.system.messages import msg

ENCODING_CANDIDATES = ["gb18030", "big5", "cp1252", "shift_jis", "euc_kr", "utf_16"]


def decode_text(raw: bytes, name: str) -> str:
    """Decode a text file: UTF-8 (with or without BOM), UTF-16, GBK/GB18030, Big5 and others.

    Raises:
        DataError: No common encoding reads the file.
    """
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return raw.decode("utf-16")
    bom = raw.startswith(b"\xef\xbb\xbf")
    try:
        return raw[3:].decode("utf-8") if bom else raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        mixed = _mixed_utf8(raw, exc.start + (3 if bom else 0), name)
        if mixed is not None or bom:
            raise mixed or _unreadable(name) from None
    encoding = guess_encoding(raw)
    text = raw.decode(encoding, errors="strict") if encoding else ""
    if not encoding or "\x00" in text:
        raise _unreadable(name)
    return text


def guess_encoding(raw: bytes) -> str | None:
    """The most likely of :data:`ENCODING_CANDIDATES` for bytes that are not UTF-8, or ``None``.

    charset-normalizer scores each candidate; on a tie (a short file often reads cleanly as both GBK
    and EUC-KR) the order of the candidates decides, and GB18030 comes first: our users' files.
    """
    from charset_normalizer import from_bytes

    matches = list(from_bytes(raw, cp_isolation=ENCODING_CANDIDATES))
    if not matches:
        return None
    rank = {name: i for i, name in enumerate(ENCODING_CANDIDATES)}
    best = min(
        matches,
        key=lambda m: (round(m.chaos, 3), -round(m.coherence, 3), rank.get(m.encoding, len(rank))),
    )
    return best.encoding


def _unreadable(name: str) -> DataError:
    return DataError(
        msg("{file} is not readable text in any common encoding (UTF-8, GBK, Big5, ...).", file=name),
        msg("Open it in a spreadsheet or editor and save it again as UTF-8 CSV."),
    )


def _mixed_utf8(raw: bytes, first_bad: int, name: str) -> DataError | None:
    """A file in UTF-8 but for a few places (lines pasted from a file in another encoding): decoding it
    all in some other encoding would garble every Chinese character, so it is refused, naming the first
    bad line. ``None`` when the file is not mostly UTF-8 (then its encoding is detected)."""
    wide = len(raw) - len(raw.translate(None, bytes(range(0x80, 0x100))))  # bytes of non-ASCII text
    bad = raw.decode("utf-8", errors="replace").count("\ufffd")
    if wide < 16 or bad > 0.02 * wide:
        return None
    line = raw.count(b"\n", 0, first_bad) + 1
    return DataError(
        msg(
            "{file} is UTF-8 except at line {line}, which holds text in another encoding (pasted from "
            "another file, perhaps).",
            file=name,
            line=line,
        ),
        msg("Fix that line (type it again, or copy it from a UTF-8 copy of its source), then try again."),
    )
