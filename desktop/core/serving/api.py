"""The HTTP routes: OpenAI's ``/v1/models``, ``/v1/chat/completions`` and ``/v1/completions``, and our
``/v1/classify`` for a classifier, over one :class:`~desktop.core.serving.engine.Engine`.

Before a route reads anything, :class:`~desktop.core.serving.guard.Guard` checks the request's host,
origin and content type, the API key (when one is required) and the body's size. Every refusal is
OpenAI's error shape with one sentence that says what to change; the server goes on serving.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from starlette.exceptions import HTTPException

from desktop.core.serving.engine import Busy, Engine, Job, Outcome, Sampling, Stopping
from desktop.core.serving.guard import Access, Guard, Refused, TooLarge
from desktop.core.serving.protocol import (
    ChatRequest,
    ClassifyRequest,
    CompletionRequest,
    EmbeddingRequest,
    Sampled,
    validation_message,
)
from desktop.core.serving.streaming import reason, replay, stream, usage_of

DISCONNECT_POLL_S = 0.25
IGNORED_HEADER = "X-Ignored-Fields"


def build_app(
    engine: Engine,
    name: str,
    key: str = "",
    on_request: Callable[[dict[str, Any]], None] | None = None,
    access: Access | None = None,
) -> FastAPI:
    """The app serving ``engine``'s model as ``name``; every request needs ``key`` when one is given.

    Args:
        on_request: Told of each request when it is answered: method, path, status, seconds.
        access: The names requests may be addressed to and the web pages that may send them
            (:class:`~desktop.core.serving.guard.Access`; default: this computer's names, no page).
    """
    access = access or Access()
    app = FastAPI(title="Finetune Studio", docs_url=None, redoc_url=None, openapi_url=None)
    task = engine.info.task
    created = int(time.time())

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        message, param = validation_message(list(exc.errors()))
        return Refused(400, message, "invalid_request", param).response()

    @app.exception_handler(Refused)
    async def refused(request: Request, exc: Refused) -> JSONResponse:
        return exc.response()

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        if isinstance(exc, TooLarge):
            return exc.refusal.response()
        if exc.status_code == 404:
            message = f"There is no {request.url.path} here. This server answers {', '.join(routes)}."
        elif exc.status_code == 405:
            message = f"{request.url.path} does not take {request.method} requests."
        else:
            message = str(exc.detail)
        return Refused(exc.status_code, message).response()

    @app.get("/health")
    async def health() -> dict[str, Any]:
        """Whether the server is up and its model loaded (what a front end or a load balancer asks)."""
        return {"status": "ok", "model": name}

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [_model_card(name, created)]}

    @app.get("/v1/models/{model_id}")
    async def model(model_id: str) -> dict[str, Any]:
        _check_model(model_id, name)
        return _model_card(name, created)

    @app.post("/v1/chat/completions")
    async def chat(body: ChatRequest, request: Request) -> Any:
        _check_model(body.model, name)
        if task == "vision-chat":
            return await _picture_answer(engine, request, body, name)
        if task != "causal-lm":
            raise Refused(400, _wrong_route(task, "/v1/chat/completions"), "wrong_route")
        if any(m.has_pictures() for m in body.messages):
            raise Refused(
                400,
                "This model reads text only: send the conversation without 'image_url' parts, or serve a "
                "vision-language model.",
                "pictures_not_supported",
                "messages",
            )
        messages = [m.for_template() for m in body.messages]
        if not engine.info.chat and not any(m["role"] == "user" for m in messages):
            raise Refused(400, "The conversation has no user message to answer.", param="messages")
        tools = (
            [t.model_dump(exclude_none=True) for t in body.tools or []] if body.tool_choice != "none" else []
        )
        if tools and not (engine.info.chat and engine.takes_tools()):
            raise Refused(
                400,
                "This model's chat template has no place for tools, so the model was never shown how to "
                "call one: leave out 'tools', or serve a model whose template takes them (Qwen 2.5, "
                "Llama 3.1, Mistral and others).",
                "tools_not_supported",
                "tools",
            )
        ids = _encode_conversation(engine, messages, tools)
        limit = body.max_completion_tokens or body.max_tokens
        names = {tool["function"]["name"] for tool in tools}
        return await _answer(engine, request, body, ids, limit, "chat.completion", name, names)

    @app.post("/v1/completions")
    async def complete(body: CompletionRequest, request: Request) -> Any:
        _check_model(body.model, name)
        if task in ("classification", "vision-chat"):
            raise Refused(400, _wrong_route(task, "/v1/completions"), "wrong_route")
        prompt = body.prompt
        if isinstance(prompt, list):
            if len(prompt) != 1:
                raise Refused(400, "Send one prompt per request (a text, or a list of one).", param="prompt")
            prompt = prompt[0]
        ids = engine.encode(prompt, False)
        return await _answer(engine, request, body, ids, body.max_tokens, "text_completion", name)

    @app.post("/v1/classify")
    async def classify(body: ClassifyRequest, request: Request) -> Any:
        _check_model(body.model, name)
        texts = _encoder_texts(engine, body.input, "/v1/classify")
        results = await _run(engine, request, Job("classify", lambda _: None, texts=texts))
        data = [
            {
                "index": i,
                "label": ranked[0][0],
                "score": ranked[0][1],
                "scores": [{"label": label, "score": score} for label, score in ranked],
            }
            for i, ranked in enumerate(results)
        ]
        return {"object": "list", "model": name, "data": data}

    @app.post("/v1/embeddings")
    async def embeddings(body: EmbeddingRequest, request: Request) -> Any:
        _check_model(body.model, name)
        texts = _encoder_texts(engine, body.input, "/v1/embeddings")
        vectors, tokens = await _run(engine, request, Job("embed", lambda _: None, texts=texts))
        size = len(vectors[0])
        if body.dimensions not in (None, size):
            raise Refused(
                400,
                f"This model's embeddings have {size} dimensions; leave out 'dimensions'.",
                param="dimensions",
            )
        data = [
            {"object": "embedding", "index": i, "embedding": _encoded(vector, body.encoding_format)}
            for i, vector in enumerate(vectors)
        ]
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return {"object": "list", "model": name, "data": data, "usage": usage}

    routes = ["/health", "/v1/models", *_ROUTES[task]]
    if access.origins:  # the pages the user allowed: their browsers are told so (CORS)
        from starlette.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(access.origins),
            allow_methods=["GET", "POST"],
            allow_headers=["*"],  # the openai JS client adds its x-stainless-* headers; the origin gates
        )
    # Added last, so it runs first: nothing reaches the routes (or the CORS answer) unchecked.
    app.add_middleware(Guard, key=key, limit=engine.limits.body_bytes, on_request=on_request, access=access)
    return app


def _encoded(vector: list[float], encoding: str | None) -> list[float] | str:
    """A vector as numbers, or as base64 of little-endian float32 (what the openai client asks for)."""
    if encoding != "base64":
        return vector
    import base64
    import struct

    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")


_ROUTES = {
    "classification": ["/v1/classify", "/v1/embeddings"],
    "vision-chat": ["/v1/chat/completions"],
    "seq2seq": ["/v1/completions"],
    "causal-lm": ["/v1/chat/completions", "/v1/completions"],
}


def _model_card(name: str, created: int) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": created, "owned_by": "finetune-studio"}


def _check_model(asked: str | None, name: str) -> None:
    if asked and asked != name:
        raise Refused(
            404,
            f"The model '{asked}' is not served here. This server serves '{name}' (see /v1/models).",
            "model_not_found",
            "model",
        )


def _encoder_texts(engine: Engine, given: str | list[str], route: str) -> list[str]:
    """The texts a classifier's route reads, or the refusal: another task's model, none, or too many."""
    if engine.info.task != "classification":
        raise Refused(400, _wrong_route(engine.info.task, route), "wrong_route")
    texts = [given] if isinstance(given, str) else given
    if not texts or len(texts) > engine.limits.classify_texts:
        raise Refused(400, f"Send 1 to {engine.limits.classify_texts} texts in 'input'.", param="input")
    return texts


def _encode_conversation(
    engine: Engine, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
) -> list[int]:
    """The conversation's token ids; a chat template that refuses it (Mistral's and Gemma's refuse a
    system message, or two user turns in a row) is the client's to fix: a 400 with the template's own
    sentence, not a 500 that clients retry."""
    from jinja2 import TemplateError

    try:
        return engine.encode(messages, engine.info.chat, tools or ())
    except TemplateError as exc:
        raise Refused(
            400,
            f"This model's chat template refuses the conversation: {str(exc)[:300]}. Change it as the "
            "template says: some take no system message (put its text at the start of the first user "
            "message), and many want user and assistant turns to alternate, starting with the user.",
            "invalid_conversation",
            "messages",
        ) from None


def _wrong_route(task: str, route: str) -> str:
    kind = {
        "classification": "a text classifier",
        "seq2seq": "a sequence-to-sequence model",
        "vision-chat": "a vision-language model (pictures and text)",
    }.get(task, "a language model")
    return f"{route} is not available: this model is {kind}. Use {' or '.join(_ROUTES[task])}."


def _sampling(engine: Engine, body: Sampled, prompt_tokens: int, asked: int | None) -> Sampling:
    """The request's settings, or the refusal that names the limit it went past."""
    limits, context = engine.limits, engine.context
    if prompt_tokens == 0:
        raise Refused(400, "The prompt is empty: send some text to answer.", param="prompt")
    problem = body.unsupported()
    if problem:
        raise Refused(400, problem[0], "unsupported_parameter", problem[1])
    seq2seq = engine.info.task == "seq2seq"  # reads the prompt, writes a new sequence: two budgets
    if prompt_tokens >= context:
        raise Refused(
            400,
            f"The prompt is {prompt_tokens} tokens; this model reads at most {context} "
            "(prompt and answer together). Send a shorter prompt.",
            "context_length_exceeded",
            "messages",
        )
    if asked is not None and asked > limits.max_tokens:
        raise Refused(
            400,
            f"max_tokens {asked} is more than this server allows ({limits.max_tokens}). Ask for fewer.",
            "max_tokens_too_large",
            "max_tokens",
        )
    room = context if seq2seq else context - prompt_tokens
    # More than the room left is answered with the room left (finish_reason "length", and the header
    # X-Max-Tokens says so): front ends such as Continue send 4096 whatever the model reads.
    longest = min(asked or limits.max_tokens, room)
    temperature = 1.0 if body.temperature is None else body.temperature
    top_p = 1.0 if body.top_p is None else body.top_p
    return Sampling(
        longest,
        temperature,
        top_p,
        body.stops(),
        body.seed,
        top_k=body.top_k,  # None: the model's own (transformers' 50); 0: none
        min_p=body.min_p or None,
        repetition_penalty=body.repetition_penalty or 1.0,
        presence_penalty=body.presence_penalty or 0.0,
        frequency_penalty=body.frequency_penalty or 0.0,
        logprobs=body.wanted_logprobs(),
    )


async def _grammar(engine: Engine, response_format: dict[str, Any] | None) -> str | None:
    """The grammar that holds the answer to the request's JSON schema (``structured.py``), or the 400
    that says why it cannot be followed. The model's token tables are made off the event loop (once)."""
    from desktop.core.serving.structured import SchemaRefused, grammar_for

    try:
        grammar = grammar_for(response_format)
        if grammar is not None:
            await asyncio.to_thread(engine.grammars.check, grammar)
    except SchemaRefused as exc:
        raise Refused(400, str(exc), "invalid_response_format", "response_format") from None
    return grammar


async def _answer(
    engine: Engine,
    request: Request,
    body: Sampled,
    ids: list[int],
    asked: int | None,
    kind: str,
    name: str,
    tools: set[str] | None = None,
) -> Any:
    """Generate the request's answer (or ``n`` of them), streamed or whole; ``tools``: the names of the
    tools offered, whose calls are read back from the answer (``tool_calls.py``)."""
    sampling = _sampling(engine, body, len(ids), asked)
    if (body.response_format or {}).get("type", "text") != "text":
        sampling = replace(sampling, grammar=await _grammar(engine, body.response_format))
    chat = kind == "chat.completion"
    reply = {
        "id": f"{'chatcmpl' if chat else 'cmpl'}-{uuid.uuid4().hex}",
        "object": kind,
        "created": int(time.time()),
        "model": name,
    }
    # Fields that change nothing here are read and named back, so that a client can tell.
    ignored = {IGNORED_HEADER: ", ".join(body.ignored())} if body.ignored() else {}
    if asked is not None and sampling.max_tokens < asked:
        ignored["X-Max-Tokens"] = str(sampling.max_tokens)  # all the model has room for
    usage = bool(body.stream_options and body.stream_options.include_usage)
    if body.stream and not tools and (body.n or 1) == 1 and sampling.logprobs is None:
        events: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        job = _submit(engine, Job("generate", _reporter(events), ids=list(ids), sampling=sampling))
        return StreamingResponse(
            stream(job, events, reply, chat, usage, _failure, lambda: engine.answering_together),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no", **ignored},
        )
    jobs = []
    for index in range(body.n or 1):  # n answers, each seeded apart when seeded
        seed = (sampling.seed + index) % 2**64 if sampling.seed is not None and index else sampling.seed
        jobs.append(Job("generate", lambda _: None, ids=list(ids), sampling=replace(sampling, seed=seed)))
    results = await _run_all(engine, request, jobs)
    choices, outcomes = [], []
    for index, outcome in enumerate(results):
        choice: dict[str, Any] = {"index": index, "finish_reason": reason(outcome)}
        scored = _scored(engine, outcome, chat) if outcome.logprobs is not None else None
        if chat:
            message, finish = _message(engine, outcome, tools or set())
            choice.update(message=message, logprobs=scored, finish_reason=finish)
        else:
            choice.update(text=outcome.text, logprobs=scored)
        choices.append(choice)
        outcomes.append(outcome)
    counted = usage_of(outcomes[0])
    counted["completion_tokens"] = sum(o.completion_tokens for o in outcomes)
    counted["total_tokens"] = counted["prompt_tokens"] + counted["completion_tokens"]
    if body.stream:
        # A tool call is known only once the answer is whole, and several answers or log-probabilities
        # are made whole (not token by token): then they are sent as the chunks of a stream.
        return StreamingResponse(
            replay(reply, choices, chat, counted if usage else None),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no", **ignored},
        )
    return JSONResponse({**reply, "choices": choices, "usage": counted}, headers=ignored)


async def _picture_answer(engine: Engine, request: Request, body: ChatRequest, name: str) -> Any:
    """A vision-language model's answer to a conversation whose user turns may hold pictures
    (``image_url`` parts: :mod:`desktop.core.serving.pictures`), streamed as it is written or whole."""
    from desktop.core.serving.pictures import picture_conversation

    limits = engine.limits
    messages, pictures = await asyncio.to_thread(
        picture_conversation, body.messages, limits.remote_pictures, limits.local_pictures
    )
    if not any(m["role"] == "user" for m in messages):
        raise Refused(400, "The conversation has no user message to answer.", param="messages")
    if (
        (body.n or 1) != 1
        or body.tools
        or body.logprobs
        or (body.response_format or {}).get("type", "text") != "text"
    ):
        raise Refused(
            400,
            "A vision-language model here answers with one text: leave out 'n', 'tools', 'logprobs' and "
            "'response_format'.",
            "unsupported_parameter",
        )
    asked = body.max_completion_tokens or body.max_tokens
    sampling = Sampling(
        min(asked or limits.max_tokens, limits.max_tokens),
        1.0 if body.temperature is None else body.temperature,
        1.0 if body.top_p is None else body.top_p,
    )
    reply = {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": name,
    }
    if body.stream:
        usage = bool(body.stream_options and body.stream_options.include_usage)
        events: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        job = _submit(
            engine, Job("converse", _reporter(events), sampling=sampling, payload=(messages, pictures))
        )
        return StreamingResponse(
            stream(job, events, reply, True, usage, _failure, lambda: engine.answering_together),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    outcome = await _run(
        engine, request, Job("converse", lambda _: None, sampling=sampling, payload=(messages, pictures))
    )
    choices = [
        {
            "index": 0,
            "message": {"role": "assistant", "content": outcome.text},
            "finish_reason": reason(outcome),
        }
    ]
    return JSONResponse({**reply, "choices": choices, "usage": usage_of(outcome)})


async def _run_all(engine: Engine, request: Request, jobs: list[Job]) -> list[Any]:
    """Each job's result. Asked together where the queue has room for all of them (unseeded, they are
    made in one batch, ``batching.py``; one that fails ends the others), else one after another (a queue
    smaller than ``n`` would call the request busy)."""
    if len(jobs) == 1 or len(jobs) > engine.limits.queue:
        return [await _run(engine, request, job) for job in jobs]
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(_run(engine, request, job)) for job in jobs]
    except* Refused as failed:
        raise failed.exceptions[0] from None
    return [task.result() for task in tasks]


def _message(engine: Engine, outcome: Outcome, tools: set[str]) -> tuple[dict[str, Any], str]:
    """The assistant's message and finish reason: its calls to ``tools`` read back, when it made any
    (from the answer with its special tokens: Mistral's ``[TOOL_CALLS]`` is one)."""
    if tools:
        from desktop.core.serving.tool_calls import parse

        raw = engine.tokenizer.decode(outcome.ids, skip_special_tokens=False) if outcome.ids else outcome.text
        parsed = parse(str(raw), tools)
        if parsed.calls:
            return {
                "role": "assistant",
                "content": parsed.content or None,
                "tool_calls": parsed.calls,
            }, "tool_calls"
    return {"role": "assistant", "content": outcome.text}, reason(outcome)


def _scored(engine: Engine, outcome: Outcome, chat: bool) -> dict[str, Any]:
    """OpenAI's ``logprobs`` of an answer: per token (chat), or as four lists (completions)."""
    tokens = outcome.logprobs or []

    def text(token: int) -> str:
        return engine.token_text(token)

    if chat:
        return {
            "content": [
                {
                    "token": text(t["id"]),
                    "logprob": t["logprob"],
                    "bytes": list(text(t["id"]).encode()),
                    "top_logprobs": [
                        {"token": text(i), "logprob": lp, "bytes": list(text(i).encode())}
                        for i, lp in t["top"]
                    ],
                }
                for t in tokens
            ]
        }
    pieces = [text(t["id"]) for t in tokens]
    offsets = [sum(len(p) for p in pieces[:i]) for i in range(len(pieces))]
    return {
        "tokens": pieces,
        "token_logprobs": [t["logprob"] for t in tokens],
        "top_logprobs": [{text(i): lp for i, lp in t["top"]} for t in tokens],
        "text_offset": offsets,
    }


def _reporter(
    events: asyncio.Queue[tuple[str, Any]], pieces: bool = True
) -> Callable[[tuple[str, Any]], None]:
    """A job's report, handed from the model's thread to this event loop (without the pieces of text
    when only the whole answer is wanted)."""
    loop = asyncio.get_running_loop()

    def report(event: tuple[str, Any]) -> None:
        if not pieces and event[0] == "text":
            return
        with contextlib.suppress(RuntimeError):  # the loop has closed: the server is stopping
            loop.call_soon_threadsafe(events.put_nowait, event)

    return report


def _submit(engine: Engine, job: Job) -> Job:
    try:
        return engine.submit(job)
    except Stopping as exc:
        raise _failure(exc) from None
    except Busy:
        raise Refused(
            503,
            f"The server is busy: {engine.waiting} requests are waiting. Try again in a moment.",
            "server_busy",
        ) from None


async def _run(engine: Engine, request: Request, job: Job) -> Any:
    """Run a job to its end and return its result; a client that hangs up cancels it (checked every
    quarter second, while it waits and while it runs)."""
    events: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    job.report = _reporter(events, pieces=False)
    _submit(engine, job)
    try:
        while True:
            try:
                kind, value = await asyncio.wait_for(events.get(), DISCONNECT_POLL_S)
            except TimeoutError:
                if await request.is_disconnected():
                    job.cancel()
                    raise Refused(499, "The client closed the connection.") from None
                continue
            if kind == "done":
                return value
            if kind == "failed":
                raise _failure(value)
    finally:
        job.cancel()  # nothing left to do if it ended; stops it if this request was cancelled


def _failure(exc: BaseException) -> Refused:
    if isinstance(exc, Stopping):
        return Refused(503, "The server is stopping; this answer was not finished.", "server_stopping")
    if type(exc).__name__ == "OutOfMemoryError":  # torch's; the engine has freed what it could
        return Refused(
            503, "The GPU ran out of memory for this answer. Ask for fewer tokens or send a shorter prompt.",
            "out_of_memory",
        )  # fmt: skip
    return Refused(500, f"The model failed: {type(exc).__name__}: {exc}", "model_error")
