"""``runs`` and ``job export``: list and import run folders; write a run as a job for a cluster."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop.cli.common import EXIT_OK, add_overrides, load_run_config, shorten
from desktop.cli.text import say
from desktop.core.system.secrets import shell_join

if TYPE_CHECKING:
    from desktop.core.runs.listing import RunInfo


def add_parsers(sub: Any, hub: argparse.ArgumentParser) -> None:
    """The ``runs`` and ``job export`` commands; ``hub`` holds ``--source`` and ``--endpoint``."""
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


def cmd_runs(args: argparse.Namespace) -> int:
    """List run folders, newest first."""
    from desktop.core.runs.listing import list_runs
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
        if info.status == "damaged" and info.problem:
            print("    " + damaged_advice(info))
    return EXIT_OK


def damaged_advice(info: RunInfo) -> str:
    """What is wrong with a damaged run, and what to do: resume it from its last good checkpoint."""
    if info.resumable:
        return say(
            "{problem}: resume it from its last good checkpoint with: "
            "finetune-studio-cli train {config} --resume",
            problem=info.problem,
            config=shell_join([str(info.path / "config.toml")]),
        )
    return say("{problem}: it has no checkpoint to resume from; train it again.", problem=info.problem)


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
