"""Try the sample: it replaces the model and data on every page, so it asks before replacing the user's."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QMessageBox, QWidget

from desktop.core.settings.config import RunConfig, load_config
from desktop.core.system.paths import resources_dir

SAMPLE_CONFIG = resources_dir() / "samples" / "classification.toml"
PAGE_AFTER_CONFIG_MS = 30
"""The sample's config is put on every page, and its page shown this much later: both in one turn of the
event loop (then the page's first layout and paint in the next) froze the window 50-70 ms in the
responsiveness bench; between them the window handles input."""


def sample_to_load(parent: QWidget, current: RunConfig) -> RunConfig | None:
    """The sample's config, or ``None`` when the user keeps their own model and data."""
    sample = load_config(SAMPLE_CONFIG)
    return sample if sample_may_replace(parent, current, sample) else None


def sample_may_replace(parent: QWidget, current: RunConfig, sample: RunConfig) -> bool:
    """Whether to load ``sample`` over ``current``: at once when the user has chosen no model and no data
    of their own (or the sample's), else when they say so."""
    mine = []
    if current.model.name.strip() and current.model.name != sample.model.name:
        mine.append(current.model.name.strip())
    data = current.data.hub_id.strip() or ", ".join(Path(f).name for f in current.data.files)
    if data and [Path(f).name for f in current.data.files] != [Path(f).name for f in sample.data.files]:
        mine.append(data)
    if not mine:
        return True
    translate = QCoreApplication.translate
    box = QMessageBox(
        QMessageBox.Icon.Question,
        translate("SampleDialog", "Replace your choices with the sample?"),
        translate(
            "SampleDialog",
            "The sample sets its own model and data (short English reviews, the bundled English model) on "
            "every page. Your choices now: {mine}.\n\nSave them first with File > Save run config… to come "
            "back to them.",
        ).format(mine="; ".join(mine)),
        parent=parent,
    )
    load = box.addButton(translate("SampleDialog", "Load the sample"), QMessageBox.ButtonRole.AcceptRole)
    box.addButton(translate("SampleDialog", "Keep mine"), QMessageBox.ButtonRole.RejectRole)
    box.setDefaultButton(load)
    box.exec()
    return box.clickedButton() is load
