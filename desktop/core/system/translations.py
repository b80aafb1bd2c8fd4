"""The app's translations, read straight from its Qt Linguist files (``resources/i18n/*.ts``).

One format and one set of files serve the windows and the command line: the windows hand this table
to Qt (:mod:`desktop.shared_ui`), the CLI asks it directly, and core stays free of Qt. Reading
the ``.ts`` source itself (a few milliseconds) means there is no compiled ``.qm`` to build, ship and
keep in step with it.
"""

from __future__ import annotations

import functools
import logging
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop.core.system.language import ENGLISH
from desktop.core.system.messages import Msg
from desktop.core.system.paths import resources_dir

log = logging.getLogger(__name__)

CORE = "core"
"""The context of core's messages (:func:`desktop.core.system.messages.msg`) in the translation files."""


def ts_file(language: str, folder: Path | None = None) -> Path:
    return (folder or resources_dir() / "i18n") / f"finetune_studio_{language}.ts"


class Translations:
    """The finished translations of one language: ``(context, source, disambiguation)`` to the
    translated text, or to its plural forms."""

    def __init__(self, entries: dict[tuple[str, str, str], list[str]] | None = None) -> None:
        self.entries = entries or {}

    @classmethod
    def read(cls, path: Path) -> Translations:
        """The finished entries of a ``.ts`` file (unfinished and obsolete ones are left out, as
        pyside6-lrelease leaves them out)."""
        entries: dict[tuple[str, str, str], list[str]] = {}
        for context in ET.parse(path).getroot().iter("context"):
            name = context.findtext("name") or ""
            for message in context.iter("message"):
                translation = message.find("translation")
                if translation is None or translation.get("type") in ("unfinished", "obsolete", "vanished"):
                    continue
                forms = [form.text or "" for form in translation.iter("numerusform")]
                forms = forms or [translation.text or ""]
                if any(forms):
                    key = (name, message.findtext("source") or "", message.findtext("comment") or "")
                    entries[key] = forms
        return cls(entries)

    def translate(self, context: str, source: str, disambiguation: str = "", n: int = -1) -> str | None:
        """The translation, or ``None`` where there is none. Chinese has one plural form; where a
        language has more, the form is chosen as English does (one, else other)."""
        forms = self.entries.get((context, source, disambiguation or ""))
        if not forms:
            return None
        return forms[1] if n != 1 and n >= 0 and len(forms) > 1 else forms[0]

    def __len__(self) -> int:
        return len(self.entries)


@functools.cache
def translations(language: str) -> Translations:
    """The app's translations for ``language`` (none for English, or where the file is missing)."""
    path = ts_file(language)  # English's holds only plural forms: "1 row", "2 rows"
    if not path.is_file():
        return Translations()
    try:
        return Translations.read(path)
    except (OSError, ET.ParseError) as exc:  # a damaged file: English, not a crash
        log.warning("could not read the translations %s: %s", path, exc)
        return Translations()


def render(text: Any, translate: Callable[[str], str | None]) -> str:
    """``text`` in the user's language when it is a :class:`~desktop.core.system.messages.Msg`: its template
    through ``translate`` (``None``: the English one), filled with its values, which are rendered the
    same way when they are messages themselves. Other text comes back as it is."""
    if not isinstance(text, Msg):
        return "" if text is None else str(text)
    template = translate(text.template) or text.template
    params = {
        key: render(value, translate) if isinstance(value, Msg) else value
        for key, value in text.params.items()
    }
    try:
        return template.format(**params)
    except (KeyError, IndexError, ValueError):  # a broken translation: the English text, not a crash
        return str(text)


def localized(text: Any, language: str) -> str:
    """``text`` (a core message or plain text) in ``language``, for the command line."""
    if language == ENGLISH:  # core's messages are English already
        return render(text, lambda template: None)
    table = translations(language)
    return render(text, lambda template: table.translate(CORE, template))
