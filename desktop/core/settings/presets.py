"""Presets for the memory and speed options, and "Fit my GPU": the fastest setting the estimate says fits."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from desktop.core.settings.config import RunConfig
from desktop.core.settings.memory import TIGHT, Estimate, ParamShapes, estimate
from desktop.core.settings.options import Capabilities
from desktop.core.system.messages import msg

GB = 1024**3
BATCH_SIZES = (64, 48, 32, 24, 16, 8, 4, 2, 1)  # multiples of 8 first: tensor cores like them


@dataclass
class FitResult:
    """A suggested config, what changed and why, its estimate, and notes that change nothing (a caveat,
    or why nothing could be done)."""

    config: RunConfig
    changes: list[str] = field(default_factory=list)
    estimate: Estimate | None = None
    fits: bool = True
    notes: list[str] = field(default_factory=list)


def presets_for(caps: Capabilities) -> tuple[str, ...]:
    """The presets that make a difference on this machine.

    ``fastest`` adds ``torch.compile`` to ``balanced``; where it cannot run (no CUDA GPU with
    Triton) the two would be the same, so only ``balanced`` is offered.
    """
    return ("fastest", "balanced", "lowest_memory") if compile_works(caps) else ("balanced", "lowest_memory")


def compile_works(caps: Capabilities) -> bool:
    """Whether torch.compile's inductor backend runs here (a CUDA GPU with Triton)."""
    return caps.cuda and caps.triton


def apply_preset(config: RunConfig, name: str, caps: Capabilities) -> FitResult:
    """``fastest``, ``balanced`` or ``lowest_memory``: a copy of ``config`` with the preset's options.

    ``balanced``: mixed precision where the GPU has it, fused AdamW, no recomputation, no compile.
    ``fastest``: the same plus ``torch.compile`` (a slow first step, then faster ones) and Liger's fused
    kernels where they run.
    ``lowest_memory``: batch size 1 with the same effective batch, gradient checkpointing, a small
    optimizer and LoRA; on the CPU it saves RAM but makes training slower, and says so.
    """
    new = copy.deepcopy(config)
    p, t = new.performance, new.training
    effective = t.batch_size * t.gradient_accumulation
    if name in ("fastest", "balanced"):
        p.precision, p.gradient_checkpointing, p.empty_cache_steps = "auto", False, 0
        p.optimizer, p.pin_memory, p.attention = "adamw_torch_fused", True, "auto"
        p.torch_compile = name == "fastest" and compile_works(caps)
        p.liger_kernel = name == "fastest" and caps.cuda and caps.triton and caps.liger
        if p.torch_compile:
            p.compile_backend = "inductor"
    elif name == "lowest_memory":
        p.precision, p.gradient_checkpointing, p.torch_compile = "auto", True, False
        p.optimizer = "adamw_bnb_8bit" if caps.bitsandbytes and caps.cuda else "adafactor"
        t.batch_size, t.gradient_accumulation = 1, effective
        new.lora.enabled = True
    else:
        raise ValueError(f"unknown preset {name!r}")
    notes = []
    if name == "lowest_memory" and not caps.cuda:
        notes.append(
            msg(
                "On this computer's CPU this saves RAM but makes every step slower (one example at a time, "
                "activations computed twice): use it only when RAM runs out."
            )
        )
    return FitResult(new, describe_changes(config, new), notes=notes)


def fit_gpu(
    config: RunConfig, full: ParamShapes, with_lora: ParamShapes | None, free_bytes: int, caps: Capabilities
) -> FitResult:
    """Search batch size (keeping the effective batch), checkpointing, optimizer and LoRA for the
    fastest setting whose estimate fits in ``free_bytes``; nothing is applied without the user.

    Args:
        config: The current config.
        full: Shapes of the model trained in full.
        with_lora: Shapes with LoRA adapters (``None`` to never suggest LoRA).
        free_bytes: Free memory of the GPU to fit.
        caps: What this machine can run (8-bit optimizers need bitsandbytes).
    """
    effective = config.training.batch_size * config.training.gradient_accumulation
    batches = [b for b in BATCH_SIZES if b <= effective and effective % b == 0] or [1]
    eight_bit = ["adamw_bnb_8bit"] if caps.bitsandbytes and caps.cuda else []
    optimizers = ["adamw_torch_fused", *eight_bit, "adafactor"]
    loras = [False] + ([True] if with_lora is not None else [])
    current = config.performance.optimizer
    # Changing the optimizer or training LoRA adapters changes what is learned, so they are
    # tiers of last resort, in that order. Within a tier the fastest fitting setting wins, by a
    # rough speed model: small batches leave the GPU idle, checkpointing recomputes (~20%).
    tiers = [(lora, opts) for lora in loras for opts in ([current], [o for o in optimizers if o != current])]
    for lora, tier_optimizers in tiers:
        best: tuple[float, RunConfig, Estimate] | None = None
        for checkpointing in (False, True):
            for optimizer in tier_optimizers:
                for batch in batches:
                    candidate = copy.deepcopy(config)
                    candidate.training.batch_size = batch
                    candidate.training.gradient_accumulation = effective // batch
                    candidate.performance.gradient_checkpointing = checkpointing
                    candidate.performance.optimizer = optimizer
                    candidate.lora.enabled = lora
                    result = estimate(with_lora if lora else full, candidate, mixed_precision=caps.cuda)
                    if result.total > free_bytes * TIGHT:
                        continue
                    speed = _speed(batch, checkpointing, optimizer)
                    if best is None or speed > best[0]:
                        best = (speed, candidate, result)
        if best is not None:
            return FitResult(best[1], describe_changes(config, best[1]), best[2], True)
    smallest = copy.deepcopy(config)
    smallest.training.batch_size, smallest.training.gradient_accumulation = 1, effective
    smallest.performance.gradient_checkpointing, smallest.performance.optimizer = True, optimizers[-1]
    smallest.lora.enabled = with_lora is not None
    result = estimate(with_lora if with_lora is not None else full, smallest, mixed_precision=caps.cuda)
    notes = [
        msg(
            "Even the smallest setting needs {needed} GB of the {free} GB free: "
            "choose a smaller model, a shorter max length, or a GPU with more memory.",
            needed=f"{result.total / GB:.1f}",
            free=f"{free_bytes / GB:.1f}",
        )
    ]
    return FitResult(config, [], result, False, notes)


def _speed(batch: int, checkpointing: bool, optimizer: str) -> float:
    """Relative throughput of a setting (only its order matters)."""
    occupancy = batch / (batch + 4)
    return (
        occupancy
        * (0.8 if checkpointing else 1.0)
        * {"adafactor": 0.95, "adamw_bnb_8bit": 0.97}.get(optimizer, 1.0)
    )


def describe_changes(old: RunConfig, new: RunConfig) -> list[str]:
    """What differs between two configs' memory and speed settings, with the reason for each."""
    changes = []
    ot, nt = old.training, new.training
    if (ot.batch_size, ot.gradient_accumulation) != (nt.batch_size, nt.gradient_accumulation):
        changes.append(
            msg(
                "batch size {batch} -> {new_batch}, gradient accumulation {accumulation} -> "
                "{new_accumulation} (the same {effective} examples per update)",
                batch=ot.batch_size,
                new_batch=nt.batch_size,
                accumulation=ot.gradient_accumulation,
                new_accumulation=nt.gradient_accumulation,
                effective=nt.batch_size * nt.gradient_accumulation,
            )
        )
    op, np_ = old.performance, new.performance
    if op.gradient_checkpointing != np_.gradient_checkpointing:
        changes.append(
            msg("gradient checkpointing on: far less activation memory, about 20% slower")
            if np_.gradient_checkpointing
            else msg("gradient checkpointing off: faster steps")
        )
    if op.optimizer != np_.optimizer:
        why = {
            "adafactor": msg("factored states, a fraction of AdamW's memory"),
            "adamw_bnb_8bit": msg("8-bit states, a quarter of AdamW's memory"),
            "adamw_torch_fused": msg("one fused kernel, faster on GPU"),
        }.get(np_.optimizer) or msg("the standard optimizer")
        changes.append(msg("optimizer {old} -> {new} ({why})", old=op.optimizer, new=np_.optimizer, why=why))
    if op.precision != np_.precision:
        changes.append(msg("precision {old} -> {new}", old=op.precision, new=np_.precision))
    if op.torch_compile != np_.torch_compile:
        changes.append(
            msg("torch.compile on: a slow first step, then faster ones")
            if np_.torch_compile
            else msg("torch.compile off: no compile wait")
        )
    if old.lora.enabled != new.lora.enabled:
        changes.append(
            msg("LoRA on (rank {rank}): only small adapters are trained", rank=new.lora.rank)
            if new.lora.enabled
            else msg("LoRA off: every weight is trained")
        )
    return changes
