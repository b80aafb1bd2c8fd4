"""OpenAI's presence and frequency penalties, which transformers' ``generate`` does not have.

As OpenAI defines them (and vLLM applies them), on the answer's own tokens so far: each token's logit
is lowered by ``presence_penalty`` once it has appeared, and by ``frequency_penalty`` for each time it
has; negative values favour repeats. transformers' ``repetition_penalty`` (a factor, prompt included)
is a different thing and is passed to ``generate`` as it is.
"""

from __future__ import annotations

from typing import Any


class OpenAIPenalties:
    """A ``LogitsProcessor`` (transformers calls it with the ids so far and the next token's scores)."""

    def __init__(self, prompt_length: int, presence: float, frequency: float) -> None:
        self.prompt_length, self.presence, self.frequency = prompt_length, presence, frequency

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        answer = input_ids[:, self.prompt_length :]
        if answer.shape[1] == 0:
            return scores
        counts = torch.zeros_like(scores)
        counts.scatter_add_(1, answer, torch.ones_like(answer, dtype=scores.dtype))
        return scores - self.frequency * counts - self.presence * (counts > 0).to(scores.dtype)
