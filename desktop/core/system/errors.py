"""Errors that reach the user: each says what happened and what to do next."""

from __future__ import annotations

import errno
import shutil
import tempfile
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.core.system.messages import joined, msg


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
        self.detail = ""
        """The library's or the operating system's own words ("[Errno -2] Name or service not known"),
        where the message says it in ours: behind Details, never in the sentence."""

    def __str__(self) -> str:
        return f"{self.message}\n{self.hint}" if self.hint else self.message


class InputError(StudioError):
    """The user's input (config, data file, model folder) is wrong; nothing was started."""

    exit_code = 2


class DataError(InputError):
    """A data file or dataset cannot be used as it is."""


class NoRowsError(DataError):
    """A data file holds no rows (empty, or a header alone); its words are for training data, and a
    caller reading other rows (predict) says it in its own."""


class ModelError(InputError):
    """The model cannot be found or loaded."""


class DiskError(StudioError):
    """A folder is full (``kind`` ``disk_full``) or not writable (``not_writable``).

    The message names the folder and, where known, the space needed and free.
    """

    def __init__(self, message: str, hint: str = "", kind: str = "disk_full") -> None:
        super().__init__(message, hint)
        self.kind = kind


class NonFiniteError(StudioError):
    """Numbers that are not numbers: a training or evaluation loss or a gradient norm became NaN or
    infinite (the run stops), or a model's weights hold such values (refused at load, resume, export).

    Args:
        remedies: Changes that fix it, for Apply and retry (a lower learning rate, bf16).
    """

    def __init__(self, message: str, hint: str = "", remedies: tuple[Remedy, ...] = ()) -> None:
        super().__init__(message, hint)
        self.remedies = remedies


class DiskInputError(DiskError, InputError):
    """A :class:`DiskError` found before anything was started (exit code 2)."""


def exception_chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and every exception it was raised from or while handling, outermost first."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


DISK_FULL_ERRNOS = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}
NOT_WRITABLE_ERRNOS = {errno.EACCES, errno.EPERM, errno.EROFS}
DISK_FULL_TEXTS = (
    "no space left",
    "disk full",
    "file write failed",
    "there is not enough space",
    # PyTorch's zip writer (torch.save: optimizer.pt in a checkpoint) when a write falls short: what a disk
    # that another program filled during the save gives, instead of an OSError.
    "pytorchstreamwriter failed writing",
    "unexpected pos",
)


def free_mb(folder: Path) -> float | None:
    """Free space in MB on the drive of ``folder`` (or of its nearest existing parent)."""
    folder = Path(folder)
    for candidate in (folder, *folder.parents):
        try:
            return shutil.disk_usage(candidate).free / 2**20
        except OSError:
            continue
    return None


def disk_error(
    exc: BaseException, folder: Path | str | None = None, needed_bytes: int = 0
) -> DiskError | None:
    """A one-sentence :class:`DiskError` when ``exc`` (or any exception in its chain) is a full disk or an
    unwritable folder; ``None`` otherwise.

    Args:
        exc: The exception.
        folder: The folder being written, when the caller knows it better than the exception does.
        needed_bytes: The space the write needed, when known.
    """
    # The operating system's own error (with its errno and file) first: a library's words about it
    # (PyTorch's "unexpected pos") say less.
    chain = sorted(exception_chain(exc), key=lambda link: getattr(link, "errno", None) is None)
    for link in chain:
        code = getattr(link, "errno", None)
        low = str(link).lower()
        path = getattr(link, "filename", None)
        where = Path(folder) if folder else (Path(path).parent if path else None)
        if code in DISK_FULL_ERRNOS or any(t in low for t in DISK_FULL_TEXTS):
            free = free_mb(where) if where else None
            return DiskError(
                joined(
                    msg("The disk is full: a file could not be written in {folder}.", folder=str(where))
                    if where
                    else msg("The disk is full: a file could not be written."),
                    _space(needed_bytes, free),
                ),
                msg(
                    "Free some space (old runs and checkpoints in the runs folder are often large) or choose "
                    "a folder on another drive, then try again."
                ),
                "disk_full",
            )
        if code in NOT_WRITABLE_ERRNOS or (isinstance(link, PermissionError)):
            return DiskError(
                msg(
                    "Finetune Studio may not write in {folder}: the folder is read-only or belongs to "
                    "another user.",
                    folder=str(where),
                )
                if where
                else msg(
                    "Finetune Studio may not write there: the folder is read-only or belongs to another user."
                ),
                msg("Choose a folder you can write to (for example in your home folder) and try again."),
                "not_writable",
            )
    return None


def os_error(exc: BaseException) -> StudioError | None:
    """An operating system's failure (``OSError``) in our words, its own text kept as ``detail``: a full
    disk or a folder that may not be written (:func:`disk_error`), a file not found, or one another program
    holds open. ``None`` for any other exception."""
    if not isinstance(exc, OSError):
        return None
    name = exc.filename or ""
    found = disk_error(exc)
    if found is None and exc.errno == errno.ENOENT:
        found = StudioError(
            msg("{file} was not found.", file=name) if name else msg("A file was not found."),
            msg("Check that it still exists (a drive unplugged, a folder moved or renamed) and try again."),
        )
    elif found is None and (getattr(exc, "winerror", None) in (32, 33) or exc.errno == errno.EBUSY):
        found = StudioError(
            msg("{file} is in use by another program.", file=name) if name else msg("A file is in use."),
            msg("Close the program that has it open (an editor, Excel, a file preview) and try again."),
        )
    if found is not None:
        found.detail = str(exc)
    return found


def _space(needed_bytes: int, free_mb: float | None) -> str | None:
    """The sentence on space needed and free, as far as they are known."""
    free = human_size(free_mb * 2**20) if free_mb is not None else ""
    needed = human_size(needed_bytes) if needed_bytes else ""
    if needed and free:
        return msg("It needs about {needed}; {free} are free there.", needed=needed, free=free)
    if needed:
        return msg("It needs about {needed}.", needed=needed)
    return msg("{free} are free there.", free=free) if free else None


def check_writable(folder: Path, what: str = "folder") -> None:
    """Make sure files can be written in ``folder`` (or where it would be made), before anything slow starts.

    Raises:
        DiskInputError: The folder cannot be made or written (read-only, another user's, full).
    """
    existing = next((p for p in (folder, *folder.parents) if p.is_dir()), folder)
    try:
        with tempfile.TemporaryFile(dir=existing):  # nothing is left behind, not even the folder
            pass
    except OSError as exc:
        found = disk_error(exc, folder) or DiskError(
            msg(
                "The folder {folder} cannot be used: {error}.", folder=str(folder), error=exc.strerror or exc
            ),
            msg("Choose another folder and try again."),
        )
        raise DiskInputError(found.message, found.hint, found.kind) from None


def human_size(size: float) -> str:
    """``size`` bytes in words a user reads at a glance: 380 KB, 12 MB, 1.4 GB."""
    for unit, scale in (("GB", 2**30), ("MB", 2**20)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}" if size < 10 * scale else f"{size / scale:.0f} {unit}"
    return f"{max(1, round(size / 1024))} KB"


def human_count(count: float) -> str:
    """A parameter count at a glance: 61K, 494M, 7.6B."""
    if count >= 1e9:
        return f"{count / 1e9:.1f}B"
    return f"{count / 1e6:.0f}M" if count >= 1e6 else f"{count / 1e3:.0f}K"


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

    def line(self) -> str:
        """The problem as a line of a list, for the user."""
        return msg("  - {field}: {problem}", field=self.field, problem=self.message)


class ConfigError(InputError):
    """A config has one or more problems; all of them are listed at once."""

    def __init__(self, problems: list[Problem], remedies: tuple[Remedy, ...] = ()) -> None:
        self.problems = list(problems)
        self.remedies = remedies  # changes that would resolve it, for a button (a long run: "train it all")
        lines: str = ""
        for problem in self.problems:
            lines = msg("{lines}\n{line}", lines=lines, line=problem.line()) if lines else problem.line()
        count = len(self.problems)
        super().__init__(
            msg("The run config has a problem:\n{lines}", lines=lines)
            if count == 1
            else msg("The run config has {count} problems:\n{lines}", count=count, lines=lines),
            msg("Fix the fields above and try again."),
        )


@dataclass(frozen=True)
class Remedy:
    """A concrete change the user can apply and retry with.

    Attributes:
        label: What it does, in words.
        changes: Config overrides, ``{"training.batch_size": 4, ...}``.
    """

    label: str
    changes: dict[str, Any]


@dataclass(frozen=True)
class Diagnosis:
    """What went wrong (``reason``), what to do (``remedy``), and changes to apply (``remedies``)."""

    kind: str
    reason: str
    remedy: str
    remedies: tuple[Remedy, ...] = ()


STAGES = (  # (function names in the traceback, stage), innermost match wins
    (("from_pretrained", "_load_pretrained_model"), "loading"),
    (("evaluate", "evaluation_loop", "prediction_step"), "evaluation"),
    (("backward",), "backward"),
    (
        ("optimizer_step", "_optimizer_step", "_single_tensor_adamw", "_multi_tensor_adamw", "_fused_adamw"),
        "optimizer",
    ),
)


def failure_stage(exc: BaseException) -> str:
    """Where in a run an exception happened (``loading``, ``evaluation``, ``backward``, ``optimizer``,
    ``forward``), from its traceback's function names."""
    names = [frame.name for frame in traceback.extract_tb(exc.__traceback__)]
    for name in reversed(names):
        for functions, stage in STAGES:
            if name in functions:
                return stage
    return "forward"


def _out_of_memory(stage: str) -> str:
    """One whole sentence per stage, so that each translates as a sentence."""
    return {
        "loading": msg("The GPU ran out of memory while loading the model."),
        "evaluation": msg("The GPU ran out of memory during evaluation."),
        "backward": msg("The GPU ran out of memory in the backward pass."),
        "optimizer": msg("The GPU ran out of memory in the optimizer step."),
    }.get(stage) or msg("The GPU ran out of memory in the forward pass.")


def _oom_remedies(config: Any) -> tuple[Remedy, ...]:
    if config is None:
        return ()
    t, p, out = config.training, config.performance, []
    if t.batch_size > 1:
        half = t.batch_size // 2
        accumulation = t.gradient_accumulation * t.batch_size // half
        out.append(
            Remedy(
                msg(
                    "Halve the batch ({batch} -> {half}) and raise accumulation to {accumulation} "
                    "(same effective batch)",
                    batch=t.batch_size,
                    half=half,
                    accumulation=accumulation,
                ),
                {"training.batch_size": half, "training.gradient_accumulation": accumulation},
            )
        )
    if not p.gradient_checkpointing:
        out.append(
            Remedy(
                msg("Turn on gradient checkpointing (far less activation memory, ~20% slower)"),
                {"performance.gradient_checkpointing": True},
            )
        )
    if p.optimizer in ("adamw_torch", "adamw_torch_fused"):
        out.append(
            Remedy(
                msg("Use the Adafactor optimizer (a fraction of AdamW's state memory)"),
                {"performance.optimizer": "adafactor"},
            )
        )
    if not config.lora.enabled:
        out.append(Remedy(msg("Train LoRA adapters instead of every weight"), {"lora.enabled": True}))
    if t.max_length > 64:
        out.append(
            Remedy(
                msg(
                    "Shorten sequences ({length} -> {half} tokens)",
                    length=t.max_length,
                    half=t.max_length // 2,
                ),
                {"training.max_length": t.max_length // 2},
            )
        )
    return tuple(out)


def out_of_memory(exc: BaseException) -> BaseException | None:
    """The out-of-memory error in ``exc``'s chain (PyTorch's ``OutOfMemoryError``, or a message that
    says it), or ``None``."""
    return next(
        (
            e
            for e in exception_chain(exc)
            if type(e).__name__ == "OutOfMemoryError" or "out of memory" in str(e).lower()
        ),
        None,
    )


def diagnose(exc: BaseException, config: Any = None) -> Diagnosis:
    """Turn an exception from a run into a diagnosis with remedies (nothing is changed by itself).

    Args:
        exc: The exception.
        config: The run's config, to make remedies concrete (halve *this* batch size).
    """
    if isinstance(exc, DiskError):
        return Diagnosis(exc.kind, exc.message, exc.hint)
    if isinstance(exc, NonFiniteError):
        return Diagnosis("non_finite", exc.message, exc.hint, exc.remedies)
    if isinstance(exc, StudioError):
        return Diagnosis("input", exc.message, exc.hint)
    disk = disk_error(exc)
    if disk is not None:
        return Diagnosis(disk.kind, disk.message, disk.hint)
    exc = out_of_memory(exc) or exc
    text = str(exc)
    low = text.lower()
    name = type(exc).__name__
    first = text.splitlines()[0] if text else name
    if name == "OutOfMemoryError" or "out of memory" in low:
        return Diagnosis(
            "out_of_memory",
            _out_of_memory(failure_stage(exc)),
            msg(
                "Apply one of the changes below and retry; each keeps what the run learns comparable. "
                "Training resumes from the last checkpoint when there is one."
            ),
            _oom_remedies(config),
        )
    if "not compiled with cuda" in low or ("can only be used on cuda" in low):
        return Diagnosis(
            "cpu_torch",
            msg("This PyTorch build has no GPU support, so GPU-only settings (fp16, bf16) cannot run."),
            msg("Open the Environment step and install the matching PyTorch, or train in fp32 on the CPU."),
            (Remedy(msg("Train in fp32 (CPU)"), {"performance.precision": "fp32"}),),
        )
    if "bf16" in low and ("support" in low or "requires" in low):
        return Diagnosis(
            "precision",
            msg("This GPU cannot train in bf16."),
            msg("Use fp16 or let the app choose."),
            (Remedy(msg("Let the app choose the precision"), {"performance.precision": "auto"}),),
        )
    if "bitsandbytes" in low:
        return Diagnosis(
            "bitsandbytes",
            msg("bitsandbytes, needed by 8-bit optimizers, is missing or broken: {error}", error=first),
            msg("Use a standard optimizer, or reinstall bitsandbytes for this GPU."),
            (Remedy(msg("Use AdamW"), {"performance.optimizer": "adamw_torch_fused"}),),
        )
    if "device-side assert" in low:
        return Diagnosis(
            "device_assert",
            msg("A CUDA kernel rejected its input (device-side assert). Most often a label is out of range."),
            msg(
                "Check the label column (classification) and that the model fits the tokenizer. "
                "For the exact spot, set the environment variable CUDA_LAUNCH_BLOCKING=1 and restart "
                "the app; the GPU needs a restart of the app after this error anyway."
            ),
        )
    if "winerror 1455" in low or "paging file is too small" in low:
        return Diagnosis(
            "paging_file",
            msg(
                "Windows ran out of virtual memory while loading PyTorch's libraries: the paging file is "
                "too small (error 1455)."
            ),
            msg(
                "Let Windows manage the paging file size (Advanced system settings > Performance > "
                "Settings > Advanced > Virtual memory), keep a few GB free on the system drive, restart "
                "Windows, then resume. Fewer data loader workers load PyTorch fewer times."
            ),
            (Remedy(msg("Use 0 data loader workers"), {"performance.dataloader_workers": 0}),),
        )
    if "pickle" in low or "dataloader worker" in low:
        return Diagnosis(
            "dataloader_workers",
            msg("The data loader's worker processes failed: {error}", error=first),
            msg("Load batches in the training process (0 workers), which always works on Windows."),
            (Remedy(msg("Use 0 data loader workers"), {"performance.dataloader_workers": 0}),),
        )
    if "not compiled with" in low or "cuda error" in low or "cublas" in low or "cudnn" in low:
        return Diagnosis(
            "cuda_error",
            msg("A CUDA error stopped training: {error}", error=first),
            msg(
                "Restart the app and resume from the last checkpoint. If it happens again, update the NVIDIA "
                "driver or reinstall PyTorch from the Environment step."
            ),
        )
    if isinstance(exc, MemoryError):
        return Diagnosis(
            "ram",
            msg("The computer ran out of memory (RAM)."),
            msg("Close other programs, lower the batch size or max length, then resume."),
            _oom_remedies(config)[:1],
        )
    return Diagnosis(
        "unexpected",
        msg("Training stopped with an unexpected error: {error}", error=f"{name}: {first}"),
        msg(
            "Open the details for the full traceback. Resume from the last checkpoint, or report the problem "
            "with the details attached."
        ),
    )
