"""``train``: run a config with a progress bar; ``--resume`` continues a stopped run, Ctrl-C stops it."""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop.cli.common import add_overrides, load_run_config, quiet_libraries
from desktop.cli.hub_commands import ensure_downloaded
from desktop.cli.run_console import RunConsole
from desktop.cli.text import say, text
from desktop.core.settings.config import RunConfig
from desktop.core.system.errors import ConfigError, InputError
from desktop.core.system.events import FailedEvent
from desktop.core.system.secrets import shell_join

if TYPE_CHECKING:
    from desktop.core.runs.folders import RunDir
    from desktop.core.system.events import RunResult


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
    from desktop.core.runs.folders import RunBusyError, RunDir, damaged_run_of, find_resumable
    from desktop.core.system.paths import default_runs_dir
    from desktop.core.training.run import run_training

    config = load_run_config(args)
    _apply_launch(config, args)
    origin = args.config.resolve()
    resume = None
    if args.resume:
        runs_dir = Path(config.output.runs_dir) if config.output.runs_dir else default_runs_dir()
        own = RunDir(origin.parent)
        if own.is_run() and origin.name == own.config_path.name:
            if own.is_locked():
                raise RunBusyError.of(own)
            if not own.resumable() and own.damaged_checkpoints() and own.latest_checkpoint() is None:
                raise _every_checkpoint_damaged(own)
            if not own.resumable():
                raise InputError(
                    say(
                        "The run {run} cannot be resumed: it is {status} and has no checkpoint.",
                        run=own.path.name,
                        status=own.status(),
                    )
                    if own.latest_checkpoint() is None
                    else say(
                        "The run {run} cannot be resumed: it is {status} and not stopped.",
                        run=own.path.name,
                        status=own.status(),
                    ),
                    say("Start a new run from this config without --resume."),
                )
            resume = own
        else:
            resume = find_resumable(runs_dir, config, origin)
        if resume is None and (damaged := damaged_run_of(runs_dir, origin)) is not None:
            raise _every_checkpoint_damaged(damaged)
        if resume is None:
            raise InputError(
                say(
                    "No stopped or interrupted run of {config} with a checkpoint was found in {folder}.",
                    config=args.config,
                    folder=runs_dir,
                ),
                say("Start it without --resume, or pass the config.toml inside the run folder to resume."),
            )
        if args.new_data:
            from desktop.core.runs.data_record import accept_new_data

            accept_new_data(resume.path)  # the label set is still checked
    ensure_downloaded(config)  # its own step, with a progress bar
    quiet_libraries()
    from desktop.core.system.stopping import GracefulStop

    stop = threading.Event()
    console = RunConsole()
    graceful = GracefulStop(stop, lambda reason: console.write(_stop_line(reason)))
    from desktop.core.system.awake import KeepAwake

    awake = KeepAwake()
    if not args.allow_sleep and not awake.acquire() and KeepAwake.supported():
        console.write(say("note: this computer could not be kept awake; if it sleeps, the run stops there."))
    try:
        with graceful:
            if config.launch.child:
                result = _train_in_child(config, console, stop, resume, origin)
            else:
                result = run_training(config, console, stop, resume=resume, origin=origin)
    finally:
        awake.release()
        console.close()
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
    """``--separate-process``, ``--num-processes``, ``--gpus`` and ``--strategy`` over [launch]."""
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
    problems = [p for p in config.validate() if p.field.startswith("launch.")]
    if problems:
        raise ConfigError(problems)


def _train_in_child(
    config: RunConfig, console: RunConsole, stop: threading.Event, resume: Any, origin: Path
) -> RunResult:
    """The run in a child process; a second Ctrl-C ends its process tree at once."""
    from desktop.core.environment.gpu import detect_gpus
    from desktop.core.training.supervisor import ChildRun

    hard_stop = threading.Event()
    child = ChildRun(config, console, resume=resume, origin=origin, gpus=len(detect_gpus().nvidia) or None)
    outcome: list[RunResult] = []
    thread = threading.Thread(target=lambda: outcome.append(child.run(stop, hard_stop)), daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            thread.join(0.2)  # short waits, so Ctrl-C reaches this thread
    except KeyboardInterrupt:
        console.write(say("Ending the training process now; the run keeps its last checkpoint."))
        hard_stop.set()
        thread.join()
    return outcome[0]


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


def _every_checkpoint_damaged(run: RunDir) -> InputError:
    """The refusal of a resume whose run has checkpoints, none of them usable: each named."""
    return InputError(
        say(
            "The run {run} cannot be resumed: none of its checkpoints can be loaded: {damaged}.",
            run=run.path.name,
            damaged=", ".join(run.damaged_checkpoints()),
        ),
        say(
            "Start a new run from this config without --resume. The damaged checkpoints are kept in {folder} "
            "for a look; delete them to free the space.",
            folder=run.checkpoints_dir,
        ),
    )
