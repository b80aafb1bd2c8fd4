"""The TrainerCallback that turns Trainer progress into run events and a stop flag into a stop."""

from __future__ import annotations

import contextlib
import math
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from desktop.core.system.errors import DiskError, human_size
from desktop.core.system.events import (
    CheckpointEvent,
    Event,
    LogEvent,
    MemoryEvent,
    ProgressEvent,
    StartedEvent,
)
from desktop.core.system.messages import msg
from desktop.core.training import distributed


def free_bytes(folder: str) -> int:
    """Free space on the drive of ``folder`` (a seam for tests that fake a full disk)."""
    return shutil.disk_usage(folder).free


def checkpoint_bytes(model: Any) -> int:
    """About what one checkpoint of ``model`` takes: weights plus AdamW's two states per trained weight."""
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    trained = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return int((weights + trained * 4 * 2) * 1.1)


def nvml_memory(index: int) -> tuple[int, int] | None:
    """(used, total) bytes of GPU ``index`` as the driver sees them (all processes), or ``None``.

    Needs nvidia-ml-py and an NVIDIA driver; any failure means "not available". The index is
    torch's, which matches NVML's unless CUDA_VISIBLE_DEVICES reorders devices.
    """
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:
        return None
    try:
        info = pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(index))
        return int(info.used), int(info.total)
    except Exception:
        return None
    finally:
        with contextlib.suppress(Exception):
            pynvml.nvmlShutdown()


def memory_event(step: int) -> MemoryEvent:
    """Memory now: torch's allocator and NVML's device figures (on GPU) and the process's RSS."""
    import psutil
    import torch

    rss = psutil.Process().memory_info().rss
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        index = torch.cuda.current_device()
        used, total = nvml_memory(index) or (None, None)
        return MemoryEvent(
            step=step,
            device=f"cuda:{index}",
            allocated_bytes=torch.cuda.memory_allocated(),
            reserved_bytes=torch.cuda.memory_reserved(),
            peak_bytes=torch.cuda.max_memory_allocated(),
            rss_bytes=rss,
            device_used_bytes=used,
            device_total_bytes=total,
            gpus_used_bytes=_gpus_used() if distributed.world().distributed else [],
        )
    return MemoryEvent(step, "cpu", None, None, None, rss)


def _gpus_used() -> list[int]:
    """NVML's used bytes of each GPU the processes on this machine train on (rank 0 reads them all)."""
    import os

    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    local = int(os.environ.get("LOCAL_WORLD_SIZE", distributed.world().size))
    ids = [int(i) for i in visible.split(",") if i.strip().isdigit()] if visible else list(range(local))
    used = []
    for index in ids[:local]:
        reading = nvml_memory(index)
        if reading is None:
            return []
        used.append(reading[0])
    return used


class TokenCount:
    """The non-padding tokens of the batches collated so far, counted where the collator runs (this
    process, or the data loader's worker processes: the count is shared memory) from the attention
    mask on the CPU, before the batch reaches the GPU: no synchronisation with the GPU."""

    def __init__(self) -> None:
        import multiprocessing

        self._tokens = multiprocessing.Value("q", 0)
        self._slots = multiprocessing.Value("q", 0)
        self._padded = multiprocessing.Value("q", 0)

    def add(self, tokens: int, slots: int | None = None, padded: int | None = None) -> None:
        """Count a batch: its real tokens, its token slots (real and padding; ``tokens`` when none), and
        the slots the batch would take padded to its longest example (``slots`` when it is so)."""
        slots = tokens if slots is None else slots
        for value, add in ((self._tokens, tokens), (self._slots, slots), (self._padded, padded or slots)):
            with value.get_lock():
                value.value += add

    @property
    def tokens(self) -> int:
        return int(self._tokens.value)

    @property
    def slots(self) -> int:
        """Real and padding tokens: what the model computed on."""
        return int(self._slots.value)

    @property
    def padded(self) -> int:
        """The slots the same batches would have taken padded to their longest example."""
        return int(self._padded.value)


class CountingCollator:
    """A data collator that also counts the real tokens of each batch into a :class:`TokenCount`."""

    def __init__(self, collate: Callable[[list[Any]], Any], count: TokenCount) -> None:
        self.collate, self.count = collate, count

    def __call__(self, features: list[Any]) -> Any:
        batch = self.collate(features)
        mask = batch.get("attention_mask") if hasattr(batch, "get") else None
        counted = getattr(self.collate, "last_counts", None)  # a padding-free batch has no mask
        if counted is not None:
            self.count.add(*counted)
        elif mask is None and hasattr(batch, "get") and batch.get("input_ids") is not None:
            self.count.add(int(batch["input_ids"].numel()))
        elif mask is not None:
            self.count.add(int(mask.sum()), int(mask.numel()))
        elif hasattr(batch, "get") and batch.get("chosen_attention_mask") is not None:
            # ORPO's batches: the chosen and the rejected sequences, each with its prompt
            masks = [batch[k] for k in ("chosen_attention_mask", "rejected_attention_mask") if k in batch]
            self.count.add(sum(int(m.sum()) for m in masks), sum(int(m.numel()) for m in masks))
        return batch  # pictures count no tokens: their rate is the samples' (samples/s)


class EventCallback(TrainerCallback):
    """Reports progress, logs, memory and checkpoints as events; stops when ``stop`` is set.

    Args:
        emit: Receives each event (only on the main process).
        stop: When set, training stops after the current optimizer step and saves a checkpoint.
        started: Fields of the :class:`StartedEvent` that the callback cannot know.
        tokens: What the collator counts: tokens per second are the real non-padding tokens trained
            on between two reports (evaluation batches left out).
        perplexity: Whether to add ``eval_perplexity`` (exp of the eval loss) to eval logs.
    """

    def __init__(
        self,
        emit: Callable[[Event], None],
        stop: threading.Event,
        started: dict[str, Any],
        tokens: TokenCount | None = None,
        perplexity: bool = False,
        elapsed_before: Callable[[int], float] | None = None,
    ) -> None:
        self._emit = emit
        self._elapsed_before = elapsed_before  # of a resumed run: its time until the step it goes on from
        self._offset = 0.0
        self._stop = stop
        self._started = started
        self._tokens = tokens
        self._mark: tuple[float, int] = (0.0, 0)  # (time, tokens) at the last report
        self._tokens_per_second: float | None = None
        self._padding_share: float | None = None
        self._slots_mark = (0, 0)
        self._padded_share: float | None = None
        self._perplexity = perplexity
        self._t0 = 0.0
        self._first_step = 0
        self._examples_per_step = 1
        self._world_size = 1
        self.stopped_early = False
        self.step = 0
        """The last step reached (where an out-of-memory error struck)."""
        self.touched = False
        """Whether the model's weights have changed (a step, or a checkpoint loaded)."""
        self.non_finite: Any = None
        """The trainer's :class:`~desktop.core.training.non_finite.NonFiniteWatch` (``make_trainer``)."""

    @property
    def first_step(self) -> int:
        """The step this ``train()`` call started from: the checkpoint's, after a resume."""
        return self._first_step

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._t0 = time.perf_counter()
        self._first_step = self.step = state.global_step
        if self._elapsed_before is not None and state.global_step:
            self._offset = self._elapsed_before(state.global_step)  # "Elapsed" goes on across a resume
        self.touched = self.touched or state.global_step > 0
        self._set_mark()
        self._examples_per_step = args.train_batch_size * args.gradient_accumulation_steps * args.world_size
        self._world_size = args.world_size
        if state.is_world_process_zero:
            self._emit(
                StartedEvent(
                    total_steps=state.max_steps, resumed_from_step=state.global_step, **self._started
                )
            )

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.step, self.touched = state.global_step, True
        if state.is_world_process_zero:
            self._report_step(args, state)
        # Checked after reporting, so a stop asked for while handling this step's event applies now.
        # With several processes every rank must stop at the same step: a stop seen by one is shared.
        stop = self._stop.is_set() if args.world_size == 1 else distributed.any_rank(self._stop.is_set())
        if stop and state.global_step < state.max_steps:
            control.should_training_stop = True
            control.should_save = True
            control.should_evaluate = False  # a stop saves where it is; the evaluation waits for the resume
            self.stopped_early = True
        if control.should_save:
            self._check_space(args, state, kwargs.get("model"))

    def on_epoch_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.stopped_early:  # the epoch ends because of the stop: its checkpoint is saved already, and
            control.should_save = control.should_evaluate = False  # a whole evaluation took ~20 s more
            return
        if control.should_save:
            self._check_space(args, state, kwargs.get("model"))

    def _check_space(self, args: Any, state: Any, model: Any) -> None:
        """Refuse to start a checkpoint the disk cannot hold: a torn one is worse than none."""
        if model is None:
            return
        folder = args.output_dir
        Path(folder).mkdir(parents=True, exist_ok=True)
        needed, free = checkpoint_bytes(model), free_bytes(folder)
        if free >= needed:
            return
        raise DiskError(
            msg(
                "Not enough disk space for the checkpoint at step {step}: it needs about {needed} in "
                "{folder}, and {free} are free.",
                step=state.global_step,
                needed=human_size(needed),
                folder=str(folder),
                free=human_size(free),
            ),
            msg(
                "Free some space (older runs in the runs folder are often large), then resume the run: it "
                "continues from its last checkpoint."
            ),
        )

    def _report_step(self, args: Any, state: Any) -> None:
        elapsed = time.perf_counter() - self._t0
        done = state.global_step - self._first_step
        rate = done / elapsed if elapsed > 0 and done > 0 else None
        samples = rate * self._examples_per_step if rate else None
        self._emit(
            ProgressEvent(
                step=state.global_step,
                total_steps=state.max_steps,
                epoch=float(state.epoch or 0.0),
                elapsed_s=self._offset + elapsed,
                eta_s=(state.max_steps - state.global_step) / rate if rate else None,
                samples_per_second=samples,
                tokens_per_second=self._measure_tokens(),
                padding_share=self._padding_share,
                padded_share=self._padded_share,
            )
        )
        if state.global_step % args.logging_steps == 0 or state.global_step == 1:
            self._emit(memory_event(state.global_step))

    def on_evaluate(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._set_mark()  # the evaluation's batches and time are not training throughput

    def _set_mark(self) -> None:
        self._mark = (time.perf_counter(), self._tokens.tokens if self._tokens else 0)
        self._slots_mark = (self._tokens.slots, self._tokens.padded) if self._tokens else (0, 0)

    def _measure_tokens(self) -> float | None:
        """Real tokens per second since the last report, smoothed over the last few reports."""
        if self._tokens is None:
            return None
        (then, before), now, count = self._mark, time.perf_counter(), self._tokens.tokens
        slots_before, padded_before = self._slots_mark
        slots, padded = self._tokens.slots, self._tokens.padded
        self._mark, self._slots_mark = (now, count), (slots, padded)
        if slots > slots_before and count >= before:
            self._padding_share = 1 - (count - before) / (slots - slots_before)
            self._padded_share = 1 - (count - before) / (padded - padded_before)
        if now <= then or count <= before:
            return self._tokens_per_second
        rate = (count - before) / (now - then) * self._world_size  # rank 0 counts its own share
        previous = self._tokens_per_second
        self._tokens_per_second = rate if previous is None else 0.7 * previous + 0.3 * rate
        return self._tokens_per_second

    def on_log(
        self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any
    ) -> None:
        if not state.is_world_process_zero or not logs:
            return
        metrics = {
            k: float(v) for k, v in logs.items() if isinstance(v, (int, float)) and not isinstance(v, bool)
        }
        if self._perplexity and "eval_loss" in metrics:
            metrics["eval_perplexity"] = math.exp(min(metrics["eval_loss"], 50.0))
        self._emit(LogEvent(step=state.global_step, epoch=float(state.epoch or 0.0), metrics=metrics))

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.is_world_process_zero:
            path = f"{args.output_dir}/checkpoint-{state.global_step}"
            self._emit(CheckpointEvent(step=state.global_step, path=path))


class SaveAtBest(TrainerCallback):
    """Saves a checkpoint at each evaluation during training that beats the best so far.

    Runs before the Trainer updates its best (``on_evaluate`` comes first), so ``state.best_metric``
    is still the previous best here.
    """

    def on_evaluate(self, args: Any, state: Any, control: Any, metrics: Any = None, **kwargs: Any) -> None:
        if not state.global_step or state.global_step >= state.max_steps or not metrics:
            return  # the base model's evaluation, or the last step's (which saves anyway)
        name = args.metric_for_best_model
        value = metrics.get(name if name.startswith("eval_") else f"eval_{name}")
        if not isinstance(value, (int, float)) or math.isnan(value):
            return
        best = state.best_metric
        if best is None or (value > best if args.greater_is_better else value < best):
            control.should_save = True
