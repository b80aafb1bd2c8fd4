"""The tasks: model class, preprocessing, collator and metrics for each."""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TASK_MODULES = {
    "classification": "desktop.core.data.tasks.classification",
    "causal-lm": "desktop.core.data.tasks.causal_lm",
    "seq2seq": "desktop.core.data.tasks.seq2seq",
    "preference": "desktop.core.data.tasks.preference",
    "grpo": "desktop.core.data.tasks.grpo",
    "image-classification": "desktop.core.data.tasks.image_classification",
    "vision-chat": "desktop.core.data.tasks.vision_chat",
}
SAMPLE_ROWS = 8
"""Evaluation rows whose reference and answer are shown side by side."""
SCORED_ROWS = 200
"""Sequence-to-sequence: the most evaluation rows BLEU and chrF are computed on."""
TASK_NAMES = {
    "classification": "text classification",
    "causal-lm": "causal-LM fine-tuning",
    "seq2seq": "sequence-to-sequence",
    "preference": "preference tuning",
    "grpo": "reasoning with rewards (GRPO)",
    "image-classification": "image classification",
    "vision-chat": "vision-language fine-tuning",
}


@dataclass
class Prepared:
    """What a task hands the trainer.

    Attributes:
        model: The model, loaded with the task's head.
        train: Tokenized training examples (a sequence of feature dicts, :class:`Examples`).
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
        reference: Preference (DPO without LoRA): the frozen reference model.
        pairs: Preference: the evaluation pairs (:class:`~desktop.core.data.tasks.preference.Pair`),
            for the evaluation before and after.
        pictures: Vision-language: the picture of each of ``eval_pairs``.
    """

    model: Any
    train: Sequence[dict[str, Any]]
    eval: Sequence[dict[str, Any]] | None
    collator: Any
    compute_metrics: Any = None
    seq2seq: bool = False
    notes: list[str] = field(default_factory=list)
    eval_texts: list[str] | None = None
    label_counts: dict[str, dict[str, int]] = field(default_factory=dict)
    eval_pairs: list[tuple[str, str]] = field(default_factory=list)
    chat: bool = False
    reference: Any = None
    pairs: list[Any] = field(default_factory=list)
    pictures: list[Any] = field(default_factory=list)


def auto_class(task: str) -> Any:
    """The transformers Auto class that loads a model with the task's head."""
    import transformers

    names = {
        "classification": "AutoModelForSequenceClassification",
        "causal-lm": "AutoModelForCausalLM",
        "seq2seq": "AutoModelForSeq2SeqLM",
        "preference": "AutoModelForCausalLM",
        "grpo": "AutoModelForCausalLM",
        "image-classification": "AutoModelForImageClassification",
        "vision-chat": "AutoModelForImageTextToText",
    }
    return getattr(transformers, names[task])


def task_module(task: str) -> Any:
    """The module that implements ``task``."""
    return importlib.import_module(TASK_MODULES[task])


# --------------------------------------------------------------------------- tokenizing


CHUNK_ROWS = 10_000
PARALLEL_MIN_ROWS = 100_000
"""From this many rows on, chunks are tokenized by several processes at once (below, starting them
costs more than it saves: each imports Transformers, about 3 s)."""
MAX_WORKERS = 8


class Tokenizing:
    """How the rows are tokenized for a run: in chunks, with progress and Stop between chunks, into
    Arrow (:class:`~desktop.core.data.examples.Examples`: 4 bytes a token, not a Python object), and
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
        """``encode(table)`` of every row of ``table`` as :class:`~desktop.core.data.examples.Examples`,
        from the cache when it holds them. ``encode`` returns a list of examples (dicts of token
        lists and numbers).

        ``chunked``: ``encode`` maps each row to its own examples, so the rows can be encoded a chunk
        at a time (in several processes when ``encode`` pickles and there are many); otherwise
        ``encode`` runs once on the whole table.
        """
        from desktop.core.data import arrow_cache
        from desktop.core.data.examples import Examples

        if not self.cache:
            return Examples.from_batches(list(self._batches(part, table, encode, chunked)))
        name = self._key(part, table, columns)
        found = arrow_cache.open_table("tokenized", name)
        if found is None:
            batches = self._batches(part, table, encode, chunked)
            try:
                found = arrow_cache.write_table("tokenized", name, batches)
            except OSError:  # the cache cannot be written (a full disk): the run goes on without it
                return Examples.from_batches(list(self._batches(part, table, encode, chunked)))
        return Examples(found, str(arrow_cache.folder("tokenized") / f"{name}.arrow"))

    def _batches(self, part: str, table: Any, encode: Any, chunked: bool) -> Any:
        """The examples of ``table`` as Arrow record batches, a chunk of rows at a time (a chunk that
        makes none, every row left out, makes no batch)."""
        return (batch for batch in self._chunks(part, table, encode, chunked) if batch is not None)

    def _chunks(self, part: str, table: Any, encode: Any, chunked: bool) -> Any:
        from desktop.core.data.examples import to_batch

        self.check_stop()
        workers = parallel_workers(len(table)) if chunked else 0
        if not chunked or len(table) <= CHUNK_ROWS:
            yield to_batch(encode(table))
        elif workers:
            yield from self._in_processes(part, table, encode, workers)
        else:
            for start in range(0, len(table), CHUNK_ROWS):
                self.check_stop()
                self.report(part, len(table), start / len(table))
                yield to_batch(encode(table.take(range(start, min(len(table), start + CHUNK_ROWS)))))
        self.report(part, len(table), 1.0)

    def _in_processes(self, part: str, table: Any, encode: Any, workers: int) -> Any:
        """``encode`` of every chunk of ``table`` in ``workers`` processes, yielded in order as Arrow
        batches (each process sends its chunk's batch, not Python objects); Stop between chunks.

        ``encode`` must pickle (a module-level function, or a ``functools.partial`` of one): each
        process receives it once, then only the chunks. The processes are started fresh (spawn), the
        same on Windows, Linux and macOS, and never a fork of a process that holds threads.
        """
        import concurrent.futures as cf
        import multiprocessing

        starts = list(range(0, len(table), CHUNK_ROWS))
        results: dict[int, Any] = {}
        pool = cf.ProcessPoolExecutor(
            workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_worker_start,
            initargs=(encode,),
        )
        pending: dict[Any, int] = {}
        submitted = done = handed = 0
        try:
            while handed < len(starts):
                while submitted < len(starts) and len(pending) < 2 * workers:  # a few chunks in flight
                    start = starts[submitted]
                    chunk = table.take(range(start, min(len(table), start + CHUNK_ROWS)))
                    pending[pool.submit(_worker_encode, chunk)] = submitted
                    submitted += 1
                finished, _ = cf.wait(list(pending), timeout=0.25, return_when=cf.FIRST_COMPLETED)
                self.check_stop()
                for future in finished:
                    results[pending.pop(future)] = future.result()
                    done += 1
                    self.report(part, len(table), done / len(starts))
                while handed in results:  # in order, each batch let go once handed on
                    yield results.pop(handed)
                    handed += 1
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)  # Stop: the chunks under way end, no more
            raise
        pool.shutdown()

    def _key(self, part: str, table: Any, columns: Any) -> str:
        import dataclasses
        import hashlib
        import json

        from desktop import __version__
        from desktop.core.data.digest import file_digest

        config, tokenizer = self.config, self.tokenizer
        files = []
        for name in [*config.data.files, *config.validation.files]:
            try:  # the contents, not the size and time: cp -p and rsync -a put an edited file's time back
                files.append((str(Path(name).resolve()), file_digest(Path(name))))
            except OSError:
                files.append((name, ""))
        hub = ""
        if config.data.hub_id:
            from desktop.core.hub.clients import local_copy

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
    """A tokenizing process: one thread each (the processes are the parallelism), ``encode`` kept, below
    the window (on Linux it would inherit the priority of the run's thread, which is the window's)."""
    global _WORKER_ENCODE
    from desktop.core.system.processes import lower_this_process

    lower_this_process()
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    _WORKER_ENCODE = encode


def _worker_encode(chunk: Any) -> Any:
    from desktop.core.data.examples import to_batch

    return to_batch(_WORKER_ENCODE(chunk))
