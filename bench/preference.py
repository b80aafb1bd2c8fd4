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
after one short warm-up of each (the page cache); the clocks are ``bench/pairing.py``'s. Printed: a line
per run, the medians per side with peak RSS, the final training loss and the reward accuracy of the
last logging window (both sides doing the same work show the same figures), and the medians of the
paired ratios ours / plain. Target: <= 1.03 for the steps and the whole run. Figures on a shared 2-core
CPU (3 repeats, 40 steps): step 0.94, whole run 0.94; ours' own work per step (events, summary, token
count) about 0.6 ms of 430 ms.

    python bench/preference.py [--repeats 3] [--steps 40] [--threads 1]
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pairing  # the clocks and the pairing of the paired benches

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
        num_key_value_heads=min(2, hidden // 64),  # no more than the heads (--hidden 64: one)
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
    clock = pairing.Clock()
    result = run_training(config, clock.seen)
    assert result.status == "finished", result.failure
    checkpoints = len(list(Path(result.run_dir).glob("checkpoints/checkpoint-*")))
    return pairing.figures(clock, float(result.metrics["train_loss"]), checkpoints, _accuracy(clock))


def plain(model_dir: Path, data: Path, out: Path, steps: int) -> dict:
    """What TRL's docs write for DPO, with our run's settings."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import DPOConfig, DPOTrainer

    clock = pairing.Clock()
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
        model=model,
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
        callbacks=[clock.callback()],
    )
    output = trainer.train()
    trainer.save_model(str(out / "model"))
    checkpoints = len(list((out / "checkpoints").glob("checkpoint-*")))
    return pairing.figures(clock, float(output.training_loss), checkpoints, _accuracy(clock))


def _accuracy(clock: pairing.Clock) -> float:
    """The reward accuracy of the last logging window."""
    return clock.last("rewards/accuracies")


def main() -> None:
    parser = pairing.arguments(__doc__, 40)
    parser.add_argument("--hidden", type=int, default=384)
    parser.add_argument("--layers", type=int, default=4)
    args = parser.parse_args()
    if args.side:
        pairing.child(args, ours, plain)
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        model, data = build(root, args.hidden, args.layers)
        runs, ratio = pairing.paired(model, data, root, args, "RSS MiB    loss  reward acc  ckpts", __file__)
    print(pairing.summary(ratio, pairing.medians(runs), args) + " (target <= 1.03)")


if __name__ == "__main__":
    main()
