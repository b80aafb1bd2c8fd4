"""The checks of a reasoning run's ``[grpo]`` section (task ``grpo``), each naming the field and the fix."""

from __future__ import annotations

import re
from typing import Any

from desktop.core.settings.config_sections import ANSWER_CHECKS, ANSWER_FORMATS
from desktop.core.system.messages import msg


def validate_grpo(config: Any, infinite: set[str], add: Any) -> None:
    """Add a problem (``add(field, message)``) for each wrong setting of ``config.grpo``."""
    g, t = config.grpo, config.training
    if g.answer_check not in ANSWER_CHECKS:
        add("grpo.answer_check", msg("must be one of {choices}.", choices=", ".join(ANSWER_CHECKS)))
    if g.format not in ANSWER_FORMATS:
        try:
            groups = re.compile(g.format, re.DOTALL).groups
        except re.error as exc:
            add("grpo.format", msg("is not a valid regular expression: {reason}.", reason=str(exc)))
        else:
            if not groups:
                add(
                    "grpo.format",
                    msg("has no group to take the answer from: write (?P<answer>...) around the answer."),
                )
    weights = ("answer_weight", "format_weight", "length_weight", "language_weight", "custom_weight")
    for name in weights:
        if f"grpo.{name}" not in infinite and getattr(g, name) < 0:
            add(f"grpo.{name}", msg("must be 0 (off) or more."))
    on = [
        g.answer_check != "none" and g.answer_weight > 0,
        g.format_weight > 0,
        g.length_weight > 0 and bool(g.length_min or g.length_max),
        g.language_weight > 0,
        bool(g.custom_file) and g.custom_weight > 0,
    ]
    if not any(on):
        add("grpo", msg("turns every reward off; give at least one a weight above 0."))
    if g.length_min < 0 or g.length_max < 0:
        add("grpo.length_min", msg("must be 0 or more."))
    elif g.length_max and g.length_min > g.length_max:
        add("grpo.length_min", msg("must not be above grpo.length_max."))
    if g.num_generations < 2:
        add("grpo.num_generations", msg("must be 2 or more: the answers to a prompt are compared."))
    elif (
        size := t.batch_size * t.gradient_accumulation * max(1, config.launch.num_processes)
    ) % g.num_generations:
        add(
            "grpo.num_generations",
            msg(
                "must divide batch size x gradient accumulation ({size}): each prompt's answers go in the "
                "same batch. Use {fits}, or change the batch size.",
                size=size,
                fits=_divisor(size, g.num_generations),
            ),
        )
    if g.max_completion_length < 1:
        add("grpo.max_completion_length", msg("must be 1 or more tokens."))
    if "grpo.temperature" not in infinite and g.temperature <= 0:
        add(
            "grpo.temperature",
            msg("must be above 0: the answers must differ to be compared; 0.7 to 1 is usual."),
        )
    if "grpo.beta" not in infinite and g.beta < 0:
        add("grpo.beta", msg("must be 0 (no reference model) or more; 0.04 is the paper's."))


def _divisor(size: int, wanted: int) -> int:
    """The divisor of ``size`` nearest ``wanted`` (at least 2 when ``size`` allows)."""
    divisors = [d for d in range(2, size + 1) if size % d == 0] or [size]
    return min(divisors, key=lambda d: (abs(d - wanted), -d))
