"""A loss, gradient norm or evaluation loss that is not a number stops the run, said at once.

The Trainer's ``logging_nan_inf_filter`` (on by default) logs a NaN step's loss as the mean of the
others, so a run whose loss was NaN at every step ended "Finished, loss 0" with an all-NaN model. We
turn that filter off (the log shows what happened) and watch each step's loss where the Trainer makes
it (``training_step``: the same one synchronisation per step that the filter cost), the logged gradient
norm and each evaluation's loss. A few non-finite steps in a row stop the run with a sentence that
says where it came from and changes to apply and retry; a single non-finite step (fp16's loss scaler
skips an overflowing step by itself) is counted, written to ``train.log`` and named in the run's notes.

Weights that already hold NaN or infinity (a damaged download, an earlier diverged run) are refused
when a model is loaded, a checkpoint resumed or a model exported, naming the tensor
(:func:`first_non_finite`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable
from typing import Any

from desktop.core.system.errors import NonFiniteError, Remedy
from desktop.core.system.messages import msg

log = logging.getLogger(__name__)

IN_A_ROW = 3
"""Non-finite training steps in a row that stop the run: one or two can be fp16 overflows the loss
scaler skips; three in a row are a run that has diverged."""


def _value(text: float) -> str:
    return "NaN" if math.isnan(text) else ("+inf" if text > 0 else "-inf")


def cause(value: float, step: int, what: str, args: Any) -> NonFiniteError:
    """The failure for a non-finite ``what`` (``loss``, ``grad_norm``, ``eval_loss``) at ``step``,
    with where it most likely came from and the changes that fix it."""
    rate = float(getattr(args, "learning_rate", 0.0) or 0.0)
    lower = float(f"{rate / 10:.2g}") if rate else 0.0
    lower_rate = Remedy(
        msg("Lower the learning rate to {rate}", rate=f"{lower:g}"), {"training.learning_rate": lower}
    )
    if getattr(args, "fp16", False):
        return NonFiniteError(
            msg(
                "The training stopped: the {what} became {value} at step {step}. In fp16 the numbers "
                "overflowed (fp16 holds values up to 65504).",
                what=what,
                value=_value(value),
                step=step,
            ),
            msg("Train in bf16 where the GPU has it (RTX 30 and newer), else in fp32, or lower the rate."),
            (
                Remedy(msg("Train in bf16"), {"performance.precision": "bf16"}),
                Remedy(msg("Train in fp32"), {"performance.precision": "fp32"}),
                lower_rate,
            ),
        )
    return NonFiniteError(
        msg(
            "The training stopped: the {what} became {value} at step {step}. The learning rate ({rate}) "
            "is most likely too high for this model: its weights diverged.",
            what=what,
            value=_value(value),
            step=step,
            rate=f"{rate:g}",
        ),
        msg("Lower the learning rate (a tenth is a good first try) and train again from the start."),
        (lower_rate,),
    )


class NonFiniteWatch:
    """Counts the non-finite training steps of a Trainer and stops it when they come :data:`IN_A_ROW`.

    Args:
        trainer: The Trainer; its ``training_step`` is wrapped (:func:`watch`).
    """

    def __init__(self, trainer: Any) -> None:
        self.trainer = trainer
        self.in_a_row = 0
        self.skipped = 0
        """Non-finite steps training went past (fp16 overflows the scaler skipped)."""

    def saw_loss(self, loss: Any) -> None:
        """One micro-batch's loss (a tensor); raises :class:`NonFiniteError` on the third bad one in a row."""
        value = float(loss.detach().float().mean()) if hasattr(loss, "detach") else float(loss)
        step = int(self.trainer.state.global_step) + 1
        if math.isfinite(value):
            self.in_a_row = 0
            return
        self.in_a_row += 1
        if self.in_a_row >= IN_A_ROW:
            raise cause(value, step, msg("training loss"), self.trainer.args)
        self.skipped += 1
        log.warning("step %d: the training loss was %s; the step is left out", step, _value(value))

    def note(self) -> str | None:
        """What the run's notes say of non-finite steps training went past; ``None`` when there were none."""
        if not self.skipped:
            return None
        return msg(
            "{count} training steps had a loss that was not a number (NaN or infinity, usually an fp16 "
            "overflow); the loss scaler left their updates out and training went on.",
            count=self.skipped,
        )

    def saw_log(self, logs: dict[str, Any], step: int) -> None:
        """A log entry: a non-finite evaluation loss stops the run; so does a non-finite gradient norm
        outside fp16 (where the scaler would have skipped the step)."""
        args = self.trainer.args
        for key, what in (("eval_loss", msg("evaluation loss")), ("grad_norm", msg("gradient norm"))):
            value = logs.get(key)
            if not isinstance(value, (int, float)) or math.isfinite(value):
                continue
            if key == "grad_norm" and getattr(args, "fp16", False):
                continue  # the scaler skips the step and lowers its scale: counted through the loss
            raise cause(float(value), step, what, args)


def watch(trainer: Any) -> NonFiniteWatch:
    """Watch ``trainer``'s losses (see the module docstring); returns the watch."""
    from transformers import TrainerCallback

    guard = NonFiniteWatch(trainer)
    step = trainer.training_step

    def checked_training_step(model: Any, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        loss = step(model, inputs, *args, **kwargs)
        guard.saw_loss(loss)
        return loss

    trainer.training_step = checked_training_step

    class NonFiniteCallback(TrainerCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: dict | None = None, **kw: Any) -> None:
            guard.saw_log(logs or {}, state.global_step)

        def on_evaluate(
            self, args: Any, state: Any, control: Any, metrics: dict | None = None, **kw: Any
        ) -> None:
            guard.saw_log(metrics or {}, state.global_step)

    trainer.add_callback(NonFiniteCallback())
    return guard


def first_non_finite(tensors: Iterable[tuple[str, Any]]) -> str | None:
    """The name of the first floating-point tensor in ``tensors`` ((name, tensor) pairs) that holds a
    NaN or an infinity; ``None`` when all are finite. Quantized and integer tensors are skipped."""
    import torch

    for name, tensor in tensors:
        if tensor is None or not torch.is_floating_point(tensor) or tensor.device.type == "meta":
            continue
        if not bool(torch.isfinite(tensor).all()):
            return name
    return None


def check_model(model: Any, where: str) -> None:
    """Refuse a model whose weights hold NaN or infinity, naming the tensor.

    Args:
        where: What holds the model, for the sentence (a path or a hub id).

    Raises:
        NonFiniteError: A weight is not a number.
    """
    name = first_non_finite(model.named_parameters())
    if name is None:
        name = first_non_finite(model.named_buffers())
    if name is not None:
        raise NonFiniteError(
            msg(
                "The model in {where} is damaged: its tensor {tensor} holds values that are not numbers "
                "(NaN or infinity), so nothing trained from it can work.",
                where=where,
                tensor=name,
            ),
            msg(
                "Download the model again or choose another one; a model a diverged run saved cannot be "
                "repaired: train it again from its base model."
            ),
        )
