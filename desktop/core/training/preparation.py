"""Preparing a run: the data read and checked, the tokenizer and model loaded, the Trainer built."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from desktop.core.runs.folders import RunDir
from desktop.core.settings.config import RunConfig
from desktop.core.settings.config_sections import IMAGE_TASKS
from desktop.core.system.events import Event, PreparingEvent
from desktop.core.system.messages import msg
from desktop.core.training.recovery import RunRecovery


@dataclass
class Prepared:
    """What a run trains: its config (with the column mapping used), tokenizer (for pictures: the image
    processor), task (model and tokenized data), row counts, and the Trainer's options for this machine."""

    config: RunConfig
    tokenizer: Any
    task: Any
    num_train: int
    num_eval: int
    trainer_options: dict[str, Any]


class StoppedWhilePreparing(Exception):
    """Stop was pressed before training began: nothing was written, nothing to resume."""


def prepare(
    config: RunConfig,
    on_event: Callable[[Event], None],
    stop: threading.Event,
    on_data: Callable[[Any], None] | None = None,
    validated: bool = False,
) -> Prepared:
    """Read and check the data, load the tokenizer and the model, and tokenize, each phase said.

    ``on_data`` sees the checked data (``CheckedData``) before anything heavy is loaded: a resume
    compares it with the data the run started on, and may refuse it there. ``validated``: the
    config's checks ran already (a run session's), so they are not run again.

    Raises:
        StoppedWhilePreparing: Stop was pressed between two phases.
    """
    from desktop.core.data.checks import check_tokenizer, load_and_check
    from desktop.core.data.preview import sample_texts
    from desktop.core.data.tasks import Tokenizing, task_module
    from desktop.core.hub.models import load_tokenizer

    def phase(message: str) -> None:  # Stop works between any two phases of the preparation
        if stop.is_set():
            raise StoppedWhilePreparing()
        on_event(PreparingEvent(message))

    phase(msg("Reading the data"))
    checked = load_and_check(config, validated)  # the same checks as preview and validate
    if on_data is not None:
        on_data(checked)
    train, eval_, columns, notes = checked.train, checked.eval, checked.guess.columns, checked.notes
    phase(msg("Loading PyTorch and Transformers"))
    from desktop.core.system.heap import freeze_training_stack
    from desktop.core.system.lazy import import_training_stack

    import_training_stack()  # the slow import, reported as its own phase: the Trainer's modules too
    freeze_training_stack()  # before the run makes its model: the collections of the run skip the imports

    from desktop.core.settings.options import Capabilities, apply_lora, model_kwargs, resolve

    options = resolve(config, Capabilities.detect())  # refuses what this machine cannot run
    if config.task == "preference":
        from desktop.core.training.preference import check_available

        check_available()
    if config.task == "grpo":
        from desktop.core.data.rewards import rewards_of
        from desktop.core.training.grpo import check_available as grpo_available

        grpo_available()
        rewards_of(config.grpo)  # a reward file that does not load is said before the model loads
    phase(
        msg("Loading the processor and the model")
        if config.task in IMAGE_TASKS
        else msg("Loading the tokenizer and the model")
    )
    from transformers import set_seed

    set_seed(config.training.seed)  # new heads (a classifier, LoRA) start the same way every run
    if config.task == "vision-chat":  # pictures and text: the model's processor reads both
        from desktop.core.hub.models import load_processor

        tokenizer = load_processor(config.model)
    elif config.task in IMAGE_TASKS:  # pictures: the model's image processor reads them, no tokenizer
        from desktop.core.hub.models import load_image_processor

        tokenizer = load_image_processor(config.model)
    else:
        tokenizer = load_tokenizer(config.model)
        texts = sample_texts(config, train, checked.guess, tokenizer, 500)
        for warning in check_tokenizer(config, tokenizer, [t for values in texts.values() for t in values]):
            notes.append(warning)
            on_event(PreparingEvent(msg("Warning: {warning}", warning=warning)))
    if stop.is_set():
        raise StoppedWhilePreparing()
    last_tenth = {"train": -1, "eval": -1}

    def tokenized(part: str, rows: int, share: float) -> None:  # a line per tenth, not per chunk
        tenth = int(share * 10)
        if tenth != last_tenth[part]:
            last_tenth[part] = tenth
            template = (
                msg("Tokenizing {rows} training rows: {percent}%", rows=rows, percent=tenth * 10)
                if part == "train"
                else msg("Tokenizing {rows} evaluation rows: {percent}%", rows=rows, percent=tenth * 10)
            )
            on_event(PreparingEvent(template))

    def check_stop() -> None:
        if stop.is_set():
            raise StoppedWhilePreparing()

    tokenizing = Tokenizing(config, tokenizer, tokenized, check_stop, cache=True)
    task = task_module(config.task).prepare(
        config, tokenizer, train, eval_, columns, model_kwargs(options), tokenizing
    )
    if stop.is_set():
        raise StoppedWhilePreparing()
    from desktop.core.training.non_finite import check_model

    check_model(task.model, config.model.name)  # NaN weights train nothing: said now, not as loss NaN
    training_args = dict(options.training_args)
    if training_args.get("gradient_checkpointing") and not getattr(
        task.model, "supports_gradient_checkpointing", True
    ):  # convolutional networks (ResNet, ConvNeXt): the Trainer would stop at its first step
        training_args.update(gradient_checkpointing=False, gradient_checkpointing_kwargs=None)
        task.notes.append(
            msg(
                "{model} cannot recompute its activations (gradient checkpointing): it trains without.",
                model=config.model.name,
            )
        )
    if config.lora.enabled or config.lora.qlora:
        task.model = apply_lora(task.model, config)
    from desktop.core.training import best

    if (cadence := best.cadence_note(config, task.eval is not None)) is not None:
        task.notes.append(cadence)
    for note in task.notes:  # rows left out, truncation: said as the run starts, not only after it
        on_event(PreparingEvent(note))
    task.notes = notes + options.notes + task.notes
    # The run folder records the mapping actually used, so the run can be repeated exactly.
    resolved = replace(config, columns=columns)
    return Prepared(resolved, tokenizer, task, len(task.train), len(task.eval or []), training_args)


def _current_names(cls: Any, options: dict[str, Any]) -> dict[str, Any]:
    """Use transformers' newer argument names where this version has them (5.x renamed some)."""
    import dataclasses

    names = {f.name for f in dataclasses.fields(cls)}
    renamed = {
        "gradient_checkpointing": "activation_checkpointing",
        "gradient_checkpointing_kwargs": "activation_checkpointing_kwargs",
    }
    return {renamed[k] if k in renamed and renamed[k] in names else k: v for k, v in options.items()}


def _training_args(
    config: RunConfig, output_dir: Path, has_eval: bool, seq2seq: bool, options: dict[str, Any]
) -> Any:
    from transformers import Seq2SeqTrainingArguments, TrainingArguments

    t = config.training
    eval_strategy = ("steps" if t.eval_steps else "epoch") if has_eval else "no"
    cls = Seq2SeqTrainingArguments if seq2seq else TrainingArguments
    extra: dict[str, Any] = {}
    if config.task == "preference":  # TRL's config: TrainingArguments and the method's own fields
        from desktop.core.training.preference import config_class, method_args

        cls, extra = config_class(config.preference.method), method_args(config)
    if config.task == "grpo":
        from desktop.core.training import grpo

        cls, extra = grpo.config_class(), grpo.method_args(config)
    from desktop.core.training import best

    cadence: dict[str, Any] = {
        "save_strategy": "steps" if t.save_steps else "epoch",
        "save_steps": t.save_steps or 500,
        **best.arguments(config, has_eval),  # checkpoints on evaluations, to keep the best
    }
    options = _current_names(cls, {**options, **_distributed_args(), **extra, **cadence})
    return cls(
        output_dir=str(output_dir),
        run_name=Path(output_dir).parent.name,  # in MLflow: the run folder's name (checkpoints are in it)
        num_train_epochs=t.epochs,
        max_steps=t.max_steps or -1,
        learning_rate=t.learning_rate,
        lr_scheduler_type=t.scheduler,
        warmup_steps=t.warmup if t.warmup < 1 else int(t.warmup),
        weight_decay=t.weight_decay,
        per_device_train_batch_size=t.batch_size,
        per_device_eval_batch_size=t.eval_batch_size or t.batch_size,
        gradient_accumulation_steps=t.gradient_accumulation,
        eval_strategy=eval_strategy,
        eval_steps=t.eval_steps or None,
        save_total_limit=2,  # and the best checkpoint, when kept
        logging_strategy="steps",
        logging_steps=t.logging_steps,
        # A NaN step's loss is logged as NaN (the filter logged it as the others' mean, and a run that
        # was NaN at every step as loss 0); non_finite.py stops the run instead.
        logging_nan_inf_filter=False,
        seed=t.seed,
        disable_tqdm=True,
        remove_unused_columns=False,
        **options,
    )


def _distributed_args() -> dict[str, Any]:
    """With several processes: gloo where there is no NCCL (CPU, Windows), and CPU without a GPU."""
    from desktop.core.training import distributed

    if not distributed.world().distributed:
        return {}
    import torch

    cpu = not torch.cuda.is_available()
    args: dict[str, Any] = {"use_cpu": cpu} if cpu else {}
    backend = distributed.backend(cpu)
    if backend:
        args["ddp_backend"] = backend
    return args


def _elapsed_until(run: RunDir, step: int) -> float:
    """The training time a run had spent until ``step``, from its recorded progress (0 when unknown)."""
    from desktop.core.system.events import ProgressEvent

    elapsed = 0.0
    try:
        for event in run.events():
            if isinstance(event, ProgressEvent) and event.step <= step:
                elapsed = event.elapsed_s
    except (OSError, ValueError):
        return 0.0
    return elapsed


def make_trainer(
    prepared: Prepared,
    run: RunDir,
    emit: Callable[[Event], None],
    stop: threading.Event,
    recovering: RunRecovery,
) -> tuple[Any, Any]:
    """The Trainer for ``prepared`` and the callback that reports its events."""
    from transformers import PrinterCallback, Seq2SeqTrainer, Trainer

    from desktop.core.data.tasks.packing import PaddingFreeCollator
    from desktop.core.settings.options import LIGER_ARCHITECTURES
    from desktop.core.training import best, distributed
    from desktop.core.training.callbacks import CountingCollator, EventCallback, TokenCount
    from desktop.core.training.grouping import length_grouped
    from desktop.core.training.non_finite import watch

    config, task = prepared.config, prepared.task
    args = _training_args(
        config, run.checkpoints_dir, task.eval is not None, task.seq2seq, prepared.trainer_options
    )
    tokens = TokenCount()  # the real tokens of each batch, counted as the collator makes it
    callback = EventCallback(
        emit,
        stop,
        started={
            "run_dir": str(run.path),
            "num_train_examples": prepared.num_train,
            "num_eval_examples": prepared.num_eval,
            "device": _device_name(args.device),
            "processes": distributed.world().size,
            "oom_recovery": recovering.enabled and args.device.type == "cuda",
        },
        tokens=tokens,
        perplexity=config.task == "causal-lm",
        elapsed_before=lambda step: _elapsed_until(run, step),
    )
    kept = best.callbacks(config, task.eval is not None)  # save at each new best, stop early
    model_type = getattr(task.model.config, "model_type", "")
    if config.performance.liger_kernel and model_type not in LIGER_ARCHITECTURES:
        task.notes.append(
            msg(
                "Liger kernels: {model_type} is not an architecture they know; it trains without them.",
                model_type=model_type or "?",
            )
        )
    if config.task == "preference":
        from desktop.core.training.preference import make_preference_trainer

        pairs = prepared.num_train + prepared.num_eval
        emit(PreparingEvent(msg("Tokenizing {rows} preference pairs", rows=pairs)))
        trainer = make_preference_trainer(
            prepared, args, [callback, *kept], lambda collate: CountingCollator(collate, tokens)
        )
    elif config.task == "grpo":
        from desktop.core.training.grpo import make_grpo_trainer, writer_words

        emit(PreparingEvent(writer_words()))
        trainer = make_grpo_trainer(prepared, args, [callback, *kept], emit)
    else:
        trainer_cls = Seq2SeqTrainer if task.seq2seq else Trainer
        grouped = config.performance.group_by_length and config.task not in IMAGE_TASKS  # pictures: one size
        if grouped and not isinstance(task.collator, PaddingFreeCollator):
            trainer_cls = length_grouped(trainer_cls)  # padded batches: of examples of about one length
        trainer = trainer_cls(
            model=task.model,
            args=args,
            data_collator=CountingCollator(task.collator, tokens),
            train_dataset=task.train,
            eval_dataset=task.eval,
            processing_class=prepared.tokenizer,
            compute_metrics=task.compute_metrics,
            callbacks=[callback, *kept],
        )
        log_the_mean_loss(trainer)  # TRL's preference losses are never scaled by the process count
    trainer.remove_callback(PrinterCallback)  # our events replace its prints
    from desktop.core.training.weight_layout import checkpoints_in_own_layout

    checkpoints_in_own_layout(task.model)  # so that a resume and the best checkpoint read them back whole
    if config.output.report_to:  # where each tracker logs, and a tracker that fails is said, not fatal
        from desktop.core.system.events import AdviceEvent
        from desktop.core.training.trackers import guard, where

        for line in where(config.output.report_to, args.output_dir, run.path.name):
            emit(PreparingEvent(line))
        guard(
            trainer,
            lambda words: emit(AdviceEvent(step=trainer.state.global_step, concern="tracker", message=words)),
        )
    callback.non_finite = watch(trainer)  # a NaN loss stops the run, said at once
    if task.eval is not None:
        recovering.watch_evaluation(trainer)
    return trainer, callback


def logged_loss_scale(trainer: Any) -> int:
    """How many times too large the Trainer logs the training loss (1 on one process).

    With ``average_tokens_across_devices`` (on by default), a model that takes ``num_items_in_batch``
    has its loss multiplied by the process count in ``compute_loss``, so that DDP's mean of the
    gradients is the mean over every token; the logged ``loss`` is the mean of those products, so two
    processes logged 1.39 where one logs 0.69 and curves of runs on 1 and 2 GPUs did not compare.
    """
    args = trainer.args
    if args.world_size <= 1 or not getattr(args, "average_tokens_across_devices", False):
        return 1
    if not (
        getattr(trainer, "model_accepts_loss_kwargs", False) or getattr(trainer, "compute_loss_func", None)
    ):
        return 1
    if args.n_gpu > 1:
        return args.n_gpu
    tensor_parallel = trainer.get_tp_size() if hasattr(trainer, "get_tp_size") else 1
    return max(1, trainer.accelerator.num_processes // max(1, tensor_parallel))


def log_the_mean_loss(trainer: Any) -> None:
    """Divide the logged training loss back to the mean per token, for our events and for TensorBoard or
    MLflow alike (the gradients keep the Trainer's scaling)."""
    scale = logged_loss_scale(trainer)
    if scale == 1:
        return
    log = trainer.log

    def mean_loss_log(logs: dict[str, float], *args: Any, **kwargs: Any) -> Any:
        for key in ("loss", "train_loss"):
            if isinstance(logs.get(key), (int, float)):
                logs[key] = logs[key] / scale
        return log(logs, *args, **kwargs)

    trainer.log = mean_loss_log


def _device_name(device: Any) -> str:
    import torch

    if device.type == "cuda":
        return f"cuda:{device.index or 0} ({torch.cuda.get_device_name(device)})"
    return str(device)
