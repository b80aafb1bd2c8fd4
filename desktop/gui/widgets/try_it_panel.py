"""Try a trained model: type a text, see the label with its probabilities or the generated reply."""

from __future__ import annotations

import threading
import traceback
from pathlib import Path

from PySide6.QtCore import QObject, QThread, Signal, Slot
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

MAX_LABELS = 8
"""Labels shown for a prediction (the most likely ones)."""


class TryItWorker(QObject):
    """Loads a model and answers prompts on its own thread; results come back as queued signals."""

    loaded = Signal()
    text_generated = Signal(str)
    """A new piece of generated text."""
    classified = Signal(object)
    """Labels with probabilities, most likely first: ``[(label, probability)]``."""
    generated = Signal(str)
    """Generation ended: the whole text."""
    failed = Signal(str, str)
    """What went wrong, and the traceback."""

    def __init__(self) -> None:
        super().__init__()
        self.stop = threading.Event()
        self._playground: Playground | None = None

    @Slot(object, str, int, float, bool)
    def ask(self, info: FolderInfo, prompt: str, max_new_tokens: int, temperature: float, chat: bool) -> None:
        # Every exception is reported as a signal; none may escape into Qt's event loop.
        try:
            if self._playground is None or self._playground.info != info:
                self.release()
                playground = Playground(info)
                playground.load()
                self._playground = playground
                self.loaded.emit()
            self.stop.clear()
            if info.task == "classification":
                self.classified.emit(self._playground.classify(prompt))
            else:
                text = self._playground.generate(
                    prompt, max_new_tokens, temperature, chat, self.text_generated.emit, self.stop
                )
                self.generated.emit(text)
        except StudioError as exc:
            self.failed.emit(f"{exc.message} {exc.hint}".strip(), traceback.format_exc())
        except Exception as exc:
            self.failed.emit(str(exc) or type(exc).__name__, traceback.format_exc())

    @Slot()
    def release(self) -> None:
        if self._playground is not None:
            self._playground.release()
            self._playground = None


class TryItPanel(QWidget):
    """Prompt in, answer out; the model loads on first use and stays loaded on a worker thread."""

    ask_requested = Signal(object, str, int, float, bool)
    """To the worker: folder info, prompt, max new tokens, temperature, use the chat template."""
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
        self.stop_button.clicked.connect(self._stop)
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

        self._thread = QThread()
        self._worker = TryItWorker()
        self._worker.moveToThread(self._thread)
        self.ask_requested.connect(self._worker.ask)
        self._worker.loaded.connect(lambda: self.status.setText(self.tr("Model loaded. Working…")))
        self._worker.text_generated.connect(self._on_worker_text_generated)
        self._worker.classified.connect(self._on_worker_classified)
        self._worker.generated.connect(self._on_worker_generated)
        self._worker.failed.connect(self._on_worker_failed)
        self._thread.start()
        self._show_task()

    # ------------------------------------------------------------------ model

    def set_folder(self, folder: str | Path, run_config: Path | None = None) -> bool:
        """Use the model in ``folder``; ``False`` (with the reason shown) when it holds none."""
        try:
            info = inspect_folder(folder, run_config)
        except StudioError as exc:
            self.status.setText(f"{exc.message} {exc.hint}".strip())
            return False
        self.info = info
        kind = {
            "classification": self.tr("text classification"),
            "causal-lm": self.tr("text generation"),
            "seq2seq": self.tr("sequence to sequence"),
        }[info.task]
        adapter = self.tr(" (LoRA adapters on {base})").format(base=info.base_model) if info.adapter else ""
        self.folder_label.setText(
            self.tr("Model: {folder}, {kind}{adapter}").format(folder=info.folder, kind=kind, adapter=adapter)
        )
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
        self.ask_requested.emit(
            self.info,
            text,
            self.max_tokens.value(),
            self.temperature.value(),
            self.chat_check.isChecked(),
        )

    def _stop(self) -> None:
        self._worker.stop.set()
        self.stop_button.setEnabled(False)

    def _busy(self, busy: bool) -> None:
        self.run_button.setEnabled(not busy and self.info is not None)
        self.open_button.setEnabled(not busy)
        self.stop_button.setEnabled(busy)
        self.busy.setVisible(busy)

    @Slot(str)
    def _on_worker_text_generated(self, piece: str) -> None:
        self.output.moveCursor(QTextCursor.MoveOperation.End)
        self.output.insertPlainText(piece)
        self.status.setText(self.tr("Generating…"))

    @Slot(object)
    def _on_worker_classified(self, ranked: list[tuple[str, float]]) -> None:
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

    @Slot(str)
    def _on_worker_generated(self, text: str) -> None:
        self._busy(False)
        stopped = self._worker.stop.is_set()
        if not text:
            self.status.setText(self.tr("The model ended its reply at once (it produced no text)."))
        else:
            self.status.setText(self.tr("Stopped.") if stopped else self.tr("Done."))
        self.answered.emit()

    @Slot(str, str)
    def _on_worker_failed(self, message: str, detail: str) -> None:
        self._busy(False)
        self.status.setText(self.tr("Could not run the model: {error}").format(error=message))
        self.details.setPlainText(detail)
        self.details_button.setVisible(True)
        self.answered.emit()

    def shutdown(self) -> None:
        """Stop any generation, free the model and end the worker thread."""
        self._worker.stop.set()
        self._thread.quit()
        self._thread.wait()
        self._worker.release()
        self._worker.deleteLater()
