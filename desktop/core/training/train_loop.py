"""Training a prepared run: the Trainer's loop, going on with less memory, and saving the model."""

from __future__ import annotations

import logging
import os
import shutil
import threading
import traceback
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from desktop.core.runs.folders import RunDir
from desktop.core.settings.config import RunConfig
from desktop.core.system.errors import diagnose, disk_error, out_of_memory
from desktop.core.system.events import (
    Event,
    FailedEvent,
    FinishedEvent,
    PreparingEvent,
    RunResult,
    StoppedEvent,
)
from desktop.core.system.messages import msg
from desktop.core.training import recovery
from desktop.core.training.preparation import Prepared, StoppedWhilePreparing, make_trainer
from desktop.core.training.recovery import RunRecovery, free_gpu_memory
from desktop.core.training.resume import remove_partial_checkpoints, resume_point, train_from, whole_run_loss
from desktop.core.training.run_evaluation import (
    evaluate_base,
    final_eval,
    preference_advice,
    wants_base_evaluation,
    write_evaluation,
)

log = logging.getLogger(__name__)


def train(
    prepared: Prepared,
    run: RunDir,
    emit: Callable[[Event], None],
    stop: threading.Event,
    resuming: bool,
    rebuild: Callable[[RunConfig], Prepared],
) -> RunResult:
    """Train, and on a GPU out-of-memory error go on with less memory (see :mod:`.recovery`).

    Args:
        rebuild: Prepares the run again for a config (a fresh model, when the run starts over).
    """
    from desktop.core.training import distributed

    main = distributed.world().main
    checkpoint = resume_point(run, emit) if resuming and main else None  # rank 0 sets damaged ones aside
    if resuming:
        checkpoint = distributed.share(checkpoint)
    before = {p.name for p in run.checkpoints()}
    recovering = RunRecovery(run, emit, prepared.config, main)
    trainer = callback = None
    try:
        while True:
            adjustment = None
            try:
                trainer, callback = make_trainer(prepared, run, emit, stop, recovering)
                if wants_base_evaluation(prepared, resuming, recovering):
                    evaluate_base(trainer, prepared, run, emit)
                # A reasoning run's batches are the answers it writes: there is no longest one to try.
                if prepared.config.task != "grpo" and recovery.probe_wanted(trainer.args):
                    emit(PreparingEvent(msg("Trying the longest batch first: a lack of memory shows now")))
                    recovery.probe_longest_batch(trainer)
                # accelerate runs gc.collect() at train start: with the imports frozen (prepare) it walks
                # only the run's own objects (desktop.core.system.heap).
                output = train_from(trainer, run, checkpoint, emit)
                break
            except Exception as exc:
                # Out of memory before the trainer exists (the model alone does not fit): a smaller
                # batch cannot help, and the failure says so.
                adjustment = recovering.next_setting(exc) if trainer is not None else None
                if adjustment is None:
                    raise
                reason = diagnose(exc, recovering.config).reason
                log.warning("out of memory, going on with less: %s", exc, exc_info=True)
            # Out of the except block: the error's frames, which hold GPU tensors, are gone.
            step, touched = (callback.step, callback.touched) if callback else (0, False)
            model, trainer, callback = prepared.task.model, None, None
            model.zero_grad(set_to_none=True)
            checkpoint = run.latest_checkpoint() if adjustment.keeps_checkpoints else None
            recovering.adjusted(adjustment, reason, step, _step_of(checkpoint))
            if checkpoint is None and (touched or not adjustment.keeps_checkpoints):
                prepared = model = None  # the weights have changed: load the model again
                free_gpu_memory()
                prepared = rebuild(recovering.config)
            else:
                from desktop.core.settings.options import Capabilities, resolve

                options = resolve(recovering.config, Capabilities.detect())
                prepared = replace(prepared, config=recovering.config, trainer_options=options.training_args)
                model = None
                free_gpu_memory()
        config, task = prepared.config, prepared.task
        step = trainer.state.global_step
        if callback.stopped_early:
            saved = run.latest_checkpoint()
            event = StoppedEvent(step=step, checkpoint=str(saved) if saved else "")
            emit(event)
            return RunResult("stopped", run.path, notes=task.notes)
        if note := callback.non_finite.note():
            task.notes.append(note)
        from desktop.core.training import best

        found = best.outcome(trainer, config)  # the best checkpoint: the run's model when it is kept
        metrics = {"train_loss": whole_run_loss(trainer, output, callback.first_step)}
        if task.eval is not None:
            metrics.update(final_eval(trainer, config, best.best_metrics(trainer, found)))
        if (said := best.note(found)) is not None:
            task.notes.append(said)
        _save_model(trainer, run, prepared.tokenizer, config.lora.enabled or config.lora.qlora, recovering)
        if task.eval is not None:
            write_evaluation(trainer, prepared, run, main, metrics)
            if main and config.task == "preference" and (said := preference_advice(run.path, config, step)):
                emit(said)  # the held-out pairs before and after: the coach's last word
        emit(
            FinishedEvent(
                step=step, model_dir=str(run.model_dir), metrics=metrics, notes=task.notes, best=found
            )
        )
        return RunResult("finished", run.path, run.model_dir, metrics, notes=task.notes)
    except StoppedWhilePreparing:  # stopped while the model loaded again after an out-of-memory error
        saved = run.latest_checkpoint()
        emit(StoppedEvent(step=_step_of(saved), checkpoint=str(saved) if saved else ""))
        return RunResult("stopped", run.path)
    except KeyboardInterrupt:
        # A second Ctrl-C: stop at once, but leave the folder as clean as a graceful stop would.
        if main:
            remove_partial_checkpoints(run, before)
        saved = run.latest_checkpoint()
        step = trainer.state.global_step if trainer is not None else 0
        emit(StoppedEvent(step=step, checkpoint=str(saved) if saved else ""))
        raise
    except Exception as exc:
        log.exception("training failed")
        if main:
            remove_partial_checkpoints(run, before)
        failure = failure_event(disk_error(exc, run.path) or exc, recovering.config)
        emit(failure)
        return RunResult("failed", run.path, failure=failure, notes=prepared.task.notes if prepared else [])


def failure_event(exc: BaseException, config: RunConfig) -> FailedEvent:
    """The failure a run ends with: what went wrong, the remedy, the traceback and remedies to apply."""
    found = diagnose(exc, config)
    remedies = [{"label": r.label, "changes": r.changes} for r in found.remedies]
    return FailedEvent(found.reason, found.remedy, traceback.format_exc(), remedies)


def _save_model(trainer: Any, run: RunDir, tokenizer: Any, lora: bool, recovering: RunRecovery) -> None:
    """Save model and tokenizer under a temporary name, then move it into place.

    With LoRA the adapters are kept in ``adapter/`` and ``model/`` gets them merged into the base
    weights, so ``model/`` always loads with ``from_pretrained``. When the GPU runs out of memory
    saving or merging (and recovery is on), the model moves to the CPU and is saved from there.
    """
    from desktop.core.training import distributed

    main = distributed.world().main
    model_dir = run.model_dir
    partial = model_dir.with_name(model_dir.name + ".partial")

    def write() -> None:
        if main:
            shutil.rmtree(partial, ignore_errors=True)
        distributed.barrier()
        # Every rank calls save_model (FSDP and DeepSpeed gather the weights); rank 0 writes.
        if lora:
            trainer.save_model(str(run.adapter_dir))
            merged = trainer.model.merge_and_unload()
            if main:
                merged.save_pretrained(str(partial))
                tokenizer.save_pretrained(str(partial))
        else:
            trainer.save_model(str(partial))

    try:
        on_cpu = False
        try:
            write()
        except Exception as exc:
            if not (recovering.enabled and out_of_memory(exc)):
                raise
            log.warning("out of memory saving the model; saving from the CPU", exc_info=True)
            on_cpu = True
        if on_cpu:  # out of the except block, so the error's frames (and their GPU tensors) are gone
            trainer.model.to("cpu")
            free_gpu_memory()
            recovering.emit(
                PreparingEvent(
                    msg("The GPU ran out of memory saving the model: saving it from the CPU instead")
                )
            )
            write()
    except BaseException:
        if main:
            shutil.rmtree(partial, ignore_errors=True)
        raise
    distributed.barrier()
    if not main:
        return
    if model_dir.exists():
        shutil.rmtree(model_dir)
    os.replace(partial, model_dir)


def _step_of(checkpoint: Path | None) -> int:
    """The step a checkpoint folder (``checkpoint-120``) was saved at; 0 for none."""
    if checkpoint is None:
        return 0
    try:
        return int(checkpoint.name.rsplit("-", 1)[-1])
    except ValueError:
        return 0
