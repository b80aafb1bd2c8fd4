"""Where MLflow logs a run and an exported model: the user's tracking URI, else a store in the app's data
folder that the installed MLflow can open.

- ``MLFLOW_TRACKING_URI`` set by the user: used as it is (a server, a database, a folder).
- Otherwise a store in the data folder, in the experiment ``finetune-studio``: a SQLite database where
  the full ``mlflow`` package is installed; with ``mlflow-skinny`` alone (which has no SQL store), MLflow's
  file store, opened with MLflow's own ``MLFLOW_ALLOW_FILE_STORE`` (since MLflow 3.18 the file store
  refuses to open without it: "in maintenance mode").
"""

from __future__ import annotations

import importlib.metadata
import os
import sys

EXPERIMENT = "finetune-studio"


def mlflow_store() -> tuple[str, dict[str, str]]:
    """The tracking URI, and the environment variables MLflow needs to open it."""
    from desktop.core.system.paths import data_dir

    uri = os.environ.get("MLFLOW_TRACKING_URI", "")  # the user's, or ours once MLflow has set it
    if uri:
        file_store = uri.startswith("file:") or "://" not in uri
        return uri, {"MLFLOW_ALLOW_FILE_STORE": "true"} if file_store else {}
    folder = data_dir() / "mlflow"
    folder.mkdir(parents=True, exist_ok=True)
    if _full_mlflow():
        return f"sqlite:///{(folder / 'mlflow.db').as_posix()}", {}
    return (folder / "mlruns").as_uri(), {"MLFLOW_ALLOW_FILE_STORE": "true"}


def experiment() -> str:
    """The MLflow experiment runs go to (the user's ``MLFLOW_EXPERIMENT_NAME``, else ours)."""
    return os.environ.get("MLFLOW_EXPERIMENT_NAME") or EXPERIMENT


def use_store() -> str:
    """Point MLflow at :func:`mlflow_store` for this process, and the runs at :func:`experiment`; the
    tracking URI. Set once for the process, not around each call: MLflow's own end-of-process clean-up (a
    run left open by a crash) must reach the same store.

    Raises whatever MLflow raises for a store it cannot open (the caller says it).
    """
    import mlflow

    uri, extra = mlflow_store()
    for key, value in extra.items():
        os.environ.setdefault(key, value)
    mlflow.set_tracking_uri(uri)  # the user's, or ours: before MLflow's own default (./mlruns) is taken
    os.environ.setdefault("MLFLOW_EXPERIMENT_NAME", experiment())  # read by transformers' callback
    return uri


def _full_mlflow() -> bool:
    """Whether the full ``mlflow`` package is installed (``mlflow-skinny`` has no SQL store)."""
    try:
        importlib.metadata.distribution("mlflow")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def ui_command(uri: str, extra: dict[str, str]) -> str:
    """The command that opens MLflow's UI on ``uri`` (the UI comes with the full ``mlflow`` package),
    with the environment its store needs (the file store's opt-in). On Windows it goes through
    ``cmd /c``, which both cmd.exe and PowerShell run as it is (each sets a variable its own way)."""
    shown = f'"{uri}"' if " " in uri else uri
    command = f"mlflow ui --backend-store-uri {shown}"
    if not extra:
        return command
    if sys.platform == "win32":
        settings = "".join(f"set {key}={value}&& " for key, value in extra.items())
        return f'cmd /c "{settings}{command}"'  # the file store's URI has no spaces (as_uri)
    return "".join(f"{key}={value} " for key, value in extra.items()) + command
