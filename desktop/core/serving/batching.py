"""Requests that wait together are answered together: one ``generate`` over their prompts, so that four
clients share each forward pass instead of each waiting for the others' whole answers.

A batch is the job the model's thread takes next and the jobs waiting behind it that ask for the same
sampling (greedy, or the same temperature and the rest; unseeded; no log-probabilities) of a causal
LM; up to :data:`MOST` of them. The prompts are padded on the left (the attention mask leaves the
padding out, the positions count from each prompt's first token), so each answer is what ``generate``
gives that prompt alone. Each row keeps its own stop strings, token limit and client: a client that
hangs up ends its row, and a row that is done stops being read while the others go on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

MOST = 8
"""The most requests answered together (on a CPU, more rows cost more than they share)."""


def batchable(job: Any, first: Any, task: str) -> bool:
    """Whether ``job`` may be answered in one batch with ``first``: both generate with the same sampling
    (their token limits and stop strings may differ), unseeded, without log-probabilities."""
    if task != "causal-lm" or job.kind != "generate" or first.kind != "generate":
        return False
    a, b = job.sampling, first.sampling
    if a is None or b is None or a.seed is not None or b.seed is not None or a.logprobs is not None:
        return False
    same = (
        "temperature",
        "top_p",
        "top_k",
        "min_p",
        "repetition_penalty",
        "presence_penalty",
        "frequency_penalty",
    )
    return b.logprobs is None and all(getattr(a, name) == getattr(b, name) for name in same)


def generate_together(
    model: Any, tokenizer: Any, device: Any, jobs: Sequence[Any], eos: set[int]
) -> list[Any]:
    """The jobs' answers (:class:`~desktop.core.serving.engine.Outcome`), from one ``generate``."""
    import torch
    from transformers import StoppingCriteria, StoppingCriteriaList

    from desktop.core.serving.answers import Detokenizer, Outcome, StopStrings

    longest = max(len(job.ids) for job in jobs)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    ids = torch.full((len(jobs), longest), pad, dtype=torch.long)
    mask = torch.zeros((len(jobs), longest), dtype=torch.long)
    for row, job in enumerate(jobs):
        ids[row, longest - len(job.ids) :] = torch.tensor(job.ids)
        mask[row, longest - len(job.ids) :] = 1
    texts = [StopStrings(job.sampling.stop, _reporter(job)) for job in jobs]
    made = [Detokenizer(tokenizer) for _ in jobs]
    done, ended = [False] * len(jobs), [False] * len(jobs)

    class Stream(StoppingCriteria):
        """Reads each row's new token: its answer so far, its client, its stop strings and its limit."""

        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            for row, job in enumerate(jobs):
                if done[row]:
                    continue
                token = int(input_ids[row, -1])
                if token in eos:
                    done[row] = ended[row] = True
                    continue
                texts[row].feed(made[row].add(token))
                over = len(made[row].ids) >= job.sampling.max_tokens
                done[row] = job.cancelled.is_set() or texts[row].stopped or over
            return torch.tensor(done, dtype=torch.bool, device=input_ids.device)

    sampling = jobs[0].sampling
    with torch.no_grad():
        model.generate(
            input_ids=ids.to(device),
            attention_mask=mask.to(device),
            max_new_tokens=max(job.sampling.max_tokens for job in jobs),
            stopping_criteria=StoppingCriteriaList([Stream()]),
            pad_token_id=pad,
            **sampling.generate_args(longest),
        )
    outcomes = []
    for row, job in enumerate(jobs):
        texts[row].feed(made[row].rest())
        texts[row].finish()
        length = not ended[row] and not texts[row].stopped and len(made[row].ids) >= job.sampling.max_tokens
        reason = "cancelled" if job.cancelled.is_set() else "length" if length else "stop"
        tokens = len(made[row].ids) + int(ended[row])
        outcomes.append(Outcome(texts[row].text, len(job.ids), tokens, reason, None, list(made[row].ids)))
    return outcomes


def _reporter(job: Any) -> Any:
    return lambda piece: job.report(("text", piece))
