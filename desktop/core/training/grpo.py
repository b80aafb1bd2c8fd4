"""Reasoning with rewards: TRL's ``GRPOTrainer`` built like the other tasks' Trainer.

TRL samples ``num_generations`` answers to each prompt, scores them with the rewards the run chose
(:mod:`desktop.core.data.rewards`, weighted), and moves the model toward the answers that scored above
their group's mean; it logs ``reward``, ``reward_std``, ``rewards/<name>/mean``, the completions'
lengths and (with a beta) the KL. The run's events, plots, checkpoints, stop and resume are the same as
for every task, since the trainer is ``transformers.Trainer`` underneath.
"""

from __future__ import annotations

from typing import Any

from desktop.core.settings.config import RunConfig
from desktop.core.system.errors import ConfigError, Problem
from desktop.core.system.messages import msg


def check_available() -> None:
    """Refuse a reasoning run where TRL's GRPO cannot be imported, saying what to install.

    Raises:
        ConfigError: TRL is not installed.
    """
    import importlib.util

    if importlib.util.find_spec("trl") is None:
        raise ConfigError([Problem("task", msg("reasoning with rewards needs TRL: pip install trl."))])


def config_class() -> Any:
    from trl import GRPOConfig

    return GRPOConfig


def method_args(config: RunConfig) -> dict[str, Any]:
    """GRPO's own arguments: the answers per prompt, their length and temperature, beta, and the
    rewards' weights (in the order :func:`reward_functions` gives the rewards)."""
    from desktop.core.data.rewards import rewards_of

    g = config.grpo
    return {
        "num_generations": g.num_generations,
        "max_completion_length": g.max_completion_length,
        "temperature": g.temperature,
        "beta": g.beta,
        "reward_weights": [scored.weight for scored in rewards_of(g)],
        "log_completions": False,  # ours: a few sampled answers with their rewards in the run's log
    }


def make_grpo_trainer(prepared: Any, args: Any, callbacks: list[Any]) -> Any:
    """TRL's ``GRPOTrainer`` for ``prepared`` (a reasoning task), with the run's rewards."""
    import datasets
    from trl import GRPOTrainer

    from desktop.core.data.rewards import rewards_of

    config, task = prepared.config, prepared.task
    shown = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    try:
        return GRPOTrainer(
            model=task.model,
            reward_funcs=[scored.function for scored in rewards_of(config.grpo)],
            args=args,
            train_dataset=task.train,
            eval_dataset=task.eval,
            processing_class=prepared.tokenizer,
            callbacks=callbacks,
        )
    finally:
        if shown:
            datasets.enable_progress_bars()
