"""A coach that watches a run's curves as an experienced person would, and says what it sees.

It reads the run's events as they pass (the loss and evaluation logs) and answers with an
:class:`AdviceEvent` the first time it sees each of these, with the figures and, where one exists, a
change to apply and retry:

- **learning rate**: a rate 20 times or more off the task's default as the run starts (inherited from
  another task or run: a DPO run from a chat run kept 0.002, 400 times the preference default);
- **overfitting**: the validation loss rose at three evaluations in a row, to 5% or more above its best,
  while the training loss fell;
  the best evaluation so far is named, with a schedule that ends there;
- **diverging**: the training loss grew to three times its lowest and rose at three logs in a row, or
  jumped and stayed at three times where it began (a loss that is no number at all stops the run
  instead: ``non_finite``);
- **not learning**: after 40% of the steps the training loss is within 5% of where it began, or the
  accuracy stays at chance;
- preference runs, **held-out pairs not following**: after 40% of the steps the reward accuracy on the
  held-out pairs has not improved on its first evaluation while the training pairs' is far above it;
- preference runs, **both answers falling**: the rewards of the chosen and the rejected answers fell at
  three logs in a row, the chosen one below where it began and below zero (the model tells them apart
  by making both unlikelier, which tends to spoil its answers);
- preference runs, after training (:func:`preference_outcome`): the held-out preference accuracy is no
  better than the base model's, above all when DPO's reward accuracy says otherwise.

Each is said once per run. Thresholds are deliberately wide: on the samples' runs with the app's
defaults nothing is said.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from desktop.core.settings.config import RunConfig
from desktop.core.settings.config_sections import DEFAULT_LEARNING_RATE, LOW_RATES
from desktop.core.system.events import AdviceEvent, Event, LogEvent, StartedEvent
from desktop.core.system.messages import Msg, msg

RATE_FACTOR = 20
"""How far (either way) from the task's default a learning rate must be to be named."""
RISES = 3
"""Evaluations (validation loss) or logs (training loss) in a row that must rise."""
DIVERGED = 3.0
OVERFIT_RISE = 0.05
"""How far above its best the validation loss must have risen (a share of it) to be called overfitting."""
"""How many times its lowest the training loss must have grown to be called diverging."""
FLAT_SHARE, FLAT = 0.4, 0.95
"""Not learning: after this share of the steps, the loss is still above this share of where it began."""
PARTED = 0.3
"""How far the training pairs' reward accuracy must be above the held-out pairs' to call them parted."""
CHANCE_MARGIN = 0.05
UNKNOWN = 0.05
"""A share of unknown tokens above which the model is said not to read the data's language."""


def default_rate(config: RunConfig) -> float:
    """The learning rate the app starts ``config``'s task with."""
    return LOW_RATES.get(config.task, DEFAULT_LEARNING_RATE)


class Coach:
    """Watches one run's events; :meth:`see` returns what to say about each (mostly nothing)."""

    def __init__(
        self, config: RunConfig, num_labels: int | None = None, unknown: float | None = None
    ) -> None:
        self.config = config
        self.num_labels = num_labels
        self.unknown = unknown  # the share of the data's tokens the model does not know (classifiers)
        self.total_steps = 0
        self.said: set[str] = set()
        self.losses: list[tuple[int, float]] = []  # training loss (step, value)
        self.evals: list[tuple[int, float]] = []  # validation loss
        self.accuracies: list[tuple[int, float]] = []
        self.rewards: list[tuple[int, float, float]] = []  # preference: (step, chosen, rejected)
        self.reward_accuracies: list[float] = []  # on the training pairs, at each log
        self.held_out: list[tuple[int, float]] = []  # reward accuracy on the held-out pairs
        self.grpo = None
        if config.task == "grpo":
            from desktop.core.training.grpo_coach import GrpoWatch

            self.grpo = GrpoWatch(config)  # its own concerns: a GRPO loss says nothing of learning

    def see(self, event: Event) -> list[AdviceEvent]:
        """Advice prompted by ``event``, each concern at most once a run."""
        found: list[AdviceEvent | None] = []
        if isinstance(event, StartedEvent):
            self.total_steps = event.total_steps
            found.append(self._rate(event.resumed_from_step))
        elif isinstance(event, LogEvent):
            metrics = event.metrics
            if self.grpo is not None:
                found += self.grpo.see(event.step, self.total_steps, metrics)
            elif isinstance(metrics.get("loss"), (int, float)):
                self.losses.append((event.step, float(metrics["loss"])))
                found += [self._diverging(event.step), self._flat(event.step)]
            if isinstance(metrics.get("eval_loss"), (int, float)):
                self.evals.append((event.step, float(metrics["eval_loss"])))
                found.append(self._overfitting(event.step))
            if isinstance(metrics.get("eval_accuracy"), (int, float)):
                self.accuracies.append((event.step, float(metrics["eval_accuracy"])))
                found.append(self._at_chance(event.step))
            if self.config.task == "preference":
                found += self._preference(event.step, metrics)
        out = [advice for advice in found if advice is not None and advice.concern not in self.said]
        self.said |= {advice.concern for advice in out}
        return out

    # ------------------------------------------------------------------ concerns

    def _rate(self, step: int) -> AdviceEvent | None:
        rate, default = self.config.training.learning_rate, default_rate(self.config)
        if default / RATE_FACTOR < rate < default * RATE_FACTOR:
            return None
        times = rate / default
        return AdviceEvent(
            step,
            "learning_rate",
            msg(
                "The learning rate is {rate:g}, {times} the {task} default of {default:g}: a rate kept from "
                "another task or run? {effect}",
                rate=rate,
                times=msg("{n:.0f} times", n=times) if times > 1 else msg("1/{n:.0f} of", n=1 / times),
                task=self.config.task,
                default=default,
                effect=msg("So high a rate tends to wreck what the model knew.")
                if times > 1
                else msg("So low a rate changes the model very little."),
            ),
            [_remedy(msg("learning rate {rate:g}", rate=default), {"training.learning_rate": default})],
        )

    def _overfitting(self, step: int) -> AdviceEvent | None:
        if len(self.evals) < RISES + 1:
            return None
        last = [value for _, value in self.evals[-(RISES + 1) :]]
        if not all(b > a for a, b in itertools.pairwise(last)):
            return None
        best_step, best = min(self.evals, key=lambda e: e[1])
        if last[-1] < (1 + OVERFIT_RISE) * best:
            return None  # rises of a hundredth: noise, not a model learning its rows by heart
        since = [value for s, value in self.losses if s >= best_step]
        if len(since) < 2 or since[-1] >= since[0]:
            return None  # the training loss rises too: not overfitting
        return AdviceEvent(
            step,
            "overfitting",
            msg(
                "The validation loss has risen at {n} evaluations in a row ({best:.3g} at step "
                "{best_step}, {now:.3g} now) while the training loss fell ({train_then:.3g} to "
                "{train_now:.3g}): the model is learning the training rows by heart. The best evaluation "
                "so far is step {best_step}.",
                n=RISES,
                best=best,
                best_step=best_step,
                now=last[-1],
                train_then=since[0],
                train_now=since[-1],
            ),
            [
                _remedy(
                    msg("stop at step {step}", step=best_step),
                    {"training.max_steps": best_step},
                )
            ],
        )

    def _diverging(self, step: int) -> AdviceEvent | None:
        if len(self.losses) < RISES + 1:
            return None
        lowest = max(min(value for _, value in self.losses), 1e-8)  # a confident classifier logs 0.0
        last = [value for _, value in self.losses[-(RISES + 1) :]]
        rising = last[-1] >= DIVERGED * lowest and all(b > a for a, b in itertools.pairwise(last))
        # Or it jumped and stays up: three logs whose mean is three times where it began (a rate of 0.9
        # took a tiny GPT-2 from 8.3 to 44.6 in one log).
        recent = sum(last[-RISES:]) / RISES
        if rising:
            now = last[-1]
        elif recent >= DIVERGED * max(self.losses[0][1], 1e-8):
            now = recent
        else:
            return None
        if now <= self.losses[0][1]:
            return None  # below where it began: noise near zero (0 to 4e-4 is "three times its lowest")
        rate = self.config.training.learning_rate
        return AdviceEvent(
            step,
            "diverging",
            msg(
                "The training loss is growing: {now:.3g} now, {times:.1f} times its lowest ({lowest:.3g}). "
                "The learning rate ({rate:g}) is likely too high for this model.",
                now=now,
                times=now / lowest,
                lowest=lowest,
                rate=rate,
            ),
            [_remedy(msg("learning rate {rate:g}", rate=rate / 10), {"training.learning_rate": rate / 10})],
        )

    def _flat(self, step: int) -> AdviceEvent | None:
        if not self.total_steps or step < FLAT_SHARE * self.total_steps or len(self.losses) < 5:
            return None
        first = self.losses[0][1]  # a log's loss is already the mean over the steps since the last
        now = sum(value for _, value in self.losses[-3:]) / 3
        if now < FLAT * first:
            return None
        if now > first / FLAT:  # not flat: higher than where it began
            seen = msg(
                "After {share:.0%} of the steps the training loss is higher than where it began ({first:.3g} "
                "to {now:.3g}).",
                share=step / self.total_steps,
                first=first,
                now=now,
            )
        else:
            seen = msg(
                "After {share:.0%} of the steps the training loss has barely moved ({first:.3g} to "
                "{now:.3g}).",
                share=step / self.total_steps,
                first=first,
                now=now,
            )
        return self._not_learning(step, seen)

    def _at_chance(self, step: int) -> AdviceEvent | None:
        labels = self.num_labels
        if (
            not labels
            or not self.total_steps
            or step < FLAT_SHARE * self.total_steps
            or len(self.accuracies) < 2
        ):
            return None
        chance = 1 / labels
        if max(value for _, value in self.accuracies[-2:]) > chance + CHANCE_MARGIN:
            return None
        return self._not_learning(
            step,
            msg(
                "After {share:.0%} of the steps the accuracy is {accuracy:.3g}, what guessing among {labels} "
                "classes scores ({chance:.3g}).",
                share=step / self.total_steps,
                accuracy=self.accuracies[-1][1],
                labels=labels,
                chance=chance,
            ),
        )

    def _preference(self, step: int, metrics: dict[str, Any]) -> list[AdviceEvent | None]:
        def number(name: str) -> float | None:
            value = metrics.get(name)
            return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None

        found: list[AdviceEvent | None] = []
        chosen, rejected = number("rewards/chosen"), number("rewards/rejected")
        if chosen is not None and rejected is not None:
            self.rewards.append((step, chosen, rejected))
            found.append(self._both_falling(step))
        if (accuracy := number("rewards/accuracies")) is not None:
            self.reward_accuracies.append(accuracy)
        if (held_out := number("eval_rewards/accuracies")) is not None:
            self.held_out.append((step, held_out))
            found.append(self._held_out_parted(step))
        return found

    def _held_out_parted(self, step: int) -> AdviceEvent | None:
        if (
            not self.total_steps
            or step < FLAT_SHARE * self.total_steps
            or len(self.held_out) < 2
            or not self.reward_accuracies
        ):
            return None
        first, now = self.held_out[0][1], self.held_out[-1][1]
        training = sum(self.reward_accuracies[-3:]) / len(self.reward_accuracies[-3:])
        if now > first + CHANCE_MARGIN or training < now + PARTED:
            return None
        rate, default = self.config.training.learning_rate, default_rate(self.config)
        return AdviceEvent(
            step,
            "preference_held_out",
            msg(
                "On the training pairs the reward accuracy is {training:.2f}, on the held-out pairs "
                "{now:.2f}, no better than at step {first_step} ({first:.2f}). The first counts the pairs "
                "the model learns from, the second pairs it never saw: when they part, the model is "
                "learning those pairs by heart rather than what makes an answer better. More pairs, fewer "
                "steps or a lower learning rate ({rate:g} now) help.",
                training=training,
                now=now,
                first_step=self.held_out[0][0],
                first=first,
                rate=rate,
            ),
            [_remedy(msg("learning rate {rate:g}", rate=lower), {"training.learning_rate": lower})]
            if (lower := min(rate / 2, default)) < rate
            else [],
        )

    def _both_falling(self, step: int) -> AdviceEvent | None:
        if len(self.rewards) < RISES + 1:
            return None
        last = self.rewards[-(RISES + 1) :]
        chosen = [c for _, c, _ in last]
        rejected = [r for _, _, r in last]
        fell = all(b < a for a, b in itertools.pairwise(chosen)) and all(
            b < a for a, b in itertools.pairwise(rejected)
        )
        if not fell or chosen[-1] >= min(0.0, self.rewards[0][1]):
            return None
        rate, dpo = self.config.training.learning_rate, self.config.preference.method == "dpo"
        half = rate / 2
        remedies = [_remedy(msg("learning rate {rate:g}", rate=half), {"training.learning_rate": half})]
        if dpo:
            beta = self.config.preference.beta * 2
            remedies.append(_remedy(msg("beta {beta:g}", beta=beta), {"preference.beta": beta}))
        return AdviceEvent(
            step,
            "rewards_falling",
            msg(
                "The rewards of the chosen answers ({chosen_then:.3g} to {chosen_now:.3g}) and of the "
                "rejected ones ({rejected_then:.3g} to {rejected_now:.3g}) both fell at {n} logs in a row: "
                "the model tells the answers apart by making both less likely, which tends to make its own "
                "answers worse. {fix}",
                chosen_then=chosen[0],
                chosen_now=chosen[-1],
                rejected_then=rejected[0],
                rejected_now=rejected[-1],
                n=RISES,
                fix=msg("A lower learning rate, or a higher beta, keeps it nearer where it started.")
                if dpo
                else msg("A lower learning rate keeps it nearer where it started."),
            ),
            remedies,
        )

    def _not_learning(self, step: int, seen: Msg) -> AdviceEvent:
        rate, default = self.config.training.learning_rate, default_rate(self.config)
        remedies = []
        if not default / 3 < rate < default * 3:
            remedies.append(
                _remedy(msg("learning rate {rate:g}", rate=default), {"training.learning_rate": default})
            )
        if self.config.task in ("image-classification", "vision-chat"):  # pictures: no language to read
            return AdviceEvent(
                step,
                "not_learning",
                msg(
                    "{seen} The model is not learning: check the learning rate ({rate:g}; {default:g} is "
                    "usual for this task), and that each picture's label or answer is the right one.",
                    seen=seen,
                    rate=rate,
                    default=default,
                ),
                remedies,
            )
        return AdviceEvent(
            step,
            "not_learning",
            msg(
                "{seen} The model is not learning: check the learning rate ({rate:g}; {task} usually "
                "trains at {default:g}), {language}, and {labels}.",
                seen=seen,
                rate=rate,
                task=self.config.task,
                default=default,
                language=msg(
                    "that the model reads the data's language ({share:.0%} of the data's tokens are "
                    "unknown to it{verdict})",
                    share=self.unknown,
                    verdict=msg(": it does not") if self.unknown > UNKNOWN else "",
                )
                if self.unknown is not None
                else msg(
                    "that the model reads the data's language (many unknown tokens in the data check say "
                    "it does not)"
                ),
                labels=msg("that the chosen answers are the better ones")
                if self.config.task == "preference"
                else msg("that the labels match the texts"),
            ),
            remedies,
        )


def preference_outcome(
    config: RunConfig, step: int, before: float | None, after: float | None, reward_accuracy: float | None
) -> AdviceEvent | None:
    """What to say when the held-out preference accuracy of the tuned model (``after``) is no better than
    the base model's (``before``): the measure explained, and set beside DPO's reward accuracy when that
    reads high (the two measure different things; the issue's run showed 0.000 beside 1.000)."""
    if before is None or after is None or after > before:
        return None
    parted = reward_accuracy is not None and reward_accuracy >= after + PARTED
    rate, default = config.training.learning_rate, default_rate(config)
    return AdviceEvent(
        step,
        "preference_not_improving",
        msg(
            "On the held-out pairs the tuned model prefers the chosen answer in {after:.0%} of them, the "
            "base model in {before:.0%}: no better. {parted}The preference accuracy asks which answer "
            "the model finds likelier outright; the reward accuracy only whether it moved toward the "
            "chosen answer more than toward the rejected one, from where it started. {fix}",
            after=after,
            before=before,
            parted=msg("Yet the reward accuracy reads {reward:.2f}. ", reward=reward_accuracy)
            if parted
            else "",
            fix=msg(
                "Check that the chosen and rejected columns are not swapped, and try more pairs or more "
                "steps."
            ),
        ),
        []
        if default / 3 < rate < default * 3
        else [_remedy(msg("learning rate {rate:g}", rate=default), {"training.learning_rate": default})],
    )


def _remedy(label: Msg, changes: dict[str, Any]) -> dict[str, Any]:
    return {"label": label, "changes": changes}
