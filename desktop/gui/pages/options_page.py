"""Step 3: the training schedule, batches, memory and speed levers, and LoRA."""

from __future__ import annotations

import copy

from PySide6.QtCore import Signal
from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QBoxLayout,
    QCheckBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop.core.settings.config import (
    ATTENTIONS,
    BEST_METRICS,
    COMPILE_BACKENDS,
    OPTIMIZERS,
    PRECISIONS,
    SCHEDULERS,
    RunConfig,
)
from desktop.core.settings.config_sections import IMAGE_TASKS
from desktop.core.settings.options import Capabilities, resolve
from desktop.core.system.errors import ConfigError, Problem
from desktop.core.system.paths import default_runs_dir
from desktop.gui.config_model import RunConfigModel
from desktop.gui.pages.base import WizardPage
from desktop.gui.widgets.choice_combo import ChoiceCombo
from desktop.gui.widgets.config_section_widget import ConfigSectionWidget
from desktop.gui.widgets.field_error import error_label, show_error
from desktop.gui.widgets.memory_estimate_widget import MemoryEstimateWidget
from desktop.gui.widgets.processes_widget import ProcessesWidget
from desktop.shared_ui import shown

PERFORMANCE_CHOICES = {
    "precision": PRECISIONS,
    "optimizer": OPTIMIZERS,
    "compile_backend": COMPILE_BACKENDS,
    "attention": ATTENTIONS,
}


class OptionsPage(WizardPage):
    """Batch size, schedule, sequence length, memory and speed levers, LoRA, the estimate, presets.

    The schedule, batches and output fields are the page's own; the processes, the speed and LoRA
    sections and the estimate with its presets are parts it composes. Every change is written into
    ``run_config`` at once; every field's error shows under it (:meth:`_add_field` makes the rows of
    the parts too).

    Args:
        run_config: The run config the window edits.
    """

    estimate_updated = Signal()
    """The model's size was read (or could not be): the estimate is up to date."""
    job_export_requested = Signal()
    """The user asked to write the run as a job for another machine or a cluster."""

    def __init__(self, run_config: RunConfigModel) -> None:
        super().__init__()
        self.title = self.tr("Memory & speed")
        self.subtitle = self.tr("How long and how hard to train.")
        self._run_config = run_config
        run_config.changed.connect(self._on_run_config_changed)
        self.bound: dict[tuple[str, str], QWidget] = {}
        self.field_errors: dict[str, tuple[str, QLabel]] = {}
        """Each config field on the page: its name in words and the error label under it."""
        self._context_config = RunConfig()
        self._caps = Capabilities()
        self._problem = ""
        self._train_rows = 0

        self.epochs = QDoubleSpinBox(decimals=1, minimum=0.1, maximum=1000, singleStep=1)
        self.max_steps = QSpinBox(minimum=0, maximum=10_000_000, specialValueText=self.tr("use epochs"))
        self.learning_rate = QDoubleSpinBox(decimals=6, minimum=0.000001, maximum=0.5, singleStep=0.00001)
        self.scheduler = ChoiceCombo(SCHEDULERS)
        self.warmup = QDoubleSpinBox(decimals=2, minimum=0, maximum=100_000, singleStep=0.05)
        self.warmup.setToolTip(self.tr("Below 1: a fraction of all steps. From 1: a number of steps."))
        self.batch_size = QSpinBox(minimum=1, maximum=4096)
        self.accumulation = QSpinBox(minimum=1, maximum=4096)
        self.effective = QLabel()
        self.effective.setObjectName("hint")
        self.max_length = QSpinBox(minimum=8, maximum=1_048_576, singleStep=64)
        self.eval_steps = QSpinBox(minimum=0, maximum=10_000_000, specialValueText=self.tr("each epoch"))
        self.save_steps = QSpinBox(minimum=0, maximum=10_000_000, specialValueText=self.tr("each epoch"))
        self.logging_steps = QSpinBox(minimum=1, maximum=100_000)
        self.keep_best = QCheckBox(self.tr("The run's model is its best checkpoint"))
        self.best_metric = ChoiceCombo(BEST_METRICS)
        self.early_stopping = QSpinBox(minimum=0, maximum=1000, specialValueText=self.tr("never"))
        self.early_stopping.setSuffix(self.tr(" evaluations without improvement"))
        self.seed = QSpinBox(minimum=0, maximum=2**31 - 1)
        self.runs_dir = QLineEdit()
        self.runs_dir.setPlaceholderText(str(default_runs_dir()))
        self.runs_browse = QPushButton(self.tr("Folder…"))
        self.runs_browse.clicked.connect(self._browse_runs_dir)
        self.report_to = QLineEdit()
        self.report_to.setPlaceholderText(self.tr("tensorboard, mlflow (optional)"))
        self.report_to.setToolTip(self.tr("Also log the run to these trackers; each must be installed"))
        self.run_name = QLineEdit()
        self.run_name.setPlaceholderText(self.tr("task and model"))
        self.error = error_label()

        for spin in (self.batch_size, self.accumulation):
            spin.valueChanged.connect(self._update_effective)
        for widget in self._editors():
            signal = (
                getattr(widget, "valueChanged", None)
                or getattr(widget, "textChanged", None)
                or getattr(widget, "toggled", None)
            )
            (signal or widget.currentIndexChanged).connect(self._on_changed)

        schedule = QGroupBox(self.tr("Schedule"))
        form = QFormLayout(schedule)
        self._add_field(form, "training.epochs", self.tr("Epochs"), self.epochs)
        self._add_field(form, "training.max_steps", self.tr("Max steps"), self.max_steps)
        self._add_field(form, "training.learning_rate", self.tr("Learning rate"), self.learning_rate)
        self._add_field(form, "training.scheduler", self.tr("Scheduler"), self.scheduler)
        self._add_field(form, "training.warmup", self.tr("Warm-up"), self.warmup)
        self._add_field(form, "training.seed", self.tr("Seed"), self.seed)

        memory = QGroupBox(self.tr("Batches and sequences"))
        form = QFormLayout(memory)
        self._add_field(form, "training.batch_size", self.tr("Batch size per device"), self.batch_size)
        self._add_field(
            form, "training.gradient_accumulation", self.tr("Gradient accumulation"), self.accumulation
        )
        form.addRow("", self.effective)
        self._add_field(form, "training.max_length", self.tr("Max sequence length"), self.max_length)
        self._memory_form = form  # its max length row: not for pictures
        cadence = QGroupBox(self.tr("Evaluation, checkpoints and output"))
        form = QFormLayout(cadence)
        self._add_field(form, "training.eval_steps", self.tr("Evaluate every (steps)"), self.eval_steps)
        self._add_field(form, "training.save_steps", self.tr("Checkpoint every (steps)"), self.save_steps)
        self._add_field(form, "training.logging_steps", self.tr("Log every (steps)"), self.logging_steps)
        self._add_field(form, "training.keep_best", self.tr("Best checkpoint"), self.keep_best)
        self._add_field(form, "training.best_metric", self.tr("Best by"), self.best_metric)
        self._add_field(form, "training.early_stopping", self.tr("Stop early after"), self.early_stopping)
        row = QHBoxLayout()
        row.addWidget(self.runs_dir)
        row.addWidget(self.runs_browse)
        self._add_field(form, "output.runs_dir", self.tr("Runs folder"), row)
        self._add_field(form, "output.name", self.tr("Run name"), self.run_name)
        self._add_field(form, "output.report_to", self.tr("Also log to"), self.report_to)

        columns = self._columns = QBoxLayout(QBoxLayout.Direction.LeftToRight)
        left = QVBoxLayout()
        left.addWidget(schedule)
        left.addWidget(memory)
        self.processes = ProcessesWidget(self._add_field)
        self.processes.changed.connect(self._on_changed)
        self.processes.gpu_count_changed.connect(self._on_processes_gpu_count_changed)
        self.processes.job_export_requested.connect(self.job_export_requested)
        left.addWidget(self.processes)
        left.addStretch()
        columns.addLayout(left, 1)
        right = QVBoxLayout()
        right.addWidget(cadence)
        self.sections = [
            ConfigSectionWidget(
                self.tr("Speed and memory"), "performance", PERFORMANCE_CHOICES, self._add_field
            ),
            ConfigSectionWidget(self.tr("LoRA adapters"), "lora", {}, self._add_field),
        ]
        self.pictures = ConfigSectionWidget(self.tr("Pictures"), "images", {}, self._add_field)
        for section in self._all_sections():  # the pictures' for image tasks only (_show_for_task)
            section.changed.connect(self._on_changed)
            self.bound.update(section.editors)
            right.addWidget(section)
        right.addStretch()
        self.estimate = MemoryEstimateWidget(self._estimated_config)
        self.estimate.estimate_updated.connect(self.estimate_updated)
        self.estimate.preset_applied.connect(self.show_config)
        left.insertWidget(0, self.estimate)
        columns.addLayout(right, 1)
        content = QWidget()
        inner = QVBoxLayout(content)
        inner.setContentsMargins(0, 0, 6, 0)
        inner.addLayout(columns)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(content)
        self._column_layouts, self._content = (left, right), content
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(scroll, 1)
        layout.addWidget(self.error)
        self._on_run_config_changed("")  # the run config as it is (the window makes this page late)

    def set_gpus(self, count: int) -> None:
        """How many NVIDIA GPUs this computer has: with two or more, the page offers to use them."""
        self.processes.set_gpus(count)

    def resizeEvent(self, event: QResizeEvent) -> None:
        self._reflow(event.size().width())
        super().resizeEvent(event)

    def showEvent(self, event: QShowEvent) -> None:
        self._reflow(self.width())  # what the columns hold may have grown while the page was hidden
        super().showEvent(event)

    def _reflow(self, width: int) -> None:
        """Side by side where both columns fit as they are now (English labels and the estimate's text
        are wider than Chinese ones); one above the other on a small screen, never cut off."""
        needed = sum(layout.minimumSize().width() for layout in self._column_layouts)
        wide = width >= needed + self._columns.spacing() + 24  # the scroll bar and the margins
        direction = QBoxLayout.Direction.LeftToRight if wide else QBoxLayout.Direction.TopToBottom
        if direction != self._columns.direction():
            self._columns.setDirection(direction)
            self._content.layout().activate()  # the columns' new widths now, not the old side by side

    def set_train_rows(self, rows: int) -> None:
        """The number of training rows the data has (0: unknown), for the schedule check."""
        self._train_rows = rows
        self._on_changed()

    def set_context(self, config: RunConfig, gpu_name: str, gpu_free: int | None, caps: Capabilities) -> None:
        """The model, task and GPU the estimate is for; model shapes are read off the GUI thread."""
        self._context_config = copy.deepcopy(config)
        self._caps = caps
        for section in self.sections:
            section.set_cuda(caps.cuda)  # pin memory, the GPU cache, QLoRA: nothing on a CPU
        self._show_for_task(config.task)
        self.estimate.set_context(config, gpu_name, gpu_free, caps)

    def _all_sections(self) -> list[ConfigSectionWidget]:
        """The sections every task has, and the pictures' (shown for image tasks only)."""
        return [*self.sections, self.pictures]

    def _show_for_task(self, task: str) -> None:
        """Pictures: their own options, and no max length (a picture is as many tokens as the model
        makes of it)."""
        self.pictures.setVisible(task in IMAGE_TASKS)
        self.pictures.show_fields(
            {"augment"} if task == "image-classification" else {"resolution", "train_vision"}
        )
        self._memory_form.setRowVisible(self.max_length, task != "image-classification")

    def _estimated_config(self) -> RunConfig:
        """The run config with the options shown now, for the estimate and the presets."""
        config = copy.deepcopy(self._context_config)
        self.apply_to(config)
        return config

    def shutdown(self) -> None:
        self.estimate.shutdown()

    def _add_field(self, form: QFormLayout, key: str, words: str, editor: QWidget | QHBoxLayout) -> None:
        """A form row for the config field ``key``, with its error shown under it (hidden while none)."""
        form.addRow(self.tr("{field}:").format(field=words), editor)
        label = error_label()
        form.addRow("", label)
        self.field_errors[key] = (words, label)

    def _editors(self) -> list[QWidget]:
        return [
            self.epochs,
            self.max_steps,
            self.learning_rate,
            self.scheduler,
            self.warmup,
            self.batch_size,
            self.accumulation,
            self.max_length,
            self.eval_steps,
            self.save_steps,
            self.logging_steps,
            self.keep_best,
            self.best_metric,
            self.early_stopping,
            self.seed,
            self.runs_dir,
            self.run_name,
            self.report_to,
        ]

    def _on_run_config_changed(self, path: str) -> None:
        if path == "":  # a whole new config: show it
            self.show_config(self._run_config.config)
        elif path == "training.learning_rate":  # another page set it (the task became preference)
            self.learning_rate.blockSignals(True)
            self.learning_rate.setValue(self._run_config.config.training.learning_rate)
            self.learning_rate.blockSignals(False)

    def show_config(self, config: RunConfig) -> None:
        """Show the options of ``config``; they become the run config's (as the user's changes do)."""
        t = config.training
        for widget in self._editors():
            widget.blockSignals(True)
        self.epochs.setValue(t.epochs)
        self.max_steps.setValue(t.max_steps)
        self.learning_rate.setValue(t.learning_rate)
        self.scheduler.set_value(t.scheduler)
        self.warmup.setValue(t.warmup)
        self.batch_size.setValue(t.batch_size)
        self.accumulation.setValue(t.gradient_accumulation)
        self.max_length.setValue(t.max_length)
        self.eval_steps.setValue(t.eval_steps)
        self.save_steps.setValue(t.save_steps)
        self.logging_steps.setValue(t.logging_steps)
        self.keep_best.setChecked(t.keep_best)
        self.best_metric.set_value(t.best_metric)
        self.early_stopping.setValue(t.early_stopping)
        self.seed.setValue(t.seed)
        self.runs_dir.setText(config.output.runs_dir)
        self.run_name.setText(config.output.name)
        self.report_to.setText(", ".join(config.output.report_to))
        for widget in self._editors():
            widget.blockSignals(False)
        for section in self._all_sections():
            section.show_config(config)
        self._show_for_task(config.task)
        self.processes.show_config(config)
        self._update_effective()
        self._on_changed()

    def apply_to(self, config: RunConfig) -> None:
        """Write the options shown into ``config``."""
        t = config.training
        t.epochs = self.epochs.value()
        t.max_steps = self.max_steps.value()
        t.learning_rate = self.learning_rate.value()
        t.scheduler = self.scheduler.value()
        t.warmup = self.warmup.value()
        t.batch_size = self.batch_size.value()
        t.gradient_accumulation = self.accumulation.value()
        t.max_length = self.max_length.value()
        t.eval_steps = self.eval_steps.value()
        t.save_steps = self.save_steps.value()
        t.logging_steps = self.logging_steps.value()
        t.keep_best = self.keep_best.isChecked()
        t.best_metric = self.best_metric.value()
        t.early_stopping = self.early_stopping.value()
        t.seed = self.seed.value()
        config.output.runs_dir = self.runs_dir.text().strip()
        config.output.name = self.run_name.text().strip()
        config.output.report_to = [part.strip() for part in self.report_to.text().split(",") if part.strip()]
        for section in self._all_sections():
            section.apply_to(config)
        self.processes.apply_to(config)

    def problem(self) -> str:
        return self._problem

    def _on_changed(self) -> None:
        self._run_config.edit(self.apply_to)
        config = RunConfig(task=self._run_config.config.task)  # the best metric depends on the task
        self.apply_to(config)
        problems = [
            p
            for p in config.validate()
            if p.field.startswith(("training", "performance", "lora", "output", "launch"))
        ]
        if not problems and self._train_rows:  # an accumulation longer than an epoch, by its field
            from desktop.core.data.checks import schedule_problems

            problems = schedule_problems(config, self._train_rows)
        if not problems:  # what this machine cannot run, said now rather than at Start
            try:
                resolve(config, self._caps)
            except ConfigError as exc:
                problems = list(exc.problems)
        self._show_problems(problems)
        if not problems:
            self.estimate.update_estimate()
        self.validity_changed.emit()

    def _show_problems(self, problems: list[Problem]) -> None:
        """Each problem once, under its field, the field named in words; others at the bottom."""
        by_field: dict[str, list[str]] = {}
        for p in problems:
            by_field.setdefault(p.field, []).append(shown(p.message))
        unplaced, first = [], ""
        for key, (_words, label) in self.field_errors.items():
            show_error(label, " ".join(dict.fromkeys(by_field.pop(key, []))))
        for key, messages in by_field.items():
            unplaced.append(self.tr("{field}: {problem}").format(field=key, problem=" ".join(messages)))
        show_error(self.error, "\n".join(unplaced))
        if problems:
            words = self.field_errors.get(problems[0].field, (problems[0].field, None))[0]
            first = self.tr("{field}: {problem}").format(field=words, problem=shown(problems[0].message))
        self._problem = first

    def _update_effective(self) -> None:
        gpus = self.processes.gpu_count.value() if hasattr(self, "processes") else 1
        total = self.batch_size.value() * self.accumulation.value() * gpus
        self.effective.setText(
            self.tr("Effective batch: %n example(s) per update", "", total)
            if gpus == 1
            else self.tr("Effective batch: %n example(s) per update, across the GPUs", "", total)
        )

    def _on_processes_gpu_count_changed(self) -> None:
        self._update_effective()
        self._on_changed()

    def _browse_runs_dir(self) -> None:
        folder = QFileDialog.getExistingDirectory(
            self, self.tr("Folder for run folders"), self.runs_dir.text()
        )
        if folder:
            self.runs_dir.setText(folder)
