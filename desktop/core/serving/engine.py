"""The served model: one loaded model, one thread that runs it, and a queue of requests in front.

Requests come from the server's event loop; each is a :class:`Job` that reports its text piece by
piece through a callback, from the model's thread. One ``generate`` runs at a time; the jobs that
can share it (the same sampling of a causal LM, ``batching.py``) are its rows, and one that comes while
it runs joins it at the next token; any other waits in order (at most ``Limits.queue`` jobs wait: the
next is refused, see :class:`Busy`). A job whose client went away is cancelled: skipped if it waits,
stopped after the current token if it runs.
"""

from __future__ import annotations

import collections
import functools
import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from desktop.core.results.tryit import FolderInfo, Playground
from desktop.core.serving.answers import Detokenizer, Outcome, StopStrings

log = logging.getLogger(__name__)

CLOSE_WAIT_S = 30
GATHER_S = 0.05
MOST_TOGETHER = 8  # batching.MOST, without importing it before a batch is made
"""After answering several requests together, how long to wait for as many before the next answer."""


@dataclass(frozen=True)
class Limits:
    """What one request may ask for.

    Attributes:
        max_tokens: The most new tokens one answer may have (also the default when a request names none).
        body_bytes: The largest request body.
        queue: Requests that may wait while one runs; the next gets "busy" (HTTP 503).
        classify_texts: Texts in one ``/v1/classify`` request.
    """

    max_tokens: int = 4096
    body_bytes: int = 1 << 20
    queue: int = 32
    classify_texts: int = 256
    remote_pictures: bool = False
    """Vision-language models: pictures may be fetched from web addresses a request names."""
    local_pictures: bool = False
    """Vision-language models: pictures may be read from this computer's files a request names (only
    for a server that listens on this computer alone)."""


@dataclass(frozen=True)
class Sampling:
    """How one answer is generated: ``temperature`` 0 is greedy (the same answer every time)."""

    max_tokens: int
    temperature: float = 1.0
    top_p: float = 1.0
    stop: tuple[str, ...] = ()
    seed: int | None = None
    top_k: int | None = None  # None: the model's generation config's (transformers' default 50)
    min_p: float | None = None
    repetition_penalty: float = 1.0
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    logprobs: int | None = None  # None: none; N: each token's log-probability and the N likeliest
    grammar: str | None = None  # llguidance's grammar the answer is held to (structured.py); None: text

    def generate_args(self, prompt_length: int) -> dict[str, Any]:
        """``generate``'s arguments for these settings (the answer's own tokens start at
        ``prompt_length``)."""
        from desktop.core.data.tasks.generation import sampling_args

        args = sampling_args(self.temperature, self.top_p)
        if args["do_sample"]:
            args.update({k: v for k, v in (("top_k", self.top_k), ("min_p", self.min_p)) if v is not None})
        if self.repetition_penalty != 1.0:
            args["repetition_penalty"] = self.repetition_penalty
        if self.logprobs is not None:  # the model's own distribution, before any sampling setting
            args.update(output_logits=True, return_dict_in_generate=True)
        if self.presence_penalty or self.frequency_penalty:
            from transformers import LogitsProcessorList

            from desktop.core.serving.penalties import OpenAIPenalties

            penalties = OpenAIPenalties(prompt_length, self.presence_penalty, self.frequency_penalty)
            args["logits_processor"] = LogitsProcessorList([penalties])
        return args


class Busy(Exception):
    """The queue is full: the request is refused (HTTP 503), nothing was started."""


class Stopping(Busy):
    """The server is stopping: a waiting request is refused, a running one ends where it is (HTTP 503)."""


@dataclass(eq=False)
class Job:
    """One request to the model. ``report`` gets ``("text", piece)`` for each piece of the answer, then
    ``("done", Outcome | list)`` or ``("failed", exception)``, from the model's thread."""

    kind: str  # "generate", "classify", "embed" or "converse" (a conversation holding pictures)
    report: Callable[[tuple[str, Any]], None]
    ids: list[int] = field(default_factory=list)
    sampling: Sampling | None = None
    texts: Sequence[str] = ()
    payload: Any = None  # "converse": the conversation and its pictures
    cancelled: threading.Event = field(default_factory=threading.Event)
    number: int = 0
    ended: bool = False  # "done" or "failed" was reported (exactly one of them, once)

    def cancel(self) -> None:
        """The client went away: skip this job, or end its generation after the current token."""
        self.cancelled.set()


class Engine:
    """A loaded model that answers jobs one at a time on its own thread.

    Args:
        info: The model folder (see :func:`desktop.core.results.tryit.inspect_folder`).
        limits: What one request may ask for.
    """

    def __init__(self, info: FolderInfo, limits: Limits | None = None) -> None:
        self.info = info
        self.limits = limits or Limits()
        self.playground = Playground(info)
        self.context = 0
        self._jobs: queue.Queue[Job | None] = queue.Queue()
        self._waiting = 0
        self._queued: collections.deque[Job] = collections.deque()  # the waiting jobs, in order
        self._held: Job | None = None  # taken off the queue, to be answered next
        self._closing = False  # the end was taken off the queue
        self._lock = threading.Lock()
        self._numbers = itertools.count(1)
        self._thread: threading.Thread | None = None
        self._running: list[Job] = []  # the jobs answered now (several when generated together)
        self._together = 1  # how many clients were at work at the last answer
        self.largest = 1
        """The most requests answered together so far."""
        self.grammars: Any = None
        """The model's tables for answers held to a JSON schema (``structured.Grammars``), once loaded."""
        self._stopping = threading.Event()
        self.answered: collections.deque[tuple[int, Outcome]] = collections.deque(maxlen=100)
        """The last answers: job number and outcome (a cancelled job's shows how far it got)."""

    # ------------------------------------------------------------------ life

    def load(self) -> None:
        """Read the model (to the GPU when PyTorch can use one) and start the thread that runs it."""
        from desktop.core.serving.structured import Grammars

        self.playground.load()
        self.context = self.playground.context_size()
        if self.info.task in ("causal-lm", "seq2seq"):
            model, tokenizer = self.playground.model, self.tokenizer
            head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
            size = int(head.weight.shape[0]) if head is not None else len(tokenizer)
            self.grammars = Grammars(tokenizer, size, _eos_ids(model, tokenizer))
        self._thread = threading.Thread(target=self._work, name="served-model", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Take no more jobs: the running one ends after its current token and every waiting one is
        refused, each told that the server is stopping."""
        with self._lock:
            self._stopping.set()
            running = list(self._running)
        for job in running:
            job.cancel()
        while True:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                break
            if job is not None:
                with self._lock:
                    self._waiting -= 1
                    self._queued.remove(job)
                job.cancel()
                job.report(("failed", Stopping()))

    def close(self) -> None:
        """Stop every job, end the thread and free the model's memory (and VRAM)."""
        self.stop()
        self._jobs.put(None)
        if self._thread is not None:
            self._thread.join(timeout=CLOSE_WAIT_S)
            if self._thread.is_alive():  # a generation that does not stop: its memory goes with the process
                log.warning("the model's thread did not end within %d s", CLOSE_WAIT_S)
            self._thread = None
        self.playground.release()

    # ------------------------------------------------------------------ requests

    @property
    def tokenizer(self) -> Any:
        return self.playground.tokenizer

    def token_text(self, token: int) -> str:
        """One token as text (a piece of a character reads as the replacement character)."""
        return str(self.tokenizer.decode([token]))

    def encode(
        self, prompt: str | Sequence[dict[str, Any]], chat: bool, tools: Sequence[dict[str, Any]] = ()
    ) -> list[int]:
        """The token ids of a prompt or a conversation, as the model was trained to read them (with
        ``tools`` rendered by a chat template that takes them)."""
        from desktop.core.data.tasks.generation import encode_prompt

        return encode_prompt(self.tokenizer, self.info.task, prompt, chat, tools or None)

    def takes_tools(self) -> bool:
        """Whether the model's chat template renders tool definitions (it reads a ``tools`` variable)."""
        template = getattr(self.tokenizer, "chat_template", None) or ""
        return isinstance(template, str) and "tools" in template

    def submit(self, job: Job) -> Job:
        """Queue ``job``; raises :class:`Busy` when ``Limits.queue`` jobs already wait."""
        with self._lock:
            if self._stopping.is_set():
                raise Stopping()
            if self._waiting >= self.limits.queue:
                raise Busy(self._waiting)
            self._waiting += 1
            job.number = next(self._numbers)
            self._queued.append(job)
            self._jobs.put(job)
        return job

    @property
    def waiting(self) -> int:
        """Jobs queued and not yet started."""
        return self._waiting

    @property
    def answering(self) -> bool:
        """Whether a job runs now."""
        return bool(self._running)

    @property
    def answering_together(self) -> bool:
        """Whether several jobs are answered together now (``batching.py``)."""
        return len(self._running) > 1

    def _take(self, timeout: float | None = None, wait: bool = True) -> Job | None:
        """The next job off the queue (``None``: the end); :class:`queue.Empty` when there is none within
        ``timeout`` seconds (or at once, without ``wait``)."""
        job = self._jobs.get(block=wait, timeout=timeout)
        if job is not None:
            with self._lock:
                self._waiting -= 1
                self._queued.remove(job)
        return job

    def _gather(self, first: Job, have: int = 1, wait: bool = True) -> list[Job]:
        """The jobs waiting behind ``first`` that can be answered with it and the ``have - 1`` others
        already in the batch (``batching.py``). The first that cannot is held, to be taken next, and
        the end is noted. With ``wait``, after a batch of several, it waits up to :data:`GATHER_S` for
        as many: clients answered together ask again together."""
        from desktop.core.serving.batching import MOST, batchable

        joined: list[Job] = []
        deadline = time.monotonic() + (GATHER_S if wait and self._together > 1 else 0.0)
        while have + len(joined) < MOST and self._held is None and not self._closing:
            left = deadline - time.monotonic() if have + len(joined) < self._together else 0.0
            try:
                job = self._take(timeout=left) if left > 0 else self._take(wait=False)
            except queue.Empty:
                break
            if job is None:
                self._closing = True
            elif not batchable(job, first, self.info.task):
                self._held = job
            elif job.cancelled.is_set():  # its client hung up while it waited: nothing to answer
                self._report([job], [Outcome("", len(job.ids), 0, "cancelled")])
            else:
                joined.append(job)
        return joined

    def _joining(self, first: Job, rows: int) -> bool:
        """Whether the next job in the queue would join a batch of ``rows`` that ``first`` leads."""
        from desktop.core.serving.batching import MOST, batchable

        with self._lock:
            if rows >= MOST or self._held is not None or self._stopping.is_set():
                return False
            head = next((job for job in self._queued if not job.cancelled.is_set()), None)
        return head is not None and batchable(head, first, self.info.task)

    def _work(self) -> None:
        while True:
            job, self._held = self._held, None
            if job is None and not self._closing:
                job = self._take()
            if job is None:
                return
            with self._lock:
                self._running = [job]
                stopping = self._stopping.is_set()
            try:
                if stopping:  # taken off the queue as stop() emptied it
                    job.cancel()
                    job.report(("failed", Stopping()))
                elif job.cancelled.is_set():  # its client went away before it began: nothing to answer
                    if job.kind == "generate":
                        self._report([job], [Outcome("", len(job.ids), 0, "cancelled")])
                elif self._rows(job):
                    self._answer_rows(job)
                else:
                    self._report([job], [self._answer(job)])
            except (
                Exception
            ) as exc:  # outside an answer (gathering, reading a row): its jobs fail, not the thread
                with self._lock:
                    running = list(self._running)
                self._failed([each for each in running if not each.ended], exc)
            finally:
                with self._lock:
                    self._running = []

    def _rows(self, job: Job) -> bool:
        """Whether ``job`` is answered as a batch's row (alone or with others, ``batching.py``)."""
        from desktop.core.serving.batching import batchable

        return batchable(job, job, self.info.task)

    def _answer(self, job: Job) -> Any:
        """The result of one job that is not a batch's row."""
        try:
            if job.kind == "classify":
                return self.playground.classify_many(job.texts, self.context)
            if job.kind == "embed":
                return self.playground.embed_many(job.texts, self.context)
            if job.kind == "converse":
                return self._converse(job)
            return self._generate(job)
        except Exception as exc:  # the job fails, the server keeps serving
            self._failed([job], exc)
            return None

    def _converse(self, job: Job) -> Outcome:
        """A vision-language model's answer to a conversation holding pictures, each piece reported as it
        is written; a cancelled job's answer ends after the current token."""
        from desktop.core.data.tasks.vision_chat import answer_conversation

        messages, pictures = job.payload
        sampling = job.sampling or Sampling(self.limits.max_tokens)
        playground = self.playground
        text, prompt, written, finish = answer_conversation(
            playground.model,
            playground.tokenizer,
            playground.device,
            messages,
            pictures,
            sampling.max_tokens,
            sampling.temperature,
            sampling.top_p,
            on_text=lambda piece: job.report(("text", piece)),
            stop=job.cancelled,
        )
        return Outcome(text, prompt, written, "cancelled" if job.cancelled.is_set() else finish)

    def _answer_rows(self, first: Job) -> None:
        """``first`` and the jobs that join it, until every answer is done; a job that comes while they
        are answered joins them at the next token."""
        from desktop.core.serving.batching import Row, generate_together

        model, tokenizer = self.playground.model, self.tokenizer
        eos = _eos_ids(model, tokenizer)
        rows = [Row.of(job, tokenizer) for job in [first, *self._gather(first)]]
        largest = len(rows)
        while rows:
            with self._lock:
                self._running = [row.job for row in rows]
                if self._stopping.is_set():  # stop() came while these were gathered: each ends at once
                    for row in rows:
                        row.job.cancel()
            self.largest = max(self.largest, len(rows))
            try:
                paused = generate_together(
                    model,
                    tokenizer,
                    self.playground.device,
                    rows,
                    eos,
                    lambda row: self._report([row.job], [row.outcome()]),
                    functools.partial(self._joining, first, len(rows)),
                )
            except Exception as exc:  # these jobs fail, the server keeps serving
                self._failed([row.job for row in rows if not row.done], exc)
                return
            rows = [row for row in rows if not row.done]
            if paused and rows:
                rows += [Row.of(job, tokenizer) for job in self._gather(first, len(rows), wait=False)]
                largest = max(largest, len(rows))
        # The clients at work now: these, and those that came while these were answered (they would have
        # joined them): the next answer waits a moment for as many.
        self._together = min(largest + self._waiting, MOST_TOGETHER)

    def _report(self, jobs: list[Job], results: list[Any]) -> None:
        for job, result in zip(jobs, results, strict=True):
            if result is None or job.ended:  # failed, and told so
                continue
            job.ended = True
            if job.kind == "generate":
                self.answered.append((job.number, result))
            if self._stopping.is_set() and job.cancelled.is_set():  # cut short: not a whole answer
                job.report(("failed", Stopping()))
            else:
                job.report(("done", result))

    def _failed(self, jobs: list[Job], exc: Exception) -> None:
        log.warning("request %s failed", ", ".join(str(job.number) for job in jobs), exc_info=True)
        if type(exc).__name__ == "OutOfMemoryError":
            from desktop.core.system.heap import release_memory

            release_memory()  # the failed answer's activations, back for the next request
        for job in jobs:
            if not job.ended:
                job.ended = True
                job.report(("failed", exc))

    def _generate(self, job: Job) -> Outcome:
        import torch
        from transformers import StoppingCriteria, StoppingCriteriaList

        assert job.sampling is not None
        model, tokenizer = self.playground.model, self.tokenizer
        sampling = job.sampling
        text = StopStrings(sampling.stop, lambda piece: job.report(("text", piece)))
        prompt_length = len(job.ids)
        eos = _eos_ids(model, tokenizer)
        seq2seq = self.info.task == "seq2seq"
        made = Detokenizer(tokenizer)

        class Stream(StoppingCriteria):
            """Reads each new token as it is chosen: the answer so far, cancel and stop strings."""

            def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
                token = int(input_ids[0, -1])  # a decoder's start token is never read here
                if token not in eos:
                    text.feed(made.add(token))
                done = job.cancelled.is_set() or text.stopped
                return torch.full((input_ids.shape[0],), done, dtype=torch.bool, device=input_ids.device)

        if sampling.seed is not None:
            torch.manual_seed(sampling.seed)
        ids = torch.tensor([job.ids], device=self.playground.device)
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        start = 1 if seq2seq else prompt_length  # a decoder's own tokens start after its start token
        args = sampling.generate_args(start)
        if sampling.grammar is not None:
            from transformers import LogitsProcessorList

            held = self.grammars.processor(sampling.grammar, start)
            args["logits_processor"] = LogitsProcessorList([*args.get("logits_processor", []), held])
        try:
            with torch.no_grad():
                out = model.generate(
                    input_ids=ids,
                    attention_mask=torch.ones_like(ids),
                    max_new_tokens=sampling.max_tokens,
                    stopping_criteria=StoppingCriteriaList([Stream()]),
                    pad_token_id=pad,
                    **args,
                )
        finally:
            if sampling.seed is not None:
                torch.seed()  # the requests after a seeded one are not predictable from it
        logits = getattr(out, "logits", None)
        sequence = out.sequences if logits is not None else out
        new = sequence[0] if seq2seq else sequence[0, prompt_length:]
        ended = bool(len(new)) and int(new[-1]) in eos
        text.feed(made.rest())
        text.finish()
        length = not ended and not text.stopped and len(made.ids) >= sampling.max_tokens
        reason = "cancelled" if job.cancelled.is_set() else "length" if length else "stop"
        chosen = made.ids  # the answer's tokens, as read (a decoder's start token and the end are not)
        scored = _logprobs(logits, chosen, sampling.logprobs) if logits is not None else None
        return Outcome(text.text, prompt_length, len(made.ids) + int(ended), reason, scored, list(made.ids))


def _logprobs(logits: Any, chosen: list[int], top: int | None) -> list[dict[str, Any]]:
    """Each chosen token's log-probability under the model, and the ``top`` likeliest at its place."""
    import torch

    found = []
    for step, token in enumerate(chosen[: len(logits)]):
        row = torch.log_softmax(logits[step][0].float(), dim=-1)
        best = torch.topk(row, top).indices.tolist() if top else []
        found.append({"id": token, "logprob": float(row[token]), "top": [(i, float(row[i])) for i in best]})
    return found


def _eos_ids(model: Any, tokenizer: Any) -> set[int]:
    """The tokens that end an answer: the generation config's (a chat template's end of turn among
    them) and the tokenizer's."""
    found = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    ids = set(found if isinstance(found, list) else [found] if found is not None else [])
    if tokenizer.eos_token_id is not None:
        ids.add(tokenizer.eos_token_id)
    return ids
