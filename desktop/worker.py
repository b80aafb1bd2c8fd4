"""Child-process entry: ``python -m desktop.worker CONFIG`` prints each run event as a JSON line.

A supervisor stops the run gracefully by writing ``stop`` on the worker's stdin (or with
SIGINT / SIGTERM); it keeps a checkpoint. Exit codes are the CLI's.
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

from desktop.core.config import load_config
from desktop.core.errors import InputError
from desktop.core.events import Event, FailedEvent
from desktop.core.stopping import GracefulStop


def _print(event: Event) -> None:
    sys.stdout.write(event.to_json() + "\n")
    sys.stdout.flush()


def _watch_stdin(stop: threading.Event) -> None:
    for line in sys.stdin:
        if line.strip() == "stop":
            stop.set()
            return


def main(argv: list[str] | None = None) -> int:
    """Run one config; returns the exit code."""
    from desktop.core.runs import RunDir
    from desktop.core.training import run_training

    parser = argparse.ArgumentParser(prog="python -m desktop.worker")
    parser.add_argument("config", type=Path)
    parser.add_argument("--resume", type=Path, help="run folder to continue")
    args = parser.parse_args(argv)
    sys.stdout.reconfigure(encoding="utf-8")
    try:
        config = load_config(args.config)
    except InputError as exc:
        _print(FailedEvent(exc.message, exc.hint))
        return exc.exit_code
    stop = threading.Event()
    if sys.stdin is not None and not sys.stdin.isatty():
        threading.Thread(target=_watch_stdin, args=(stop,), daemon=True).start()
    resume = RunDir(args.resume) if args.resume else None
    # A supervisor's signals stop gracefully; a second one is not a hard stop (it kills instead).
    with GracefulStop(stop, hard_second=False) as graceful:
        result = run_training(config, _print, stop, resume=resume, origin=args.config.resolve())
    return graceful.exit_code if result.status == "stopped" and graceful.reason else result.exit_code


if __name__ == "__main__":
    sys.exit(main())
