"""``train``: run a config with a progress bar; ``--resume`` continues a stopped run, Ctrl-C stops it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from desktop.cli.common import add_overrides, load_run_config, quiet_libraries
from desktop.cli.run_console import RunConsole
from desktop.cli.text import say, text
from desktop.core.settings.config import RunConfig
from desktop.core.system.events import FailedEvent
from desktop.core.system.secrets import shell_join


def add_parsers(sub: Any, hub: argparse.ArgumentParser) -> None:
    """The ``train`` command; ``hub`` holds ``--source`` and ``--endpoint``."""
    p = sub.add_parser("train", parents=[hub], help=say("train as the config says"))
    p.add_argument("config", type=Path)
    add_overrides(p)
    p.add_argument("--runs-dir", type=Path, help=say("folder for run folders"))
    p.add_argument(
        "--resume", action="store_true", help=say("continue the latest stopped run of this config")
    )
    p.add_argument(
        "--new-data",
        action="store_true",
        help=say("with --resume: go on although the data changed since the run started (same classes)"),
    )
    p.add_argument(
        "--separate-process",
        action="store_true",
        help=say("train in a child process: a second Ctrl-C ends it at once, keeping the last checkpoint"),
    )
    p.add_argument(
        "--num-processes",
        type=int,
        metavar="N",
        help=say(
            "train with N processes, one per GPU, through accelerate launch (2 CPU processes without a GPU)"
        ),
    )
    p.add_argument("--gpus", metavar="IDS", help=say('the GPUs to use, e.g. "0,1"'))
    p.add_argument(
        "--allow-sleep",
        action="store_true",
        help=say("let the computer go to sleep during the run (by default it is kept awake)"),
    )
    p.add_argument(
        "--strategy",
        choices=("ddp", "fsdp", "deepspeed-zero2", "deepspeed-zero3"),
        help=say("how several GPUs share the work (default: the config's, else ddp)"),
    )
    p.set_defaults(func=cmd_train)


def cmd_train(args: argparse.Namespace) -> int:
    """Train, showing progress; Ctrl-C stops after the current step and keeps a checkpoint."""
    from desktop.core.system.stopping import GracefulStop
    from desktop.core.training.session import RunRequest, RunSession

    config = load_run_config(args, validate=False)  # the session validates it, once
    _apply_launch(config, args)
    console = RunConsole()
    request = RunRequest(
        config,
        resume_latest=args.resume,
        origin=args.config,
        accept_new_data=args.resume and args.new_data,
        keep_awake=not args.allow_sleep,
    )
    session = RunSession(request, console)
    session.prepare()  # a bad config or no run to resume: refused before anything is shown
    stop = session.stop_event

    def on_request(reason: str) -> None:
        console.write(_download_stop_line() if session.stage == "download" else _stop_line(reason))

    graceful = GracefulStop(stop, on_request)
    quiet_libraries()
    try:
        with graceful:
            result = session.run()
    except KeyboardInterrupt:
        if session.stage != "download":
            raise  # "Stopped at once", said by main
        console.close()
        print("\n" + _stopped_download(), file=sys.stderr)
        return graceful.exit_code
    finally:
        console.close()
    if session.stopped_in_download:
        print(_stopped_download(), file=sys.stderr)
        return graceful.exit_code
    for note in result.notes:
        print(say("note: {note}", note=text(note)), file=sys.stderr)
    if result.status == "finished":
        metrics = "  ".join(f"{k} {v:.4g}" for k, v in result.metrics.items())
        print(say("Finished. Model saved in {folder}", folder=result.model_dir))
        print(f"  {metrics}")
    elif result.status == "stopped":
        if result.run_dir:
            print(say("Stopped. The run folder is {folder}.", folder=result.run_dir))
            command = shell_join(
                ["finetune-studio-cli", "train", str(Path(result.run_dir) / "config.toml"), "--resume"]
            )
            print("  " + say("Continue with: {command}", command=command))
        else:
            print(say("Stopped before training began; no run folder was kept."))
        return graceful.exit_code
    else:
        _print_failure(result.failure, result.run_dir)
    return result.exit_code


def _apply_launch(config: RunConfig, args: argparse.Namespace) -> None:
    """``--separate-process``, ``--num-processes``, ``--gpus`` and ``--strategy`` over [launch] (checked
    with the rest of the config by the run session)."""
    launch = config.launch
    if args.separate_process:
        launch.separate_process = True
    if args.num_processes is not None:
        launch.num_processes = args.num_processes
    if args.gpus is not None:
        launch.gpu_ids = args.gpus.replace(" ", "")
        if args.num_processes is None:
            launch.num_processes = len([i for i in launch.gpu_ids.split(",") if i])
    if args.strategy:
        launch.strategy = args.strategy


def _print_failure(failure: FailedEvent | None, run_dir: Path | None) -> None:
    if failure is None:
        return
    print(say("error: {message}", message=text(failure.reason)), file=sys.stderr)
    if failure.remedy:
        print(f"  {text(failure.remedy)}", file=sys.stderr)
    if run_dir:
        print("  " + say("Details: {file}", file=Path(run_dir) / "train.log"), file=sys.stderr)


def _stop_line(reason: str) -> str:
    """What the console says when asked to stop, by what asked."""
    if reason == "SIGTERM":
        return say("Asked to end (SIGTERM): stopping after this step and saving a checkpoint...")
    if reason == "SIGBREAK":
        return say("Ctrl-Break: stopping after this step and saving a checkpoint...")
    if reason == "CONSOLE_CLOSE":
        return say("The console is closing: stopping after this step and saving a checkpoint...")
    return say("Stopping after this step and saving a checkpoint (Ctrl-C again to quit at once)...")


def _download_stop_line() -> str:
    return say("Stopping the download; what arrived is kept (Ctrl-C again to quit at once)...")


def _stopped_download() -> str:
    return say("Download stopped. Run the same command again to resume where it stopped.")
