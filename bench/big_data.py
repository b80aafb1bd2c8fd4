"""A 1.75 M-row CSV (211 MB): how long ``preview`` and ``validate`` take and how much memory they use.

    python bench/big_data.py [--rows 1750000] [--format csv|jsonl|json] [--folder DIR] [--tokenize]

Writes a review-classification file of ``--rows`` rows (Chinese and English texts, two labels, a few
blank texts to find) outside the repository: a CSV, or with ``--format`` the same rows as JSONL or as
one JSON array. Then runs, each as its own process so that its peak memory (max RSS) is its own:

- the baseline: ``datasets.load_dataset("csv")`` (``"json"``) of the same file and a ``map`` over every
  row (what a plain Transformers script does before training),
- ``finetune-studio-cli preview`` (first rows, mapping, no token statistics), the first time (it
  parses the file into the app's Arrow cache),
- ``finetune-studio-cli validate`` (the full check of every row, with the tokenizer check), reading
  the cached copy, and ``preview`` again,
- with ``--tokenize``: tokenizing every row with MiniLM's tokenizer: the baseline (plain transformers,
  in batches of 10 000), and the app's training path, twice (the second run reads the app's cache).

Targets: the first rows shown under 2 s; preview and validate under 500 MB (the issue's bound, set
for the CSV). The baseline gets a fresh datasets cache each time (a second ``load_dataset`` of the same
file would only read its Arrow cache).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

WORDS_EN = [
    *("the", "battery", "lasts", "all", "day", "screen", "sound", "quality", "price", "delivery"),
    *("fast", "slow", "broken", "great", "bad", "works", "perfectly"),
]
WORDS_ZH = list("这个手机很好用电池续航屏幕清晰价格便宜快递太慢质量差不推荐非常满意")


def reviews(rows: int) -> Iterator[tuple[int, str, str]]:
    rng = random.Random(7)
    for i in range(rows):
        if i % 2:
            text = " ".join(rng.choices(WORDS_EN, k=rng.randint(12, 22)))
        else:
            text = "".join(rng.choices(WORDS_ZH, k=rng.randint(25, 45)))
        if i % 250_000 == 99_999:
            text = ""  # a blank text for the full check to find
        yield i, text, "positive" if rng.random() < 0.5 else "negative"


def write_data(path: Path, rows: int, form: str) -> None:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        if form == "csv":
            fh.write("id,review,label\n")
        elif form == "json":
            fh.write("[\n")
        for i, text, label in reviews(rows):
            if form == "csv":
                fh.write(f'{i},"{text}",{label}\n')
                continue
            record = json.dumps({"id": i, "review": text, "label": label}, ensure_ascii=False)
            fh.write(f"{',' if form == 'json' and i else ''}{record}\n")
        if form == "json":
            fh.write("]\n")


TOKENIZE = """
import functools, sys, time
from desktop.core.data.checks import load_and_check
from desktop.core.settings.config import load_config
from desktop.core.hub.models import load_tokenizer
from desktop.core.data.tasks import Tokenizing
from desktop.core.data.tasks.classification import _encode, label_maps
config = load_config(sys.argv[1])
checked = load_and_check(config)
tokenizer = load_tokenizer(config.model)
columns = checked.guess.columns
label2id, _ = label_maps(checked.train.column(columns.label).unique().tolist())
start = time.perf_counter()
length = config.training.max_length
encode = functools.partial(
    _encode, columns=columns, tokenizer=tokenizer, max_length=length, label2id=label2id
)  # as the app's classification task makes it: it pickles, so the rows go to one process per core
rows = Tokenizing(config, tokenizer, cache=True).rows("train", checked.train, columns, encode)
print(len(rows), "rows tokenized in", round(time.perf_counter() - start, 1), "s")
"""

BASELINE_TOKENIZE = """
import sys, time, pandas, transformers
tok = transformers.AutoTokenizer.from_pretrained(sys.argv[2])
if sys.argv[1].endswith(".csv"):
    texts = pandas.read_csv(sys.argv[1], dtype=str, keep_default_na=False)["review"].tolist()
else:
    frame = pandas.read_json(sys.argv[1], lines=sys.argv[1].endswith(".jsonl"), dtype=False)
    texts = frame["review"].tolist()
start = time.perf_counter()
ids = []
for i in range(0, len(texts), 10_000):
    ids += tok(texts[i : i + 10_000], truncation=True, max_length=64)["input_ids"]
print(len(ids), "rows tokenized in", round(time.perf_counter() - start, 1), "s")
"""

BASELINE = """
import sys, datasets
kind = "csv" if sys.argv[1].endswith(".csv") else "json"
d = datasets.load_dataset(kind, data_files=sys.argv[1], split="train", cache_dir=sys.argv[2])
d = d.map(lambda b: {"n": [len(t or "") for t in b["review"]]}, batched=True)
print(len(d))
"""


def measure(command: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Seconds, peak RSS in MB, and the output of ``command``, run as a child process. The output
    starts with the seconds until its first line (``first line after N s``)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT
    )
    first_line = proc.stdout.readline()
    first = time.perf_counter() - start
    rest, errors = proc.communicate()
    done = subprocess.CompletedProcess(
        command, proc.returncode, f"first line after {first:.2f} s\n" + first_line + rest, errors
    )
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # of the largest child so far
    if done.returncode != 0:
        raise RuntimeError(done.stdout[-1000:] + done.stderr[-2000:])
    return elapsed, peak, done.stdout + done.stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_750_000)
    parser.add_argument("--format", choices=("csv", "jsonl", "json"), default="csv", dest="form")
    parser.add_argument("--folder", type=Path)
    parser.add_argument(
        "--tokenize",
        action="store_true",
        help="also tokenize every training row, twice (the second from the cache)",
    )
    args = parser.parse_args()
    folder = args.folder or Path(tempfile.mkdtemp(prefix="fs-big-data-"))
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / f"reviews-big.{args.form}"
    if not data.is_file():
        start = time.perf_counter()
        write_data(data, args.rows, args.form)
        print(
            f"wrote {data} ({data.stat().st_size / 2**20:.0f} MB, {args.rows} rows) "
            f"in {time.perf_counter() - start:.1f} s"
        )
    config = folder / "big.toml"
    config.write_text(
        'task = "classification"\n[model]\nname = "bundled:all-minilm-l6-v2"\n'
        f'[data]\nfiles = ["{data.name}"]\n'
        f'drop_bad_rows = true\n[columns]\ntext = "review"\nlabel = "label"\n',
        encoding="utf-8",
    )
    env = {**os.environ, "FINETUNE_STUDIO_HOME": str(folder / "home"), "HF_DATASETS_OFFLINE": "1"}
    # The first read must parse, the first tokenizing tokenize: the bench's own caches from an earlier
    # time go.
    for kind in ("tables", "tokenized"):
        shutil.rmtree(folder / "home" / "cache" / kind, ignore_errors=True)
    python = sys.executable
    results, shown_after = {}, {}
    # Each measurement in its own bench process, so that ru_maxrss of the children is that child's.
    for name, command in (
        ("baseline", [python, "-c", BASELINE, str(data), str(folder / f"hf-cache-{time.time_ns()}")]),
        ("preview", [python, "-m", "desktop.cli", "preview", str(config), "--no-tokens", "--rows", "5"]),
        ("validate", [python, "-m", "desktop.cli", "validate", str(config)]),
        (
            "preview again",
            [python, "-m", "desktop.cli", "preview", str(config), "--no-tokens", "--rows", "5"],
        ),
        *(_tokenizing(python, config, data) if args.tokenize else []),
    ):
        wrapped = [python, __file__, "--child", *command]
        done = subprocess.run(wrapped, capture_output=True, text=True, env=env, cwd=ROOT)
        line = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
        if not line.startswith("RESULT"):
            print(f"{name}: failed\n{done.stdout[-1500:]}\n{done.stderr[-1500:]}")
            return 1
        _, seconds, peak = line.split()
        results[name] = (float(seconds), float(peak))
        first = next((x for x in done.stderr.splitlines() if x.startswith("first line after")), "")
        if name.startswith("preview"):
            shown_after[name] = float(first.split()[3])
        shown = f"   (first rows shown after {shown_after[name]:.2f} s)" if name in shown_after else ""
        print(f"{name:14} {float(seconds):7.1f} s   peak {float(peak):7.0f} MB{shown}")
    base_s = results["baseline"][0]
    print(
        f"ratios to the baseline: preview {results['preview'][0] / base_s:.2f}, "
        f"validate {results['validate'][0] / base_s:.2f}"
    )
    if "tokenize" in results:
        print(
            f"tokenizing: {results['tokenize'][0] / results['baseline tok.'][0]:.2f} of the baseline's time "
            f"({os.cpu_count()} cores); from the cache: {results['tokenize again'][0]:.1f} s"
        )
    peak = max(results[name][1] for name in ("preview", "validate", "preview again"))
    ok = max(shown_after.values()) < 2.0 and peak < 500
    print(
        "PASS" if ok else "FAIL", "(targets: first rows shown under 2 s; preview and validate under 500 MB)"
    )
    if args.folder is None:
        shutil.rmtree(folder, ignore_errors=True)
    return 0 if ok else 1


def _tokenizing(python: str, config: Path, data: Path) -> list[tuple[str, list[str]]]:
    """The tokenization steps: the baseline's (datasets' map with the tokenizer), ours, ours again."""
    sys.path.insert(0, str(ROOT))
    from desktop.core.hub.models import resolve
    from desktop.core.settings.config import ModelSource

    tokenizer = resolve(ModelSource(name="bundled:all-minilm-l6-v2"))
    return [
        ("baseline tok.", [python, "-c", BASELINE_TOKENIZE, str(data), str(tokenizer)]),
        ("tokenize", [python, "-c", TOKENIZE, str(config)]),
        ("tokenize again", [python, "-c", TOKENIZE, str(config)]),
    ]


def child(command: list[str]) -> int:
    """Run ``command`` alone and print its time and peak memory (its own, this process being new)."""
    seconds, peak, output = measure(command, dict(os.environ))
    sys.stderr.write(output[:200] + output[-3000:])
    print(f"RESULT {seconds:.3f} {peak:.1f}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        sys.exit(child(sys.argv[2:]))
    sys.exit(main())
