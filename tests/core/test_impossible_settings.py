"""Settings that cannot work are refused before training, each in one sentence naming its field."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.core.data.checks import load_and_check
from desktop.core.data.model_checks import readable_positions
from desktop.core.system.errors import ConfigError
from tests.core.helpers import make_config


def test_a_max_length_beyond_the_models_positions_is_refused_before_training(
    tiny_bert: Path, samples: Path, tmp_path: Path
) -> None:
    """Today: a tensor-size RuntimeError at step 1, and advice to resume from no checkpoint."""
    config = make_config("classification", tiny_bert, [samples / "reviews.csv"], tmp_path, max_length=1024)
    with pytest.raises(ConfigError) as info:
        load_and_check(config)
    (problem,) = info.value.problems
    assert problem.field == "training.max_length"
    assert "is 1024" in problem.message and "at most 512 tokens" in problem.message
    config.training.max_length = 512  # as much as it reads
    assert len(load_and_check(config).train) > 100


def test_position_tables_are_read_as_each_model_uses_them() -> None:
    roberta = {"model_type": "xlm-roberta", "max_position_embeddings": 514, "pad_token_id": 1}
    assert readable_positions(roberta) == 512  # positions start after the padding index
    assert readable_positions({"model_type": "gpt2", "n_positions": 1024}) == 1024
    assert readable_positions({"model_type": "t5", "relative_attention_num_buckets": 32}) is None  # no limit


@pytest.mark.parametrize(("warmup", "refused"), [(500.0, True), (5.0, False), (0.5, False)])
def test_a_warm_up_longer_than_the_run_is_refused(
    warmup: float, refused: bool, tiny_bert: Path, samples: Path, tmp_path: Path
) -> None:
    """Today the learning rate is still rising when the run ends, and nothing says so."""
    config = make_config("classification", tiny_bert, [samples / "reviews.csv"], tmp_path, warmup=warmup)
    config.training.max_steps = 0  # by epochs: 1 epoch of about 130 rows in batches of 16, 9 steps
    config.training.epochs = 1.0
    if not refused:
        load_and_check(config)
        return
    with pytest.raises(ConfigError) as info:
        load_and_check(config)
    (problem,) = info.value.problems
    assert problem.field == "training.warmup"
    assert "is 500 steps, but the whole run is 9 steps" in problem.message and "0.1" in problem.message


def test_millions_of_steps_are_asked_about_with_a_button_that_confirms_them(
    tiny_bert: Path, samples: Path, tmp_path: Path
) -> None:
    """Today epochs = 20000 for 2 starts a run of weeks without a word."""
    from desktop.core.training.run import run_training

    config = make_config("classification", tiny_bert, [samples / "reviews.csv"], tmp_path, batch_size=1)
    config.training.max_steps, config.training.epochs = 0, 20000.0  # 135 rows a epoch: 2,700,000 steps
    result = run_training(config, lambda event: None)

    assert result.status == "invalid"
    assert (
        "training.epochs: makes 2,700,000 optimizer steps (20000 epochs of 135 rows)" in result.failure.reason
    )
    assert "3 days" in result.failure.reason and "--set training.max_steps=2700000" in result.failure.reason
    (remedy,) = result.failure.remedies  # the Train page's button: the user says they mean it
    assert remedy["label"] == "Train all 2,700,000 steps" and remedy["changes"] == {
        "training.max_steps": 2700000
    }
    config.training.max_steps = 2_700_000
    assert len(load_and_check(config).train) == 135  # accepted once the length is the user's own
