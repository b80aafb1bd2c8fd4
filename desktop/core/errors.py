"""Errors that reach the user: each says what happened and what to do next."""

from __future__ import annotations

from dataclasses import dataclass


class StudioError(Exception):
    """A failure with a plain-language message and a concrete next step.

    Args:
        message: What happened, in words a user understands.
        hint: What to do about it.
    """

    exit_code = 1

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}\n{self.hint}" if self.hint else self.message


class InputError(StudioError):
    """The user's input (config, data file, model folder) is wrong; nothing was started."""

    exit_code = 2


class DataError(InputError):
    """A data file or dataset cannot be used as it is."""


class ModelError(InputError):
    """The model cannot be found or loaded."""


@dataclass(frozen=True)
class Problem:
    """One problem found in a config.

    Args:
        field: Dotted path of the field, e.g. ``training.learning_rate``.
        message: What is wrong and how to fix it.
    """

    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


class ConfigError(InputError):
    """A config has one or more problems; all of them are listed at once."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        count = len(self.problems)
        super().__init__(
            f"The run config has {count} problem{'s' if count != 1 else ''}:\n{lines}",
            "Fix the fields above and try again.",
        )


def explain_failure(exc: BaseException) -> tuple[str, str]:
    """A plain-language reason and a concrete remedy for an exception raised during training."""
    if isinstance(exc, StudioError):
        return exc.message, exc.hint
    text = str(exc)
    name = type(exc).__name__
    if name == "OutOfMemoryError" or "out of memory" in text.lower():
        return (
            "The GPU ran out of memory.",
            "Lower training.batch_size and raise training.gradient_accumulation by the same factor "
            "(the effective batch stays the same), or lower training.max_length; then resume.",
        )
    if "not compiled with CUDA" in text:
        return (
            "This PyTorch build has no GPU support.",
            "Install a CUDA build of PyTorch (the Environment page can do it), then start again.",
        )
    if "CUDA error" in text or "CUBLAS" in text or "cuDNN" in text:
        return (
            f"A CUDA error stopped training: {text.splitlines()[0]}",
            "Restart the app and resume from the last checkpoint. If it happens again, update the NVIDIA "
            "driver or reinstall PyTorch from the Environment page.",
        )
    if isinstance(exc, MemoryError):
        return (
            "The computer ran out of memory (RAM).",
            "Close other programs, lower training.batch_size or training.max_length, then resume.",
        )
    if isinstance(exc, OSError) and getattr(exc, "errno", None) == 28:
        return ("The disk is full.", "Free disk space (old checkpoints in the runs folder), then resume.")
    first = text.splitlines()[0] if text else name
    return (
        f"Training stopped with an unexpected error: {name}: {first}",
        "Open the details for the full traceback. Resume from the last checkpoint, or report the problem "
        "with the details attached.",
    )
