"""Preference tuning of a finished chat run's model: the wizard set up for it (Run history's button)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QCoreApplication

from desktop.core.runs.folders import RunDir
from desktop.core.settings.config_sections import Columns, learning_rate_for
from desktop.gui.pages.stack import DATA


def start_preference_tuning(window: Any, run: RunDir) -> None:
    """Make the model ``run`` saved the wizard's model and preference tuning its task, then show the
    Model and data step, where the pairs are chosen. The chat data and its columns go (they are not
    pairs) unless the wizard already had preference data; every other setting stays as it is."""
    config = window.current_config()  # the MainWindow (not imported: it imports this module)
    if config.task != "preference":
        config.task = "preference"
        config.training.learning_rate = learning_rate_for("preference", config.training.learning_rate)
        config.data.files, config.data.hub_id = [], ""
        config.columns = Columns()
    config.model.name = str(run.model_dir)
    window.set_config(config)
    window.go_to(DATA)
    window.statusBar().showMessage(
        QCoreApplication.translate(
            "PreferenceStart",
            "Preference tuning of the model {run} trained: choose pairs of answers (prompt, chosen, "
            "rejected) as the data.",
        ).format(run=run.path.name)
    )
