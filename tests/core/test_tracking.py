"""MLflow for real (issue 56): a run logs its parameters, its figures per step and its evaluation to a
local store by default; the export logs a model that ``mlflow.transformers.load_model`` answers with; a
tracker that fails never stops training nor fails an export that wrote its folder."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.core.results.export import export_run
from desktop.core.runs.folders import RunDir
from desktop.core.system.events import AdviceEvent, PreparingEvent
from desktop.core.training.run import run_training
from tests.core.helpers import Recorder, make_config

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("mlflow") is None,
        reason="MLflow is not installed (pip install -e '.[test]' installs mlflow-skinny; CI installs it)",
    ),
]
SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"


MLFLOW_VARIABLES = (
    "MLFLOW_TRACKING_URI",
    "MLFLOW_EXPERIMENT_NAME",
    "MLFLOW_ALLOW_FILE_STORE",
    "MLFLOW_RUN_ID",
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The app's data folder in a temp folder, and no MLflow settings of the machine's (nor, after the
    test, the ones the app set for its process)."""
    monkeypatch.setenv("FINETUNE_STUDIO_HOME", str(tmp_path / "home"))
    for name in MLFLOW_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    yield tmp_path / "home"
    for name in MLFLOW_VARIABLES:
        os.environ.pop(name, None)


def _train(tiny_gpt2: Path, tmp_path: Path) -> tuple[RunDir, list]:
    config = make_config(
        "causal-lm",
        tiny_gpt2,
        [SAMPLES / "instructions.jsonl"],
        tmp_path / "runs",
        max_steps=6,
        logging_steps=2,
    )
    config.output.report_to = ["mlflow"]
    events = Recorder()
    result = run_training(config, events.append)
    assert result.status == "finished", result.failure
    return RunDir(result.run_dir), list(events)


def test_a_run_is_logged_to_mlflow_in_the_data_folder_and_read_back_by_another_process(
    tiny_gpt2: Path, tmp_path: Path, home: Path
) -> None:
    run, events = _train(tiny_gpt2, tmp_path)

    said = [e.message for e in events if isinstance(e, PreparingEvent)]
    where = next(str(m) for m in said if str(m).startswith("MLflow: this run is logged as"))
    assert run.path.name in where and "mlflow ui --backend-store-uri" in where
    assert not [e for e in events if isinstance(e, AdviceEvent) and e.concern == "tracker"]
    uri = where.split(" at ", 1)[1].split(". To look", 1)[0]
    assert str(home) in uri.replace("file://", "")
    query = (
        "import json, sys, mlflow\n"
        "client = mlflow.MlflowClient(tracking_uri=sys.argv[1])\n"
        "experiment = client.get_experiment_by_name('finetune-studio')\n"
        "found = client.search_runs([experiment.experiment_id])\n"
        "run = found[0]\n"
        "history = client.get_metric_history(run.info.run_id, 'loss')\n"
        "print(json.dumps({'name': run.info.run_name, 'params': run.data.params, "
        "'metrics': sorted(run.data.metrics), 'loss_steps': [m.step for m in history]}))\n"
    )
    env = {"MLFLOW_ALLOW_FILE_STORE": "true", "PATH": "", "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", query, uri], capture_output=True, text=True, timeout=120, env=env, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    logged = json.loads(done.stdout.strip().splitlines()[-1])
    assert logged["name"] == run.path.name
    assert logged["params"]["learning_rate"] and logged["params"]["max_steps"] == "6"
    assert logged["loss_steps"] == [2, 4, 6]  # every logged step
    assert any(name.startswith("eval_") for name in logged["metrics"])  # the evaluation too


def test_a_store_mlflow_refuses_is_said_once_and_the_run_goes_on(
    tiny_gpt2: Path, tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "nosuchstore://nowhere")
    run, events = _train(tiny_gpt2, tmp_path)

    told = [e for e in events if isinstance(e, AdviceEvent) and e.concern == "tracker"]
    assert len(told) == 1 and str(told[0].message).startswith("MLflow stopped logging at step 0:")
    assert "Training goes on" in str(told[0].message)
    assert run.model_dir.is_dir()  # finished, with its model


def test_the_export_is_logged_as_a_transformers_model_that_answers_like_the_folder(
    tiny_gpt2: Path, tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mlflow
    from transformers import pipeline

    from desktop.core.training.mlflow_store import mlflow_store

    config = make_config(
        "causal-lm", tiny_gpt2, [SAMPLES / "instructions.jsonl"], tmp_path / "runs", max_steps=2
    )
    result = run_training(config, Recorder().append)
    run = RunDir(result.run_dir)

    exported = export_run(run, tmp_path / "export", mlflow=True, verify=False)

    assert exported.mlflow_uri.startswith("models:/") and exported.mlflow_not_logged is None
    assert "mlflow ui --backend-store-uri" in exported.mlflow_ui  # how to look, said beside it
    uri, needed = mlflow_store()
    for name, value in needed.items():
        monkeypatch.setenv(name, value)
    mlflow.set_tracking_uri(uri)
    loaded = mlflow.transformers.load_model(exported.mlflow_uri)
    alone = pipeline("text-generation", model=str(exported.folder))
    asked = {"max_new_tokens": 8, "do_sample": False}
    assert loaded("The weather is", **asked) == alone("The weather is", **asked)

    monkeypatch.setenv("MLFLOW_TRACKING_URI", "nosuchstore://nowhere")
    again = export_run(run, tmp_path / "export2", mlflow=True, verify=False)
    assert again.mlflow_uri == "" and (again.folder / "model.safetensors").is_file()
    assert str(again.mlflow_not_logged).startswith("The model was not logged to MLflow:")
