"""``train --num-processes``, ``job export`` and ``runs --import`` from the command line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from desktop.cli import main
from desktop.core.runs.folders import RunDir
from desktop.core.runs.listing import list_runs


def _config(folder: Path, model: Path, data: Path, steps: int = 6) -> Path:
    """A config written here, outside the repo, with its data beside it under another name."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(data, folder / "评论.csv")
    path = folder / "two.toml"
    path.write_text(
        f'[model]\nname = "{model.as_posix()}"\n[data]\nfiles = ["评论.csv"]\n'
        f"[training]\nmax_steps = {steps}\nbatch_size = 4\nmax_length = 32\nlogging_steps = 1\n"
        '[output]\nruns_dir = "runs"\n',
        encoding="utf-8",
    )
    return path


@pytest.mark.slow
def test_train_with_two_processes_from_the_cli(
    tiny_bert: Path, samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    config = _config(tmp_path / "elsewhere", tiny_bert, samples / "reviews.csv")
    assert main(["train", str(config), "--num-processes", "2"]) == 0
    shown = capsys.readouterr()
    assert "2 × cpu" in shown.err and "Finished. Model saved in" in shown.out
    (run,) = [RunDir(p) for p in (tmp_path / "elsewhere" / "runs").iterdir()]
    assert run.config().launch.num_processes == 2
    assert [e.step for e in run.events() if e.kind == "log" and "loss" in e.metrics] == [1, 2, 3, 4, 5, 6]

    # The figures add up: the same data on one process starts at the same loss (two processes logged
    # twice the loss, 1.39 for 0.69, as the Trainer scales it for DDP's gradient mean).
    one = _config(tmp_path / "one", tiny_bert, samples / "reviews.csv")
    assert main(["train", str(one), "--num-processes", "1"]) == 0
    (single,) = [RunDir(p) for p in (tmp_path / "one" / "runs").iterdir()]

    def first_loss(r: RunDir) -> float:
        return next(e.metrics["loss"] for e in r.events() if e.kind == "log" and "loss" in e.metrics)

    assert abs(first_loss(run) - first_loss(single)) <= 0.1 * first_loss(single)


def test_cli_refuses_gpu_ids_that_do_not_match_the_process_count(
    tiny_bert: Path, samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    config = _config(tmp_path, tiny_bert, samples / "reviews.csv")
    assert main(["train", str(config), "--num-processes", "3", "--gpus", "0,1"]) == 2
    assert "names 2 GPUs for 3 processes" in capsys.readouterr().err


@pytest.mark.slow
def test_an_exported_job_runs_with_its_own_launch_script_and_imports_back(
    tiny_bert: Path, samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    config = _config(tmp_path / "project", tiny_bert, samples / "reviews.csv")
    job = tmp_path / "job"
    assert main(["job", "export", str(config), str(job), "--num-processes", "2", "--nodes", "2"]) == 0
    assert "sbatch job.sbatch" in capsys.readouterr().out
    for script in ("launch.sh", "job.sbatch"):
        assert subprocess.run(["bash", "-n", str(job / script)], capture_output=True).returncode == 0
    from accelerate.commands.config.config_args import load_config_from_file

    accelerate = load_config_from_file(str(job / "accelerate.yaml"))
    assert accelerate.num_processes == 2 and str(accelerate.distributed_type).endswith("MULTI_GPU")
    assert '--num_machines "$SLURM_NNODES"' in (job / "job.sbatch").read_text(encoding="utf-8")
    pins = (job / "requirements.txt").read_text(encoding="utf-8")
    assert "\ntransformers==" in pins and "\naccelerate==" in pins and "pyside6" not in pins.lower()
    shutil.rmtree(tmp_path / "project")  # self-contained: nothing of the original folder is needed

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [str(job / "launch.sh")],
        env={**env, "PYTHON": sys.executable},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert events[-1]["event"] == "finished"
    assert [e["processes"] for e in events if e["event"] == "started"] == [2]
    (run_folder,) = (job / "runs").iterdir()

    assert main(["runs", "--import", str(run_folder), "--runs-dir", str(tmp_path / "mine")]) == 0
    (info,) = list_runs(tmp_path / "mine")
    assert info.status == "finished" and info.step == 6
    from desktop.core.runs.listing import loss_curve

    assert [step for step, _ in loss_curve(tmp_path / "mine" / run_folder.name)] == [1, 2, 3, 4, 5, 6]


def test_a_job_is_never_written_over_files(
    tiny_bert: Path, samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    config = _config(tmp_path / "project", tiny_bert, samples / "reviews.csv")
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine", encoding="utf-8")
    assert main(["job", "export", str(config), str(tmp_path / "busy")]) == 2
    assert "is not empty" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["busy", "project"]  # no .partial left
