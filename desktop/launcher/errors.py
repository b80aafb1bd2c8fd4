"""The launcher's one error: what went wrong setting up or starting, and what to do next."""

from __future__ import annotations


class SetupError(Exception):
    """Setting up the runtime failed: what happened and what to do, in plain words.

    Args:
        message: What happened.
        hint: What to do next.
        log: The last lines the failing command printed.
    """

    def __init__(self, message: str, hint: str, log: str = "") -> None:
        super().__init__(message)
        self.message, self.hint, self.log = message, hint, log


class Cancelled(SetupError):
    """The user cancelled; the runtime is left for the next start to repair."""
