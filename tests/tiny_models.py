"""Tiny random GPT-2, BERT and T5 models with tokenizers trained on the spot (no network)."""

from __future__ import annotations

import json
from pathlib import Path

SAMPLES = Path(__file__).resolve().parent.parent / "resources" / "samples"


def corpus() -> list[str]:
    """Texts from the bundled samples, English and Chinese."""
    texts = []
    for path in SAMPLES.glob("*.*"):
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
