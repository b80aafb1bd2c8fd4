"""Pictures as data: how long a folder of many small pictures takes to list and preview, and the memory;
with ``--training``, an image-classification run's throughput against a plain Trainer script.

Data (the default): writes ``--count`` pictures (16 x 16 PNG, 10 class folders) into a temporary folder,
then times, in a fresh process: listing the class folders (``images.class_folders``: names only, nothing
opened), the preview's first rows (thumbnails of the first 8, decoded through the bounded cache), and
checking every picture (``image_checks.check_images``: each opened once), with the process's peak RSS. The
issue's target: the preview in about the time of listing the folder.

Training (``--training``): a ViT of our own (6 layers, hidden 192, 64 x 64 pictures in 8 x 8 patches: 65
tokens, random weights, an ImageNet-sized head the run replaces; no network) on the 90 sample shapes
(``resources/samples/shapes``), batch 16, fp32, the same learning rate, seed and steps on both sides.

- ours: ``run_training`` with task "image-classification" on the folder, no held-out pictures
  (validation.fraction 0), every picture checked before the model loads, the run folder, events and log
  written; a checkpoint at the last step only and the model saved at the end.
- plain: what the Transformers image-classification guide writes: ``load_dataset("imagefolder")``,
  ``with_transform`` putting each batch through the image processor, a ``collate_fn`` stacking
  ``pixel_values`` and ``labels``, ``AutoModelForImageClassification.from_pretrained(num_labels,
  label2id, id2label, ignore_mismatched_sizes=True)``, ``Trainer(...).train()``, ``report_to=[]``, no
  tqdm, ``remove_unused_columns=False``, the same checkpoint at the last step, ``save_model`` at the end.

The clocks, the pairing and the printed ratios are ``bench/pairing.py``'s. Target: ours / plain <= 1.05
for the steps and the whole run.

    python bench/images.py [--count 100000]
    python bench/images.py --training [--repeats 3] [--steps 40] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pairing  # the clocks and the pairing of the paired benches

LR, SEED, BATCH, LOGGING, SAVE_STEPS, SIDE = 1e-3, 42, 16, 10, 100_000, 64
SHAPES = Path(__file__).resolve().parents[1] / "resources" / "samples" / "shapes"


def write(root: Path, count: int) -> None:
    from PIL import Image

    picture = Image.new("RGB", (16, 16), "teal")
    for i in range(count):
        folder = root / f"class{i % 10}"
        folder.mkdir(exist_ok=True)
        picture.save(folder / f"{i:06d}.png")


def measure(root: Path) -> dict:
    from desktop.core.data import images

    started = time.perf_counter()
    rows = images.class_folders(root)
    listed = time.perf_counter()
    for row in rows[:8]:
        images.thumbnail(row.path)
    previewed = time.perf_counter()
    from desktop.core.data.image_checks import check_images

    found = check_images(rows)
    checked = time.perf_counter()
    return {
        "pictures": len(rows),
        "list_s": listed - started,
        "preview_s": previewed - started,
        "check_s": checked - previewed,
        "usable": len(found.usable),
        "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def build(folder: Path) -> Path:
    """The ViT of the training bench, with its image processor."""
    import torch
    from transformers import ViTConfig, ViTForImageClassification, ViTImageProcessor

    torch.manual_seed(SEED)
    config = ViTConfig(
        image_size=SIDE,
        patch_size=8,
        hidden_size=192,
        num_hidden_layers=6,
        num_attention_heads=3,
        intermediate_size=768,
        num_labels=1000,
    )
    model = folder / "vit"
    ViTForImageClassification(config).save_pretrained(model)
    ViTImageProcessor(size={"height": SIDE, "width": SIDE}).save_pretrained(model)
    return model


def ours(model: Path, data: Path, out: Path, steps: int) -> dict:
    from desktop.core.settings.config import RunConfig
    from desktop.core.training.run import run_training

    config = RunConfig(task="image-classification")
    config.model.name = str(model)
    config.data.files = [str(data)]
    config.validation.fraction = 0
    config.output.runs_dir = str(out)
    t = config.training
    t.max_steps, t.batch_size, t.learning_rate, t.seed = steps, BATCH, LR, SEED
    t.save_steps, t.logging_steps = SAVE_STEPS, LOGGING
    clock = pairing.Clock()
    result = run_training(config, clock.seen)
    assert result.status == "finished", result.failure
    checkpoints = len(list(Path(result.run_dir).glob("checkpoints/checkpoint-*")))
    return pairing.figures(clock, float(result.metrics["train_loss"]), checkpoints)


def plain(model_dir: Path, data: Path, out: Path, steps: int) -> dict:
    """What the Transformers image-classification guide writes, with our run's settings."""
    import torch
    from datasets import load_dataset
    from transformers import (
        AutoImageProcessor,
        AutoModelForImageClassification,
        Trainer,
        TrainingArguments,
        set_seed,
    )

    clock = pairing.Clock()

    set_seed(SEED)
    dataset = load_dataset("imagefolder", data_dir=str(data), split="train")
    names = dataset.features["label"].names
    processor = AutoImageProcessor.from_pretrained(model_dir)

    def transform(batch: dict) -> dict:
        pictures = [picture.convert("RGB") for picture in batch["image"]]
        batch["pixel_values"] = processor(images=pictures, return_tensors="pt")["pixel_values"]
        return batch

    def collate(examples: list[dict]) -> dict:
        return {
            "pixel_values": torch.stack([e["pixel_values"] for e in examples]),
            "labels": torch.tensor([e["label"] for e in examples]),
        }

    model = AutoModelForImageClassification.from_pretrained(
        model_dir,
        num_labels=len(names),
        label2id={name: i for i, name in enumerate(names)},
        id2label=dict(enumerate(names)),
        ignore_mismatched_sizes=True,
    )
    args = TrainingArguments(
        output_dir=str(out / "checkpoints"),
        max_steps=steps,
        per_device_train_batch_size=BATCH,
        learning_rate=LR,
        seed=SEED,
        logging_steps=LOGGING,
        save_steps=SAVE_STEPS,
        disable_tqdm=True,
        report_to=[],
        remove_unused_columns=False,
    )
    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=dataset.with_transform(transform),
        data_collator=collate,
        processing_class=processor,
        callbacks=[clock.callback()],
    )
    output = trainer.train()
    trainer.save_model(str(out / "model"))
    checkpoints = len(list((out / "checkpoints").glob("checkpoint-*")))
    return pairing.figures(clock, float(output.training_loss), checkpoints)


def training(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        model = build(root)
        runs, ratio = pairing.paired(model, SHAPES, root, args, "RSS MiB    loss  (n/a)  ckpts", __file__)
    print(pairing.summary(ratio, pairing.medians(runs), args) + " (target <= 1.05)")


def main() -> None:
    parser = pairing.arguments(__doc__, 40)
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--training", action="store_true", help="the training throughput instead")
    parser.add_argument("--root", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        pairing.child(args, ours, plain)
        return
    if args.training:
        training(args)
        return
    if args.root:
        print(json.dumps(measure(Path(args.root))))
        return
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        write(Path(tmp), args.count)
        print(f"wrote {args.count} pictures in {time.perf_counter() - started:.1f} s", flush=True)
        done = subprocess.run(
            [sys.executable, __file__, "--root", tmp], capture_output=True, text=True, check=True
        )
        r = json.loads(done.stdout.splitlines()[-1])
    print(
        f"{r['pictures']} pictures: listed in {r['list_s']:.2f} s, preview (listing + 8 thumbnails) "
        f"{r['preview_s']:.2f} s ({r['preview_s'] / r['list_s']:.2f}x the listing), every picture checked in "
        f"{r['check_s']:.1f} s ({r['check_s'] / r['pictures'] * 1e6:.0f} us each), "
        f"peak RSS {r['rss_mib']:.0f} MiB"
    )


if __name__ == "__main__":
    main()
