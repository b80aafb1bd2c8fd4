"""What the coach sees in a reasoning run's (GRPO) curves, said once each, with the figures:

- **reward flat**: after 40% of the steps the mean reward is within 0.02 of where it began; above all
  when most prompts' answers all score alike (TRL's ``frac_reward_zero_std``), which leaves GRPO
  nothing to compare;
- **length collapsing**: the answers' mean length fell below a third of where it began, to under 32
  tokens, at three logs in a row: the model may earn its rewards by saying less.

A GRPO run's loss is not a measure of learning (it hovers near 0 by construction), so the loss-based
concerns of the other tasks are not asked of it (:mod:`desktop.core.training.coach`).
"""

from __future__ import annotations

import itertools
import statistics
from typing import Any

from desktop.core.system.events import AdviceEvent
from desktop.core.system.messages import msg

FLAT_SHARE, FLAT_GAIN = 0.4, 0.02
LOGS = 3
SHRUNK, SHORT = 1 / 3, 32


class GrpoWatch:
    """The reward and length logs of one run; :meth:`see` returns the concerns they raise."""

    def __init__(self, config: Any) -> None:
        self.config = config
        self.rewards: list[tuple[int, float, float]] = []  # (step, mean reward, share of groups alike)
        self.lengths: list[float] = []

    def see(self, step: int, total_steps: int, metrics: dict[str, Any]) -> list[AdviceEvent | None]:
        if not isinstance(metrics.get("reward"), (int, float)):
            return []
        self.rewards.append(
            (step, float(metrics["reward"]), float(metrics.get("frac_reward_zero_std") or 0.0))
        )
        if isinstance(metrics.get("completions/mean_length"), (int, float)):
            self.lengths.append(float(metrics["completions/mean_length"]))
        return [self._flat(step, total_steps), self._collapsing(step)]

    def _flat(self, step: int, total_steps: int) -> AdviceEvent | None:
        if not total_steps or step < FLAT_SHARE * total_steps or len(self.rewards) < 2 * LOGS:
            return None
        first = statistics.mean(r for _, r, _ in self.rewards[:LOGS])
        now = statistics.mean(r for _, r, _ in self.rewards[-LOGS:])
        g = self.config.grpo
        top = sum(
            w
            for w, on in (
                (g.answer_weight, g.answer_check != "none"),
                (g.format_weight, True),
                (g.length_weight, bool(g.length_min or g.length_max)),
                (g.language_weight, True),
            )
            if on
        )
        if now - first > FLAT_GAIN or (top and now >= 0.9 * top and not g.custom_file):
            return None  # rising, or already near the most the rewards give
        alike = statistics.mean(a for _, _, a in self.rewards[-LOGS:])
        remedies = []
        if g.temperature < 1.0:
            remedies.append(_remedy(msg("temperature 1.0"), {"grpo.temperature": 1.0}))
        if g.format_weight == 0:
            remedies.append(_remedy(msg("a format reward"), {"grpo.format_weight": 0.5}))
        return AdviceEvent(
            step,
            "reward_flat",
            msg(
                "The mean reward has stayed near {first:.2f} (now {now:.2f}) for {steps} steps; in "
                "{alike:.0%} of the prompts every answer scored the same, which leaves GRPO nothing to "
                "compare. More "
                "varied answers (a higher temperature, more answers per prompt) or a reward that gives "
                "partial credit (the format) help; so does data the model can sometimes already solve.",
                first=first,
                now=now,
                steps=step,
                alike=alike,
            ),
            remedies,
        )

    def _collapsing(self, step: int) -> AdviceEvent | None:
        if len(self.lengths) < LOGS + 1:
            return None
        first, last = self.lengths[0], self.lengths[-(LOGS + 1) :]
        fell = all(b < a for a, b in itertools.pairwise(last))
        if not fell or last[-1] >= SHRUNK * first or last[-1] >= SHORT:
            return None
        rewards = [r for _, r, _ in self.rewards]
        if rewards[-1] > rewards[0] + FLAT_GAIN:
            return None  # shorter answers that earn more: a label task learning to answer in a word
        rate = self.config.training.learning_rate / 2
        return AdviceEvent(
            step,
            "length_collapsing",
            msg(
                "The answers shrank from {first:.0f} to {now:.0f} tokens on average: the model may be "
                "earning its rewards by saying less (an empty answer can pass a length or language "
                "check). Read the sampled answers in the log; a length reward with a minimum, or a lower "
                "learning rate, holds it.",
                first=first,
                now=last[-1],
            ),
            [_remedy(msg("learning rate {rate:g}", rate=rate), {"training.learning_rate": rate})],
        )


def _remedy(label: Any, changes: dict[str, Any]) -> dict[str, Any]:
    return {"label": label, "changes": changes}
