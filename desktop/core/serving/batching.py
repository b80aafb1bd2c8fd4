"""Requests that wait together are answered together: one ``generate`` over their prompts, so that four
clients share each forward pass instead of each waiting for the others' whole answers.

A batch is the job the model's thread takes next and the jobs waiting behind it that ask for the same
sampling (greedy, or the same temperature and the rest; unseeded; no log-probabilities, no JSON
schema) of a causal LM; up to :data:`MOST` of them. The prompts are padded on the left (the attention
mask leaves the padding out, the positions count from each prompt's first token), so each answer is
what ``generate`` gives that prompt alone. Each row keeps its own stop strings, token limit and client:
a client that hangs up ends its row, and a row that is done stops being read while the others go on.

A request that comes while a batch runs joins it at the next token (``joining``): the running
``generate`` ends there, and the next one takes each unfinished row's prompt and answer so far as its
prompt, with the newcomers beside them. Greedy, that continues each answer as ``generate`` alone would;
the cost is one pass over the rows' tokens again (the keys and values of the answer so far), against
the newcomer waiting for the whole batch. Rows whose penalties count the answer's own tokens
(presence, frequency) are never continued that way: their answer would become part of their prompt.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from desktop.core.serving.answers import Detokenizer, Outcome, StopStrings

MOST = 8
"""The most requests answered together (on a CPU, more rows cost more than they share)."""
JOIN_LEFT = 8
"""A newcomer joins a running batch while one of its rows has at least this many tokens still to make
(later, it waits for the batch's end: a pass over every row's tokens would cost more than it shares)."""
JOIN_TOKENS = 8192
"""A newcomer joins only while the batch's rows times their length is at most this: reading long
conversations again at each arrival would cost more than the newcomer's wait (and, on a GPU, the memory
of a pass over all of them)."""


def batchable(job: Any, first: Any, task: str) -> bool:
    """Whether ``job`` may be answered in one batch with ``first``: both generate with the same sampling
    (their token limits and stop strings may differ), unseeded, without log-probabilities."""
    if task != "causal-lm" or job.kind != "generate" or first.kind != "generate":
        return False
    a, b = job.sampling, first.sampling
    if a is None or b is None or a.seed is not None or b.seed is not None or a.logprobs is not None:
        return False
    if a.grammar is not None or b.grammar is not None:  # each would need a matcher of its own
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


def continuable(job: Any) -> bool:
    """Whether the answer of ``job`` may be continued from its prompt and its answer so far."""
    return not (job.sampling.presence_penalty or job.sampling.frequency_penalty)


@dataclass(eq=False)
class Row:
    """One job's answer in a batch: the text read so far, its stop strings, and whether it is done."""

    job: Any
    made: Detokenizer
    text: StopStrings
    done: bool = False
    ended: bool = False  # the model ended the answer (an end-of-sequence token)

    @classmethod
    def of(cls, job: Any, tokenizer: Any) -> Row:
        return cls(job, Detokenizer(tokenizer), StopStrings(job.sampling.stop, _reporter(job)))

    @property
    def prompt(self) -> list[int]:
        """What the model reads for this row: the request's prompt and the answer so far."""
        return list(self.job.ids) + self.made.ids

    @property
    def left(self) -> int:
        """Tokens still to make before the row's limit."""
        return self.job.sampling.max_tokens - len(self.made.ids)

    def read(self, token: int, eos: set[int]) -> None:
        """The row's next token."""
        if token in eos:
            self.done = self.ended = True
            return
        self.text.feed(self.made.add(token))
        self.done = self.job.cancelled.is_set() or self.text.stopped or self.left <= 0

    def outcome(self) -> Outcome:
        """The row's answer (it is done)."""
        self.text.feed(self.made.rest())
        self.text.finish()
        length = not self.ended and not self.text.stopped and self.left <= 0
        reason = "cancelled" if self.job.cancelled.is_set() else "length" if length else "stop"
        tokens = len(self.made.ids) + int(self.ended)
        return Outcome(self.text.text, len(self.job.ids), tokens, reason, None, list(self.made.ids))


def generate_together(
    model: Any,
    tokenizer: Any,
    device: Any,
    rows: Sequence[Row],
    eos: set[int],
    finished: Callable[[Row], None],
    joining: Callable[[], bool] = lambda: False,
) -> bool:
    """Go on with the rows' answers in one ``generate`` until each is done, or until ``joining`` says a
    newcomer waits (then ``True``: the rows not done go on in the next batch, with it). Each row is
    given to ``finished`` as soon as it is done: its client need not wait for the others' answers."""
    import torch
    from transformers import StoppingCriteria, StoppingCriteriaList

    prompts = [row.prompt for row in rows]
    longest = max(len(prompt) for prompt in prompts)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    ids = torch.full((len(rows), longest), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), longest), dtype=torch.long)
    for index, prompt in enumerate(prompts):
        ids[index, longest - len(prompt) :] = torch.tensor(prompt)
        mask[index, longest - len(prompt) :] = 1
    may_join = all(continuable(row.job) for row in rows)
    paused = [False]

    class Stream(StoppingCriteria):
        """Reads each row's new token: its answer so far, its client, its stop strings and its limit;
        ends every row when a newcomer joins."""

        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            for index, row in enumerate(rows):
                if not row.done:
                    row.read(int(input_ids[index, -1]), eos)
                    if row.done:
                        finished(row)
            alive = [row for row in rows if not row.done]
            room = len(rows) * input_ids.shape[1] <= JOIN_TOKENS
            if alive and may_join and room and max(row.left for row in alive) >= JOIN_LEFT and joining():
                paused[0] = True
            done = [row.done or paused[0] for row in rows]
            return torch.tensor(done, dtype=torch.bool, device=input_ids.device)

    sampling = rows[0].job.sampling
    with torch.no_grad():
        model.generate(
            input_ids=ids.to(device),
            attention_mask=mask.to(device),
            max_new_tokens=max(row.left for row in rows),
            stopping_criteria=StoppingCriteriaList([Stream()]),
            pad_token_id=pad,
            **sampling.generate_args(longest),
        )
    if not paused[0]:  # generate ended every row (a limit of its own): none is left unanswered
        for row in rows:
            if not row.done:
                row.done = True
                finished(row)
    return paused[0]


def _reporter(job: Any) -> Any:
    return lambda piece: job.report(("text", piece))
