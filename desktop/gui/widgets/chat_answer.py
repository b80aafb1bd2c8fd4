"""The try-it panel's work off the GUI thread: load the model once, then answer a request with it
and, on request, with the base model beside it (plain Python: no widgets)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from desktop.core.results.tryit import FolderInfo, Playground, base_playground
from desktop.gui.widgets.chat_conversation import Message

Prompt = str | list[Message] | Path | bytes | tuple  # a picture, or a picture and its question


@dataclass(frozen=True)
class Request:
    """What one press of Send asks: ``prompt`` for the fine-tuned model, ``base_prompt`` for the base
    model beside it (``None``: the base model is not asked)."""

    prompt: Prompt
    base_prompt: Prompt | None = None
    max_new_tokens: int = 128
    temperature: float = 0.7
    top_p: float = 1.0
    chat: bool = False


@dataclass(frozen=True)
class Outcome:
    """The models (kept loaded for the next request) and their answers: a text, or ranked labels;
    ``base_answer`` is ``None`` when the base model was not asked (or the user stopped first)."""

    playground: Playground
    base: Playground | None
    answer: object
    base_answer: object = None
    stopped: bool = False
    base_stopped: bool = False


def answer(
    playground: Playground | None,
    base: Playground | None,
    info: FolderInfo,
    request: Request,
    stop: threading.Event,
    report: Callable[[object], None],
) -> Outcome:
    """Load the model if needed, then classify or generate (on a worker thread: no widgets here); the
    base model answers after the fine-tuned one when the request asks it to."""
    if playground is None or playground.info != info:
        if playground is not None:
            playground.release()
        playground = Playground(info)
        playground.load()
        report(("loaded", None))
    compare = request.base_prompt is not None
    if base is not None and (not compare or base.made_for != info):  # not wanted, or another run's
        base.release()
        base = None
    if info.task == "vision-chat":  # the prompt is a picture and its question; the answer streamed
        picture, question = request.prompt  # type: ignore[misc]
        described = playground.describe(
            picture, question, request.max_new_tokens, lambda piece: report(("text", piece)), stop
        )
        return Outcome(playground, base, described, stopped=stop.is_set())
    if info.task == "image-classification":  # the prompt is the picture (a path or its bytes)
        answer: object = playground.classify_picture(request.prompt)
    elif info.task == "classification":
        answer = playground.classify(str(request.prompt))
    else:
        answer = playground.generate(
            request.prompt, request.max_new_tokens, request.temperature, request.chat,
            lambda piece: report(("text", piece)), stop, request.top_p,
        )  # fmt: skip
    stopped = stop.is_set()
    if not compare or stopped:
        return Outcome(playground, base, answer, stopped=stopped)
    if base is None:
        base = base_playground(info)
        report(("loading_base", None))
        base.load()
    if info.task == "image-classification":
        return Outcome(playground, base, answer, base.classify_picture(request.base_prompt))
    if info.task == "classification":
        return Outcome(playground, base, answer, base.classify(str(request.base_prompt)))
    base_answer = base.generate(
        request.base_prompt, request.max_new_tokens, request.temperature, request.chat,
        lambda piece: report(("base_text", piece)), stop, request.top_p,
    )  # fmt: skip
    return Outcome(playground, base, answer, base_answer, base_stopped=stop.is_set())
