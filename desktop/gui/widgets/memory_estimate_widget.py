"""The memory estimate of the options set now against the GPU (or RAM), and the presets with Undo."""

from __future__ import annotations

import sys
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QGroupBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout

from desktop.core.settings.config import RunConfig
from desktop.core.settings.memory import Estimate
from desktop.core.settings.options import Capabilities
from desktop.core.settings.presets import presets_for
from desktop.core.system.errors import StudioError, human_size
from desktop.gui.app_support.workers import TaskGroup
from desktop.gui.widgets.fit_badge_widget import free_ram
from desktop.shared_ui import sentences as sentences_joined
from desktop.shared_ui import shown


def _on_windows() -> bool:
    """Whether the app runs on Windows (a function, so tests can say it does)."""
    return sys.platform == "win32"


class MemoryEstimateWidget(QGroupBox):
    """What the run needs (weights, gradients, optimizer, activations, ...) and whether it fits in the
    GPU's free memory; without an NVIDIA GPU, the RAM it needs on the CPU. The presets (Fastest,
    Balanced, Lowest memory, Fit my GPU) change the options and say what they changed; Undo puts them
    back. The model's shapes are read in the helper process.

    Args:
        config: The run config as it would run with the options shown now (a copy to keep).
    """

    estimate_updated = Signal()
    """The model's size was read (or could not be): the estimate is up to date."""
    preset_applied = Signal(object)
    """A preset (or Undo) chose options: the :class:`RunConfig` whose options to show now."""

    def __init__(self, config: Callable[[], RunConfig]) -> None:
        super().__init__(self.tr("Memory estimate and presets"))
        self._config = config
        self._gpu_name, self._gpu_free, self._caps = "", None, Capabilities()
        self._shapes_key: tuple | None = None
        self._shapes: tuple | None = None
        self._undo: RunConfig | None = None
        self._tasks = TaskGroup(self)
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
        self.undo_button.clicked.connect(self._on_undo_button_clicked)
        box = QVBoxLayout(self)
        box.addWidget(self.fit_label)
        box.addWidget(self.breakdown)
        box.addLayout(row)
        box.addWidget(self.changes_label)
        box.addWidget(self.undo_button, 0, Qt.AlignmentFlag.AlignLeft)

    def set_context(self, config: RunConfig, gpu_name: str, gpu_free: int | None, caps: Capabilities) -> None:
        """The model, task and GPU the estimate is for; model shapes are read off the GUI thread."""
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
            self.update_estimate()
            return
        self._shapes_key, self._shapes = key, None
        self.fit_label.setText(self.tr("Reading the model's size…"))

        def read() -> tuple:
            from desktop.core.helper_process import model_shapes

            return model_shapes(config)  # in the helper process: this one never imports PyTorch

        self._tasks.run(
            read, lambda shapes: self._on_shapes(key, shapes), lambda exc: self._on_shapes_failed(key, exc)
        )

    def _on_shapes(self, key: tuple, shapes: tuple) -> None:
        if key == self._shapes_key:
            self._shapes = shapes
            self.update_estimate()
            self.estimate_updated.emit()

    def _on_shapes_failed(self, key: tuple, exc: object) -> None:
        if key == self._shapes_key:
            message = shown(exc.message) if isinstance(exc, StudioError) else str(exc)
            self.fit_label.setText(
                self.tr("The model's size could not be read: {error}").format(error=message)
            )
            self.estimate_updated.emit()

    def shutdown(self) -> None:
        """Cancel the reading of the model's shapes."""
        self._tasks.cancel_all()

    def current_estimate(self) -> Estimate | None:
        """The estimate for the options as they are now (``None`` until the model's size is known)."""
        if self._shapes is None:
            return None
        from desktop.core.settings.memory import estimate, mixed_precision

        config = self._config()
        shapes = self._shapes[1] if config.lora.enabled and self._shapes[1] is not None else self._shapes[0]
        return estimate(shapes, config, mixed_precision=mixed_precision(config, self._gpu_free is not None))

    def update_estimate(self) -> None:
        """Show the estimate for the options as they are now (once the model's size is known)."""
        result = self.current_estimate()
        if result is None:
            return
        gpu = self._gpu_free is not None
        lines = [
            self.tr("{term}: {size}").format(term=shown(name), size=human_size(value))  # never "0.00 GB"
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
                    "No NVIDIA GPU here: training runs on the CPU and needs about {total} of RAM "
                    "({free} free). It is much slower than on a GPU: small models and short texts "
                    "suit it best."
                ).format(total=human_size(result.total), free=human_size(free_ram()))
            )
            return
        sentences = {
            "fits": self.tr("Needs about {total}: fits in the {free} free on {gpu}."),
            "tight": self.tr("Needs about {total}: fits, but tightly, in the {free} free on {gpu}."),
            "will not fit": self.tr("Needs about {total}: will not fit in the {free} free on {gpu}."),
        }
        verdict = result.verdict(self._gpu_free)
        text = sentences[verdict].format(
            total=human_size(result.total), free=human_size(self._gpu_free), gpu=self._gpu_name
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

        before = self._config()
        if name == "fit":
            if self._shapes is None or self._gpu_free is None:
                return
            result = fit_gpu(before, self._shapes[0], self._shapes[1], self._gpu_free, self._caps)
        else:
            result = apply_preset(before, name, self._caps)
        changed = bool(result.changes)
        if changed:
            self._undo = before
            self.preset_applied.emit(result.config)
            text = self.tr("Changed: {changes}.").format(changes="; ".join(shown(c) for c in result.changes))
        elif result.fits:
            text = self.tr("Nothing changed: the current settings already match.")
        else:
            text = ""
        self.changes_label.setText(sentences_joined(text, *(shown(n) for n in result.notes)))
        self.undo_button.setVisible(changed)  # a preset that changed nothing has nothing to undo

    def fit_my_gpu(self) -> None:
        """Apply Fit my GPU where it is offered (an NVIDIA GPU was found)."""
        fit = self.preset_buttons["fit"]
        if fit.isEnabled() and not fit.isHidden():
            fit.click()

    def _on_undo_button_clicked(self) -> None:
        if self._undo is not None:
            self.preset_applied.emit(self._undo)
            self._undo = None
        self.changes_label.setText("")
        self.undo_button.setVisible(False)
