"""What the command modules share: exit codes, ``--set`` overrides, loading a config, quiet libraries."""

from __future__ import annotations

import argparse
import os
from typing import Any

from desktop.cli.text import say
from desktop.core.settings.config import RunConfig, load_config, with_overrides
from desktop.core.system.errors import ConfigError

EXIT_OK, EXIT_FAILED, EXIT_INPUT, EXIT_STOPPED = 0, 1, 2, 130


def add_overrides(parser: argparse.ArgumentParser) -> None:
    """``--set key=value`` (repeatable), as ``train`` and ``job export`` take it."""
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=say("override a config value, e.g. --set training.epochs=1 (repeatable)"),
    )


def load_run_config(args: argparse.Namespace, validate: bool = True) -> RunConfig:
    """The config ``args.config`` with ``--set`` and ``--runs-dir`` applied; ``ConfigError`` if invalid
    (unless ``validate`` is false: a run session checks it, once)."""
    config = load_config(args.config)
    if getattr(args, "overrides", None):
        # Relative paths in --set mean what they would mean in the file: from the file's folder.
        config = with_overrides(config, args.overrides, base_dir=args.config.resolve().parent)
    if getattr(args, "runs_dir", None):
        config.output.runs_dir = str(args.runs_dir.resolve())
    problems = config.validate() if validate else []
    if problems:
        raise ConfigError(problems)
    return config


def quiet_libraries() -> None:
    """Library warnings go to the run's train.log, not the terminal."""
    import logging

    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import transformers

    transformers.logging.disable_default_handler()
    # Python's warnings (a library's FutureWarning, peft's "is_gradient_checkpointing is deprecated")
    # through logging too, so they reach train.log and not the terminal.
    logging.captureWarnings(True)
    # Without a handler, Python's last-resort handler would print warnings anyway.
    for name in ("transformers", "trl", "py.warnings"):  # TRL's notes on the pairs go to train.log too
        logging.getLogger(name).addHandler(logging.NullHandler())
    transformers.logging.disable_progress_bar()


def shorten(value: Any, width: int = 60) -> str:
    """``value`` on one line, cut to ``width`` characters with an ellipsis."""
    text = str(value).replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"
