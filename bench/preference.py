"""Preference overhead: our DPO run against a plain TRL ``DPOTrainer`` script on the same workload.

Workload: a Qwen2-shaped model of our own (4 layers, hidden 384, random weights, a byte-level BPE
tokenizer trained on the spot with our fallback chat template: no network) and 400 synthetic pairs
with a learnable rule (the chosen answer is made of kind words, the rejected one of rude words; prompts
of 4 to 30 words, answers of 3 to 20, none cut by the max length of 128). Full DPO (beta 0.1, a frozen
reference model), fp32, no gradient checkpointing, batch 8, the same learning rate, seed and steps.

- ours: ``run_training`` with task "preference" (method dpo), no held-out pairs (validation.fraction
  0: no evaluation during the run, none of the base model before nor of the tuned one after), the data
  read and checked, the run folder, events and log written; a checkpoint at the last step only
  (save_steps above the steps) and the model saved at the end.
- plain: what TRL's docs write, with the same settings: the jsonl read into a conversational
  ``Dataset``, ``AutoModelForCausalLM.from_pretrained``, ``DPOTrainer(model, args=DPOConfig(...),
  train_dataset=..., processing_class=tokenizer).train()`` (TRL loads the reference model itself),
  ``bf16=False`` and ``gradient_checkpointing=False`` (DPOConfig's defaults differ from ours), no tqdm,
  ``report_to=[]``, the same checkpoint at the last step, ``trainer.save_model`` at the end.

Each run is a fresh process (this file with ``--side``), the two sides alternating which goes first,
after one short warm-up of each (the page cache). Clocks: "wall" from process start to the model saved;
"before" until the trainer's train begins (imports, data, models, trainer); "loop" from train begin to
the last step's end; "steps" from the first step's end to the last's (the first step's warm-up left
out), "cpu" the process's CPU time over the same steps; "step" the median time of one step and "p10"
its 10th percentile (on a machine others share, the least disturbed steps); "after" from the last step
to the end (the checkpoint, the model saved). Printed: a line per run, the medians per side with peak
RSS, the final training loss and the reward accuracy of the last logging window (both sides doing the
same work show the same figures), and the medians of the paired ratios ours / plain. Target: <= 1.03
for the steps and the whole run. Figures on a shared 2-core CPU (3 repeats, 40 steps): step 0.94,
whole run 0.94; ours' own work per step (events, summary, token count) about 0.6 ms of 430 ms.

    python bench/preference.py [--repeats 3] [--steps 40] [--threads 1]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LR, SEED, BATCH, MAX_LENGTH, LOGGING, PAIRS, SAVE_STEPS = 5e-4, 42, 8, 128, 10, 400, 100_000
KIND = "good great kind thanks lovely helpful clear gentle warm bright calm glad fine nice sure happy".split()  # noqa: SIM905
RUDE = "bad awful rude stupid ugly useless dull lazy cold harsh grim sad poor nasty wrong angry".split()  # noqa: SIM905
TOPICS = "the garden a song my report this code our trip the weather his bike her cake the plan".split()  # noqa: SIM905
MARK = "RESULT "


def build(folder: Path, hidden: int = 384, layers: int = 4) -> tuple[Path, Path]:
    """The model folder and the pairs (JSON lines with prompt, chosen and rejected)."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    from desktop.core.data.tasks.causal_lm import FALLBACK_CHAT_TEMPLATE

    rng = random.Random(SEED)

    def words(vocabulary: list[str], low: int, high: int) -> str:
        return " ".join(rng.choice(vocabulary) for _ in range(rng.randint(low, high)))

    rows = [
        {
            "prompt": f"Say something about {words(TOPICS, 4, 30)}",
            "chosen": words(KIND, 3, 20),
            "rejected": words(RUDE, 3, 20),
        }
        for _ in range(PAIRS)
    ]
    data = folder / "pairs.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    end = "<|endoftext|>"
    trainer = trainers.BpeTrainer(
        vocab_size=1000, special_tokens=[end], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    texts = [" ".join(r.values()) for r in rows] + ["<|user|>\n<|assistant|>\n"] * 50
    tok.train_from_iterator(texts, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=end, pad_token=end, unk_token=end)
    tokenizer.chat_template = FALLBACK_CHAT_TEMPLATE
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=hidden * 8 // 3 // 8 * 8,
        num_hidden_layers=layers,
        num_attention_heads=hidden // 64,
        num_key_value_heads=2,
        max_position_embeddings=MAX_LENGTH * 2,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    torch.manual_seed(SEED)
    model_dir = folder / "model"
    Qwen2ForCausalLM(config).save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    return model_dir, data


def ours(model: Path, data: Path, out: Path, steps: int) -> dict:
    from desktop.core.settings.config import RunConfig
    from desktop.core.system.events import LogEvent, ProgressEvent, StartedEvent
    from desktop.core.training.run import run_training

    config = RunConfig(task="preference")
    config.model.name = str(model)
    config.data.files = [str(data)]
    config.columns.prompt, config.columns.chosen, config.columns.rejected = "prompt", "chosen", "rejected"
    config.validation.fraction = 0
    config.output.runs_dir = str(out)
    config.preference.method, config.preference.beta = "dpo", 0.1
    t = config.training
    t.max_steps, t.batch_size, t.max_length, t.learning_rate, t.seed = steps, BATCH, MAX_LENGTH, LR, SEED
    t.save_steps, t.logging_steps = SAVE_STEPS, LOGGING
    clock: dict = {"steps": [], "logs": []}

    def seen(event: object) -> None:  # called in on_train_begin / on_step_end: the plain side's instants
        if isinstance(event, StartedEvent):
            clock["begin"] = time.time()
        elif isinstance(event, ProgressEvent):
            clock["steps"].append((time.time(), time.process_time()))
        elif isinstance(event, LogEvent):
            clock["logs"].append(event.metrics)

    result = run_training(config, seen)
    assert result.status == "finished", result.failure
    checkpoints = len(list(Path(result.run_dir).glob("checkpoints/checkpoint-*")))
    return _figures(clock, float(result.metrics["train_loss"]), checkpoints)


def plain(model_dir: Path, data: Path, out: Path, steps: int) -> dict:
    """What TRL's docs write for DPO, with our run's settings."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import DPOConfig, DPOTrainer

    clock: dict = {"steps": [], "logs": []}

    class Clock(TrainerCallback):  # the bench's instrument, the same instants as our events
        def on_train_begin(self, args, state, control, **kwargs):
            clock["begin"] = time.time()

        def on_step_end(self, args, state, control, **kwargs):
            clock["steps"].append((time.time(), time.process_time()))

        def on_log(self, args, state, control, logs=None, **kwargs):
            clock["logs"].append(dict(logs or {}))

    rows = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
    dataset = Dataset.from_dict(
        {
            "prompt": [[{"role": "user", "content": r["prompt"]}] for r in rows],
            "chosen": [[{"role": "assistant", "content": r["chosen"]}] for r in rows],
            "rejected": [[{"role": "assistant", "content": r["rejected"]}] for r in rows],
        }
    )
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    args = DPOConfig(
        output_dir=str(out / "checkpoints"),
        max_steps=steps,
        per_device_train_batch_size=BATCH,
        learning_rate=LR,
        max_length=MAX_LENGTH,
        beta=0.1,
        seed=SEED,
        logging_steps=LOGGING,
        save_steps=SAVE_STEPS,
        bf16=False,
        gradient_checkpointing=False,
        disable_tqdm=True,
        report_to=[],
    )
    trainer = DPOTrainer(
        model=model, args=args, train_dataset=dataset, processing_class=tokenizer, callbacks=[Clock()]
    )
    output = trainer.train()
    trainer.save_model(str(out / "model"))
    checkpoints = len(list((out / "checkpoints").glob("checkpoint-*")))
    return _figures(clock, float(output.training_loss), checkpoints)


def _figures(clock: dict, loss: float, checkpoints: int) -> dict:
    accuracies = [m["rewards/accuracies"] for m in clock["logs"] if "rewards/accuracies" in m]
    return {
        "begin": clock["begin"],
        "first_step": clock["steps"][0][0],
        "last_step": clock["steps"][-1][0],
        "step_s": sorted(b[0] - a[0] for a, b in itertools.pairwise(clock["steps"])),
        "steps_cpu": clock["steps"][-1][1] - clock["steps"][0][1],
        "end": time.time(),
        "steps": len(clock["steps"]),
        "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "loss": loss,
        "reward_accuracy": accuracies[-1] if accuracies else float("nan"),
        "checkpoints": checkpoints,
    }


def run_side(
    side: str, model: Path, data: Path, out: Path, steps: int, threads: int = 0, script: str = __file__
) -> dict:
    """One run in a fresh process of ``script`` (this bench's or another's that shares its clocks;
    ``threads``: PyTorch's, 0 for its default); the clocks as seconds from the process's start."""
    command = [sys.executable, script, "--side", side, "--model", str(model), "--data", str(data)]
    command += ["--out", str(out), "--steps", str(steps)]
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)} if threads else None
    start = time.time()
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    lines = [line for line in done.stdout.splitlines() if line.startswith(MARK)]
    if done.returncode or not lines:
        sys.exit(f"{side} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    r = json.loads(lines[-1][len(MARK) :])
    return {
        "wall": r["end"] - start,
        "before": r["begin"] - start,
        "loop": r["last_step"] - r["begin"],
        "steps": r["last_step"] - r["first_step"],
        "after": r["end"] - r["last_step"],
        "step_ms": statistics.median(r["step_s"]) * 1000,
        "fast_ms": r["step_s"][len(r["step_s"]) // 10] * 1000,  # the 10th percentile: the least disturbed
        "cpu": r["steps_cpu"],
        **{k: r[k] for k in ("rss_mib", "loss", "reward_accuracy", "checkpoints")},
    }


def child(args: argparse.Namespace) -> None:
    import transformers

    transformers.logging.set_verbosity_error()
    run = ours if args.side == "ours" else plain
    figures = run(Path(args.model), Path(args.data), Path(args.out), args.steps)
    print(MARK + json.dumps(figures), flush=True)


COLUMNS = ("wall", "before", "loop", "steps", "after", "cpu", "step_ms", "fast_ms")
NAMES = ("wall s", "before s", "loop s", "steps s", "after s", "cpu s", "step ms", "p10 ms")


def arguments(doc: str, steps: int) -> argparse.ArgumentParser:
    """The options of a paired bench (this one's and ``bench/grpo.py``'s), the children's hidden ones."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=steps)
    parser.add_argument(
        "--threads", type=int, default=0, help="PyTorch's threads on both sides (0: its default)"
    )
    parser.add_argument("--side", choices=("ours", "plain"), help=argparse.SUPPRESS)
    for name in ("--model", "--data", "--out"):
        parser.add_argument(name, help=argparse.SUPPRESS)
    return parser


def paired(
    model: Path, data: Path, root: Path, args: argparse.Namespace, figures: str, script: str = __file__
) -> tuple[dict[str, list[dict]], dict[str, float]]:
    """One short warm-up of each side, then ``args.repeats`` runs of each, alternating which goes first
    (drift hits both alike); a line per run (``figures``: the header of the last three columns), and the
    medians of the paired ratios ours / plain per column."""
    runs: dict[str, list[dict]] = {"ours": [], "plain": []}
    for side in runs:
        run_side(side, model, data, root / f"warm-{side}", 2, args.threads, script)
    print(f"{'run':10}{''.join(f'{name:>9}' for name in NAMES)}  {figures}")
    for i in range(args.repeats):
        for side in ("ours", "plain") if i % 2 == 0 else ("plain", "ours"):
            r = run_side(side, model, data, root / f"{side}{i}", args.steps, args.threads, script)
            runs[side].append(r)
            print(f"{side} {i + 1:<5}{_row(r, COLUMNS)}  {r['checkpoints']:5}", flush=True)
    ratio = {
        c: statistics.median(o[c] / p[c] for o, p in zip(runs["ours"], runs["plain"], strict=True))
        for c in COLUMNS
    }
    return runs, ratio


def main() -> None:
    parser = arguments(__doc__, 40)
    parser.add_argument("--hidden", type=int, default=384)
    parser.add_argument("--layers", type=int, default=4)
    args = parser.parse_args()
    if args.side:
        child(args)
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        model, data = build(root, args.hidden, args.layers)
        runs, ratio = paired(model, data, root, args, "RSS MiB    loss  reward acc  ckpts")
    median = {side: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for side, rs in runs.items()}
    for side, m in median.items():
        print(f"{side + ' med':10}{_row(m, COLUMNS)}")
    print(
        f"ours / plain, median of the {args.repeats} paired ratios, {args.steps} steps: "
        f"median step {ratio['step_ms']:.3f}, fast step (p10) {ratio['fast_ms']:.3f}, "
        f"steps {ratio['steps']:.3f} (CPU time {ratio['cpu']:.3f}), "
        f"loop {ratio['loop']:.3f}, whole run {ratio['wall']:.3f} (target <= 1.03); before training "
        f"{median['ours']['before'] - median['plain']['before']:+.2f} s, "
        f"after {median['ours']['after'] - median['plain']['after']:+.2f} s"
    )


def _row(figures: dict, columns: tuple[str, ...]) -> str:
    cells = "".join(f"{figures[c]:9.0f}" if c.endswith("_ms") else f"{figures[c]:9.2f}" for c in columns)
    return f"{cells}  {figures['rss_mib']:7.0f}  {figures['loss']:.4f}  {figures['reward_accuracy']:10.3f}"


if __name__ == "__main__":
    main()
