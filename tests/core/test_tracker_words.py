"""The command a run prints to open MLflow's UI runs as printed in the user's shell."""

from __future__ import annotations

import sys

import pytest

from desktop.core.training.mlflow_store import ui_command


def test_the_mlflow_ui_command_fits_the_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    store = "file:///C:/Users/Wang%20Fang/AppData/Local/FinetuneStudio/mlruns"
    monkeypatch.setattr(sys, "platform", "win32")  # cmd.exe and PowerShell both run cmd /c "..."
    assert ui_command(store, {"MLFLOW_ALLOW_FILE_STORE": "true"}) == (
        f'cmd /c "set MLFLOW_ALLOW_FILE_STORE=true&& mlflow ui --backend-store-uri {store}"'
    )
    assert ui_command("sqlite:///C:/Users/Wang Fang/mlflow.db", {}) == (
        'mlflow ui --backend-store-uri "sqlite:///C:/Users/Wang Fang/mlflow.db"'
    )
    monkeypatch.setattr(sys, "platform", "linux")
    assert ui_command("file:///home/a/mlruns", {"MLFLOW_ALLOW_FILE_STORE": "true"}) == (
        "MLFLOW_ALLOW_FILE_STORE=true mlflow ui --backend-store-uri file:///home/a/mlruns"
    )
