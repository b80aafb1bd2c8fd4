"""Reasoning runs before and after: on the held-out prompts, the share whose greedy answer earns each
reward, for the base model (before the first step) and the tuned one (after the last).

"Earns" means the reward's full score (an answer equal to the reference, the format followed, a length
in the range). The mean score of each reward comes along, and a few prompts with both models' answers.
The same prompts are measured before and after, with the model the trainer holds (no second copy in
memory), within a time budget: the prompts answered by then make the figures.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

SCORED_PROMPTS = 64
"""The most held-out prompts answered (one greedy answer each)."""
SCORING_S = 60.0
EXAMPLES = 4
TEXT = 300
FULL = 0.999
"""A score at least this is the reward earned."""


@dataclass
class RewardReport:
    """How a model's greedy answers to the held-out prompts score.

    Attributes:
        rows: Prompts answered.
        earned: Each reward's share of them that earned its full score.
        mean: Each reward's mean score (rows without a score, e.g. no reference answer, left out).
        scores: Each row's scores, in order (the before and after are compared row by row).
        samples: The first rows: ``prompt``, ``reference``, ``output``, ``scores``.
    """

    task: str
    rows: int
    earned: dict[str, float] = field(default_factory=dict)
    mean: dict[str, float] = field(default_factory=dict)
    scores: list[dict[str, float | None]] = field(default_factory=list)
    samples: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RewardReport:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)


def measure(
    answer: Callable[[Any], str],
    prompts: Sequence[Any],
    references: Sequence[str],
    settings: Any,
    budget_s: float = SCORING_S,
    rows: int | None = None,
) -> RewardReport:
    """Answer the prompts (``answer``: a prompt's greedy answer) and score each answer with the run's
    rewards. ``rows``: answer exactly that many (the tuned model, the base model's prompts)."""
    from desktop.core.data.rewards import rewards_of

    chosen = rewards_of(settings)
    limit = min(len(prompts), SCORED_PROMPTS if rows is None else rows)
    started = time.monotonic()
    scores: list[dict[str, float | None]] = []
    samples: list[dict[str, Any]] = []
    for i in range(limit):
        if rows is None and i and time.monotonic() - started > budget_s:
            break
        output = answer(prompts[i])
        row = {s.name: s.function([prompts[i]], [output], answer=[references[i]])[0] for s in chosen}
        scores.append(row)
        if len(samples) < EXAMPLES:
            samples.append(
                {
                    "prompt": _text(prompts[i])[:TEXT],
                    "reference": references[i],
                    "output": output[:TEXT],
                    "scores": row,
                }
            )
    earned, mean = {}, {}
    for s in chosen:
        given = [row[s.name] for row in scores if row.get(s.name) is not None]
        if given:
            earned[s.name] = sum(1 for v in given if v >= FULL) / len(given)
            mean[s.name] = sum(given) / len(given)
    return RewardReport("grpo", len(scores), earned, mean, scores, samples)


def _text(prompt: Any) -> str:
    """A prompt's user turns as text (the system prompt is the run's)."""
    if isinstance(prompt, list):
        return "\n".join(str(m.get("content") or "") for m in prompt if m.get("role") == "user")
    return str(prompt)


def card_lines(report: RewardReport, base: RewardReport | None) -> list[str]:
    """The model card's Evaluation section for a reasoning run (Markdown, in English)."""
    header = (
        "| reward | base model | fine-tuned |\n|---|---|---|"
        if base
        else "| reward | fine-tuned |\n|---|---|"
    )
    lines = [
        f"On {report.rows} held-out prompts, the share whose greedy answer earns each reward:",
        "",
        header,
    ]
    for name, share in report.earned.items():
        before = base.earned.get(name) if base else None
        cells = ([f"{before:.3f}" if before is not None else ""] if base else []) + [f"{share:.3f}"]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    if report.samples:
        lines += ["", "| prompt | reference | answer |", "|---|---|---|"]
        for sample in report.samples:
            cells = [_cell(sample["prompt"]), _cell(sample["reference"]), _cell(sample["output"])]
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def _cell(text: str, width: int = 120) -> str:
    text = " ".join(str(text).split()).replace("|", "\\|")
    return text if len(text) <= width else text[: width - 1] + "…"
