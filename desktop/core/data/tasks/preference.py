"""Preference pairs (issue 38): a prompt with a chosen and a rejected answer, from the layouts people have.

Three layouts are read, each row becoming a :class:`Pair` (the prompt as chat messages, the two answers
as text), which is what TRL's ``DPOTrainer`` and ``ORPOTrainer`` take in their conversational form:

- ``prompt`` / ``chosen`` / ``rejected`` as text (or the prompt as a list of messages);
- UltraFeedback's: ``chosen`` and ``rejected`` are whole conversations (lists of messages) that share
  every message but the last answer; the prompt is that shared part;
- Anthropic HH's: ``chosen`` and ``rejected`` are whole conversations as text (``\\n\\nHuman: ...``
  ``\\n\\nAssistant: ...``); the prompt is their common beginning, up to the last ``Assistant:`` turn
  they share.

:func:`content_problems` and :func:`length_problems` find what would waste a run before it starts,
each with its own sentence and the rows it was found in: a chosen answer equal to the rejected one, an
empty side, a prompt that fills the max length (both answers cut to nothing), and pairs whose answers
the max length cuts.

The trainer is TRL's (``DPOTrainer``, ``ORPOTrainer``: :mod:`desktop.core.training.preference`); this
module reads, checks and hands it the pairs as conversations, and loads the model (and, for DPO
without LoRA, the frozen reference model beside it).
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from desktop.core.data.chats import parse_messages
from desktop.core.data.tables import Table
from desktop.core.data.tasks import Prepared, Tokenizing
from desktop.core.settings.config import Columns, RunConfig
from desktop.core.system.errors import DataError
from desktop.core.system.messages import Msg, joined, msg

Messages = list[dict[str, str]]
HH_TURN = re.compile(r"(?:^|\n\n)(Human|Assistant):[ ]?")  # the first turn may have lost its "\n\n"


@dataclass(frozen=True)
class Pair:
    """One preference: the prompt (chat messages, ending with the user's turn) and two answers."""

    prompt: Messages
    chosen: str
    rejected: str


def read_pair(
    row: dict[str, Any], chosen: str = "chosen", rejected: str = "rejected", prompt: str = ""
) -> Pair | None:
    """The pair in ``row`` (columns named by the arguments; ``prompt`` "" when the layout has none), or
    ``None`` when the row holds no readable pair."""
    good, bad = row.get(chosen), row.get(rejected)
    good_chat, bad_chat = parse_messages(good), parse_messages(bad)
    if good_chat and bad_chat:  # UltraFeedback: two conversations that differ in the last answer
        return _from_chats(good_chat, bad_chat, _prompt_messages(row.get(prompt)) if prompt else None)
    if not isinstance(good, str) or not isinstance(bad, str):
        return None
    if prompt:
        asked = _prompt_messages(row.get(prompt))
        return Pair(asked, good, bad) if asked is not None else None
    if HH_TURN.search(good) and HH_TURN.search(bad):
        return _from_hh(good, bad)
    return None


def _prompt_messages(value: Any) -> Messages | None:
    chat = parse_messages(value)
    if chat:
        return chat
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    return None


def _from_chats(good: Messages, bad: Messages, given: Messages | None) -> Pair | None:
    """The shared messages are the prompt; the last assistant message of each side is its answer."""
    if good[-1]["role"] != "assistant" or bad[-1]["role"] != "assistant":
        return None
    shared = 0
    while shared < min(len(good), len(bad)) - 1 and good[shared] == bad[shared]:
        shared += 1
    prompt = good[:shared] or (given or [])
    if not prompt or shared != len(good) - 1 or shared != len(bad) - 1:
        return None  # the two conversations part before their last answers: not one prompt
    return Pair(prompt, good[-1]["content"], bad[-1]["content"])


def _from_hh(good: str, bad: str) -> Pair | None:
    """HH's two conversations: their common beginning up to the last ``Assistant:`` both have."""
    same = 0
    while same < min(len(good), len(bad)) and good[same] == bad[same]:
        same += 1
    turns = [m for m in HH_TURN.finditer(good) if m.end() <= same and m.group(1) == "Assistant"]
    if not turns:
        return None
    cut = turns[-1]
    prompt = []
    pieces = list(HH_TURN.finditer(good[: cut.start()] + "\n\nAssistant:"))
    for here, after in itertools.pairwise(pieces):
        role = "user" if here.group(1) == "Human" else "assistant"
        prompt.append({"role": role, "content": good[here.end() : after.start()].strip()})
    if not prompt or prompt[-1]["role"] != "user":
        return None
    return Pair(prompt, good[cut.end() :].strip(), bad[cut.end() :].strip())


def read_pairs(table: Table, columns: Columns) -> list[Pair | None]:
    """The pair of every row of ``table`` as mapped (``None`` where a row holds none)."""
    names = [name for name in (columns.chosen, columns.rejected, columns.prompt) if name]
    values = zip(*(table.column(name).tolist() for name in names), strict=True)
    return [
        read_pair(dict(zip(names, row, strict=True)), columns.chosen, columns.rejected, columns.prompt)
        for row in values
    ]


def content_problems(
    pairs: Sequence[Pair | None], locate: Callable[[list[int]], str]
) -> tuple[list[int], list[Msg]]:
    """The rows no run can learn from (no readable pair, an empty answer, the chosen answer equal to the
    rejected one), and one sentence a kind naming them (``locate`` turns positions into row numbers)."""
    unreadable = [i for i, pair in enumerate(pairs) if pair is None]
    empty = [
        i for i, pair in enumerate(pairs) if pair and (not pair.chosen.strip() or not pair.rejected.strip())
    ]
    same = [
        i
        for i, pair in enumerate(pairs)
        if pair and pair.chosen.strip() and pair.chosen.strip() == pair.rejected.strip()
    ]
    found: list[Msg] = []
    if unreadable:
        found.append(
            msg(
                "Rows with no readable prompt, chosen and rejected answer ({count}): {rows}.",
                count=len(unreadable),
                rows=locate(unreadable),
            )
        )
    if same:
        found.append(
            msg(
                "Rows whose chosen answer is the rejected one ({count}): {rows}. Such a pair teaches "
                "nothing.",
                count=len(same),
                rows=locate(same),
            )
        )
    if empty:
        found.append(
            msg("Rows with an empty answer ({count}): {rows}.", count=len(empty), rows=locate(empty))
        )
    return sorted({*unreadable, *empty, *same}), found


def length_problems(
    pairs: Sequence[Pair | None],
    locate: Callable[[list[int]], str],
    tokens: Callable[[Pair], tuple[int, int, int]] | Sequence[tuple[int, int, int] | None],
    max_length: int,
) -> tuple[list[int], list[Msg]]:
    """The rows whose prompt alone fills ``max_length`` (both answers would be cut to nothing: a run
    leaves them out) and the pairs whose answers it cuts (count and share), with a sentence each.

    ``tokens``: each pair's (prompt, chosen, rejected) token counts, the prompt as the chat template
    renders it, as a function of the pair or a list beside ``pairs``.
    """
    counts = tokens if not callable(tokens) else [pair and tokens(pair) for pair in pairs]
    too_long, cut, whole = [], [], []  # whole: the length each pair needs to be read uncut
    for i, (pair, count) in enumerate(zip(pairs, counts, strict=True)):
        if pair is None or count is None or not pair.chosen.strip() or not pair.rejected.strip():
            continue
        asked, good, bad = count
        whole.append(asked + max(good, bad))
        if asked >= max_length:
            too_long.append(i)
        elif asked + max(good, bad) > max_length:
            cut.append(i)
    found: list[Msg] = []
    if too_long:
        found.append(
            msg(
                "Rows whose prompt alone fills the max length of {max} tokens, so that both answers would be "
                "cut to nothing ({count}): {rows}.",
                max=max_length,
                count=len(too_long),
                rows=locate(too_long),
            )
        )
    if cut:
        found.append(
            msg(
                "The max length of {max} tokens cuts the answers of {count} of {total} pairs ({share:.0%}): "
                "{rows}.",
                max=max_length,
                count=len(cut),
                total=len(pairs),
                share=len(cut) / max(len(pairs), 1),
                rows=locate(cut),
            )
        )
    if found:
        found.append(
            msg(
                "A max length of {keep} keeps 95% of the pairs whole.",
                keep=math.ceil(statistics.quantiles(whole, n=20, method="inclusive")[-1])
                if len(whole) > 1
                else whole[0],
            )
        )
    return too_long, found


def check_pairs(table: Table, columns: Columns, drop_bad_rows: bool) -> tuple[Table, list[str]]:
    """Refuse the rows no run can learn from, naming them (or leave them out with ``drop_bad_rows``).

    Raises:
        DataError: Some rows hold no pair, an empty answer or two equal answers.
    """
    bad, found = content_problems(read_pairs(table, columns), table.locate_many)
    if not bad:
        return table, []
    if len(bad) == len(table) or not drop_bad_rows:
        raise DataError(
            msg("{source}: {problems}", source=table.source, problems=joined(*found)),
            msg(
                'Correct those rows, or leave them out: tick "Leave out rows with a blank text or no label" '
                "under Columns (data.drop_bad_rows = true in a config)."
            )
            if len(bad) < len(table)
            else msg(
                "Map chosen and rejected to the columns that hold the two answers (and prompt to the "
                "prompt's, when the answers do not hold the whole conversation)."
            ),
        )
    import numpy as np

    keep = np.ones(len(table), dtype=bool)
    keep[bad] = False
    note = msg(
        "Left out {bad} of {total} rows of {source}: {problems}",
        bad=len(bad),
        total=len(table),
        source=table.source,
        problems=joined(*found),
    )
    return table.take(np.flatnonzero(keep)), [note]


def token_counts(pairs: Sequence[Pair | None], tokenizer: Any) -> list[tuple[int, int, int] | None]:
    """Each pair's (prompt, chosen, rejected) token counts: the prompt rendered by the chat template
    with the assistant's turn begun, each answer with the end of its turn."""
    from desktop.core.data.tasks.causal_lm import ensure_chat_template

    ensure_chat_template(tokenizer)
    readable = [pair for pair in pairs if pair is not None]
    prompts = [
        tokenizer.apply_chat_template(pair.prompt, tokenize=False, add_generation_prompt=True)
        for pair in readable
    ]
    asked = tokenizer(prompts, add_special_tokens=False)["input_ids"] if prompts else []
    good = tokenizer([p.chosen for p in readable], add_special_tokens=False)["input_ids"] if readable else []
    bad = tokenizer([p.rejected for p in readable], add_special_tokens=False)["input_ids"] if readable else []
    counts = iter(zip(asked, good, bad, strict=True))
    ending = _end_of_turn(tokenizer)
    out: list[tuple[int, int, int] | None] = []
    for pair in pairs:
        if pair is None:
            out.append(None)
            continue
        a, g, b = next(counts)
        out.append((len(a), len(g) + ending, len(b) + ending))
    return out


def _end_of_turn(tokenizer: Any) -> int:
    """Tokens the chat template puts after an assistant's answer (Qwen's ``<|im_end|>`` and a line
    break: 2), measured once on a short exchange."""
    user = [{"role": "user", "content": "Hi"}]
    asked = tokenizer.apply_chat_template(user, tokenize=False, add_generation_prompt=True)
    whole = tokenizer.apply_chat_template([*user, {"role": "assistant", "content": "ok"}], tokenize=False)
    if not whole.startswith(asked):
        return 1
    measured = [len(tokenizer(text, add_special_tokens=False)["input_ids"]) for text in (whole, asked, "ok")]
    return max(1, measured[0] - measured[1] - measured[2])


def check_lengths(
    table: Table, columns: Columns, tokenizer: Any, max_length: int
) -> tuple[list[int], list[str]]:
    """:func:`length_problems` of the rows of ``table``, measured with ``tokenizer``."""
    pairs = read_pairs(table, columns)
    return length_problems(pairs, table.locate_many, token_counts(pairs, tokenizer), max_length)


def texts(table: Table, columns: Columns, tokenizer: Any = None) -> dict[str, list[str]]:
    """The prompts and answers the model reads, for token statistics (the prompt as the chat template
    renders it when there is a tokenizer)."""
    pairs = [pair for pair in read_pairs(table, columns) if pair is not None]
    if tokenizer is not None:
        from desktop.core.data.tasks.causal_lm import ensure_chat_template

        ensure_chat_template(tokenizer)
        prompts = [
            tokenizer.apply_chat_template(p.prompt, tokenize=False, add_generation_prompt=True) for p in pairs
        ]
    else:
        prompts = ["\n\n".join(m["content"] for m in p.prompt) for p in pairs]
    return {
        "prompt": prompts,
        "chosen": [p.chosen for p in pairs],
        "rejected": [p.rejected for p in pairs],
    }


def conversations(pairs: Sequence[Pair | None]) -> dict[str, list[Any]]:
    """The pairs as TRL's conversational preference columns (``prompt``, ``chosen``, ``rejected``)."""
    readable = [pair for pair in pairs if pair is not None]
    return {
        "prompt": [pair.prompt for pair in readable],
        "chosen": [[{"role": "assistant", "content": pair.chosen}] for pair in readable],
        "rejected": [[{"role": "assistant", "content": pair.rejected}] for pair in readable],
    }


def prepare(
    config: RunConfig,
    tokenizer: Any,
    train: Table,
    eval_: Table | None,
    columns: Columns,
    model_kwargs: dict[str, Any] | None = None,
    tokenizing: Tokenizing | None = None,
) -> Prepared:
    """Load the causal LM (and, for DPO without LoRA, the frozen reference model) and hand over the
    pairs as conversations; pairs whose prompt fills the max length are left out, named."""
    import datasets
    from transformers import AutoModelForCausalLM

    from desktop.core.data.tasks.causal_lm import ensure_chat_template
    from desktop.core.hub.models import load_model

    ensure_chat_template(tokenizer)  # saved with the model: the tuned model chats as it was taught
    notes: list[str] = []
    parts: dict[str, Any] = {}
    samples: list[Pair] = []
    for name, table in (("train", train), ("eval", eval_)):
        if table is None:
            continue
        pairs = read_pairs(table, columns)
        too_long, found = length_problems(
            pairs, table.locate_many, token_counts(pairs, tokenizer), config.training.max_length
        )
        notes += found
        if too_long:
            left_out = set(too_long)
            pairs = [pair for i, pair in enumerate(pairs) if i not in left_out]
            notes.append(
                msg(
                    "Left out {count} pairs of {source} whose prompt fills the max length.",
                    count=len(too_long),
                    source=table.source,
                )
            )
        if not any(pairs):
            raise DataError(
                msg(
                    "No pair of {source} has room for its answers within {length} tokens.",
                    source=table.source,
                    length=config.training.max_length,
                ),
                msg("Raise training.max_length, or shorten the prompts."),
            )
        if name == "eval":
            samples = [pair for pair in pairs if pair is not None]
        parts[name] = datasets.Dataset.from_dict(conversations(pairs))
    kwargs = model_kwargs or {}
    model = load_model(AutoModelForCausalLM, config.model, "causal-LM fine-tuning", **kwargs)
    if model.config.pad_token_id is None:
        model.config.pad_token_id = tokenizer.pad_token_id
    reference = None
    if config.preference.method == "dpo" and not (config.lora.enabled or config.lora.qlora):
        # The frozen model the policy is measured against: the same weights, loaded the same way. With
        # LoRA there is none: the model with its adapter switched off is the reference.
        reference = load_model(AutoModelForCausalLM, config.model, "causal-LM fine-tuning", **kwargs)
        reference.requires_grad_(False).eval()
    return Prepared(
        model=model,
        train=parts["train"],
        eval=parts.get("eval"),
        collator=None,  # TRL's own: prompt, chosen and rejected padded side by side
        notes=notes,
        chat=True,
        reference=reference,
        pairs=samples,
    )
