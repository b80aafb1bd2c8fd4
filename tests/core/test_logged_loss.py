"""The training loss is logged as the mean per token whatever the number of processes (the 2-process
run itself: tests/cli/test_processes_cli.py)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from desktop.core.training.preparation import log_the_mean_loss, logged_loss_scale


def _trainer(world_size: int, accepts_loss_kwargs: bool = True, average: bool = True) -> SimpleNamespace:
    logged: list[dict] = []
    return SimpleNamespace(
        args=SimpleNamespace(world_size=world_size, average_tokens_across_devices=average, n_gpu=1),
        model_accepts_loss_kwargs=accepts_loss_kwargs,
        compute_loss_func=None,
        accelerator=SimpleNamespace(num_processes=world_size),
        get_tp_size=lambda: 1,
        log=lambda logs, *args: logged.append(dict(logs)),
        logged=logged,
    )


@pytest.mark.parametrize(
    ("trainer", "scale"),
    [
        (_trainer(1), 1),
        (_trainer(2), 2),
        (_trainer(4), 4),
        (_trainer(2, accepts_loss_kwargs=False), 1),  # the loss is not scaled by the Trainer then
        (_trainer(2, average=False), 1),
    ],
)
def test_the_scale_the_trainer_put_on_the_loss_is_known(trainer: SimpleNamespace, scale: int) -> None:
    assert logged_loss_scale(trainer) == scale


def test_the_loss_and_the_runs_mean_loss_are_divided_back_and_nothing_else() -> None:
    trainer = _trainer(2)
    log_the_mean_loss(trainer)
    trainer.log({"loss": 1.386, "learning_rate": 5e-5, "grad_norm": 2.0})
    trainer.log({"train_loss": 1.38, "train_runtime": 10.0})
    assert trainer.logged == [
        {"loss": pytest.approx(0.693), "learning_rate": 5e-5, "grad_norm": 2.0},
        {"train_loss": pytest.approx(0.69), "train_runtime": 10.0},
    ]
