"""The requests the server reads, as OpenAI's API defines them, and the errors it answers with.

Every request model forbids fields it does not know: a typo (``max_token``) or a feature this server
does not have (``tools``) gets a 400 that names the field, never a silent default. Fields that clients
send by habit are accepted when they ask for nothing this server cannot do (``n`` 1, penalties 0).
The words here are for programs and their authors: they are English, like OpenAI's.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TextPart(Strict):
    type: Literal["text"]
    text: str


class ImageURL(Strict):
    url: str
    detail: str | None = None  # OpenAI's "low" / "high" / "auto": the model reads the picture as it is


class ImagePart(Strict):
    type: Literal["image_url"]
    image_url: ImageURL


class FunctionCall(Strict):
    name: str
    arguments: str  # JSON, as OpenAI sends it


class ToolCall(Strict):
    id: str | None = None
    type: Literal["function"] = "function"
    function: FunctionCall


class Function(Strict):
    name: str
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None


class Tool(Strict):
    type: Literal["function"]
    function: Function


class Message(Strict):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[TextPart | ImagePart] | None = None
    name: str | None = None
    tool_calls: list[ToolCall] | None = None  # an assistant's earlier calls
    tool_call_id: str | None = None  # a tool's answer to one of them

    def text(self) -> str:
        if isinstance(self.content, list):
            return "".join(part.text for part in self.content if isinstance(part, TextPart))
        return self.content or ""

    def has_pictures(self) -> bool:
        return isinstance(self.content, list) and any(isinstance(p, ImagePart) for p in self.content)

    def for_template(self) -> dict[str, Any]:
        """The message as chat templates read it (a call's arguments as an object, as they render it)."""
        role = "system" if self.role == "developer" else self.role
        found: dict[str, Any] = {"role": role, "content": self.text()}
        if self.tool_calls:
            found["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.function.name, "arguments": _json(call.function.arguments)},
                }
                for call in self.tool_calls
            ]
        if self.tool_call_id is not None:
            found["tool_call_id"] = self.tool_call_id
        if self.name is not None and self.role == "tool":
            found["name"] = self.name
        return found


def _json(text: str) -> Any:
    import json

    try:
        return json.loads(text)
    except ValueError:
        return text  # not JSON: the template gets it as it came


class StreamOptions(Strict):
    include_usage: bool = False
    include_obfuscation: bool | None = None


_NOT_SUPPORTED = "'{}' is not supported by this server: leave it out or set it to 0."
MAX_STOPS = 16
"""OpenAI takes 4; Continue sends its chat template's stop words, often more (DeepSeek takes 16)."""
IGNORED = (
    "user",
    "metadata",
    "store",
    "service_tier",
    "parallel_tool_calls",
    "reasoning_effort",
    "prompt_cache_key",
    "safety_identifier",
    "verbosity",
    "modalities",
    "prediction",
    "web_search_options",
)
"""Fields clients send by habit that change nothing on this server: read, and named back."""


class Sampled(Strict):
    """What the generating routes share. ``null`` means the default, as in OpenAI's API; fields that
    clients send by habit are read and must ask for nothing this server lacks (:meth:`unsupported`)."""

    model: str | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    stream: bool | None = False
    stream_options: StreamOptions | None = None
    stop: str | list[str] | None = None
    seed: int | None = Field(default=None, ge=-(2**63), le=2**64 - 1)  # what torch's generator takes
    top_k: int | None = Field(default=None, ge=0)
    min_p: float | None = Field(default=None, ge=0.0, le=1.0)
    repetition_penalty: float | None = Field(default=None, gt=0.0, le=10.0)
    presence_penalty: float | None = Field(default=None, ge=-2.0, le=2.0)
    frequency_penalty: float | None = Field(default=None, ge=-2.0, le=2.0)
    user: str | None = None
    n: int | None = Field(default=None, ge=1, le=4)
    logprobs: bool | int | None = None
    top_logprobs: int | None = Field(default=None, ge=0, le=20)
    logit_bias: dict[str, float] | None = None
    response_format: dict[str, Any] | None = None
    tools: list[Tool] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    store: bool | None = None
    metadata: dict[str, str] | None = None
    service_tier: str | None = None
    reasoning_effort: str | None = None
    prompt_cache_key: str | None = None
    safety_identifier: str | None = None
    verbosity: str | None = None
    modalities: list[str] | None = None
    prediction: dict[str, Any] | None = None
    web_search_options: dict[str, Any] | None = None

    def wanted_logprobs(self) -> int | None:
        """How many likeliest tokens to give beside each answer token's log-probability; ``None`` when
        no log-probabilities are wanted (chat: ``logprobs: true`` and ``top_logprobs``; completions:
        ``logprobs: N``)."""
        if self.logprobs is True:
            return self.top_logprobs or 0
        if isinstance(self.logprobs, int) and not isinstance(self.logprobs, bool):
            return self.logprobs
        return None

    def ignored(self) -> list[str]:
        """The fields sent that change nothing here (named in the answer's ``X-Ignored-Fields``)."""
        return [name for name in IGNORED if getattr(self, name) is not None]

    def stops(self) -> tuple[str, ...]:
        if self.stop is None:
            return ()
        return (self.stop,) if isinstance(self.stop, str) else tuple(self.stop)

    def unsupported(self) -> tuple[str, str] | None:
        """The first thing asked for that this server cannot do, and its field; ``None`` when none."""
        top = self.wanted_logprobs()
        checks = [
            (top is not None and not 0 <= top <= 20, "logprobs", "'logprobs' is a number from 0 to 20."),
            (bool(self.logit_bias), "logit_bias", _NOT_SUPPORTED.format("logit_bias")),
            (self.tool_choice not in (None, "none", "auto"), "tool_choice", "Send 'auto' or 'none'."),
            (len(self.stops()) > MAX_STOPS, "stop", f"Send at most {MAX_STOPS} stop strings."),
            (
                self.stream_options is not None and not self.stream,
                "stream_options",
                "'stream_options' is only read with 'stream': true.",
            ),
        ]  # fmt: skip
        return next(((message, field) for wrong, field, message in checks if wrong), None)


class ChatRequest(Sampled):
    """``POST /v1/chat/completions``."""

    messages: list[Message] = Field(min_length=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)


class CompletionRequest(Sampled):
    """``POST /v1/completions``: one prompt (a text) per request."""

    prompt: str | list[str]
    echo: bool | None = None
    best_of: int | None = None
    suffix: str | None = None

    def unsupported(self) -> tuple[str, str] | None:
        if self.echo:
            return _NOT_SUPPORTED.format("echo"), "echo"
        if self.best_of not in (None, 1):
            return "This server gives one answer per request: set 'best_of' to 1.", "best_of"
        if self.suffix:
            return "'suffix' (text after the insertion) is not supported: leave it out.", "suffix"
        return super().unsupported()


class ClassifyRequest(Strict):
    """``POST /v1/classify``: a text or a list of texts, each answered with its labels and scores."""

    model: str | None = None
    input: str | list[str]


class EmbeddingRequest(Strict):
    """``POST /v1/embeddings``: a classifier's encoder, each text's vector."""

    model: str | None = None
    input: str | list[str]
    encoding_format: Literal["float", "base64"] | None = None
    dimensions: int | None = None
    user: str | None = None


def error_body(
    message: str, kind: str = "invalid_request_error", code: str | None = None, **extra: Any
) -> dict:
    """OpenAI's error shape: ``{"error": {"message", "type", "param", "code"}}``."""
    return {"error": {"message": message, "type": kind, "param": extra.get("param"), "code": code}}


def validation_message(errors: list[dict[str, Any]]) -> tuple[str, str | None]:
    """One sentence for pydantic's list of errors (the first one), and the field it is about."""
    if not errors:
        return "The request is not valid.", None
    first = errors[0]
    kind = first.get("type", "")
    where = [str(part) for part in first.get("loc", ()) if part != "body"]
    field = ".".join(where) or None
    if kind == "json_invalid":
        reason = (first.get("ctx") or {}).get("error", "")
        return f"The request body is not valid JSON{': ' + reason if reason else ''}.", None
    if kind == "extra_forbidden":
        return f"Unknown field '{field}': this server does not read it. Remove it from the request.", field
    if kind == "missing" and not where:
        return "The request body is empty: send a JSON object.", None
    if kind == "missing":
        return f"The field '{field}' is required.", field
    if "content" in where:
        param = ".".join(where[: where.index("content") + 1])
        return (
            "A message's content is a string, or parts of type 'text' (and 'image_url' for a model that "
            "reads pictures).",
            param,
        )
    if kind in ("model_attributes_type", "dict_type") and not where:
        return "The request body must be a JSON object.", None
    message = str(first.get("msg", "is not valid"))
    return (f"'{field}': {message}." if field else f"{message}."), field
