"""Export a finished run as a complete model folder: weights, tokenizer, model card, config; verified.

The folder is written beside its destination under a temporary name and renamed into place, so a
failure or a cancel leaves nothing half-written.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.core.results import model_card
from desktop.core.runs.checkpoints import weights_problem
from desktop.core.runs.folders import RunDir
from desktop.core.system import processes
from desktop.core.system.errors import (
    DiskInputError,
    InputError,
    ModelError,
    NonFiniteError,
    StudioError,
    check_writable,
    disk_error,
    human_size,
)
from desktop.core.system.messages import msg
from desktop.core.system.paths import folder_size

DTYPES = ("fp32", "fp16", "bf16")
PIPELINE_TASKS = {
    "classification": "text-classification",
    "causal-lm": "text-generation",
    "seq2seq": "text2text-generation",
    "preference": "text-generation",
}

STAGES = {
    "load": msg("Loading the model"),
    "adapters": msg("Copying the adapters"),
    "weights": msg("Writing the weights (safetensors)"),
    "tokenizer": msg("Copying the tokenizer"),
    "card": msg("Writing the model card"),
    "place": msg("Putting the folder in place"),
    "zip": msg("Making the zip archive"),
    "verify": msg("Verifying: reloading the folder in a fresh process"),
    "mlflow": msg("Logging the model to MLflow"),
    "done": msg("Done"),
}
"""The export's stages, as reported to ``on_progress``, in words for the user."""

Progress = Callable[[str, float], None]
"""Told the stage (a key of :data:`STAGES`) and how far along the export is (0..1)."""


class ExportCancelled(StudioError):
    """The user cancelled the export; nothing was left behind."""


@dataclass(frozen=True)
class Verification:
    """How the exported folder compares with the run's model on a few examples."""

    ok: bool
    max_abs_diff: float
    examples: int
    error: str = ""


@dataclass(frozen=True)
class ExportResult:
    """Where the model went and how its verification went."""

    folder: Path
    verification: Verification | None
    archive: Path | None = None
    mlflow_uri: str = ""


def export_run(
    run: RunDir,
    dest: Path,
    dtype: str = "fp32",
    lora: str = "merged",
    overwrite: bool = False,
    archive: bool = False,
    verify: bool = True,
    on_progress: Progress | None = None,
    cancel: threading.Event | None = None,
    mlflow: bool = False,
    language: str = "en",
) -> ExportResult:
    """Write ``run``'s model to ``dest`` with a model card, its config and the command that reproduces it.

    Args:
        run: A finished run folder.
        dest: The folder to create.
        dtype: ``fp32``, ``fp16`` or ``bf16`` weights.
        lora: For LoRA runs, ``merged`` (a plain model) or ``adapter`` (the adapters alone).
        overwrite: Replace a non-empty ``dest``.
        archive: Also write ``dest.zip``.
        verify: Reload the folder in a child process and compare outputs with the run's model.
        on_progress: Told each stage and the fraction done.
        cancel: Set it to give up; until the folder is in place, nothing is left behind.
        mlflow: Also log the folder to MLflow (``mlflow.transformers.log_model``); needs mlflow
            installed and ``MLFLOW_TRACKING_URI`` set.
        language: The app's language: the model card gets a section in it (besides English).

    Raises:
        InputError: The run has no model, ``dest`` is not empty, the disk is too full, or the
            options are wrong. Nothing is written then.
        ExportCancelled: ``cancel`` was set before the folder was complete. Nothing is written.
    """

    def stage(message: str, fraction: float, cancellable: bool = True) -> None:
        if cancellable and cancel is not None and cancel.is_set():
            raise ExportCancelled(msg("Export cancelled; nothing was written."))
        if on_progress is not None:
            on_progress(message, fraction)

    config = run.config()
    source = run.path / "adapter" if lora == "adapter" else run.model_dir
    if dtype not in DTYPES:
        raise InputError(
            msg("Unknown weight type {dtype}.", dtype=dtype),
            msg("Use one of {choices}.", choices=", ".join(DTYPES)),
        )
    if not (run.model_dir / "config.json").is_file():
        raise InputError(
            msg("{run} has no finished model to export.", run=run.path.name),
            msg("Finish (or resume) the run first."),
        )
    if lora == "adapter" and not source.is_dir():
        raise InputError(msg("This run trained no LoRA adapters."), msg("Export the merged model instead."))
    if mlflow:
        mlflow_problem()
    dest = Path(dest).expanduser().absolute()
    check_destination(dest, run, config)
    needed = int(folder_size(source) * (1.0 if dtype == "fp32" else 0.5) * 1.1) + (
        folder_size(source) if archive else 0
    )
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        lock = _lock_destination(dest)
    except OSError as exc:
        raise _disk_input_error(exc, dest.parent, needed) from None
    with lock:
        check_destination(dest, run, config)  # again under the lock: the folder may have changed meanwhile
        check_writable(dest.parent, "export folder")
        if dest.exists() and any(dest.iterdir()) and not overwrite:
            raise InputError(
                msg("{folder} is not empty.", folder=str(dest)),
                msg("Choose an empty or new folder, or replace it (on the command line: add --force)."),
            )
        free = shutil.disk_usage(dest.parent).free
        if free < needed:
            raise DiskInputError(
                msg(
                    "Not enough disk space: the export needs about {needed} in {folder}, "
                    "{free} are free on that drive.",
                    needed=human_size(needed),
                    folder=str(dest.parent),
                    free=human_size(free),
                ),
                msg("Free some space or choose another folder."),
            )
        _remove_stale_partials(dest)
        try:
            partial = Path(tempfile.mkdtemp(prefix=f".{dest.name}.partial-{os.getpid()}-", dir=dest.parent))
            _write_marker(partial, run)  # from the start: a killed export's leftover is known to be ours
        except OSError as exc:
            raise _disk_input_error(exc, dest.parent, needed) from None
        try:
            _write(run, config, source, partial, dtype, lora, stage, language)
            _write_marker(partial, run)
            stage("place", 0.75)
            _replace(partial, dest)
        except BaseException as exc:
            shutil.rmtree(partial, ignore_errors=True)
            found = disk_error(exc, dest.parent, needed) if isinstance(exc, Exception) else None
            if found is not None:
                raise found from None
            raise
        return _finish(run, dest, config.task, lora, archive, verify, mlflow, stage)


def _finish(
    run: RunDir, dest: Path, task: str, lora: str, archive: bool, verify: bool, mlflow: bool, stage: Any
) -> ExportResult:
    """The steps after the folder is in place (the destination's lock is still held)."""
    zipped = None
    if archive:
        stage("zip", 0.8, cancellable=False)
        zipped = Path(shutil.make_archive(str(dest), "zip", dest))
    check = None
    if verify and lora == "merged":
        stage("verify", 0.85, cancellable=False)
        check = verify_export(run, dest, task)
    uri = ""
    if mlflow:
        stage("mlflow", 0.95, cancellable=False)
        uri = log_to_mlflow(dest, task, run.path.name)
    stage("done", 1.0, cancellable=False)
    return ExportResult(dest, check, zipped, uri)


MARKER_NAME = ".finetune-studio-export"
"""Written into every exported folder: only such a folder (or an empty one) is ever replaced."""


def check_destination(dest: Path, run: RunDir, config: Any) -> None:
    """Refuse a destination whose replacement would destroy something the user did not ask to.

    Raises:
        InputError: ``dest`` is a file; is, holds or lies inside a run folder, the runs folder, the
            source model or the app's data folder; or is a non-empty folder no export wrote.
    """
    from desktop.core.system.paths import data_dir, default_runs_dir

    if dest.exists() and not dest.is_dir():
        raise InputError(
            msg("{folder} is a file, not a folder.", folder=str(dest)),
            msg("Give the name of a new or empty folder to export to."),
        )
    protected = [
        (run.path, msg("the run folder")),
        (run.path.parent, msg("the runs folder")),
        (default_runs_dir(), msg("the runs folder")),
        (data_dir(), msg("Finetune Studio's data folder")),
    ]
    model = Path(config.model.name).expanduser()
    if config.model.name and model.is_dir():
        protected.append((model, msg("the model this run started from")))
    real = dest.resolve()
    for path, what in protected:
        other = Path(path).resolve()
        if real == other or other in real.parents or real in other.parents:
            values = {"folder": str(dest), "what": what, "other": str(other)}
            if real == other:
                problem = msg("{folder} is {what} ({other}); exporting there could overwrite it.", **values)
            elif other in real.parents:
                problem = msg(
                    "{folder} lies inside {what} ({other}); exporting there could overwrite it.", **values
                )
            else:
                problem = msg(
                    "{folder} holds {what} ({other}); exporting there could overwrite it.", **values
                )
            raise InputError(
                problem, msg("Export to a new folder elsewhere, for example in your Documents folder.")
            )
    if real.is_dir() and any(real.iterdir()):
        if next(real.glob(f"*/{_RUN_MARK}"), None) is not None or (real / _RUN_MARK).is_file():
            raise InputError(
                msg("{folder} holds run folders; exporting there could overwrite them.", folder=str(dest)),
                msg("Export to a new folder elsewhere."),
            )
        if not (real / MARKER_NAME).is_file():
            raise InputError(
                msg(
                    "{folder} is not empty and was not written by an export, so it will not be replaced.",
                    folder=str(dest),
                ),
                msg("Choose a new or empty folder, or a folder an earlier export wrote."),
            )


_RUN_MARK = "events.jsonl"


def _write_marker(folder: Path, run: RunDir) -> None:
    import time

    record = {"run": str(run.path), "written": time.strftime("%Y-%m-%dT%H:%M:%S"), "pid": os.getpid()}
    (folder / MARKER_NAME).write_text(json.dumps(record), encoding="utf-8")


def _lock_destination(dest: Path) -> Any:
    """An OS-level lock on exporting to ``dest``: a second export there is refused at once."""
    import hashlib

    import filelock

    from desktop.core.system.paths import data_dir

    # In the app's folder, not beside the export: nothing is left in the user's folder.
    key = hashlib.sha256(str(dest.resolve()).encode("utf-8")).hexdigest()[:20]
    folder = data_dir() / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    lock = filelock.FileLock(folder / f"export-{key}.lock", timeout=0, thread_local=False)
    try:
        lock.acquire()
    except filelock.Timeout:
        raise InputError(
            msg("Another export to {folder} is running right now.", folder=str(dest)),
            msg("Wait for it to finish, or export to another folder."),
        ) from None
    return _Held(lock)


class _Held:
    """A held lock as a context manager that releases it."""

    def __init__(self, lock: Any) -> None:
        self.lock = lock

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        self.lock.release()


def _replace(new: Path, dest: Path) -> None:
    """Put ``new`` at ``dest``; an old folder is renamed aside first and deleted only after.

    A file held open in the old folder (a viewer, antivirus, the try-it panel on Windows) then
    costs at most a leftover hidden folder, never the old export half-deleted with the new one lost.
    """
    if not dest.exists():
        new.rename(dest)
        return
    aside = Path(tempfile.mkdtemp(prefix=f".{dest.name}.old-{os.getpid()}-", dir=dest.parent))
    aside.rmdir()
    dest.rename(aside)
    try:
        new.rename(dest)
    except BaseException:
        aside.rename(dest)
        raise
    _remove_tree(aside)


def _remove_tree(folder: Path, tries: int = 5) -> None:
    import time

    for attempt in range(tries):
        try:
            shutil.rmtree(folder)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.2 * (attempt + 1))  # a scanner or preview lets go of its file soon


def _disk_input_error(exc: OSError, folder: Path, needed: int) -> InputError:
    found = disk_error(exc, folder, needed)
    if found is None:
        return InputError(
            msg("Cannot write in {folder}: {error}.", folder=str(folder), error=exc.strerror or exc),
            msg("Choose another folder."),
        )
    return DiskInputError(found.message, found.hint, found.kind)


def _remove_stale_partials(dest: Path) -> None:
    """Delete what an export that was killed (power cut, task manager) left beside ``dest``."""
    import psutil

    for kind in ("partial", "old"):
        for folder in dest.parent.glob(f".{dest.name}.{kind}-*"):
            pid = folder.name.removeprefix(f".{dest.name}.{kind}-").split("-")[0]
            if not pid.isdigit() or psutil.pid_exists(int(pid)):
                continue
            # Both a partial and a set-aside old export carry the export marker; anything else is left alone.
            if not (folder / MARKER_NAME).is_file():
                continue
            shutil.rmtree(folder, ignore_errors=True)


def _write(
    run: RunDir, config: Any, source: Path, out: Path, dtype: str, lora: str, stage: Progress, language: str
) -> None:
    from desktop.core.training.non_finite import check_model, first_non_finite

    if lora == "adapter":
        stage("adapters", 0.1)
        if problem := weights_problem(source):  # a diverged run's adapter: never exported as a model
            raise NonFiniteError(
                msg("The run's adapter is damaged: {problem}.", problem=problem),
                msg("Train the run again (a lower learning rate), or resume it from an earlier checkpoint."),
            )
        shutil.copytree(source, out, dirs_exist_ok=True)
    else:
        import torch

        from desktop.core.data.tasks import auto_class

        stage("load", 0.05)
        try:
            model = auto_class(config.task).from_pretrained(source)
        except Exception as exc:
            if not (problem := weights_problem(source)):
                raise
            raise ModelError(  # a final save cut short (a full disk, a crash): said, not a traceback
                msg(
                    "The run's model in {folder} is damaged: {problem}.", folder=str(source), problem=problem
                ),
                msg(
                    "Its final save was cut short (a full disk or a crash). Free some disk space if it is "
                    "full, then resume the run: it goes on from its last good checkpoint and saves again."
                ),
            ) from exc
        check_model(model, str(source))  # a NaN model is refused, naming the tensor, not written
        model = model.to({"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[dtype])
        if dtype == "fp16" and (tensor := first_non_finite(model.named_parameters())):
            raise NonFiniteError(
                msg(
                    "In fp16 the weight {tensor} of this model overflows (fp16 holds values up to 65504).",
                    tensor=tensor,
                ),
                msg("Export in bf16 or fp32 instead."),
            )
        stage("weights", 0.3)
        model.save_pretrained(out)  # safetensors, config (label maps), generation config
        del model
        stage("tokenizer", 0.6)
        for name in (
            "tokenizer.json",
            "tokenizer_config.json",
            "special_tokens_map.json",
            "vocab.txt",
            "merges.txt",
            "vocab.json",
            "spiece.model",
            "chat_template.jinja",
            "added_tokens.json",
        ):
            if (source / name).is_file():
                shutil.copy2(source / name, out / name)
    stage("card", 0.65)
    shutil.copy2(run.config_path, out / "finetune-studio-config.toml")
    model_card.write_model_card(run, config, out, dtype, lora, language)


def verify_export(run: RunDir, folder: Path, task: str, texts: list[str] | None = None) -> Verification:
    """Run the run's model and the exported folder on a few texts and compare logits.

    The folder is loaded in a fresh, isolated interpreter by a script that imports only torch and
    transformers, so nothing of this process (or of this app) helps it load.
    """
    from desktop.core.results import reload_check

    texts = texts or _examples(run)
    try:
        reference = reload_check.output_logits(run.model_dir, task, texts)
        # The texts go through stdin: a command line is limited to 32,767 characters on Windows.
        done = processes.run(
            [sys.executable, "-I", reload_check.__file__, str(folder), task, "-"],
            input=json.dumps(texts),
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=600,
            check=False,
        )
        if done.returncode != 0:
            lines = done.stderr.strip().splitlines()
            return Verification(
                False, float("nan"), 0, lines[-1] if lines else f"exit code {done.returncode}"
            )
        exported = json.loads(done.stdout.strip().splitlines()[-1])
    except Exception as exc:  # the verification reports; it never breaks an export
        return Verification(False, float("nan"), 0, str(exc))
    diff = max(
        abs(a - b)
        for ref, exp in zip(reference, exported, strict=True)
        for a, b in zip(ref, exp, strict=True)
    )
    return Verification(diff < 1e-2, diff, len(texts))


def _examples(run: RunDir, count: int = 4) -> list[str]:
    """A few texts from the run's data (the first rows), to compare outputs on."""
    from desktop.core.data.train_eval import load_train_eval

    config = run.config()
    try:
        train, eval_ = load_train_eval(config)
    except Exception:
        return ["Hello, world.", "你好，世界。"]
    table = eval_ if eval_ is not None else train
    column = (
        config.columns.text or config.columns.source or config.columns.instruction or config.columns.prompt
    )
    if not column:
        return ["Hello, world.", "你好，世界。"]
    return [str(v) for v in table.head(count).column(column)]


def mlflow_problem() -> None:
    """Raise :class:`InputError` unless the model can be logged to MLflow now."""
    if importlib.util.find_spec("mlflow") is None:
        raise InputError(
            msg("MLflow is not installed."), msg("Install it (pip install mlflow) or export without it.")
        )
    if not os.environ.get("MLFLOW_TRACKING_URI"):
        raise InputError(
            msg("No MLflow tracking server is set."),
            msg("Set MLFLOW_TRACKING_URI (for example http://127.0.0.1:5000) and start the app again."),
        )


def log_to_mlflow(folder: Path, task: str, run_name: str) -> str:
    """Log the exported folder as an MLflow transformers model (read from disk, not loaded); its URI."""
    import mlflow

    log_model = mlflow.transformers.log_model
    # MLflow 3 names the model ``name``; MLflow 2 called it ``artifact_path``.
    key = "name" if "name" in inspect.signature(log_model).parameters else "artifact_path"
    with mlflow.start_run(run_name=run_name):
        info = log_model(transformers_model=str(folder), task=PIPELINE_TASKS[task], **{key: "model"})
    return str(getattr(info, "model_uri", "") or "")
