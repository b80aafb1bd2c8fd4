"""GRPO overhead: our reasoning run against a plain TRL ``GRPOTrainer`` script on the same workload.

Workload: the Qwen2-shaped model of ``bench/preference.py`` (4 layers, hidden 384, random weights, a
byte-level BPE tokenizer trained on the spot with our fallback chat template: no network), trained on
the first 200 prompts of ``resources/samples/reasoning.jsonl`` (arithmetic word problems with whole-number
answers). Both sides: the same two rewards (the final answer as a number, weight 1; the answer-line
format, weight 0.5: ``desktop.core.data.rewards``' functions, so that each side scores alike), 4 answers
per prompt of up to 32 tokens at temperature 0.9, beta 0, fp32, batch 8, the same learning rate, seed and
steps, the same system prompt.

- ours: ``run_training`` with task "grpo", no held-out prompts (validation.fraction 0: no evaluation
  of the base or the tuned model), the data read and checked, the run folder, events, sampled answers in
  the log; a checkpoint at the last step only and the model saved at the end.
- plain: what TRL's docs write: the jsonl read into a conversational ``Dataset``,
  ``GRPOTrainer(model=..., reward_funcs=[...], args=GRPOConfig(...), train_dataset=...).train()``,
  ``report_to=[]``, no tqdm, the same checkpoint at the last step, ``trainer.save_model`` at the end.

Each run is a fresh process; the sides alternate which goes first, after one short warm-up of each. The
clocks are ``bench/pairing.py``'s. Target: ours / plain <= 1.05 for the steps and the whole run.

    python bench/grpo.py [--repeats 3] [--steps 20] [--threads 1]
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pairing  # the clocks and the pairing of the paired benches
import preference  # the model of the preference bench

LR, SEED, BATCH, LOGGING, SAVE_STEPS = 1e-5, 42, 8, 5, 100_000
GENERATIONS, COMPLETION, TEMPERATURE, PROMPTS = 4, 32, 0.9, 200
SAMPLES = Path(__file__).resolve().parents[1] / "resources" / "samples" / "reasoning.jsonl"


def data(folder: Path) -> Path:
    rows = SAMPLES.read_text(encoding="utf-8").splitlines()[:PROMPTS]
    path = folder / "prompts.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _settings() -> object:
    from desktop.core.settings.config_sections import Grpo

    g = Grpo()
    g.answer_check, g.answer_weight, g.format_weight = "number", 1.0, 0.5
    g.num_generations, g.max_completion_length, g.temperature, g.beta = (
        GENERATIONS,
        COMPLETION,
        TEMPERATURE,
        0.0,
    )
    return g


def ours(model: Path, prompts: Path, out: Path, steps: int) -> dict:
    from desktop.core.settings.config import RunConfig
    from desktop.core.training.run import run_training

    config = RunConfig(task="grpo")
    config.model.name = str(model)
    config.data.files = [str(prompts)]
    config.columns.prompt, config.columns.answer = "question", "answer"
    config.validation.fraction = 0
    config.output.runs_dir = str(out)
    config.grpo = _settings()
    t = config.training
    t.max_steps, t.batch_size, t.learning_rate, t.seed = steps, BATCH, LR, SEED
    t.save_steps, t.logging_steps = SAVE_STEPS, LOGGING
    clock = pairing.Clock()
    result = run_training(config, clock.seen)
    assert result.status == "finished", result.failure
    checkpoints = len(list(Path(result.run_dir).glob("checkpoints/checkpoint-*")))
    return _figures(clock, checkpoints)


def plain(model_dir: Path, prompts: Path, out: Path, steps: int) -> dict:
    """What TRL's docs write for GRPO, with our run's settings."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from desktop.core.data.rewards import answer_reward, format_pattern, format_reward
    from desktop.core.settings.config_sections import GRPO_SYSTEM_PROMPT

    clock = pairing.Clock()

    rows = [json.loads(line) for line in prompts.read_text(encoding="utf-8").splitlines()]
    dataset = Dataset.from_dict(
        {
            "prompt": [
                [
                    {"role": "system", "content": GRPO_SYSTEM_PROMPT},
                    {"role": "user", "content": r["question"]},
                ]
                for r in rows
            ],
            "answer": [str(r["answer"]) for r in rows],
        }
    )
    line = format_pattern("answer-line")
    answer, fmt = answer_reward("number", line), format_reward(line)
    args = GRPOConfig(
        output_dir=str(out / "checkpoints"),
        max_steps=steps,
        per_device_train_batch_size=BATCH,
        learning_rate=LR,
        num_generations=GENERATIONS,
        max_completion_length=COMPLETION,
        temperature=TEMPERATURE,
        beta=0.0,
        reward_weights=[1.0, 0.5],
        seed=SEED,
        logging_steps=LOGGING,
        save_steps=SAVE_STEPS,
        bf16=False,
        disable_tqdm=True,
        report_to=[],
    )
    trainer = GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(model_dir),
        reward_funcs=[answer, fmt],
        args=args,
        train_dataset=dataset,
        processing_class=AutoTokenizer.from_pretrained(model_dir),
        callbacks=[clock.callback()],
    )
    trainer.train()
    trainer.save_model(str(out / "model"))
    checkpoints = len(list((out / "checkpoints").glob("checkpoint-*")))
    return _figures(clock, checkpoints)


def _figures(clock: pairing.Clock, checkpoints: int) -> dict:
    """The mean reward as the "loss" column, the mean answer length as the last."""
    return pairing.figures(clock, clock.mean("reward"), checkpoints, clock.mean("completions/mean_length"))


def main() -> None:
    args = pairing.arguments(__doc__, 20).parse_args()
    if args.side:
        pairing.child(args, ours, plain)
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        model, _ = preference.build(root)
        _, ratio = pairing.paired(model, data(root), root, args, "RSS MiB  reward  length  ckpts", __file__)
    print(
        f"ours / plain, median of the {args.repeats} paired ratios, {args.steps} steps: "
        f"median step {ratio['step_ms']:.3f}, steps {ratio['steps']:.3f}, loop {ratio['loop']:.3f}, "
        f"whole run {ratio['wall']:.3f} (target <= 1.05)"
    )


if __name__ == "__main__":
    main()
