"""Ollama's Go template derived from any Jinja chat template, by rendering it: what the template writes
around each role's text, read between marked messages.

For the families ``modelfile.py`` knows, the Go template is written by hand. For any other template
(a fine-tune's own, a family we have not met), Ollama's own matching missed (measured: the answer lost
its first letters, a two-turn chat answered "."). Here the template is rendered with marked messages
(a system prompt, a user turn, an answer, a second user turn; and the same without the system prompt),
and the text between the marks is what goes before and after each role's text:

    P0 system P1 user P2 assistant P3 user P4        (P4: the opening of the answer to write)
    Q0 user Q1 assistant Q2 user Q3                  (Q0: how a chat without a system prompt begins)

(P2, P3, P4 must be Q1, Q2, Q3: the system prompt changes only what comes before the first user turn.)

The Go template then writes, before each message, the text for the step from the one before it (system
to user, user to assistant, assistant to user, or the start), and the opening of the answer at the end.
It is kept only when it renders exactly what the Jinja template renders for every test chat (one turn,
two turns, with and without a system prompt); otherwise there is none, and the export says that
Ollama will not apply the chat format. A template that refuses a system prompt gets a Go template that
leaves one out, as Mistral v0.2's does. The BOS token a template begins with is llama.cpp's to add.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

Render = Callable[[list[dict[str, str]]], str]
"""The model's chat template applied to a conversation, with the answer's opening (``tokenize=False``,
``add_generation_prompt=True``)."""

SYSTEM, USER1, ANSWER, USER2 = "FTSMARKSYSTEMZ", "FTSMARKUSERONEZ", "FTSMARKANSWERZ", "FTSMARKUSERTWOZ"
TEST_CHATS = [
    [("user", "What is the capital of Japan?")],
    [("system", "Answer in one sentence."), ("user", "What is the capital of Japan?")],
    [("user", "What is the capital of Japan?"), ("assistant", "Tokyo."), ("user", "And of China?")],
    [
        ("system", "Answer in one sentence."),
        ("user", "What is the capital of Japan?"),
        ("assistant", "Tokyo is the capital of Japan."),
        ("user", "And of China?"),
    ],
    [("user", "Hi"), ("assistant", "Hello!"), ("user", "2+2?"), ("assistant", "4"), ("user", "Thanks")],
]
SPECIAL = re.compile(r"<\|[^|<>\s]+\|>|<[a-z_]+_of_turn>|</s>|<\|?end[^<>\s]*>|\[/?[A-Z_]+\]")


@dataclass(frozen=True)
class Pieces:
    """The text a template writes around each role's text (see the module's docstring)."""

    start_system: str
    system_to_user: str
    user_to_answer: str
    answer_to_user: str
    start_user: str
    takes_system: bool
    opening: str  # after the last user turn: the answer to write (Vicuna's lacks an earlier one's space)

    def render(self, messages: list[tuple[str, str]]) -> str:
        """What the Go template below writes for ``messages`` (the same steps, in Python)."""
        out, first, system, answer = [], True, False, False
        for role, content in messages:
            if role == "system":
                if self.takes_system:
                    out.append(self.start_system + content)
                    system, answer, first = True, False, False
            elif role == "user":
                if system:
                    step = self.system_to_user
                elif answer:
                    step = self.answer_to_user
                else:
                    step = self.start_user if first else self.answer_to_user
                out.append(step + content)
                system, answer, first = False, False, False
            elif role == "assistant":
                out.append(self.user_to_answer + content)
                system, answer, first = False, True, False
        if not answer:
            out.append(self.opening)
        return "".join(out)

    def go(self) -> str:
        """The Go template (Ollama's ``TEMPLATE``): the same steps over ``.Messages``."""
        system = (
            _go_text(self.start_system)
            + "{{ .Content }}{{ $system = true }}{{ $assistant = false }}{{ $first = false }}"
            if self.takes_system
            else ""
        )
        return (
            "{{ $first := true }}{{ $system := false }}{{ $assistant := false }}{{ range .Messages }}"
            f'{{{{ if eq .Role "system" }}}}{system}'
            '{{ else if eq .Role "user" }}'
            f"{{{{ if $system }}}}{_go_text(self.system_to_user)}"
            f"{{{{ else if $assistant }}}}{_go_text(self.answer_to_user)}"
            f"{{{{ else if $first }}}}{_go_text(self.start_user)}"
            f"{{{{ else }}}}{_go_text(self.answer_to_user)}{{{{ end }}}}"
            "{{ .Content }}{{ $system = false }}{{ $assistant = false }}{{ $first = false }}"
            f'{{{{ else if eq .Role "assistant" }}}}{_go_text(self.user_to_answer)}'
            "{{ .Content }}{{ $assistant = true }}{{ $system = false }}{{ $first = false }}"
            "{{ end }}{{ end }}"
            f"{{{{ if $assistant }}}}{{{{ else }}}}{_go_text(self.opening)}{{{{ end }}}}"
        )

    def stops(self, eos_token: str) -> list[str]:
        """What ends an answer: the EOS token, and the first special token after an answer's text."""
        found = [eos_token] if eos_token else []
        special = SPECIAL.search(self.answer_to_user)
        if special and special.group(0) not in found:
            found.append(special.group(0))
        return found


def derive(render: Render, bos_token: str = "") -> Pieces | None:
    """The pieces of the template ``render`` applies, when the Go template made of them renders every test
    chat as it does; ``None`` otherwise (or when the template cannot render them at all)."""
    plain = _split(
        _safe(render, [("user", USER1), ("assistant", ANSWER), ("user", USER2)]), [USER1, ANSWER, USER2]
    )
    if plain is None:
        return None
    start_user, user_to_answer, answer_to_user, opening = plain
    with_system = _split(
        _safe(render, [("system", SYSTEM), ("user", USER1), ("assistant", ANSWER), ("user", USER2)]),
        [SYSTEM, USER1, ANSWER, USER2],
    )
    takes_system = with_system is not None and with_system[2:] == [user_to_answer, answer_to_user, opening]
    pieces = Pieces(
        start_system=_without_bos(with_system[0], bos_token) if takes_system and with_system else "",
        system_to_user=with_system[1] if takes_system and with_system else "",
        user_to_answer=user_to_answer,
        answer_to_user=answer_to_user,
        start_user=_without_bos(start_user, bos_token),
        takes_system=takes_system,
        opening=opening,
    )
    for chat in TEST_CHATS:
        if not takes_system and chat[0][0] == "system":
            continue  # the template refuses one; Ollama's system prompt is left out, as it would be
        expected = _safe(render, chat)
        if expected is None or _without_bos(expected, bos_token) != pieces.render(chat):
            return None
    return pieces


def _safe(render: Render, chat: list[tuple[str, str]]) -> str | None:
    try:
        return render([{"role": role, "content": content} for role, content in chat])
    except Exception:  # a template that refuses the chat (raise_exception) or fails on it
        return None


def _split(text: str | None, marks: list[str]) -> list[str] | None:
    """The text before, between and after ``marks`` (each once, in order); ``None`` when they are not."""
    if text is None:
        return None
    pieces, rest = [], text
    for mark in marks:
        if rest.count(mark) != 1:
            return None
        before, rest = rest.split(mark)
        pieces.append(before)
    return [*pieces, rest]


def _without_bos(text: str, bos_token: str) -> str:
    return text[len(bos_token) :] if bos_token and text.startswith(bos_token) else text


def _go_text(text: str) -> str:
    """Literal text in a Go template: only ``{{`` would start an action."""
    return text.replace("{{", '{{ "{{" }}')
