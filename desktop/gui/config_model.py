"""The one run config the window edits: pages read it and write their fields into it."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

from PySide6.QtCore import QObject, Signal

from desktop.core.settings.config import RunConfig


class RunConfigModel(QObject):
    """Holds the run config the wizard edits; every page reads this one and writes its edits into it.

    A page writes its fields with :meth:`set` or :meth:`edit` as the user changes them; a page that
    shows a field another page edits listens to :attr:`changed`. A whole new config (a file, the
    sample, a run resumed, a remedy applied) comes in with :meth:`replace`, and every page shows it.
    What runs is a :meth:`snapshot`.

    Args:
        parent: The window that owns it.
    """

    changed = Signal(str)
    """A field changed: its path (``"training.max_length"``, ``"columns.text"``, ``"task"``), or ``""``
    when a whole new config replaced the last one."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._config = RunConfig()

    @property
    def config(self) -> RunConfig:
        """The run config now: read it here; change it through :meth:`set`, :meth:`edit` or
        :meth:`replace` (so that those who show it hear of it)."""
        return self._config

    def snapshot(self) -> RunConfig:
        """A copy of the run config now, to run, save or hand to another part of the app."""
        return copy.deepcopy(self._config)

    def replace(self, config: RunConfig) -> None:
        """Make a copy of ``config`` the run config; ``changed("")`` tells every page to show it."""
        self._config = copy.deepcopy(config)
        self.changed.emit("")

    def set(self, path: str, value: Any) -> None:
        """Set one field (``"model.name"``, ``"task"``); ``changed(path)`` when its value is new."""

        def write(config: RunConfig) -> None:
            *sections, name = path.split(".")
            target: Any = config
            for section in sections:
                target = getattr(target, section)
            setattr(target, name, value)

        self.edit(write)

    def edit(self, write: Callable[[RunConfig], None]) -> None:
        """Let ``write`` change the run config in place, then emit ``changed`` for each field whose
        value it changed."""
        before = copy.deepcopy(self._config)
        write(self._config)
        for path in _changed_fields(before, self._config):
            self.changed.emit(path)


def _changed_fields(before: object, after: object, prefix: str = "") -> Iterator[str]:
    """The dotted paths of the fields whose values differ (a section's fields one by one)."""
    for field in dataclasses.fields(after):
        old, new = getattr(before, field.name), getattr(after, field.name)
        path = f"{prefix}{field.name}"
        if dataclasses.is_dataclass(new) and dataclasses.is_dataclass(old) and type(old) is type(new):
            yield from _changed_fields(old, new, f"{path}.")
        elif old != new:
            yield path
