"""Preference tuning with TRL: ``DPOTrainer`` or ``ORPOTrainer`` built like the other tasks' Trainer.

TRL owns the losses, the batching of a prompt with its two answers and the reward metrics it logs
(``rewards/accuracies``, ``rewards/margins``, ``rewards/chosen`` ..., ``eval_`` ones at each
evaluation); the run's events, plots, checkpoints, stop, resume and out-of-memory recovery are the
same as for every task, since both trainers are ``transformers.Trainer`` underneath.
"""

from __future__ import annotations

import os
from typing import Any

from desktop.core.settings.config import RunConfig
from desktop.core.system.errors import ConfigError, Problem
from desktop.core.system.messages import msg


def check_available() -> None:
    """Refuse preference tuning where TRL cannot be imported, saying what to install.

    Raises:
        ConfigError: TRL is not installed.
    """
    import importlib.util

    if importlib.util.find_spec("trl") is None:
        raise ConfigError([Problem("task", msg("preference tuning needs TRL: pip install trl."))])


def config_class(method: str) -> Any:
    """TRL's config class for ``method`` (``dpo`` or ``orpo``)."""
    if method == "orpo":
        _quiet_experimental()
        from trl.experimental.orpo import ORPOConfig

        return ORPOConfig
    from trl import DPOConfig

    return DPOConfig


def _quiet_experimental() -> None:
    """ORPO lives in ``trl.experimental`` (TRL 1.x moved it there, API unstable: pinned below 2), which
    warns on import; the run's log says which TRL trained it instead."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


def method_args(config: RunConfig) -> dict[str, Any]:
    """The method's own arguments: its beta, and the max length (the prompt keeps its start; answers
    are cut at the end)."""
    args: dict[str, Any] = {"beta": config.preference.beta, "max_length": config.training.max_length}
    if config.preference.method == "dpo":
        args |= {"truncation_mode": "keep_start", "padding_free": False, "precompute_ref_log_probs": False}
    return args


def make_preference_trainer(prepared: Any, args: Any, callbacks: list[Any], wrap_collator: Any) -> Any:
    """TRL's trainer for ``prepared`` (a preference task), with ``wrap_collator`` around its collator
    (which counts the tokens of each batch)."""
    import datasets

    config, task = prepared.config, prepared.task
    common = {
        "model": task.model,
        "args": args,
        "train_dataset": task.train,
        "eval_dataset": task.eval,
        "processing_class": prepared.tokenizer,
        "callbacks": callbacks,
    }
    # TRL tokenizes the pairs as it builds the trainer: said by the run's own "Tokenizing" line, not by
    # progress bars on the terminal.
    shown = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    try:
        if config.preference.method == "orpo":
            _quiet_experimental()
            from trl.experimental.orpo import ORPOTrainer

            trainer = ORPOTrainer(**common)
        else:
            from trl import DPOTrainer

            trainer = DPOTrainer(ref_model=task.reference, **common)
            _reference_without_copy(trainer)
    finally:
        if shown:
            datasets.enable_progress_bars()
    trainer.data_collator = wrap_collator(trainer.data_collator)
    return trainer


def _reference_without_copy(trainer: Any) -> None:
    """With LoRA, the reference is the model with its adapter switched off: TRL copies an adapter it is
    given into a second one named ``ref`` (for adapters trained before); ours is new (it starts as the
    base model exactly), so the copy goes, and a resumed run has the same reference as its start."""
    model = trainer.accelerator.unwrap_model(trainer.model)
    peft_config = getattr(model, "peft_config", None)
    if trainer.ref_model is None and peft_config and "ref" in peft_config:
        model.delete_adapter("ref")
        model.set_adapter("default")
