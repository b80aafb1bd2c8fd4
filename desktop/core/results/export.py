"""Export a finished run as a complete model folder: weights, tokenizer, model card, config; verified.

The folder is written beside its destination under a temporary name and renamed into place, so a
failure or a cancel leaves nothing half-written.
"""

from __future__ import annotations

import json
import logging
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
from desktop.core.results.destination import (
    check_destination,
    disk_input_error,
    lock_destination,
    remove_stale_partials,
    replace_folder,
    write_marker,
)
from desktop.core.results.mlflow_log import log_to_mlflow, mlflow_problem
from desktop.core.runs.checkpoints import weights_problem
from desktop.core.runs.folders import RunDir
from desktop.core.settings.config_sections import IMAGE_TASKS
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
log = logging.getLogger(__name__)

PIPELINE_TASKS = {
    "classification": "text-classification",
    "causal-lm": "text-generation",
    "seq2seq": "text2text-generation",
    "preference": "text-generation",
    "grpo": "text-generation",
    "image-classification": "image-classification",
    "vision-chat": "image-text-to-text",
}

STAGES = {
    "load": msg("Loading the model"),
    "adapters": msg("Copying the adapters"),
    "weights": msg("Writing the weights (safetensors)"),
    "tokenizer": msg("Copying the tokenizer"),
    "processor": msg("Copying the processor (how pictures and text are read)"),
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
    mlflow_not_logged: Any = None  # a Msg: why the model was not logged to MLflow (the folder is complete)
    mlflow_ui: str = ""  # the command that opens MLflow's UI on the store the model went to


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
    source = run.adapter_dir if lora == "adapter" else run.model_dir
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
    if lora == "adapter" and config.task == "image-classification":
        raise InputError(  # its new head (the run's classes) would meet the base model's ImageNet head
            msg(
                "An image classifier's adapters cannot be loaded on their own: their new head does not "
                "fit the base model's."
            ),
            msg("Export the merged model: it holds the adapters and the head, and loads anywhere."),
        )
    if mlflow:
        mlflow_problem()
    dest = Path(dest).expanduser().absolute()
    check_destination(dest, run, config)
    needed = int(folder_size(source) * (1.0 if dtype == "fp32" else 0.5) * 1.1) + (
        folder_size(source) if archive else 0
    )
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        lock = lock_destination(dest)
    except OSError as exc:
        raise disk_input_error(exc, dest.parent, needed) from None
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
        remove_stale_partials(dest)
        try:
            partial = Path(tempfile.mkdtemp(prefix=f".{dest.name}.partial-{os.getpid()}-", dir=dest.parent))
            write_marker(partial, run)  # from the start: a killed export's leftover is known to be ours
        except OSError as exc:
            raise disk_input_error(exc, dest.parent, needed) from None
        try:
            _write(run, config, source, partial, dtype, lora, stage, language)
            write_marker(partial, run)
            stage("place", 0.75)
            replace_folder(partial, dest)
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
    uri, not_logged, command = "", None, ""
    if mlflow:
        stage("mlflow", 0.95, cancellable=False)
        try:
            uri = log_to_mlflow(dest, PIPELINE_TASKS[task], run.path.name)
            from desktop.core.training.mlflow_store import mlflow_store, ui_command

            command = ui_command(*mlflow_store())
        except (
            Exception
        ) as exc:  # the folder is written and checked: MLflow's failure is said, not the export's
            log.warning("the export was not logged to MLflow", exc_info=True)
            reason = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
            not_logged = msg(
                "The model was not logged to MLflow: {reason}. The exported folder is complete.",
                reason=reason,
            )
    stage("done", 1.0, cancellable=False)
    return ExportResult(dest, check, zipped, uri, mlflow_not_logged=not_logged, mlflow_ui=command)


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
        from desktop.core.results.last_step import TRAINING_STATE

        # The adapters, not the training's state: training_args.bin is a pickle, which a folder to share
        # must not hold (loading it runs code), and the optimizer's state is twice the adapters' size.
        ignored = shutil.ignore_patterns(*TRAINING_STATE, "rng_state*.pth")
        shutil.copytree(source, out, dirs_exist_ok=True, ignore=ignored)
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
        stage("processor" if config.task in IMAGE_TASKS else "tokenizer", 0.6)
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
            "preprocessor_config.json",
            "processor_config.json",
            "chat_template.json",
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

    if texts is None and task in ("image-classification", "vision-chat"):
        with tempfile.TemporaryDirectory(prefix="finetune-studio-pictures-") as folder_of_pictures:
            pictures = _pictures(run, Path(folder_of_pictures)) or _made_pictures(Path(folder_of_pictures))
            if task == "vision-chat":  # a picture and its question
                pictures = [json.dumps({"image": path, "text": question}) for path, question in pictures]
            else:
                pictures = [path for path, _ in pictures]
            return verify_export(run, folder, task, pictures)
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


def _pictures(run: RunDir, folder: Path, count: int = 4) -> list[tuple[str, str]]:
    """Paths of a few pictures from the run's data (the first evaluation rows), each with its row's
    question (vision-language; "" otherwise), to compare outputs on; a hub dataset's pictures are
    written into ``folder`` first."""
    from desktop.core.data.images import source_of
    from desktop.core.data.train_eval import load_train_eval

    config = run.config()
    try:
        train, eval_ = load_train_eval(config)
    except Exception:
        return []
    table = eval_ if eval_ is not None else train
    column = config.columns.image or "image"
    if column not in table.columns:
        return []
    head = table.head(count)
    questions = head.column(config.columns.prompt) if config.columns.prompt in head.columns else None
    paths = []
    for index, value in enumerate(head.column(column)):
        source = source_of(value)
        if isinstance(source, bytes):
            (folder / f"picture-{index}").write_bytes(source)
            source = folder / f"picture-{index}"
        if source is not None and source.is_file():
            paths.append((str(source), str(questions[index]) if questions is not None else ""))
    return paths


def _made_pictures(folder: Path) -> list[tuple[str, str]]:
    """Two pictures made here (the run's data moved or gone): the outputs are compared all the same."""
    from PIL import Image

    made = []
    for index, colour in enumerate(("teal", "orange")):
        path = folder / f"made-{index}.png"
        Image.new("RGB", (64, 48), colour).save(path)
        made.append((str(path), "What is in this picture?"))
    return made
