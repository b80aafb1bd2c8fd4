"""A model's reply to one prompt, as the task trained it: through the chat template or as plain text.

What the try-it panel shows and what a run's evaluation compares with the reference; both call
:func:`generate_reply` with the model they hold.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from desktop.core.data.tasks.causal_lm import ensure_chat_template


def generate_reply(
    model: Any,
    tokenizer: Any,
    device: Any,
    task: str,
    prompt: str,
    chat: bool,
    max_new_tokens: int = 128,
    temperature: float = 0.7,
    on_text: Callable[[str], None] | None = None,
    stop: threading.Event | None = None,
) -> str:
    """Generate a reply to ``prompt``; ``temperature`` 0 means greedy (always the same answer).

    Args:
        model, tokenizer, device: A loaded causal-LM or sequence-to-sequence model.
        task: ``causal-lm`` or ``seq2seq``.
        chat: Wrap the prompt in the chat template as one user turn (causal-LM).
        on_text: Called with each new piece of text (from the thread that generates).
        stop: Set it to end generation after the current token.
    """
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

    text = prompt
    if chat and task == "causal-lm":
        ensure_chat_template(tokenizer)
        text = tokenizer.apply_chat_template(
            [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
        )
    add_special = task == "seq2seq" or not chat
    inputs = tokenizer(text, return_tensors="pt", add_special_tokens=add_special).to(device)
    sampling = {"do_sample": True, "temperature": temperature} if temperature > 0 else {"do_sample": False}
    pad = tokenizer.pad_token_id
    if pad is None:
        pad = tokenizer.eos_token_id
    with torch.no_grad():
        model.generate(
            **inputs,
            max_new_tokens=max_new_tokens,
            streamer=Streamer(tokenizer, skip_prompt=True, skip_special_tokens=True),
            stopping_criteria=StoppingCriteriaList([StopFlag()]),
            pad_token_id=pad,
            **sampling,
        )
    return "".join(pieces)
