"""Try a trained model: chat with a generative model (beside its base model on request), or see a
classifier's labels with their probabilities."""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt, Signal, Slot
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QDoubleSpinBox,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.core.results.tryit import FolderInfo, Playground, inspect_folder
from desktop.core.settings.config_sections import model_task
from desktop.core.system.errors import StudioError
from desktop.gui.app_support.workers import BackgroundTask
from desktop.gui.widgets.chat_answer import Outcome, Prompt, Request, answer
from desktop.gui.widgets.chat_conversation import Conversation, Reply, Turn
from desktop.gui.widgets.chat_view import ChatView
from desktop.gui.widgets.picture_drop import PictureDrop
from desktop.shared_ui import error_text

MAX_LABELS = 8
"""Labels shown for a prediction (the most likely ones)."""


class TryItPanel(QWidget):
    """A chat (or a prompt and its labels); the model loads on first use and stays loaded on a worker
    thread. What is typed (the message, the system prompt) stays when the model changes or fails."""

    text_streamed = Signal(str)
    """A new piece of the fine-tuned model's reply was shown (on the GUI thread)."""
    answered = Signal()
    """An answer is complete, stopped or failed (for tests and the status bar)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.info: FolderInfo | None = None
        self.conversation = Conversation()
        self.folder_label = QLabel(self.tr("No model yet: finish a run, or open a model folder."))
        self.folder_label.setObjectName("hint")
        self.folder_label.setWordWrap(True)
        self.open_button = QPushButton(self.tr("Open model folder…"))
        self.open_button.clicked.connect(self._browse)
        self.compare_check = QCheckBox(self.tr("Compare with the base model"))
        self.compare_check.toggled.connect(self._on_compare_toggled)
        self.top_row = QWidget()
        top = QHBoxLayout(self.top_row)
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.folder_label, 1)
        top.addWidget(self.compare_check)
        top.addWidget(self.open_button)

        self.system_toggle = QToolButton(text=self.tr("System prompt"), checkable=True, autoRaise=True)
        self.system_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.system_toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.system_toggle.setToolTip(self.tr("Show or hide the system prompt"))
        self.system_toggle.toggled.connect(self._on_system_toggle_toggled)
        self.system_preview = QLabel()
        self.system_preview.setObjectName("hint")
        self.system_preview.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.system_prompt = QPlainTextEdit()
        self.system_prompt.setPlaceholderText(
            self.tr("What the model is told before the conversation, e.g. “You are a helpful assistant.”")
        )
        self.system_prompt.setToolTip(self.tr("Sent first, as the system message, with every request"))
        self.system_prompt.setMaximumHeight(70)
        self.system_prompt.setVisible(False)
        self.system_prompt.textChanged.connect(self._on_system_prompt_text_changed)
        self.system_box = QWidget()
        system = QGridLayout(self.system_box)
        system.setContentsMargins(0, 0, 0, 0)
        system.addWidget(self.system_toggle, 0, 0)
        system.addWidget(self.system_preview, 0, 1)
        system.addWidget(self.system_prompt, 1, 0, 1, 2)
        system.setColumnStretch(1, 1)

        self.output = ChatView()
        self.base_output = ChatView(base=True)  # the base model's answers, beside the fine-tuned ones
        self.output_title = QLabel(self.tr("Fine-tuned"))
        self.base_title = QLabel()
        for view in (self.output, self.base_output):
            view.answer_copied.connect(self._on_view_answer_copied)
        self.outputs = QWidget()
        outputs = QGridLayout(self.outputs)
        outputs.setContentsMargins(0, 0, 0, 0)
        outputs.addWidget(self.output_title, 0, 0)
        outputs.addWidget(self.base_title, 0, 1)
        outputs.addWidget(self.output, 1, 0)
        outputs.addWidget(self.base_output, 1, 1)
        outputs.setRowStretch(1, 1)
        self.labels_area = QWidget()
        self.labels_grid = QGridLayout(self.labels_area)
        self.labels_grid.setContentsMargins(0, 0, 0, 0)

        self.prompt = QPlainTextEdit()
        self.prompt.setMaximumHeight(80)
        self.prompt.installEventFilter(self)  # Ctrl+Enter sends
        self.run_button = QPushButton(self.tr("Try it"))
        self.run_button.setObjectName("primary")
        self.run_button.setToolTip(self.tr("Ctrl+Enter in the text box does the same"))
        self.run_button.clicked.connect(self.run_prompt)
        self.stop_button = QPushButton(self.tr("Stop"))
        self.stop_button.setToolTip(self.tr("End the answer after the current token; what it said stays"))
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self._on_stop_clicked)
        self.input_row = QWidget()
        input_row = QHBoxLayout(self.input_row)
        input_row.setContentsMargins(0, 0, 0, 0)
        self.picture = PictureDrop()  # an image classifier's input: answered as soon as it is given
        self.picture.picture_changed.connect(self.run_prompt)
        input_row.addWidget(self.picture, 1)
        input_row.addWidget(self.prompt, 1)

        self.max_tokens = QSpinBox(minimum=1, maximum=4096, value=128)
        self.max_tokens.setToolTip(self.tr("The longest reply, in tokens"))
        self.temperature = QDoubleSpinBox(minimum=0.0, maximum=2.0, singleStep=0.1, value=0.7)
        self.temperature.setToolTip(self.tr("0 always gives the most likely reply; higher is more varied"))
        self.temperature.valueChanged.connect(self._on_temperature_value_changed)
        self.top_p = QDoubleSpinBox(minimum=0.05, maximum=1.0, singleStep=0.05, value=0.95)
        self.top_p.setToolTip(
            self.tr("Sample only from the likeliest words that together make up this share (1 = all)")
        )
        self.chat_check = QCheckBox(self.tr("Use the chat template"))
        self.chat_check.setToolTip(
            self.tr(
                "Send the whole conversation through the chat template, as the model was trained; "
                "off: each message is answered on its own"
            )
        )
        self.chat_check.toggled.connect(self._show_task)
        self.regenerate_button = QPushButton(self.tr("Regenerate"))
        self.regenerate_button.setToolTip(self.tr("Drop the last answer and ask again"))
        self.regenerate_button.clicked.connect(self.regenerate)
        self.clear_button = QPushButton(self.tr("Clear"))
        self.clear_button.setToolTip(self.tr("Start a new conversation (the system prompt stays)"))
        self.clear_button.clicked.connect(self.clear_conversation)
        buttons = QGridLayout()  # what acts on the conversation, beside the message box
        buttons.addWidget(self.run_button, 0, 0)
        buttons.addWidget(self.stop_button, 0, 1)
        buttons.addWidget(self.regenerate_button, 1, 0)
        buttons.addWidget(self.clear_button, 1, 1)
        buttons.setRowStretch(2, 1)
        input_row.addLayout(buttons)
        self.options = QWidget()
        options = QHBoxLayout(self.options)
        options.setContentsMargins(0, 0, 0, 0)
        options.addWidget(QLabel(self.tr("Max new tokens:")))
        options.addWidget(self.max_tokens)
        self.sampling_labels = (QLabel(self.tr("Temperature:")), QLabel(self.tr("Top-p:")))
        for label, box in zip(self.sampling_labels, (self.temperature, self.top_p), strict=True):
            options.addWidget(label)
            options.addWidget(box)
        options.addWidget(self.chat_check)
        options.addStretch()

        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumWidth(120)
        self.busy.setVisible(False)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.details_button = QToolButton(text=self.tr("Details"), checkable=True)
        self.details = QPlainTextEdit(readOnly=True)
        self.details.setMaximumHeight(120)
        self.details_button.toggled.connect(self.details.setVisible)
        self.status_row = QWidget()
        status = QHBoxLayout(self.status_row)
        status.setContentsMargins(0, 0, 0, 0)
        status.addWidget(self.busy)
        status.addWidget(self.status, 1)
        status.addWidget(self.details_button)
        self.setLayout(QVBoxLayout())  # filled by _arrange, in the order the task reads

        self._playground: Playground | None = None
        self._base: Playground | None = None
        self._stop = threading.Event()
        self._task: BackgroundTask | None = None
        self._pending: Turn | None = None
        """The turn being answered (``None`` when it was cleared away meanwhile)."""
        self._arranged_for: bool | None = None
        self._on_system_prompt_text_changed()
        self._show_task()

    # ------------------------------------------------------------------ model

    def set_folder(self, folder: str | Path, run_config: Path | None = None) -> bool:
        """Use the model in ``folder``; ``False`` (with the reason shown) when it holds none.

        The message being typed and the system prompt are kept; so is the conversation when the model
        is of the same kind (the same task, taught chats or not) as the one before.
        """
        try:
            info = inspect_folder(folder, run_config)
        except StudioError as exc:
            self.status.setText(error_text(exc, " "))
            self.details_button.setVisible(False)  # an earlier failure's details are not this one's
            self.details.setVisible(False)
            return False
        previous, self.info = self.info, info
        task = model_task(info.task)
        if previous is not None and model_task(previous.task) != task:
            self.picture.clear()  # another kind of model: the last one's picture is not this one's
        kind = {
            "classification": self.tr("text classification"),
            "causal-lm": self.tr("text generation"),
            "seq2seq": self.tr("sequence to sequence"),
            "image-classification": self.tr("image classification"),
            "vision-chat": self.tr("pictures and text"),
        }[task]  # a preference run's model is a chat model
        if info.adapter:
            described = self.tr("Model: {folder}, {kind} (LoRA adapters on {base})").format(
                folder=info.folder, kind=kind, base=info.base_model
            )
        else:
            described = self.tr("Model: {folder}, {kind}").format(folder=info.folder, kind=kind)
        self.folder_label.setText(described)
        self.folder_label.setToolTip(str(info.folder))
        self.chat_check.setChecked(info.chat)
        self.compare_check.setVisible(bool(info.trained_from) and info.task != "vision-chat")
        self.compare_check.setToolTip(
            self.tr("Answer with {model}, the model the run started from, beside the fine-tuned one").format(
                model=info.trained_from
            )
        )
        self.base_title.setText(self.tr("Base model ({model})").format(model=info.trained_from))
        self.output_title.setText(self.tr("Fine-tuned"))
        if task == "image-classification":
            said = self.tr("Drop, paste or choose a picture; the model loads on first use.")
        elif task == "vision-chat":
            said = self.tr("Give a picture, ask about it and press Send; the model loads on first use.")
        elif task == "classification":
            said = self.tr("Type a text and press Try it; the model loads on first use.")
        else:
            said = self.tr("Type a message and press Send; the model loads on first use.")
        if previous is not None and self.conversation.turns:
            if (model_task(previous.task), previous.chat) == (task, info.chat):
                said = self.tr(
                    "The conversation is kept: this model answers from the next message on; each answer "
                    "shows the model that wrote it."
                )
            else:
                self.conversation.turns.clear()
                self._pending = None
                said = self.tr("Another kind of model: the conversation was cleared (your message is kept).")
        self.status.setText(said)
        self._show_task()
        self.show_conversation()
        return True

    def _show_task(self) -> None:
        task = model_task(self.info.task) if self.info else None
        generative = task in ("causal-lm", "seq2seq", "vision-chat")
        classifier = task in ("classification", "image-classification")
        self._arrange(classifier)
        self.picture.setVisible(task in ("image-classification", "vision-chat"))
        self.prompt.setVisible(task != "image-classification")
        self.options.setVisible(generative)
        for widget in (self.temperature, self.top_p, *self.sampling_labels):
            widget.setVisible(task != "vision-chat")  # a picture's answer is the likeliest
        self.chat_check.setVisible(task == "causal-lm")
        self.system_box.setVisible(self._chat())
        for button in (self.stop_button, self.regenerate_button, self.clear_button):
            button.setVisible(generative)
        self.outputs.setVisible(not classifier)
        comparing = self._comparing()
        for widget in (self.output_title, self.base_title, self.base_output):
            widget.setVisible(comparing and generative)
        self.labels_area.setVisible(classifier)
        self.run_button.setText(self.tr("Send") if generative else self.tr("Try it"))
        self.details_button.setVisible(False)
        self.details.setVisible(False)
        self._enable()
        if self._chat():
            placeholder = self.tr("A message; the whole conversation is sent (Ctrl+Enter sends)")
        else:
            placeholder = {
                "classification": self.tr("A text to classify, e.g. a review (Ctrl+Enter sends)"),
                "causal-lm": self.tr("An instruction or a question (Ctrl+Enter sends)"),
                "seq2seq": self.tr("A text to transform, e.g. a sentence to translate (Ctrl+Enter sends)"),
                "vision-chat": self.tr("A question about the picture (Ctrl+Enter sends)"),
            }.get(task or "", "")
        self.prompt.setPlaceholderText(placeholder)

    def _arrange(self, classification: bool) -> None:
        """A chat reads downwards to the message box; a classifier's labels come under its text."""
        if self._arranged_for is classification:
            return
        self._arranged_for = classification
        layout = self.layout()
        while layout.count():
            layout.takeAt(0)
        if classification:
            order = [self.top_row, self.input_row, self.status_row, self.details, self.labels_area]
            order += [self.system_box, self.outputs, self.options]  # hidden
        else:
            order = [self.top_row, self.system_box, self.outputs, self.input_row, self.options]
            order += [self.status_row, self.details, self.labels_area]
        for widget in order:
            layout.addWidget(widget, 1 if widget is self.outputs else 0)
        if classification:
            layout.addStretch(1)

    def _chat(self) -> bool:
        """Whether the whole conversation goes to the model through its chat template."""
        return bool(self.info) and model_task(self.info.task) == "causal-lm" and self.chat_check.isChecked()

    def _comparing(self) -> bool:
        return self.compare_check.isChecked() and not self.compare_check.isHidden()

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, self.tr("Open a model folder"))
        if folder:
            self.set_folder(folder)

    # ------------------------------------------------------------------ asking

    def run_prompt(self) -> None:
        """Send the typed text to the model (loading it first if needed): a chat's next message, or a
        text to classify."""
        text = self.prompt.toPlainText().strip()
        if self.info is None or self._task is not None:
            return
        if self.info.task in ("image-classification", "vision-chat"):
            picture = self.picture.picture
            if picture is None:
                self.status.setText(self.tr("Drop, paste or choose a picture first."))
                return
            if self.info.task == "image-classification":
                self._start(Request(picture, picture if self._comparing() else None))
                return
            if not text:  # a picture given before its question: asked once the question is sent
                self.status.setText(self.tr("Ask something about the picture, then press Send."))
                return
            name = picture.name if isinstance(picture, Path) else self.tr("pasted picture")
            turn = Turn(f"[{name}] {text}")
            turn.answer = Reply(model=Path(self.info.folder).name)
            self.conversation.turns.append(turn)
            self._pending = turn
            self.prompt.clear()
            self.show_conversation()
            self._start(Request((picture, text), None, self.max_tokens.value()))
            return
        if not text:
            self.status.setText(self.tr("Type a text first."))
            return
        if self.info.task == "classification":
            base_prompt = text if self._comparing() else None
            self._start(Request(text, base_prompt))
            return
        turn = Turn(text)
        self.conversation.turns.append(turn)
        self.prompt.clear()
        self._ask(turn)

    def regenerate(self) -> None:
        """Drop the last answer and ask again with the same conversation."""
        if self.info is None or self._task is not None or not self.conversation.turns:
            return
        self._ask(self.conversation.turns[-1])

    def clear_conversation(self) -> None:
        """Start a new conversation; the system prompt and the message being typed stay."""
        if self._task is not None:
            return
        self.conversation.turns.clear()
        self.show_conversation()
        self.status.setText(self.tr("A new conversation."))

    def _ask(self, turn: Turn) -> None:
        comparing, chat = self._comparing(), self._chat()
        turn.answer = Reply(model=Path(self.info.folder).name if self.info is not None else "")
        turn.base = Reply() if comparing else None
        system = self.system_prompt.toPlainText() if chat else ""
        prompt: Prompt = self.conversation.messages(system, turn) if chat else turn.user
        base_prompt: Prompt | None = None
        if comparing:
            base_prompt = self.conversation.messages(system, turn, base=True) if chat else turn.user
        self._pending = turn
        self.show_conversation()
        request = Request(
            prompt, base_prompt, self.max_tokens.value(), self.temperature.value(), self.top_p.value(), chat
        )
        self._start(request)

    def _start(self, request: Request) -> None:
        self.details_button.setVisible(False)
        self.details.setVisible(False)
        loaded = self._playground is not None and self._playground.info == self.info
        self.status.setText(self.tr("Working…") if loaded else self.tr("Loading the model and working…"))
        self._stop.clear()
        info, playground, base, stop = self.info, self._playground, self._base, self._stop
        self._playground = self._base = None  # the task owns them until it returns
        task = BackgroundTask(lambda: answer(playground, base, info, request, stop, task.report), self, stop)
        task.progressed.connect(self._on_task_progressed)
        task.finished.connect(self._on_task_finished)
        task.failed.connect(self._on_task_failed)
        self._task = task
        self._busy(True)
        task.start()

    def _on_stop_clicked(self) -> None:
        self._stop.set()
        self.stop_button.setEnabled(False)

    def _busy(self, busy: bool) -> None:
        self.open_button.setEnabled(not busy)
        self.picture.setEnabled(not busy)  # a picture given meanwhile would be shown, not answered
        self.stop_button.setEnabled(busy)
        self.busy.setVisible(busy)
        self._enable()

    def _enable(self) -> None:
        idle = self._task is None
        self.run_button.setEnabled(idle and self.info is not None)
        self.regenerate_button.setEnabled(idle and self.info is not None and bool(self.conversation.turns))
        self.clear_button.setEnabled(idle and bool(self.conversation.turns))

    def show_conversation(self) -> None:
        """Show :attr:`conversation` as it stands (in both views) and what can be done with it."""
        for view in (self.output, self.base_output):
            view.show_conversation(self.conversation)
        self._enable()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Ctrl+Enter in the message box sends it."""
        if (
            watched is self.prompt
            and isinstance(event, QKeyEvent)
            and event.type() == QEvent.Type.KeyPress
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            and event.modifiers() & Qt.KeyboardModifier.ControlModifier
        ):
            self.run_prompt()
            return True
        return super().eventFilter(watched, event)

    # ------------------------------------------------------------------ answers

    @Slot(object)
    def _on_task_progressed(self, item: tuple[str, object]) -> None:
        kind, value = item
        if kind == "loaded":
            self.status.setText(self.tr("Model loaded. Working…"))
            return
        if kind == "loading_base":
            self.status.setText(self.tr("Loading the base model…"))
            return
        turn = self._pending
        if turn is None:  # the conversation was cleared meanwhile
            return
        piece = str(value)
        if kind == "base_text" and turn.base is not None:
            turn.base.text += piece
            self.base_output.stream(piece)
        elif kind == "text":
            turn.answer.text += piece
            self.output.stream(piece)
            self.text_streamed.emit(piece)
        self.status.setText(self.tr("Generating…"))

    @Slot(object)
    def _on_task_finished(self, outcome: Outcome) -> None:
        self._task = None
        self._playground, self._base = outcome.playground, outcome.base
        if self._playground.info != self.info:  # the folder changed meanwhile: let go of the old model
            self.release_model()
        if isinstance(outcome.answer, str):
            self._show_generated(outcome)
        else:
            self.show_labels(outcome.answer, outcome.base_answer)

    def _on_compare_toggled(self, on: bool) -> None:
        self._show_task()
        if not on and self._base is not None and self._task is None:  # its memory back at once
            self._base.release()
            self._base = None

    def _on_system_toggle_toggled(self, shown: bool) -> None:
        self.system_prompt.setVisible(shown)
        self.system_preview.setVisible(not shown)
        self.system_toggle.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        if shown:
            self.system_prompt.setFocus()

    def _on_system_prompt_text_changed(self) -> None:
        text = " ".join(self.system_prompt.toPlainText().split())
        self.system_preview.setText(text or self.tr("(none)"))

    def _on_view_answer_copied(self, _text: str) -> None:
        self.status.setText(self.tr("The answer is on the clipboard."))

    @Slot(object, str)
    def _on_task_failed(self, exc: object, detail: str) -> None:
        self._task = None
        turn, self._pending = self._pending, None
        if turn is not None and self.conversation.holds(turn):  # the message goes back to the box
            self.conversation.turns.remove(turn)
            typed = self.prompt.toPlainText()
            self.prompt.setPlainText(f"{turn.user}\n\n{typed}" if typed.strip() else turn.user)
            self.show_conversation()
        message = error_text(exc, " ")
        self._show_failure(message or type(exc).__name__, detail)

    def show_labels(
        self, ranked: list[tuple[str, float]], base: list[tuple[str, float]] | None = None
    ) -> None:
        """A bar per label of ``ranked`` (label, probability), the likeliest first; beside the base
        model's when ``base`` is given."""
        while self.labels_grid.count():
            self.labels_grid.takeAt(0).widget().deleteLater()
        before = dict(base or [])
        first = 0
        if base is not None:  # a header over the two columns of bars
            self.labels_grid.addWidget(QLabel(self.tr("Fine-tuned")), 0, 1)
            self.labels_grid.addWidget(QLabel(self.base_title.text()), 0, 2)
            first = 1
        for row, (label, probability) in enumerate(ranked[:MAX_LABELS]):
            name = QLabel(f"<b>{label}</b>" if row == 0 else label)
            self.labels_grid.addWidget(name, first + row, 0)
            self.labels_grid.addWidget(self._bar(probability), first + row, 1)
            if base is not None:
                self.labels_grid.addWidget(self._bar(before.get(label, 0.0)), first + row, 2)
        best, probability = ranked[0]
        said = self.tr("Predicted: {label} ({probability:.1%})").format(label=best, probability=probability)
        if base:
            base_best, base_probability = max(base, key=lambda pair: pair[1])
            said += "   " + self.tr("Base model: {label} ({probability:.1%})").format(
                label=base_best, probability=base_probability
            )
        self.status.setText(said)
        self._busy(False)
        self.answered.emit()

    @staticmethod
    def _bar(probability: float) -> QProgressBar:
        bar = QProgressBar()
        bar.setRange(0, 1000)
        bar.setValue(round(probability * 1000))
        bar.setFormat(f"{probability:.1%}")
        return bar

    def _show_generated(self, outcome: Outcome) -> None:
        turn, self._pending = self._pending, None
        text = str(outcome.answer)
        if turn is not None:
            turn.answer = Reply(text, done=True, stopped=outcome.stopped, model=turn.answer.model)
            base = outcome.base_answer
            turn.base = None if base is None else Reply(str(base), done=True, stopped=outcome.base_stopped)
            self.show_conversation()
        self._busy(False)
        if outcome.stopped or outcome.base_stopped:
            self.status.setText(self.tr("Stopped."))
        elif not text:
            self.status.setText(self.tr("The model ended its reply at once (it produced no text)."))
        else:
            self.status.setText(self.tr("Done."))
        self.answered.emit()

    def _show_failure(self, message: str, detail: str) -> None:
        self._busy(False)
        self.status.setText(self.tr("Could not run the model: {error}").format(error=message))
        self.details.setPlainText(detail)
        self.details_button.setVisible(True)
        self.answered.emit()

    def _on_temperature_value_changed(self, value: float) -> None:
        self.top_p.setEnabled(value > 0)  # greedy answers ignore it

    def release_model(self) -> None:
        """Free the loaded model (its files are no longer held open), e.g. before its folder is replaced."""
        for playground in (self._playground, self._base):
            if playground is not None:
                playground.release()
        self._playground = self._base = None

    def shutdown(self) -> None:
        """Stop any generation and free the model; a model still loading is left to the app's exit."""
        self._stop.set()
        if self._task is not None:
            self._task.cancel()
        self.release_model()
