"""Try a trained model: type a text, see the label with its probabilities or the generated reply."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Signal, Slot
from PySide6.QtGui import QTextCursor
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
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.core.results.tryit import FolderInfo, Playground, base_playground, inspect_folder
from desktop.core.settings.config_sections import model_task
from desktop.core.system.errors import StudioError
from desktop.gui.app_support.workers import BackgroundTask
from desktop.shared_ui import error_text

MAX_LABELS = 8
"""Labels shown for a prediction (the most likely ones)."""


def _answer(
    playground: Playground | None,
    base: Playground | None,
    info: FolderInfo,
    prompt: str,
    options: tuple[int, float, bool, bool],
    stop: threading.Event,
    report: Callable[[object], None],
) -> tuple[Playground, Playground | None, object, object]:
    """Load the model if needed, then classify or generate (on a worker thread: no widgets here);
    with ``compare`` (the options' last) the base model answers too, after the fine-tuned one."""
    if playground is None or playground.info != info:
        if playground is not None:
            playground.release()
        playground = Playground(info)
        playground.load()
        report(("loaded", None))
    max_new_tokens, temperature, chat, compare = options
    if base is not None and (not compare or base.made_for != info):  # not wanted, or another run's
        base.release()
        base = None
    if info.task == "classification":
        answer: object = playground.classify(prompt)
    else:
        answer = playground.generate(
            prompt, max_new_tokens, temperature, chat, lambda piece: report(("text", piece)), stop
        )
    if not compare:
        return playground, None, answer, None
    if base is None:
        base = base_playground(info)
        report(("loading_base", None))
        base.load()
    if info.task == "classification":
        return playground, base, answer, base.classify(prompt)
    base_answer = base.generate(
        prompt, max_new_tokens, temperature, chat, lambda piece: report(("base_text", piece)), stop
    )
    return playground, base, answer, base_answer


class TryItPanel(QWidget):
    """Prompt in, answer out; the model loads on first use and stays loaded on a worker thread."""

    text_streamed = Signal(str)
    """A new piece of the reply was shown (on the GUI thread)."""
    answered = Signal()
    """An answer is complete (for tests and the status bar)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.info: FolderInfo | None = None
        self.folder_label = QLabel(self.tr("No model yet: finish a run, or open a model folder."))
        self.folder_label.setObjectName("hint")
        self.folder_label.setWordWrap(True)
        self.open_button = QPushButton(self.tr("Open model folder…"))
        self.open_button.clicked.connect(self._browse)
        self.prompt = QPlainTextEdit()
        self.prompt.setMaximumHeight(90)
        self.max_tokens = QSpinBox(minimum=1, maximum=4096, value=128)
        self.max_tokens.setToolTip(self.tr("The longest reply, in tokens"))
        self.temperature = QDoubleSpinBox(minimum=0.0, maximum=2.0, singleStep=0.1, value=0.7)
        self.temperature.setToolTip(self.tr("0 always gives the most likely reply; higher is more varied"))
        self.compare_check = QCheckBox(self.tr("Compare with the base model"))
        self.compare_check.toggled.connect(self._on_compare_toggled)
        self.chat_check = QCheckBox(self.tr("Use the chat template"))
        self.chat_check.setToolTip(self.tr("Send the text as a user's message, as the model was trained"))
        self.run_button = QPushButton(self.tr("Try it"))
        self.run_button.setObjectName("primary")
        self.run_button.clicked.connect(self.run_prompt)
        self.stop_button = QPushButton(self.tr("Stop"))
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self._on_stop_clicked)
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumWidth(120)
        self.busy.setVisible(False)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.output = QPlainTextEdit(readOnly=True)
        self.base_output = QPlainTextEdit(readOnly=True)  # the base model's reply, beside the output
        self.output_title = QLabel(self.tr("Fine-tuned"))
        self.base_title = QLabel()
        self.outputs = QWidget()
        outputs = QGridLayout(self.outputs)
        outputs.setContentsMargins(0, 0, 0, 0)
        outputs.addWidget(self.output_title, 0, 0)
        outputs.addWidget(self.base_title, 0, 1)
        outputs.addWidget(self.output, 1, 0)
        outputs.addWidget(self.base_output, 1, 1)
        self.labels_area = QWidget()
        self.labels_grid = QGridLayout(self.labels_area)
        self.labels_grid.setContentsMargins(0, 0, 0, 0)
        self.details_button = QToolButton(text=self.tr("Details"), checkable=True)
        self.details = QPlainTextEdit(readOnly=True)
        self.details.setMaximumHeight(120)
        self.details_button.toggled.connect(self.details.setVisible)

        self.options = QWidget()
        options = QHBoxLayout(self.options)
        options.setContentsMargins(0, 0, 0, 0)
        options.addWidget(QLabel(self.tr("Max new tokens:")))
        options.addWidget(self.max_tokens)
        options.addWidget(QLabel(self.tr("Temperature:")))
        options.addWidget(self.temperature)
        options.addWidget(self.chat_check)
        options.addStretch()
        top = QHBoxLayout()
        top.addWidget(self.folder_label, 1)
        top.addWidget(self.compare_check)
        top.addWidget(self.open_button)
        actions = QHBoxLayout()
        actions.addWidget(self.run_button)
        actions.addWidget(self.stop_button)
        actions.addWidget(self.busy)
        actions.addWidget(self.status, 1)
        actions.addWidget(self.details_button)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.prompt)
        layout.addWidget(self.options)
        layout.addLayout(actions)
        layout.addWidget(self.details)
        layout.addWidget(self.labels_area)
        layout.addWidget(self.outputs, 100)
        layout.addStretch(1)  # takes the room when the output is hidden (classification)

        self._playground: Playground | None = None
        self._base: Playground | None = None
        self._stop = threading.Event()
        self._task: BackgroundTask | None = None
        self._show_task()

    # ------------------------------------------------------------------ model

    def set_folder(self, folder: str | Path, run_config: Path | None = None) -> bool:
        """Use the model in ``folder``; ``False`` (with the reason shown) when it holds none."""
        try:
            info = inspect_folder(folder, run_config)
        except StudioError as exc:
            self.status.setText(error_text(exc, " "))
            return False
        self.info = info
        kind = {
            "classification": self.tr("text classification"),
            "causal-lm": self.tr("text generation"),
            "seq2seq": self.tr("sequence to sequence"),
        }[model_task(info.task)]  # a preference run's model is a chat model
        if info.adapter:
            described = self.tr("Model: {folder}, {kind} (LoRA adapters on {base})").format(
                folder=info.folder, kind=kind, base=info.base_model
            )
        else:
            described = self.tr("Model: {folder}, {kind}").format(folder=info.folder, kind=kind)
        self.folder_label.setText(described)
        self.folder_label.setToolTip(str(info.folder))
        self.chat_check.setChecked(info.chat)
        self.compare_check.setVisible(bool(info.trained_from))
        self.compare_check.setToolTip(
            self.tr("Answer with {model}, the model the run started from, beside the fine-tuned one").format(
                model=info.trained_from
            )
        )
        self.base_title.setText(self.tr("Base model ({model})").format(model=info.trained_from))
        self.status.setText(self.tr("Type a text and press Try it; the model loads on first use."))
        self._show_task()
        return True

    def _show_task(self) -> None:
        task = model_task(self.info.task) if self.info else None
        generative = task in ("causal-lm", "seq2seq")
        self.options.setVisible(generative)
        self.chat_check.setVisible(task == "causal-lm")
        self.stop_button.setVisible(generative)
        self.outputs.setVisible(task != "classification")
        comparing = self.compare_check.isChecked() and not self.compare_check.isHidden()
        for widget in (self.output_title, self.base_title, self.base_output):
            widget.setVisible(comparing and generative)
        self.labels_area.setVisible(task == "classification")
        self.run_button.setEnabled(self.info is not None)
        self.details_button.setVisible(False)
        self.details.setVisible(False)
        self.prompt.setPlaceholderText(
            {
                "classification": self.tr("A text to classify, e.g. a review"),
                "causal-lm": self.tr("An instruction or a question"),
                "seq2seq": self.tr("A text to transform, e.g. a sentence to translate"),
            }.get(task or "", "")
        )

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, self.tr("Open a model folder"))
        if folder:
            self.set_folder(folder)

    # ------------------------------------------------------------------ asking

    def run_prompt(self) -> None:
        """Send the prompt to the model (loading it first if needed)."""
        text = self.prompt.toPlainText().strip()
        if self.info is None or not self.run_button.isEnabled():
            return
        if not text:
            self.status.setText(self.tr("Type a text first."))
            return
        self.output.clear()
        self.base_output.clear()
        self.details_button.setVisible(False)
        self.details.setVisible(False)
        self._busy(True)
        self.status.setText(self.tr("Loading the model and working…"))
        self._stop.clear()
        info, playground, base, stop = self.info, self._playground, self._base, self._stop
        compare = self.compare_check.isChecked() and not self.compare_check.isHidden()
        options = (self.max_tokens.value(), self.temperature.value(), self.chat_check.isChecked(), compare)
        self._playground = self._base = None  # the task owns them until it returns
        task = BackgroundTask(
            lambda: _answer(playground, base, info, text, options, stop, task.report), self, stop
        )
        task.progressed.connect(self._on_task_progressed)
        task.finished.connect(self._on_task_finished)
        task.failed.connect(self._on_task_failed)
        self._task = task
        task.start()

    def _on_stop_clicked(self) -> None:
        self._stop.set()
        self.stop_button.setEnabled(False)

    def _busy(self, busy: bool) -> None:
        self.run_button.setEnabled(not busy and self.info is not None)
        self.open_button.setEnabled(not busy)
        self.stop_button.setEnabled(busy)
        self.busy.setVisible(busy)

    @Slot(object)
    def _on_task_progressed(self, item: tuple[str, object]) -> None:
        kind, value = item
        if kind == "loaded":
            self.status.setText(self.tr("Model loaded. Working…"))
            return
        if kind == "loading_base":
            self.status.setText(self.tr("Loading the base model…"))
            return
        target = self.base_output if kind == "base_text" else self.output
        target.moveCursor(QTextCursor.MoveOperation.End)
        target.insertPlainText(str(value))
        self.status.setText(self.tr("Generating…"))
        if kind == "text":
            self.text_streamed.emit(str(value))

    @Slot(object)
    def _on_task_finished(self, outcome: tuple[Playground, Playground | None, object, object]) -> None:
        self._task = None
        self._playground, self._base, answer, base_answer = outcome
        if self._playground.info != self.info:  # the folder changed meanwhile: let go of the old model
            self.release_model()
        if isinstance(answer, str):
            self._show_generated(answer)
        else:
            self.show_labels(answer, base_answer)

    def _on_compare_toggled(self, on: bool) -> None:
        self._show_task()
        if not on and self._base is not None and self._task is None:  # its memory back at once
            self._base.release()
            self._base = None

    @Slot(object, str)
    def _on_task_failed(self, exc: object, detail: str) -> None:
        self._task = None
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

    def _show_generated(self, text: str) -> None:
        self._busy(False)
        stopped = self._stop.is_set()
        if not text:
            self.status.setText(self.tr("The model ended its reply at once (it produced no text)."))
        else:
            self.status.setText(self.tr("Stopped.") if stopped else self.tr("Done."))
        self.answered.emit()

    def _show_failure(self, message: str, detail: str) -> None:
        self._busy(False)
        self.status.setText(self.tr("Could not run the model: {error}").format(error=message))
        self.details.setPlainText(detail)
        self.details_button.setVisible(True)
        self.answered.emit()

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
