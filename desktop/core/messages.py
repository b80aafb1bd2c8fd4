"""Messages for the user as templates with named placeholders, so the windows can translate them.

``msg("{model} is not on this computer yet.", model=repo_id)`` is a plain ``str`` with the English
text (the CLI prints it, logs record it, comparisons keep working) that also carries its template and
its values. The layer that shows it translates the template and fills in the values
(:func:`desktop.gui.core_text.shown`); core stays free of Qt. ``tools/i18n.py`` finds every
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
