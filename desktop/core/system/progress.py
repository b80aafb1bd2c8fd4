"""Progress and Cancel for long work in core, without a callback through every layer between.

The caller (a window's background task, a CLI command) wraps the work in :func:`reporting`; the code
deep inside that reads a file a block at a time calls :func:`report` now and then. Outside
:func:`reporting` both are no-ops, so the same functions serve the CLI, tests and the app alike. The
reporter lives in a context variable: each thread sees its own.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from desktop.core.system.errors import StudioError
from desktop.core.system.messages import Msg, msg


class Cancelled(StudioError):
    """The user cancelled the work; nothing it made is kept."""

    def __init__(self) -> None:
        super().__init__(msg("Cancelled."), msg("Nothing was changed."))


@dataclass(frozen=True)
class _Reporter:
    on_progress: Callable[[float, Msg], None]
    cancelled: Callable[[], bool]


_current: contextvars.ContextVar[_Reporter | None] = contextvars.ContextVar("progress", default=None)


@contextlib.contextmanager
def reporting(
    on_progress: Callable[[float, Msg], None], cancelled: Callable[[], bool] = lambda: False
) -> Iterator[None]:
    """Within the block, :func:`report` tells ``on_progress`` (share done 0..1, what is being done) and
    raises :class:`Cancelled` once ``cancelled()`` is true."""
    token = _current.set(_Reporter(on_progress, cancelled))
    try:
        yield
    finally:
        _current.reset(token)


def report(share: float, what: Msg) -> None:
    """Say how far the work is (``share`` of it done, 0..1) and stop here if it was cancelled.

    Raises:
        Cancelled: The caller of :func:`reporting` asked to stop.
    """
    reporter = _current.get()
    if reporter is None:
        return
    if reporter.cancelled():
        raise Cancelled()
    reporter.on_progress(min(1.0, max(0.0, share)), what)


@contextlib.contextmanager
def part(start: float, end: float) -> Iterator[None]:
    """Within the block, :func:`report`'s shares 0..1 mean ``start``..``end`` of the whole work (a
    step of several, one file of several)."""
    outer = _current.get()
    if outer is None:
        yield
        return
    token = _current.set(
        _Reporter(lambda share, what: outer.on_progress(start + share * (end - start), what), outer.cancelled)
    )
    try:
        yield
    finally:
        _current.reset(token)
