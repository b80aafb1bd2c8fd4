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


class Message(Strict):
    role: Literal["system", "developer", "user", "assistant"]
    content: str | list[TextPart] | None = None
    name: str | None = None

    def text(self) -> str:
        if isinstance(self.content, list):
            return "".join(part.text for part in self.content)
        return self.content or ""


class StreamOptions(Strict):
    include_usage: bool = False
    include_obfuscation: bool | None = None


class Sampled(Strict):
    """What the generating routes share."""

    model: str | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    temperature: float = Field(default=1.0, ge=0.0, le=2.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    stream: bool = False
    stream_options: StreamOptions | None = None
    stop: str | list[str] | None = None
    seed: int | None = None
    n: Literal[1] = 1
    presence_penalty: Literal[0, 0.0] = 0
    frequency_penalty: Literal[0, 0.0] = 0
    user: str | None = None

    def stops(self) -> tuple[str, ...]:
        if self.stop is None:
            return ()
        stops = (self.stop,) if isinstance(self.stop, str) else tuple(self.stop)
        return stops[:4]


class ChatRequest(Sampled):
    """``POST /v1/chat/completions``."""

    messages: list[Message] = Field(min_length=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)


class CompletionRequest(Sampled):
    """``POST /v1/completions``: one prompt (a text) per request."""

    prompt: str | list[str]
    echo: Literal[False] = False
    logprobs: None = None
    best_of: Literal[1] | None = None
    suffix: None = None


class ClassifyRequest(Strict):
    """``POST /v1/classify``: a text or a list of texts, each answered with its labels and scores."""

    model: str | None = None
    input: str | list[str]


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
    if kind == "missing":
        return f"The field '{field}' is required.", field
    if kind in ("model_attributes_type", "dict_type") and not where:
        return "The request body must be a JSON object.", None
    message = str(first.get("msg", "is not valid"))
    return (f"'{field}': {message}." if field else f"{message}."), field
