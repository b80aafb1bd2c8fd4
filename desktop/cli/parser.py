"""The command line's argument parser and :func:`main`, which runs a command and returns its exit code."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import traceback
from pathlib import Path

from desktop.cli import (
    check_commands,
    doctor_command,
    hub_commands,
    init_command,
    push_command,
    result_commands,
    runs_commands,
    serve_command,
    train_command,
)
from desktop.cli.common import EXIT_FAILED, EXIT_INPUT, EXIT_STOPPED
from desktop.cli.text import say, set_language, text
from desktop.core.system.errors import InputError, StudioError, disk_error
from desktop.core.system.secrets import redact


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")  # Chinese text on a legacy Windows console
    argv = set_language(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    from desktop.core.system.data_location import use_moved_model_cache

    use_moved_model_cache()  # before the hub libraries read HF_HOME
    hub_commands.apply_hub_options(args)
    from desktop.core.system.instance import InstanceMark

    # A run or an export uses the runtime's PyTorch: the repair and the launcher wait for it.
    uses_torch = args.command in ("train", "export", "push", "preview", "validate", "serve")
    mark = InstanceMark("cli").acquire() if uses_torch else None
    try:
        code = args.func(args)
        sys.stdout.flush()  # into a pipe, the output waits in a buffer until here: a closed pipe is said now
        return code
    except KeyboardInterrupt:
        stopped = (
            say("Stopped at once. A run can resume from its last checkpoint with --resume.")
            if args.command == "train"
            else say("Stopped. Nothing was changed.")
            if args.command in ("validate", "preview", "doctor", "search", "list")
            else say("Stopped.")
        )
        print("\n" + stopped, file=sys.stderr)
        return EXIT_STOPPED
    except BrokenPipeError:  # `evaluate RUN | head`: the reader has what it wanted, nothing failed
        with contextlib.suppress(OSError, ValueError):  # Python's own flush at exit must not fail again
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except InputError as exc:
        _error(exc)
        return EXIT_INPUT
    except StudioError as exc:
        _error(exc)
        return EXIT_FAILED
    except OSError as exc:
        found = disk_error(exc)
        if found is None:
            reason = exc.strerror or str(exc)
            found = StudioError(
                say("A file could not be read or written: {error} ({file}).", error=reason, file=exc.filename)
                if exc.filename
                else say("A file could not be read or written: {error}.", error=reason),
                say("Check that the path exists and that you may write there, then try again."),
            )
        _error(found)
        return EXIT_INPUT
    except Exception as exc:  # never a raw traceback: one sentence, details in a file
        log = _save_traceback()
        _error(
            StudioError(
                say(
                    "Finetune Studio stopped with an unexpected error: {error}",
                    error=f"{type(exc).__name__}: {redact(str(exc))}",
                ),
                say(
                    "The details are in {file}; please attach that file when you report the problem.",
                    file=log,
                ),
            )
        )
        return EXIT_FAILED
    finally:
        if mark is not None:
            mark.release()


def _error(exc: StudioError) -> None:
    """``error: message`` and its hint on stderr, secrets redacted."""
    print(say("error: {message}", message=redact(text(exc.message))), file=sys.stderr)
    hint = getattr(exc, "cli_hint", None) or exc.hint  # the app's words name its settings, these flags
    if hint:
        print(f"  {redact(text(hint))}", file=sys.stderr)


def _save_traceback() -> Path | str:
    """Write the current exception's traceback to the app's log folder; where it went."""
    from desktop.core.system.paths import data_dir

    text = redact(traceback.format_exc())
    try:
        folder = data_dir() / "logs"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "cli-error.log"
        path.write_text(text, encoding="utf-8")
        return path
    except OSError:
        import tempfile

        with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False, encoding="utf-8") as fh:
            fh.write(text)
        return fh.name


def build_parser() -> argparse.ArgumentParser:
    """``finetune-studio-cli`` and its commands, in the order ``--help`` lists them."""
    parser = argparse.ArgumentParser(
        prog="finetune-studio-cli", description=say("Fine-tune Hugging Face models from a run config.")
    )
    parser.add_argument(
        "--lang",
        choices=("en", "zh_CN", "zh_TW"),
        help=say("the language of messages (default: the system's)"),
    )
    sub = parser.add_subparsers(dest="command", required=True)
    hub = hub_commands.hub_options()

    init_command.add_parsers(sub, hub)
    train_command.add_parsers(sub, hub)
    check_commands.add_parsers(sub, hub)
    result_commands.add_parsers(sub)
    push_command.add_parsers(sub)
    serve_command.add_parsers(sub)
    doctor_command.add_parsers(sub)
    doctor_command.add_move_parser(sub)
    runs_commands.add_parsers(sub, hub)
    hub_commands.add_parsers(sub)
    return parser
