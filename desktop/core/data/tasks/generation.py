"""A model's reply to a prompt or a conversation, as the task trained it: through the chat template or
as plain text.

What the try-it chat shows, what the local server answers and what a run's evaluation compares with the
reference; they all encode with :func:`encode_prompt` and generate with :func:`generate_reply`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from desktop.core.data.tasks.causal_lm import ensure_chat_template

Message = dict[str, str]
"""One turn of a conversation: ``{"role": "system" | "user" | "assistant", "content": text}``."""


def encode_prompt(
    tokenizer: Any,
    task: str,
    prompt: str | Sequence[Message],
    chat: bool,
    tools: Sequence[dict[str, Any]] | None = None,
) -> list[int]:
    """The token ids the model reads for ``prompt``, as the run trained it.

    Args:
        task: ``causal-lm`` or ``seq2seq``.
        prompt: A text, or a conversation (a list of messages; only a chat model reads more than the
            last user turn of it).
        chat: Wrap the text in the chat template as one user turn, or render the conversation with it
            and open the assistant's turn (causal-LM). The template is the one saved with the model:
            the one the run trained with.
        tools: Function definitions (OpenAI's ``tools``) for a template that renders them.
    """
    chat = chat and task == "causal-lm"
    if not isinstance(prompt, str):
        messages = [dict(m) for m in prompt]
        if not chat:  # a plain model answers the last thing the user said
            prompt = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
    elif chat:
        messages = [{"role": "user", "content": prompt}]
    if chat:
        ensure_chat_template(tokenizer)
        extra = {"tools": list(tools)} if tools else {}  # only a template that takes tools is given them
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True, **extra)
        return list(tokenizer(text, add_special_tokens=False)["input_ids"])
    return list(tokenizer(prompt, add_special_tokens=True)["input_ids"])


def sampling_args(temperature: float, top_p: float = 1.0) -> dict[str, Any]:
    """``generate``'s sampling arguments: temperature 0 means greedy (always the same answer)."""
    if temperature <= 0:
        return {"do_sample": False}
    return {"do_sample": True, "temperature": temperature, "top_p": top_p}


def generate_reply(
    model: Any,
    tokenizer: Any,
    device: Any,
    task: str,
    prompt: str | Sequence[Message],
    chat: bool,
    max_new_tokens: int = 128,
    temperature: float = 0.7,
    on_text: Callable[[str], None] | None = None,
    stop: threading.Event | None = None,
    top_p: float = 1.0,
) -> str:
    """Generate a reply to ``prompt`` (a text or a conversation, see :func:`encode_prompt`).

    Args:
        model, tokenizer, device: A loaded causal-LM or sequence-to-sequence model.
        task: ``causal-lm`` or ``seq2seq``.
        chat: Go through the chat template (causal-LM).
        temperature, top_p: Sampling; ``temperature`` 0 is greedy.
        on_text: Called with each new piece of text (from the thread that generates).
        stop: Set it to end generation after the current token.
    """
    import torch

    ids = torch.tensor([encode_prompt(tokenizer, task, prompt, chat)], device=device)
    pad = tokenizer.pad_token_id
    if pad is None:
        pad = tokenizer.eos_token_id
    streamed, pieces = streaming(tokenizer, on_text, stop)
    with torch.no_grad():
        model.generate(
            input_ids=ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=max_new_tokens,
            pad_token_id=pad,
            **streamed,
            **sampling_args(temperature, top_p),
        )
    return "".join(pieces)


def streaming(
    tokenizer: Any, on_text: Callable[[str], None] | None = None, stop: threading.Event | None = None
) -> tuple[dict[str, Any], list[str]]:
    """``generate()``'s streamer and stopping criteria: each new piece of the answer's text (the prompt
    and special tokens left out) to ``on_text`` and to the list returned beside them; ``stop`` set ends
    the answer after the current token."""
    import torch
    from transformers import StoppingCriteria, StoppingCriteriaList, TextStreamer

    pieces: list[str] = []

    class Streamer(TextStreamer):
        def on_finalized_text(self, text: str, stream_end: bool = False) -> None:
            if text:
                pieces.append(text)
                if on_text is not None:
                    on_text(text)

    class StopFlag(StoppingCriteria):
        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            done = stop is not None and stop.is_set()
            return torch.full((input_ids.shape[0],), done, dtype=torch.bool, device=input_ids.device)

    arguments = {
        "streamer": Streamer(tokenizer, skip_prompt=True, skip_special_tokens=True),
        "stopping_criteria": StoppingCriteriaList([StopFlag()]),
    }
    return arguments, pieces
