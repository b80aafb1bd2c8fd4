"""``push``: publish a finished run (or an export of it) to the Hugging Face hub or ModelScope."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from desktop.cli.common import EXIT_OK, quiet_libraries
from desktop.cli.text import say, text
from desktop.core.runs.folders import find_run
from desktop.core.system.errors import InputError, human_size


def add_parsers(sub: Any) -> None:
    """The ``push`` command."""
    p = sub.add_parser(
        "push",
        help=say("publish a finished run to the Hugging Face hub or ModelScope, with its model card"),
    )
    p.add_argument(
        "run",
        help=say("a run folder or a run's name (exported first), or a folder or GGUF file already exported"),
    )
    p.add_argument("repo_id", help=say("the repository: owner/name, or name for your own account"))
    visibility = p.add_mutually_exclusive_group()
    visibility.add_argument(
        "--private",
        dest="private",
        action="store_true",
        default=True,
        help=say("a new repository is private (the default)"),
    )
    visibility.add_argument(
        "--public", dest="private", action="store_false", help=say("make a new repository public")
    )
    p.add_argument(
        "--to",
        choices=("hf", "modelscope"),
        default="hf",
        help=say(
            "hf: Hugging Face (the endpoint in the settings; a mirror must take uploads); "
            "modelscope: ModelScope"
        ),
    )
    p.add_argument(
        "--format",
        choices=("folder", "gguf", "adapter"),
        default="folder",
        help=say(
            "folder: the model folder; gguf: the GGUF file with its Modelfile; "
            "adapter: the LoRA adapters alone"
        ),
    )
    p.add_argument(
        "--replace",
        action="store_true",
        help=say("the repository already holds files: replace them (ours are written, the others deleted)"),
    )
    p.add_argument("--dtype", choices=("fp32", "fp16", "bf16"), default="fp32", help=say("the weights' type"))
    p.add_argument(
        "--quant", choices=("f16", "q8_0", "q4_k_m"), default="f16", help=say("GGUF: the weights' type")
    )
    p.add_argument("--no-verify", action="store_true", help=say("skip the export's check"))
    p.add_argument("--endpoint", default="", help=say("Hugging Face's address (default: from the settings)"))
    p.add_argument("--runs-dir", type=Path)
    p.set_defaults(func=cmd_push)


def cmd_push(args: argparse.Namespace) -> int:
    """Export when given a run, then upload in one commit; the repository's address at the end."""
    from huggingface_hub.utils import disable_progress_bars

    from desktop.core.hub.uploads import push_source
    from desktop.core.results import publish

    disable_progress_bars()  # ours are the lines below
    source = push_source(args.to, args.endpoint)
    given = Path(args.run).expanduser()
    shown: dict[str, int] = {}

    def progress(words: Any, fraction: float, figures: Any) -> None:
        line, tenth = text(words), int(fraction * 10)
        if shown.get(line, -1) < tenth:
            shown[line] = tenth
            extra = (
                f" ({human_size(figures.done)} / {human_size(figures.total)})" if figures is not None else ""
            )
            print(f"[{fraction:4.0%}] {line}{extra}", file=sys.stderr)

    common = {"private": args.private, "replace": args.replace, "on_progress": progress}
    if given.suffix == ".gguf" and given.is_file():
        pushed = publish.publish(source, args.repo_id, publish.exported_parcel(given, "gguf"), **common)
    elif given.is_dir() and publish.is_export(given):
        fmt = "adapter" if (given / "adapter_config.json").is_file() else "folder"
        pushed = publish.publish(source, args.repo_id, publish.exported_parcel(given, fmt), **common)
    else:
        run = find_run(args.run, args.runs_dir)
        if run is None:
            raise InputError(
                say("No run folder {run} was found, nor an exported folder or GGUF file.", run=args.run),
                say("List runs with: finetune-studio-cli runs"),
            )
        quiet_libraries()
        from desktop.cli import text as cli_text

        pushed = publish.publish_run(
            run,
            args.repo_id,
            source,
            args.format,
            dtype=args.dtype,
            quant=args.quant,
            verify=not args.no_verify,
            language=cli_text.language,
            **common,
        )
    print(say("Published to {url}", url=pushed.url))
    print(text(publish.summary(pushed)))
    return EXIT_OK
