"""Resuming a run: the newest checkpoint that loads, and no half-written checkpoint left behind."""

from __future__ import annotations

import logging
import shutil
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop.core.runs.checkpoints import checkpoint_problem, weights_problem
from desktop.core.runs.folders import DAMAGED_PREFIX, RunDir
from desktop.core.system.errors import InputError
from desktop.core.system.events import Event, PreparingEvent
from desktop.core.system.messages import msg

log = logging.getLogger(__name__)


CHECKPOINT_LOADERS = frozenset(
    {
        "_load_from_checkpoint",
        "_load_rng_state",
        "_load_optimizer_and_scheduler",
        "_load_scaler",
        "load_from_json",
    }
)
"""The Trainer's functions that read a checkpoint: a failure inside them means the checkpoint is bad."""


def train_from(trainer: Any, run: RunDir, checkpoint: Path | None, emit: Callable[[Event], None]) -> Any:
    """``trainer.train()`` from ``checkpoint``; one that fails to load is set aside for the next older.

    The file checks in :mod:`desktop.core.runs.checkpoints` catch torn files; this catches the rest (a
    whole-looking file with damaged contents) the moment PyTorch reads it.

    Raises:
        InputError: No checkpoint of the run loads.
    """
    from desktop.core.system.readahead import read_ahead

    while True:
        if checkpoint is not None:
            read_ahead(checkpoint)  # PyTorch reads it holding Python's lock: the disk is waited for here
        finished = _finished_already()  # transformers is imported only once a run trains
        trainer.add_callback(finished)
        try:
            return trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
        except _AtTheLastStep:
            emit(
                PreparingEvent(
                    msg("The checkpoint is at the last step: the evaluation and the save are left")
                )
            )
            return _no_more_steps(trainer)
        except Exception as exc:
            names = {frame.name for frame in traceback.extract_tb(exc.__traceback__)}
            if checkpoint is None or not names & CHECKPOINT_LOADERS:
                raise
            reason = (str(exc).splitlines() or [type(exc).__name__])[0]
            if "size mismatch" in str(exc):
                # The checkpoint is whole; the model made for this data has other shapes (another
                # number of classes, another model). Damaged is what it is not: it stays as it is.
                raise InputError(
                    msg(
                        "{checkpoint} does not fit the model this data makes (its shapes differ: {error}).",
                        checkpoint=checkpoint.name,
                        error=_first_mismatch(str(exc)),
                    ),
                    msg(
                        "Resume with the data and model the run started with, or start a new run. "
                        "The checkpoint was not changed."
                    ),
                ) from exc
            log.warning("checkpoint %s could not be loaded: %s", checkpoint.name, reason)
            checkpoint.rename(checkpoint.with_name(DAMAGED_PREFIX + checkpoint.name))
            failed, checkpoint = checkpoint, run.latest_checkpoint()
            if checkpoint is None:
                raise InputError(
                    msg(
                        "No checkpoint of {run} can be loaded (the last, {checkpoint}: {error}).",
                        run=run.path.name,
                        checkpoint=failed.name,
                        error=reason,
                    ),
                    msg("Start the run again without resuming."),
                ) from exc
            emit(
                PreparingEvent(
                    msg(
                        "Resuming from {checkpoint}: {failed} could not be loaded ({error})",
                        checkpoint=checkpoint.name,
                        failed=failed.name,
                        error=reason,
                    )
                )
            )
        finally:
            trainer.remove_callback(finished)


class _AtTheLastStep(Exception):
    """A resumed run's checkpoint is at (or past) its last step: no step is left to train."""


def _finished_already() -> Any:
    from transformers import TrainerCallback

    class FinishedAlready(TrainerCallback):
        """Stops a resumed run before its first step when the checkpoint is at ``max_steps`` (a run
        killed during its final evaluation or save): the Trainer would train one step more (21 of 20),
        and with a constant learning rate change every weight of a finished model. The checkpoint's
        weights are loaded by then; nothing has been computed yet."""

        def __init__(self) -> None:
            self.done = False

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.done = state.max_steps > 0 and state.global_step >= state.max_steps

        def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if self.done:
                raise _AtTheLastStep()

    return FinishedAlready()


def _no_more_steps(trainer: Any) -> Any:
    """What ``trainer.train()`` returns, for a run whose checkpoint had no step left to train."""
    from transformers.trainer_utils import TrainOutput

    return TrainOutput(trainer.state.global_step, float("nan"), {})


def whole_run_loss(trainer: Any, output: Any, resumed_from: int) -> float:
    """The mean training loss over every step of the run, a resumed one included.

    ``output.training_loss`` covers only the steps this ``train()`` call made (after a resume from step
    200 of 300, the last 100: 0.1306 where the whole run's is 0.2062). The steps before the checkpoint
    count with the mean of the losses logged for them (the Trainer's log history comes back with the
    checkpoint), each logged window weighed by its steps.
    """
    final = int(trainer.state.global_step)
    resumed = final - resumed_from
    if resumed_from <= 0:
        return float(output.training_loss)
    total, steps, previous = 0.0, 0, 0
    for entry in trainer.state.log_history:
        step = entry.get("step", 0)
        if "loss" in entry and step <= resumed_from and isinstance(entry["loss"], (int, float)):
            total += float(entry["loss"]) * (step - previous)
            steps += step - previous
            previous = step
    if not steps:
        return float(output.training_loss)
    before = total / steps
    if resumed <= 0:
        return before
    return (before * resumed_from + float(output.training_loss) * resumed) / final


def _first_mismatch(error: str) -> str:
    """``size mismatch for classifier.weight: copying a param with shape [2, 32] from checkpoint, the
    shape in current model is [3, 32]`` from PyTorch's list of them."""
    for line in error.splitlines():
        if "size mismatch" in line:
            return line.strip().rstrip(".")
    return error.splitlines()[0] if error else ""


def resume_point(run: RunDir, emit: Callable[[Event], None]) -> Path | None:
    """The newest checkpoint that loads and whose weights are numbers; damaged newer ones are set aside
    and named in the log."""
    moved = run.set_aside_damaged()
    checkpoint = run.latest_checkpoint()
    while checkpoint is not None and (problem := weights_problem(checkpoint)):
        target = checkpoint.with_name(DAMAGED_PREFIX + checkpoint.name)
        while target.exists():
            target = target.with_name(target.name + "-1")
        checkpoint.rename(target)
        moved.append((checkpoint.name, problem))
        checkpoint = run.latest_checkpoint()
    for name, problem in moved:
        log.warning("checkpoint %s is damaged (%s); renamed to damaged-%s", name, problem, name)
    if moved:
        names = ", ".join(f"{name} ({problem})" for name, problem in moved)
        if checkpoint:
            text = msg(
                "Resuming from {checkpoint}: the newer {damaged} is damaged and was set aside",
                checkpoint=checkpoint.name,
                damaged=names,
            )
        else:
            text = msg("Resuming from the start: {damaged} is damaged and was set aside", damaged=names)
        emit(PreparingEvent(text))
    elif checkpoint is not None:
        emit(PreparingEvent(msg("Resuming from {checkpoint}", checkpoint=checkpoint.name)))
    return checkpoint


def remove_partial_checkpoints(run: RunDir, before: set[str]) -> None:
    """Delete checkpoint folders this run started but did not finish writing (the app wrote them)."""
    for path in run.checkpoints():
        if path.name not in before and checkpoint_problem(path):
            shutil.rmtree(path, ignore_errors=True)
