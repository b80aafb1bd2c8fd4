"""A coach that watches a run's curves as an experienced person would, and says what it sees.

It reads the run's events as they pass (the loss and evaluation logs) and answers with an
:class:`AdviceEvent` the first time it sees each of these, with the figures and, where one exists, a
change to apply and retry:

- **learning rate**: a rate 20 times or more off the task's default as the run starts (inherited from
  another task or run: a DPO run from a chat run kept 0.002, 400 times the preference default);
- **overfitting**: the validation loss rose at three evaluations in a row while the training loss fell;
  the best evaluation so far is named, with a schedule that ends there;
- **diverging**: the training loss grew to three times its lowest and rose at three logs in a row (a
  loss that is no number at all stops the run instead: ``non_finite``);
- **not learning**: after 40% of the steps the training loss is within 5% of where it began, or the
  accuracy stays at chance.

Each is said once per run. Thresholds are deliberately wide: on the samples' runs with the app's
defaults nothing is said.
"""

from __future__ import annotations

import itertools
from typing import Any

from desktop.core.settings.config import RunConfig
from desktop.core.settings.config_sections import DEFAULT_LEARNING_RATE, PREFERENCE_LEARNING_RATE
from desktop.core.system.events import AdviceEvent, Event, LogEvent, StartedEvent
from desktop.core.system.messages import Msg, msg

RATE_FACTOR = 20
"""How far (either way) from the task's default a learning rate must be to be named."""
RISES = 3
"""Evaluations (validation loss) or logs (training loss) in a row that must rise."""
DIVERGED = 3.0
"""How many times its lowest the training loss must have grown to be called diverging."""
FLAT_SHARE, FLAT = 0.4, 0.95
"""Not learning: after this share of the steps, the loss is still above this share of where it began."""
CHANCE_MARGIN = 0.05


def default_rate(config: RunConfig) -> float:
    """The learning rate the app starts ``config``'s task with."""
    return PREFERENCE_LEARNING_RATE if config.task == "preference" else DEFAULT_LEARNING_RATE


class Coach:
    """Watches one run's events; :meth:`see` returns what to say about each (mostly nothing)."""

    def __init__(self, config: RunConfig, num_labels: int | None = None) -> None:
        self.config = config
        self.num_labels = num_labels
        self.total_steps = 0
        self.said: set[str] = set()
        self.losses: list[tuple[int, float]] = []  # training loss (step, value)
        self.evals: list[tuple[int, float]] = []  # validation loss
        self.accuracies: list[tuple[int, float]] = []

    def see(self, event: Event) -> list[AdviceEvent]:
        """Advice prompted by ``event``, each concern at most once a run."""
        found: list[AdviceEvent | None] = []
        if isinstance(event, StartedEvent):
            self.total_steps = event.total_steps
            found.append(self._rate(event.resumed_from_step))
        elif isinstance(event, LogEvent):
            metrics = event.metrics
            if isinstance(metrics.get("loss"), (int, float)):
                self.losses.append((event.step, float(metrics["loss"])))
                found += [self._diverging(event.step), self._flat(event.step)]
            if isinstance(metrics.get("eval_loss"), (int, float)):
                self.evals.append((event.step, float(metrics["eval_loss"])))
                found.append(self._overfitting(event.step))
            if isinstance(metrics.get("eval_accuracy"), (int, float)):
                self.accuracies.append((event.step, float(metrics["eval_accuracy"])))
                found.append(self._at_chance(event.step))
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
        lowest = min(value for _, value in self.losses)
        last = [value for _, value in self.losses[-(RISES + 1) :]]
        if last[-1] < DIVERGED * lowest or not all(b > a for a, b in itertools.pairwise(last)):
            return None
        rate = self.config.training.learning_rate
        return AdviceEvent(
            step,
            "diverging",
            msg(
                "The training loss is growing: {now:.3g} now, {times:.1f} times its lowest ({lowest:.3g}). "
                "The learning rate ({rate:g}) is likely too high for this model.",
                now=last[-1],
                times=last[-1] / lowest,
                lowest=lowest,
                rate=rate,
            ),
            [_remedy(msg("learning rate {rate:g}", rate=rate / 10), {"training.learning_rate": rate / 10})],
        )

    def _flat(self, step: int) -> AdviceEvent | None:
        if not self.total_steps or step < FLAT_SHARE * self.total_steps or len(self.losses) < 5:
            return None
        first = sum(value for _, value in self.losses[:2]) / 2
        now = sum(value for _, value in self.losses[-3:]) / 3
        if now < FLAT * first:
            return None
        return self._not_learning(
            step,
            msg(
                "After {share:.0%} of the steps the training loss has barely moved ({first:.3g} to "
                "{now:.3g}).",
                share=step / self.total_steps,
                first=first,
                now=now,
            ),
        )

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

    def _not_learning(self, step: int, seen: Msg) -> AdviceEvent:
        rate, default = self.config.training.learning_rate, default_rate(self.config)
        remedies = []
        if not default / 3 < rate < default * 3:
            remedies.append(
                _remedy(msg("learning rate {rate:g}", rate=default), {"training.learning_rate": default})
            )
        return AdviceEvent(
            step,
            "not_learning",
            msg(
                "{seen} The model is not learning: check the learning rate ({rate:g}; {task} usually "
                "trains at {default:g}), that the model reads the data's language (many unknown tokens in "
                "the data check say it does not), and that the labels match the texts.",
                seen=seen,
                rate=rate,
                task=self.config.task,
                default=default,
            ),
            remedies,
        )


def _remedy(label: Msg, changes: dict[str, Any]) -> dict[str, Any]:
    return {"label": label, "changes": changes}
