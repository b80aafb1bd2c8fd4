"""Reasoning with rewards (GRPO): prompts, each with an optional reference answer, handed to TRL's
``GRPOTrainer`` as conversations under the run's system prompt.

A prompt is text or a list of chat messages (ending with the user's turn); the system prompt of the
``[grpo]`` section goes first unless the conversation has its own. The reference answer goes along as
the ``answer`` column, which TRL passes to every reward (:mod:`desktop.core.data.rewards`).
"""

from __future__ import annotations

from typing import Any

from desktop.core.data.chats import parse_messages
from desktop.core.data.tables import Table
from desktop.core.data.tasks import Prepared, Tokenizing
from desktop.core.settings.config import Columns, RunConfig
from desktop.core.system.errors import DataError
from desktop.core.system.messages import msg

Messages = list[dict[str, str]]


def prompt_messages(value: Any, system: str) -> Messages | None:
    """A prompt as chat messages under ``system`` (``None`` when the value holds no prompt)."""
    chat = parse_messages(value)
    if chat:
        if chat[-1].get("role") == "assistant":  # a whole conversation: the model answers its last turn
            chat = chat[:-1]
        messages = [dict(m) for m in chat]
    elif isinstance(value, str) and value.strip():
        messages = [{"role": "user", "content": value}]
    else:
        return None
    if system and not any(m.get("role") == "system" for m in messages):
        messages.insert(0, {"role": "system", "content": system})
    return messages if any(m.get("role") == "user" for m in messages) else None


def answer_text(value: Any) -> str:
    """A reference answer as the rewards compare it ("" when there is none; GSM8K's ``... #### 72``: 72)."""
    from desktop.core.data.rewards import reference_of

    return reference_of(value)


def other_columns(table: Table, columns: Columns, kept: list[int]) -> dict[str, list[Any]]:
    """The data's other columns of plain values (text, numbers), for the user's own reward: TRL hands
    every column but the prompt to each reward."""
    taken = {columns.prompt, columns.answer, "prompt", "answer"}
    found = {}
    for name in table.columns:
        if name in taken:
            continue
        values = list(table.column(name))
        if all(v is None or isinstance(v, (str, int, float, bool)) for v in values):
            found[name] = [values[i] for i in kept]
    return found


def rows(table: Table, columns: Columns, system: str) -> tuple[list[Messages], list[str], list[int]]:
    """The prompts and answers of ``table``, and the rows whose prompt could not be read."""
    prompts, answers, unreadable = [], [], []
    column = table.column(columns.prompt)
    answer_column = table.column(columns.answer) if columns.answer else None
    for i, value in enumerate(column):
        messages = prompt_messages(value, system)
        if messages is None:
            unreadable.append(i)
            continue
        prompts.append(messages)
        answers.append(answer_text(answer_column[i]) if answer_column is not None else "")
    return prompts, answers, unreadable


def texts(table: Table, columns: Columns, tokenizer: Any = None) -> dict[str, list[str]]:
    """The prompts as the model reads them (through the chat template when there is a tokenizer), and
    the answers, for token statistics."""
    prompts, answers, _ = rows(table, columns, "")
    if tokenizer is not None:
        from desktop.core.data.tasks.causal_lm import ensure_chat_template

        ensure_chat_template(tokenizer)
        shown = [
            tokenizer.apply_chat_template(p, tokenize=False, add_generation_prompt=True) for p in prompts
        ]
    else:
        shown = ["\n\n".join(m["content"] for m in p) for p in prompts]
    return {"prompt": shown, "answer": [a for a in answers if a]}


def prepare(
    config: RunConfig,
    tokenizer: Any,
    train: Table,
    eval_: Table | None,
    columns: Columns,
    model_kwargs: dict[str, Any] | None = None,
    tokenizing: Tokenizing | None = None,
) -> Prepared:
    """Load the causal LM and hand over the prompts (as conversations) with their answers; rows whose
    prompt cannot be read are left out, named."""
    import datasets
    from transformers import AutoModelForCausalLM

    from desktop.core.data.tasks.causal_lm import ensure_chat_template
    from desktop.core.hub.models import load_model

    ensure_chat_template(tokenizer)  # saved with the model: the tuned model chats as it was taught
    notes: list[str] = []
    parts: dict[str, Any] = {}
    held_out: list[tuple[Any, str]] = []
    for name, table in (("train", train), ("eval", eval_)):
        if table is None:
            continue
        prompts, answers, unreadable = rows(table, columns, config.grpo.system_prompt)
        if unreadable:
            notes.append(
                msg(
                    "Left out {count} rows of {source} without a readable prompt ({rows}).",
                    count=len(unreadable),
                    source=table.source,
                    rows=table.locate_many(unreadable),
                )
            )
        left_out = set(unreadable)
        kept = [i for i in range(len(table)) if i not in left_out]
        # TRL cuts no prompt: one longer than the max length would take its memory whole, so it goes.
        longest = config.training.max_length
        rendered = [
            tokenizer.apply_chat_template(p, tokenize=False, add_generation_prompt=True) for p in prompts
        ]
        sizes = [len(tokenizer(text, add_special_tokens=False)["input_ids"]) for text in rendered]
        too_long = [j for j, size in enumerate(sizes) if size > longest]
        if too_long:
            notes.append(
                msg(
                    "Left out {count} rows of {source} whose prompt is longer than the max length "
                    "({length} tokens) ({rows}).",
                    count=len(too_long),
                    source=table.source,
                    length=longest,
                    rows=table.locate_many([kept[j] for j in too_long]),
                )
            )
            dropped = set(too_long)
            prompts = [x for j, x in enumerate(prompts) if j not in dropped]
            answers = [x for j, x in enumerate(answers) if j not in dropped]
            kept = [x for j, x in enumerate(kept) if j not in dropped]
        if not prompts and too_long:
            raise DataError(
                msg(
                    "No prompt of {source} fits within the max length ({length} tokens), the system prompt "
                    "included.",
                    source=table.source,
                    length=longest,
                ),
                msg("Raise training.max_length (Memory & speed), or shorten the prompts."),
            )
        if not prompts:
            raise DataError(
                msg("No row of {source} holds a prompt.", source=table.source),
                msg("Map columns.prompt to the column of questions (text, or lists of chat messages)."),
            )
        data = {"prompt": prompts, "answer": answers, **other_columns(table, columns, kept)}
        parts[name] = datasets.Dataset.from_dict(data)
        if name == "eval":
            held_out = list(zip(prompts, answers, strict=True))
    model = load_model(AutoModelForCausalLM, config.model, "causal-LM fine-tuning", **(model_kwargs or {}))
    if model.config.pad_token_id is None:
        model.config.pad_token_id = tokenizer.pad_token_id
    return Prepared(
        model=model,
        train=parts["train"],
        eval=parts.get("eval"),
        collator=None,  # TRL's own: it samples the answers and batches them
        notes=notes,
        chat=True,
        pairs=held_out,  # the evaluation's prompts and answers, for the rewards before and after
    )
