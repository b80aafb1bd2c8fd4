"""An answer as the model makes it: its text read token by token, cut at a stop string, and how it ended."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Outcome:
    """How a generation ended: its text, its token counts, and why it stopped (``stop`` when the model
    ended its answer or a stop string came, ``length`` when ``max_tokens`` ran out, ``cancelled`` when
    its client went away)."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str
    logprobs: list[dict[str, Any]] | None = None  # each answer token: id, logprob, top [(id, logprob)]
    ids: list[int] = field(default_factory=list)  # the answer's tokens (its special ones read for tool calls)


class Detokenizer:
    """An answer's text, token by token, at a constant cost per token.

    Each new token is decoded with the one or few before it (the same text as decoding the whole answer:
    a word's leading space, a character split across tokens), and only what they add is appended;
    half a character waits for its next token.
    """

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.ids: list[int] = []
        self.text = ""
        self._prefix = self._read = 0

    def add(self, token: int) -> str:
        """The answer's text with ``token`` added."""
        self.ids.append(token)
        added = self._added()
        if added and not added.endswith("\ufffd"):
            self.text += added
            self._prefix, self._read = self._read, len(self.ids)
        return self.text

    def rest(self) -> str:
        """The whole text, with what was still held back (the answer has ended)."""
        return self.text + self._added()

    def _added(self) -> str:
        decode = self.tokenizer.decode
        before = decode(self.ids[self._prefix : self._read], skip_special_tokens=True)
        after = decode(self.ids[self._prefix :], skip_special_tokens=True)
        return after[len(before) :] if len(after) > len(before) else ""


class StopStrings:
    """The answer's text as it grows, cut before the first stop string.

    Text that could be the start of a stop string is held back until it is clear that it is not, so a
    client never receives part of a stop string. ``emit`` gets each new piece that is safe to show.
    """

    def __init__(self, stops: Sequence[str], emit: Callable[[str], None]) -> None:
        self.stops = [s for s in stops if s]
        self.emit = emit
        self.text = ""
        self.sent = 0
        self.stopped = False

    def feed(self, decoded: str) -> None:
        """The whole answer decoded so far (it may still end in half a character)."""
        if self.stopped:
            return
        if decoded.endswith("\ufffd"):  # a character split across tokens: wait for the rest
            return
        for stop in self.stops:
            at = decoded.find(stop)
            if at >= 0:
                decoded, self.stopped = decoded[:at], True
        self.text = decoded
        safe = len(decoded) if self.stopped else len(decoded) - self._held(decoded)
        if safe > self.sent:
            self.emit(decoded[self.sent : safe])
            self.sent = safe

    def finish(self) -> None:
        """The generation ended: send what was held back."""
        if len(self.text) > self.sent:
            self.emit(self.text[self.sent :])
            self.sent = len(self.text)

    def _held(self, decoded: str) -> int:
        """How many trailing characters could begin a stop string."""
        held = 0
        for stop in self.stops:
            for size in range(min(len(stop) - 1, len(decoded)), held, -1):
                if decoded.endswith(stop[:size]):
                    held = size
                    break
        return held
