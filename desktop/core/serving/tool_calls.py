"""Tool calls read back from an answer's text, for the families whose chat templates define a format.

A model fine-tuned from one of these writes its calls as its family does; each call becomes OpenAI's
``tool_calls`` entry (the arguments as a JSON string) and the text around them the message's content:

- **Hermes / Qwen 2.5 / Qwen 3** (and the many templates that copied them):
  ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``, one block per call;
- **Mistral**: ``[TOOL_CALLS] [{"name": ..., "arguments": {...}}, ...]``;
- **Llama 3.1 / 3.2**: the whole answer one JSON object ``{"name": ..., "parameters": {...}}``
  (after ``<|python_tag|>`` where the model writes one), only for a name among the tools offered.

Anything else is text: a call the model wrote in no known format stays in ``content``, as it came.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

HERMES = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
MISTRAL = "[TOOL_CALLS]"
PYTHON_TAG = "<|python_tag|>"


@dataclass
class Parsed:
    """An answer split into its text and its calls (OpenAI's ``tool_calls`` entries)."""

    content: str
    calls: list[dict[str, Any]] = field(default_factory=list)


def parse(text: str, names: set[str]) -> Parsed:
    """The calls in ``text`` to the tools named ``names``, and the rest of the text."""
    if HERMES.search(text):
        calls: list[dict[str, Any]] = []

        def take(block: re.Match[str]) -> str:
            call = _call(_load(block.group(1)), names)
            if call is None:
                return block.group(0)  # not a call to a tool offered: it stays in the text
            calls.append(call)
            return ""

        rest = HERMES.sub(take, text)
        if calls:
            return Parsed(rest.strip(), calls)
    if MISTRAL in text:
        before, _, after = text.partition(MISTRAL)
        found = _load(after.strip())
        items = found if isinstance(found, list) else [found]
        calls = [call for item in items if (call := _call(item, names)) is not None]
        if calls:
            return Parsed(before.strip(), calls)
    stripped = text.strip().removeprefix(PYTHON_TAG).strip()
    if stripped.startswith("{") and stripped.endswith("}"):
        call = _call(_load(stripped), names)
        if call is not None:
            return Parsed("", [call])
    return Parsed(text)


def _load(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _call(found: Any, names: set[str]) -> dict[str, Any] | None:
    """OpenAI's entry for one call read as JSON; ``None`` when it is no call to a tool offered."""
    if not isinstance(found, dict) or not isinstance(found.get("name"), str) or found["name"] not in names:
        return None
    arguments = found.get("arguments", found.get("parameters", {}))
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return {
        "id": f"call_{uuid.uuid4().hex[:24]}",
        "type": "function",
        "function": {"name": found["name"], "arguments": arguments},
    }
