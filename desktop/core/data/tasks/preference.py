"""Preference pairs (issue 38): a prompt with a chosen and a rejected answer, from the layouts people have.

Three layouts are read, each row becoming a :class:`Pair` (the prompt as chat messages, the two answers
as text), which is what TRL's ``DPOTrainer`` and ``ORPOTrainer`` take in their conversational form:

- ``prompt`` / ``chosen`` / ``rejected`` as text (or the prompt as a list of messages);
- UltraFeedback's: ``chosen`` and ``rejected`` are whole conversations (lists of messages) that share
  every message but the last answer; the prompt is that shared part;
- Anthropic HH's: ``chosen`` and ``rejected`` are whole conversations as text (``\\n\\nHuman: ...``
  ``\\n\\nAssistant: ...``); the prompt is their common beginning, up to the last ``Assistant:`` turn
  they share.

:func:`pair_problems` finds what would waste a run before it starts, each with its own sentence and the
rows it was found in: a chosen answer equal to the rejected one, an empty side, a prompt that fills the
max length (both answers cut to nothing), and pairs whose answers the max length cuts.

Not yet used by the wizard or the trainer: the data layer of the preference task, landed first.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from desktop.core.data.chats import parse_messages
from desktop.core.system.messages import Msg, msg

Messages = list[dict[str, str]]
HH_TURN = re.compile(r"\n\n(Human|Assistant):[ ]?")


@dataclass(frozen=True)
class Pair:
    """One preference: the prompt (chat messages, ending with the user's turn) and two answers."""

    prompt: Messages
    chosen: str
    rejected: str


def read_pair(
    row: dict[str, Any], chosen: str = "chosen", rejected: str = "rejected", prompt: str = ""
) -> Pair | None:
    """The pair in ``row`` (columns named by the arguments; ``prompt`` "" when the layout has none), or
    ``None`` when the row holds no readable pair."""
    good, bad = row.get(chosen), row.get(rejected)
    good_chat, bad_chat = parse_messages(good), parse_messages(bad)
    if good_chat and bad_chat:  # UltraFeedback: two conversations that differ in the last answer
        return _from_chats(good_chat, bad_chat, _prompt_messages(row.get(prompt)) if prompt else None)
    if not isinstance(good, str) or not isinstance(bad, str):
        return None
    if prompt:
        asked = _prompt_messages(row.get(prompt))
        return Pair(asked, good, bad) if asked is not None else None
    if HH_TURN.search(good) and HH_TURN.search(bad):
        return _from_hh(good, bad)
    return None


def _prompt_messages(value: Any) -> Messages | None:
    chat = parse_messages(value)
    if chat:
        return chat
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    return None


def _from_chats(good: Messages, bad: Messages, given: Messages | None) -> Pair | None:
    """The shared messages are the prompt; the last assistant message of each side is its answer."""
    if good[-1]["role"] != "assistant" or bad[-1]["role"] != "assistant":
        return None
    shared = 0
    while shared < min(len(good), len(bad)) - 1 and good[shared] == bad[shared]:
        shared += 1
    prompt = good[:shared] or (given or [])
    if not prompt or shared != len(good) - 1 or shared != len(bad) - 1:
        return None  # the two conversations part before their last answers: not one prompt
    return Pair(prompt, good[-1]["content"], bad[-1]["content"])


def _from_hh(good: str, bad: str) -> Pair | None:
    """HH's two conversations: their common beginning up to the last ``Assistant:`` both have."""
    same = 0
    while same < min(len(good), len(bad)) and good[same] == bad[same]:
        same += 1
    turns = [m for m in HH_TURN.finditer(good) if m.end() <= same and m.group(1) == "Assistant"]
    if not turns:
        return None
    cut = turns[-1]
    prompt = []
    pieces = list(HH_TURN.finditer(good[: cut.start()] + "\n\nAssistant:"))
    for here, after in itertools.pairwise(pieces):
        role = "user" if here.group(1) == "Human" else "assistant"
        prompt.append({"role": role, "content": good[here.end() : after.start()].strip()})
    if not prompt or prompt[-1]["role"] != "user":
        return None
    return Pair(prompt, good[cut.end() :].strip(), bad[cut.end() :].strip())


def pair_problems(
    pairs: Sequence[Pair | None],
    locate: Callable[[list[int]], str],
    tokens: Callable[[Pair], tuple[int, int, int]],
    max_length: int,
) -> list[Msg]:
    """What would waste a preference run, one sentence a kind, naming the rows (``locate`` turns
    positions into the user's row numbers). ``tokens`` gives a pair's (prompt, chosen, rejected) token
    counts, the prompt as the chat template renders it."""
    unreadable = [i for i, pair in enumerate(pairs) if pair is None]
    same = [i for i, pair in enumerate(pairs) if pair and pair.chosen.strip() == pair.rejected.strip()]
    empty = [
        i for i, pair in enumerate(pairs) if pair and (not pair.chosen.strip() or not pair.rejected.strip())
    ]
    same = [i for i in same if i not in empty]
    too_long, cut = [], []
    for i, pair in enumerate(pairs):
        if pair is None or i in empty:
            continue
        asked, good, bad = tokens(pair)
        if asked >= max_length:
            too_long.append(i)
        elif asked + max(good, bad) > max_length:
            cut.append(i)
    found: list[Msg] = []
    if unreadable:
        found.append(
            msg(
                "Rows with no readable prompt, chosen and rejected answer ({count}): {rows}.",
                count=len(unreadable),
                rows=locate(unreadable),
            )
        )
    if same:
        found.append(
            msg(
                "Rows whose chosen answer is the rejected one ({count}): {rows}. Such a pair teaches "
                "nothing.",
                count=len(same),
                rows=locate(same),
            )
        )
    if empty:
        found.append(
            msg("Rows with an empty answer ({count}): {rows}.", count=len(empty), rows=locate(empty))
        )
    if too_long:
        found.append(
            msg(
                "Rows whose prompt alone fills the max length of {max} tokens, so that both answers would be "
                "cut to nothing ({count}): {rows}.",
                max=max_length,
                count=len(too_long),
                rows=locate(too_long),
            )
        )
    if cut:
        found.append(
            msg(
                "The max length of {max} tokens cuts the answers of {count} of {total} pairs ({share:.0%}): "
                "{rows}.",
                max=max_length,
                count=len(cut),
                total=len(pairs),
                share=len(cut) / max(len(pairs), 1),
                rows=locate(cut),
            )
        )
    return found
