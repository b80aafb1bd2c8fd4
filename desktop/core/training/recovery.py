"""Out of memory that fixes itself (``performance.oom_recovery``).

After a CUDA out-of-memory error the run goes on with less memory, in an order that keeps what it
learns where it can:

1. half the micro-batch and twice the gradient accumulation: the same effective batch, so the same
   updates (from the last checkpoint, which stays valid);
2. gradient checkpointing (the same result, about 20% slower), then halving again down to 1;
3. the tiers Fit my GPU falls back to: a smaller optimizer, then LoRA. These change what is learned
   and checkpoints cannot carry over, so the run starts again from the beginning, and only while it
   has no checkpoint to lose (otherwise the failure offers them as remedies, for the user to choose).

At most :data:`MAX_ATTEMPTS` changes per run. An evaluation that runs out of memory only halves the
evaluation batch. Before the first step, :func:`probe_longest_batch` runs the longest batch of the
data forward and backward, so a run that cannot fit says so in seconds rather than after an hour.
:class:`RunRecovery` applies this to one run: it takes each change, saves it in the run's config and
reports it.
"""

from __future__ import annotations

import copy
import heapq
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from desktop.core.runs.folders import RunDir
from desktop.core.settings.config import RunConfig
from desktop.core.system.errors import diagnose, failure_stage, out_of_memory
from desktop.core.system.events import AdjustedEvent, Event
from desktop.core.system.messages import msg

MAX_ATTEMPTS = 5
"""Changes tried in one run before the out-of-memory error is reported like any failure."""
SMALL_OPTIMIZERS = ("adafactor", "adamw_bnb_8bit")

FIELDS = (
    "training.batch_size",
    "training.gradient_accumulation",
    "training.eval_batch_size",
    "performance.gradient_checkpointing",
    "performance.optimizer",
    "lora.enabled",
)
"""The settings recovery may change (and an undo restores)."""


@dataclass(frozen=True)
class Adjustment:
    """The next setting to try.

    Attributes:
        config: The run's config with the change.
        changes: ``{"section.field": value}`` now; ``previous``: the same fields before.
        described: Each change and why, for the user.
        keeps_checkpoints: Whether the run's checkpoints go on with the new setting (a new optimizer
            or LoRA start the run again).
    """

    config: RunConfig
    changes: dict[str, Any]
    previous: dict[str, Any]
    described: list[str]
    keeps_checkpoints: bool = True


def next_setting(config: RunConfig, attempt: int, eight_bit: bool = False) -> Adjustment | None:
    """What to try after the training ran out of memory, or ``None`` when nothing is left to try.

    Args:
        config: The setting that ran out of memory.
        attempt: Changes already made in this run (0 the first time).
        eight_bit: Whether 8-bit optimizers run here (bitsandbytes on CUDA).
    """
    from desktop.core.settings.presets import describe_changes

    if attempt >= MAX_ATTEMPTS:
        return None
    new = copy.deepcopy(config)
    t, p = new.training, new.performance
    if t.batch_size > 1 and (attempt == 0 or p.gradient_checkpointing):
        half = _half(t.batch_size)
        t.gradient_accumulation = t.gradient_accumulation * t.batch_size // half
        t.batch_size = half
    elif not p.gradient_checkpointing:
        p.gradient_checkpointing = True
    elif p.optimizer not in SMALL_OPTIMIZERS:
        p.optimizer = "adamw_bnb_8bit" if eight_bit else "adafactor"
    elif not (new.lora.enabled or new.lora.qlora):
        new.lora.enabled = True
    else:
        return None
    return _adjustment(config, new, describe_changes(config, new))


def smaller_evaluation(config: RunConfig) -> Adjustment | None:
    """Half the evaluation batch after an evaluation ran out of memory (training is unchanged)."""
    t = config.training
    current = t.eval_batch_size or t.batch_size
    if current <= 1 or config.task == "grpo":  # a reasoning run's evaluation batch holds whole groups
        return None
    new = copy.deepcopy(config)
    new.training.eval_batch_size = current // 2
    described = [
        msg(
            "evaluation batch {old} -> {new} (evaluation only: training is unchanged)",
            old=current,
            new=current // 2,
        )
    ]
    return _adjustment(config, new, described)


def _adjustment(old: RunConfig, new: RunConfig, described: list[str]) -> Adjustment:
    before = {name: _get(old, name) for name in FIELDS}
    after = {name: _get(new, name) for name in FIELDS}
    changed = [name for name in FIELDS if before[name] != after[name]]
    keeps = old.performance.optimizer == new.performance.optimizer and old.lora.enabled == new.lora.enabled
    return Adjustment(
        new,
        {name: after[name] for name in changed},
        {name: before[name] for name in changed},
        described,
        keeps,
    )


def _get(config: RunConfig, dotted: str) -> Any:
    section, name = dotted.split(".")
    return getattr(getattr(config, section), name)


def _half(batch: int) -> int:
    """The largest divisor of ``batch`` up to half of it: the effective batch stays exactly the same."""
    return next(d for d in range(batch // 2, 0, -1) if batch % d == 0)


# --------------------------------------------------------------------------- the longest batch first


def longest_rows(dataset: Any, count: int) -> list[int]:
    """The indices of the ``count`` longest examples (input and label tokens; a preference pair: its
    prompt and longer answer) of a tokenized dataset."""
    import numpy as np

    lengths = dataset.lengths() if hasattr(dataset, "lengths") else pair_lengths(dataset)
    if lengths is not None:  # measured from the offsets, no example read
        return np.argsort(-np.asarray(lengths), kind="stable")[:count].tolist()

    def length(index: int) -> int:
        example = dataset[index]
        labels = example.get("labels")
        return len(example["input_ids"]) + (len(labels) if isinstance(labels, list) else 0)

    return heapq.nlargest(count, range(len(dataset)), key=length)


def pair_lengths(dataset: Any) -> Any:
    """Each preference pair's longer sequence (its prompt and its longer answer) in TRL's tokenized
    pairs, read from the Arrow columns at once, or ``None`` for other data. DPO keeps ``prompt_ids``
    apart from ``chosen_ids`` and ``rejected_ids``; ORPO's ``chosen_input_ids`` hold the prompt."""
    names = set(getattr(dataset, "column_names", None) or ())
    if {"prompt_ids", "chosen_ids", "rejected_ids"} <= names:
        prompt, answers = "prompt_ids", ("chosen_ids", "rejected_ids")
    elif {"chosen_input_ids", "rejected_input_ids"} <= names:
        prompt, answers = "", ("chosen_input_ids", "rejected_input_ids")
    else:
        return None
    import numpy as np
    import pyarrow.compute as pc

    table = dataset.select_columns([c for c in (prompt, *answers) if c]).with_format("arrow")[:]

    def counts(name: str) -> Any:
        return pc.list_value_length(table[name]).to_numpy(zero_copy_only=False)

    longest = np.maximum(counts(answers[0]), counts(answers[1]))
    return longest + counts(prompt) if prompt else longest


def probe_wanted(args: Any) -> bool:
    """Whether to probe the longest batch: on a CUDA GPU, in one process (elsewhere there is no
    out-of-memory error to find early: the CPU uses RAM, and several processes must step together),
    without torch.compile (the eager pass would need more memory than the compiled steps)."""
    return args.device.type == "cuda" and args.world_size == 1 and not args.torch_compile


def probe_longest_batch(trainer: Any) -> list[int]:
    """One forward and backward pass on the longest batch of the training data, with the run's
    precision and checkpointing, before the first step. Raises the out-of-memory error the first
    long batch would, in seconds. Nothing is learned: gradients are dropped and the random state is
    restored. Returns the rows it used."""
    import torch

    dataset, args, model = trainer.train_dataset, trainer.args, trainer.model
    rows = longest_rows(dataset, args.per_device_train_batch_size)
    batch = trainer.data_collator([dataset[i] for i in rows])
    inputs = {k: v.to(args.device) if hasattr(v, "to") else v for k, v in batch.items()}
    if getattr(args, "activation_checkpointing", getattr(args, "gradient_checkpointing", False)):
        enable = getattr(model, "activation_checkpointing_enable", None)
        (enable or model.gradient_checkpointing_enable)()
    devices = [args.device] if args.device.type == "cuda" else []
    model.train()
    with torch.random.fork_rng(devices=devices):
        try:
            with trainer.accelerator.autocast():
                loss = trainer.compute_loss(model, inputs)
            loss.backward()
        finally:
            model.zero_grad(set_to_none=True)
            del inputs
    return rows


class RunRecovery:
    """Out-of-memory recovery for one run: the settings it goes on with, each change reported and saved
    in the run's config (``performance.oom_recovery``; off with several processes, which must all
    change together)."""

    def __init__(self, run: RunDir, emit: Callable[[Event], None], config: RunConfig, main: bool) -> None:
        from desktop.core.training import distributed

        self.run, self.emit, self.config, self.main = run, emit, config, main
        self.enabled = config.performance.oom_recovery and not distributed.world().distributed
        self.attempts = 0

    def next_setting(self, exc: BaseException) -> Adjustment | None:
        """The setting to go on with after ``exc`` in training, or ``None`` (not out of memory, off,
        out of evaluation, or nothing left to try)."""
        found = out_of_memory(exc)
        if not self.enabled or found is None or failure_stage(found) in ("evaluation", "loading"):
            return None
        from desktop.core.settings.options import Capabilities

        caps = Capabilities.detect()
        # This module's next_setting: the change to try for the run's config and attempts so far.
        adjustment = next_setting(self.config, self.attempts, eight_bit=caps.bitsandbytes and caps.cuda)
        if adjustment is not None and not adjustment.keeps_checkpoints and self.run.checkpoints():
            # A new optimizer or LoRA would start the run over and its checkpoints could not be
            # resumed: that is the user's choice to make (the failure offers it), not ours.
            return None
        return adjustment

    def adjusted(self, adjustment: Adjustment, reason: str, step: int, resumed_from: int) -> None:
        """Take ``adjustment``: save it in the run's config and report it."""
        self.attempts += 1
        self.config = adjustment.config
        if self.main:
            self.config.save(self.run.config_path)
        self.emit(
            AdjustedEvent(
                step=step,
                reason=reason,
                changes=adjustment.changes,
                previous=adjustment.previous,
                described=adjustment.described,
                resumed_from=resumed_from,
                attempt=self.attempts,
            )
        )

    def watch_evaluation(self, trainer: Any) -> None:
        """Make ``trainer.evaluate`` halve the evaluation batch when it runs out of memory."""
        evaluate = trainer.evaluate

        def evaluate_with_less(*args: Any, **kwargs: Any) -> Any:
            while True:
                try:
                    return evaluate(*args, **kwargs)
                except Exception as exc:
                    found = out_of_memory(exc)
                    adjustment = smaller_evaluation(self.config) if self.enabled and found else None
                    if adjustment is None:
                        raise
                    reason = diagnose(exc, self.config).reason
                free_gpu_memory()
                trainer.args.per_device_eval_batch_size = adjustment.config.training.eval_batch_size
                trainer.__dict__.pop("_eval_dataloaders", None)  # made with the old batch size
                step = trainer.state.global_step
                self.adjusted(adjustment, reason, step, step)

        trainer.evaluate = evaluate_with_less


def free_gpu_memory() -> None:
    """Return the GPU memory nothing refers to any more (after an out-of-memory error)."""
    import sys

    from desktop.core.system.heap import collect

    collect()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.empty_cache()
