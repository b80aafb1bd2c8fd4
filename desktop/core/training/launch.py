"""How a run is started outside the app's process: the worker's command line and Accelerate's config.

One process: ``python -m desktop.worker CONFIG``. Several: ``python -m accelerate.commands.launch
--config_file accelerate.yaml -m desktop.worker CONFIG``, which starts one worker per GPU through
torchrun. The distribution itself is Accelerate's and PyTorch's; this module only writes their
settings.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

from desktop.core.settings.config import Launch
from desktop.core.system.errors import InputError
from desktop.core.system.messages import msg

DEFAULT_PORT = 29500


def worker_command(
    config_path: Path,
    launch: Launch,
    *,
    accelerate_config: Path | None = None,
    resume: Path | None = None,
    stop_file: Path | None = None,
    origin: Path | None = None,
    python: str | None = None,
    module: str = "desktop.worker",
) -> list[str]:
    """The argument list that runs ``config_path`` as ``launch`` says.

    Args:
        config_path: The run config the worker reads.
        launch: One process, or several through ``accelerate launch`` (then ``accelerate_config``
            is needed: see :func:`write_accelerate_config`).
        accelerate_config: Accelerate's config file for a multi-process run.
        resume: The run folder to continue.
        stop_file: The worker stops gracefully once this file exists.
        origin: The config file the run comes from (``None``: none, the app's own runs).
        python: The interpreter (this one by default).
        module: The worker module (tests use one that crashes on purpose).
    """
    python = python or sys.executable
    worker = ["-m", module, str(config_path)]
    if resume is not None:
        worker += ["--resume", str(resume)]
    if stop_file is not None:
        worker += ["--stop-file", str(stop_file)]
    worker += ["--origin", str(origin) if origin else ""]
    if not launch.distributed:
        return [python, *worker]
    if accelerate_config is None:
        raise ValueError("a multi-process run needs an Accelerate config file")
    # --quiet: a failed worker ends the launcher with its exit code, not a second traceback.
    return [
        python,
        "-m",
        "accelerate.commands.launch",
        "--quiet",
        "--config_file",
        str(accelerate_config),
        *worker,
    ]


def accelerate_settings(
    launch: Launch,
    *,
    nodes: int = 1,
    cpu: bool = False,
    port: int = DEFAULT_PORT,
) -> dict[str, Any]:
    """Accelerate's config (what ``accelerate config`` would write) for ``launch`` on ``nodes`` machines.

    Args:
        launch: Processes per machine and the strategy.
        nodes: Machines; with more than one, each is told its rank and the main machine's address
            when it is launched (the Slurm script does that).
        cpu: Train on CPU processes (tests, a machine without a GPU): gloo, no GPU ids.
        port: The main process's port for the rendezvous.
    """
    per_node = max(1, launch.num_processes)
    settings: dict[str, Any] = {
        "compute_environment": "LOCAL_MACHINE",
        # MULTI_GPU is torchrun's launcher, which also runs CPU processes: the worker then joins
        # with gloo (Accelerate's own MULTI_CPU type would need MPI).
        "distributed_type": "MULTI_GPU" if per_node * nodes > 1 else "NO",
        "num_processes": per_node * nodes,
        "num_machines": nodes,
        "machine_rank": 0,
        "main_process_port": port,
        "mixed_precision": "no",  # the run config's precision goes to the Trainer, which tells Accelerate
        "use_cpu": False,
        "rdzv_backend": "static",
        "same_network": True,
        "main_training_function": "main",
        "downcast_bf16": "no",
        "tpu_use_cluster": False,
        "tpu_use_sudo": False,
    }
    if not cpu:
        settings["gpu_ids"] = launch.gpu_ids.replace(" ", "") or "all"
    if launch.strategy == "fsdp" and per_node * nodes > 1:
        settings["distributed_type"] = "FSDP"
        settings["fsdp_config"] = {
            "fsdp_version": 2,
            "fsdp_auto_wrap_policy": "TRANSFORMER_BASED_WRAP",
            "fsdp_reshard_after_forward": True,
            "fsdp_state_dict_type": "FULL_STATE_DICT",  # a model folder that loads anywhere
            "fsdp_cpu_ram_efficient_loading": True,
            "fsdp_offload_params": False,
        }
    elif launch.strategy.startswith("deepspeed") and per_node * nodes > 1:
        settings["distributed_type"] = "DEEPSPEED"
        settings["deepspeed_config"] = {
            "zero_stage": 3 if launch.strategy.endswith("3") else 2,
            "offload_optimizer_device": "none",
            "offload_param_device": "none",
            "zero3_init_flag": launch.strategy.endswith("3"),
            "zero3_save_16bit_model": True,
            "gradient_accumulation_steps": "auto",
            "gradient_clipping": "auto",
        }
    return settings


def write_accelerate_config(path: Path, settings: dict[str, Any]) -> Path:
    """Write Accelerate's config as YAML (what ``accelerate launch --config_file`` reads)."""
    import yaml

    from desktop.core.system.paths import atomic_write_text

    header = (
        "# Accelerate config written by Finetune Studio (accelerate launch --config_file this-file).\n"
        "# MULTI_GPU means torchrun starts the processes; on a machine without a GPU they train on\n"
        "# the CPU with the gloo backend.\n"
    )
    atomic_write_text(path, header + yaml.safe_dump(settings, sort_keys=False))
    return path


def check_launch(launch: Launch, gpus: int | None) -> None:
    """Refuse what cannot start here: more GPUs than there are, DeepSpeed without the package.

    Args:
        launch: The run's launch settings.
        gpus: The GPUs NVML sees (``None``: no GPU, the processes train on the CPU).

    Raises:
        InputError: The launch cannot work on this machine; the message says what to change.
    """
    if not launch.distributed:
        return
    if importlib.util.find_spec("accelerate") is None:
        raise InputError(
            msg("Training on several processes needs the accelerate package, which is not installed."),
            msg("Install it (pip install accelerate), or train with one process."),
        )
    if launch.strategy.startswith("deepspeed") and importlib.util.find_spec("deepspeed") is None:
        raise InputError(
            msg("{strategy} needs the deepspeed package, which is not installed.", strategy=launch.strategy),
            msg("Install it (pip install deepspeed; Linux only), or choose ddp or fsdp."),
        )
    if launch.strategy.startswith("deepspeed") and sys.platform == "win32":
        raise InputError(
            msg("DeepSpeed does not train on several GPUs on Windows."),
            msg("Choose ddp or fsdp, or train on Linux (WSL2 works)."),
        )
    if gpus is not None and launch.num_processes > gpus:
        raise InputError(
            msg(
                "The run asks for {processes} processes, one per GPU, and this computer has {gpus}.",
                processes=launch.num_processes,
                gpus=gpus,
            ),
            msg("Lower the number of GPUs to {gpus}.", gpus=gpus),
        )
    if gpus is not None and launch.gpu_ids:
        missing = [i for i in launch.gpu_ids.split(",") if int(i) >= gpus]
        if missing:
            raise InputError(
                msg(
                    "GPU {ids} does not exist here (GPUs 0 to {last}).", ids=", ".join(missing), last=gpus - 1
                ),
                msg("Choose GPUs this computer has, or leave the choice empty."),
            )
