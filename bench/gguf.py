"""GGUF export: our converter against llama.cpp's ``convert_hf_to_gguf.py``, f16, on a 0.5B model.

Workload: a Qwen2 model shaped as Qwen2.5-0.5B (hidden 896, 24 layers, 14 heads and 2 KV heads, vocab
151 936, tied embeddings, rope base 1e6; 494 M parameters), random weights saved by ``save_pretrained``
in bf16 as the hub ships it (``--dtype f32`` for float32), with Qwen2's real byte-level BPE tokenizer.
No network reaches the hub, and llama.cpp's converter refuses a BPE tokenizer whose pre-tokenizer it
does not know (it hashes the token ids of a fixed text, ``get_vocab_base_pre``), so a tokenizer
trained on the spot cannot be used without patching the converter. Instead the tokenizer is rebuilt
from llama.cpp's own test vocabulary ``models/ggml-vocab-qwen2.gguf`` (tokens, merges, the three
special tokens; Qwen2's split regex, NFC, byte level): it encodes llama.cpp's 47 test texts as Qwen2
does (checked here) and the converter recognises it as ``qwen2``. Building it and the model is not timed,
and runs in a process of its own: Linux carries the parent's RSS high-water mark into every child it
starts (exec keeps the larger of the two), so the bench process itself must stay small.

Each converter runs in its own fresh process, alternating (``--repeats``), after one import of each
(so that neither pays for compiling .pyc files): the wall time of the whole process (start-up and
imports included) and its peak memory, the RSS high-water mark that ``os.wait4`` reports for that
child alone (POSIX only). Printed: seconds, peak RSS and output size of each side, the ratios ours /
llama.cpp, and a comparison of the two files with ``gguf.GGUFReader``: tensor names, shapes, types and
bytes, and the metadata keys that are missing or differ.

llama.cpp's converter comes from the llama-cpp-python 0.3.36 source distribution
(``vendor/llama.cpp``, with its own ``gguf-py``; ours uses the ``gguf`` package installed), fetched
once with ``pip download`` into ``$TMPDIR/fs-bench-llama-cpp-python-0.3.36``, or given with
``--converter``. It runs in this Python and needs ``sentencepiece`` (its Qwen2 class imports it before
it looks for ``tokenizer.model``): ``pip install sentencepiece``. Nothing of it enters the repository.

    python bench/gguf.py [--repeats 3] [--dtype bf16|f32] [--model-dir DIR] [--converter PATH]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# This file is named gguf.py: run as a script, its folder would shadow the gguf package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(ROOT))

LLAMA_CPP_PYTHON = "0.3.36"
SEED = 42
QWEN25_05B = {  # Qwen/Qwen2.5-0.5B's config.json
    "hidden_size": 896,
    "intermediate_size": 4864,
    "num_hidden_layers": 24,
    "num_attention_heads": 14,
    "num_key_value_heads": 2,
    "vocab_size": 151936,
    "max_position_embeddings": 32768,
    "rope_theta": 1_000_000.0,
    "rms_norm_eps": 1e-6,
    "tie_word_embeddings": True,
    "bos_token_id": 151643,
    "eos_token_id": 151643,
}
QWEN2_SPLIT = (  # Qwen2's pre-tokenizer regex, as in its tokenizer.json
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
OURS = (
    "import sys; from pathlib import Path; from desktop.core.results.gguf_writer import write_gguf; "
    "write_gguf(Path(sys.argv[1]), Path(sys.argv[2]), 'f16')"
)


def converter_from_pypi(folder: Path) -> Path:
    """llama.cpp's ``convert_hf_to_gguf.py`` out of the llama-cpp-python source distribution."""
    vendor = folder / f"llama_cpp_python-{LLAMA_CPP_PYTHON}" / "vendor" / "llama.cpp"
    if not (vendor / "convert_hf_to_gguf.py").is_file():
        command = [sys.executable, "-m", "pip", "download", f"llama-cpp-python=={LLAMA_CPP_PYTHON}"]
        command += ["--no-deps", "--no-binary", ":all:", "-d", str(folder)]
        subprocess.run(command, check=True, capture_output=True)
        with tarfile.open(folder / f"llama_cpp_python-{LLAMA_CPP_PYTHON}.tar.gz") as sdist:
            wanted = [m for m in sdist.getmembers() if "/vendor/llama.cpp/" in m.name]
            sdist.extractall(folder, members=wanted, filter="data")
    return vendor / "convert_hf_to_gguf.py"


def qwen2_tokenizer(vocab_file: Path):
    """Qwen2's tokenizer, rebuilt from a llama.cpp vocabulary GGUF, checked on its test texts."""
    import gguf
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, processors
    from tokenizers import pre_tokenizers as pre
    from transformers import PreTrainedTokenizerFast

    fields = gguf.GGUFReader(vocab_file).fields
    tokens = fields["tokenizer.ggml.tokens"].contents()
    types = fields["tokenizer.ggml.token_type"].contents()
    merges = [tuple(m.split(" ")) for m in fields["tokenizer.ggml.merges"].contents()]
    kinds = list(zip(tokens, types, strict=True))
    vocab = {t: i for i, (t, kind) in enumerate(kinds) if kind == gguf.TokenType.NORMAL}
    special = [t for t, kind in kinds if kind == gguf.TokenType.CONTROL]
    tok = Tokenizer(models.BPE(vocab, merges, fuse_unk=False, byte_fallback=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre.Sequence(
        [
            pre.Split(Regex(QWEN2_SPLIT), behavior="isolated"),
            pre.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in special])
    assert [tok.token_to_id(t) for t in special] == [tokens.index(t) for t in special]
    texts, checked = vocab_file.with_name(vocab_file.name + ".inp"), 0
    if texts.is_file():  # llama.cpp's tokenizer test: texts and the ids the original tokenizer gives
        inputs = texts.read_text(encoding="utf-8").split("\n__ggml_vocab_test__\n")
        expected = vocab_file.with_name(vocab_file.name + ".out").read_text(encoding="utf-8").split("\n")
        for text, ids in zip(inputs, expected, strict=True):
            assert tok.encode(text).ids == [int(i) for i in ids.split()], text
        checked = len(inputs)
    end = "<|endoftext|>"
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=end, pad_token=end)
    tokenizer.chat_template = fields["tokenizer.chat_template"].contents()
    return tokenizer, len(merges), checked


def build(model_dir: Path, vocab_file: Path, dtype: str) -> None:
    """A Qwen2.5-0.5B-shaped model with random weights and Qwen2's tokenizer, saved in ``model_dir``."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    start = time.perf_counter()
    tokenizer, merges, checked = qwen2_tokenizer(vocab_file)
    torch_dtype = {"bf16": torch.bfloat16, "f32": torch.float32}[dtype]
    config = Qwen2Config(**QWEN25_05B, dtype=torch_dtype)
    torch.manual_seed(SEED)
    model = Qwen2ForCausalLM(config).to(torch_dtype)
    model.save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    print(
        f"built {model.num_parameters() / 1e6:.0f} M parameters ({dtype}) and Qwen2's tokenizer "
        f"({len(tokenizer)} tokens, {merges} merges; {checked} of llama.cpp's test texts encoded alike) "
        f"in {time.perf_counter() - start:.0f} s",
        flush=True,
    )


def measure(command: list[str]) -> tuple[float, float, str]:
    """Seconds and peak RSS in MB of ``command`` run as a child process, and its output."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    output = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)  # this child's own rusage, not the largest child's so far
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stdout.close()
    if proc.returncode != 0:
        raise RuntimeError(f"{command[:3]} failed ({proc.returncode}):\n{output[-3000:]}")
    return elapsed, usage.ru_maxrss / (2**20 if sys.platform == "darwin" else 2**10), output


def compare(ours: Path, theirs: Path) -> list[str]:
    """How the two GGUF files differ: tensors (names, shapes, types, bytes) and metadata."""
    import gguf
    import numpy as np

    a, b = gguf.GGUFReader(ours), gguf.GGUFReader(theirs)
    ta, tb = {t.name: t for t in a.tensors}, {t.name: t for t in b.tensors}
    both = sorted(ta.keys() & tb.keys())
    shapes = [n for n in both if list(ta[n].shape) != list(tb[n].shape)]
    kinds = [n for n in both if ta[n].tensor_type != tb[n].tensor_type]
    same_bytes = sum(np.array_equal(ta[n].data, tb[n].data) for n in both if n not in shapes + kinds)
    lines = [
        f"tensors: {len(ta)} ours, {len(tb)} llama.cpp's; "
        + (
            "same names, shapes and types"
            if ta.keys() == tb.keys() and not shapes + kinds
            else f"only ours {sorted(ta.keys() - tb.keys())}, only theirs {sorted(tb.keys() - ta.keys())}, "
            f"shapes differ {shapes}, types differ {kinds}"
        )
        + f"; {same_bytes} of {len(both)} byte for byte identical"
    ]
    fa = {k: f for k, f in a.fields.items() if not k.startswith("GGUF.")}
    fb = {k: f for k, f in b.fields.items() if not k.startswith("GGUF.")}
    differ = sorted(k for k in fa.keys() & fb.keys() if fa[k].contents() != fb[k].contents())
    lines.append(
        f"metadata: {len(fa.keys() & fb.keys())} keys in both, differing {differ or 'none'}; "
        f"only ours {sorted(fa.keys() - fb.keys()) or 'none'}; "
        f"only theirs {sorted(fb.keys() - fa.keys()) or 'none'}"
    )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="conversions of each side, alternating")
    parser.add_argument("--dtype", choices=("bf16", "f32"), default="bf16", help="of the saved weights")
    parser.add_argument("--model-dir", type=Path, help="reuse (or build once into) this model folder")
    parser.add_argument("--converter", type=Path, help="llama.cpp's convert_hf_to_gguf.py")
    parser.add_argument("--vocab", type=Path, help="default: models/ggml-vocab-qwen2.gguf by the converter")
    parser.add_argument("--build-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build_only:
        build(args.model_dir, args.vocab, args.dtype)
        return 0
    if importlib.util.find_spec("sentencepiece") is None:
        print("llama.cpp's Qwen2 converter imports sentencepiece: pip install sentencepiece")
        return 1
    with tempfile.TemporaryDirectory(prefix="fs-bench-gguf-") as tmp:
        folder = Path(tmp)
        cache = Path(tempfile.gettempdir()) / f"fs-bench-llama-cpp-python-{LLAMA_CPP_PYTHON}"
        converter = args.converter or converter_from_pypi(cache)
        vocab = args.vocab or converter.parent / "models" / "ggml-vocab-qwen2.gguf"
        model_dir = args.model_dir or folder / "model"
        if not (model_dir / "config.json").is_file():
            command = [sys.executable, __file__, "--build-only", "--model-dir", str(model_dir)]
            subprocess.run([*command, "--vocab", str(vocab), "--dtype", args.dtype], check=True)
        weights = sum(f.stat().st_size for f in model_dir.glob("*.safetensors"))
        print(f"model: {model_dir} ({weights / 2**20:.0f} MB of safetensors)", flush=True)
        outputs = {"ours": folder / "ours.gguf", "llama.cpp": folder / "llama.cpp.gguf"}
        commands = {
            "ours": [sys.executable, "-c", OURS, str(model_dir), str(outputs["ours"])],
            "llama.cpp": [
                *(sys.executable, str(converter), str(model_dir)),
                *("--outfile", str(outputs["llama.cpp"]), "--outtype", "f16"),
            ],
        }
        measure([sys.executable, "-c", "import desktop.core.results.gguf_writer, gguf, transformers"])
        measure([sys.executable, str(converter), "--print-supported-models"])  # imports all its modules
        seconds: dict[str, list[float]] = {name: [] for name in commands}
        peaks: dict[str, list[float]] = {name: [] for name in commands}
        for i in range(args.repeats):
            for name in list(commands) if i % 2 == 0 else list(commands)[::-1]:
                outputs[name].unlink(missing_ok=True)
                elapsed, peak, _ = measure(commands[name])
                seconds[name].append(elapsed)
                peaks[name].append(peak)
                print(f"repeat {i + 1}: {name} {elapsed:.1f} s, peak {peak:.0f} MB", flush=True)
        rows = {
            name: (statistics.median(seconds[name]), max(peaks[name]), outputs[name].stat().st_size / 2**20)
            for name in commands
        }
        print(f"{'':16}{'seconds':>10}{'peak RSS MB':>14}{'output MB':>12}")
        for name, (s, peak, size) in rows.items():
            print(f"{name:16}{s:10.1f}{peak:14.0f}{size:12.1f}")
        ratios = [o / t for o, t in zip(rows["ours"], rows["llama.cpp"], strict=True)]
        print(f"{'ours/llama.cpp':16}{ratios[0]:10.2f}{ratios[1]:14.2f}{ratios[2]:12.3f}")
        print(
            f"(median of {args.repeats} per side, whole processes; peak: the largest; "
            f"{os.cpu_count()} cores; safetensors {weights / 2**20:.0f} MB)"
        )
        for line in compare(outputs["ours"], outputs["llama.cpp"]):
            print(line)
        if args.model_dir is None:
            shutil.rmtree(model_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
