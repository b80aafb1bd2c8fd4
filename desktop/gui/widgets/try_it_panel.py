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

from desktop.core.errors import StudioError
from desktop.core.tryit import FolderInfo, Playground, inspect_folder
from desktop.gui.core_text import error_text
from desktop.gui.workers import BackgroundTask

MAX_LABELS = 8
"""Labels shown for a prediction (the most likely ones)."""


def _answer(
    playground: Playground | None,
    info: FolderInfo,
    prompt: str,
    options: tuple[int, float, bool],
    stop: threading.Event,
    report: Callable[[object], None],
) -> tuple[Playground, object]:
    """Load the model if needed, then classify or generate (on a worker thread: no widgets here)."""
    if playground is None or playground.info != info:
        if playground is not None:
            playground.release()
        playground = Playground(info)
        playground.load()
        report(("loaded", None))
    if info.task == "classification":
        return playground, playground.classify(prompt)
    max_new_tokens, temperature, chat = options
    text = playground.generate(
        prompt, max_new_tokens, temperature, chat, lambda piece: report(("text", piece)), stop
    )
    return playground, text


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
        layout.addWidget(self.output, 100)
        layout.addStretch(1)  # takes the room when the output is hidden (classification)

        self._playground: Playground | None = None
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
        }[info.task]
        if info.adapter:
            described = self.tr("Model: {folder}, {kind} (LoRA adapters on {base})").format(
                folder=info.folder, kind=kind, base=info.base_model
            )
        else:
            described = self.tr("Model: {folder}, {kind}").format(folder=info.folder, kind=kind)
        self.folder_label.setText(described)
        self.folder_label.setToolTip(str(info.folder))
        self.chat_check.setChecked(info.chat)
        self.status.setText(self.tr("Type a text and press Try it; the model loads on first use."))
        self._show_task()
        return True

    def _show_task(self) -> None:
        task = self.info.task if self.info else None
        generative = task in ("causal-lm", "seq2seq")
        self.options.setVisible(generative)
        self.chat_check.setVisible(task == "causal-lm")
        self.stop_button.setVisible(generative)
        self.output.setVisible(task != "classification")
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
        self.details_button.setVisible(False)
        self.details.setVisible(False)
        self._busy(True)
        self.status.setText(self.tr("Loading the model and working…"))
        self._stop.clear()
        info, playground, stop = self.info, self._playground, self._stop
        options = (self.max_tokens.value(), self.temperature.value(), self.chat_check.isChecked())
        self._playground = None  # the task owns it until it returns
        task = BackgroundTask(lambda: _answer(playground, info, text, options, stop, task.report), self, stop)
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
        self.output.moveCursor(QTextCursor.MoveOperation.End)
        self.output.insertPlainText(str(value))
        self.status.setText(self.tr("Generating…"))
        self.text_streamed.emit(str(value))

    @Slot(object)
    def _on_task_finished(self, outcome: tuple[Playground, object]) -> None:
        self._task = None
        self._playground, answer = outcome
        if self._playground.info != self.info:  # the folder changed meanwhile: let go of the old model
            self.release_model()
        if isinstance(answer, str):
            self._show_generated(answer)
        else:
            self._show_labels(answer)

    @Slot(object, str)
    def _on_task_failed(self, exc: object, detail: str) -> None:
        self._task = None
        message = error_text(exc, " ")
        self._show_failure(message or type(exc).__name__, detail)

    def _show_labels(self, ranked: list[tuple[str, float]]) -> None:
        while self.labels_grid.count():
            self.labels_grid.takeAt(0).widget().deleteLater()
        for row, (label, probability) in enumerate(ranked[:MAX_LABELS]):
            bar = QProgressBar()
            bar.setRange(0, 1000)
            bar.setValue(round(probability * 1000))
            bar.setFormat(f"{probability:.1%}")
            name = QLabel(f"<b>{label}</b>" if row == 0 else label)
            self.labels_grid.addWidget(name, row, 0)
            self.labels_grid.addWidget(bar, row, 1)
        best, probability = ranked[0]
        self.status.setText(
            self.tr("Predicted: {label} ({probability:.1%})").format(label=best, probability=probability)
        )
        self._busy(False)
        self.answered.emit()

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
        if self._playground is not None:
            self._playground.release()
            self._playground = None

    def shutdown(self) -> None:
        """Stop any generation and free the model; a model still loading is left to the app's exit."""
        self._stop.set()
        if self._task is not None:
            self._task.cancel()
        self.release_model()
