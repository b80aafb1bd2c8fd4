"""One entry point for a run: ``run_training(config, on_event, stop) -> RunResult``."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import threading
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from desktop.core.runs.folders import RunDir
from desktop.core.settings.config import RunConfig
from desktop.core.system.errors import (
    InputError,
    check_writable,
    diagnose,
    disk_error,
    failure_stage,
    out_of_memory,
)
from desktop.core.system.events import (
    AdjustedEvent,
    Event,
    FailedEvent,
    FinishedEvent,
    PreparingEvent,
    RunResult,
    StoppedEvent,
)
from desktop.core.system.heap import collect, release_memory
from desktop.core.system.messages import msg
from desktop.core.system.paths import default_runs_dir
from desktop.core.training import recovery
from desktop.core.training.resume import remove_partial_checkpoints, resume_point, train_from

log = logging.getLogger(__name__)


@dataclass
class _Prepared:
    config: RunConfig
    tokenizer: Any
    task: Any
    num_train: int
    num_eval: int
    trainer_options: dict[str, Any]


def run_training(
    config: RunConfig,
    on_event: Callable[[Event], None],
    stop: threading.Event | None = None,
    *,
    resume: RunDir | None = None,
    origin: Path | None = None,
) -> RunResult:
    """Fine-tune a model as ``config`` says, reporting every step as an event.

    Never raises for bad input or a failed run: those end as a ``FailedEvent`` and a result with
    status ``invalid`` or ``failed``.

    Args:
        config: The run config.
        on_event: Receives every event (in the calling thread).
        stop: Set it to stop after the current step; a checkpoint is saved so the run can resume.
        resume: A stopped or interrupted run folder to continue from its newest good checkpoint.
        origin: The config file the run comes from, recorded so ``--resume`` finds this run.
    """
    from desktop.core.training import distributed

    stop = stop or threading.Event()
    runs_dir = Path(config.output.runs_dir) if config.output.runs_dir else default_runs_dir()
    main = distributed.world().main
    if not main:  # rank 0 reports and writes the run folder; the other ranks only train
        on_event = _ignore
    try:
        if resume is not None and main:
            resume.lock()  # before anything is written: one process per run folder
        elif main:
            check_writable(runs_dir, "runs folder")  # before the model loads, not after
        with distributed.main_first():  # rank 0 fills the tokenized cache, the others read it
            prepared = _prepare(config, on_event, stop)
    except _StoppedWhilePreparing:
        if resume is not None:
            resume.unlock()
        on_event(StoppedEvent(step=0, checkpoint=""))
        return RunResult("stopped")
    except InputError as exc:
        if resume is not None:
            resume.unlock()
        failure = FailedEvent(exc.message, exc.hint, traceback.format_exc())
        on_event(failure)
        return RunResult("invalid", failure=failure)
    except BaseException as exc:
        if resume is not None:
            resume.unlock()
        if not isinstance(exc, Exception):
            raise
        failure = _failure(exc, config)
        on_event(failure)
        return RunResult("failed", failure=failure)
    try:
        if stop.is_set():
            event = StoppedEvent(step=0, checkpoint="")
            on_event(event)
            return RunResult("stopped", notes=prepared.task.notes)
        if not main:
            run = resume or RunDir(distributed.share(None))
        else:
            run = resume or RunDir.create(runs_dir, prepared.config, origin)
            if resume is None:
                distributed.share(str(run.path))
        if resume is not None:
            prepared.config.output = resume.config().output
            prepared.config.launch = config.launch  # a resume may use another number of GPUs
            if main:
                prepared.config.save(resume.config_path)  # the schedule may have changed, e.g. more steps
    except OSError as exc:
        if resume is not None:
            resume.unlock()
        failure = _failure(disk_error(exc, runs_dir) or exc, config)
        on_event(failure)
        return RunResult("invalid", failure=failure)

    def emit(event: Event) -> None:
        if not main:
            return
        try:
            if not isinstance(event, PreparingEvent):  # what is being done now: shown, not recorded
                run.append(event)
        except OSError:  # a full disk: the run goes on (the checkpoint check stops it cleanly)
            log.warning("could not record an event in %s", run.events_path, exc_info=True)
        on_event(event)

    try:
        with _log_to(run.log_path) if main else contextlib.nullcontext():
            return _train(prepared, run, emit, stop, resume is not None, lambda c: _prepare(c, emit, stop))
    finally:
        run.unlock()
        run.close()
        release_memory()


def _ignore(event: Event) -> None:
    """Where the events of ranks other than 0 go."""


class _StoppedWhilePreparing(Exception):
    """Stop was pressed before training began: nothing was written, nothing to resume."""


def _prepare(config: RunConfig, on_event: Callable[[Event], None], stop: threading.Event) -> _Prepared:
    from desktop.core.data.checks import check_tokenizer, load_and_check
    from desktop.core.data.preview import sample_texts
    from desktop.core.data.tasks import Tokenizing, task_module
    from desktop.core.hub.models import load_tokenizer

    def phase(message: str) -> None:  # Stop works between any two phases of the preparation
        if stop.is_set():
            raise _StoppedWhilePreparing()
        on_event(PreparingEvent(message))

    phase(msg("Reading the data"))
    checked = load_and_check(config)  # the same checks as preview and validate
    train, eval_, columns, notes = checked.train, checked.eval, checked.guess.columns, checked.notes
    phase(msg("Loading PyTorch and Transformers"))
    from desktop.core.system.heap import freeze_training_stack
    from desktop.core.system.lazy import import_training_stack

    import_training_stack()  # the slow import, reported as its own phase: the Trainer's modules too
    freeze_training_stack()  # before the run makes its model: the collections of the run skip the imports

    from desktop.core.settings.options import Capabilities, apply_lora, model_kwargs, resolve

    options = resolve(config, Capabilities.detect())  # refuses what this machine cannot run
    phase(msg("Loading the tokenizer and the model"))
    from transformers import set_seed

    set_seed(config.training.seed)  # new heads (a classifier, LoRA) start the same way every run
    tokenizer = load_tokenizer(config.model)
    texts = sample_texts(config, train, checked.guess, tokenizer, 500)
    for warning in check_tokenizer(config, tokenizer, [t for values in texts.values() for t in values]):
        notes.append(warning)
        on_event(PreparingEvent(msg("Warning: {warning}", warning=warning)))
    if stop.is_set():
        raise _StoppedWhilePreparing()
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
            raise _StoppedWhilePreparing()

    tokenizing = Tokenizing(config, tokenizer, tokenized, check_stop, cache=True)
    task = task_module(config.task).prepare(
        config, tokenizer, train, eval_, columns, model_kwargs(options), tokenizing
    )
    if stop.is_set():
        raise _StoppedWhilePreparing()
    if config.lora.enabled or config.lora.qlora:
        task.model = apply_lora(task.model, config)
    task.notes = notes + options.notes + task.notes
    # The run folder records the mapping actually used, so the run can be repeated exactly.
    resolved = replace(config, columns=columns)
    return _Prepared(resolved, tokenizer, task, len(task.train), len(task.eval or []), options.training_args)


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
    options = _current_names(cls, {**options, **_distributed_args()})
    return cls(
        output_dir=str(output_dir),
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
        save_strategy="steps" if t.save_steps else "epoch",
        save_steps=t.save_steps or 500,
        save_total_limit=2,
        logging_strategy="steps",
        logging_steps=t.logging_steps,
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


def _train(
    prepared: _Prepared,
    run: RunDir,
    emit: Callable[[Event], None],
    stop: threading.Event,
    resuming: bool,
    rebuild: Callable[[RunConfig], _Prepared],
) -> RunResult:
    """Train, and on a GPU out-of-memory error go on with less memory (see :mod:`.recovery`).

    Args:
        rebuild: Prepares the run again for a config (a fresh model, when the run starts over).
    """
    from desktop.core.training import distributed

    main = distributed.world().main
    checkpoint = resume_point(run, emit) if resuming and main else None  # rank 0 sets damaged ones aside
    if resuming:
        checkpoint = distributed.share(checkpoint)
    before = {p.name for p in run.checkpoints()}
    recovering = _Recovery(run, emit, prepared.config, main)
    trainer = callback = None
    try:
        while True:
            adjustment = None
            try:
                trainer, callback = _make_trainer(prepared, run, emit, stop, recovering)
                if _wants_base_evaluation(prepared, resuming, recovering):
                    _evaluate_base(trainer, prepared, run, emit)
                if recovery.probe_wanted(trainer.args):
                    emit(PreparingEvent(msg("Trying the longest batch first: a lack of memory shows now")))
                    recovery.probe_longest_batch(trainer)
                # accelerate runs gc.collect() at train start: with the imports frozen (_prepare) it walks
                # only the run's own objects (desktop.core.system.heap).
                output = train_from(trainer, run, checkpoint, emit)
                break
            except Exception as exc:
                # Out of memory before the trainer exists (the model alone does not fit): a smaller
                # batch cannot help, and the failure says so.
                adjustment = recovering.next_setting(exc) if trainer is not None else None
                if adjustment is None:
                    raise
                reason = diagnose(exc, recovering.config).reason
                log.warning("out of memory, going on with less: %s", exc, exc_info=True)
            # Out of the except block: the error's frames, which hold GPU tensors, are gone.
            step, touched = (callback.step, callback.touched) if callback else (0, False)
            model, trainer, callback = prepared.task.model, None, None
            model.zero_grad(set_to_none=True)
            checkpoint = run.latest_checkpoint() if adjustment.keeps_checkpoints else None
            recovering.adjusted(adjustment, reason, step, _step_of(checkpoint))
            if checkpoint is None and (touched or not adjustment.keeps_checkpoints):
                prepared = model = None  # the weights have changed: load the model again
                free_gpu_memory()
                prepared = rebuild(recovering.config)
            else:
                from desktop.core.settings.options import Capabilities, resolve

                options = resolve(recovering.config, Capabilities.detect())
                prepared = replace(prepared, config=recovering.config, trainer_options=options.training_args)
                model = None
                free_gpu_memory()
        config, task = prepared.config, prepared.task
        step = trainer.state.global_step
        if callback.stopped_early:
            saved = run.latest_checkpoint()
            event = StoppedEvent(step=step, checkpoint=str(saved) if saved else "")
            emit(event)
            return RunResult("stopped", run.path, notes=task.notes)
        metrics = {"train_loss": float(output.training_loss)}
        if task.eval is not None:
            metrics.update(_final_eval(trainer, config))
        _save_model(trainer, run, prepared.tokenizer, config.lora.enabled or config.lora.qlora, recovering)
        if task.eval is not None:
            _write_evaluation(trainer, prepared, run, main, metrics)
        emit(FinishedEvent(step=step, model_dir=str(run.model_dir), metrics=metrics, notes=task.notes))
        return RunResult("finished", run.path, run.model_dir, metrics, notes=task.notes)
    except _StoppedWhilePreparing:  # stopped while the model loaded again after an out-of-memory error
        saved = run.latest_checkpoint()
        emit(StoppedEvent(step=_step_of(saved), checkpoint=str(saved) if saved else ""))
        return RunResult("stopped", run.path)
    except KeyboardInterrupt:
        # A second Ctrl-C: stop at once, but leave the folder as clean as a graceful stop would.
        if main:
            remove_partial_checkpoints(run, before)
        saved = run.latest_checkpoint()
        step = trainer.state.global_step if trainer is not None else 0
        emit(StoppedEvent(step=step, checkpoint=str(saved) if saved else ""))
        raise
    except Exception as exc:
        log.exception("training failed")
        if main:
            remove_partial_checkpoints(run, before)
        failure = _failure(disk_error(exc, run.path) or exc, recovering.config)
        emit(failure)
        return RunResult("failed", run.path, failure=failure, notes=prepared.task.notes if prepared else [])


def _make_trainer(
    prepared: _Prepared,
    run: RunDir,
    emit: Callable[[Event], None],
    stop: threading.Event,
    recovering: _Recovery,
) -> tuple[Any, Any]:
    """The Trainer for ``prepared`` and the callback that reports its events."""
    from transformers import PrinterCallback, Seq2SeqTrainer, Trainer

    from desktop.core.training import distributed
    from desktop.core.training.callbacks import CountingCollator, EventCallback, TokenCount

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
    )
    trainer_cls = Seq2SeqTrainer if task.seq2seq else Trainer
    trainer = trainer_cls(
        model=task.model,
        args=args,
        data_collator=CountingCollator(task.collator, tokens),
        train_dataset=task.train,
        eval_dataset=task.eval,
        processing_class=prepared.tokenizer,
        compute_metrics=task.compute_metrics,
        callbacks=[callback],
    )
    trainer.remove_callback(PrinterCallback)  # our events replace its prints
    if task.eval is not None:
        recovering.watch_evaluation(trainer)
    return trainer, callback


class _Recovery:
    """Out-of-memory recovery for one run: the settings it goes on with, each change reported and saved
    in the run's config (``performance.oom_recovery``; off with several processes, which must all
    change together)."""

    def __init__(self, run: RunDir, emit: Callable[[Event], None], config: RunConfig, main: bool) -> None:
        from desktop.core.training import distributed

        self.run, self.emit, self.config, self.main = run, emit, config, main
        self.enabled = config.performance.oom_recovery and not distributed.world().distributed
        self.attempts = 0

    def next_setting(self, exc: BaseException) -> recovery.Adjustment | None:
        """The setting to go on with after ``exc`` in training, or ``None`` (not out of memory, off,
        out of evaluation, or nothing left to try)."""
        found = out_of_memory(exc)
        if not self.enabled or found is None or failure_stage(found) in ("evaluation", "loading"):
            return None
        from desktop.core.settings.options import Capabilities

        caps = Capabilities.detect()
        adjustment = recovery.next_setting(
            self.config, self.attempts, eight_bit=caps.bitsandbytes and caps.cuda
        )
        if adjustment is not None and not adjustment.keeps_checkpoints and self.run.checkpoints():
            # A new optimizer or LoRA would start the run over and its checkpoints could not be
            # resumed: that is the user's choice to make (the failure offers it), not ours.
            return None
        return adjustment

    def adjusted(self, adjustment: recovery.Adjustment, reason: str, step: int, resumed_from: int) -> None:
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
                    adjustment = recovery.smaller_evaluation(self.config) if self.enabled and found else None
                    if adjustment is None:
                        raise
                    reason = diagnose(exc, self.config).reason
                free_gpu_memory()
                trainer.args.per_device_eval_batch_size = adjustment.config.training.eval_batch_size
                trainer.__dict__.pop("_eval_dataloaders", None)  # made with the old batch size
                step = trainer.state.global_step
                self.adjusted(adjustment, reason, step, step)

        trainer.evaluate = evaluate_with_less


BASE_EVALUATION_S = 60.0
"""The base model is evaluated before training when that takes less than this."""


def _wants_base_evaluation(prepared: _Prepared, resuming: bool, recovering: _Recovery) -> bool:
    """Once per run, before the first step, with evaluation rows, in one process."""
    from desktop.core.training import distributed

    config = prepared.config
    return (
        config.validation.evaluate_base
        and prepared.task.eval is not None
        and not resuming
        and recovering.attempts == 0
        and not distributed.world().distributed
    )


def _evaluate_base(trainer: Any, prepared: _Prepared, run: RunDir, emit: Callable[[Event], None]) -> None:
    """The base model's evaluation report, saved in the run folder for the before and after.

    Skipped (and said) when the first batches show it would take over :data:`BASE_EVALUATION_S`;
    a failure here is logged and training goes on.
    """
    import time

    import numpy as np

    from desktop.core.training import evaluation

    emit(PreparingEvent(msg("Evaluating the base model, for the figures before and after")))
    task, model = prepared.task, trainer.model
    classify = prepared.config.task == "classification"
    try:
        loader = trainer.get_eval_dataloader()
        batches, logits, labels, losses = len(loader), [], [], []
        started = time.perf_counter()
        first = 0.0
        for index, inputs in enumerate(loader):
            loss, batch_logits, batch_labels = trainer.prediction_step(
                model, inputs, prediction_loss_only=not classify
            )
            if classify:
                logits.append(batch_logits.float().cpu().numpy())
                labels.append(batch_labels.cpu().numpy())
            elif loss is not None:
                losses.append((float(loss), len(inputs["input_ids"])))
            elapsed = time.perf_counter() - started
            if index == 0:
                first = elapsed  # includes the warm-up; the second batch tells the pace
            elif index == 1 and first + (elapsed - first) * (batches - 1) > BASE_EVALUATION_S:
                emit(PreparingEvent(msg("The base model's evaluation would take over a minute: skipped")))
                return
        if classify:
            names = model.config.id2label
            report: Any = evaluation.classify_report(
                [str(names[i]) for i in range(len(names))],
                np.concatenate(labels).tolist(),
                evaluation.softmax(np.concatenate(logits)),
                task.eval_texts,
                task.label_counts,
            )
        else:
            rows = sum(n for _, n in losses)
            loss = sum(value * n for value, n in losses) / rows if rows else None
            answer = _answerer(trainer, prepared)
            left = BASE_EVALUATION_S - (time.perf_counter() - started)
            budget = max(0.0, min(evaluation.GENERATION_S, left))
            report = evaluation.generation_report(
                prepared.config.task, prepared.num_eval, loss, task.eval_pairs, answer, budget
            )
        evaluation.save(run.path, base=report)
    except Exception:
        log.warning("the base model could not be evaluated", exc_info=True)
    finally:
        model.train()


def _answerer(trainer: Any, prepared: _Prepared) -> Callable[[str, str], str]:
    """The model the trainer holds, answering one prompt as the try-it panel would (greedy)."""
    from desktop.core.data.tasks.generation import generate_reply

    chat, task, tokenizer = prepared.task.chat, prepared.config.task, prepared.tokenizer
    trainer.model.eval()

    def answer(prompt: str, reference: str) -> str:
        # As long as the reference and half again: a model that does not stop costs no more.
        longest = min(ANSWER_TOKENS, len(tokenizer(reference)["input_ids"]) * 3 // 2 + 8)
        reply = generate_reply(
            trainer.model,
            tokenizer,
            trainer.args.device,
            task,
            prompt,
            chat,
            max_new_tokens=longest,
            temperature=0,
        )
        return reply.strip()

    return answer


ANSWER_TOKENS = 256
"""The longest answer generated for the evaluation's samples and scores."""


def _write_evaluation(
    trainer: Any, prepared: _Prepared, run: RunDir, main: bool, metrics: dict[str, float]
) -> None:
    """Save the fine-tuned model's evaluation in the run folder (a classifier: per class, confusion
    matrix, wrong rows; a generator: loss, perplexity, answers beside references, BLEU / chrF).

    The model is already saved: a failure here is logged, and the run still finishes.
    """
    from desktop.core.training import distributed, evaluation

    task = prepared.task
    try:
        if prepared.config.task != "classification":
            if main and not distributed.world().distributed:  # one rank cannot generate with a split model
                report = evaluation.generation_report(
                    prepared.config.task,
                    prepared.num_eval,
                    metrics.get("eval_loss"),
                    task.eval_pairs,
                    _answerer(trainer, prepared),
                )
                evaluation.save(run.path, report)
            return
        output = trainer.predict(task.eval)  # every rank takes part; rank 0 writes
        if not main:
            return
        logits = output.predictions[0] if isinstance(output.predictions, tuple) else output.predictions
        names = trainer.model.config.id2label
        labels = [str(names[i]) for i in range(len(names))]
        report = evaluation.classify_report(
            labels, output.label_ids.tolist(), evaluation.softmax(logits), task.eval_texts, task.label_counts
        )
        evaluation.save(run.path, report)
    except Exception:
        log.warning("the evaluation could not be saved", exc_info=True)


def _step_of(checkpoint: Path | None) -> int:
    """The step a checkpoint folder (``checkpoint-120``) was saved at; 0 for none."""
    if checkpoint is None:
        return 0
    try:
        return int(checkpoint.name.rsplit("-", 1)[-1])
    except ValueError:
        return 0


def _failure(exc: BaseException, config: RunConfig) -> FailedEvent:
    found = diagnose(exc, config)
    remedies = [{"label": r.label, "changes": r.changes} for r in found.remedies]
    return FailedEvent(found.reason, found.remedy, traceback.format_exc(), remedies)


def _final_eval(trainer: Any, config: RunConfig) -> dict[str, float]:
    history = [h for h in trainer.state.log_history if "eval_loss" in h]
    if history and history[-1].get("step") == trainer.state.global_step:
        latest = history[-1]
    else:
        latest = trainer.evaluate()
    timing = ("_runtime", "_per_second")
    metrics = {
        k: float(v)
        for k, v in latest.items()
        if k.startswith("eval_") and not k.endswith(timing) and isinstance(v, (int, float))
    }
    if config.task == "causal-lm" and "eval_loss" in metrics:
        import math

        metrics["eval_perplexity"] = math.exp(min(metrics["eval_loss"], 50.0))
    return metrics


def _save_model(trainer: Any, run: RunDir, tokenizer: Any, lora: bool, recovering: _Recovery) -> None:
    """Save model and tokenizer under a temporary name, then move it into place.

    With LoRA the adapters are kept in ``adapter/`` and ``model/`` gets them merged into the base
    weights, so ``model/`` always loads with ``from_pretrained``. When the GPU runs out of memory
    saving or merging (and recovery is on), the model moves to the CPU and is saved from there.
    """
    from desktop.core.training import distributed

    main = distributed.world().main
    model_dir = run.model_dir
    partial = model_dir.with_name(model_dir.name + ".partial")

    def write() -> None:
        if main:
            shutil.rmtree(partial, ignore_errors=True)
        distributed.barrier()
        # Every rank calls save_model (FSDP and DeepSpeed gather the weights); rank 0 writes.
        if lora:
            trainer.save_model(str(run.path / "adapter"))
            merged = trainer.model.merge_and_unload()
            if main:
                merged.save_pretrained(str(partial))
                tokenizer.save_pretrained(str(partial))
        else:
            trainer.save_model(str(partial))

    try:
        on_cpu = False
        try:
            write()
        except Exception as exc:
            if not (recovering.enabled and out_of_memory(exc)):
                raise
            log.warning("out of memory saving the model; saving from the CPU", exc_info=True)
            on_cpu = True
        if on_cpu:  # out of the except block, so the error's frames (and their GPU tensors) are gone
            trainer.model.to("cpu")
            free_gpu_memory()
            recovering.emit(
                PreparingEvent(
                    msg("The GPU ran out of memory saving the model: saving it from the CPU instead")
                )
            )
            write()
    except BaseException:
        if main:
            shutil.rmtree(partial, ignore_errors=True)
        raise
    distributed.barrier()
    if not main:
        return
    if model_dir.exists():
        shutil.rmtree(model_dir)
    os.replace(partial, model_dir)


def _device_name(device: Any) -> str:
    import torch

    if device.type == "cuda":
        return f"cuda:{device.index or 0} ({torch.cuda.get_device_name(device)})"
    return str(device)


class _RedactingFormatter(logging.Formatter):
    """Log lines without credentials: tokens and passwords in URLs become ``***``."""

    def format(self, record: logging.LogRecord) -> str:
        from desktop.core.system.secrets import redact

        return redact(super().format(record))


@contextlib.contextmanager
def _log_to(path: Path) -> Iterator[None]:
    """Copy this package's and transformers' log records into the run's ``train.log``."""
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(_RedactingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    loggers = [logging.getLogger(name) for name in ("desktop", "transformers", "huggingface_hub")]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeHandler(handler)
        handler.close()


def free_gpu_memory() -> None:
    """Return the GPU memory nothing refers to any more (after an out-of-memory error)."""
    import sys

    collect()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.empty_cache()
