"""What every wizard page offers the main window."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget


class WizardPage(QWidget):
    """A step of the wizard: says whether it is complete. A page that edits part of the run config
    reads and writes the window's :class:`~desktop.gui.config_model.RunConfigModel`."""

    validity_changed = Signal()
    """The page became valid or invalid; read :meth:`problem`."""

    title = ""
    subtitle = ""

    def problem(self) -> str:
        """Why the user cannot go on yet; empty when the page is complete."""
        return ""

    def shutdown(self) -> None:
        """Cancel the page's background work before the app quits; never blocks (the window waits
        for all background work at most :data:`~desktop.gui.app_support.workers.SHUTDOWN_GRACE_S`)."""
