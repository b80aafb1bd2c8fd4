"""What every wizard page offers the main window."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from desktop.core.settings.config import RunConfig


class WizardPage(QWidget):
    """A step of the wizard: edits part of the run config and says whether it is complete."""

    validity_changed = Signal()
    """The page became valid or invalid; read :meth:`problem`."""

    title = ""
    subtitle = ""

    def load_config(self, config: RunConfig) -> None:
        """Show the values of ``config``."""

    def apply_to(self, config: RunConfig) -> None:
        """Write the page's values into ``config``."""

    def problem(self) -> str:
        """Why the user cannot go on yet; empty when the page is complete."""
        return ""

    def shutdown(self) -> None:
        """Cancel the page's background work before the app quits; never blocks (the window waits
        for all background work at most :data:`~desktop.gui.app_support.workers.SHUTDOWN_GRACE_S`)."""
