"""Reasoning runs (GRPO), on the data step: the rewards chosen without code, each with its weight, the
answers' settings, and what each reward gives the first rows' reference answers and a wrong one.

Every change is written into the run config at once (``changed(path, value)``) and the preview follows;
a regular expression that does not compile, or a reward file that does not load, is said on the spot.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.core.settings.config import Columns, RunConfig
from desktop.gui.widgets.field_error import error_label, show_error
from desktop.shared_ui import error_text, shown

PREVIEW_ROWS = 3
CUSTOM = "custom"


def _weight(tip: str) -> QDoubleSpinBox:
    box = QDoubleSpinBox(decimals=2, minimum=0.0, maximum=10.0, singleStep=0.25)
    box.setToolTip(tip)
    return box


class RewardsWidget(QScrollArea):
    """Edits ``[grpo]`` of the run config and previews the rewards on the data's first rows."""

    changed = Signal(str, object)
    """A field changed: ``("grpo.answer_weight", 0.5)``."""
    validity_changed = Signal()
    """The rewards' settings became right or wrong (:meth:`problem`)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self._rows: list[dict[str, Any]] = []
        self._columns = Columns()
        self._config: RunConfig | None = None
        self._showing = False
        body = QWidget()
        self.setWidget(body)
        off = self.tr("The reward's weight; 0 turns it off")

        self.system = QPlainTextEdit()
        self.system.setMaximumHeight(80)
        self.system.setToolTip(
            self.tr("Asked before every prompt; it should say where the final answer goes.")
        )
        self.check = QComboBox()
        for key, words in (
            ("text", self.tr("equals the reference (as text)")),
            ("number", self.tr("equals the reference (as a number)")),
            ("label", self.tr("is the reference label")),
            ("none", self.tr("not checked")),
        ):
            self.check.addItem(words, key)
        self.tolerance = QDoubleSpinBox(decimals=6, minimum=0.0, maximum=1.0, singleStep=0.001)
        self.tolerance.setToolTip(self.tr("Numbers closer than this share of the reference count as equal"))
        self.labels = QLineEdit()
        self.labels.setPlaceholderText(self.tr("positive, negative (empty: any)"))
        self.answer_weight = _weight(off)
        self.format = QComboBox()
        for key, words in (
            ("answer-line", self.tr('Reasoning, then a last line "Answer: X"')),
            ("think", self.tr("<think>reasoning</think>, then the answer")),
            ("boxed", self.tr("The answer in \\boxed{X}")),
            (CUSTOM, self.tr("My own regular expression…")),
        ):
            self.format.addItem(words, key)
        self.pattern = QLineEdit()
        self.pattern.setPlaceholderText(r"(?s).*#### (?P<answer>\S+)")
        self.pattern_said = QLabel()
        self.pattern_said.setObjectName("hint")
        self.pattern_said.setWordWrap(True)
        self.format_weight = _weight(off)
        self.length_min = QSpinBox(minimum=0, maximum=100_000, singleStep=50)
        self.length_max = QSpinBox(minimum=0, maximum=100_000, singleStep=50)
        self.length_weight = _weight(off)
        self.language_weight = _weight(off)
        self.language_weight.setToolTip(
            self.tr("Chinese prompts answered in Chinese, English ones in English")
        )
        self.custom_on = QCheckBox(self.tr("My own reward (Python)"))
        self.custom_file = QLineEdit()
        self.custom_file.setPlaceholderText(
            self.tr("a .py file with reward(prompts, completions, **columns)")
        )
        browse = QPushButton(self.tr("Browse…"))
        browse.clicked.connect(self._browse)
        self.custom_weight = _weight(off)
        self.custom_said = QLabel(
            self.tr("Your own code runs in the training process, with your rights: use only files you trust.")
        )
        self.custom_said.setObjectName("warning")
        self.custom_said.setWordWrap(True)
        self.custom_error = error_label()  # the file's own errors, beside it
        self.problem_label = error_label()  # a setting that cannot work (answers per prompt ...)
        self.generations = QSpinBox(minimum=2, maximum=64)
        self.generations.setToolTip(self.tr("Answers written per prompt and compared with each other"))
        self.completion = QSpinBox(minimum=8, maximum=32_768, singleStep=64)
        self.temperature = QDoubleSpinBox(decimals=2, minimum=0.05, maximum=2.0, singleStep=0.05)
        self.beta = QDoubleSpinBox(decimals=3, minimum=0.0, maximum=1.0, singleStep=0.01)
        self.beta.setToolTip(
            self.tr("0: the model is not held near where it started, and no reference copy is kept")
        )
        self.preview = QTableWidget(0, 3)
        self.preview.setHorizontalHeaderLabels(
            [self.tr("Prompt"), self.tr("Reference answer"), self.tr("A wrong answer")]
        )
        self.preview.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.preview.setWordWrap(True)
        self.preview.verticalHeader().setVisible(False)
        self.preview.setMinimumHeight(120)
        self.preview_said = QLabel()
        self.preview_said.setWordWrap(True)

        rewards = QFormLayout()
        answer = QHBoxLayout()
        answer.addWidget(self.check, 1)
        answer.addWidget(QLabel(self.tr("weight")))
        answer.addWidget(self.answer_weight)
        rewards.addRow(self.tr("Final answer:"), answer)
        rewards.addRow(self.tr("Tolerance:"), self.tolerance)
        rewards.addRow(self.tr("Labels:"), self.labels)
        fmt = QHBoxLayout()
        fmt.addWidget(self.format, 1)
        fmt.addWidget(QLabel(self.tr("weight")))
        fmt.addWidget(self.format_weight)
        rewards.addRow(self.tr("Format:"), fmt)
        rewards.addRow("", self.pattern)
        rewards.addRow("", self.pattern_said)
        length = QHBoxLayout()
        for widget in (
            self.length_min,
            QLabel("–"),
            self.length_max,
            QLabel(self.tr("characters, weight")),
            self.length_weight,
        ):
            length.addWidget(widget)
        rewards.addRow(self.tr("Length:"), length)
        rewards.addRow(self.tr("Prompt's language, weight:"), self.language_weight)
        custom = QHBoxLayout()
        custom.addWidget(self.custom_on)
        custom.addWidget(self.custom_file, 1)
        custom.addWidget(browse)
        custom.addWidget(self.custom_weight)
        rewards.addRow(custom)
        rewards.addRow(self.custom_said)
        rewards.addRow(self.custom_error)
        self._rewards_form = rewards
        answers = QFormLayout()
        answers.addRow(self.tr("System prompt:"), self.system)
        answers.addRow(self.tr("Answers per prompt:"), self.generations)
        answers.addRow(self.tr("Longest answer (tokens):"), self.completion)
        answers.addRow(self.tr("Temperature:"), self.temperature)
        answers.addRow(self.tr("Beta (KL):"), self.beta)
        # One column: a narrow window scrolls down to every control, never sideways.
        column = QVBoxLayout(body)
        column.addLayout(rewards)
        column.addLayout(answers)
        column.addWidget(self.problem_label)
        column.addWidget(QLabel(self.tr("What the rewards give the first rows:")))
        column.addWidget(self.preview)
        column.addWidget(self.preview_said)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

        self.system.textChanged.connect(lambda: self._set("system_prompt", self.system.toPlainText()))
        self.check.currentIndexChanged.connect(lambda: self._set("answer_check", self.check.currentData()))
        self.tolerance.valueChanged.connect(lambda v: self._set("tolerance", v))
        self.labels.textChanged.connect(
            lambda t: self._set("labels", [p.strip() for p in t.split(",") if p.strip()])
        )
        self.answer_weight.valueChanged.connect(lambda v: self._set("answer_weight", v))
        self.format.currentIndexChanged.connect(self._on_format_chosen)
        self.pattern.textChanged.connect(lambda t: self._set("format", t))
        self.format_weight.valueChanged.connect(lambda v: self._set("format_weight", v))
        self.length_min.valueChanged.connect(lambda v: self._set("length_min", v))
        self.length_max.valueChanged.connect(lambda v: self._set("length_max", v))
        self.length_weight.valueChanged.connect(lambda v: self._set("length_weight", v))
        self.language_weight.valueChanged.connect(lambda v: self._set("language_weight", v))
        self.custom_on.toggled.connect(self._on_custom_toggled)
        self.custom_file.editingFinished.connect(
            lambda: self._set("custom_file", self.custom_file.text().strip())
        )
        self.custom_weight.valueChanged.connect(lambda v: self._set("custom_weight", v))
        self.generations.valueChanged.connect(lambda v: self._set("num_generations", v))
        self.completion.valueChanged.connect(lambda v: self._set("max_completion_length", v))
        self.temperature.valueChanged.connect(lambda v: self._set("temperature", v))
        self.beta.valueChanged.connect(lambda v: self._set("beta", v))

    # ------------------------------------------------------------------ the config and the data

    def show_config(self, config: RunConfig) -> None:
        """Show ``config``'s ``[grpo]`` (no ``changed``: nothing was changed by the user)."""
        self._config = config
        g = config.grpo
        self._showing = True
        try:
            if self.system.toPlainText() != g.system_prompt:
                self.system.setPlainText(g.system_prompt)
            self.check.setCurrentIndex(max(0, self.check.findData(g.answer_check)))
            self.tolerance.setValue(g.tolerance)
            self.labels.setText(", ".join(g.labels))
            self.answer_weight.setValue(g.answer_weight)
            preset = self.format.findData(g.format)
            self.format.setCurrentIndex(preset if preset >= 0 else self.format.findData(CUSTOM))
            if preset < 0 and self.pattern.text() != g.format:
                self.pattern.setText(g.format)
            self.format_weight.setValue(g.format_weight)
            self.length_min.setValue(g.length_min)
            self.length_max.setValue(g.length_max)
            self.length_weight.setValue(g.length_weight)
            self.language_weight.setValue(g.language_weight)
            self.custom_on.setChecked(bool(g.custom_file))
            self.custom_file.setText(g.custom_file)
            self.custom_weight.setValue(g.custom_weight)
            self.generations.setValue(g.num_generations)
            self.completion.setValue(g.max_completion_length)
            self.temperature.setValue(g.temperature)
            self.beta.setValue(g.beta)
        finally:
            self._showing = False
        self._show_which()
        self._refresh()

    def show_rows(self, rows: list[dict[str, Any]], columns: Columns) -> None:
        """The data's first rows (as the preview read them) and the column mapping; our system prompt in
        the data's language."""
        from desktop.core.data.rewards import chinese_share

        self._rows, self._columns = rows, columns
        asked = [str(r.get(columns.prompt) or "") for r in rows] if columns.prompt else []
        if asked:
            self._follow(chinese=chinese_share(" ".join(asked)) > 0.3)
        self._refresh()

    def _set(self, name: str, value: Any) -> None:
        if self._showing or self._config is None:
            return
        setattr(self._config.grpo, name, value)  # the preview follows at once; the model keeps the truth
        self.changed.emit(f"grpo.{name}", value)
        self._show_which()
        self._refresh()

    def _follow(self, fmt: str = "", chinese: bool | None = None) -> None:
        """Our default system prompt, if the user has not written their own, for the format and the
        data's language."""
        from desktop.core.settings.config_sections import SYSTEM_PROMPTS

        if self._config is None or self._config.grpo.system_prompt not in SYSTEM_PROMPTS.values():
            return
        current = next(k for k, v in SYSTEM_PROMPTS.items() if v == self._config.grpo.system_prompt)
        wanted = (fmt or current[0], current[1] if chinese is None else ("zh" if chinese else "en"))
        if wanted in SYSTEM_PROMPTS and wanted != current:
            self.system.setPlainText(SYSTEM_PROMPTS[wanted])  # textChanged writes it into the config

    def _on_format_chosen(self) -> None:
        key = self.format.currentData()
        self._show_which()
        if key != CUSTOM:
            self._follow(fmt=key)
            self._set("format", key)
        elif self.pattern.text().strip():  # an empty field keeps the last format until one is typed
            self._set("format", self.pattern.text())

    def _on_custom_toggled(self, on: bool) -> None:
        self._set("custom_file", self.custom_file.text().strip() if on else "")
        self._show_which()

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, self.tr("Your reward"), "", self.tr("Python files (*.py)")
        )
        if path:
            self.custom_file.setText(path)
            self.custom_on.setChecked(True)
            self._set("custom_file", path)

    def _show_which(self) -> None:
        """Only the rows that apply: the tolerance for numbers, the labels for labels, the expression for
        one's own format, the file for one's own reward."""
        check = self.check.currentData()
        form = self._rewards_form
        form.setRowVisible(self.tolerance, check == "number")
        form.setRowVisible(self.labels, check == "label")
        form.setRowVisible(self.pattern, self.format.currentData() == CUSTOM)
        form.setRowVisible(self.pattern_said, bool(self.pattern_said.text()))
        for widget in (self.custom_file, self.custom_weight):
            widget.setEnabled(self.custom_on.isChecked())
        form.setRowVisible(self.custom_said, self.custom_on.isChecked())

    def problem(self) -> str:
        """What in the rewards' settings keeps the run from starting ("" when nothing)."""
        return self.problem_label.text() if not self.problem_label.isHidden() else ""

    def _show_problem(self) -> None:
        """The first setting of ``[grpo]`` that cannot work, named as the tab names it."""
        words = {
            "grpo.num_generations": self.tr("Answers per prompt"),
            "grpo.temperature": self.tr("Temperature"),
            "grpo.beta": self.tr("Beta (KL)"),
            "grpo.max_completion_length": self.tr("Longest answer"),
            "grpo.length_min": self.tr("Length"),
            "grpo": self.tr("The rewards"),
        }
        config = self._config
        found = [p for p in config.validate() if p.field in words] if config is not None else []
        before = self.problem()
        said = (
            self.tr("{field} {problem}").format(field=words[found[0].field], problem=shown(found[0].message))
            if found
            else ""
        )
        show_error(self.problem_label, said)
        if said != before:
            self.validity_changed.emit()

    # ------------------------------------------------------------------ the preview

    def _refresh(self) -> None:
        """What each reward gives the first rows' reference answers (written in the format) and a wrong
        one; a format or a reward file that cannot be used is said instead."""
        from desktop.core.data.rewards import RewardFileError, preview, scores_words
        from desktop.core.system.errors import ConfigError

        self.pattern_said.clear()
        self._rewards_form.setRowVisible(self.pattern_said, False)
        show_error(self.custom_error, "")
        if self._config is None:
            return
        self._show_problem()
        columns = self._columns
        rows = (
            [(r.get(columns.prompt), r.get(columns.answer, "")) for r in self._rows] if columns.prompt else []
        )
        try:
            found = preview(self._config.grpo, rows, PREVIEW_ROWS)
        except Exception as exc:  # a regular expression or a reward file the user is still writing
            if isinstance(exc, ConfigError) and exc.problems:
                words = shown(exc.problems[0].message)
                self.pattern_said.setText(self.tr("This expression {problem}").format(problem=words))
                self._rewards_form.setRowVisible(self.pattern_said, True)
            elif isinstance(exc, RewardFileError):
                words = error_text(exc, " ")
                show_error(self.custom_error, words)
            else:
                words = error_text(exc, " ")
                self.pattern_said.setText(words)
                self._rewards_form.setRowVisible(self.pattern_said, True)
            self.preview.setRowCount(0)
            self.preview_said.setText(self.tr("The preview waits until the rewards can be used."))
            return
        self.preview.setRowCount(len(found))
        for i, row in enumerate(found):

            def cell(answer: str, scores: dict[str, Any]) -> QTableWidgetItem:
                said = shown(scores_words(scores))
                item = QTableWidgetItem(f"{answer}  →  {said}")
                item.setToolTip(said)
                return item

            prompt = QTableWidgetItem(row.prompt[:200])
            prompt.setToolTip(row.prompt[:2000])
            self.preview.setItem(i, 0, prompt)
            self.preview.setItem(i, 1, cell(row.reference, row.right))
            self.preview.setItem(i, 2, cell(row.wrong_answer, row.wrong))
            for column in range(3):
                item = self.preview.item(i, column)
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
        self.preview.resizeRowsToContents()
        if not found:
            self.preview_said.setText(
                self.tr(
                    "No row has a reference answer (map the answer column): only the format, length, "
                    "language and your own rewards can score the answers."
                )
            )
        else:
            self.preview_said.setText(
                self.tr(
                    "The reference answer should earn every reward it is checked by, and the wrong one "
                    "less: if not, the format or the answer check does not fit the data."
                )
            )
