"""Speed: our causal-LM run with its defaults against a plain transformers Trainer script.

Workload: a Llama-shaped model of our own (4 layers, hidden 256, random weights, a byte-level BPE
tokenizer trained on the spot: no network) on synthetic instruction data whose examples run from
8 tokens to the max length, the loss on the answers only: by default with many short examples and a
long tail (log-uniform lengths, as in chat data), or every length as likely (``--lengths uniform``).
Both sides load the same weights, see the same examples in the same order (same seed, batch size and
steps) and run in this process, alternating, after one warm-up each. Printed: time per run, real
tokens per second and the final training loss of each side, the median ratio, and where the
difference comes from (our run with padded batches, grouped by length and shuffled, as two more sides;
the share of the plain script's batch tokens that were padding).

Target on a 2-core CPU: >= 1.8x the plain script's tokens/s at equal loss (within 2%).

    python bench/speed.py [--repeats 3] [--steps 30] [--max-length 256] [--batch 8]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

LR, SEED, ROWS = 1e-3, 42, 2000
WORDS = [
    "the",
    "a",
    "model",
    "data",
    "train",
    "answer",
    "question",
    "token",
    "batch",
    "length",
    "short",
    "long",
    "learn",
    "loss",
    "step",
    "fast",
    "slow",
    "memory",
    "speed",
    "chat",
    "reply",
    "user",
    "assistant",
    "good",
    "bad",
    "example",
    "padding",
    "row",
    "column",
    "value",
    "number",
    "word",
    "text",
]


def build(
    folder: Path, max_length: int, lengths: str = "log", hidden: int = 256, layers: int = 4
) -> tuple[Path, Path]:
    """The model folder and the data file (JSON lines with instruction and output)."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    from desktop.core.data.tasks.causal_lm import FALLBACK_CHAT_TEMPLATE

    rng = random.Random(SEED)

    def sentence(tokens: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(tokens))

    rows = []
    for _ in range(ROWS):  # from 8 tokens to about the max length: evenly, or many short and a few long
        total = (
            rng.randint(8, max_length)
            if lengths == "uniform"
            else round(8 * (max_length / 8) ** rng.random())
        )
        prompt = max(2, total // 4)
        rows.append({"instruction": sentence(prompt), "output": sentence(max(1, total - prompt - 12))})
    data = folder / "chat.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=1000,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator([r["instruction"] + " " + r["output"] for r in rows], trainer)
    end = "<|endoftext|>"
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=end, pad_token=end, unk_token=end)
    tokenizer.chat_template = FALLBACK_CHAT_TEMPLATE
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=hidden * 8 // 3 // 8 * 8,
        num_hidden_layers=layers,
        num_attention_heads=hidden // 64,
        num_key_value_heads=hidden // 64,
        max_position_embeddings=max_length * 2,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    torch.manual_seed(SEED)
    model_dir = folder / "model"
    LlamaForCausalLM(config).save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    return model_dir, data


def ours(
    model: Path,
    data: Path,
    out: Path,
    steps: int,
    batch: int,
    max_length: int,
    padding_free: bool,
    liger: bool = False,
    grouped: bool = True,
):
    from desktop.core.settings.config import RunConfig
    from desktop.core.training.run import run_training

    config = RunConfig(task="causal-lm")
    config.model.name = str(model)
    config.data.files = [str(data)]
    config.columns.instruction, config.columns.output = "instruction", "output"
    config.validation.fraction = 0
    config.output.runs_dir = str(out)
    config.performance.padding_free = padding_free
    config.performance.group_by_length = grouped
    config.performance.liger_kernel = liger
    t = config.training
    t.max_steps, t.batch_size, t.max_length, t.learning_rate, t.seed = steps, batch, max_length, LR, SEED
    t.save_steps, t.logging_steps = 100_000, steps
    from desktop.core.system.events import ProgressEvent

    loop = [0.0]

    def seen(event: object) -> None:
        if isinstance(event, ProgressEvent):
            loop[0] = max(loop[0], event.elapsed_s)  # from the training loop's start

    start = time.perf_counter()
    result = run_training(config, seen)
    elapsed = time.perf_counter() - start
    assert result.status == "finished", result.failure
    return elapsed, loop[0], float(result.metrics["train_loss"])


def plain(model_dir: Path, data: Path, out: Path, steps: int, batch: int, max_length: int, padding: list):
    """What a user would write with transformers alone: chat template, answer-only labels, padded batches."""
    import torch
    from transformers import (
        AutoModelForCausalLM,
        AutoTokenizer,
        DataCollatorForSeq2Seq,
        Trainer,
        TrainingArguments,
    )

    start = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    dataset = []
    for line in data.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        messages = [
            {"role": "user", "content": row["instruction"]},
            {"role": "assistant", "content": row["output"]},
        ]
        prompt = tokenizer.apply_chat_template(messages[:1], tokenize=False, add_generation_prompt=True)
        full = tokenizer.apply_chat_template(messages, tokenize=False)
        ids = tokenizer(full, add_special_tokens=False)["input_ids"][:max_length]
        masked = len(tokenizer(prompt, add_special_tokens=False)["input_ids"])
        labels = [-100] * masked + ids[masked:]
        dataset.append({"input_ids": ids, "attention_mask": [1] * len(ids), "labels": labels[: len(ids)]})
    collate = DataCollatorForSeq2Seq(tokenizer, label_pad_token_id=-100)

    def counting(features: list) -> dict:
        out = collate(features)
        padding.append((int(out["attention_mask"].sum()), int(out["attention_mask"].numel())))
        return out

    args = TrainingArguments(
        output_dir=str(out / "checkpoints"),
        max_steps=steps,
        per_device_train_batch_size=batch,
        learning_rate=LR,
        seed=SEED,
        save_strategy="steps",
        save_steps=100_000,
        logging_steps=steps,
        report_to="none",
        disable_tqdm=True,
        remove_unused_columns=False,
        dataloader_pin_memory=torch.cuda.is_available(),
    )
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    trainer = Trainer(model=model, args=args, train_dataset=dataset, data_collator=counting)
    output = trainer.train()
    trainer.save_model(str(out / "model"))
    return time.perf_counter() - start, float(output.metrics["train_runtime"]), float(output.training_loss)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument(
        "--lengths",
        choices=("log", "uniform"),
        default="log",
        help="log: as many examples from 8 to 16 tokens as from 128 to 256, like chat and instruction data "
        "(a long tail); uniform: every length as likely",
    )
    args = parser.parse_args()
    import transformers

    transformers.logging.set_verbosity_error()
    shape = (args.steps, args.batch, args.max_length)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        model, data = build(root, args.max_length, args.lengths)
        ours(model, data, root / "warm-o", 2, args.batch, args.max_length, True)
        plain(model, data, root / "warm-p", 2, args.batch, args.max_length, [])
        walls: dict[str, list[float]] = {"ours": [], "ours grouped": [], "ours shuffled": [], "plain": []}
        loops: dict[str, list[float]] = {name: [] for name in walls}
        losses: dict[str, list[float]] = {name: [] for name in walls}
        padding: list[tuple[int, int]] = []
        for i in range(args.repeats):
            sides = [
                ("ours", lambda i=i: ours(model, data, root / f"o{i}", *shape, True)),
                ("ours grouped", lambda i=i: ours(model, data, root / f"og{i}", *shape, False)),
                (
                    "ours shuffled",
                    lambda i=i: ours(model, data, root / f"os{i}", *shape, False, grouped=False),
                ),
                ("plain", lambda i=i: plain(model, data, root / f"p{i}", *shape, padding)),
            ]
            for name, run in sides if i % 2 == 0 else sides[::-1]:  # drift hits every side alike
                wall, loop, loss = run()
                walls[name].append(wall)
                loops[name].append(loop)
                losses[name].append(loss)
            print(
                f"repeat {i + 1}: "
                + ", ".join(f"{n} {walls[n][-1]:.1f} s (loop {loops[n][-1]:.1f} s)" for n in walls),
                flush=True,
            )
        real = sum(r for r, _ in padding)
        slots = sum(s for _, s in padding)
        tokens = real / len(padding) * args.steps  # real tokens per run: the same examples on every side
        loop = {name: statistics.median(values) for name, values in loops.items()}
        wall = {name: statistics.median(values) for name, values in walls.items()}
        loss = {name: statistics.median(values) for name, values in losses.items()}
        print(
            f"real tokens per run: {tokens:.0f}; the plain batches' padding: {1 - real / slots:.0%} of tokens"
        )
        for name in walls:
            print(
                f"{name:13} {tokens / loop[name]:7.0f} tokens/s in the training loop, "
                f"{tokens / wall[name]:7.0f} over the whole run; final training loss {loss[name]:.4f}"
            )
        gap = abs(loss["ours"] / loss["plain"] - 1)
        speedup = {name: loop["plain"] / loop[name] for name in loop}
        print(
            f"speed-up over the plain script (training loop): {speedup['ours']:.2f}x with our defaults "
            f"(target >= 1.8x); padded batches: {speedup['ours grouped']:.2f}x grouped by length (another "
            f"order, so another loss), {speedup['ours shuffled']:.2f}x shuffled as the plain script's; "
            f"whole run {wall['plain'] / wall['ours']:.2f}x; loss gap {gap:.1%} (target <= 2%)"
        )


if __name__ == "__main__":
    main()
