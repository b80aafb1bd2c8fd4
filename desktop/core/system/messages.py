"""Messages for the user as templates with named placeholders, so the windows can translate them.

``msg("{model} is not on this computer yet.", model=repo_id)`` is a plain ``str`` with the English
text (the CLI prints it, logs record it, comparisons keep working) that also carries its template and
its values. The layer that shows it translates the template and fills in the values
(:func:`desktop.shared_ui.shown`); core stays free of Qt. ``tools/i18n.py`` finds every
``msg("...")`` template in ``desktop/core`` for the translation files.
"""

from __future__ import annotations

from typing import Any


class Msg(str):
    """A message in English that remembers how it was made: ``template`` and ``params``."""

    template: str
    params: dict[str, Any]

    def __new__(cls, template: str, **params: Any) -> Msg:
        text = super().__new__(cls, template.format(**params))
        text.template, text.params = template, params
        return text


def msg(template: str, **params: Any) -> Msg:
    """A translatable message: ``template`` with ``{name}`` placeholders, filled with ``params``.

    The template must be a literal string at the call, so that the translation tools find it.
    """
    return Msg(template, **params)


def joined(*parts: str | None) -> str:
    """Whole sentences one after another (``None`` and empty ones left out), as one message.

    Each part is a sentence of its own; the join is a template too (a space in English, nothing
    between Chinese sentences), so no sentence is ever glued from fragments.
    """
    present = [part for part in parts if part]
    if not present:
        return ""
    text = present[0]
    for part in present[1:]:
        text = msg("{first} {then}", first=text, then=part)
    return text


def collected(template: str) -> Msg:
    """``template`` (no placeholders) as a message, for texts the translation tools collect at their own
    call (a config field's ``help_field("...")``)."""
    return Msg(template)


_MSG = "__msg__"


def to_wire(value: Any) -> Any:
    """``value`` (messages, in dicts and lists) as plain JSON data that keeps each message's template,
    for a message made in another process (see :func:`from_wire`)."""
    if isinstance(value, Msg):
        return {_MSG: value.template, "params": {k: to_wire(v) for k, v in value.params.items()}}
    if isinstance(value, dict):
        return {k: to_wire(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_wire(v) for v in value]
    return value


def from_wire(value: Any) -> Any:
    """Data made by :func:`to_wire` with its messages rebuilt, to be translated where they are shown."""
    if isinstance(value, dict):
        if _MSG in value and set(value) == {_MSG, "params"}:
            template = str(value[_MSG])
            try:
                return Msg(template, **{k: from_wire(v) for k, v in value["params"].items()})
            except (KeyError, IndexError, ValueError, TypeError, AttributeError):
                return template
        return {k: from_wire(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_wire(v) for v in value]
    return value
