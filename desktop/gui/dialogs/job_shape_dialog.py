"""Asks the shape of a job for another machine or a cluster: GPUs per machine, and machines."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QSpinBox, QWidget


class JobShapeDialog(QDialog):
    """GPUs per machine and machines for the job (the other machine is often bigger than this one).

    Args:
        gpus: The GPUs per machine to start from (the run's own).
        parent: The window it belongs to.
    """

    def __init__(self, gpus: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Job for another machine or a cluster"))
        form = QFormLayout(self)
        self.per_node = QSpinBox(minimum=1, maximum=64, value=max(1, gpus))
        self.machines = QSpinBox(minimum=1, maximum=1024, value=1)
        form.addRow(self.tr("GPUs per machine:"), self.per_node)
        form.addRow(self.tr("Machines (for the Slurm script):"), self.machines)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    @classmethod
    def ask(cls, gpus: int, parent: QWidget | None = None) -> tuple[int, int] | None:
        """GPUs per machine and machines as the user sets them; ``None`` when they cancel."""
        dialog = cls(gpus, parent)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return dialog.per_node.value(), dialog.machines.value()
