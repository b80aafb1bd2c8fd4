"""The last step's model of a run whose model is its best checkpoint: the other choice Export offers.

A run that keeps its best checkpoint (``training.best``) saves that checkpoint's model as ``model/``; the
Trainer's checkpoint rotation keeps the last step's checkpoint beside it. Export offers the best by
default and the last step on request: :func:`build` makes ``last-step/model`` from that checkpoint (and,
for LoRA, ``last-step/adapter``, the adapters alone, with ``model`` their merge into the base model, as
the run's own ``model/`` is). :class:`LastStepRun` then shows the run with that model, so everything
that reads a run's model (export, GGUF, try it, serve, predict) works on it unchanged.

Made once, on request, written under a temporary name and moved into place: a cancelled or failed build
leaves nothing half-made.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop.core.runs.checkpoints import weights_problem
from desktop.core.runs.folders import RunDir
from desktop.core.system.errors import InputError, NonFiniteError, StudioError
from desktop.core.system.messages import Msg, msg

FOLDER = "last-step"
MARK = ".finetune-studio-last-step"
"""Written into every folder this module makes: only such a folder is ever deleted here."""
TRAINING_STATE = ("optimizer.pt", "scheduler.pt", "scaler.pt", "trainer_state.json", "training_args.bin")
"""A checkpoint's files that are the trainer's, not the model's (with ``rng_state*.pth``)."""


class Cancelled(StudioError):
    """The user gave up making the last step's model; nothing was left behind."""


class LastStepRun(RunDir):
    """A finished run seen through its last step's model (made by :func:`build`)."""

    model_dir = property(lambda self: self.path / FOLDER / "model")
    adapter_dir = property(lambda self: self.path / FOLDER / "adapter")


def checkpoint(run: RunDir, found: dict[str, Any]) -> Path | None:
    """The last step's checkpoint of a run whose model is an earlier, best checkpoint (``found``: the
    finished event's ``best``); ``None`` when the model is the last step's already, or that checkpoint
    was not kept."""
    if not found or not found.get("kept") or found.get("step") == found.get("last_step"):
        return None
    folder = run.checkpoints_dir / f"checkpoint-{found['last_step']}"
    return folder if folder.is_dir() and not weights_problem(folder) else None


def sentence(found: dict[str, Any]) -> Msg:
    """What the last step's model is, in one sentence (for the Export page and the model card)."""
    from desktop.core.training.best import metric_name

    return msg(
        "The model is the last step's, step {last_step}: {metric} {last:.4g} (the best checkpoint, step "
        "{step}, scored {value:.4g}).",
        last_step=found["last_step"],
        metric=metric_name(found["metric"]),
        last=found["last_value"] if found.get("last_value") is not None else float("nan"),
        step=found["step"],
        value=found["value"],
    )


def build(
    run: RunDir,
    found: dict[str, Any],
    on_progress: Callable[[float], None] | None = None,
    cancel: threading.Event | None = None,
) -> LastStepRun:
    """``run`` with its last step's model, made from that checkpoint unless it was made before.

    Raises:
        InputError: The run has no such checkpoint (its model is the last step's already, or the
            checkpoint was not kept), or the base model a LoRA checkpoint needs cannot be loaded.
        NonFiniteError: The last step's weights are not numbers (a run that diverged at the end).
    """
    view = LastStepRun(run.path)
    if (view.model_dir / "config.json").is_file():
        return view
    source = checkpoint(run, found)
    if source is None:
        raise InputError(
            msg("The last step's checkpoint of {run} was not kept.", run=run.path.name),
            msg("Export the run's model, its best checkpoint."),
        )
    lora = run.config().lora
    view.model_dir.parent.mkdir(exist_ok=True)

    def step(fraction: float) -> None:
        if cancel is not None and cancel.is_set():
            raise Cancelled(msg("Cancelled; nothing was written."))
        if on_progress is not None:
            on_progress(fraction)

    partials = []
    try:
        step(0.0)
        if lora.enabled or lora.qlora:
            adapter = _partial(view.adapter_dir, partials)
            _copy_model_files(run.adapter_dir, source, adapter)
            step(0.2)
            model = _partial(view.model_dir, partials)
            _merge(run, source, model)
        else:
            model = _partial(view.model_dir, partials)
            _copy_model_files(run.model_dir, source, model)
        step(0.9)
        if problem := weights_problem(model):
            raise NonFiniteError(
                msg("The last step's model is damaged: {problem}.", problem=problem),
                msg("Export the best checkpoint instead."),
            )
        step(0.95)  # the last chance to cancel: from here the folders are put in place
        for partial in partials:  # the model last: until it is in place, nothing counts as made
            final = partial.with_name(partial.name.removesuffix(".partial"))
            _remove_ours(final)  # an adapter left by a build cut short
            os.replace(partial, final)
    finally:
        for partial in partials:
            _remove_ours(partial)
    if on_progress is not None:
        on_progress(1.0)
    return view


def _partial(folder: Path, made: list[Path]) -> Path:
    """A new, marked folder beside ``folder`` to write it in (one a build cut short left is replaced)."""
    partial = folder.with_name(folder.name + ".partial")
    _remove_ours(partial)
    partial.mkdir(parents=True)
    (partial / MARK).write_text("made by Finetune Studio from a checkpoint\n", encoding="utf-8")
    made.append(partial)
    return partial


def _remove_ours(folder: Path) -> None:
    """Delete ``folder`` when this module made it (it holds :data:`MARK`); a folder of that name that
    it did not make is never deleted: the build stops and says so."""
    if not folder.exists():
        return
    if not (folder / MARK).is_file():
        raise InputError(
            msg(
                "{folder} is in the way and was not made by Finetune Studio, so it is left alone.",
                folder=str(folder),
            ),
            msg("Move it out of the run folder, then choose the last step again."),
        )
    shutil.rmtree(folder, ignore_errors=True)


def _is_weights(name: str) -> bool:
    return name.endswith((".safetensors", ".safetensors.index.json", ".bin.index.json")) or (
        name.endswith(".bin") and name != "training_args.bin"
    )


def _copy_model_files(saved: Path, checkpoint: Path, out: Path) -> None:
    """``saved``'s files (tokenizer, chat template, config) with ``checkpoint``'s weights and config."""
    if saved.is_dir():
        for path in saved.iterdir():
            if path.is_file() and not _is_weights(path.name):
                shutil.copy2(path, out / path.name)
    for path in checkpoint.iterdir():
        training = path.name in TRAINING_STATE or path.name.startswith("rng_state")
        if path.is_file() and not training and (_is_weights(path.name) or path.name.endswith(".json")):
            shutil.copy2(path, out / path.name)


def _merge(run: RunDir, checkpoint: Path, out: Path) -> None:
    """The base model with ``checkpoint``'s adapters merged in, saved to ``out`` as the run's ``model/``
    is (its config: labels, dtype), with the run's tokenizer files."""
    from peft import PeftModel
    from transformers import AutoConfig

    from desktop.core.data.tasks import auto_class
    from desktop.core.hub.models import load_model

    config = run.config()
    merged_config = AutoConfig.from_pretrained(run.model_dir)  # the labels, the weights' dtype
    try:
        base = load_model(
            auto_class(config.task),
            config.model,
            "LoRA merge",
            config=merged_config,
            dtype=getattr(merged_config, "dtype", None) or "auto",
        )
    except InputError as exc:
        raise InputError(
            msg(
                "The base model {model} is needed to merge the last step's adapters: {problem}",
                model=config.model.name,
                problem=exc.message,
            ),
            exc.hint,
        ) from None
    merged = PeftModel.from_pretrained(base, str(checkpoint)).merge_and_unload()
    merged.save_pretrained(out)
    del merged, base
    for path in run.model_dir.iterdir():
        if path.is_file() and not _is_weights(path.name) and not (out / path.name).exists():
            shutil.copy2(path, out / path.name)
