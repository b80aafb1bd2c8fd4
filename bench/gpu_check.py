"""What only a machine with an NVIDIA GPU can check (issue 16), in one script of a few minutes.

    python bench/gpu_check.py [--cap-gb 6] [--steps 12]

1. NVML beside PyTorch's allocator: before, with 2 GiB allocated, and after freeing it (NVML counts
   every process and the CUDA context; torch counts its own tensors and its cache).
2. A real out-of-memory error, recovered from: the process's GPU memory is capped
   (``torch.cuda.set_per_process_memory_fraction``) so that the run's first setting cannot fit.
   a. with the longest-batch probe, as the app runs: the error shows before the first step;
   b. without it: the error strikes in a step; the run goes back and goes on.
   Both must finish, with the same effective batch where only the batch changed.
3. The VRAM estimate against the measured peak for three configurations (target: within 15%).
4. Speed (issue 43): bench/speed.py's workload, larger (8 layers, hidden 1024, up to 1024 tokens), on
   the GPU: our defaults, with Liger's kernels too where liger-kernel is installed, against the plain
   Trainer script (target: >= 2.5x with Liger and padding-free batches together).
5. Preference tuning (issue 38) on the GPU, as the app runs it (bf16, the longest-pair probe first):
   full DPO (with the frozen reference model), LoRA DPO (the adapter switched off is the reference),
   QLoRA DPO where bitsandbytes is installed, and ORPO; each must finish, with its reward accuracy,
   and its measured peak beside the estimate (which counts the reference and two sequences a pair).
6. Serving (issue 39) on the GPU: the model served on a free port, a greedy chat answer equal to
   ``model.generate`` on the GPU, 4 clients at once each with their own answer, and after Stop the
   model's GPU memory back to what it was before the server loaded it.

The model is a GPT-2 of 85 M parameters built here with a tokenizer trained on the bundled samples
(no network). Without a CUDA GPU the script says so and exits.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
GB = 2**30
MB = 2**20


def build_model(folder: Path) -> Path:
    """A 12-layer GPT-2 (768 wide, 85 M parameters) with the tiny models' small tokenizer."""
    import torch
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

    from tests import tiny_models

    small = tiny_models.gpt2(folder / "tokenizer")
    tokenizer = AutoTokenizer.from_pretrained(small)
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=1024,
        n_embd=768,
        n_layer=12,
        n_head=12,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(0)
    model_dir = folder / "gpt2-85m"
    GPT2LMHeadModel(config).save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    return model_dir


def write_data(path: Path, rows: int = 800, words: int = 700) -> Path:
    """Plain texts longer than the max length, so every batch is as long as it can be."""
    import csv

    from tests import tiny_models

    vocabulary = " ".join(tiny_models.corpus()).split()
    rng = random.Random(0)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["text"])
        for _ in range(rows):
            writer.writerow([" ".join(rng.choice(vocabulary) for _ in range(words))])
    return path


def make_config(model: Path, data: Path, runs: Path, steps: int, batch: int) -> object:
    from desktop.core.settings.config import RunConfig

    config = RunConfig(task="causal-lm")
    config.model.name = str(model)
    config.data.files = [str(data)]
    config.columns.text = "text"
    config.validation.fraction = 0
    config.output.runs_dir = str(runs)
    t = config.training
    t.batch_size, t.gradient_accumulation, t.max_length = batch, 1, 512
    t.max_steps, t.save_steps, t.logging_steps = steps, max(1, steps // 2), 1
    return config


def nvml_beside_torch() -> None:
    import torch

    from desktop.core.training.callbacks import nvml_memory

    print("\n1. NVML beside PyTorch (GB)")
    print(f"   {'':<22}{'torch allocated':>16}{'torch reserved':>16}{'NVML used':>12}{'NVML total':>12}")

    def row(label: str) -> None:
        used, total = nvml_memory(torch.cuda.current_device()) or (0, 0)
        print(
            f"   {label:<22}{torch.cuda.memory_allocated() / GB:>16.2f}"
            f"{torch.cuda.memory_reserved() / GB:>16.2f}{used / GB:>12.2f}{total / GB:>12.2f}"
        )

    torch.cuda.init()
    row("start")
    block = torch.empty(2 * GB, dtype=torch.uint8, device="cuda")
    row("2 GiB allocated")
    del block
    row("freed (cached)")
    torch.cuda.empty_cache()
    row("cache emptied")


def recovery_runs(model: Path, data: Path, tmp: Path, cap_gb: float, steps: int) -> bool:
    import torch

    from desktop.core.runs.folders import RunDir
    from desktop.core.system.events import AdjustedEvent, ProgressEvent, StartedEvent
    from desktop.core.training import recovery
    from desktop.core.training.run import run_training

    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.set_per_process_memory_fraction(min(1.0, cap_gb * GB / total))
    print(f"\n2. A real out-of-memory error, with the GPU capped at {cap_gb:.1f} GB")
    ok = True
    wanted = recovery.probe_wanted
    try:
        for label, probe in (("a. with the longest-batch probe", True), ("b. without the probe", False)):
            recovery.probe_wanted = wanted if probe else (lambda args: False)
            config = make_config(model, data, tmp / f"runs-{probe}", steps, batch=64)
            events: list = []
            started = time.perf_counter()
            result = run_training(config, events.append)
            seconds = time.perf_counter() - started
            adjusted = [e for e in events if isinstance(e, AdjustedEvent)]
            first_step = next((e for e in events if isinstance(e, ProgressEvent)), None)
            print(f"   {label}: {result.status} in {seconds:.0f} s, {len(adjusted)} change(s)")
            for event in adjusted:
                print(
                    f"     at step {event.step} (went on from {event.resumed_from}): "
                    + "; ".join(str(d) for d in event.described)
                )
            starts = [e.resumed_from_step for e in events if isinstance(e, StartedEvent)]
            print(
                f"     training started at steps {starts}; "
                f"first step reported: {first_step.step if first_step else '-'}"
            )
            if result.status != "finished" or not adjusted:
                ok = False
                print(
                    "     FAIL: "
                    + (result.failure.reason if result.failure else "no out-of-memory error was raised")
                )
                continue
            saved = RunDir(result.run_dir).config().training
            effective = saved.batch_size * saved.gradient_accumulation
            print(
                f"     the run's config: batch {saved.batch_size} x accumulation "
                f"{saved.gradient_accumulation} = {effective}"
            )
            if probe and adjusted[0].step != 0:
                ok = False
                print("     FAIL: the probe should have found the error before the first step")
    finally:
        recovery.probe_wanted = wanted
        torch.cuda.set_per_process_memory_fraction(1.0)
    return ok


def estimate_against_peak(model: Path, data: Path, tmp: Path, steps: int) -> bool:
    import torch

    from desktop.core.hub.fit import shapes_for_config
    from desktop.core.settings.memory import estimate
    from desktop.core.system.events import MemoryEvent
    from desktop.core.training.run import run_training

    print("\n3. The VRAM estimate against the measured peak (allocator level; target within 15%)")
    ok = True
    for label, change in (
        ("full, batch 8", lambda c: None),
        (
            "gradient checkpointing, batch 16",
            lambda c: setattr(c.performance, "gradient_checkpointing", True),
        ),
        ("LoRA, batch 8", lambda c: setattr(c.lora, "enabled", True)),
    ):
        batch = 16 if "16" in label else 8
        config = make_config(model, data, tmp / "runs-estimate", steps, batch=batch)
        config.performance.oom_recovery = False  # a measured peak of the setting asked for
        change(config)
        est = estimate(shapes_for_config(config), config, mixed_precision=True)
        allocator = est.total - est.overhead
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        peaks: list[int] = []

        def record(event: object, peaks: list[int] = peaks) -> None:
            if isinstance(event, MemoryEvent):
                peaks.append(event.peak_bytes or 0)

        result = run_training(config, record)
        if result.status != "finished" or not peaks:
            print(f"   {label:<36} FAIL: {result.failure.reason if result.failure else result.status}")
            ok = False
            continue
        peak = max(peaks)
        error = (allocator - peak) / peak
        within = abs(error) <= 0.15
        ok = ok and within
        print(
            f"   {label:<36} estimate {allocator / MB:8.0f} MB  measured {peak / MB:8.0f} MB  "
            f"error {100 * error:+6.1f}%  {'ok' if within else 'OUTSIDE 15%'}"
        )
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cap-gb", type=float, default=6.0, help="GPU memory cap for the out-of-memory runs")
    parser.add_argument("--steps", type=int, default=12)
    args = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("No CUDA GPU here: this script checks what only a GPU can show. Nothing was run.")
        return
    import transformers

    print(
        f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__} (CUDA {torch.version.cuda}), "
        f"transformers {transformers.__version__}, bf16 {torch.cuda.is_bf16_supported()}"
    )
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        model = build_model(tmp)
        data = write_data(tmp / "long_texts.csv")
        nvml_beside_torch()
        recovered = recovery_runs(model, data, tmp, args.cap_gb, args.steps)
        estimated = estimate_against_peak(model, data, tmp, max(4, args.steps // 3))
        speed_on_gpu(tmp, max(20, args.steps * 3))
        preferred = preference_on_gpu(model, tmp, args.steps)
        served = serving_on_gpu(model)
    print(
        f"\nrecovery: {'ok' if recovered else 'FAILED'}; "
        f"estimate: {'ok' if estimated else 'outside the target'}; "
        f"preference: {'ok' if preferred else 'FAILED'}; serving: {'ok' if served else 'FAILED'}"
    )


def speed_on_gpu(tmp: Path, steps: int) -> None:
    """Our defaults (and with Liger) against the plain Trainer script, on the GPU: training loop tokens/s."""
    import importlib.util

    sys.path.insert(0, str(ROOT / "bench"))
    import speed

    model, data = speed.build(tmp / "speed", 1024, "log", hidden=1024, layers=8)
    shape = (steps, 16, 1024)
    speed.ours(model, data, tmp / "speed-warm", 2, 16, 1024, True)
    padding: list[tuple[int, int]] = []
    _, plain_loop, plain_loss = speed.plain(model, data, tmp / "speed-plain", *shape, padding)
    _, ours_loop, ours_loss = speed.ours(model, data, tmp / "speed-ours", *shape, True)
    tokens = sum(real for real, _ in padding) / len(padding) * steps
    print(f"\nspeed: plain {tokens / plain_loop:.0f} tokens/s, loss {plain_loss:.4f}")
    print(
        f"speed: ours {tokens / ours_loop:.0f} tokens/s ({plain_loop / ours_loop:.2f}x), loss {ours_loss:.4f}"
    )
    if importlib.util.find_spec("liger_kernel") is None:
        print("speed: liger-kernel is not installed here (pip install liger-kernel): no Liger figure")
        return
    _, liger_loop, liger_loss = speed.ours(model, data, tmp / "speed-liger", *shape, True, liger=True)
    print(
        f"speed: ours with Liger {tokens / liger_loop:.0f} tokens/s ({plain_loop / liger_loop:.2f}x, "
        f"target >= 2.5x), loss {liger_loss:.4f}"
    )


def preference_on_gpu(model: Path, tmp: Path, steps: int) -> bool:
    """DPO (full, LoRA, QLoRA) and ORPO runs on the GPU: finished, reward accuracy, peak vs estimate."""
    import importlib.util

    import torch

    from desktop.core.hub.fit import shapes_for_config
    from desktop.core.settings.config import RunConfig
    from desktop.core.settings.memory import estimate
    from desktop.core.system.events import LogEvent, MemoryEvent
    from desktop.core.training.run import run_training

    print("\n5. Preference tuning on the GPU (bf16, probe first)")
    fruit, tools = ["apple", "pear", "plum", "grape", "lemon"], ["hammer", "saw", "drill", "wrench", "axe"]
    rng = random.Random(0)
    data = tmp / "pairs.jsonl"
    rows = [
        {"prompt": f"Name a thing, number {i}.", "chosen": rng.choice(fruit), "rejected": rng.choice(tools)}
        for i in range(400)
    ]
    data.write_text("\n".join(json.dumps(row) for row in rows), encoding="utf-8")
    kinds = [("full DPO", "dpo", ""), ("LoRA DPO", "dpo", "lora"), ("ORPO", "orpo", "")]
    if importlib.util.find_spec("bitsandbytes") is not None:
        kinds.insert(2, ("QLoRA DPO", "dpo", "qlora"))
    ok = True
    for label, method, lora in kinds:
        config = RunConfig(task="preference")
        config.model.name, config.data.files = str(model), [str(data)]
        config.output.runs_dir = str(tmp / "runs-preference")
        config.preference.method = method
        config.lora.enabled, config.lora.qlora = lora == "lora", lora == "qlora"
        t = config.training
        t.max_steps, t.batch_size, t.max_length, t.learning_rate, t.logging_steps = steps, 8, 128, 5e-5, 1
        t.eval_steps = steps
        est = estimate(shapes_for_config(config), config, mixed_precision=True)
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        peaks: list[int] = []
        accuracy: list[float] = []

        def record(event: object, peaks: list[int] = peaks, accuracy: list[float] = accuracy) -> None:
            if isinstance(event, MemoryEvent):
                peaks.append(event.peak_bytes or 0)
            elif isinstance(event, LogEvent) and "eval_rewards/accuracies" in event.metrics:
                accuracy.append(event.metrics["eval_rewards/accuracies"])

        result = run_training(config, record)
        if result.status != "finished" or not peaks:
            print(f"   {label:<12} FAIL: {result.failure.reason if result.failure else result.status}")
            ok = False
            continue
        peak, allocator = max(peaks), est.total - est.overhead
        print(
            f"   {label:<12} finished; eval reward accuracy {(accuracy or [float('nan')])[-1]:.2f}; "
            f"estimate {allocator / MB:7.0f} MB (reference {est.reference / MB:.0f} MB), measured "
            f"{peak / MB:7.0f} MB ({100 * (allocator - peak) / peak:+.0f}%)"
        )
    return ok


def serving_on_gpu(model: Path) -> bool:
    """The model served on the GPU: answers equal to ``generate``, 4 clients at once, memory back at Stop."""
    import threading
    import urllib.request

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from desktop.core.serving.server import LocalServer, ServeOptions

    print("\n6. Serving on the GPU")
    torch.cuda.empty_cache()
    before = torch.cuda.memory_allocated()
    server = LocalServer(model, ServeOptions(port=0, name="gpu")).open().start()
    url = server.base_url + "/completions"

    def ask(prompt: str) -> str:
        body = json.dumps({"prompt": prompt, "max_tokens": 24, "temperature": 0}).encode()
        request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as answer:
            return json.load(answer)["choices"][0]["text"]

    prompts = ["The weather today", "My favourite food", "A long time ago", "The best way to learn"]
    try:
        loaded = torch.cuda.memory_allocated()
        tokenizer = AutoTokenizer.from_pretrained(model)
        plain = AutoModelForCausalLM.from_pretrained(model).to("cuda").eval()
        expected = {}
        for prompt in prompts:
            ids = tokenizer(prompt, return_tensors="pt").to("cuda")
            out = plain.generate(
                **ids, max_new_tokens=24, do_sample=False, pad_token_id=tokenizer.eos_token_id
            )
            expected[prompt] = tokenizer.decode(out[0, ids["input_ids"].shape[1] :], skip_special_tokens=True)
        del plain
        got: dict[str, str] = {}
        threads = [threading.Thread(target=lambda p=p: got.__setitem__(p, ask(p))) for p in prompts]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
    finally:
        server.stop()
    torch.cuda.empty_cache()
    after = torch.cuda.memory_allocated()
    same = sum(got.get(p) == expected[p] for p in prompts)
    print(
        f"   answers equal to generate: {same} of {len(prompts)} (4 clients at once); model "
        f"{(loaded - before) / MB:.0f} MB on the GPU while served, {(after - before) / MB:+.0f} MB after Stop"
    )
    return same == len(prompts) and after - before < 16 * MB


if __name__ == "__main__":
    main()
