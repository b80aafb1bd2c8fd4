"""Preference runs before and after: which answer of each held-out pair the model prefers, in figures.

A model prefers the answer it finds likelier: the one with the higher mean log-probability per token
(per token, so that a longer answer is not held against itself). On the held-out pairs the report gives
the share where the chosen answer is preferred (the preference accuracy), the mean margin (chosen minus
rejected, in nats per token), and pairs to read: three the tuned model now gets right that the base
model got wrong, three it still gets wrong. TRL's own reward accuracy and margin (DPO's are measured
against the reference model, so the base model's would be 0 by definition) come with the tuned model's.

The same measure for the base model before the first step and the tuned one after, with the model the
trainer holds (no second copy in memory).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

SCORED_PAIRS = 200
"""The most held-out pairs measured (two forward passes each, no generation)."""
SCORING_S = 60.0
"""The time measuring may take; the pairs measured by then make the figures."""
EXAMPLES = 3
TEXT = 300
"""Characters of a prompt or answer kept with an example."""


@dataclass
class PreferenceReport:
    """Which answer of the held-out pairs a model prefers.

    Attributes:
        rows: Pairs measured.
        accuracy: Share of them where the chosen answer has the higher mean log-probability per token.
        margin: Mean of chosen minus rejected, in nats per token.
        margins: Each measured pair's margin, in order (the before and after are compared pair by pair).
        reward_accuracy / reward_margin: TRL's figures at the last evaluation (tuned model only).
        improved: Pairs the tuned model now gets right and the base model got wrong, the largest change
            first: ``prompt``, ``chosen``, ``rejected``, ``before``, ``after`` (margins).
        still_wrong: Pairs the tuned model still gets wrong, the furthest first.
    """

    task: str
    rows: int
    accuracy: float | None = None
    margin: float | None = None
    margins: list[float] = field(default_factory=list)
    method: str = ""
    reward_accuracy: float | None = None
    reward_margin: float | None = None
    improved: list[dict[str, Any]] = field(default_factory=list)
    still_wrong: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PreferenceReport:
        return cls(**data)


def answer_logprobs(
    model: Any,
    tokenizer: Any,
    prompt: list[dict[str, str]],
    answers: Sequence[str],
    device: Any,
    max_length: int | None = None,
) -> list[float]:
    """The mean log-probability per token of each answer after ``prompt`` (chat messages), as TRL
    tokenizes them: the prompt with the assistant's turn begun, the answer with the end of its turn,
    cut at ``max_length`` tokens as training cut it (the start kept)."""
    import torch

    asked = tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)
    prompt_ids = tokenizer(asked, add_special_tokens=False)["input_ids"]
    sequences, starts = [], []
    for answer in answers:
        whole = tokenizer.apply_chat_template(
            [*prompt, {"role": "assistant", "content": answer}], tokenize=False
        )
        ids = tokenizer(whole, add_special_tokens=False)["input_ids"]
        start = 0
        while start < min(len(ids), len(prompt_ids)) and ids[start] == prompt_ids[start]:
            start += 1
        sequences.append(ids[:max_length] if max_length else ids)
        starts.append(max(1, start))
    means = []
    with torch.no_grad():
        for ids, start in zip(sequences, starts, strict=True):
            inputs = torch.tensor([ids], device=device)
            logits = model(input_ids=inputs).logits[0, :-1].float()
            picked = torch.log_softmax(logits, dim=-1).gather(1, inputs[0, 1:, None])[:, 0]
            answer = picked[start - 1 :]
            means.append(float(answer.mean()) if answer.numel() else 0.0)
    return means


def measure(
    model: Any,
    tokenizer: Any,
    pairs: Sequence[Any],
    device: Any,
    max_length: int | None = None,
    budget_s: float = SCORING_S,
    count: int = SCORED_PAIRS,
) -> PreferenceReport:
    """The report of ``model`` on the first ``count`` of ``pairs`` (those measured within ``budget_s``),
    each cut at ``max_length`` tokens."""
    from desktop.core.data.tasks.causal_lm import ensure_chat_template

    ensure_chat_template(tokenizer)
    model.eval()
    margins: list[float] = []
    started = time.perf_counter()
    for pair in pairs[:count]:
        answers = [pair.chosen, pair.rejected]
        good, bad = answer_logprobs(model, tokenizer, pair.prompt, answers, device, max_length)
        margins.append(good - bad)
        if time.perf_counter() - started > budget_s:
            break
    if not margins:
        return PreferenceReport("preference", 0)
    return PreferenceReport(
        "preference",
        len(margins),
        accuracy=sum(m > 0 for m in margins) / len(margins),
        margin=sum(margins) / len(margins),
        margins=margins,
    )


def before_and_after(
    tuned: PreferenceReport, base: PreferenceReport | None, pairs: Sequence[Any]
) -> PreferenceReport:
    """``tuned`` with the pairs to read: those it now gets right that ``base`` got wrong, and those it
    still gets wrong (without a base report, the ones it gets wrong)."""
    before = base.margins if base is not None else []

    def example(i: int) -> dict[str, Any]:
        pair = pairs[i]
        return {
            "prompt": pair.prompt[-1]["content"][:TEXT],
            "chosen": pair.chosen[:TEXT],
            "rejected": pair.rejected[:TEXT],
            "before": before[i] if i < len(before) else None,
            "after": tuned.margins[i],
        }

    measured = range(min(len(tuned.margins), len(pairs)))
    gained = [i for i in measured if i < len(before) and before[i] <= 0 < tuned.margins[i]]
    gained.sort(key=lambda i: before[i] - tuned.margins[i])
    wrong = sorted((i for i in measured if tuned.margins[i] <= 0), key=lambda i: tuned.margins[i])
    tuned.improved = [example(i) for i in gained[:EXAMPLES]]
    tuned.still_wrong = [example(i) for i in wrong[:EXAMPLES]]
    return tuned
