"""The command line's argument parser and :func:`main`, which runs a command and returns its exit code."""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from desktop.cli import (
    check_commands,
    doctor_command,
    hub_commands,
    init_command,
    result_commands,
    train_command,
)
from desktop.cli.common import (
    EXIT_FAILED,
    EXIT_INPUT,
    EXIT_OK,
    EXIT_STOPPED,
    add_overrides,
    load_run_config,
    shorten,
)
from desktop.cli.text import say, set_language, text
from desktop.core.system.errors import InputError, StudioError, disk_error
from desktop.core.system.secrets import redact, shell_join

if TYPE_CHECKING:
    pass


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")  # Chinese text on a legacy Windows console
    argv = set_language(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    hub_commands.apply_hub_options(args)
    from desktop.core.system.instance import InstanceMark

    # A run or an export uses the runtime's PyTorch: the repair and the launcher wait for it.
    uses_torch = args.command in ("train", "export", "preview", "validate")
    mark = InstanceMark("cli").acquire() if uses_torch else None
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print(
            "\n" + say("Stopped at once. A run can resume from its last checkpoint with --resume."),
            file=sys.stderr,
        )
        return EXIT_STOPPED
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
    print(say("error: {message}", message=redact(text(exc.message))), file=sys.stderr)
    if exc.hint:
        print(f"  {redact(text(exc.hint))}", file=sys.stderr)


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


def _parser() -> argparse.ArgumentParser:
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
    doctor_command.add_parsers(sub)

    p = sub.add_parser("runs", help=say("list run folders"))
    p.add_argument("--runs-dir", type=Path)
    p.add_argument(
        "--import",
        dest="import_run",
        type=Path,
        metavar="FOLDER",
        help=say("copy a run folder from elsewhere (a cluster job's runs/...) into the runs folder"),
    )
    p.set_defaults(func=cmd_runs)

    p = sub.add_parser("job", help=say("write a run as a job for another machine or a Slurm cluster"))
    job = p.add_subparsers(dest="job_command", required=True)
    p = job.add_parser(
        "export",
        parents=[hub],
        help=say("a self-contained folder: config, data, Accelerate config, launch.sh, job.sbatch"),
    )
    p.add_argument("config", type=Path)
    p.add_argument("dest", type=Path, help=say("a new folder for the job"))
    p.add_argument(
        "--num-processes", type=int, metavar="N", help=say("GPUs per machine (default: the config's)")
    )
    p.add_argument(
        "--nodes", type=int, default=1, metavar="M", help=say("machines for the Slurm script (default: 1)")
    )
    add_overrides(p)
    p.set_defaults(func=cmd_job_export)

    hub_commands.add_parsers(sub)
    return parser


def cmd_job_export(args: argparse.Namespace) -> int:
    """Write a run config as a job folder: launch.sh for one machine, job.sbatch for Slurm."""
    from desktop.core.training.jobs import export_job

    config = load_run_config(args)
    folder = export_job(config, args.dest, num_processes=args.num_processes, nodes=args.nodes)
    print(say("Job written to {folder}.", folder=folder))
    print("  " + say("One machine: {command}", command=shell_join([str(folder / "launch.sh")])))
    print("  " + say("Slurm: cd {folder} && sbatch job.sbatch", folder=shell_join([str(folder)])))
    print(
        "  "
        + say(
            "The run folder ends up in {folder}; import it with: finetune-studio-cli runs --import FOLDER",
            folder=folder / "runs",
        )
    )
    return EXIT_OK


def cmd_runs(args: argparse.Namespace) -> int:
    """List run folders, newest first."""
    from desktop.core.runs.folders import list_runs
    from desktop.core.system.paths import default_runs_dir

    runs_dir = args.runs_dir or default_runs_dir()
    if args.import_run is not None:
        from desktop.core.runs.folders import import_run

        imported = import_run(args.import_run, runs_dir)
        print(say("Imported as {folder}.", folder=imported.path))
    runs = list_runs(runs_dir)
    if not runs:
        print(say("No runs in {folder}.", folder=runs_dir))
        return EXIT_OK
    words = {
        "finished": say("finished"),
        "stopped": say("stopped"),
        "failed": say("failed"),
        "running": say("running"),
        "interrupted": say("crashed"),
        "damaged": say("damaged"),
    }
    for info in runs:
        best = f"{info.best[0]} {info.best[1]:.4g}" if info.best else "-"
        flag = "  " + say("(resumable)") if info.resumable else ""
        print(
            f"{info.name:<45} {words.get(info.status, info.status):<9} {info.task:<15} {best:<18} "
            f"{shorten(info.model, 30):<30} {shorten(info.dataset, 30)}{flag}"
        )
    return EXIT_OK
