"""Ollama's Go templates, rendered here as Ollama renders them, for the constructs our Modelfiles use.

The GGUF check renders its prompts through the Modelfile's ``TEMPLATE`` to say whether Ollama will give
the model the prompts it was trained on. Go's ``text/template`` is not at hand in Python, and no kept
Python library renders it, so this module renders the part of the language our templates are made of
(``modelfile.py`` writes them; ``template_derive.py`` derives them):

- text, and ``{{ "..." }}`` string literals;
- ``{{ range .Messages }} ... {{ end }}`` over the conversation, with ``.Role`` and ``.Content``;
- ``{{ if C }} ... {{ else if C }} ... {{ else }} ... {{ end }}``, ``C`` being ``eq .Role "name"``,
  a variable, ``true`` or ``false``;
- boolean variables: ``{{ $v := false }}``, ``{{ $v = true }}``.

Anything else raises :class:`Unsupported` rather than render wrongly. The tests render every template
our exports write through Go's own ``text/template`` too, and require the same text. Why our own:
docs/decisions/014-own-go-template-renderer.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

ACTION = re.compile(r"(\{\{.*?\}\})", re.S)
ASSIGN = re.compile(r"(\$\w+)\s*:?=\s*(true|false)")
ROLE_IS = re.compile(r'eq\s+\.Role\s+("(?:[^"\\]|\\.)*")')


class Unsupported(ValueError):
    """The template uses a part of Go's template language that is not rendered here."""


def render(template: str, messages: Sequence[dict[str, str]]) -> str:
    """What Ollama writes for ``messages`` (each with ``role`` and ``content``) with ``template``.

    Raises:
        Unsupported: The template uses something this renderer does not know.
    """
    parts = ACTION.split(template)
    tree, at = _parse(parts, 0)
    if at != len(parts):
        raise Unsupported(f"an {{{{ end }}}} or {{{{ else }}}} without its opening in {template!r}")
    out: list[str] = []
    _render(tree, {}, None, list(messages), out)
    return "".join(out)


def _parse(parts: list[str], at: int) -> tuple[list[Any], int]:
    """Nodes up to the ``end`` or ``else`` that closes them: text, ``("action", text)``,
    ``("range", body)`` and ``("if", [(condition, body), ...])``."""
    nodes: list[Any] = []
    while at < len(parts):
        part = parts[at]
        action = part[2:-2].strip() if part.startswith("{{") else None
        if action is None:
            nodes.append(part)
            at += 1
        elif action == "end" or action == "else" or action.startswith("else if "):
            return nodes, at
        elif action == "range .Messages":
            body, at = _parse(parts, at + 1)
            if at >= len(parts) or parts[at][2:-2].strip() != "end":
                raise Unsupported("a {{ range }} without its {{ end }}")
            nodes.append(("range", body))
            at += 1
        elif action.startswith("if "):
            branches, condition = [], action[3:].strip()
            while True:
                body, at = _parse(parts, at + 1)
                if at >= len(parts):
                    raise Unsupported("an {{ if }} without its {{ end }}")
                branches.append((condition, body))
                closing = parts[at][2:-2].strip()
                if closing == "end":
                    break
                condition = closing[len("else if ") :].strip() if closing.startswith("else if ") else "true"
            nodes.append(("if", branches))
            at += 1
        else:
            nodes.append(("action", action))
            at += 1
    return nodes, at


def _render(
    nodes: list[Any],
    variables: dict[str, bool],
    message: dict[str, str] | None,
    messages: list,
    out: list[str],
) -> None:
    for node in nodes:
        if isinstance(node, str):
            out.append(node)
        elif node[0] == "range":
            for each in messages:
                _render(node[1], variables, each, messages, out)
        elif node[0] == "if":
            for condition, body in node[1]:
                if _true(condition, variables, message):
                    _render(body, variables, message, messages, out)
                    break
        else:
            out.append(_act(node[1], variables, message))


def _act(action: str, variables: dict[str, bool], message: dict[str, str] | None) -> str:
    """What one action writes (an assignment writes nothing)."""
    assigned = ASSIGN.fullmatch(action)
    if assigned:
        variables[assigned[1]] = assigned[2] == "true"
        return ""
    if action in (".Role", ".Content"):
        if message is None:
            raise Unsupported(f"{{{{ {action} }}}} outside {{{{ range .Messages }}}}")
        return str(message.get(action[1:].lower(), ""))
    if action.startswith('"') and action.endswith('"'):
        return str(json.loads(action))
    raise Unsupported(f"{{{{ {action} }}}} is not rendered here")


def _true(condition: str, variables: dict[str, bool], message: dict[str, str] | None) -> bool:
    if condition in ("true", "false"):
        return condition == "true"
    if condition.startswith("$"):
        if condition not in variables:
            raise Unsupported(f"{condition} is used before it is set")
        return variables[condition]
    role = ROLE_IS.fullmatch(condition)
    if role is None or message is None:
        raise Unsupported(f"the condition {condition!r} is not evaluated here")
    return message.get("role") == json.loads(role[1])
