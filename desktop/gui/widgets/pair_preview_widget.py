"""The first preference pairs of the data: each prompt above its chosen and rejected answers, side by side."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from desktop.core.data.tasks.preference import Pair, read_pair
from desktop.core.settings.config import Columns

MAX_PAIRS = 5
"""Pairs shown: enough to see that the columns are right."""
MAX_CHARS = 600
"""Characters of a prompt or an answer shown; the whole text (up to 4000) is in its tooltip."""
CHOSEN_STYLE = "background: #3aa55d; color: white; font-weight: 600; padding: 2px 6px; border-radius: 3px;"
REJECTED_STYLE = "background: #c9534f; color: white; font-weight: 600; padding: 2px 6px; border-radius: 3px;"


def _cut(text: str, keep_end: bool = False) -> str:
    text = text.strip()
    if len(text) <= MAX_CHARS:
        return text
    return "…" + text[1 - MAX_CHARS :] if keep_end else text[: MAX_CHARS - 1] + "…"


def _text_label(text: str, keep_end: bool = False) -> QLabel:
    label = QLabel(_cut(text, keep_end))
    label.setTextFormat(Qt.TextFormat.PlainText)  # the data's text, never read as HTML
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
    label.setToolTip(text[-4000:] if keep_end else text[:4000])
    return label


class PairPreviewWidget(QScrollArea):
    """The first pairs of a preference data set as the run reads them (:func:`read_pair`, so every
    layout shows its real prompt): the prompt, then the chosen answer beside the rejected one."""

    def __init__(self) -> None:
        super().__init__()
        self._shown: tuple | None = None  # the pairs on screen (the full check shows the same first rows)
        self.cards: list[QFrame] = []
        """One frame a row shown, in order."""
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self._body = QWidget()
        self._layout = QVBoxLayout(self._body)
        self._layout.setContentsMargins(4, 4, 4, 4)
        self.message = QLabel()
        self.message.setObjectName("hint")
        self.message.setWordWrap(True)
        self._layout.addWidget(self.message)
        self._layout.addStretch()
        self.setWidget(self._body)

    def show_pairs(self, rows: list[dict[str, Any]], columns: Columns) -> None:
        """The pairs of the first ``rows`` as ``columns`` maps them (a row holding none says so)."""
        if not columns.chosen or not columns.rejected:
            self._show([], self.tr("Choose the chosen and rejected columns to see the pairs."))
            return
        pairs = [
            read_pair(row, chosen=columns.chosen, rejected=columns.rejected, prompt=columns.prompt)
            for row in rows[:MAX_PAIRS]
        ]
        self._show(pairs, "" if pairs else self.tr("No rows to show."))

    def clear_pairs(self) -> None:
        """No pairs (no data, or data that could not be read)."""
        self._show([], "")

    def _show(self, pairs: list[Pair | None], message: str) -> None:
        if (pairs, message) == self._shown:
            return
        self._shown = (pairs, message)
        for card in self.cards:
            self._layout.removeWidget(card)
            card.deleteLater()
        self.cards = []
        self.message.setText(message)
        self.message.setVisible(bool(message))
        for number, pair in enumerate(pairs, start=1):
            card = self._card(number, pair)
            self._layout.insertWidget(self._layout.count() - 1, card)  # above the stretch
            self.cards.append(card)

    def _card(self, number: int, pair: Pair | None) -> QFrame:
        card = QFrame()
        card.setObjectName("card")
        grid = QGridLayout(card)
        grid.setContentsMargins(6, 6, 6, 6)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1)
        title = QLabel(self.tr("Pair {number}").format(number=number))
        title.setObjectName("cardTitle")
        grid.addWidget(title, 0, 0, 1, 2)
        if pair is None:
            problem = QLabel(
                self.tr("This row holds no readable pair: check the chosen, rejected and prompt columns.")
            )
            problem.setObjectName("fieldError")
            problem.setWordWrap(True)
            grid.addWidget(problem, 1, 0, 1, 2)
            return card
        # A long conversation keeps its end: the turn both answers reply to.
        prompt = _text_label(self._prompt_text(pair.prompt), keep_end=len(pair.prompt) > 1)
        prompt.setObjectName("pairPrompt")
        grid.addWidget(prompt, 1, 0, 1, 2)
        for column, (head, style, text) in enumerate(
            (
                (self.tr("Chosen"), CHOSEN_STYLE, pair.chosen),
                (self.tr("Rejected"), REJECTED_STYLE, pair.rejected),
            )
        ):
            header = QLabel(head)
            header.setStyleSheet(style)
            grid.addWidget(header, 2, column, Qt.AlignmentFlag.AlignLeft)
            grid.addWidget(_text_label(text), 3, column)
        return card

    def _prompt_text(self, messages: list[dict[str, str]]) -> str:
        """The prompt: one question as it is, a conversation as its turns, each after its speaker."""
        if len(messages) == 1 and messages[0]["role"] == "user":
            return self.tr("Prompt: {text}").format(text=messages[0]["content"])
        speakers = {"user": self.tr("User"), "assistant": self.tr("Assistant"), "system": self.tr("System")}
        return "\n".join(
            self.tr("{speaker}: {text}").format(
                speaker=speakers.get(m["role"], m["role"]), text=m["content"].strip()
            )
            for m in messages
        )
