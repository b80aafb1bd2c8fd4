"""A form with one editor per field of a run config section, its help text as the tooltip."""

from __future__ import annotations

import dataclasses

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from desktop.core.settings.config import RunConfig
from desktop.gui.widgets.choice_combo import ChoiceCombo
from desktop.gui.widgets.field_error import AddField
from desktop.shared_ui import shown


class ConfigSectionWidget(QGroupBox):
    """Edits every field of one section of the run config (``performance``, ``lora``): a combo box for
    a field with ``choices``, a check box for a flag, a spin box for a number, a line for a list.

    Args:
        title: The group's title.
        section: The section's name in the run config.
        choices: The values a field may take, by field name (a combo box).
        add_field: Makes each field's form row (its errors are the page's).
    """

    changed = Signal()
    """The user changed a field of the section."""

    def __init__(
        self, title: str, section: str, choices: dict[str, tuple[str, ...]], add_field: AddField
    ) -> None:
        super().__init__(title)
        self.editors: dict[tuple[str, str], QWidget] = {}
        """Each field's editor, by ``(section, field)``."""
        form = QFormLayout(self)
        cls = type(getattr(RunConfig(), section))
        for f in dataclasses.fields(cls):
            default = getattr(cls(), f.name)
            if f.name in choices:
                editor: QWidget = ChoiceCombo(choices[f.name])
                editor.currentIndexChanged.connect(self.changed)
            elif isinstance(default, bool):
                editor = QCheckBox()
                editor.toggled.connect(self.changed)
            elif isinstance(default, int):
                editor = QSpinBox(minimum=0, maximum=1_000_000)
                if f.name == "resolution":  # 0: the size the model reads pictures at
                    editor.setSpecialValueText(self.tr("the model's own"))
                editor.valueChanged.connect(self.changed)
            elif isinstance(default, float):
                editor = QDoubleSpinBox(decimals=2, minimum=0, maximum=0.99, singleStep=0.05)
                editor.valueChanged.connect(self.changed)
            else:
                editor = QLineEdit()
                editor.setPlaceholderText(self.tr("all linear layers"))
                editor.textChanged.connect(self.changed)
            editor.setToolTip(shown(f.metadata.get("help", "")))
            self.editors[(section, f.name)] = editor
            words = self._field_words().get(f.name, f.name.replace("_", " ").capitalize())
            add_field(form, f"{section}.{f.name}", words, editor)

    GPU_ONLY = ("pin_memory", "empty_cache_steps", "qlora", "oom_recovery", "liger_kernel")
    """Fields that do something only on an NVIDIA GPU."""

    def show_fields(self, names: set[str]) -> None:
        """Show only the fields named (a section some of whose fields are for one task)."""
        form = self.layout()
        for (_section, name), editor in self.editors.items():
            form.setRowVisible(editor, name in names)

    def set_cuda(self, cuda: bool) -> None:
        """On a computer that trains on its CPU, the GPU-only fields are greyed out and say why (their
        values stay: a run with a GPU later uses them)."""
        for (_section, name), editor in self.editors.items():
            if name not in self.GPU_ONLY:
                continue
            editor.setEnabled(cuda)
            if not cuda:
                editor.setToolTip(self.tr("Only with an NVIDIA GPU: this computer trains on its processor."))

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
            "liger_kernel": self.tr("Liger fused kernels"),
            "padding_free": self.tr("Padding-free batches (causal LM)"),
            "group_by_length": self.tr("Group batches by length"),
            "oom_recovery": self.tr("Recover from out of memory"),
            "enabled": self.tr("Train LoRA adapters"),
            "rank": self.tr("Rank"),
            "alpha": self.tr("Alpha"),
            "dropout": self.tr("Dropout"),
            "target_modules": self.tr("Target modules"),
            "qlora": self.tr("QLoRA (4-bit base model)"),
            "augment": self.tr("Vary the training pictures (augmentation)"),
            "resolution": self.tr("Picture size (longest side, pixels)"),
            "train_vision": self.tr("Also train the vision tower"),
        }

    def show_config(self, config: RunConfig) -> None:
        """Show the section's values in ``config`` (no signal: nothing was changed by the user)."""
        for (section, name), editor in self.editors.items():
            value = getattr(getattr(config, section), name)
            editor.blockSignals(True)
            if isinstance(editor, ChoiceCombo):
                editor.set_value(value)
            elif isinstance(editor, QCheckBox):
                editor.setChecked(value)
            elif isinstance(editor, QLineEdit):
                editor.setText(", ".join(value))
            else:
                editor.setValue(value)
            editor.blockSignals(False)

    def apply_to(self, config: RunConfig) -> None:
        """Write the section's values shown into ``config``."""
        for (section, name), editor in self.editors.items():
            if isinstance(editor, ChoiceCombo):
                value: object = editor.value()
            elif isinstance(editor, QCheckBox):
                value = editor.isChecked()
            elif isinstance(editor, QLineEdit):
                value = [part.strip() for part in editor.text().split(",") if part.strip()]
            else:
                value = editor.value()
            setattr(getattr(config, section), name, value)
