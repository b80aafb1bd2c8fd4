"""``validate`` and ``preview``: check a config and its data as training would, and show rows and tokens."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from desktop.cli.common import EXIT_OK, load_run_config, quiet_libraries, shorten
from desktop.cli.text import say, text


def add_parsers(sub: Any, hub: argparse.ArgumentParser) -> None:
    """The ``validate`` and ``preview`` commands; ``hub`` holds ``--source`` and ``--endpoint``."""
    p = sub.add_parser("validate", parents=[hub], help=say("check a config and its data without training"))
    p.add_argument("config", type=Path)
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser(
        "preview", parents=[hub], help=say("show rows, column mapping and token-length statistics")
    )
    p.add_argument("config", type=Path)
    p.add_argument("--rows", type=int, default=5)
    p.add_argument("--no-tokens", action="store_true", help=say("skip token statistics (no model download)"))
    p.set_defaults(func=cmd_preview)


def cmd_validate(args: argparse.Namespace) -> int:
    """Check the config, the model folder and the data as training would; OK means training accepts them."""
    from desktop.core.data.model_checks import model_folder
    from desktop.core.data.preview import preview
    from desktop.core.hub.access import complete

    config = load_run_config(args)
    tokenizer = None
    if complete(model_folder(config)):  # on this computer (not just its config): check the tokenizer too
        tokenizer = _tokenizer_loader(config)
    result = preview(config, num_rows=0, load_tokenizer=tokenizer)
    print(
        say(
            "{config}: OK. {train} training rows, {eval} for evaluation.",
            config=args.config,
            train=result.num_train,
            eval=result.num_eval,
        )
    )
    for note in result.notes:
        print(say("note: {note}", note=text(note)))
    return EXIT_OK


def cmd_preview(args: argparse.Namespace) -> int:
    """Show the first rows and the column mapping at once, then check every row and show the counts,
    notes and token statistics."""
    from desktop.core.data.preview import preview, preview_head

    config = load_run_config(args)
    head = preview_head(config, num_rows=args.rows)  # a moment, however large the file
    if head is not None:
        _print_rows(head)
        print(say("Checking every row…"), file=sys.stderr, flush=True)
    tokenizer = None if args.no_tokens else _tokenizer_loader(config)
    result = preview(config, num_rows=args.rows, load_tokenizer=tokenizer)
    if head is None or head.guess.columns != result.guess.columns:
        _print_rows(result)
    print(
        say(
            "{train} training rows, {eval} for evaluation. Columns: {columns}",
            train=result.num_train,
            eval=result.num_eval,
            columns=", ".join(result.columns),
        )
    )
    for name, s in result.token_stats.items():
        print(
            say(
                "Tokens ({name}): min {min}, median {median}, p95 {p95}, max {max}; "
                "{over} of {count} longer than max_length {limit}",
                name=name,
                min=s.min,
                median=s.median,
                p95=s.p95,
                max=s.max,
                over=s.over_limit,
                count=s.count,
                limit=config.training.max_length,
            )
        )
    for note in result.notes:
        print(say("note: {note}", note=text(note)))
    if config.task == "grpo":
        _print_rewards(config, result)
    return EXIT_OK


def _print_rewards(config: Any, result: Any) -> None:
    """What each reward gives the first rows' reference answers, and a wrong one."""
    from desktop.core.data.rewards import describe
    from desktop.core.data.rewards import preview as rewards_preview

    columns = result.guess.columns
    rows = [(r.get(columns.prompt), r.get(columns.answer, "")) for r in result.rows] if columns.answer else []
    shown = rewards_preview(config.grpo, rows)
    if not shown:
        print(say("Rewards: no row has a reference answer to try them on."))
        return
    print(say("Rewards on the first rows (the reference answer, then a wrong one):"))
    for row in shown:
        right = ", ".join(f"{text(describe(k))} {v:g}" for k, v in row.right.items() if v is not None)
        wrong = ", ".join(f"{text(describe(k))} {v:g}" for k, v in row.wrong.items() if v is not None)
        print(f"  {row.reference!r}: {right}   |   {row.wrong_answer!r}: {wrong}")


def _tokenizer_loader(config: Any) -> Any:
    """Loads the model's tokenizer when called (after the data is checked, see ``preview``)."""

    def load() -> Any:
        quiet_libraries()
        from desktop.core.hub.models import load_tokenizer

        return load_tokenizer(config.model)

    return load


def _print_rows(result: Any) -> None:
    """The column mapping and the first rows of a preview."""
    from desktop.core.data.columns import describe

    print(say("Column mapping:"))
    for line in describe(result.guess):
        print(f"  {text(line)}")
    mapped = list(result.guess.columns.mapped().values())
    print(say("First rows ({count}):", count=len(result.rows)))
    for i, row in enumerate(result.rows, 1):
        cells = "  |  ".join(f"{c}: {shorten(row.get(c))}" for c in mapped)
        print(f"  {i}. {cells}", flush=True)
