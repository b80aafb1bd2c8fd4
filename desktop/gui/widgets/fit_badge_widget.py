"""The fit badge of a chosen model: whether it trains on this computer, from its config.json."""

from __future__ import annotations

import copy
from typing import Any

from PySide6.QtWidgets import QLabel

from desktop.core.settings.config import RunConfig
from desktop.core.system.errors import human_size
from desktop.gui.app_support.workers import TaskGroup
from desktop.gui.widgets.fit_text import badge_text
from desktop.shared_ui import sentences


def free_ram() -> int:
    """Bytes of RAM free now (psutil's first import takes 0.1 s: call it off the GUI thread first)."""
    import psutil

    return int(psutil.virtual_memory().available)


class FitBadgeWidget(QLabel):
    """One line under the model: fits, tight or does not fit here, with what it needs and what is free.

    The model's config is fetched and measured in the background; only the latest request's answer
    is shown.
    """

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("hint")
        self.setWordWrap(True)
        self._asked = 0
        self._tasks = TaskGroup(self)

    def update_for(self, config: RunConfig, gpu_free: int | None, rows: int) -> None:
        """Measure the model of ``config`` against ``gpu_free`` (``None``: no NVIDIA GPU, so RAM) for
        ``rows`` training rows (0: unknown), and show the badge when the answer comes."""
        from desktop.core.hub.models import resolve

        config = copy.deepcopy(config)

        def work() -> Any:
            from desktop.core.helper_process import model_fit
            from desktop.core.hub.fit import fetch_config

            ram = free_ram()  # here: psutil's first import takes 0.1 s
            return model_fit(fetch_config(resolve(config.model)), config, gpu_free, ram, rows or None)

        self._asked += 1
        asked = self._asked
        # No badge when the config cannot be had: not an error.
        self._tasks.run(work, lambda result: self._on_fit(asked, result), lambda exc: None)

    def _on_fit(self, asked: int, result: Any) -> None:
        if asked != self._asked:
            return  # asked again meanwhile (another model, the rows now known): that answer counts
        where = self.tr("this GPU") if result.on_gpu else self.tr("RAM (no NVIDIA GPU)")
        text = self.tr(
            "Fit here: {badge}. Needs about {need} with the current Memory & speed options; "
            "{have} free in {where}."
        )
        text = text.format(
            badge=badge_text(result.badge),
            need=human_size(result.needed),
            have=human_size(result.available),
            where=where,
        )
        if result.epoch_s:  # no NVIDIA GPU: the time is what the user needs to know
            per_epoch = self.tr("Roughly {minutes:.0f} min per epoch on this CPU.")
            text = sentences(text, per_epoch.format(minutes=max(1.0, result.epoch_s / 60)))
        self.setText(text)

    def shutdown(self) -> None:
        """Cancel the measurement under way."""
        self._tasks.cancel_all()
