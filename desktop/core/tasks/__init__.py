"""The three tasks: model class, preprocessing, collator and metrics for each."""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TASK_MODULES = {
    "classification": "desktop.core.tasks.classification",
    "causal-lm": "desktop.core.tasks.causal_lm",
    "seq2seq": "desktop.core.tasks.seq2seq",
}
TASK_NAMES = {
    "classification": "text classification",
    "causal-lm": "causal-LM fine-tuning",
    "seq2seq": "sequence-to-sequence",
}


@dataclass
class Prepared:
    """What a task hands the trainer.

    Attributes:
        model: The model, loaded with the task's head.
        train: Tokenized training examples (a list of feature dicts).
        eval: Tokenized evaluation examples, or ``None``.
        collator: Batches examples, padding them.
        compute_metrics: Eval metrics from predictions, or ``None`` when the loss says it all.
        seq2seq: Whether to use ``Seq2SeqTrainer``.
        notes: Things the user should know (rows left out, truncation).
        eval_texts: Classification: each evaluation row's text, for the list of wrong rows.
        label_counts: Classification: rows per label of the ``train`` and ``eval`` sets.
        eval_pairs: Causal-LM and sequence-to-sequence: (prompt, reference) of the first evaluation
            rows, for the evaluation's samples (and BLEU / chrF); ``chat``: prompts go through the
            chat template.
    """

    model: Any
    train: list[dict[str, Any]]
    eval: list[dict[str, Any]] | None
    collator: Any
    compute_metrics: Any = None
    seq2seq: bool = False
    notes: list[str] = field(default_factory=list)
    eval_texts: list[str] | None = None
    label_counts: dict[str, dict[str, int]] = field(default_factory=dict)
    eval_pairs: list[tuple[str, str]] = field(default_factory=list)
    chat: bool = False


def auto_class(task: str) -> Any:
    """The transformers Auto class that loads a model with the task's head."""
    import transformers

    names = {
        "classification": "AutoModelForSequenceClassification",
        "causal-lm": "AutoModelForCausalLM",
        "seq2seq": "AutoModelForSeq2SeqLM",
    }
    return getattr(transformers, names[task])


def task_module(task: str) -> Any:
    """The module that implements ``task``."""
    return importlib.import_module(TASK_MODULES[task])


# --------------------------------------------------------------------------- tokenizing


CACHE_KEEP = 4
"""Tokenized datasets kept in the cache (the newest): a million rows take a few hundred MB."""
CHUNK_ROWS = 10_000
PARALLEL_MIN_ROWS = 100_000
"""From this many rows on, chunks are tokenized by several processes at once (below, starting them
costs more than it saves: each imports Transformers, about 3 s)."""
MAX_WORKERS = 8


class Tokenizing:
    """How the rows are tokenized for a run: in chunks, with progress and Stop between chunks, and
    cached, so that a second run on the same data with the same tokenizer and settings skips it.

    Args:
        config: The run's config (its data, columns, max length and task make the cache key).
        tokenizer: The tokenizer (its class, name, vocabulary size and chat template too).
        report: Told the part (``train`` / ``eval``), the rows and the share done (0..1).
        check_stop: Raises when the user pressed Stop.
        cache: Whether to use the cache (the app's data folder, ``cache/tokenized``).
    """

    def __init__(
        self,
        config: Any = None,
        tokenizer: Any = None,
        report: Any = None,
        check_stop: Any = None,
        cache: bool = False,
    ) -> None:
        self.config, self.tokenizer = config, tokenizer
        self.report = report or (lambda part, rows, share: None)
        self.check_stop = check_stop or (lambda: None)
        self.cache = cache and config is not None

    def rows(self, part: str, table: Any, columns: Any, encode: Any, chunked: bool = True) -> Any:
        """``encode(table)`` of every row of ``table``, from the cache when it holds it.

        ``chunked``: ``encode`` maps each row to its own examples (a list), so the rows can be
        encoded a chunk at a time; otherwise ``encode`` runs once on the whole table.
        """

        def make() -> Any:
            self.check_stop()
            workers = parallel_workers(len(table)) if chunked else 0
            if not chunked or len(table) <= CHUNK_ROWS:
                out = encode(table)
            elif workers:
                out = self._in_processes(part, table, encode, workers)
            else:
                out = []
                for start in range(0, len(table), CHUNK_ROWS):
                    self.check_stop()
                    self.report(part, len(table), start / len(table))
                    out += encode(table.take(list(range(start, min(len(table), start + CHUNK_ROWS)))))
            self.report(part, len(table), 1.0)
            return out

        if not self.cache:
            return make()
        return cached(self._key(part, table, columns), make)

    def _in_processes(self, part: str, table: Any, encode: Any, workers: int) -> list:
        """``encode`` of every chunk of ``table`` in ``workers`` processes, in order; Stop between chunks.

        ``encode`` must pickle (a module-level function, or a ``functools.partial`` of one): each
        process receives it once, then only the chunks. The processes are started fresh (spawn), the
        same on Windows, Linux and macOS, and never a fork of a process that holds threads.
        """
        import concurrent.futures as cf
        import multiprocessing

        starts = list(range(0, len(table), CHUNK_ROWS))
        results: list[Any] = [None] * len(starts)
        pool = cf.ProcessPoolExecutor(
            workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_worker_start,
            initargs=(encode,),
        )
        pending: dict[Any, int] = {}
        submitted = done = 0
        try:
            while done < len(starts):
                while submitted < len(starts) and len(pending) < 2 * workers:  # a few chunks in flight
                    start = starts[submitted]
                    chunk = table.take(list(range(start, min(len(table), start + CHUNK_ROWS))))
                    pending[pool.submit(_worker_encode, chunk)] = submitted
                    submitted += 1
                finished, _ = cf.wait(list(pending), timeout=0.25, return_when=cf.FIRST_COMPLETED)
                self.check_stop()
                for future in finished:
                    results[pending.pop(future)] = future.result()
                    done += 1
                    self.report(part, len(table), done / len(starts))
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)  # Stop: the chunks under way end, no more
            raise
        pool.shutdown()
        return [row for chunk in results for row in chunk]

    def _key(self, part: str, table: Any, columns: Any) -> str:
        import dataclasses
        import hashlib
        import json

        from desktop import __version__

        config, tokenizer = self.config, self.tokenizer
        files = []
        for name in [*config.data.files, *config.validation.files]:
            try:
                stat = Path(name).stat()
                files.append((str(Path(name).resolve()), stat.st_size, stat.st_mtime_ns))
            except OSError:
                files.append((name, -1, -1))
        hub = ""
        if config.data.hub_id:
            from desktop.core.downloads import local_copy

            folder = local_copy(config.data.hub_id, dataset=True)
            hub = f"{folder}:{folder.stat().st_mtime_ns if folder else ''}"
        parts = {
            "app": __version__,
            "task": config.task,
            "part": part,
            "rows": len(table),
            "files": files,
            "hub": [
                config.data.hub_id,
                config.data.hub_config,
                config.data.split,
                config.validation.split,
                hub,
            ],
            "split": [config.validation.fraction, config.validation.seed, config.data.drop_bad_rows],
            "columns": dataclasses.asdict(columns),
            "max_length": config.training.max_length,
            "tokenizer": [
                type(tokenizer).__name__,
                str(getattr(tokenizer, "name_or_path", "")),
                len(tokenizer),
                str(getattr(tokenizer, "chat_template", "") or ""),
                str(getattr(tokenizer, "eos_token", "")),
                _tokenizer_files(str(getattr(tokenizer, "name_or_path", ""))),
            ],
        }
        return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:32]


def _tokenizer_files(folder: str) -> list[tuple[str, int, int]]:
    """The tokenizer files of a model folder with their sizes and times: a tokenizer replaced in
    place (same name, same vocabulary size) makes a new cache key."""
    path = Path(folder)
    if not folder or not path.is_dir():
        return []
    names = (
        "tokenizer.json",
        "tokenizer_config.json",
        "vocab.txt",
        "vocab.json",
        "merges.txt",
        "spiece.model",
    )
    found = []
    for name in names:
        try:
            stat = (path / name).stat()
        except OSError:
            continue
        found.append((name, stat.st_size, stat.st_mtime_ns))
    return found


def parallel_workers(rows: int) -> int:
    """How many processes tokenize ``rows`` rows: one per core (at most :data:`MAX_WORKERS`), or 0
    (tokenize here) for fewer than :data:`PARALLEL_MIN_ROWS` rows or a single core."""
    if rows < PARALLEL_MIN_ROWS:
        return 0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    workers = min(cores, MAX_WORKERS, -(-rows // CHUNK_ROWS))
    return workers if workers >= 2 else 0


_WORKER_ENCODE: Any = None


def _worker_start(encode: Any) -> None:
    """A tokenizing process: one thread each (the processes are the parallelism), ``encode`` kept."""
    global _WORKER_ENCODE
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    _WORKER_ENCODE = encode


def _worker_encode(chunk: Any) -> Any:
    return _WORKER_ENCODE(chunk)


def cached(key: str, make: Any) -> Any:
    """The value saved under ``key`` in the tokenized cache, or ``make()`` (then saved, atomically)."""
    import pickle
    import tempfile

    from desktop.core.paths import data_dir

    folder = data_dir() / "cache" / "tokenized"
    path = folder / f"{key}.pkl"
    try:
        with open(path, "rb") as fh:
            value = pickle.load(fh)  # the app's own file, in the app's own folder
        os.utime(path)  # recently used: kept longest
        return value
    except Exception:  # none yet, or a damaged or older one: made again
        pass
    value = make()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{key}.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        _prune(folder)
    except OSError:  # a full disk: the run goes on without a cache
        pass
    return value


def _prune(folder: Path) -> None:
    """Keep the :data:`CACHE_KEEP` newest tokenized datasets; only files of this cache's own naming."""
    import re

    mine = [p for p in folder.glob("*.pkl") if re.fullmatch(r"[0-9a-f]{32}\.pkl", p.name)]
    mine.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    for old in mine[CACHE_KEEP:]:
        old.unlink(missing_ok=True)
