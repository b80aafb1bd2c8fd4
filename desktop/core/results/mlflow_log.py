"""An exported model folder logged to MLflow (``mlflow_store.py`` says where), and whether it can be now."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from desktop.core.system.errors import InputError
from desktop.core.system.messages import msg


def mlflow_problem() -> None:
    """Raise :class:`InputError` unless the model can be logged to MLflow now."""
    if importlib.util.find_spec("mlflow") is None:
        raise InputError(
            msg("MLflow is not installed."),
            msg("Install it (pip install mlflow-skinny, or mlflow for its UI too) or export without it."),
        )


def log_to_mlflow(folder: Path, pipeline_task: str, run_name: str) -> str:
    """Log the exported folder as MLflow's transformers flavour for the pipeline ``pipeline_task``
    (``text-classification``...); its model URI, which ``mlflow.transformers.load_model`` answers with.

    The folder is loaded as a transformers pipeline and that is logged: MLflow 3.18 cannot log a folder's
    path with transformers 5 (it reads pipeline classes from the registry's old layout: "'str' object has
    no attribute '__name__'"). The pip requirements are the versions installed here, named, so that MLflow
    does not import packages to guess them (it asked for torchvision).
    """
    import mlflow
    import torch
    import transformers
    from transformers import pipeline
    from transformers.pipelines import get_supported_tasks

    from desktop.core.training.mlflow_store import experiment, use_store

    if pipeline_task not in get_supported_tasks():  # text2text-generation left transformers 5
        raise ValueError(
            f"transformers {transformers.__version__} has no {pipeline_task} pipeline, which MLflow's "
            "transformers flavour needs"
        )
    loaded = pipeline(pipeline_task, model=str(folder), tokenizer=str(folder))
    requirements = [
        f"transformers=={transformers.__version__}",
        f"torch=={torch.__version__.split('+')[0]}",  # the build (+cpu, +cu128) is the installer's choice
    ]
    use_store()
    mlflow.set_experiment(experiment())
    with mlflow.start_run(run_name=run_name):
        info = mlflow.transformers.log_model(
            transformers_model=loaded, name="model", pip_requirements=requirements
        )
    return str(getattr(info, "model_uri", "") or "")
