"""A run's evaluation: the base model before training, the fine-tuned model after, saved in the run."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop.core.runs.folders import RunDir
from desktop.core.settings.config import RunConfig
from desktop.core.system.events import AdviceEvent, Event, PreparingEvent
from desktop.core.system.messages import msg
from desktop.core.training.preparation import Prepared
from desktop.core.training.recovery import RunRecovery

log = logging.getLogger(__name__)


BASE_EVALUATION_S = 60.0
"""The base model is evaluated before training when that takes less than this."""


def wants_base_evaluation(prepared: Prepared, resuming: bool, recovering: RunRecovery) -> bool:
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


def evaluate_base(trainer: Any, prepared: Prepared, run: RunDir, emit: Callable[[Event], None]) -> None:
    """The base model's evaluation report, saved in the run folder for the before and after.

    Skipped (and said) when the first batches show it would take over :data:`BASE_EVALUATION_S`;
    a failure here is logged and training goes on.
    """
    import time

    import numpy as np

    from desktop.core.training import evaluation

    emit(PreparingEvent(msg("Evaluating the base model, for the figures before and after")))
    task, model = prepared.task, trainer.model
    classify = prepared.config.task in ("classification", "image-classification")
    if prepared.config.task == "preference":
        _measure_preferences(trainer, prepared, run, base=True)
        return
    if prepared.config.task == "grpo":
        _measure_rewards(trainer, prepared, run, base=True)
        return
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
            if loss is not None:  # a classifier's too: its header leads with the loss when it is the measure
                rows = inputs["labels"] if "pixel_values" in inputs else inputs["input_ids"]
                losses.append((float(loss), len(rows)))
            elapsed = time.perf_counter() - started
            if index == 0:
                first = elapsed  # includes the warm-up; the second batch tells the pace
            elif index == 1 and first + (elapsed - first) * (batches - 1) > BASE_EVALUATION_S:
                emit(PreparingEvent(msg("The base model's evaluation would take over a minute: skipped")))
                return
        rows = sum(n for _, n in losses)
        loss = sum(value * n for value, n in losses) / rows if rows else None
        if classify:
            names = model.config.id2label
            report: Any = evaluation.classify_report(
                [str(names[i]) for i in range(len(names))],
                np.concatenate(labels).tolist(),
                evaluation.softmax(np.concatenate(logits)),
                task.eval_texts,
                task.label_counts,
                pictures=prepared.config.task == "image-classification",
            )
            report.loss = loss
        else:
            answer = _answerer(trainer, prepared)
            left = BASE_EVALUATION_S - (time.perf_counter() - started)
            budget = max(0.0, min(evaluation.GENERATION_S, left))
            report = evaluation.generation_report(
                prepared.config.task,
                prepared.num_eval,
                loss,
                task.eval_pairs,
                answer,
                budget,
                _pictures(task),
            )
        evaluation.save(run.path, base=report)
    except Exception:
        log.warning("the base model could not be evaluated", exc_info=True)
    finally:
        model.train()


def _answerer(trainer: Any, prepared: Prepared) -> Callable[[str, str], str]:
    """The model the trainer holds, answering one prompt as the try-it panel would (greedy)."""
    if prepared.config.task == "vision-chat":
        return _picture_answerer(trainer, prepared)
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


def _pictures(task: Any) -> list[str]:
    """The evaluation samples' pictures, as paths ("" for a picture held as bytes)."""
    return [str(p) if isinstance(p, Path) else "" for p in getattr(task, "pictures", None) or []]


def _picture_answerer(trainer: Any, prepared: Prepared) -> Callable[[str, str], str]:
    """A vision-language model answering the evaluation's samples: each prompt (``[picture] question``)
    with its picture."""
    from desktop.core.data.tasks.vision_chat import answer_picture

    task, processor = prepared.task, prepared.tokenizer
    asked = {
        prompt: (picture, prompt.split("] ", 1)[-1])
        for (prompt, _), picture in zip(task.eval_pairs, task.pictures, strict=False)
    }
    trainer.model.eval()

    def answer(prompt: str, reference: str) -> str:
        picture, question = asked[prompt]
        tokenizer = getattr(processor, "tokenizer", processor)
        longest = min(ANSWER_TOKENS, len(tokenizer(reference)["input_ids"]) * 3 // 2 + 8)
        return answer_picture(trainer.model, processor, trainer.args.device, picture, question, longest)

    return answer


def _measure_preferences(
    trainer: Any, prepared: Prepared, run: RunDir, base: bool, metrics: dict[str, float] | None = None
) -> None:
    """Which answer of the held-out pairs the model prefers, saved as the base or the tuned model's."""
    from desktop.core.training import evaluation, preference_evaluation

    model, pairs = trainer.model, prepared.task.pairs
    measure = preference_evaluation.measure
    longest = prepared.config.training.max_length
    try:
        if base:
            report = measure(model, prepared.tokenizer, pairs, trainer.args.device, longest)
            evaluation.save(run.path, base=report)
            return
        before = (evaluation.load(run.path) or {}).get("base")
        before = before if isinstance(before, preference_evaluation.PreferenceReport) else None
        if before is not None and before.rows:  # the same pairs as before, however long they take
            report = measure(
                model, prepared.tokenizer, pairs, trainer.args.device, longest, math.inf, before.rows
            )
        else:
            report = measure(model, prepared.tokenizer, pairs, trainer.args.device, longest)
        metrics = metrics or {}
        report.method = prepared.config.preference.method
        report.reward_accuracy = metrics.get("eval_rewards/accuracies")
        report.reward_margin = metrics.get("eval_rewards/margins")
        evaluation.save(run.path, preference_evaluation.before_and_after(report, before, pairs))
    except Exception:
        log.warning("the preference evaluation could not be saved", exc_info=True)
    finally:
        model.train()


def _measure_rewards(trainer: Any, prepared: Prepared, run: RunDir, base: bool) -> None:
    """The share of the held-out prompts whose greedy answer earns each reward, saved as the base or the
    tuned model's (the tuned model answers the prompts the base model answered)."""
    from desktop.core.data.tasks.generation import generate_reply
    from desktop.core.training import evaluation, grpo_evaluation

    config, tokenizer, model = prepared.config, prepared.tokenizer, trainer.model
    prompts = [prompt for prompt, _ in prepared.task.pairs]
    references = [reference for _, reference in prepared.task.pairs]
    model.eval()

    def answer(prompt: Any) -> str:
        reply = generate_reply(
            model,
            tokenizer,
            trainer.args.device,
            "causal-lm",
            prompt,
            True,
            max_new_tokens=config.grpo.max_completion_length,
            temperature=0,
        )
        return reply.strip()

    try:
        before = None if base else (evaluation.load(run.path) or {}).get("base")
        rows = before.rows if isinstance(before, grpo_evaluation.RewardReport) and before.rows else None
        report = grpo_evaluation.measure(answer, prompts, references, config.grpo, rows=rows)
        if base:
            evaluation.save(run.path, base=report)
        else:
            evaluation.save(run.path, report)
    except Exception:
        log.warning("the rewards of the held-out prompts could not be measured", exc_info=True)
    finally:
        model.train()


ANSWER_TOKENS = 256
"""The longest answer generated for the evaluation's samples and scores."""


def write_evaluation(
    trainer: Any, prepared: Prepared, run: RunDir, main: bool, metrics: dict[str, float]
) -> None:
    """Save the fine-tuned model's evaluation in the run folder (a classifier: per class, confusion
    matrix, wrong rows; a generator: loss, perplexity, answers beside references, BLEU / chrF).

    The model is already saved: a failure here is logged, and the run still finishes.
    """
    from desktop.core.training import distributed, evaluation

    task = prepared.task
    if prepared.config.task == "preference":
        if main and not distributed.world().distributed:
            _measure_preferences(trainer, prepared, run, base=False, metrics=metrics)
        return
    if prepared.config.task == "grpo":
        if main and not distributed.world().distributed:
            _measure_rewards(trainer, prepared, run, base=False)
        return
    try:
        if prepared.config.task not in ("classification", "image-classification"):
            if main and not distributed.world().distributed:  # one rank cannot generate with a split model
                report = evaluation.generation_report(
                    prepared.config.task,
                    prepared.num_eval,
                    metrics.get("eval_loss"),
                    task.eval_pairs,
                    _answerer(trainer, prepared),
                    pictures=_pictures(task),
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
            labels,
            output.label_ids.tolist(),
            evaluation.softmax(logits),
            task.eval_texts,
            task.label_counts,
            pictures=prepared.config.task == "image-classification",
        )
        report.loss = (output.metrics or {}).get("test_loss")
        evaluation.save(run.path, report)
    except Exception:
        log.warning("the evaluation could not be saved", exc_info=True)


def final_eval(trainer: Any, config: RunConfig, kept: dict[str, float] | None = None) -> dict[str, float]:
    """The evaluation metrics of the run's model: ``kept``, the evaluation at the best checkpoint when
    the model is that checkpoint's; else the last step's (the latest evaluation, if made at that step)."""
    history = [h for h in trainer.state.log_history if "eval_loss" in h]
    if kept is not None:
        latest = kept
    elif history and history[-1].get("step") == trainer.state.global_step:
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


def preference_advice(run_dir: Path, config: RunConfig, step: int) -> AdviceEvent | None:
    """The coach's word on a preference run's held-out pairs before and after training, as saved by
    :func:`write_evaluation` (``None`` when the tuned model prefers the chosen answers more often, or
    nothing was measured)."""
    from desktop.core.training import evaluation, preference_evaluation
    from desktop.core.training.coach import preference_outcome

    saved = evaluation.load(run_dir) or {}
    tuned, base = saved.get("fine_tuned"), saved.get("base")
    if not isinstance(tuned, preference_evaluation.PreferenceReport) or not isinstance(
        base, preference_evaluation.PreferenceReport
    ):
        return None
    return preference_outcome(config, step, base.accuracy, tuned.accuracy, tuned.reward_accuracy)
