"""How much GPU memory a run needs: a documented sum of terms, exact where it can be.

The terms follow shared/reference/memory.md (Transformers' model-memory anatomy, the Ultra-Scale
Playbook, Korthikanti et al. 2022). With P_all all parameters and P the trainable ones:

- weights:     4 * P_all bytes (fp32 master weights; AMP casts per op). LoRA: P = adapter params.
               QLoRA: the frozen base in 4-bit NF4, 0.5 byte per weight + ~3% quantisation
               constants; the adapters stay 4 bytes each.
- gradients:   4 * P (fp32, like their parameters).
- optimizer:   AdamW: 8 * P (momentum + variance) + 4 bytes of ``step`` per trainable tensor.
               8-bit AdamW: 2 * P + 4 bytes per tensor. Adafactor (no momentum, factored second
               moment): a matrix of shape (..., r, c) keeps r + c values per leading index, a vector
               keeps all its values, and every tensor one RMS scalar; 4 bytes each.
- activations: per layer s*b*h*34 bytes with 2-byte AMP activations and SDPA (no s^2 scores
               stored), doubled in fp32; with gradient checkpointing 2*s*b*h per layer plus one
               layer's full activations during its recomputation.
- logits:      language-model heads keep b*s*V logits in fp32 plus their gradient: 8*b*s*V bytes.
- overhead:    the CUDA context (~500 MB) plus 10% for the allocator's fragmentation.
- preference:  every example is two sequences (prompt + chosen, prompt + rejected) in one batch, so
               activations and logits count twice; DPO (TRL's fused head) never holds the logits whole,
               only a tile of up to 4096 tokens by 32768 vocabulary entries in fp32, and its
               gradient. DPO without LoRA also holds the frozen reference model (its weights as the
               policy's, no gradients or optimizer state; its forward pass runs without gradients,
               so it keeps no activations). DPO with LoRA uses the model with its adapter switched
               off, and ORPO has no reference: nothing more.
- reasoning (GRPO): every sequence is a prompt (up to the max length) and an answer the model wrote
               (up to ``max_completion_length``); the batch is of answers. Before each step the answers
               are written without gradients: their key/value cache (2 * layers * answers written at
               once * s * h, 2 bytes) is held instead of the activations, so the larger of the two
               counts. The logits are the answers' tokens only. A beta above 0 without LoRA holds the
               frozen reference model, as DPO does.

The first three are exact (tested against real parameter counts and optimizer state); the
activation and overhead terms are estimates to calibrate on a GPU.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from desktop.core.settings.config import RunConfig
from desktop.core.settings.config_sections import IMAGE_TASKS
from desktop.core.system.messages import msg

CUDA_CONTEXT = 500 * 2**20
FRAGMENTATION = 0.10
TIGHT = 0.85  # above this share of free memory a run "fits" only tightly
DPO_TILE_TOKENS, DPO_TILE_VOCAB = 4096, 32768  # TRL 1.x's chunked log-probabilities (trl/kernels)
CONVERSATION_TOKENS = 256
"""Vision-language runs: the text of a question and its answer, beside the picture's tokens (the max
length bounds both together)."""
DEFAULT_IMAGE_SIZE = 224
"""The side most image models are trained at (a config that names none: ResNet's)."""
CNN_VALUES_PER_PIXEL = 400
"""A convolutional network's activations kept for the backward pass, per input value: training ResNet-50
on 32 pictures of 224 x 224 in fp32 takes about 8 GB, some 60 million values a picture (about 400 per
input value). A rough figure: the network's shape changes it."""


@dataclass(frozen=True)
class ParamShapes:
    """The shapes of a model's parameters, split into all and trainable.

    Attributes:
        all_shapes: Every parameter's shape.
        trainable_shapes: Shapes of the parameters the optimizer updates.
        hidden_size, num_layers, vocab_size: For the activation and logits terms.
        lm_head: Whether the model ends in a vocabulary-sized head (causal LM, seq2seq).
    """

    all_shapes: tuple[tuple[int, ...], ...]
    trainable_shapes: tuple[tuple[int, ...], ...]
    hidden_size: int
    num_layers: int
    vocab_size: int
    lm_head: bool
    image_size: int = 0
    """Models that see pictures: the side of the square they are resized to (0: a text model)."""
    patch_size: int = 0
    """Vision transformers: the side of a patch (a token each); 0 for a convolutional network."""
    picture_tokens: int = 0
    """Vision-language models: the tokens a picture takes in the sequence (:func:`vision_tokens`)."""

    @property
    def num_parameters(self) -> int:
        """All parameters."""
        return sum(math.prod(s) for s in self.all_shapes)

    @property
    def num_trainable(self) -> int:
        """Trainable parameters."""
        return sum(math.prod(s) for s in self.trainable_shapes)


def shapes_of(model: Any, lm_head: bool) -> ParamShapes:
    """Read parameter shapes (and the sizes the activation terms need) from a model.

    Works on a model built on the ``meta`` device, which costs no memory.
    """
    cfg = model.config
    text = cfg.get_text_config() if hasattr(cfg, "get_text_config") else cfg
    hidden = _first(text, "hidden_size", "n_embd", "d_model")
    layers = _first(text, "num_hidden_layers", "n_layer", "num_layers") + (
        getattr(text, "num_decoder_layers", 0) or 0
    )
    params = list(model.named_parameters())
    vision = getattr(cfg, "vision_config", None) or cfg
    image_size = getattr(vision, "image_size", 0) or 0
    patch_size = getattr(vision, "patch_size", 0) or 0
    return ParamShapes(
        image_size=int(image_size if isinstance(image_size, int) else max(image_size)),
        patch_size=int(patch_size if isinstance(patch_size, int) else max(patch_size)),
        all_shapes=tuple(tuple(p.shape) for _, p in params),
        trainable_shapes=tuple(tuple(p.shape) for _, p in params if p.requires_grad),
        hidden_size=hidden,
        num_layers=layers,
        vocab_size=int(getattr(text, "vocab_size", 0) or 0),
        lm_head=lm_head,
    )


def _first(config: Any, *names: str) -> int:
    for name in names:
        value = getattr(config, name, None)
        if value:
            return int(value)
    return 0


@dataclass(frozen=True)
class Estimate:
    """A memory estimate in bytes, term by term."""

    weights: int
    gradients: int
    optimizer: int
    activations: int
    logits: int
    overhead: int
    reference: int = 0
    """Preference tuning with DPO without LoRA: the frozen reference model."""

    @property
    def total(self) -> int:
        """All terms."""
        return (
            self.weights
            + self.gradients
            + self.optimizer
            + self.activations
            + self.logits
            + self.overhead
            + self.reference
        )

    def verdict(self, free_bytes: int) -> str:
        """``fits``, ``tight`` or ``will not fit`` against a GPU's free memory."""
        if self.total <= free_bytes * TIGHT:
            return "fits"
        return "tight" if self.total <= free_bytes else "will not fit"

    def breakdown(self, gpu: bool = True) -> dict[str, int]:
        """The terms by name, for display (``gpu`` false: a run on the CPU, in RAM)."""
        terms = {
            msg("weights"): self.weights,
            msg("gradients"): self.gradients,
            msg("optimizer states"): self.optimizer,
            msg("activations"): self.activations,
            msg("logits"): self.logits,
            msg("CUDA context and overhead") if gpu else msg("libraries and overhead"): self.overhead,
        }
        if self.reference:
            terms[msg("reference model (DPO)")] = self.reference
        return terms


def optimizer_bytes(optimizer: str, trainable_shapes: tuple[tuple[int, ...], ...]) -> int:
    """Bytes of optimizer state for these trainable parameters (exact)."""
    count = len(trainable_shapes)
    numel = sum(math.prod(s) for s in trainable_shapes)
    if optimizer == "adafactor":
        total = 0
        for shape in trainable_shapes:
            if len(shape) >= 2:
                total += (shape[-2] + shape[-1]) * math.prod(shape[:-2])
            else:
                total += math.prod(shape)
        return 4 * (total + count)  # + the RMS scalar transformers' Adafactor keeps per tensor
    if optimizer in ("adamw_bnb_8bit", "paged_adamw_8bit"):
        return 2 * numel + 4 * count
    return 8 * numel + 4 * count


def mixed_precision(config: RunConfig, on_gpu: bool) -> bool:
    """Whether a run keeps 2-byte activations: on an NVIDIA GPU unless fp32 is asked for; on the CPU
    ("auto" is fp32 there) never. Every estimate shown (the fit badge, Memory & speed) asks this."""
    return on_gpu and config.performance.precision != "fp32"


def estimate(shapes: ParamShapes, config: RunConfig, mixed_precision: bool = True) -> Estimate:
    """The memory one training step needs on the GPU for ``config``'s batch, length and options.

    Args:
        shapes: From :func:`shapes_of` (for the model as it will be trained, LoRA included; with
            QLoRA the frozen weights count half a byte each).
        config: Batch size, max length, gradient checkpointing and optimizer come from here.
        mixed_precision: Whether activations are 2-byte (fp16/bf16 AMP) or 4-byte (fp32).
    """
    p = config.performance
    b, s, h = config.training.batch_size, config.training.max_length, shapes.hidden_size
    if config.task == "preference":
        b *= 2  # the chosen and the rejected sequence of every example go through the model together
    grpo = config.task == "grpo"
    if grpo:
        s += config.grpo.max_completion_length  # the prompt and the answer the model wrote
    pictures = config.task == "image-classification"
    if pictures:
        s = image_tokens(shapes)
    elif config.task in IMAGE_TASKS and shapes.picture_tokens:  # a picture and its conversation
        s = min(s, shapes.picture_tokens + CONVERSATION_TOKENS)
    if config.lora.qlora:
        weights = int(0.5 * 1.03 * (shapes.num_parameters - shapes.num_trainable)) + 4 * shapes.num_trainable
    else:
        weights = 4 * shapes.num_parameters
    gradients = 4 * shapes.num_trainable
    optimizer = optimizer_bytes(p.optimizer, shapes.trainable_shapes)
    per_layer = 34 * s * b * h
    if p.gradient_checkpointing:
        activations = 2 * s * b * h * shapes.num_layers + per_layer
    else:
        activations = per_layer * shapes.num_layers
    if pictures and not (shapes.patch_size and h):  # a convolutional network: its feature maps
        side = shapes.image_size or DEFAULT_IMAGE_SIZE
        activations = b * 3 * side * side * CNN_VALUES_PER_PIXEL * 2
    if not mixed_precision:
        activations *= 2
    if grpo:  # the answers are written before the step, without gradients: their cache or the step's
        written = b * config.training.gradient_accumulation  # TRL writes a step's worth of answers at once
        cache = 2 * shapes.num_layers * written * s * h * (2 if mixed_precision else 4)
        activations = max(activations, cache)
    logits = 8 * b * s * shapes.vocab_size if shapes.lm_head else 0
    if grpo and shapes.lm_head:
        logits = 8 * b * config.grpo.max_completion_length * shapes.vocab_size  # the answers' tokens
    if p.liger_kernel and shapes.lm_head:
        # Liger's fused linear cross-entropy makes the logits a chunk of about B*T*H/V tokens at a time:
        # a chunk's logits are as large as the hidden states.
        logits = 8 * b * s * min(shapes.vocab_size, h)
    lora = config.lora.enabled or config.lora.qlora
    dpo = config.task == "preference" and config.preference.method == "dpo"
    reference = weights if (dpo or (grpo and config.grpo.beta > 0)) and not lora else 0
    if config.task == "preference" and config.preference.method == "dpo" and shapes.lm_head:
        logits = 8 * min(b * s, DPO_TILE_TOKENS) * min(shapes.vocab_size, DPO_TILE_VOCAB)
    weights, gradients, optimizer = per_gpu(config, weights, gradients, optimizer)
    if reference:
        reference = per_gpu(config, reference, 0, 0)[0]
    state = weights + gradients + optimizer + activations + logits + reference
    overhead = CUDA_CONTEXT + int(FRAGMENTATION * state)
    return Estimate(weights, gradients, optimizer, activations, logits, overhead, reference)


def image_tokens(shapes: ParamShapes) -> int:
    """The tokens a vision transformer reads for one picture: a patch each, and one for the class (ViT's
    224 / 16: 197); 0 for a convolutional network."""
    if not shapes.patch_size or not shapes.hidden_size:
        return 0
    return (max(shapes.image_size or DEFAULT_IMAGE_SIZE, shapes.patch_size) // shapes.patch_size) ** 2 + 1


QWEN_VL_DEFAULT_SIDE = 768
"""Qwen2-VL reads a picture at its own size (up to 12.8 megapixels); without images.resolution the
estimate assumes pictures of this side."""


IDEFICS_DEFAULT_TILES = 4
"""Tiles a side of a picture that SmolVLM's and Idefics 3's processors make at their own size (a
``longest_edge`` of four tiles), plus the whole picture scaled to one."""


def vision_tokens(model_config: dict[str, Any], resolution: int = 0) -> int:
    """The tokens one picture takes in a vision-language model's sequence, from its ``config.json``
    (at ``resolution`` pixels a side where the model lets it change): LLaVA a token per patch (and the
    class token with the "full" strategy), Gemma 3 its fixed count, Qwen2-VL a token per 28 x 28 pixels,
    Idefics 3 / SmolVLM a fixed count per 512-pixel tile and one more for the whole picture; with the
    tokens that frame them."""
    vision = model_config.get("vision_config") or {}
    kind = str(model_config.get("model_type", ""))
    side = int(vision.get("image_size", 0) or 0)
    patch = int(vision.get("patch_size", 0) or 0)
    if kind == "gemma3":  # framed by "\n\n<start_of_image>" and "<end_of_image>\n\n"
        return int(model_config.get("mm_tokens_per_image", 256)) + 4
    if kind in ("qwen2_vl", "qwen2_5_vl"):
        merge = int(vision.get("spatial_merge_size", 2) or 2)
        step = (patch or 14) * merge
        return max(1, (resolution or QWEN_VL_DEFAULT_SIDE) // step) ** 2
    if kind in ("idefics3", "smolvlm"):
        scale = int(model_config.get("scale_factor", 1) or 1)
        per_tile = (side // max(patch, 1)) ** 2 // (scale * scale) if side and patch else 64
        # The processors of SmolVLM (256M to 2B) and Idefics 3 scale a picture to four tiles a side.
        across = -(-resolution // side) if resolution and side else IDEFICS_DEFAULT_TILES
        if across == 1:  # the whole picture alone: <fake_token_around_image><global-img> ... <fake_...>
            return per_tile + 3
        # Each tile framed by <fake_token_around_image><row_R_col_C>, a new line after each row of tiles,
        # and the whole picture after them by "\n<fake_token_around_image><global-img>" ... "<fake_...>".
        return per_tile * (across * across + 1) + 2 * across * across + across + 4
    if side and patch:
        full = model_config.get("vision_feature_select_strategy") == "full"
        return (side // patch) ** 2 + (1 if full else 0)
    return 0


def per_gpu(config: RunConfig, weights: int, gradients: int, optimizer: int) -> tuple[int, int, int]:
    """What one GPU holds of the model's state with several processes, by strategy.

    DDP keeps a whole copy on every GPU and, in its communication buckets, a second copy of the
    gradients. FSDP and ZeRO-3 split weights, gradients and optimizer states across the GPUs; ZeRO-2
    splits gradients and optimizer states. Activations are per GPU in every case (the batch size is
    per device).
    """
    n = config.launch.num_processes
    if n <= 1:
        return weights, gradients, optimizer
    strategy = config.launch.strategy
    if strategy in ("fsdp", "deepspeed-zero3"):
        return -(-weights // n), -(-gradients // n), -(-optimizer // n)
    if strategy == "deepspeed-zero2":
        return weights, -(-gradients // n), -(-optimizer // n)
    return weights, 2 * gradients, optimizer
