"""Which column of the data plays which role (text, label, prompt, ...), guessed and then chosen."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QGroupBox, QLabel, QVBoxLayout

from desktop.core.data.columns import CAUSAL_FORMATS, causal_format, roles_for
from desktop.core.settings.config import Columns
from desktop.gui.widgets.field_error import error_label, show_error


class ColumnMappingWidget(QGroupBox):
    """A combo box per role of the task, each offering the data's columns; for causal-LM, the format
    (chat, instruction, prompt, text) first; for preference pairs, what the three roles hold."""

    format_chosen = Signal(str)
    """The user chose a causal-LM format: its name (``chat``, ``instruction``, ``prompt``, ``text``)."""
    columns_chosen = Signal(object)
    """The user chose a column for a role: the :class:`~desktop.core.settings.config.Columns` now."""
    validity_changed = Signal()
    """A required role gained or lost its column; read :meth:`problem`."""
    option_changed = Signal(str, bool)
    """The user ticked or cleared a data option: its field in ``data`` (``drop_bad_rows``,
    ``merge_label_case``) and its value."""

    def __init__(self) -> None:
        super().__init__(self.tr("Columns"))
        self._rows: tuple | None = None  # the roles and columns the combos offer
        self.format_combo = QComboBox()
        formats = {
            "chat": self.tr("Chat messages"),
            "instruction": self.tr("Instruction / input / output"),
            "prompt": self.tr("Prompt / completion"),
            "text": self.tr("Plain text"),
        }
        for fmt in CAUSAL_FORMATS:
            self.format_combo.addItem(formats[fmt], fmt)
        self.format_combo.activated.connect(self._on_format_combo_activated)
        self.mapping_form = QFormLayout()
        self.mapping_combos: dict[str, QComboBox] = {}
        self.mapping_error = error_label()
        self.pairs_help = QLabel(
            self.tr(
                "Chosen: the better answer; rejected: the worse one. Each is a text or a whole "
                "conversation. Prompt: only when the answers do not include it."
            )
        )
        self.pairs_help.setObjectName("hint")
        self.pairs_help.setWordWrap(True)
        self.pairs_help.setVisible(False)
        self.mapping_note = QLabel()
        self.mapping_note.setObjectName("hint")
        self.mapping_note.setWordWrap(True)
        self.drop_bad_rows = QCheckBox(self.tr("Leave out rows with a blank text or no label"))
        self.drop_bad_rows.setToolTip("data.drop_bad_rows")
        self.drop_bad_rows.toggled.connect(lambda on: self.option_changed.emit("drop_bad_rows", on))
        self.merge_label_case = QCheckBox(self.tr("Labels that differ only in case are one class"))
        self.merge_label_case.setToolTip("data.merge_label_case")
        self.merge_label_case.toggled.connect(lambda on: self.option_changed.emit("merge_label_case", on))

        layout = QVBoxLayout(self)
        self.format_row = QFormLayout()
        self.format_row.addRow(self.tr("Format:"), self.format_combo)
        layout.addLayout(self.format_row)
        layout.addWidget(self.pairs_help)
        layout.addLayout(self.mapping_form)
        layout.addWidget(self.mapping_error)
        layout.addWidget(self.mapping_note)
        layout.addWidget(self.drop_bad_rows)
        layout.addWidget(self.merge_label_case)
        layout.addStretch()

    def show_options(self, task: str, drop_bad_rows: bool, merge_label_case: bool) -> None:
        """The data options as the config has them (the case one for classification only)."""
        for box, value in ((self.drop_bad_rows, drop_bad_rows), (self.merge_label_case, merge_label_case)):
            box.blockSignals(True)
            box.setChecked(value)
            box.blockSignals(False)
        self.merge_label_case.setVisible(task in ("classification", "image-classification"))
        self.drop_bad_rows.setText(
            self.tr("Leave out rows with a missing or unreadable picture, or no label")
            if task in ("image-classification", "vision-chat")
            else self.tr("Leave out rows with a blank text or no label")
        )

    def problem(self) -> str:
        """The required roles still without a column (empty when none)."""
        return self.mapping_error.text()

    def show_task_changed(self, task_name: str) -> None:
        """Say that the columns are guessed again for the task now chosen."""
        self.mapping_note.setText(
            self.tr("The columns are guessed again for {task}; check them below.").format(task=task_name)
        )

    def forget_task_change(self) -> None:
        """No note of a task change (a whole new config, other data: the note was of the last one)."""
        self.mapping_note.setText("")

    def show_mapping(
        self,
        task: str,
        columns: Columns,
        available: list[str],
        required: tuple[str, ...],
        optional: tuple[str, ...],
        found_by: dict[str, str],
    ) -> None:
        """A combo box per role, offering ``available`` columns, set to ``columns``; each says how its
        column was found (``found_by``: ``name`` or ``content``)."""
        is_causal = task == "causal-lm"  # a preference run trains a chat model, but reads pairs
        self.pairs_help.setVisible(task == "preference")
        self.format_combo.setVisible(is_causal)
        self.format_row.labelForField(self.format_combo).setVisible(is_causal)
        if is_causal:
            fmt = causal_format(columns) or "text"
            self.format_combo.setCurrentIndex(list(CAUSAL_FORMATS).index(fmt))
        rows = (required, optional, available)
        if rows != self._rows:  # else the same rows stay (the full check after the first rows)
            self._rows = rows
            while self.mapping_form.rowCount():
                self.mapping_form.removeRow(0)
            self.mapping_combos = {}
            for role in required + optional:
                combo = QComboBox()
                combo.addItem(self.tr("(none)") if role in optional else self.tr("(choose a column)"), "")
                for column in available:
                    combo.addItem(column, column)
                combo.activated.connect(self._on_mapping_combo_activated)
                self.mapping_combos[role] = combo
                words = self._role_words().get(role, role)
                label = QLabel(
                    self.tr("{role}:").format(role=words)
                    if role in required
                    else self.tr("{role} (optional):").format(role=words)
                )
                helps = self._role_help() if task == "preference" else {}
                # the field in the run config, after what it holds where that needs saying
                label.setToolTip(f"{helps[role]}\n(columns.{role})" if role in helps else f"columns.{role}")
                self.mapping_form.addRow(label, combo)
        how = {"name": self.tr("guessed from its name"), "content": self.tr("guessed from the content")}
        for role, combo in self.mapping_combos.items():
            current = getattr(columns, role)
            combo.setCurrentIndex(max(0, combo.findData(current)) if current else 0)
            combo.setToolTip(how.get(found_by.get(role, ""), ""))

    def check(self, task: str, columns: Columns) -> None:
        """Say which required roles of ``task`` have no column chosen."""
        missing = [role for role, combo in self.mapping_combos.items() if not combo.currentData()]
        required = roles_for(task, columns)[0]
        missing = [r for r in missing if r in required]
        show_error(
            self.mapping_error,
            self.tr("Choose a column for: {roles}.").format(roles=", ".join(missing)) if missing else "",
        )
        self.validity_changed.emit()

    def _on_format_combo_activated(self) -> None:
        self.format_chosen.emit(self.format_combo.currentData())

    def _on_mapping_combo_activated(self) -> None:
        values = {role: combo.currentData() or "" for role, combo in self.mapping_combos.items()}
        self.columns_chosen.emit(Columns(**values))

    def _role_words(self) -> dict[str, str]:
        """The column roles as the page names them (the config calls them ``columns.<role>``)."""
        return {
            "text": self.tr("Text"),
            "text_pair": self.tr("Text pair"),
            "label": self.tr("Label"),
            "instruction": self.tr("Instruction"),
            "input": self.tr("Input"),
            "output": self.tr("Output"),
            "messages": self.tr("Messages"),
            "prompt": self.tr("Prompt"),
            "completion": self.tr("Completion"),
            "source": self.tr("Source text"),
            "target": self.tr("Target text"),
            "chosen": self.tr("Chosen answer"),
            "rejected": self.tr("Rejected answer"),
            "answer": self.tr("Reference answer"),
            "image": self.tr("Picture"),
        }

    def _role_help(self) -> dict[str, str]:
        """What a preference role's column holds (the tooltip of its name)."""
        return {
            "chosen": self.tr("The better answer: a text, or the whole conversation as a list of messages."),
            "rejected": self.tr("The worse answer to the same prompt, written as the chosen one is."),
            "prompt": self.tr(
                "The prompt both answers reply to; none when the answers hold the conversation."
            ),
        }
