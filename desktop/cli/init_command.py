"""``init``: write a complete, commented run config for a task, a model and data, columns guessed."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path
from typing import Any

from desktop.cli.common import EXIT_OK
from desktop.cli.hub_commands import ensure_downloaded
from desktop.cli.text import say, text
from desktop.core.settings.config import HUB_ID, METHODS, TASKS, Columns, RunConfig
from desktop.core.settings.config_sections import learning_rate_for
from desktop.core.system.errors import InputError
from desktop.core.system.secrets import shell_join


def add_parsers(sub: Any, hub: argparse.ArgumentParser) -> None:
    """The ``init`` command; ``hub`` holds ``--source`` and ``--endpoint``."""
    p = sub.add_parser(
        "init", parents=[hub], help=say("write a commented run config with the column mapping guessed")
    )
    p.add_argument("--task", required=True, choices=TASKS)
    p.add_argument(
        "--method",
        choices=METHODS,
        help=say("preference tuning: dpo (default) or orpo (no reference model: less memory)"),
    )
    p.add_argument(
        "--model", required=True, help=say("hub id, local model folder, or bundled:all-minilm-l6-v2")
    )
    p.add_argument("--data", required=True, nargs="+", help=say("local data files or a hub dataset id"))
    p.add_argument("-o", "--output", default="run.toml", help=say("config file to write (default: run.toml)"))
    p.add_argument("--force", action="store_true", help=say("overwrite an existing config file"))
    p.set_defaults(func=cmd_init)


def cmd_init(args: argparse.Namespace) -> int:
    """Write a complete, commented config for a task, model and data."""
    from desktop.core.data.columns import check_rows, describe, guess_columns
    from desktop.core.data.hub_datasets import read_hub
    from desktop.core.data.local_files import read_files

    out = Path(args.output)
    if out.exists() and not args.force:
        raise InputError(
            say("{file} exists already.", file=out),
            say("Choose another name with -o, or add --force to overwrite it."),
        )
    if args.method and args.task != "preference":
        raise InputError(
            say("--method is for preference tuning; {task} runs have no method.", task=args.task),
            say("Leave --method out, or use --task preference."),
        )
    config = RunConfig(task=args.task)
    config.model.name = args.model
    if args.task == "preference":
        config.preference.method = args.method or "dpo"
    config.training.learning_rate = learning_rate_for(args.task, config.training.learning_rate)
    local = [d for d in args.data if Path(d).exists()]
    if len(args.data) == 1 and not local and HUB_ID.match(args.data[0]):
        config.data.hub_id = args.data[0]
        ensure_downloaded(config, model=False)  # the dataset, as its own step; a cached copy is used as is
        table = read_hub(config.data.hub_id, "", config.data.split)
    else:
        missing = [d for d in args.data if d not in local]
        if missing:
            raise InputError(
                say("The data file {file} does not exist.", file=missing[0]), say("Check the path.")
            )
        from desktop.core.settings.config_sections import IMAGE_TASKS

        table = read_files(args.data, pictures=args.task in IMAGE_TASKS)
        base = out.resolve().parent
        config.data.files = [_relative(Path(d).resolve(), base) for d in args.data]
    if Path(args.model).is_dir():
        from desktop.core.hub.search import remember_folder

        with contextlib.suppress(OSError):  # the app's model browser lists folders used before
            remember_folder(args.model)
    guess = guess_columns(table, args.task, Columns())
    config.columns = guess.columns
    check_rows(table, args.task, guess.columns, drop_bad_rows=True)
    if args.task == "grpo":  # how the answers compare, from what they look like
        from desktop.core.data.rewards import guess_check

        answers = table.column(guess.columns.answer) if guess.columns.answer else []
        config.grpo.answer_check, config.grpo.labels = guess_check(list(answers))
    problems = [p for p in config.validate() if not p.field.startswith("data")]  # paths as given here
    if Path(args.model).is_dir():  # then as the config is read: relative to its own folder
        config.model.name = _relative(Path(args.model).resolve(), out.resolve().parent)
    config.save(out, comments=True)
    print(say("Wrote {file}. Column mapping:", file=out))
    for line in describe(guess):
        print(f"  {text(line)}")
    for p in problems:
        print(
            "  " + say("warning: {field}: {problem}", field=p.field, problem=text(p.message)), file=sys.stderr
        )
    pasted = shell_join([str(out)])  # a path with spaces works when pasted
    print(
        say("Next: finetune-studio-cli preview {file}   then   finetune-studio-cli train {file}", file=pasted)
    )
    return EXIT_OK


def _relative(path: Path, base: Path) -> str:
    try:
        return Path(os.path.relpath(path, base)).as_posix()
    except ValueError:  # another drive on Windows
        return str(path)
