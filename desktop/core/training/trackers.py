"""TensorBoard and MLflow beside a run: where they log, how to look, and never a run stopped for them.

transformers' own reporting callbacks do the logging (``report_to``: the run's parameters, every logged
figure per step, each evaluation), MLflow to the store of ``mlflow_store.py``. Each is wrapped
(:class:`Guarded`): the first exception in it (a store it refuses, a server that is down, a package too
old) is said once with what was not logged, and that tracker is left out for the rest of the run, which
goes on. (MLflow 3.18's "file store in maintenance mode" used to stop training.)
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from desktop.core.system.messages import Msg, msg
from desktop.core.training.mlflow_store import use_store

log = logging.getLogger(__name__)

NAMES = {"MLflowCallback": "MLflow", "TensorBoardCallback": "TensorBoard"}


def tensorboard_dir(output_dir: str | Path) -> Path:
    """Where transformers' TensorBoard callback writes a run's logs (the folder ``--logdir`` takes)."""
    return Path(os.environ.get("TENSORBOARD_LOGGING_DIR") or Path(output_dir) / "runs")


def where(trackers: list[str], output_dir: str | Path, run_name: str) -> list[Msg]:
    """What the run says as it starts: where each tracker logs, and the command that opens it."""
    said = []
    if "mlflow" in trackers:
        from desktop.core.training.mlflow_store import experiment, mlflow_store, ui_command

        uri, extra = mlflow_store()
        said.append(
            msg(
                "MLflow: this run is logged as {run} in the experiment {experiment} at {uri}. To look: "
                "{command}",
                run=run_name,
                experiment=experiment(),
                uri=uri,
                command=ui_command(uri, extra),
            )
        )
    if "tensorboard" in trackers:
        folder = tensorboard_dir(output_dir)
        said.append(
            msg("TensorBoard: logs in {folder}. To look: tensorboard --logdir {folder}", folder=folder)
        )
    return said


def guard(trainer: Any, say: Callable[[Msg], None]) -> None:
    """Wrap the Trainer's reporting callbacks (:class:`Guarded`); ``say`` gets the sentence of one that
    fails."""
    for callback in list(trainer.callback_handler.callbacks):
        name = NAMES.get(type(callback).__name__)
        if name is not None:
            trainer.remove_callback(callback)
            guarded = Guarded(callback, name, say)
            trainer.add_callback(guarded)
            if name == "MLflow":
                guarded.guard(use_store, "on_train_begin", step=0)


def _passing(event: str) -> Callable[..., Any]:
    def handle(self: Guarded, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        return self.call(event, args, state, control, **kwargs)

    handle.__name__ = event
    return handle


class Guarded(TrainerCallback):
    """A reporting callback whose failures never reach the Trainer: each event is passed on until one
    raises; that one is said once (with the step and what was not logged) and the tracker is left out
    (an MLflow run it opened is ended as failed)."""

    def __init__(self, inner: Any, name: str, say: Callable[[Msg], None]) -> None:
        self.inner, self.name, self.say = inner, name, say
        self.failed = False

    def call(self, event: str, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        return self.guard(
            lambda: getattr(self.inner, event)(args, state, control, **kwargs), event, state.global_step
        )

    def guard(self, action: Callable[[], Any], event: str, step: int) -> Any:
        """``action``'s result, or ``None`` once the tracker has failed (said once, with ``step``)."""
        if self.failed:
            return None
        try:
            return action()
        except Exception as exc:  # a tracker's failure is never the run's
            self.failed = True
            log.warning("%s stopped logging at step %s (%s)", self.name, step, event, exc_info=True)
            reason = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
            self.say(
                msg(
                    "{tracker} stopped logging at step {step}: {reason}. Training goes on; its figures after "
                    "this step are not in {tracker}, and the run's own are in its folder.",
                    tracker=self.name,
                    step=step,
                    reason=reason,
                )
            )
            if self.name == "MLflow":
                _end_mlflow_run()
            return None


def _end_mlflow_run() -> None:
    """Mark the MLflow run that a failure left open as failed (it would stay "running" forever)."""
    try:
        import mlflow

        if mlflow.active_run() is not None:
            mlflow.end_run(status="FAILED")
    except Exception:  # the store that failed may refuse this too
        log.warning("the MLflow run could not be ended", exc_info=True)


for _event in [name for name in dir(TrainerCallback) if name.startswith("on_")]:
    setattr(Guarded, _event, _passing(_event))
