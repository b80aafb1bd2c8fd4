"""Reasoning with rewards: TRL's ``GRPOTrainer`` built like the other tasks' Trainer.

TRL samples ``num_generations`` answers to each prompt, scores them with the rewards the run chose
(:mod:`desktop.core.data.rewards`, weighted), and moves the model toward the answers that scored above
their group's mean; it logs ``reward``, ``reward_std``, ``rewards/<name>/mean``, the completions'
lengths and (with a beta) the KL. The run's events, plots, checkpoints, stop and resume are the same as
for every task, since the trainer is ``transformers.Trainer`` underneath.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from desktop.core.settings.config import RunConfig
from desktop.core.system.errors import ConfigError, Problem
from desktop.core.system.events import Event, SampleEvent
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
    rewards' weights (in the order :func:`desktop.core.data.rewards.rewards_of` gives them)."""
    from desktop.core.data.rewards import rewards_of

    g, t = config.grpo, config.training
    evaluated = t.eval_batch_size or t.batch_size
    # TRL's evaluation writes num_generations_eval answers per prompt, a whole number of prompts per batch.
    per_prompt = max(d for d in range(1, g.num_generations + 1) if evaluated % d == 0)
    return {
        "num_generations": g.num_generations,
        "num_generations_eval": per_prompt,
        "max_completion_length": g.max_completion_length,
        "temperature": g.temperature,
        "beta": g.beta,
        "reward_weights": [scored.weight for scored in rewards_of(g)],
        "log_completions": False,  # ours: a few sampled answers with their rewards in the run's log
        **vllm_args(t.max_length + g.max_completion_length),
    }


VLLM_MEMORY = 0.3
"""vLLM beside the training, on the same GPU: the share of its memory vLLM may take (TRL's colocate mode)."""


def vllm_args(longest: int = 0) -> dict[str, Any]:
    """Answers written by vLLM (TRL's colocate mode) on Linux with a CUDA GPU when vLLM is installed,
    its context cut to ``longest`` tokens (prompt and answer: a 128k-token model would otherwise ask for
    a cache of 128k); otherwise by transformers' ``generate`` (no arguments)."""
    import importlib.util
    import sys

    if not sys.platform.startswith("linux") or importlib.util.find_spec("vllm") is None:
        return {}
    import torch

    if not torch.cuda.is_available():
        return {}
    found = {"use_vllm": True, "vllm_mode": "colocate", "vllm_gpu_memory_utilization": VLLM_MEMORY}
    return {**found, "vllm_max_model_length": longest} if longest else found


def writer_words() -> Any:
    """Who writes the answers, for the run's log."""
    return msg("Answers are written by vLLM.") if vllm_args() else msg("Answers are written by transformers.")


SAMPLE_TEXT = 600
"""Characters of a sampled answer kept in the log."""


class SampleKeeper:
    """Wraps the rewards so that every ``every`` steps the best and the worst answer of a batch, with
    what each reward gave them, go to the run's log (:class:`SampleEvent`)."""

    def __init__(self, scored: list[Any], emit: Callable[[Event], None], every: int) -> None:
        self.scored, self.emit, self.every = scored, emit, max(1, every)
        self.trainer: Any = None
        self._scores: dict[str, list[float | None]] = {}
        self._last = -self.every

    def functions(self) -> list[Callable[..., list[float | None]]]:
        return [self._wrap(i, s) for i, s in enumerate(self.scored)]

    def _wrap(self, index: int, scored: Any) -> Callable[..., list[float | None]]:
        def reward(prompts: list[Any], completions: list[Any], **columns: Any) -> list[float | None]:
            values = scored.function(prompts, completions, **columns)
            self._scores[scored.name] = values
            if index == len(self.scored) - 1:
                self._show(prompts, completions)
            return values

        reward.__name__ = scored.name  # TRL logs rewards/<name>/mean
        return reward

    def _show(self, prompts: list[Any], completions: list[Any]) -> None:
        from desktop.core.data.rewards import text_of

        step = self.trainer.state.global_step if self.trainer is not None else 0
        training = self.trainer is None or self.trainer.model.training  # not the evaluation's answers
        if step - self._last < self.every or not completions or not training:
            return
        self._last = step
        totals = [
            sum(s.weight * (self._scores[s.name][i] or 0.0) for s in self.scored)
            for i in range(len(completions))
        ]
        order = sorted(range(len(completions)), key=totals.__getitem__)
        for i in dict.fromkeys((order[-1], order[0])):  # the best, then the worst (once when alike)
            rewards = {s.name: self._scores[s.name][i] for s in self.scored}
            prompt = prompts[i]
            asked = prompt[-1]["content"] if isinstance(prompt, list) and prompt else str(prompt)
            self.emit(
                SampleEvent(
                    step,
                    str(asked)[:SAMPLE_TEXT],
                    text_of(completions[i])[:SAMPLE_TEXT],
                    rewards,
                    round(totals[i], 4),
                )
            )


def make_grpo_trainer(prepared: Any, args: Any, callbacks: list[Any], emit: Callable[[Event], None]) -> Any:
    """TRL's ``GRPOTrainer`` for ``prepared`` (a reasoning task), with the run's rewards; a few sampled
    answers with their rewards go to ``emit`` as training goes."""
    import datasets
    from trl import GRPOTrainer

    from desktop.core.data.rewards import rewards_of

    config, task = prepared.config, prepared.task
    keeper = SampleKeeper(rewards_of(config.grpo), emit, config.training.logging_steps * 5)
    shown = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    try:
        trainer = GRPOTrainer(
            model=task.model,
            reward_funcs=keeper.functions(),
            args=args,
            train_dataset=task.train,
            eval_dataset=task.eval,
            processing_class=prepared.tokenizer,
            callbacks=callbacks,
        )
    finally:
        if shown:
            datasets.enable_progress_bars()
    keeper.trainer = trainer
    return trainer
