"""A try-it conversation: the turns shown, and the messages each model is sent (plain data, no Qt).

The fine-tuned model and the base model beside it each see their own past answers; where the base
model was not asked (the comparison was off then, or the answer was stopped first), it is shown the
fine-tuned model's answer, so the conversation it continues stays whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Message = dict[str, str]
"""One turn as the models read it: ``{"role": "system" | "user" | "assistant", "content": text}``
(as ``desktop.core.data.tasks.generation.Message``)."""


@dataclass
class Reply:
    """A model's answer to one turn, as it streams in.

    Attributes:
        text: What the model has said so far.
        done: The answer is complete (or was stopped).
        stopped: The user stopped it: ``text`` is only its beginning.
        model: Which model wrote it (its folder's name), shown over it: a conversation kept across a
            change of model keeps each answer under the model that gave it.
    """

    text: str = ""
    done: bool = False
    stopped: bool = False
    model: str = ""


@dataclass(eq=False)
class Turn:
    """What the user said, and the answers to it (``base`` only when the base model was asked)."""

    user: str
    answer: Reply = field(default_factory=Reply)
    base: Reply | None = None


@dataclass
class Conversation:
    """The turns of one conversation, oldest first; compared by identity of its turns."""

    turns: list[Turn] = field(default_factory=list)

    def messages(self, system: str, upto: Turn, base: bool = False) -> list[Message]:
        """The conversation up to and including ``upto``'s user message, ready to answer ``upto``.

        Args:
            system: The system prompt; left out when blank.
            base: The messages for the base model (its own past answers where it gave any).
        """
        messages: list[Message] = []
        if system.strip():
            messages.append({"role": "system", "content": system.strip()})
        for turn in self.turns:
            messages.append({"role": "user", "content": turn.user})
            if turn is upto:
                return messages
            said = turn.base if base and turn.base is not None and turn.base.done else turn.answer
            messages.append({"role": "assistant", "content": said.text})
        raise ValueError("the turn is not part of this conversation")

    def holds(self, turn: Turn | None) -> bool:
        """Whether ``turn`` is (still) one of this conversation's turns."""
        return any(t is turn for t in self.turns)
