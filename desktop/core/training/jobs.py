"""A run as a self-contained job folder for another machine or a cluster.

The folder holds everything the run needs besides Python and a GPU: the run config with its data
(and a local model) copied in beside it, Accelerate's config, ``launch.sh`` (one machine, N GPUs),
``job.sbatch`` (Slurm, M machines: each runs ``accelerate launch``, which rendezvouses through
torchrun), the worker's code, the exact versions of the current runtime, and a README. The run
folder ends up in ``runs/`` inside it; Run history imports it back.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import stat
from dataclasses import replace
from pathlib import Path

from desktop.core.settings.config import RunConfig
from desktop.core.system.errors import InputError
from desktop.core.system.messages import msg

GUI_ONLY = {"pyside6-essentials", "pyside6", "pyqtgraph", "uv", "keyring", "shiboken6"}
"""Packages the app needs for its windows and the PyTorch repair, not for a run."""
FALLBACK_ROOTS = [
    *("torch", "transformers", "datasets", "accelerate", "peft", "tokenizers", "safetensors", "pandas"),
    *("pyarrow", "openpyxl", "charset-normalizer", "tomlkit", "psutil", "filelock", "platformdirs"),
    "huggingface-hub",
]


def export_job(config: RunConfig, dest: Path, *, num_processes: int | None = None, nodes: int = 1) -> Path:
    """Write the job folder ``dest`` for ``config``; returns it.

    Args:
        config: The run config (its data paths absolute, as a loaded config has them).
        dest: A new (or empty) folder.
        num_processes: Processes (GPUs) per machine; the config's by default.
        nodes: Machines for the Slurm script.

    Raises:
        InputError: ``dest`` holds files already, or a data file is missing.
    """
    if nodes < 1:
        raise InputError(msg("The number of machines must be 1 or more."), msg("Pass --nodes 1 or more."))
    per_node = num_processes if num_processes is not None else config.launch.num_processes
    if per_node < 1:
        raise InputError(
            msg("The number of processes must be 1 or more."), msg("Pass --num-processes 1 or more.")
        )
    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise InputError(
            msg("{folder} exists and is not empty.", folder=str(dest)),
            msg("Choose a new folder for the job."),
        )
    partial = dest.with_name(dest.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    try:
        _write(config, partial, per_node, nodes)
        if dest.exists():
            dest.rmdir()  # empty, checked above
        os.replace(partial, dest)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)  # no half-written job is left behind
        raise
    return dest


def job_folder_name(config: RunConfig, parent: Path) -> str:
    """A new folder name in ``parent`` for the job of ``config``: ``<name>-job``, numbered if taken."""
    from desktop.core.runs.folders import default_name, slug

    base = slug(config.output.name or default_name(config)) + "-job"
    name = base
    for n in range(2, 1000):
        if not (parent / name).exists():
            break
        name = f"{base}-{n}"
    return name


def _write(config: RunConfig, folder: Path, per_node: int, nodes: int) -> None:
    from desktop.core.training.launch import accelerate_settings, write_accelerate_config

    job = replace(config)
    job.data = replace(config.data, files=_copy_files(config.data.files, folder / "data", "data"))
    job.validation = replace(
        config.validation, files=_copy_files(config.validation.files, folder / "data", "data")
    )
    job.model = replace(config.model)
    model = Path(config.model.name)
    if config.model.name.startswith("bundled:"):  # its package is on this computer only: the folder goes
        from desktop.core.hub.models import resolve

        model = Path(resolve(config.model))
    if config.model.name and model.is_dir():
        shutil.copytree(model, folder / "model", ignore=shutil.ignore_patterns(".cache", "__pycache__"))
        job.model.name = "model"
    job.output = replace(config.output, runs_dir="runs")
    job.launch = replace(config.launch, num_processes=per_node, separate_process=False)
    job.save(folder / "run.toml", comments=True)
    write_accelerate_config(folder / "accelerate.yaml", accelerate_settings(job.launch))
    for name in ("run.toml", "accelerate.yaml"):
        (folder / name).chmod(0o644)  # read by the cluster's nodes, maybe under another account
    _copy_app(folder / "app")
    (folder / "requirements.txt").write_text(requirements(), encoding="utf-8", newline="\n")
    _script(folder / "launch.sh", _launch_sh(per_node))
    _script(folder / "job.sbatch", _sbatch(per_node, nodes, config))
    readme = _readme(job, per_node, nodes, config.model.name)
    (folder / "README.md").write_text(readme, encoding="utf-8", newline="\n")


def _copy_files(files: list[str], target: Path, relative: str) -> list[str]:
    copied = []
    for index, name in enumerate(files):
        source = Path(name)
        if not source.is_file():
            raise InputError(
                msg("The data file {file} was not found.", file=name),
                msg("Check the data on the Model and data page, then export the job again."),
            )
        target.mkdir(parents=True, exist_ok=True)
        base = source.name if not (target / source.name).exists() else f"{index}-{source.name}"
        shutil.copy2(source, target / base)
        copied.append(f"{relative}/{base}")
    return copied


def _copy_app(target: Path) -> None:
    """The worker's code: the ``desktop`` package without its windows (Python files only)."""
    package = Path(__file__).resolve().parents[2]
    shutil.copytree(
        package,
        target / "desktop",
        ignore=lambda folder, names: [
            n
            for n in names
            if n in ("gui", "launcher", "__pycache__", "app.py", "__main__.py", "shared_ui.py")
            or (Path(folder, n).is_file() and not n.endswith(".py"))
        ],
    )


def requirements() -> str:
    """The versions of this runtime that a run uses, pinned (``pip install -r`` on the other machine)."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    try:
        declared = [Requirement(r) for r in importlib.metadata.requires("finetune-studio") or []]
        roots = [r.name for r in declared if r.marker is None or r.marker.evaluate({"extra": ""})]
    except importlib.metadata.PackageNotFoundError:
        roots = list(FALLBACK_ROOTS)
    seen: dict[str, str] = {}
    todo = [canonicalize_name(r) for r in roots if canonicalize_name(r) not in GUI_ONLY]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        seen[name] = dist.version
        for line in dist.requires or []:
            try:
                req = Requirement(line)
            except InvalidRequirement:
                continue
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(canonicalize_name(req.name))
    lines = [
        "# The packages of the Finetune Studio runtime this job was exported from, pinned.",
        "# pip install -r requirements.txt   (in a fresh virtual environment)",
    ]
    for name in sorted(seen):
        version = seen[name]
        public = re.sub(r"\+.*$", "", version)
        if name == "torch":
            lines.append(
                f"# torch was {version} here; on a Linux GPU machine pip installs its CUDA build. "
                "For another CUDA version add --index-url https://download.pytorch.org/whl/cuXXX"
            )
        lines.append(f"{name}=={public}")
    return "\n".join(lines) + "\n"


def _script(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8", newline="\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def _launch_sh(per_node: int) -> str:
    return f"""#!/usr/bin/env bash
# Train this job on one machine with {per_node} process(es), one per GPU
# (CPU processes where there is no GPU).
#   ./launch.sh                         train
#   ./launch.sh --resume runs/FOLDER    continue a stopped or interrupted run from its last checkpoint
#   PYTHON=/path/to/python ./launch.sh  use another interpreter (one with requirements.txt installed)
set -euo pipefail
cd "$(dirname "$0")"
PYTHON="${{PYTHON:-python3}}"
export PYTHONPATH="$PWD/app${{PYTHONPATH:+:$PYTHONPATH}}"
export PYTHONUTF8=1
exec "$PYTHON" -m accelerate.commands.launch --config_file accelerate.yaml \\
    -m desktop.worker run.toml "$@"
"""


def _sbatch(per_node: int, nodes: int, config: RunConfig) -> str:
    name = re.sub(r"[^\w.-]+", "-", config.output.name or "finetune-studio")[:40]
    return f"""#!/usr/bin/env bash
# Slurm: {nodes} machine(s) x {per_node} GPU(s). Submit from this folder: sbatch job.sbatch
# Each machine runs one `accelerate launch`, which starts {per_node} worker(s) and meets the others
# at the first machine (torchrun's rendezvous on MAIN_PORT). Adjust the partition and time to your cluster.
#SBATCH --job-name={name}
#SBATCH --nodes={nodes}
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node={per_node}
#SBATCH --cpus-per-task={max(4, 4 * per_node)}
#SBATCH --time=24:00:00
#SBATCH --output=slurm-%j.out
set -euo pipefail
# Slurm runs a copy of this script from its spool folder: the job folder is where the submitted
# script lies, wherever `sbatch` was typed.
SUBMITTED=$(scontrol show job "$SLURM_JOB_ID" 2>/dev/null | sed -n 's/^ *Command=\\([^ ]*\\).*/\\1/p' || true)
case "$SUBMITTED" in
    "") cd "$SLURM_SUBMIT_DIR" ;;
    /*) cd "$(dirname "$SUBMITTED")" ;;
    *) cd "$SLURM_SUBMIT_DIR/$(dirname "$SUBMITTED")" ;;
esac
PYTHON="${{PYTHON:-python3}}"
export PYTHONPATH="$PWD/app${{PYTHONPATH:+:$PYTHONPATH}}"
export PYTHONUTF8=1
# sed reads every line: `head` would stop early and, under pipefail, fail the job with SIGPIPE.
MAIN_HOST=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | sed -n 1p)
# A port of this job's own: two jobs on one node must not meet at the same rendezvous.
MAIN_PORT=${{MAIN_PORT:-$(( 20000 + SLURM_JOB_ID % 20000 ))}}
srun --kill-on-bad-exit=1 bash -c '
exec "'"$PYTHON"'" -m accelerate.commands.launch --config_file accelerate.yaml \\
    --num_machines "$SLURM_NNODES" --num_processes $(( SLURM_NNODES * {per_node} )) \\
    --machine_rank "$SLURM_NODEID" --main_process_ip "'"$MAIN_HOST"'" --main_process_port "'"$MAIN_PORT"'" \\
    --rdzv_backend static --same_network \\
    -m desktop.worker run.toml "$@"
' bash "$@"
"""


def _readme(config: RunConfig, per_node: int, nodes: int, source: str) -> str:
    model = config.model.name
    model_line = (
        f"The model was copied into `model/` (from {source})."
        if model == "model"
        else f"The model `{model}` is downloaded from the hub on first use "
        "(set `HF_TOKEN` for a private one)."
    )
    return f"""# Finetune Studio job

Task: {config.task}. {model_line} The data is in `data/`.

## Run it
1. On the machine(s) with the GPUs, make a Python environment and install the runtime:
   `python3 -m venv .venv && . .venv/bin/activate && pip install -r requirements.txt`
   (PyTorch: pick the build for the machine's CUDA, see the comment in `requirements.txt`).
2. One machine, {per_node} GPU(s): `./launch.sh`
3. A Slurm cluster, {nodes} machine(s) x {per_node} GPU(s): `sbatch job.sbatch`
   (set the partition and the time in it).

To continue a stopped or interrupted run from its last checkpoint: `./launch.sh --resume runs/FOLDER`
(with Slurm: `sbatch job.sbatch --resume runs/FOLDER`).

## Where the run ends up
In `runs/<date>-<name>/`: `events.jsonl` (every step, as the app records it), `train.log`, `checkpoints/`,
and `model/` when it finishes. Copy that folder back and import it in the app (Run history > Import run)
to see its curves beside your other runs, export the model, or try it.

## What is here
- `run.toml`: the run config (relative paths are read from this folder).
- `accelerate.yaml`: Accelerate's config (`{config.launch.strategy}`, {per_node} process(es) per machine).
- `launch.sh`, `job.sbatch`: the launch scripts. The first process prints the run's events as JSON
  lines on its output.
- `app/`: the code of the Finetune Studio worker (`python -m desktop.worker`).
- `requirements.txt`: the exact package versions of the runtime this job was exported from.
"""
