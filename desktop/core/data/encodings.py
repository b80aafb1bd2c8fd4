"""Decoding text files: UTF-8 first, then the most likely of the common encodings."""

from __future__ import annotations

from desktop.core.system.errors import DataError
from desktop.core.system.messages import msg

ENCODING_CANDIDATES = ["gb18030", "big5", "cp1252", "shift_jis", "euc_kr", "utf_16"]
SINGLE_BYTE = {"cp1252"}
MULTI_BYTE = ("gb18030", "big5")
"""The encodings of our users' files that a file mostly in, with a few foreign lines, is named in."""
"""Candidates with one byte a character: a UTF-8 character read in one becomes two (é as Ã©)."""


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
    except UnicodeDecodeError:
        pass
    encoding = None if bom else guess_encoding(raw)
    # One line of real UTF-8 is evidence enough against a single-byte code page, which would turn each
    # of its characters into two; a multi-byte one (GBK) needs most text lines to be UTF-8 instead.
    mixed = _mixed_utf8(raw, name, any_line=encoding is None or encoding in SINGLE_BYTE)
    if mixed is not None or bom:
        raise mixed or _unreadable(name)
    try:
        text = raw.decode(encoding, errors="strict") if encoding else ""
    except UnicodeDecodeError:
        text = ""
    if not encoding or not text or "\x00" in text:
        # Mostly GBK or Big5 but for a few lines (pasted from a file in another encoding): name them.
        for candidate in MULTI_BYTE:
            if (mixed := _mixed_other(raw, name, candidate)) is not None:
                raise mixed
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


def _mixed_utf8(raw: bytes, name: str, any_line: bool = False) -> DataError | None:
    """A file in UTF-8 but for a few lines (pasted from a file in another encoding): decoding it all
    in some other encoding would garble every other non-ASCII character (a single-byte code page turns
    each into two), so it is refused, naming those lines. ``None`` when the file is not mostly UTF-8
    (then its encoding is detected): no line of it is UTF-8 text, or most of its text lines are not
    (unless ``any_line``: one UTF-8 line is enough)."""
    good, bad = [], []
    for number, line in enumerate(raw.split(b"\n"), 1):
        if line.isascii():
            continue
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            bad.append(number)
            if not any_line and len(bad) > 1000 and len(bad) > 10 * len(good):
                return None  # a file in another encoding (GBK, Big5, ...): no need to look further
        else:
            good.append(number)
    if not good or (len(bad) > len(good) and not any_line):
        return None
    if len(bad) == 1:
        return DataError(
            msg(
                "{file} is UTF-8 except at line {line}, which holds text in another encoding (pasted from "
                "another file, perhaps).",
                file=name,
                line=bad[0],
            ),
            msg("Fix that line (type it again, or copy it from a UTF-8 copy of its source), then try again."),
        )
    shown = ", ".join(str(n) for n in bad[:5]) + (", ..." if len(bad) > 5 else "")
    return DataError(
        msg(
            "{file} is UTF-8 except at {count} lines ({lines}), which hold text in another encoding "
            "(pasted from another file, perhaps).",
            file=name,
            count=len(bad),
            lines=shown,
        ),
        msg("Fix those lines (type them again, or copy them from a UTF-8 copy of their source), then retry."),
    )


def _mixed_other(raw: bytes, name: str, encoding: str) -> DataError | None:
    """A file in ``encoding`` (GBK, Big5) but for a few lines that are not: refused, naming them, as
    :func:`_mixed_utf8` does for UTF-8. ``None`` when most of its non-ASCII lines are not in it."""
    good, bad = 0, []
    for number, line in enumerate(raw.split(b"\n"), 1):
        if line.isascii():
            continue
        try:
            line.decode(encoding)
        except UnicodeDecodeError:
            bad.append(number)
        else:
            good += 1
    if not bad or good <= len(bad):
        return None
    label = {"gb18030": "GBK", "big5": "Big5"}[encoding]
    fix = msg("Fix that text, or save the whole file again as UTF-8 CSV, then try again.")
    if len(bad) == 1:
        message = msg(
            "{file} is {encoding} except at line {line}, which holds text in another encoding (pasted "
            "from another file, perhaps).",
            file=name,
            encoding=label,
            line=bad[0],
        )
        return DataError(message, fix)
    shown = ", ".join(str(n) for n in bad[:5]) + (", ..." if len(bad) > 5 else "")
    message = msg(
        "{file} is {encoding} except at {count} lines ({lines}), which hold text in another encoding "
        "(pasted from another file, perhaps).",
        file=name,
        encoding=label,
        count=len(bad),
        lines=shown,
    )
    return DataError(message, fix)
