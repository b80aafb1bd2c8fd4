"""Child-process entry: ``python -m desktop.worker CONFIG`` prints each run event as a JSON line.

A supervisor stops the run gracefully by creating the ``--stop-file`` (what works through
``accelerate launch`` too, whose workers share no stdin), by writing ``stop`` on the worker's stdin,
or with SIGINT / SIGTERM; it keeps a checkpoint. Exit codes are the CLI's.

Started by ``accelerate launch`` (several GPUs, or a cluster job), every rank runs this; only rank 0
prints events (see :mod:`desktop.core.training.distributed`).
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

from desktop.core.settings.config import load_config
from desktop.core.system.errors import InputError
from desktop.core.system.events import Event, FailedEvent
from desktop.core.system.stopping import GracefulStop

STOP_POLL_S = 0.25


def _print(event: Event) -> None:
    sys.stdout.write(event.to_wire() + "\n")
    sys.stdout.flush()


def _watch_file(path: Path, stop: threading.Event) -> None:
    while not stop.wait(STOP_POLL_S):
        if path.exists():
            stop.set()


def _watch_stdin(stop: threading.Event) -> None:
    for line in sys.stdin:
        if line.strip() == "stop":
            stop.set()
            return


def main(argv: list[str] | None = None) -> int:
    """Run one config; returns the exit code."""
    from desktop.core.runs.folders import RunDir
    from desktop.core.training.run import run_training

    parser = argparse.ArgumentParser(prog="python -m desktop.worker")
    parser.add_argument("config", type=Path)
    parser.add_argument("--resume", type=Path, help="run folder to continue")
    parser.add_argument("--stop-file", type=Path, help="stop gracefully once this file exists")
    parser.add_argument("--origin", help="the config file the run comes from (default: CONFIG; empty: none)")
    args = parser.parse_args(argv)
    sys.stdout.reconfigure(encoding="utf-8")
    from desktop.core.training import distributed

    main_rank = distributed.world().main
    try:
        config = load_config(args.config)
    except InputError as exc:
        if main_rank:
            _print(FailedEvent(exc.message, exc.hint))
        return exc.exit_code
    if distributed.world().distributed:
        import torch

        distributed.start(cpu=not torch.cuda.is_available())
    stop = threading.Event()
    if args.stop_file is not None:
        threading.Thread(target=_watch_file, args=(args.stop_file, stop), daemon=True).start()
    if sys.stdin is not None and not sys.stdin.isatty() and not distributed.world().distributed:
        threading.Thread(target=_watch_stdin, args=(stop,), daemon=True).start()
    resume = RunDir(args.resume) if args.resume else None
    # A supervisor's signals stop gracefully; a second one is not a hard stop (it kills instead).
    with GracefulStop(stop, hard_second=False) as graceful:
        result = run_training(config, _print, stop, resume=resume, origin=_origin(args))
    if distributed.world().distributed:
        _leave_group()
    return graceful.exit_code if result.status == "stopped" and graceful.reason else result.exit_code


def _origin(args: argparse.Namespace) -> Path | None:
    """The config file the run comes from: the app's runs have none (their config is a temporary copy)."""
    if args.origin is None:
        return args.config.resolve()
    return Path(args.origin).resolve() if args.origin else None


def _leave_group() -> None:
    """End the process group cleanly (PyTorch warns about a leak otherwise)."""
    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
