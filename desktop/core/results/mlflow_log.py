"""An exported model folder logged to MLflow, and whether it can be now."""

from __future__ import annotations

import importlib.util
import inspect
import os
from pathlib import Path

from desktop.core.system.errors import InputError
from desktop.core.system.messages import msg


def mlflow_problem() -> None:
    """Raise :class:`InputError` unless the model can be logged to MLflow now."""
    if importlib.util.find_spec("mlflow") is None:
        raise InputError(
            msg("MLflow is not installed."), msg("Install it (pip install mlflow) or export without it.")
        )
    if not os.environ.get("MLFLOW_TRACKING_URI"):
        raise InputError(
            msg("No MLflow tracking server is set."),
            msg("Set MLFLOW_TRACKING_URI (for example http://127.0.0.1:5000) and start the app again."),
        )


def log_to_mlflow(folder: Path, pipeline_task: str, run_name: str) -> str:
    """Log the exported folder as an MLflow transformers model (read from disk, not loaded) for the
    pipeline ``pipeline_task`` (``text-classification``...); its URI."""
    import mlflow

    log_model = mlflow.transformers.log_model
    # MLflow 3 names the model ``name``; MLflow 2 called it ``artifact_path``.
    key = "name" if "name" in inspect.signature(log_model).parameters else "artifact_path"
    with mlflow.start_run(run_name=run_name):
        info = log_model(transformers_model=str(folder), task=pipeline_task, **{key: "model"})
    return str(getattr(info, "model_uri", "") or "")
