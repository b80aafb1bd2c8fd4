"""Reading and checking the data, and measuring its token lengths, in the background for the data page.

Each load of the data is a generation: what an older load answers late is dropped. A large file (or a
hub dataset) shows its first rows at once while every row is checked; the full check reports its
progress and can be cancelled.
"""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot

from desktop.core.data.preview import Preview, preview, preview_head
from desktop.core.helper_process import TokenReport
from desktop.core.settings.config import RunConfig
from desktop.core.settings.config_sections import IMAGE_TASKS
from desktop.gui.app_support.workers import BackgroundTask, TaskGroup

PREVIEW_ROWS = 50
HEAD_FIRST_BYTES = 4 << 20
"""Data of this size or more (or on the hub) shows its first rows before every row is checked."""


class DataCheckController(QObject):
    """Reads the data of a config (its first rows, then every row) and measures its token lengths.

    Only the latest generation's answers are emitted (see :meth:`next_generation`).
    """

    head_loaded = Signal(object)
    """The first rows and the guessed mapping (a :class:`Preview`); every row is still being checked."""
    check_progressed = Signal(object)
    """The check of every row: ``(share done, what it does)``."""
    checked = Signal(object)
    """Every row was checked: the :class:`Preview`."""
    check_failed = Signal(object)
    """The data could not be read or does not fit as mapped (or the check was cancelled): the exception."""
    stats_loaded = Signal(object)
    """The token statistics: a :class:`TokenReport`."""
    stats_failed = Signal(object)
    """The token statistics could not be had: the exception."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._generation = 0
        self._checked = 0  # the last load whose every row was checked (its head is then stale)
        self._stop: threading.Event | None = None
        self._tasks = TaskGroup(self)

    def next_generation(self) -> None:
        """A new load of the data begins: what the loads before it answer from now on is dropped."""
        self._generation += 1

    def check(self, config: RunConfig) -> None:
        """Read the data of ``config``: its first rows in a moment, however large the file, while every
        row is checked (a large file: seconds later). A small file is checked whole as fast: read once
        (a second reading thread took the window's turns)."""
        generation = self._generation
        pictures = config.task in IMAGE_TASKS  # every picture is opened by the full check: rows first
        if pictures or _local_bytes(config.data.files) >= HEAD_FIRST_BYTES:
            self._tasks.run(
                lambda: preview_head(config, num_rows=PREVIEW_ROWS),
                lambda result: self._on_head(generation, result),
                lambda exc: None,  # the full check says what is wrong
            )
        if self._stop is not None:
            self._stop.set()  # the check of the data before is of no use now
        stop = self._stop = threading.Event()

        def check_all() -> Preview:
            from desktop.core.system import progress

            with progress.reporting(
                lambda share, what: task.report((generation, (share, what))), stop.is_set
            ):
                return preview(config, num_rows=PREVIEW_ROWS, schedule=False)

        task = BackgroundTask(check_all, self, stop)
        # Emitted on the task's thread: a bound method of this GUI-thread object takes it (queued).
        task.progressed.connect(self._on_task_progressed)
        self._tasks.track(
            task,
            lambda result: self._on_checked(generation, result),
            lambda exc: self._on_failed(generation, exc),
        )
        task.start()

    def cancel_check(self) -> None:
        """Stop the check of every row; the first rows stay shown and training checks every row at Start."""
        if self._stop is not None:
            self._stop.set()

    def measure(self, config: RunConfig) -> None:
        """Measure the token lengths of the data of ``config`` under its model's tokenizer."""
        generation = self._generation

        def measure() -> TokenReport:
            from desktop.core.helper_process import token_statistics

            return token_statistics(config)  # in the helper process: this one never imports PyTorch

        self._tasks.run(
            measure,
            lambda result: self._on_stats(generation, result),
            lambda exc: self._on_stats_failed(generation, exc),
        )

    def shutdown(self) -> None:
        """Cancel the reading and measuring under way (never blocks)."""
        self._tasks.cancel_all()

    @Slot(object)
    def _on_task_progressed(self, value: tuple) -> None:
        generation, progress = value
        if generation == self._generation:
            self.check_progressed.emit(progress)

    def _on_head(self, generation: int, result: Preview | None) -> None:
        if result is not None and generation == self._generation and self._checked != generation:
            self.head_loaded.emit(result)

    def _on_checked(self, generation: int, result: Preview) -> None:
        if generation == self._generation:
            self._checked = generation
            self.checked.emit(result)

    def _on_failed(self, generation: int, exc: object) -> None:
        if generation == self._generation:
            self._checked = generation
            self.check_failed.emit(exc)

    def _on_stats(self, generation: int, result: TokenReport) -> None:
        if generation == self._generation:
            self.stats_loaded.emit(result)

    def _on_stats_failed(self, generation: int, exc: object) -> None:
        if generation == self._generation:
            self.stats_failed.emit(exc)


def _local_bytes(files: list[str]) -> int:
    """The size of the data files (a hub dataset, an unreadable path, a folder of pictures, whose every
    picture the full check opens: as large as can be)."""
    try:
        paths = [Path(name).expanduser() for name in files]
        if not paths or any(path.is_dir() for path in paths):
            return 1 << 62
        return sum(path.stat().st_size for path in paths)
    except OSError:
        return 1 << 62
