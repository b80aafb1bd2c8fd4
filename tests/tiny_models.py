"""Tiny random GPT-2, BERT and T5 models with tokenizers trained on the spot (no network)."""

from __future__ import annotations

import json
from pathlib import Path

SAMPLES = Path(__file__).resolve().parent.parent / "resources" / "samples"


CORPUS_FILES = ("chat.jsonl", "instructions.jsonl", "reviews-zh.csv", "reviews.csv", "translation.tsv")


def corpus() -> list[str]:
    """Texts from the bundled samples, English and Chinese."""
    texts = []
    # These files by name: a new sample would change every tiny model's vocabulary, and so the random
    # models' answers that tests of generation, export and GGUF rely on.
    for name in CORPUS_FILES:
        path = SAMPLES / name
        if path.suffix in (".csv", ".tsv"):
            texts += path.read_text(encoding="utf-8").splitlines()
        elif path.suffix == ".jsonl":
            texts += [
                json.dumps(json.loads(line), ensure_ascii=False)
                for line in path.read_text("utf-8").splitlines()
            ]
    extra = (
        "正面 负面 好评 差评 很好 很差 喜欢 讨厌 質量 服務 電影 推薦 失望 the a an is was good bad great poor"
    )
    return texts + [extra] * 3


def _seeded() -> None:
    import torch

    torch.manual_seed(0)  # the same random weights every session, so tests do not flake


def _fast(tokenizer: object, **special: str) -> object:
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, **special)


def gpt2(folder: Path) -> Path:
    """A 2-layer GPT-2 with a byte-level BPE tokenizer and no chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import GPT2Config, GPT2LMHeadModel

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=600, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(corpus(), trainer)
    fast = _fast(tok, bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<|endoftext|>")
    eos = fast.convert_tokens_to_ids("<|endoftext|>")
    config = GPT2Config(
        vocab_size=len(fast),
        n_positions=512,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=eos,
        eos_token_id=eos,
    )
    _seeded()
    GPT2LMHeadModel(config).save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder


def chat_model(kind: str, tokenizer_dir: Path, folder: Path) -> Path:
    """A random 2-layer ``llama`` or ``qwen2`` model with the tiny GPT-2's tokenizer (byte-level BPE) and
    our fallback chat template: what a chat run on such a model saves."""
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, Qwen2Config

    from desktop.core.data.tasks.causal_lm import FALLBACK_CHAT_TEMPLATE

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    tokenizer.chat_template = FALLBACK_CHAT_TEMPLATE
    sizes = {
        "vocab_size": len(tokenizer),
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
    }
    heads = {"num_attention_heads": 4, "num_key_value_heads": 2, "tie_word_embeddings": kind == "qwen2"}
    heads["rope_theta"] = 1_000_000.0 if kind == "qwen2" else 10_000.0  # saved as rope_parameters
    config = (LlamaConfig if kind == "llama" else Qwen2Config)(**sizes, **heads)
    _seeded()
    AutoModelForCausalLM.from_config(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def bert(folder: Path) -> Path:
    """A 2-layer BERT encoder (no classification head) with a WordPiece tokenizer."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertConfig, BertModel

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True, handle_chinese_chars=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.train_from_iterator(corpus(), trainers.WordPieceTrainer(vocab_size=800, special_tokens=specials))
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
    )
    fast = _fast(
        tok, pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]"
    )
    config = BertConfig(
        vocab_size=len(fast),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
        pad_token_id=fast.pad_token_id,
    )
    _seeded()
    BertModel(config).save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder


def t5(folder: Path) -> Path:
    """A 2-layer T5 with a BPE tokenizer that ends every sequence with </s>."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import T5Config, T5ForConditionalGeneration

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    tok.train_from_iterator(
        corpus(), trainers.BpeTrainer(vocab_size=800, special_tokens=["<pad>", "</s>", "<unk>"])
    )
    eos = tok.token_to_id("</s>")
    tok.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", eos)]
    )
    fast = _fast(tok, pad_token="<pad>", eos_token="</s>", unk_token="<unk>")
    config = T5Config(
        vocab_size=len(fast),
        d_model=32,
        d_kv=16,
        d_ff=64,
        num_layers=2,
        num_heads=2,
        pad_token_id=fast.pad_token_id,
        eos_token_id=eos,
        decoder_start_token_id=fast.pad_token_id,
    )
    _seeded()
    T5ForConditionalGeneration(config).save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder


def tiny_parameters(folder: Path) -> int:
    """The parameters in a folder's ``model.safetensors``, counted by the safetensors library."""
    import math

    from safetensors import safe_open

    with safe_open(str(folder / "model.safetensors"), "pt") as weights:
        return sum(math.prod(weights.get_slice(name).get_shape()) for name in weights.keys())  # noqa: SIM118


# Chat templates as those models' tokenizer_config.json has them, without their tools branches.
MISTRAL_JINJA = (  # Mistral 7B Instruct v0.2's: no system role
    "{{ bos_token }}{% for message in messages %}"
    "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
    "{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}"
    "{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token}}"
    "{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}"
)
PHI3_JINJA = (  # Phi-3 mini 4k instruct's
    "{% for message in messages %}{% if message['role'] == 'system' %}"
    "{{'<|system|>\\n' + message['content'] + '<|end|>\\n'}}{% elif message['role'] == 'user' %}"
    "{{'<|user|>\\n' + message['content'] + '<|end|>\\n'}}{% elif message['role'] == 'assistant' %}"
    "{{'<|assistant|>\\n' + message['content'] + '<|end|>\\n'}}{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% else %}{{ eos_token }}{% endif %}"
)
GEMMA2_JINJA = (  # Gemma 2 instruct's: no system role
    "{{ bos_token }}{% if messages[0]['role'] == 'system' %}"
    "{{ raise_exception('System role not supported') }}{% endif %}{% for message in messages %}"
    "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
    "{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}"
    "{% set role = message['role'] %}{% endif %}"
    "{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\\n'}}{% endif %}"
)
GEMMA3_JINJA = (  # Gemma 3 instruct's, for text: the system prompt opens the first user turn
    "{{ bos_token }}{%- if messages[0]['role'] == 'system' -%}"
    "{%- set first_user_prefix = messages[0]['content'] + '\\n\\n' -%}"
    "{%- set loop_messages = messages[1:] -%}"
    '{%- else -%}{%- set first_user_prefix = "" -%}{%- set loop_messages = messages -%}{%- endif -%}'
    "{%- for message in loop_messages -%}{%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}"
    '{{ raise_exception("Conversation roles must alternate user/assistant/user/assistant/...") }}'
    "{%- endif -%}{%- if (message['role'] == 'assistant') -%}{%- set role = \"model\" -%}{%- else -%}"
    "{%- set role = message['role'] -%}{%- endif -%}"
    "{{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else \"\") }}"
    "{{ message['content'] | trim }}{{ '<end_of_turn>\\n' }}{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{'<start_of_turn>model\\n'}}{%- endif -%}"
)
SPM_KINDS = ("mistral", "phi3", "gemma2", "gemma3")


def _sentencepiece(**pieces: object) -> tuple[bytes, dict[str, int], list[tuple[str, str]]]:
    """A SentencePiece BPE model with byte fallback trained on :func:`corpus` (its ``tokenizer.model``),
    and the vocabulary and merges transformers makes of it (merges ranked by the merged piece's id, as
    transformers 5 converts a ``tokenizer.model``)."""
    import io

    import sentencepiece

    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(corpus()),
        model_writer=model,
        model_type="bpe",
        vocab_size=1000,
        byte_fallback=True,  # rare characters (some of the Chinese ones) become <0xNN> tokens
        split_digits=True,
        allow_whitespace_only_pieces=True,
        remove_extra_whitespaces=False,
        normalization_rule_name="identity",
        num_threads=1,
        minloglevel=2,
        **pieces,
    )
    processor = sentencepiece.SentencePieceProcessor(model_proto=model.getvalue())
    vocab = {processor.id_to_piece(i): i for i in range(processor.get_piece_size())}
    merges: list[tuple[str, str]] = []
    for piece, i in vocab.items():
        if processor.is_byte(i) or processor.is_control(i) or processor.is_unknown(i):
            continue
        splits = [(piece[:k], piece[k:]) for k in range(1, len(piece))]
        merges += sorted((s for s in splits if s[0] in vocab and s[1] in vocab), key=lambda s: vocab[s[0]])
    return model.getvalue(), vocab, merges


def spm_tokenizer(kind: str) -> tuple[object, bytes]:
    """A SentencePiece tokenizer (BPE with byte fallback) as transformers keeps it, with the special tokens
    and chat template of ``kind``: ``mistral`` (legacy prefix: a space after each special token),
    ``phi3`` (Phi-3's chat tokens, which eat the whitespace after them, and no such space), ``gemma2``
    or ``gemma3`` (Gemma's tokens; no space prefix at all); and the ``tokenizer.model`` it was made of."""
    from tokenizers import AddedToken
    from transformers import GemmaTokenizer, LlamaTokenizer

    if kind.startswith("gemma"):
        chat = ["<start_of_turn>", "<end_of_turn>"]
        ids = {"pad_id": 0, "eos_id": 1, "bos_id": 2, "unk_id": 3}  # Gemma's order
        names = {"pad_piece": "<pad>", "eos_piece": "<eos>", "bos_piece": "<bos>"}
        model, vocab, merges = _sentencepiece(**ids, **names, control_symbols=["<mask>", *chat])
        tokenizer = GemmaTokenizer(vocab=vocab, merges=merges, extra_special_tokens=chat, add_bos_token=True)
        tokenizer.chat_template = GEMMA2_JINJA if kind == "gemma2" else GEMMA3_JINJA
        return tokenizer, model
    model, vocab, merges = _sentencepiece()
    tokenizer = LlamaTokenizer(vocab=vocab, merges=merges, legacy=kind == "mistral", add_bos_token=True)
    tokenizer.chat_template = MISTRAL_JINJA
    if kind == "phi3":  # Phi-3's added tokens, after the SentencePiece ones, as in its tokenizer.json
        chat = ["<|endoftext|>", "<|assistant|>", "<|system|>", "<|end|>", "<|user|>"]
        tokenizer.add_tokens([AddedToken(t, rstrip=t != "<|endoftext|>", special=True) for t in chat])
        tokenizer.add_special_tokens({"eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>"})
        tokenizer.chat_template = PHI3_JINJA
    return tokenizer, model


def spm_chat_model(kind: str, folder: Path) -> Path:
    """A random 2-layer chat model of one of :data:`SPM_KINDS` with :func:`spm_tokenizer` (its
    ``tokenizer.model`` saved beside, as on the hub): Mistral (llama.cpp's ``llama``), Phi-3 (fused
    attention and MLP, its vocabulary padded to a multiple of 64 as Phi-3's is), Gemma 2 (logit
    soft-capping, a sliding window of 8 on every other layer) and Gemma 3 (a sliding window of 8 with
    its own rotary base on layer 0, linearly scaled rotary on layer 1, query and key norms)."""
    from transformers import AutoModelForCausalLM, Gemma2Config, Gemma3TextConfig, MistralConfig, Phi3Config

    tokenizer, spm_model = spm_tokenizer(kind)
    sizes = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4}
    sizes["num_key_value_heads"] = 2
    ids = {"bos_token_id": tokenizer.bos_token_id, "eos_token_id": tokenizer.eos_token_id}
    ids["pad_token_id"] = tokenizer.pad_token_id
    if kind == "mistral":
        config = MistralConfig(vocab_size=len(tokenizer), sliding_window=None, **sizes, **ids)
    elif kind == "phi3":
        config = Phi3Config(vocab_size=(len(tokenizer) + 63) // 64 * 64, **sizes, **ids)
    else:
        gemma = {
            "vocab_size": len(tokenizer),
            "head_dim": 16,
            "query_pre_attn_scalar": 16,
            "sliding_window": 8,
        }
        if kind == "gemma2":
            # Larger weights and a low cap, so that the capping shows in the answers (and must be carried).
            caps = {"attn_logit_softcapping": 1.0, "final_logit_softcapping": 10.0, "initializer_range": 0.1}
            config = Gemma2Config(**gemma, **caps, **sizes, **ids)
        else:
            rope = {
                "full_attention": {"rope_type": "linear", "factor": 2.0, "rope_theta": 1_000_000.0},
                "sliding_attention": {
                    "rope_type": "default",
                    "rope_theta": 20_000.0,
                },  # not llama.cpp's default
            }
            layers = ["sliding_attention", "full_attention"]
            config = Gemma3TextConfig(**gemma, rope_parameters=rope, layer_types=layers, **sizes, **ids)
            config.architectures = ["Gemma3ForCausalLM"]
    _seeded()
    AutoModelForCausalLM.from_config(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    (folder / "tokenizer.model").write_bytes(spm_model)
    return folder


def gemma3_with_vision(folder: Path) -> Path:
    """A random Gemma 3 text-and-image model, as Gemma 3 4B and larger are saved: its text model under
    ``language_model``, a (tiny) vision tower and projector beside it, the text settings in
    ``text_config``."""
    from transformers import (
        Gemma3Config,
        Gemma3ForConditionalGeneration,
        Gemma3TextConfig,
        SiglipVisionConfig,
    )

    tokenizer, spm_model = spm_tokenizer("gemma3")
    size = len(tokenizer)
    text = Gemma3TextConfig(
        vocab_size=size,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        query_pre_attn_scalar=16,
        sliding_window=8,
        layer_types=["sliding_attention", "full_attention"],
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    vision = SiglipVisionConfig(
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        image_size=28,
        patch_size=14,
    )
    images = {"image_token_index": size - 1, "boi_token_index": size - 2, "eoi_token_index": size - 3}
    config = Gemma3Config(text_config=text, vision_config=vision, mm_tokens_per_image=4, **images)
    _seeded()
    Gemma3ForConditionalGeneration(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    (folder / "tokenizer.model").write_bytes(spm_model)
    return folder


def qwen3(tokenizer_dir: Path, folder: Path) -> Path:
    """A random 2-layer Qwen3 (query and key norms, a head size of 32 where hidden / heads is 16, tied
    embeddings) with the tiny GPT-2's byte-level BPE tokenizer and our fallback chat template."""
    from transformers import AutoModelForCausalLM, AutoTokenizer, Qwen3Config

    from desktop.core.data.tasks.causal_lm import FALLBACK_CHAT_TEMPLATE

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    tokenizer.chat_template = FALLBACK_CHAT_TEMPLATE
    config = Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=32,
        tie_word_embeddings=True,
        rope_theta=1_000_000.0,
    )
    _seeded()
    AutoModelForCausalLM.from_config(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def vit(folder: Path) -> Path:
    """A 2-layer ViT for 32 x 32 pictures (8 x 8 patches) with an image-classification head of 1,000
    classes (as an ImageNet checkpoint has: a run replaces it), and its image processor."""
    from transformers import ViTConfig, ViTForImageClassification, ViTImageProcessor

    _seeded()
    config = ViTConfig(
        image_size=32,
        patch_size=8,
        num_channels=3,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=1000,
    )
    ViTForImageClassification(config).save_pretrained(folder)
    processor = ViTImageProcessor(size={"height": 32, "width": 32}, image_mean=[0.5] * 3, image_std=[0.5] * 3)
    processor.save_pretrained(folder)
    return folder


PICTURE_CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<image>{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|endoftext|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
"""A chat template that reads a picture in a turn's content as LLaVA's ``<image>`` placeholder."""


def llava(tokenizer_dir: Path, folder: Path) -> Path:
    """A random LLaVA: a 1-layer CLIP vision tower on 28 x 28 pictures (2 x 2 patches of 14: 4 image
    tokens), a projector and a 2-layer Llama with the tiny GPT-2's tokenizer plus ``<image>``, and its
    processor with a chat template that places the picture."""
    from transformers import (
        AutoTokenizer,
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    tokenizer.add_special_tokens({"additional_special_tokens": ["<image>"]})
    end = tokenizer.eos_token_id
    text = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        eos_token_id=end,
        bos_token_id=end,
        pad_token_id=end,
    )
    vision = CLIPVisionConfig(
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        image_size=28,
        patch_size=14,
        projection_dim=16,
    )
    config = LlavaConfig(
        vision_config=vision,
        text_config=text,
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
    )
    _seeded()
    LlavaForConditionalGeneration(config).save_pretrained(folder)
    processor = LlavaProcessor(
        image_processor=CLIPImageProcessor(size={"shortest_edge": 28}, crop_size={"height": 28, "width": 28}),
        tokenizer=tokenizer,
        patch_size=14,
        vision_feature_select_strategy="default",
        chat_template=PICTURE_CHAT_TEMPLATE,
        num_additional_image_tokens=1,
    )
    processor.save_pretrained(folder)
    return folder


QWEN_VL_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
"""Qwen2-VL's chat template, cut to what a picture and text need."""


def qwen2_5_vl(tokenizer_dir: Path, folder: Path) -> Path:
    """A random Qwen2.5-VL (a 1-block vision tower on 14-pixel patches, a 2-layer language model with
    multimodal rotary positions) with the tiny GPT-2's tokenizer plus Qwen's special tokens, saved as
    the hub's Qwen2.5-VL folders are: its processor named in ``preprocessor_config.json`` (the
    processor's class itself is not built here: without torchvision, Transformers 5 cannot make it)."""
    from transformers import (
        AutoTokenizer,
        Qwen2_5_VLConfig,
        Qwen2_5_VLForConditionalGeneration,
        Qwen2VLImageProcessorPil,
    )

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    special = ["<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>"]
    special += ["<|image_pad|>", "<|video_pad|>"]
    tokenizer.add_special_tokens({"additional_special_tokens": special})
    tokenizer.eos_token = "<|im_end|>"
    tokenizer.chat_template = QWEN_VL_TEMPLATE
    ids = {
        "image_token_id": tokenizer.convert_tokens_to_ids("<|image_pad|>"),
        "video_token_id": tokenizer.convert_tokens_to_ids("<|video_pad|>"),
        "vision_start_token_id": tokenizer.convert_tokens_to_ids("<|vision_start|>"),
        "vision_end_token_id": tokenizer.convert_tokens_to_ids("<|vision_end|>"),
    }
    text = {
        "vocab_size": len(tokenizer),
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "rope_scaling": {"type": "mrope", "mrope_section": [2, 2, 4], "rope_type": "default"},
        "eos_token_id": tokenizer.eos_token_id,
        "pad_token_id": tokenizer.eos_token_id,
    }
    vision = {
        "depth": 1,
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_heads": 2,
        "out_hidden_size": 64,
        "patch_size": 14,
        "fullatt_block_indexes": [0],
    }
    _seeded()
    config = Qwen2_5_VLConfig(text_config=text, vision_config=vision, **ids)
    Qwen2_5_VLForConditionalGeneration(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    pictures = Qwen2VLImageProcessorPil(min_pixels=56 * 56, max_pixels=112 * 112, patch_size=14, merge_size=2)
    pictures.save_pretrained(folder)
    settings = json.loads((folder / "preprocessor_config.json").read_text())
    settings["processor_class"] = "Qwen2_5_VLProcessor"
    (folder / "preprocessor_config.json").write_text(json.dumps(settings))
    return folder


SMOLVLM_TEMPLATE = (
    "<|im_start|>{% for message in messages %}{{ message['role'] | capitalize }}"
    "{% if message['content'][0]['type'] == 'image' %}{{ ':' }}{% else %}{{ ': ' }}{% endif %}"
    "{% for part in message['content'] %}{% if part['type'] == 'text' %}{{ part['text'] }}"
    "{% elif part['type'] == 'image' %}{{ '<image>' }}{% endif %}{% endfor %}<end_of_utterance>\n{% endfor %}"
    "{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}"
)
"""SmolVLM's chat template."""


def idefics3(tokenizer_dir: Path, folder: Path) -> Path:
    """A random Idefics 3 (SmolVLM's architecture): a 1-layer SigLIP-like tower on 32 x 32 tiles of 8-pixel
    patches, pixel shuffle by 2 (4 tokens a tile), a 2-layer Llama; its processor splits a picture of up to
    64 pixels a side into tiles plus the whole picture, as SmolVLM's does."""
    from transformers import (
        AutoTokenizer,
        Idefics3Config,
        Idefics3ForConditionalGeneration,
        Idefics3ImageProcessorPil,
        Idefics3Processor,
        Idefics3VisionConfig,
        LlamaConfig,
    )

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    tiles = [f"<row_{r}_col_{c}>" for r in range(1, 7) for c in range(1, 7)]
    special = ["<|im_start|>", "<end_of_utterance>", "<fake_token_around_image>", "<image>", "<global-img>"]
    tokenizer.add_special_tokens({"additional_special_tokens": special + tiles})
    tokenizer.eos_token = "<end_of_utterance>"
    end = tokenizer.eos_token_id
    text = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        eos_token_id=end,
        bos_token_id=end,
        pad_token_id=end,
    )
    vision = Idefics3VisionConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        image_size=32,
        patch_size=8,
    )
    image_token = tokenizer.convert_tokens_to_ids("<image>")
    config = Idefics3Config(
        vision_config=vision, text_config=text, scale_factor=2, image_token_id=image_token, pad_token_id=end
    )
    _seeded()
    Idefics3ForConditionalGeneration(config).save_pretrained(folder)
    pictures = Idefics3ImageProcessorPil(
        size={"longest_edge": 64}, max_image_size={"longest_edge": 32}, do_image_splitting=True
    )
    processor = Idefics3Processor(
        image_processor=pictures, tokenizer=tokenizer, image_seq_len=4, chat_template=SMOLVLM_TEMPLATE
    )
    processor.save_pretrained(folder)
    return folder


GEMMA3_PICTURES_JINJA = (  # Gemma 3 instruct's, cut to pictures and text
    "{{ bos_token }}{%- for message in messages -%}"
    "{%- set role = 'model' if message['role'] == 'assistant' else message['role'] -%}"
    "{{ '<start_of_turn>' + role + '\\n' }}"
    "{%- if message['content'] is string -%}{{ message['content'] | trim }}{%- else -%}"
    "{%- for item in message['content'] -%}{%- if item['type'] == 'image' -%}{{ '<start_of_image>' }}"
    "{%- elif item['type'] == 'text' -%}{{ item['text'] | trim }}{%- endif -%}{%- endfor -%}{%- endif -%}"
    "{{ '<end_of_turn>\\n' }}{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<start_of_turn>model\\n' }}{%- endif -%}"
)


def gemma3_picture_chat(folder: Path) -> Path:
    """A random Gemma 3 that reads pictures, with its processor as the hub's has it: the tokenizer's
    picture tokens (``boi_token``, ``image_token``, ``eoi_token``), a SigLIP tower on 28 x 28 pictures
    pooled to 4 tokens, and the chat template's ``<start_of_image>``."""
    from transformers import (
        AutoTokenizer,
        Gemma3Config,
        Gemma3ForConditionalGeneration,
        Gemma3ImageProcessorPil,
        Gemma3Processor,
        Gemma3TextConfig,
        SiglipVisionConfig,
    )

    tokenizer, spm_model = spm_tokenizer("gemma3")
    pictures = {
        "boi_token": "<start_of_image>",
        "image_token": "<image_soft_token>",
        "eoi_token": "<end_of_image>",
    }
    tokenizer.add_special_tokens({"additional_special_tokens": list(pictures.values())})
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(folder)
    settings = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    settings["extra_special_tokens"] = pictures  # as named attributes, which Gemma3Processor reads
    (folder / "tokenizer_config.json").write_text(json.dumps(settings), encoding="utf-8")
    tokenizer = AutoTokenizer.from_pretrained(folder)
    text = Gemma3TextConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        query_pre_attn_scalar=16,
        sliding_window=8,
        layer_types=["sliding_attention", "full_attention"],
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.convert_tokens_to_ids("<end_of_turn>"),
        pad_token_id=tokenizer.pad_token_id,
    )
    vision = SiglipVisionConfig(
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        image_size=28,
        patch_size=14,
    )
    ids = {
        "image_token_index": tokenizer.image_token_id,
        "boi_token_index": tokenizer.boi_token_id,
        "eoi_token_index": tokenizer.eoi_token_id,
    }
    _seeded()
    config = Gemma3Config(text_config=text, vision_config=vision, mm_tokens_per_image=4, **ids)
    Gemma3ForConditionalGeneration(config).save_pretrained(folder)
    (folder / "tokenizer.model").write_bytes(spm_model)
    processor = Gemma3Processor(
        image_processor=Gemma3ImageProcessorPil(size={"height": 28, "width": 28}),
        tokenizer=tokenizer,
        chat_template=GEMMA3_PICTURES_JINJA,
        image_seq_length=4,
    )
    processor.save_pretrained(folder)
    return folder
