"""The best checkpoint and early stopping: a run whose validation figure got worse ends with its best model.

With evaluation rows, a run keeps the checkpoint that scored best on ``training.best_metric`` (the
validation loss unless the user picks a classification metric) and its model *is* that checkpoint
(``training.keep_best``); it stops once the metric has not improved for ``training.early_stopping``
evaluations in a row. Both go through the Trainer's own arguments (``metric_for_best_model``,
``load_best_model_at_end``) and transformers' ``EarlyStoppingCallback``:

- the Trainer keeps the best checkpoint when it rotates old ones away (``save_total_limit``) and
  records it in its state, so a resumed run still knows it;
- it can load the best model at the end only when checkpoints fall on evaluations, so the checkpoint
  cadence follows the evaluations' (said once as the run starts when that changes what was asked);
- ``callbacks.SaveAtBest`` also saves at every evaluation that beats the best, so the best always has a
  checkpoint even when checkpoints are rarer than evaluations.

What the run ended with (:func:`outcome`) goes into the finished event, and from there into the run
summary, the model card and the export page: which step's model it is, by which figure, and how the
last step scored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from desktop.core.settings.config import RunConfig
from desktop.core.system.messages import Msg, joined, msg

HIGHER_IS_BETTER = ("accuracy", "macro_f1")


def metric_key(name: str) -> str:
    """The key of ``name`` (``loss``, ``accuracy``) in evaluation logs: ``eval_loss``."""
    return name if name.startswith("eval_") else f"eval_{name}"


def watches(config: RunConfig, has_eval: bool) -> bool:
    """Whether the run tracks its best checkpoint: it has evaluation rows and keeps or stops by it."""
    t = config.training
    if config.task == "grpo":  # its loss says nothing of learning: the last step's model, no early stop
        return False
    return has_eval and (t.keep_best or t.early_stopping > 0)


def arguments(config: RunConfig, has_eval: bool) -> dict[str, Any]:
    """The training arguments that track (and keep) the best checkpoint; none without evaluation rows."""
    if not watches(config, has_eval):
        return {}
    t = config.training
    args: dict[str, Any] = {
        "metric_for_best_model": t.best_metric,
        "greater_is_better": t.best_metric in HIGHER_IS_BETTER,
    }
    cadence = _save_cadence(config)
    if t.keep_best and cadence is not None:
        args["load_best_model_at_end"] = True
        args.update(cadence)
    return args


def _save_cadence(config: RunConfig) -> dict[str, Any] | None:
    """Checkpoints on evaluations, as the Trainer needs to load the best model at the end, never rarer
    than asked (a checkpoint is what a crash or Stop goes back to); ``None`` where that cannot be (an
    evaluation per epoch with checkpoints every N steps, or checkpoints asked more often than
    evaluations)."""
    t = config.training
    if not t.eval_steps:
        return {"save_strategy": "epoch"} if not t.save_steps else None
    every = t.save_steps // t.eval_steps if t.save_steps else 1
    return {"save_strategy": "steps", "save_steps": t.eval_steps * every} if every else None


def cadence_note(config: RunConfig, has_eval: bool) -> Msg | None:
    """What keeping the best checkpoint changes in the asked checkpoint cadence, or why it cannot be
    kept, in a sentence; ``None`` when it changes nothing."""
    t = config.training
    if not (has_eval and t.keep_best):
        return None
    cadence = _save_cadence(config)
    if cadence is None:
        return msg(
            "The best checkpoint is named but the model stays the last step's: keeping the best needs "
            "checkpoints on evaluations (evaluate every N steps, with checkpoints every N steps or a "
            "multiple of N)."
        )
    if cadence["save_strategy"] == "epoch" or cadence["save_steps"] == t.save_steps:
        return None
    return msg(
        "Checkpoints are saved every {steps} steps, on evaluations, so that the best one can be kept.",
        steps=cadence["save_steps"],
    )


def callbacks(config: RunConfig, has_eval: bool) -> list[Any]:
    """The callbacks that save at each new best and stop early, as the config asks."""
    if not watches(config, has_eval):
        return []
    from desktop.core.training.callbacks import SaveAtBest

    found: list[Any] = [SaveAtBest()]
    if config.training.early_stopping > 0:
        from transformers import EarlyStoppingCallback

        found.append(EarlyStoppingCallback(early_stopping_patience=config.training.early_stopping))
    return found


def outcome(trainer: Any, config: RunConfig) -> dict[str, Any]:
    """Which model the run ends with: ``{metric, value, step, last_step, last_value, kept, stopped_early}``.

    ``kept`` says the model is the best checkpoint's (loaded at the end), ``stopped_early`` that early
    stopping ended the run before its last step. Empty when the run did not track its best.
    """
    args, state = trainer.args, trainer.state
    if not getattr(args, "metric_for_best_model", None) or state.best_metric is None:
        return {}
    key = metric_key(args.metric_for_best_model)
    evaluations = [(h["step"], float(h[key])) for h in state.log_history if key in h and "step" in h]
    step = state.best_global_step  # set with best_metric, at the evaluation that reached it
    last_step, last_value = evaluations[-1] if evaluations else (state.global_step, None)
    return {
        "metric": key,
        "value": float(state.best_metric),
        "step": int(step),
        "last_step": int(state.global_step),
        "last_value": last_value if last_step == state.global_step else None,
        "kept": bool(args.load_best_model_at_end and state.best_model_checkpoint),
        "stopped_early": config.training.early_stopping > 0 and state.global_step < state.max_steps,
    }


def best_metrics(trainer: Any, found: dict[str, Any]) -> dict[str, float] | None:
    """The evaluation logged at the best step (the model the run kept), or ``None`` when the run
    ends with its last step's model (or no evaluation was logged at the best step)."""
    if not found.get("kept") or found["step"] == found["last_step"]:
        return None
    for entry in trainer.state.log_history:
        if entry.get("step") == found["step"] and found["metric"] in entry:
            return dict(entry)
    return None


METRIC_NAMES = {
    "eval_loss": msg("validation loss"),
    "eval_accuracy": msg("validation accuracy"),
    "eval_macro_f1": msg("validation macro-F1"),
}


def metric_name(key: str) -> Msg | str:
    """``eval_loss`` in words: "validation loss"."""
    return METRIC_NAMES.get(key, key)


def note(found: dict[str, Any]) -> str | None:
    """The sentence the run ends with about its model: the best checkpoint's, and why; ``None`` when
    there is nothing to say (the last step was the best, or no best was tracked)."""
    if not found:
        return None
    early = (
        msg(
            "Stopped early at step {step}: the {metric} had not improved since step {best}.",
            step=found["last_step"],
            metric=metric_name(found["metric"]),
            best=found["step"],
        )
        if found["stopped_early"]
        else None
    )
    if found["step"] == found["last_step"]:
        return early
    if found["kept"] and found["last_value"] is not None:
        kept = msg(
            "The model is the best checkpoint, step {step} of {last_step}: {metric} {value:.4g} (the last "
            "step scored {last:.4g}).",
            step=found["step"],
            last_step=found["last_step"],
            metric=metric_name(found["metric"]),
            value=found["value"],
            last=found["last_value"],
        )
    elif found["kept"]:
        kept = msg(
            "The model is the best checkpoint, step {step} of {last_step}: {metric} {value:.4g}.",
            step=found["step"],
            last_step=found["last_step"],
            metric=metric_name(found["metric"]),
            value=found["value"],
        )
    else:
        kept = msg(
            "The best checkpoint was step {step} ({metric} {value:.4g}); the model is the last step's.",
            step=found["step"],
            metric=metric_name(found["metric"]),
            value=found["value"],
        )
    return joined(early, kept)


def model_sentence(found: dict[str, Any]) -> Msg | None:
    """Which step's model a finished run saved, by which figure, and how the last step scored: the line
    the Export page and the Evaluation tab show (``None`` when no best was tracked)."""
    if not found or found.get("value") is None:
        return None
    metric = metric_name(found["metric"])
    if found["step"] == found["last_step"]:
        return msg(
            "The model is the last step's, step {step}, which scored best: {metric} {value:.4g}.",
            step=found["step"],
            metric=metric,
            value=found["value"],
        )
    if not found["kept"]:
        return msg(
            "The model is the last step's, step {last_step}; the best checkpoint was step {step} "
            "({metric} {value:.4g}).",
            last_step=found["last_step"],
            step=found["step"],
            metric=metric,
            value=found["value"],
        )
    return note(dict(found, stopped_early=False))


def of_run(run_dir: Path | str) -> dict[str, Any]:
    """The best-checkpoint record of the run in ``run_dir``, from its finished event (``{}`` when it did
    not finish, tracked no best, or its record cannot be read: damaged lines are skipped)."""
    from desktop.core.runs.folders import RunDir
    from desktop.core.system.events import FinishedEvent

    finished = [e for e in RunDir(Path(run_dir)).events() if isinstance(e, FinishedEvent)]
    return dict(finished[-1].best) if finished else {}
