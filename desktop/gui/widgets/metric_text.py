"""Names on screen for what the files keep as keys: metrics (``eval_accuracy``), tasks (``causal-lm``)
and the columns a prediction adds (``prediction``, ``probability``).

The files, the CLI and the logs on disk keep the keys; the window shows these names in the user's
language. A key we do not know is shown as it is.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

translate = QCoreApplication.translate


def _metrics() -> dict[str, str]:
    return {
        "loss": translate("MetricText", "loss"),
        "accuracy": translate("MetricText", "accuracy"),
        "macro_f1": translate("MetricText", "macro F1"),
        "f1": translate("MetricText", "F1"),
        "precision": translate("MetricText", "precision"),
        "recall": translate("MetricText", "recall"),
        "bleu": translate("MetricText", "BLEU"),
        "chrf": translate("MetricText", "chrF"),
        "perplexity": translate("MetricText", "perplexity"),
        "grad_norm": translate("MetricText", "gradient norm"),
        "learning_rate": translate("MetricText", "learning rate"),
        "epoch": translate("MetricText", "epoch"),
        "runtime": translate("MetricText", "time (s)"),
        "samples_per_second": translate("MetricText", "samples/s"),
        "steps_per_second": translate("MetricText", "steps/s"),
        "tokens_per_second": translate("MetricText", "tokens/s"),
        # What TRL's DPO and ORPO trainers log (a preference run)
        "rewards/accuracies": translate("MetricText", "reward accuracy"),
        "rewards/margins": translate("MetricText", "reward margin"),
        "rewards/chosen": translate("MetricText", "chosen reward"),
        "rewards/rejected": translate("MetricText", "rejected reward"),
        "logps/chosen": translate("MetricText", "chosen log-probability"),
        "logps/rejected": translate("MetricText", "rejected log-probability"),
        # What TRL's GRPO trainer logs (a reasoning run)
        "reward": translate("MetricText", "mean reward"),
        "completions/mean_length": translate("MetricText", "answer length"),
        "kl": translate("MetricText", "KL"),
    }


def metric_name(key: str) -> str:
    """``eval_accuracy`` as "validation accuracy" (验证集准确率), ``train_loss`` as "training loss"."""
    names = _metrics()
    bare = key.removeprefix("eval_")
    if bare.startswith("rewards/") and bare.endswith("/mean") and bare.count("/") == 2:  # GRPO's
        from desktop.core.data.rewards import describe
        from desktop.shared_ui import shown

        reward = translate("MetricText", "reward: {name}").format(name=shown(describe(bare.split("/")[1])))
        names[bare] = reward
    for prefix, phrase in (
        ("eval_", translate("MetricText", "validation {metric}")),
        ("train_", translate("MetricText", "training {metric}")),
        ("test_", translate("MetricText", "test {metric}")),
    ):
        if key.startswith(prefix) and key.removeprefix(prefix) in names:
            return phrase.format(metric=names[key.removeprefix(prefix)])
    return names.get(key, key)


UNSHOWN = (
    "entropy",
    "num_tokens",
    "mean_token_accuracy",
    "total_flos",
    "logits/",
    "clip_ratio",
    "completions/m",
    "completions/clipped",
    "frac_reward_zero_std",
    "reward_std",
    "step_time",
    "sampling/",
)
"""Figures TRL logs that say nothing a user reads (the events file keeps them): the output's entropy,
tokens seen, next-token accuracy of the answers, floating-point operations, mean logits; of GRPO's, all
but the rewards' means, the answers' mean length and the KL."""
KEPT = ("completions/mean_length",)
"""Shown although an :data:`UNSHOWN` prefix covers them."""


def metrics_line(metrics: dict[str, float], separator: str = "   ") -> str:
    """``{"eval_loss": 0.157}`` as "validation loss 0.157", one after another (:data:`UNSHOWN` left out)."""
    shown = {
        k: v
        for k, v in metrics.items()
        if k.removeprefix("eval_") in KEPT
        or not (k.removeprefix("eval_").startswith(UNSHOWN) or k.endswith(("/std", "/min", "/max")))
    }
    return separator.join(f"{metric_name(key)} {value:.4g}" for key, value in shown.items())


def task_name(task: str) -> str:
    """A task key (``classification``, ``causal-lm``, ``seq2seq``, ``preference``) as the model page
    names it."""
    return {
        "classification": translate("MetricText", "Text classification"),
        "causal-lm": translate("MetricText", "Causal-LM / chat fine-tuning"),
        "seq2seq": translate("MetricText", "Sequence-to-sequence"),
        "preference": translate("MetricText", "Preference (DPO / ORPO)"),
        "grpo": translate("MetricText", "Reasoning (GRPO)"),
        "image-classification": translate("MetricText", "Image classification"),
        "vision-chat": translate("MetricText", "Vision-language (pictures and text)"),
    }.get(task, task)


def column_name(key: str) -> str:
    """A column a prediction adds, with the key the file has: "prediction", or "预测（prediction）"."""
    names = {
        "prediction": translate("MetricText", "prediction"),
        "probability": translate("MetricText", "probability"),
        "generated": translate("MetricText", "generated text"),
    }
    name = names.get(key.split("_", 1)[0], "")  # "prediction_new": the file had a "prediction" column
    return (
        key
        if not name or name == key
        else translate("MetricText", "{name} ({key})").format(name=name, key=key)
    )
