"""Which model of a finished run the Export page works on: its best checkpoint (the run's model, the
default) or its last step, made on request from that checkpoint (``core/results/last_step.py``).

Shown only when there is a choice: the run kept its best checkpoint, an earlier step than its last, and
the last step's checkpoint is still there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QWidget

from desktop.core.runs.folders import RunDir
from desktop.gui.app_support.workers import BackgroundTask
from desktop.shared_ui import error_text, shown


class CheckpointChoice(QComboBox):
    """The best checkpoint or the last step; :attr:`chosen` gives the run as the page should show it."""

    chosen = Signal(object)
    """The :class:`RunDir` whose ``model_dir`` the page now shows (a ``LastStepRun`` for the last step)."""
    said = Signal(str)
    """Which model this is, or what is being done (making the last step's model), or what failed."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setToolTip(
            self.tr(
                "The run's model is the checkpoint that scored best on the validation rows. The last "
                "step's model is made from its checkpoint when you choose it (a LoRA run's is merged)."
            )
        )
        self.run: RunDir | None = None
        self.found: dict[str, Any] = {}
        self._task: BackgroundTask | None = None
        self.currentIndexChanged.connect(self._on_changed)
        # As wide as its items whenever they change: shown first while empty (a run without the choice),
        # the first-show policy kept it at that width ("Best che...").
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.setVisible(False)

    def set_run(self, run_dir: str | Path | None) -> None:
        """Offer the choice for ``run_dir`` (hidden when it has none); the best checkpoint is chosen."""
        from desktop.core.results.last_step import checkpoint
        from desktop.core.training import best

        self.run = RunDir(run_dir) if run_dir else None
        self.found = best.of_run(run_dir) if run_dir else {}
        self._task = None  # a last step still being made is another run's now: its result is dropped
        self.blockSignals(True)
        self.clear()
        if self.run is not None and checkpoint(self.run, self.found) is not None:
            metric = shown(best.metric_name(self.found["metric"]))
            self.addItem(
                self.tr("Best checkpoint: step {step}, {metric} {value:.4g}").format(
                    step=self.found["step"], metric=metric, value=self.found["value"]
                ),
                "best",
            )
            last = self.found.get("last_value")
            self.addItem(
                self.tr("Last step: step {step}, {metric} {value}").format(
                    step=self.found["last_step"],
                    metric=metric,
                    value=f"{last:.4g}" if last is not None else "?",
                ),
                "last",
            )
        self.blockSignals(False)
        self.setVisible(self.count() > 0)
        self.setEnabled(True)

    def sentence(self) -> str:
        """Which model the page shows, by which figure ("" when no best was tracked)."""
        from desktop.core.results.last_step import sentence
        from desktop.core.training import best

        if self.currentData() == "last":
            return shown(sentence(self.found))
        which = best.model_sentence(self.found)
        return shown(which) if which is not None else ""

    def is_busy(self) -> bool:
        return self._task is not None

    def _on_changed(self) -> None:
        if self.run is None:
            return
        if self.currentData() != "last":
            self.said.emit(self.sentence())
            self.chosen.emit(self.run)
            return
        from desktop.core.results.last_step import build

        run, found = self.run, self.found
        self.setEnabled(False)
        self.said.emit(
            self.tr("Making the last step's model from checkpoint-{step}…").format(step=found["last_step"])
        )
        task = BackgroundTask(lambda: build(run, found), self)
        task.finished.connect(lambda view, task=task: self._on_built(task, view))
        task.failed.connect(lambda exc, detail, task=task: self._on_failed(task, exc, detail))
        self._task = task
        task.start()

    def _on_built(self, task: BackgroundTask, view: object) -> None:
        if task is not self._task:
            return  # made for a run no longer shown
        self._task = None
        self.setEnabled(True)
        self.said.emit(self.sentence())
        self.chosen.emit(view)

    def _on_failed(self, task: BackgroundTask, exc: object, _detail: str) -> None:
        if task is not self._task:
            return
        self._task = None
        self.setEnabled(True)
        self.blockSignals(True)
        self.setCurrentIndex(0)  # back to the run's model, which the page still shows
        self.blockSignals(False)
        self.said.emit(
            self.tr("The last step's model could not be made: {error}").format(error=error_text(exc, " "))
            + "\n"
            + self.sentence()
        )
