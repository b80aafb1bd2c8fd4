"""``export``, ``predict`` and ``evaluate``: a finished run's model as a folder, predictions, scores."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from desktop.cli import text as cli_text
from desktop.cli.common import EXIT_FAILED, EXIT_OK, quiet_libraries, shorten
from desktop.cli.text import say, text
from desktop.core.runs.folders import find_run
from desktop.core.system.errors import InputError


def add_parsers(sub: Any) -> None:
    """The ``export``, ``predict`` and ``evaluate`` commands."""
    p = sub.add_parser("export", help=say("write a finished run's model as a complete, verified folder"))
    p.add_argument("run", help=say("a run folder, or a run's name in the runs folder"))
    p.add_argument("dest", type=Path, help=say("the folder to create"))
    p.add_argument("--dtype", choices=("fp32", "fp16", "bf16"), default="fp32")
    p.add_argument(
        "--format",
        choices=("folder", "gguf"),
        default="folder",
        help=say("folder: a transformers model folder; gguf: one file for llama.cpp, Ollama and LM Studio"),
    )
    p.add_argument(
        "--quant",
        choices=("f16", "q8_0", "q4_k_m"),
        default="f16",
        help=say("GGUF: the weights' type (q4_k_m needs llama.cpp: pip install llama-cpp-python)"),
    )
    p.add_argument(
        "--ollama",
        nargs="?",
        const="",
        metavar="NAME",
        help=say(
            "GGUF: also add the model to Ollama (ollama create); with --quant q4_k_m and no llama.cpp, "
            "Ollama makes the 4-bit model from an f16 file"
        ),
    )
    p.add_argument(
        "--layout",
        choices=("folder", "lmstudio"),
        default="folder",
        help=say("GGUF: lmstudio puts the file in DEST/finetune-studio/RUN/, as LM Studio lists models"),
    )
    p.add_argument(
        "--adapter", action="store_true", help=say("LoRA runs: export the adapters alone, not merged")
    )
    p.add_argument(
        "--last-step",
        action="store_true",
        help=say(
            "a run whose model is its best checkpoint: export the last step's model instead (made from its "
            "checkpoint)"
        ),
    )
    p.add_argument("--zip", action="store_true", help=say("also write DEST.zip"))
    p.add_argument("--force", action="store_true", help=say("replace DEST if it is not empty"))
    p.add_argument(
        "--no-verify",
        action="store_true",
        help=say("skip the check (folder: reloading it; gguf: llama.cpp's answers)"),
    )
    p.add_argument(
        "--mlflow",
        action="store_true",
        help=say("also log the model to MLflow (MLFLOW_TRACKING_URI, else a store in the app's data folder)"),
    )
    p.add_argument("--runs-dir", type=Path)
    p.set_defaults(func=cmd_export)

    p = sub.add_parser(
        "predict",
        help=say(
            "run a trained model over a CSV, TSV, JSONL or Excel file (an image classifier: also a folder "
            "of pictures, or one picture) and write its predictions"
        ),
    )
    p.add_argument("model", help=say("a run folder, a run's name, or a model folder"))
    p.add_argument("file", type=Path, help=say("the rows to predict (or the pictures)"))
    p.add_argument("-o", "--output", type=Path, help=say("the file to write (default: FILE.predicted.csv)"))
    p.add_argument("--column", default="", help=say("the column the model reads (default: as trained)"))
    p.add_argument("--max-new-tokens", type=int, default=128, help=say("the longest generated answer"))
    p.add_argument("--force", action="store_true", help=say("replace OUTPUT if it exists"))
    p.add_argument("--runs-dir", type=Path)
    p.set_defaults(func=cmd_predict)

    p = sub.add_parser(
        "evaluate", help=say("show a finished run's evaluation: per class, confusions, mistakes")
    )
    p.add_argument("run", help=say("a run folder, or a run's name in the runs folder"))
    p.add_argument(
        "--errors", type=int, default=10, help=say("wrong rows to show (the most confident first)")
    )
    p.add_argument("--runs-dir", type=Path)
    p.set_defaults(func=cmd_evaluate)


def cmd_export(args: argparse.Namespace) -> int:
    """Export a finished run; verify it by reloading it in a fresh process."""
    from desktop.core.results.export import STAGES, export_run

    run = find_run(args.run, args.runs_dir)
    if run is None:
        raise InputError(
            say("No run folder {run} was found.", run=args.run),
            say("List runs with: finetune-studio-cli runs"),
        )
    quiet_libraries()
    if args.last_step:
        from desktop.core.results.last_step import build, sentence
        from desktop.core.training import best

        found = best.of_run(run.path)
        run = build(run, found)
        print(text(sentence(found)), file=sys.stderr)
    if args.format == "gguf":
        return _export_gguf(run, args)
    result = export_run(
        run,
        args.dest,
        dtype=args.dtype,
        lora="adapter" if args.adapter else "merged",
        overwrite=args.force,
        archive=args.zip,
        verify=not args.no_verify,
        on_progress=lambda stage, fraction: print(
            f"[{fraction:4.0%}] {text(STAGES[stage])}", file=sys.stderr
        ),
        mlflow=args.mlflow,
        language=cli_text.language,
    )
    if result.archive:
        print(say("Exported to {folder} and {archive}", folder=result.folder, archive=result.archive))
    else:
        print(say("Exported to {folder}", folder=result.folder))
    if result.mlflow_uri:
        print(say("Logged to MLflow as {uri}", uri=result.mlflow_uri))
        print(say("To look: {command}", command=result.mlflow_ui))
    if result.mlflow_not_logged is not None:
        print(text(result.mlflow_not_logged), file=sys.stderr)
    check = result.verification
    if check is None:
        return EXIT_OK
    if check.ok and check.max_abs_diff == 0:
        print(
            say(
                "Verified: reloaded in a fresh process, the outputs on {count} examples are the same.",
                count=check.examples,
            )
        )
        return EXIT_OK
    if check.ok:
        print(
            say(
                "Verified: reloaded in a fresh process, outputs on {count} examples differ by at most "
                "{diff}.",
                count=check.examples,
                diff=f"{check.max_abs_diff:.2g}",
            )
        )
        return EXIT_OK
    print(
        say(
            "error: the exported folder does not reproduce the run's outputs (max difference {diff}) {error}",
            diff=f"{check.max_abs_diff:.3g}",
            error=check.error,
        ),
        file=sys.stderr,
    )
    return EXIT_FAILED


def _export_gguf(run: Any, args: argparse.Namespace) -> int:
    """``export --format gguf``: the run's model as one GGUF file, checked by llama.cpp; a line per tenth
    done. Fails (exit 1) when llama.cpp's answers differ: the file is kept as ``...-unverified.gguf``."""
    from desktop.core.results.gguf_export import export_run_gguf
    from desktop.core.system.errors import human_size

    stages = {
        "gguf": say("Writing GGUF tensors"),
        "quantize": say("Quantizing with llama.cpp"),
        "check": say("Checking the file with llama.cpp"),
        "done": say("Done"),
    }
    shown: dict[str, int] = {}

    def progress(stage: str, fraction: float) -> None:
        tenth = int(fraction * 10)
        if shown.get(stage, -1) < tenth:
            shown[stage] = tenth
            print(f"[{fraction:4.0%}] {stages.get(stage, stage)}", file=sys.stderr)

    from desktop.core.results import gguf_check

    quant, ollama_quantize = args.quant, ""
    if quant == "q4_k_m" and args.ollama is not None and not gguf_check.llama_cpp_available():
        quant, ollama_quantize = "f16", "q4_K_M"  # the K-quant from Ollama, which the user has
        print(say("llama.cpp is not installed: Ollama will make q4_K_M from the f16 file."), file=sys.stderr)
    result = export_run_gguf(
        run,
        args.dest,
        quant,
        progress,
        overwrite=args.force,
        layout=args.layout,
        verify=not args.no_verify,
    )
    print(say("Exported to {file} ({size})", file=result.path, size=human_size(result.size)))
    check = result.verification
    print(text(check.summary()))
    if (note := result.ollama_note()) is not None:  # the Modelfile has no TEMPLATE
        print(say("note: {note}", note=text(note)), file=sys.stderr)
    elif (agreement := result.ollama_summary()) is not None:
        print(text(agreement))
    if check.difference() is not None:
        print(text(check.difference()))
    if args.ollama is not None:
        _add_to_ollama(args.ollama or result.ollama_name, result.modelfile, ollama_quantize)
    else:
        command = f"ollama create {result.ollama_name} -f {result.modelfile}"
        print(say("For Ollama: {command}", command=command))
    if args.layout == "lmstudio":
        from desktop.core.results.gguf_export import lm_studio_folder

        print(say("LM Studio reads its models from {folder}.", folder=lm_studio_folder()))
    return EXIT_FAILED if check.checked and not check.verified else EXIT_OK


def _add_to_ollama(name: str, modelfile: Path, quantize: str) -> None:
    """``ollama create`` with Ollama's progress on stderr; the ``ollama run`` line on stdout.

    Raises:
        ModelError: Ollama is missing, not running, or refused the model.
    """
    from desktop.core.results import ollama
    from desktop.core.system.errors import ModelError

    found = ollama.state()
    if found.advice():
        raise ModelError(text(found.advice()), say("The GGUF file is written; add it to Ollama later."))
    if quantize:
        name = name.removesuffix("-f16") + "-" + quantize.lower()
    shown = [""]

    def progress(line: str, done: float) -> None:
        if line != shown[0]:
            shown[0] = line
            print(f"[{done:4.0%}] ollama: {line}", file=sys.stderr)

    print(
        say("Added to Ollama: {command}", command=ollama.create(name, modelfile, progress, quantize=quantize))
    )


def cmd_predict(args: argparse.Namespace) -> int:
    """Predict every row of a file with a trained model and write the file with the predictions added."""
    from desktop.core.results.predict import default_output, predict_file
    from desktop.core.system.progress import reporting

    run = find_run(args.model, args.runs_dir)
    model = run.path if run is not None else Path(args.model)
    if not model.is_dir():
        raise InputError(
            say("No run or model folder {model} was found.", model=args.model),
            say("List runs with: finetune-studio-cli runs"),
        )
    out = args.output or default_output(args.file)
    if out.exists() and not args.force:
        raise InputError(
            say("{file} exists.", file=out), say("Choose another output name, or add --force to replace it.")
        )
    quiet_libraries()
    shown = [-1]

    def progress(share: float, what: Any) -> None:
        percent = int(share * 100)
        if percent // 10 != shown[0]:  # a line per tenth
            shown[0] = percent // 10
            print(f"[{percent:3d}%] {text(what)}", file=sys.stderr, flush=True)

    with reporting(progress):
        result = predict_file(model, args.file, out, column=args.column, max_new_tokens=args.max_new_tokens)
    for note in result.notes:
        print(say("note: {note}", note=text(note)), file=sys.stderr)
    added = ", ".join(result.added)
    if result.listed and result.rows == 1:  # a picture alone
        said = say(
            "The picture is labelled; written to {file} with {added} added.", file=result.out, added=added
        )
    elif result.listed:  # pictures of a folder: no column the user named
        said = say(
            "{done} of {rows} pictures labelled; written to {file} with {added} added.",
            done=result.predicted,
            rows=result.rows,
            file=result.out,
            added=added,
        )
    elif result.unread:
        said = say(
            "{done} of {rows} rows predicted from column {column}; written to {file} with {added} added.",
            done=result.predicted,
            rows=result.rows,
            column=result.column,
            file=result.out,
            added=added,
        )
    else:
        said = say(
            "{rows} rows predicted from column {column}; written to {file} with {added} added.",
            rows=result.rows,
            column=result.column,
            file=result.out,
            added=added,
        )
    print(said)
    return EXIT_OK


def _print_generation(report: Any, base: Any, figure: Any, samples: int) -> int:
    """A causal-LM or sequence-to-sequence evaluation: loss, perplexity, BLEU, chrF and a few answers."""
    print(say("{rows} evaluation rows", rows=report.rows))
    for name, now, before in (
        (say("loss"), report.loss, base.loss if base else None),
        (say("perplexity"), report.perplexity, base.perplexity if base else None),
        ("BLEU", report.bleu, base.bleu if base else None),
        ("chrF", report.chrf, base.chrf if base else None),
    ):
        if now is not None:
            print(f"{_pad(name, 12)}{figure(now, before)}")
    if report.bleu is not None:
        print(say("(BLEU and chrF over the first {count} rows)", count=report.scored))
    before = base.samples if base else []
    for index, sample in enumerate(report.samples[:samples]):
        print()
        print(say("prompt:     {text}", text=shorten(sample["prompt"], 100)))
        print(say("reference:  {text}", text=shorten(sample["reference"], 100)))
        if index < len(before):
            print(say("base model: {text}", text=shorten(before[index]["output"], 100)))
        print(say("fine-tuned: {text}", text=shorten(sample["output"], 100)))
    return EXIT_OK


def _print_preference(report: Any, base: Any, figure: Any, samples: int) -> int:
    """A preference run's evaluation: which answer of the held-out pairs the model prefers."""
    print(say("{rows} held-out preference pairs", rows=report.rows))
    for name, now, before in (
        (say("preference accuracy"), report.accuracy, base.accuracy if base else None),
        (say("mean margin (nats per token)"), report.margin, base.margin if base else None),
        (say("reward accuracy ({method})", method=report.method.upper()), report.reward_accuracy, None),
        (say("reward margin ({method})", method=report.method.upper()), report.reward_margin, None),
    ):
        if now is not None:
            print(f"{_pad(name, 30)}{figure(now, before)}")
    for title, examples in (
        (say("Now preferring the chosen answer:"), report.improved),
        (say("Still preferring the rejected answer:"), report.still_wrong),
    ):
        if examples[:samples]:
            print()
            print(title)
        for example in examples[:samples]:
            print("  " + say("prompt:   {text}", text=shorten(example["prompt"], 100)))
            print("  " + say("chosen:   {text}", text=shorten(example["chosen"], 100)))
            print("  " + say("rejected: {text}", text=shorten(example["rejected"], 100)))
            before = "" if example["before"] is None else f"{example['before']:.2f} -> "
            print("  " + say("margin:   {value}", value=f"{before}{example['after']:.2f}"))
    return EXIT_OK


def _print_rewards(report: Any, base: Any, figure: Any, samples: int) -> int:
    """A reasoning run's evaluation: the share of held-out prompts whose greedy answer earns each reward."""
    from desktop.core.data.rewards import describe

    print(say("{rows} held-out prompts: the share whose greedy answer earns each reward", rows=report.rows))
    for name, share in report.earned.items():
        before = base.earned.get(name) if base is not None and hasattr(base, "earned") else None
        print(f"  {_pad(text(describe(name)), 14)}{figure(share, before)}")
    before_samples = base.samples if base is not None and hasattr(base, "samples") else []
    for index, sample in enumerate(report.samples[:samples]):
        print()
        print(say("prompt:     {text}", text=shorten(sample["prompt"], 100)))
        print(say("reference:  {text}", text=shorten(sample["reference"], 100)))
        if index < len(before_samples):
            print(say("base model: {text}", text=shorten(before_samples[index]["output"], 100)))
        print(say("fine-tuned: {text}", text=shorten(sample["output"], 100)))
    return EXIT_OK


def _width(value: str) -> int:
    """Columns ``value`` takes in a terminal: Chinese characters take two."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in value)


def _pad(value: str, width: int, right: bool = False) -> str:
    space = " " * max(0, width - _width(value))
    return space + value if right else value + space


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Print a finished run's evaluation, base -> fine-tuned where both are known."""
    from desktop.core.training import evaluation

    run = find_run(args.run, args.runs_dir)
    if run is None:
        raise InputError(
            say("No run folder {run} was found.", run=args.run),
            say("List runs with: finetune-studio-cli runs"),
        )
    saved = evaluation.load(run.path)
    report = saved["fine_tuned"] if saved else None
    if report is None:
        raise InputError(
            say("{run} has no evaluation.", run=run.path.name),
            say("Evaluations are kept by finished runs with evaluation rows."),
        )
    base = saved["base"]

    def figure(now: float, before: float | None) -> str:
        return f"{before:.3f} -> {now:.3f}" if before is not None else f"{now:.3f}"

    if isinstance(report, evaluation.PreferenceReport):
        return _print_preference(report, base, figure, args.errors)
    if getattr(report, "task", "") == "grpo":
        return _print_rewards(report, base, figure, args.errors)
    if not isinstance(report, evaluation.ClassificationReport):
        return _print_generation(report, base, figure, args.errors)

    print(say("{rows} evaluation rows", rows=report.rows))
    print(say("accuracy  {value}", value=figure(report.accuracy, base.accuracy if base else None)))
    print(say("macro-F1  {value}", value=figure(report.macro_f1, base.macro_f1 if base else None)))
    width = max(_width(label) for label in report.labels) + 2
    print(
        _pad("", width)
        + "".join(_pad(name, 10, right=True) for name in (say("precision"), say("recall"), "F1", say("rows")))
    )
    for scores in report.classes:
        figures = (f"{scores.precision:.3f}", f"{scores.recall:.3f}", f"{scores.f1:.3f}", str(scores.support))
        print(_pad(scores.label, width) + "".join(_pad(f, 10, right=True) for f in figures))
    print(say("Confusion matrix (rows: true label; columns: predicted):"))
    print(_pad("", width) + "".join(_pad(label[:8], 10, right=True) for label in report.labels))
    for label, counts in zip(report.labels, report.matrix, strict=True):
        print(_pad(label, width) + "".join(_pad(str(n), 10, right=True) for n in counts))
    if report.errors and args.errors:
        print(say("Wrong, the most confident first ({count} in all):", count=len(report.errors)))
        for error in report.errors[: args.errors]:
            print(
                "  "
                + say(
                    "{label} called {predicted} ({confidence:.0%}): {text}",
                    label=error["label"],
                    predicted=error["predicted"],
                    confidence=error["confidence"],
                    text=shorten(error["text"], 80),
                )
            )
    return EXIT_OK
