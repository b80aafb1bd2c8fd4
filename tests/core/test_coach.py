"""The coach (issue 54): a run's curves read as an experienced person would, each trouble said once with
its figures and its fix; a healthy run gets no word."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from desktop.core.runs.folders import RunDir
from desktop.core.settings.config import RunConfig
from desktop.core.system.events import AdviceEvent, LogEvent, StartedEvent
from desktop.core.training.coach import Coach
from desktop.core.training.run import run_training
from tests.core.helpers import Recorder, make_config


def _config(task: str = "classification", rate: float = 5e-5) -> RunConfig:
    config = RunConfig(task=task)
    config.training.learning_rate = rate
    return config


def _started(total: int = 100) -> StartedEvent:
    return StartedEvent("run", total, 90, 10, "cpu")


def _watch(coach: Coach, losses: list[float], evals: dict[int, dict[str, float]] | None = None) -> list:
    """Feed a run: a training loss every 5 steps, evaluations at the steps given; what the coach said."""
    said = coach.see(_started())
    for i, loss in enumerate(losses):
        step = 5 * (i + 1)
        said += coach.see(LogEvent(step, step / 50, {"loss": loss}))
        if evals and step in evals:
            said += coach.see(LogEvent(step, step / 50, evals[step]))
    return said


def test_a_healthy_run_gets_no_word() -> None:
    losses = [0.7 * math.exp(-i / 6) + 0.05 for i in range(20)]
    evals = {s: {"eval_loss": 0.6 - s / 400, "eval_accuracy": 0.6 + s / 400} for s in (25, 50, 75, 100)}
    assert _watch(Coach(_config(), num_labels=2), losses, evals) == []


def test_validation_loss_rising_while_training_loss_falls_is_overfitting_with_the_best_step() -> None:
    losses = [1.0 / (i + 1) for i in range(20)]
    evals = {
        s: {"eval_loss": v} for s, v in zip((20, 40, 60, 80, 100), (0.72, 0.65, 0.9, 1.6, 2.98), strict=True)
    }
    (said,) = _watch(Coach(_config()), losses, evals)
    assert said.concern == "overfitting" and said.step == 100
    text = str(said.message)
    assert "(0.65 at step 40, 2.98 now)" in text and "The best evaluation so far is step 40." in text
    assert said.remedies[0]["changes"] == {"training.max_steps": 40}
    # Rises of a hundredth are noise, not the model learning its rows by heart.
    noise = {
        s: {"eval_loss": v}
        for s, v in zip((20, 40, 60, 80, 100), (0.694, 0.692, 0.696, 0.70, 0.705), strict=True)
    }
    assert _watch(Coach(_config()), losses, noise) == []


def test_a_loss_that_grows_fast_is_diverging_and_a_tenth_of_the_rate_is_offered() -> None:
    losses = [0.7, 0.5, 0.4, 0.45, 0.8, 1.5, 2.9]
    (said,) = _watch(Coach(_config(rate=1e-4)), losses)
    assert said.concern == "diverging" and said.step == 30  # as soon as it is three times its lowest
    assert "1.5 now, 3.8 times its lowest (0.4)" in str(said.message)
    assert said.remedies[0]["changes"] == {"training.learning_rate": pytest.approx(1e-5)}
    # A loss of exactly 0 (a confident classifier's, in float32) fails nothing, and noise near it is no
    # divergence.
    assert _watch(Coach(_config(rate=1e-4)), [0.3, 0.0, 1e-4, 2e-4, 4e-4]) == []
    # A jump that stays up is diverging too: a tiny GPT-2 at 0.9 went from 8.3 to 44.6 in one log.
    (jumped,) = _watch(Coach(_config(rate=1e-4)), [8.3, 44.6, 37.5, 30.3, 39.4])
    assert jumped.concern == "diverging" and jumped.step == 20


def test_a_flat_loss_or_accuracy_at_chance_is_not_learning_said_once() -> None:
    losses = [0.693 + 0.002 * (-1) ** i for i in range(20)]
    evals = {s: {"eval_accuracy": 0.5} for s in (25, 50, 75, 100)}
    said = _watch(Coach(_config(rate=5e-7), num_labels=2), losses, evals)
    assert [a.concern for a in said] == ["learning_rate", "not_learning"]  # once, though both curves say it
    text = str(said[1].message)
    assert "After 40% of the steps the training loss has barely moved" in text
    assert "the model reads the data's language" in text
    assert said[1].remedies[0]["changes"] == {"training.learning_rate": 5e-5}
    # An English model on Chinese reviews: the share of unknown tokens is the figure that says why.
    (_, english) = _watch(Coach(_config(rate=5e-7), num_labels=2, unknown=0.62), losses, evals)
    assert "(62% of the data's tokens are unknown to it: it does not)" in str(english.message)


def test_a_rate_kept_from_another_task_is_named_as_the_run_starts() -> None:
    """A DPO run from a chat run kept 0.002: 400 times the preference default, without a word."""
    (said,) = Coach(_config("preference", rate=0.002)).see(_started())
    assert said.concern == "learning_rate" and said.step == 0
    assert str(said.message).startswith(
        "The learning rate is 0.002, 400 times the preference default of 5e-06"
    )
    assert said.remedies[0]["changes"] == {"training.learning_rate": 5e-6}
    assert Coach(_config("preference", rate=5e-6)).see(_started()) == []


@pytest.mark.slow
def test_the_advice_is_in_the_runs_events_and_its_log(tiny_bert: Path, samples: Path, tmp_path: Path) -> None:
    config = make_config(
        "classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs", max_steps=4
    )
    config.training.learning_rate = 0.05  # 1000 times the default
    events = Recorder()
    result = run_training(config, events.append)

    assert result.status == "finished", result.failure
    (said,) = events.of(AdviceEvent)
    assert said.concern == "learning_rate"
    recorded = [e for e in RunDir(result.run_dir).events() if isinstance(e, AdviceEvent)]
    assert [e.concern for e in recorded] == ["learning_rate"]  # in events.jsonl: the run history reads it


def test_the_command_line_prints_the_advice_and_the_flags_that_apply_its_fix(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from desktop.cli.run_console import RunConsole

    (said,) = Coach(_config("preference", rate=0.002)).see(_started())
    RunConsole()(said)
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("advice: The learning rate is 0.002, 400 times the preference default")
    assert err[1] == "  to try it: learning rate 5e-06 (--set training.learning_rate=5e-06)"


def _watch_pairs(coach: Coach, logs: list[tuple[float, float, float]], held_out: dict[int, float]) -> list:
    """Feed a preference run: (chosen reward, rejected reward, reward accuracy) every 5 steps, the
    held-out pairs' reward accuracy at the steps given; what the coach said."""
    said = coach.see(_started())
    for i, (chosen, rejected, accuracy) in enumerate(logs):
        step = 5 * (i + 1)
        metrics = {"loss": 0.69 * 0.9**i, "rewards/chosen": chosen, "rewards/rejected": rejected}
        said += coach.see(LogEvent(step, step / 50, {**metrics, "rewards/accuracies": accuracy}))
        if step in held_out:
            evaluated = {"eval_loss": 0.6, "eval_rewards/accuracies": held_out[step]}
            said += coach.see(LogEvent(step, step / 50, evaluated))
    return said


def test_a_healthy_preference_run_gets_no_word() -> None:
    logs = [(0.02 * i, -0.05 * i, min(1.0, 0.5 + 0.05 * i)) for i in range(20)]
    held_out = {25: 0.6, 50: 0.75, 75: 0.85, 100: 0.9}
    assert _watch_pairs(Coach(_config("preference", rate=5e-6)), logs, held_out) == []


def test_held_out_pairs_that_do_not_follow_the_training_pairs_are_explained() -> None:
    logs = [(0.1 * i, -0.1 * i, min(1.0, 0.5 + 0.1 * i)) for i in range(20)]
    held_out = {25: 0.5, 50: 0.5, 75: 0.45, 100: 0.5}
    (said,) = _watch_pairs(Coach(_config("preference", rate=1e-5)), logs, held_out)
    assert said.concern == "preference_held_out" and said.step == 50  # at 40% of the steps
    text = str(said.message)
    assert text.startswith("On the training pairs the reward accuracy is 1.00, on the held-out pairs 0.50")
    assert "The first counts the pairs the model learns from, the second pairs it never saw" in text
    assert said.remedies[0]["changes"] == {"training.learning_rate": 5e-6}


def test_chosen_and_rejected_rewards_both_falling_offer_a_lower_rate_and_a_higher_beta() -> None:
    logs = [(-0.01, -0.01, 0.5), (-0.2, -0.4, 0.7), (-0.6, -1.2, 0.9), (-1.4, -2.8, 1.0), (-2.0, -4.0, 1.0)]
    said = _watch_pairs(Coach(_config("preference", rate=5e-6)), logs, {})
    assert [a.concern for a in said] == ["rewards_falling"] and said[0].step == 20  # said once
    text = str(said[0].message)
    assert "chosen answers (-0.01 to -1.4) and of the rejected ones (-0.01 to -2.8) both fell" in text
    assert [r["changes"] for r in said[0].remedies] == [
        {"training.learning_rate": 2.5e-6},
        {"preference.beta": 0.2},
    ]
    orpo = _config("preference", rate=5e-6)
    orpo.preference.method = "orpo"
    (said,) = _watch_pairs(Coach(orpo), logs, {})
    assert [r["changes"] for r in said.remedies] == [{"training.learning_rate": 2.5e-6}]  # no beta to raise


def test_a_tuned_model_no_better_on_held_out_pairs_is_set_beside_the_reward_accuracy() -> None:
    """The walk's DPO run: 'Preference accuracy 0.000 -> 0.000' beside 'DPO reward accuracy 1.000'."""
    from desktop.core.training.coach import preference_outcome

    config = _config("preference", rate=0.002)
    said = preference_outcome(config, 40, 0.0, 0.0, 1.0)
    assert said is not None and said.concern == "preference_not_improving"
    text = str(said.message)
    assert text.startswith("On the held-out pairs the tuned model prefers the chosen answer in 0% of them")
    assert "Yet the reward accuracy reads 1.00." in text
    assert said.remedies[0]["changes"] == {"training.learning_rate": 5e-6}
    assert preference_outcome(config, 40, 0.45, 0.9, 0.95) is None
    assert preference_outcome(config, 40, None, 0.4, None) is None  # nothing measured before: nothing said


@pytest.mark.slow
def test_a_dpo_run_at_0_002_on_pairs_without_a_rule_is_told_both(
    tiny_chat_models: dict[str, Path], tmp_path: Path
) -> None:
    """The walk's DPO run kept a chat run's 0.002: the rate is named as it starts, and the held-out pairs,
    which the tuned model prefers no more often than the base model did, as it ends, each with its fix."""
    pytest.importorskip("trl", reason="TRL, which trains preferences, needs Python 3.11")
    import json
    import random

    from tests.core.helpers import FRUIT, TOOLS

    rng = random.Random(0)
    things = FRUIT + TOOLS
    pairs = rng.sample([(a, b) for a in things for b in things if a != b], 200)  # no rule to learn
    data = tmp_path / "pairs.jsonl"
    rows = [
        {"prompt": f"Name a thing, number {i}.", "chosen": a, "rejected": b} for i, (a, b) in enumerate(pairs)
    ]
    data.write_text("\n".join(json.dumps(row) for row in rows) + "\n", encoding="utf-8")
    config = make_config(
        "preference", tiny_chat_models["qwen2"], [data], tmp_path / "runs", learning_rate=2e-3, max_steps=40
    )
    config.validation.fraction = 0.2
    events = Recorder()

    result = run_training(config, events.append)

    assert result.status == "finished", result.failure
    said = {a.concern: a for a in events.of(AdviceEvent)}
    assert said["learning_rate"].step == 0
    last = said["preference_not_improving"]
    assert last.step == 40 and "no better" in str(last.message)
    assert last.remedies[0]["changes"] == {"training.learning_rate": 5e-6}
    recorded = [e.concern for e in RunDir(result.run_dir).events() if isinstance(e, AdviceEvent)]
    assert recorded[-1] == "preference_not_improving"  # before the finished event, in the run's record


def _labels_at_random(samples: Path, out: Path) -> Path:
    """The sample reviews with labels drawn at random: nothing to learn but the rows by heart."""
    import csv
    import random

    rng = random.Random(0)
    with open(samples / "reviews.csv", encoding="utf-8", newline="") as source:
        rows = list(csv.DictReader(source))
    with open(out, "w", encoding="utf-8", newline="") as target:
        writer = csv.DictWriter(target, fieldnames=["text", "label"])
        writer.writeheader()
        writer.writerows({"text": row["text"], "label": rng.choice(["positive", "negative"])} for row in rows)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("trouble", ["overfitting", "diverging", "not_learning", "none"])
def test_tiny_models_that_go_wrong_each_get_their_sentence_and_fix(
    trouble: str, tiny_bert: Path, tiny_gpt2: Path, samples: Path, tmp_path: Path
) -> None:
    """Real runs built to go wrong (tiny models need rates far above the defaults, so each also hears
    about its rate): a classifier memorising random labels overfits, a GPT-2 at 0.9 diverges, a rate of
    1e-9 leaves the loss where it was; a GPT-2 that learns hears nothing else."""
    runs = tmp_path / "runs"
    if trouble == "overfitting":
        data = _labels_at_random(samples, tmp_path / "noise.csv")
        config = make_config("classification", tiny_bert, [data], runs, max_steps=160, learning_rate=3e-3)
        config.training.eval_steps = config.training.save_steps = 10
        config.training.early_stopping = 0
        config.validation.fraction = 0.3
    elif trouble == "not_learning":
        config = make_config("classification", tiny_bert, [samples / "reviews.csv"], runs, learning_rate=1e-9)
    else:  # a tiny GPT-2 on the sample chats: at 0.9 it diverges, at 0.05 it learns
        rate = 0.9 if trouble == "diverging" else 0.05
        config = make_config(
            "causal-lm", tiny_gpt2, [samples / "chat.jsonl"], runs, max_steps=40, learning_rate=rate
        )
        config.training.logging_steps, config.training.warmup_ratio = 2, 0.0
        config.training.optimizer = "adafactor"
    events = Recorder()

    result = run_training(config, events.append)

    assert result.status == "finished", result.failure
    said = {advice.concern: advice for advice in events.of(AdviceEvent)}
    assert "learning_rate" in said  # each of these rates is 20 times the default or more, either way
    if trouble == "none":
        assert set(said) == {"learning_rate"}, {c: str(a.message) for c, a in said.items()}
        return
    advice = said[trouble]
    fix = advice.remedies[0]["changes"]
    if trouble == "overfitting":
        assert "The validation loss has risen at 3 evaluations in a row" in str(advice.message)
        assert fix["training.max_steps"] < advice.step  # stop at the best evaluation
    elif trouble == "diverging":
        assert str(advice.message).startswith("The training loss is growing")
        assert fix == {"training.learning_rate": pytest.approx(0.09)}
    else:
        assert "The model is not learning" in str(advice.message)
        assert fix == {"training.learning_rate": 5e-5}
    recorded = {e.concern for e in RunDir(result.run_dir).events() if isinstance(e, AdviceEvent)}
    assert trouble in recorded  # in the run's events too
