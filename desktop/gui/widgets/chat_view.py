"""A chat transcript: the user's messages and one model's answers, each answer with a Copy button."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.gui.widgets.chat_conversation import Conversation, Reply

STYLE = """
QWidget#chatContent { background: palette(base); }
QFrame#chatUser { background: palette(window); border-radius: 8px; }
QFrame#chatModel { background: palette(base); border: 1px solid palette(mid); border-radius: 8px; }
QLabel#chatRole { font-weight: 600; }
"""
INDENT = 48
"""Pixels a message stands in from the other side (the user's from the left, a model's from the right)."""


class MessageBubble(QFrame):
    """One message: who said it, the text (selectable) and, for an answer, a Copy button."""

    copy_requested = Signal(str)
    """The answer's text, when its Copy button is clicked."""

    def __init__(self, role: str, text: str, answer: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatModel" if answer else "chatUser")
        self.role = QLabel(role)
        self.role.setObjectName("chatRole")
        self.note = QLabel()  # "stopped", "waiting", "not asked"
        self.note.setObjectName("hint")
        self.text = QLabel(text)
        self.text.setTextFormat(Qt.TextFormat.PlainText)
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # A long word (a link, a path) is cut at the edge rather than widening the whole transcript.
        self.text.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.copy_button = QToolButton(text=self.tr("Copy"))
        self.copy_button.setAutoRaise(True)
        self.copy_button.setToolTip(self.tr("Copy this answer to the clipboard"))
        self.copy_button.clicked.connect(self._on_copy_button_clicked)
        self.copy_button.setVisible(answer)
        head = QHBoxLayout()
        head.setContentsMargins(0, 0, 0, 0)
        head.setSpacing(8)
        head.addWidget(self.role)
        head.addWidget(self.note)
        head.addStretch()
        head.addWidget(self.copy_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 8)
        layout.setSpacing(2)
        layout.addLayout(head)
        layout.addWidget(self.text)

    def append(self, piece: str) -> None:
        """Add a streamed piece to the text."""
        if not self.text.isHidden():
            self.text.setText(self.text.text() + piece)
        else:
            self.text.setText(piece)
            self.text.setVisible(True)

    def _on_copy_button_clicked(self) -> None:
        self.copy_requested.emit(self.text.text())


class ChatView(QScrollArea):
    """The transcript of a conversation as one model saw it: the user's turns and that model's answers.

    Args:
        base: Show the base model's answers (``Turn.base``) instead of the fine-tuned model's.
    """

    answer_copied = Signal(str)
    """An answer's text was put on the clipboard."""

    def __init__(self, base: bool = False, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.base = base
        self.you = self.tr("You")
        self.model = self.tr("Base model") if base else self.tr("Model")
        self.bubbles: list[MessageBubble] = []
        self._follow = True  # keep the newest message in sight while the user has not scrolled up
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet(STYLE)
        self.empty = QLabel(self.tr("The conversation appears here."))
        self.empty.setObjectName("hint")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        content = QWidget()
        content.setObjectName("chatContent")
        self._column = QVBoxLayout(content)
        self._column.setSpacing(8)
        self._column.addWidget(self.empty)
        self._column.addStretch()
        self.setWidget(content)
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._on_scroll_value_changed)
        bar.rangeChanged.connect(self._on_scroll_range_changed)

    def set_model_name(self, name: str) -> None:
        """The heading over this view's answers (the next time the transcript is shown)."""
        self.model = name

    def show_conversation(self, conversation: Conversation) -> None:
        """Show every turn of ``conversation`` (its replies as they stand now)."""
        for bubble in self.bubbles:
            self._column.removeWidget(bubble.parentWidget())
            bubble.parentWidget().deleteLater()
        self.bubbles = []
        self.empty.setVisible(not conversation.turns)
        for turn in conversation.turns:
            self._add(self.you, turn.user, None, answer=False)
            reply = turn.base if self.base else turn.answer
            writer = reply.model if reply is not None and reply.model else self.model
            self._add(writer, "", reply, answer=True)
        self._follow = True

    def _add(self, role: str, text: str, reply: Reply | None, answer: bool) -> None:
        bubble = MessageBubble(role, reply.text if reply else text, answer)
        if reply is None and answer:  # the base model was not asked this turn
            bubble.note.setText(self.tr("not asked"))
            bubble.text.setVisible(False)
            bubble.copy_button.setVisible(False)
        elif reply is not None and not reply.done:
            bubble.note.setText(self.tr("answering…"))
            bubble.text.setVisible(bool(reply.text))
            bubble.copy_button.setVisible(False)  # until the answer is whole
        elif reply is not None and reply.stopped:
            bubble.note.setText(self.tr("stopped"))
        elif reply is not None and not reply.text:
            bubble.note.setText(self.tr("(no text: the model ended its answer at once)"))
            bubble.text.setVisible(False)
        bubble.copy_requested.connect(self._on_bubble_copy_requested)
        row = QWidget()
        line = QHBoxLayout(row)
        line.setContentsMargins(0 if answer else INDENT, 0, INDENT if answer else 0, 0)
        line.addWidget(bubble)
        self._column.insertWidget(self._column.count() - 1, row)
        self.bubbles.append(bubble)

    def stream(self, piece: str) -> None:
        """Add a piece of the answer being given to the newest answer."""
        if self.bubbles:
            self.bubbles[-1].append(piece)

    def answers(self) -> list[MessageBubble]:
        """The answers' bubbles, oldest first."""
        return [bubble for bubble in self.bubbles if bubble.objectName() == "chatModel"]

    def toPlainText(self) -> str:
        """The transcript as plain text, a paragraph per message."""
        return "\n\n".join(
            f"{bubble.role.text()}: {bubble.text.text()}" for bubble in self.bubbles if bubble.text.text()
        )

    def _on_bubble_copy_requested(self, text: str) -> None:
        QGuiApplication.clipboard().setText(text)
        self.answer_copied.emit(text)

    def _on_scroll_value_changed(self, value: int) -> None:
        self._follow = value >= self.verticalScrollBar().maximum() - 4

    def _on_scroll_range_changed(self, _minimum: int, maximum: int) -> None:
        if self._follow:
            self.verticalScrollBar().setValue(maximum)
