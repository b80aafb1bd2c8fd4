"""Answers as server-sent events, as OpenAI's streaming sends them: token by token as they are made,
or whole answers replayed as the chunks of a stream (tool calls, several answers, log-probabilities).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from desktop.core.serving.engine import Job, Outcome
from desktop.core.serving.protocol import error_body

JOIN_S = 0.02
"""While answers are made together, how long a streamed piece waits for the next ones to go with it."""


async def stream(
    job: Job,
    events: asyncio.Queue[tuple[str, Any]],
    reply: dict[str, Any],
    chat: bool,
    usage: bool,
    failure: Callable[[BaseException], Any],
    together: Callable[[], bool] = lambda: False,
) -> AsyncIterator[str]:
    """Server-sent events: a chunk per piece of text, the finish reason, ``[DONE]``. A client that hangs
    up ends this generator (Starlette cancels it), and with it the job. ``failure``: the refusal (its
    ``message`` and ``code``) of the exception a failed job reports; ``together``: whether several
    answers are made together now."""

    def chunk(text: str | None, finish: str | None = None, first: bool = False) -> str:
        if chat:
            delta: dict[str, Any] = {"role": "assistant", "content": ""} if first else {}
            if text is not None:
                delta["content"] = text
            choice: dict[str, Any] = {"index": 0, "delta": delta, "finish_reason": finish}
        else:
            choice = {"index": 0, "text": text or "", "logprobs": None, "finish_reason": finish}
        payload = {**reply, "object": f"{reply['object']}.chunk" if chat else reply["object"]}
        payload["choices"] = [choice]
        if usage:
            payload["usage"] = None
        return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"

    try:
        if chat:
            yield chunk(None, first=True)
        held: list[tuple[str, Any]] = []  # an event read while joining pieces, for the next turn
        spoken = False
        while True:
            kind, value = held.pop() if held else await events.get()
            if kind == "text":
                # While several answers are made together, the pieces that come within JOIN_S go as
                # one: a chunk per token per client kept this loop (and the clients) behind, and took
                # the model's thread's turns at Python. One answer alone goes out a piece at a time.
                if together():
                    if events.empty() and spoken:  # the first words go at once
                        await asyncio.sleep(JOIN_S)
                    while not held and not events.empty():
                        following = events.get_nowait()
                        if following[0] == "text":
                            value += following[1]
                        else:
                            held.append(following)
                spoken = True
                yield chunk(value)
            elif kind == "done":
                yield chunk(None if chat else "", reason(value))
                if usage:
                    last = {**reply, "object": f"{reply['object']}.chunk" if chat else reply["object"]}
                    yield f"data: {json.dumps({**last, 'choices': [], 'usage': usage_of(value)})}\n\n"
                break
            else:
                refused = failure(value)
                body = error_body(refused.message, "server_error", code=refused.code)
                yield f"data: {json.dumps(body)}\n\n"
                break
        yield "data: [DONE]\n\n"
    finally:
        job.cancel()


async def replay(
    reply: dict[str, Any], choices: list[dict[str, Any]], chat: bool, usage: dict[str, int] | None
) -> AsyncIterator[str]:
    """Whole answers as the chunks of a stream, one answer after another: (chat) the role, the text with
    its log-probabilities, the calls, the finish reason; (completions) the text, the finish reason."""
    chunk = {**reply, "object": f"{reply['object']}.chunk" if chat else reply["object"]}

    def data(index: int, reason: str | None = None, **part: Any) -> str:
        choice = {"index": index, **part, "finish_reason": reason}
        extra = {"usage": None} if usage is not None else {}
        return f"data: {json.dumps({**chunk, 'choices': [choice], **extra}, ensure_ascii=False)}\n\n"

    for choice in choices:
        index, scored = choice["index"], choice.get("logprobs")
        if not chat:
            yield data(index, text=choice["text"], logprobs=scored)
            yield data(index, choice["finish_reason"], text="", logprobs=None)
            continue
        message = choice["message"]
        yield data(index, delta={"role": "assistant", "content": ""})
        if message.get("content"):
            yield data(
                index, delta={"content": message["content"]}, **({"logprobs": scored} if scored else {})
            )
        calls = message.get("tool_calls") or []
        if calls:  # an answer that is only a call carries its log-probabilities here
            scored_here = {"logprobs": scored} if scored and not message.get("content") else {}
            yield data(
                index,
                delta={"tool_calls": [{"index": i, **call} for i, call in enumerate(calls)]},
                **scored_here,
            )
        yield data(index, choice["finish_reason"], delta={})
    if usage is not None:
        yield f"data: {json.dumps({**chunk, 'choices': [], 'usage': usage})}\n\n"
    yield "data: [DONE]\n\n"


def reason(outcome: Outcome) -> str:
    """OpenAI's finish reasons (an answer its client stopped waiting for reaches nobody)."""
    return "length" if outcome.finish_reason == "length" else "stop"


def usage_of(outcome: Outcome) -> dict[str, int]:
    total = outcome.prompt_tokens + outcome.completion_tokens
    return {
        "prompt_tokens": outcome.prompt_tokens,
        "completion_tokens": outcome.completion_tokens,
        "total_tokens": total,
    }
