"""A job exported for another machine carries what it needs and runs from wherever it is submitted."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from desktop.core.settings.config import load_config
from desktop.core.training.jobs import export_job
from tests.core.helpers import make_config


def test_a_run_on_the_bundled_model_carries_the_model(samples: Path, tmp_path: Path) -> None:
    """Today the job named bundled:all-minilm-l6-v2, a package that is not in requirements.txt."""
    config = make_config("classification", Path("x"), [samples / "reviews.csv"], tmp_path / "runs")
    config.model.name = "bundled:all-minilm-l6-v2"
    job = export_job(config, tmp_path / "job", num_processes=1)
    assert Path(load_config(job / "run.toml").model.name) == job / "model"
    assert (job / "model" / "config.json").is_file() and any((job / "model").glob("*.safetensors"))
    assert "copied into `model/` (from bundled:all-minilm-l6-v2)" in (job / "README.md").read_text(
        encoding="utf-8"
    )


def test_the_slurm_script_finds_its_folder_from_anywhere_and_takes_a_port_of_its_own(
    tiny_bert: Path, samples: Path, tmp_path: Path
) -> None:
    config = make_config("classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs")
    job = export_job(config, tmp_path / "cluster" / "job", num_processes=2, nodes=2)
    tools, elsewhere = tmp_path / "bin", tmp_path / "home"
    tools.mkdir()
    elsewhere.mkdir()
    seen = tmp_path / "srun.txt"
    (tools / "scontrol").write_text(  # what Slurm answers about the job and its nodes
        "#!/bin/sh\n"
        f'if [ "$2" = job ]; then echo "   Command={job / "job.sbatch"} --resume runs/x"; '
        # A large allocation: the script must read the whole list, not stop at the first line.
        'else echo node-a; i=0; while [ $i -lt 5000 ]; do echo "node-b$i"; i=$((i+1)); done; fi\n',
        encoding="utf-8",
    )
    (tools / "srun").write_text(f'#!/bin/sh\npwd > {seen}\necho "$@" >> {seen}\n', encoding="utf-8")
    for tool in tools.iterdir():
        tool.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}",
        "SLURM_JOB_ID": "1234",
        "SLURM_SUBMIT_DIR": str(elsewhere),  # `sbatch ../cluster/job/job.sbatch` typed in another folder
        "SLURM_JOB_NODELIST": "node-[a-b]",
    }
    spool_copy = tmp_path / "spool" / "slurm_script"  # Slurm runs a copy, not the file in the job
    spool_copy.parent.mkdir()
    spool_copy.write_text((job / "job.sbatch").read_text(encoding="utf-8"), encoding="utf-8")
    done = subprocess.run(["bash", str(spool_copy)], env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    folder, arguments = seen.read_text(encoding="utf-8").split("\n", 1)
    assert Path(folder) == job  # run.toml, app/ and data/ are found
    assert '--main_process_ip "node-a"' in arguments
    assert '--main_process_port "21234"' in arguments and "29500" not in arguments  # 20000 + 1234
