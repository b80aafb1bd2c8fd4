"""Step 3: the training schedule, batches, memory and speed levers, and LoRA."""

from __future__ import annotations

import copy
import dataclasses
import sys

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QBoxLayout,
    QCheckBox,
    QComboBox,
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
    COMPILE_BACKENDS,
    OPTIMIZERS,
    PRECISIONS,
    SCHEDULERS,
    RunConfig,
)
from desktop.core.settings.memory import Estimate
from desktop.core.settings.options import Capabilities, installed, resolve
from desktop.core.settings.presets import presets_for
from desktop.core.system.errors import ConfigError, Problem, StudioError
from desktop.core.system.paths import default_runs_dir
from desktop.gui.app_support.workers import BackgroundTask
from desktop.gui.pages.base import WizardPage
from desktop.gui.widgets.field_error import error_label, show_error
from desktop.gui.widgets.fit_badge_widget import free_ram
from desktop.shared_ui import sentences as sentences_joined
from desktop.shared_ui import shown

GB = 1024**3


def _on_windows() -> bool:
    """Whether the app runs on Windows (a function, so tests can say it does)."""
    return sys.platform == "win32"


def _field_help(name: str) -> str:
    """The help text of a ``[launch]`` field (its tooltip)."""
    from desktop.core.settings.config import Launch

    return next(f.metadata["help"] for f in dataclasses.fields(Launch) if f.name == name)


PERFORMANCE_CHOICES = {
    "precision": PRECISIONS,
    "optimizer": OPTIMIZERS,
    "compile_backend": COMPILE_BACKENDS,
    "attention": ATTENTIONS,
}


class OptionsPage(WizardPage):
    """Batch size, schedule, sequence length, memory and speed levers, LoRA, the estimate, presets."""

    estimate_updated = Signal()
    """The model's size was read (or could not be): the estimate is up to date."""
    job_export_requested = Signal()
    """The user asked to write the run as a job for another machine or a cluster."""

    def __init__(self) -> None:
        super().__init__()
        self.title = self.tr("Memory & speed")
        self.subtitle = self.tr("How long and how hard to train.")
        self._config = RunConfig()
        self.bound: dict[tuple[str, str], QWidget] = {}
        self.field_errors: dict[str, tuple[str, QLabel]] = {}
        """Each config field on the page: its name in words and the error label under it."""
        self._context_config = RunConfig()
        self._gpu_name, self._gpu_free, self._caps = "", None, Capabilities()
        self._shapes_key: tuple | None = None
        self._shapes: tuple | None = None
        self._undo: RunConfig | None = None
        self._tasks: set[BackgroundTask] = set()
        self._problem = ""
        self._train_rows = 0
        self._gpus = 0

        self.epochs = QDoubleSpinBox(decimals=1, minimum=0.1, maximum=1000, singleStep=1)
        self.max_steps = QSpinBox(minimum=0, maximum=10_000_000, specialValueText=self.tr("use epochs"))
        self.learning_rate = QDoubleSpinBox(decimals=6, minimum=0.000001, maximum=0.5, singleStep=0.00001)
        self.scheduler = QComboBox()
        self.scheduler.addItems(SCHEDULERS)
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
            signal = getattr(widget, "valueChanged", None) or getattr(widget, "textChanged", None)
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

        cadence = QGroupBox(self.tr("Evaluation, checkpoints and output"))
        form = QFormLayout(cadence)
        self._add_field(form, "training.eval_steps", self.tr("Evaluate every (steps)"), self.eval_steps)
        self._add_field(form, "training.save_steps", self.tr("Checkpoint every (steps)"), self.save_steps)
        self._add_field(form, "training.logging_steps", self.tr("Log every (steps)"), self.logging_steps)
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
        left.addWidget(self._processes_group())
        left.addStretch()
        columns.addLayout(left, 1)
        right = QVBoxLayout()
        right.addWidget(cadence)
        right.addWidget(self._bound_group(self.tr("Speed and memory"), "performance", PERFORMANCE_CHOICES))
        right.addWidget(self._bound_group(self.tr("LoRA adapters"), "lora", {}))
        right.addStretch()
        left.insertWidget(0, self._estimate_group())
        columns.addLayout(right, 1)
        content = QWidget()
        inner = QVBoxLayout(content)
        inner.setContentsMargins(0, 0, 6, 0)
        inner.addLayout(columns)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(content)
        self._two_columns_width = content.minimumSizeHint().width() + 24
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(scroll, 1)
        layout.addWidget(self.error)

    def _processes_group(self) -> QGroupBox:
        """A child process or several GPUs, and the job for a cluster."""
        group = QGroupBox(self.tr("Processes and GPUs"))
        form = QFormLayout(group)
        self.separate_process = QCheckBox(self.tr("Run in a separate process"))
        self.separate_process.setToolTip(shown(_field_help("separate_process")))
        self.separate_process.toggled.connect(self._on_changed)
        form.addRow(self.separate_process)
        self.separate_note = QLabel(
            self.tr(
                "Stop can then end the run at once, a crash cannot close the app, and every byte of GPU "
                "memory goes back to the system when the run ends. It costs a few seconds at the start."
            )
        )
        self.separate_note.setObjectName("hint")
        self.separate_note.setWordWrap(True)
        form.addRow(self.separate_note)
        self.gpu_count = QSpinBox(minimum=1, maximum=1)
        self.gpu_count.setToolTip(shown(_field_help("num_processes")))
        self.gpu_count.valueChanged.connect(self._on_gpu_count_changed)
        self.strategy = QComboBox()
        for key, words in (
            ("ddp", self.tr("DDP: a whole copy of the model on each GPU (fastest)")),
            ("fsdp", self.tr("FSDP: the model split across the GPUs (for a model too big for one)")),
            ("deepspeed-zero2", self.tr("DeepSpeed ZeRO-2: gradients and optimizer split")),
            ("deepspeed-zero3", self.tr("DeepSpeed ZeRO-3: everything split")),
        ):
            self.strategy.addItem(words, key)
        self.strategy.setToolTip(shown(_field_help("strategy")))
        self.strategy.currentIndexChanged.connect(self._on_changed)
        self._add_field(form, "launch.num_processes", self.tr("GPUs to use"), self.gpu_count)
        self._add_field(form, "launch.strategy", self.tr("Strategy"), self.strategy)
        self.multi_gpu_note = QLabel()
        self.multi_gpu_note.setObjectName("hint")
        self.multi_gpu_note.setWordWrap(True)
        form.addRow(self.multi_gpu_note)
        self._multi_gpu_rows = [self.gpu_count, self.strategy, self.multi_gpu_note]
        self.job_button = QPushButton(self.tr("Export as a job for another machine or a cluster…"))
        self.job_button.setToolTip(
            self.tr(
                "Writes a folder with the config, the data, launch.sh (one machine) and a Slurm script "
                "(several); bring the run folder back with Run history › Import run"
            )
        )
        self.job_button.clicked.connect(self.job_export_requested)
        form.addRow(self.job_button)
        self._show_gpu_rows()
        return group

    def set_gpus(self, count: int) -> None:
        """How many NVIDIA GPUs this computer has: with two or more, the page offers to use them."""
        self._gpus = count
        self.gpu_count.setMaximum(max(1, count))
        deepspeed = installed("deepspeed") and not _on_windows()
        model = self.strategy.model()
        for row in (2, 3):  # the DeepSpeed strategies
            model.item(row).setEnabled(deepspeed)
            model.item(row).setToolTip(
                ""
                if deepspeed
                else self.tr("Needs the deepspeed package (pip install deepspeed; Linux only)")
            )
        self._show_gpu_rows()

    def _show_gpu_rows(self) -> None:
        several = self._gpus >= 2
        form = self.gpu_count.parentWidget().layout()
        for widget in self._multi_gpu_rows:
            form.setRowVisible(widget, several)
        self._update_multi_gpu_note()

    def _on_gpu_count_changed(self) -> None:
        if self.gpu_count.value() > 1 and not self.separate_process.isChecked():
            self.separate_process.setChecked(True)  # several GPUs always train in child processes
        self.separate_process.setEnabled(self.gpu_count.value() == 1)
        self._update_effective()
        self._update_multi_gpu_note()
        self._on_changed()

    def _update_multi_gpu_note(self) -> None:
        if self.gpu_count.value() <= 1:
            text = self.tr(
                "One GPU. With more, the run is split into one process per GPU (accelerate launch)."
            )
        elif _on_windows():
            text = self.tr(
                "{count} processes through accelerate launch; progress comes from the first. On Windows the "
                "GPUs exchange gradients with gloo, through system memory (PyTorch has no NCCL for "
                "Windows): each step waits longer for that exchange than on Linux, so {count} GPUs gain less "
                "than {count} times the speed. For the most speed, train on Linux or WSL2."
            ).format(count=self.gpu_count.value())
        else:
            text = self.tr(
                "{count} processes through accelerate launch (NCCL); progress, plots and checkpoints come "
                "from the first. The memory estimate is per GPU."
            ).format(count=self.gpu_count.value())
        self.multi_gpu_note.setText(text)

    def resizeEvent(self, event: QResizeEvent) -> None:
        # Side by side where they fit; one above the other on a small screen, never cut off.
        wide = event.size().width() >= self._two_columns_width
        self._columns.setDirection(
            QBoxLayout.Direction.LeftToRight if wide else QBoxLayout.Direction.TopToBottom
        )
        super().resizeEvent(event)

    # ------------------------------------------------------------------ estimate and presets

    def _estimate_group(self) -> QGroupBox:
        group = QGroupBox(self.tr("Memory estimate and presets"))
        self.fit_label = QLabel(self.tr("Choose a model first."))
        self.fit_label.setObjectName("verdict")
        self.fit_label.setWordWrap(True)
        self.breakdown = QLabel()
        self.breakdown.setObjectName("hint")
        self.breakdown.setWordWrap(True)
        self.preset_buttons: dict[str, QPushButton] = {}
        row = QHBoxLayout()
        names = {
            "fastest": self.tr("Fastest"),
            "balanced": self.tr("Balanced"),
            "lowest_memory": self.tr("Lowest memory"),
            "fit": self.tr("Fit my GPU"),
        }
        for key, label in names.items():
            button = QPushButton(label)
            button.clicked.connect(lambda _=False, k=key: self.apply_preset(k))
            self.preset_buttons[key] = button
            row.addWidget(button)
        self.changes_label = QLabel()
        self.changes_label.setWordWrap(True)
        self.undo_button = QPushButton(self.tr("Undo"))
        self.undo_button.setVisible(False)
        self.undo_button.clicked.connect(self._undo_preset)
        box = QVBoxLayout(group)
        box.addWidget(self.fit_label)
        box.addWidget(self.breakdown)
        box.addLayout(row)
        box.addWidget(self.changes_label)
        box.addWidget(self.undo_button, 0, Qt.AlignmentFlag.AlignLeft)
        return group

    def set_train_rows(self, rows: int) -> None:
        """The number of training rows the data has (0: unknown), for the schedule check."""
        self._train_rows = rows
        self._on_changed()

    def set_context(self, config: RunConfig, gpu_name: str, gpu_free: int | None, caps: Capabilities) -> None:
        """The model, task and GPU the estimate is for; model shapes are read off the GUI thread."""
        self._context_config = copy.deepcopy(config)
        self._gpu_name, self._gpu_free, self._caps = gpu_name, gpu_free, caps
        offered = presets_for(caps)
        for key in ("fastest", "balanced", "lowest_memory"):
            self.preset_buttons[key].setVisible(key in offered)  # no two buttons that do the same
        self.preset_buttons["fit"].setVisible(gpu_free is not None)
        self.preset_buttons["fit"].setEnabled(gpu_free is not None)
        self.preset_buttons["fit"].setToolTip(
            "" if gpu_free is not None else self.tr("No NVIDIA GPU was found to fit the settings to.")
        )
        lora = config.lora
        key = (config.model.name, config.task, config.model.revision, lora.rank, tuple(lora.target_modules))
        if not config.model.name or key == self._shapes_key:
            self._update_estimate()
            return
        self._shapes_key, self._shapes = key, None
        self.fit_label.setText(self.tr("Reading the model's size…"))

        def read() -> tuple:
            from desktop.core.helper_process import model_shapes

            return model_shapes(config)  # in the helper process: this one never imports PyTorch

        task = BackgroundTask(read, self)
        self._tasks.add(task)
        task.finished.connect(lambda shapes, t=task, k=key: self._on_shapes(t, k, shapes))
        task.failed.connect(lambda exc, detail, t=task, k=key: self._on_shapes_failed(t, k, exc))
        task.start()

    def _on_shapes(self, task: BackgroundTask, key: tuple, shapes: tuple) -> None:
        self._tasks.discard(task)
        if key == self._shapes_key:
            self._shapes = shapes
            self._update_estimate()
            self.estimate_updated.emit()

    def _on_shapes_failed(self, task: BackgroundTask, key: tuple, exc: object) -> None:
        self._tasks.discard(task)
        if key == self._shapes_key:
            message = shown(exc.message) if isinstance(exc, StudioError) else str(exc)
            self.fit_label.setText(
                self.tr("The model's size could not be read: {error}").format(error=message)
            )
            self.estimate_updated.emit()

    def current_estimate(self) -> Estimate | None:
        """The estimate for the options as they are now (``None`` until the model's size is known)."""
        if self._shapes is None:
            return None
        from desktop.core.settings.memory import estimate

        config = copy.deepcopy(self._context_config)
        self.apply_to(config)
        shapes = self._shapes[1] if config.lora.enabled and self._shapes[1] is not None else self._shapes[0]
        mixed = config.performance.precision != "fp32" and self._caps.cuda
        return estimate(shapes, config, mixed_precision=mixed or self._gpu_free is None)

    def _update_estimate(self) -> None:
        result = self.current_estimate()
        if result is None:
            return
        gpu = self._gpu_free is not None
        lines = [
            self.tr("{term}: {size:.2f} GB").format(term=shown(name), size=value / GB)
            for name, value in result.breakdown(gpu).items()
            if value
        ]
        self.breakdown.setText("   ·   ".join(lines))
        if self._gpu_free is None:  # training runs on the CPU: RAM and time are what matter
            self.breakdown.setText(
                self.tr("On this computer the run uses RAM: {parts}").format(parts=self.breakdown.text())
            )
            self.fit_label.setText(
                self.tr(
                    "No NVIDIA GPU here: training runs on the CPU and needs about {total:.1f} GB of RAM "
                    "({free:.1f} GB free). It is much slower than on a GPU: small models and short texts "
                    "suit it best."
                ).format(total=result.total / GB, free=free_ram() / GB)
            )
            return
        sentences = {
            "fits": self.tr("Needs about {total:.1f} GB: fits in the {free:.1f} GB free on {gpu}."),
            "tight": self.tr(
                "Needs about {total:.1f} GB: fits, but tightly, in the {free:.1f} GB free on {gpu}."
            ),
            "will not fit": self.tr(
                "Needs about {total:.1f} GB: will not fit in the {free:.1f} GB free on {gpu}."
            ),
        }
        verdict = result.verdict(self._gpu_free)
        text = sentences[verdict].format(
            total=result.total / GB, free=self._gpu_free / GB, gpu=self._gpu_name
        )
        if verdict == "will not fit" and _on_windows():
            # Since driver 536.40 Windows pages the excess into shared system memory instead of failing.
            text = sentences_joined(
                text,
                self.tr(
                    "On Windows it will not fail: the driver moves what does not fit into shared system "
                    "memory, and each step becomes many times slower. Fit my GPU finds settings that fit."
                ),
            )
        self.fit_label.setText(text)

    def apply_preset(self, name: str) -> None:
        """Apply a preset (or Fit my GPU) and say what changed; Undo puts the old values back."""
        from desktop.core.settings.presets import apply_preset, fit_gpu

        before = copy.deepcopy(self._context_config)
        self.apply_to(before)
        if name == "fit":
            if self._shapes is None or self._gpu_free is None:
                return
            result = fit_gpu(before, self._shapes[0], self._shapes[1], self._gpu_free, self._caps)
        else:
            result = apply_preset(before, name, self._caps)
        self._undo = before
        self.load_config(result.config)
        if result.changes:
            changes = self.tr("Changed: {changes}").format(
                changes="; ".join(shown(c) for c in result.changes)
            )
        else:
            changes = self.tr("Nothing changed: the current settings already match.")
        self.changes_label.setText(changes)
        self.undo_button.setVisible(True)

    def _undo_preset(self) -> None:
        if self._undo is not None:
            self.load_config(self._undo)
            self._undo = None
        self.changes_label.setText("")
        self.undo_button.setVisible(False)

    def shutdown(self) -> None:
        for task in list(self._tasks):
            task.cancel()

    def _bound_group(self, title: str, section: str, choices: dict[str, tuple[str, ...]]) -> QGroupBox:
        """A form with one editor per field of a config section, its help text as the tooltip."""
        group = QGroupBox(title)
        form = QFormLayout(group)
        cls = type(getattr(RunConfig(), section))
        for f in dataclasses.fields(cls):
            default = getattr(cls(), f.name)
            if f.name in choices:
                editor: QWidget = QComboBox()
                editor.addItems(choices[f.name])
                editor.currentIndexChanged.connect(self._on_changed)
            elif isinstance(default, bool):
                editor = QCheckBox()
                editor.toggled.connect(self._on_changed)
            elif isinstance(default, int):
                editor = QSpinBox(minimum=0, maximum=1_000_000)
                editor.valueChanged.connect(self._on_changed)
            elif isinstance(default, float):
                editor = QDoubleSpinBox(decimals=2, minimum=0, maximum=0.99, singleStep=0.05)
                editor.valueChanged.connect(self._on_changed)
            else:
                editor = QLineEdit()
                editor.setPlaceholderText(self.tr("all linear layers"))
                editor.textChanged.connect(self._on_changed)
            editor.setToolTip(shown(f.metadata.get("help", "")))
            self.bound[(section, f.name)] = editor
            words = self._field_words().get(f.name, f.name.replace("_", " ").capitalize())
            self._add_field(form, f"{section}.{f.name}", words, editor)
        return group

    def _field_words(self) -> dict[str, str]:
        """The speed and LoRA fields as the page names them."""
        return {
            "precision": self.tr("Precision"),
            "optimizer": self.tr("Optimizer"),
            "gradient_checkpointing": self.tr("Gradient checkpointing"),
            "pin_memory": self.tr("Pin memory"),
            "dataloader_workers": self.tr("Data loader workers"),
            "empty_cache_steps": self.tr("Empty the GPU cache every (steps)"),
            "torch_compile": self.tr("Compile the model (torch.compile)"),
            "compile_backend": self.tr("Compile backend"),
            "attention": self.tr("Attention"),
            "oom_recovery": self.tr("Recover from out of memory"),
            "enabled": self.tr("Train LoRA adapters"),
            "rank": self.tr("Rank"),
            "alpha": self.tr("Alpha"),
            "dropout": self.tr("Dropout"),
            "target_modules": self.tr("Target modules"),
            "qlora": self.tr("QLoRA (4-bit base model)"),
        }

    def _add_field(self, form: QFormLayout, key: str, words: str, editor: QWidget | QHBoxLayout) -> None:
        """A form row for the config field ``key``, with its error shown under it (hidden while none)."""
        form.addRow(self.tr("{field}:").format(field=words), editor)
        label = error_label()
        form.addRow("", label)
        self.field_errors[key] = (words, label)

    def _load_bound(self, config: RunConfig) -> None:
        for (section, name), editor in self.bound.items():
            value = getattr(getattr(config, section), name)
            editor.blockSignals(True)
            if isinstance(editor, QComboBox):
                editor.setCurrentText(value)
            elif isinstance(editor, QCheckBox):
                editor.setChecked(value)
            elif isinstance(editor, QLineEdit):
                editor.setText(", ".join(value))
            else:
                editor.setValue(value)
            editor.blockSignals(False)

    def _apply_bound(self, config: RunConfig) -> None:
        for (section, name), editor in self.bound.items():
            if isinstance(editor, QComboBox):
                value: object = editor.currentText()
            elif isinstance(editor, QCheckBox):
                value = editor.isChecked()
            elif isinstance(editor, QLineEdit):
                value = [part.strip() for part in editor.text().split(",") if part.strip()]
            else:
                value = editor.value()
            setattr(getattr(config, section), name, value)

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
            self.seed,
            self.runs_dir,
            self.run_name,
            self.report_to,
        ]

    def load_config(self, config: RunConfig) -> None:
        t = config.training
        for widget in self._editors():
            widget.blockSignals(True)
        self.epochs.setValue(t.epochs)
        self.max_steps.setValue(t.max_steps)
        self.learning_rate.setValue(t.learning_rate)
        self.scheduler.setCurrentText(t.scheduler)
        self.warmup.setValue(t.warmup)
        self.batch_size.setValue(t.batch_size)
        self.accumulation.setValue(t.gradient_accumulation)
        self.max_length.setValue(t.max_length)
        self.eval_steps.setValue(t.eval_steps)
        self.save_steps.setValue(t.save_steps)
        self.logging_steps.setValue(t.logging_steps)
        self.seed.setValue(t.seed)
        self.runs_dir.setText(config.output.runs_dir)
        self.run_name.setText(config.output.name)
        self.report_to.setText(", ".join(config.output.report_to))
        for widget in self._editors():
            widget.blockSignals(False)
        self._load_bound(config)
        launch = config.launch
        for widget in (self.separate_process, self.gpu_count, self.strategy):
            widget.blockSignals(True)
        self.separate_process.setChecked(launch.separate_process or launch.distributed)
        self.gpu_count.setMaximum(max(self.gpu_count.maximum(), launch.num_processes))
        self.gpu_count.setValue(launch.num_processes)
        self.separate_process.setEnabled(launch.num_processes == 1)
        self.strategy.setCurrentIndex(max(0, self.strategy.findData(launch.strategy)))
        for widget in (self.separate_process, self.gpu_count, self.strategy):
            widget.blockSignals(False)
        self._update_multi_gpu_note()
        self._update_effective()
        self._on_changed()

    def apply_to(self, config: RunConfig) -> None:
        t = config.training
        t.epochs = self.epochs.value()
        t.max_steps = self.max_steps.value()
        t.learning_rate = self.learning_rate.value()
        t.scheduler = self.scheduler.currentText()
        t.warmup = self.warmup.value()
        t.batch_size = self.batch_size.value()
        t.gradient_accumulation = self.accumulation.value()
        t.max_length = self.max_length.value()
        t.eval_steps = self.eval_steps.value()
        t.save_steps = self.save_steps.value()
        t.logging_steps = self.logging_steps.value()
        t.seed = self.seed.value()
        config.output.runs_dir = self.runs_dir.text().strip()
        config.output.name = self.run_name.text().strip()
        config.output.report_to = [part.strip() for part in self.report_to.text().split(",") if part.strip()]
        self._apply_bound(config)
        config.launch.separate_process = self.separate_process.isChecked()
        config.launch.num_processes = self.gpu_count.value()
        config.launch.strategy = self.strategy.currentData() or "ddp"

    def problem(self) -> str:
        return self._problem

    def _on_changed(self) -> None:
        config = RunConfig()
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
            self._update_estimate()
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
        gpus = self.gpu_count.value() if hasattr(self, "gpu_count") else 1
        total = self.batch_size.value() * self.accumulation.value() * gpus
        self.effective.setText(
            self.tr("Effective batch: %n example(s) per update", "", total)
            if gpus == 1
            else self.tr("Effective batch: %n example(s) per update, across the GPUs", "", total)
        )

    def _browse_runs_dir(self) -> None:
        folder = QFileDialog.getExistingDirectory(
            self, self.tr("Folder for run folders"), self.runs_dir.text()
        )
        if folder:
            self.runs_dir.setText(folder)
