"""The three tasks: model class, preprocessing, collator and metrics for each."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

TASK_MODULES = {
    "classification": "desktop.core.tasks.classification",
    "causal-lm": "desktop.core.tasks.causal_lm",
    "seq2seq": "desktop.core.tasks.seq2seq",
}
TASK_NAMES = {
    "classification": "text classification",
    "causal-lm": "causal-LM fine-tuning",
    "seq2seq": "sequence-to-sequence",
}


@dataclass
class Prepared:
    """What a task hands the trainer.

    Attributes:
        model: The model, loaded with the task's head.
        train: Tokenized training examples (a list of feature dicts).
        eval: Tokenized evaluation examples, or ``None``.
        collator: Batches examples, padding them.
        compute_metrics: Eval metrics from predictions, or ``None`` when the loss says it all.
        seq2seq: Whether to use ``Seq2SeqTrainer``.
        notes: Things the user should know (rows left out, truncation).
    """

    model: Any
    train: list[dict[str, Any]]
    eval: list[dict[str, Any]] | None
    collator: Any
    compute_metrics: Any = None
    seq2seq: bool = False
    notes: list[str] = field(default_factory=list)


def auto_class(task: str) -> Any:
    """The transformers Auto class that loads a model with the task's head."""
    import transformers

    names = {
        "classification": "AutoModelForSequenceClassification",
        "causal-lm": "AutoModelForCausalLM",
        "seq2seq": "AutoModelForSeq2SeqLM",
    }
    return getattr(transformers, names[task])


def task_module(task: str) -> Any:
    """The module that implements ``task``."""
    return importlib.import_module(TASK_MODULES[task])
