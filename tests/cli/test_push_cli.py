"""``push`` against a fake hub: a run exported and published; an export already made published as it is;
a token that may only read refused with exit code 2 and nothing sent."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.cli import main
from desktop.core.hub import sources
from desktop.core.results.export import export_run
from desktop.core.runs.folders import RunDir
from desktop.core.training.run import run_training
from tests.core.helpers import Recorder, make_config
from tests.fakehub import READ_TOKEN, TOKEN, FakeHub


@pytest.fixture
def run(tiny_gpt2: Path, samples: Path, tmp_path: Path) -> RunDir:
    config = make_config(
        "causal-lm", tiny_gpt2, [samples / "instructions.jsonl"], tmp_path / "runs", max_steps=4
    )
    result = run_training(config, Recorder().append)
    assert result.status == "finished", result.failure
    return RunDir(result.run_dir)


@pytest.mark.slow
def test_push_publishes_a_run_and_an_export(fake_hub: FakeHub, run: RunDir, tmp_path: Path, capsys) -> None:
    sources.set_token(sources.HUGGING_FACE, TOKEN)
    assert main(["push", str(run.path), "cli-model", "--public", "--dtype", "fp16"]) == 0
    captured = capsys.readouterr()
    assert f"Published to {fake_hub.url}/tester/cli-model" in captured.out
    assert "The repository is public." in captured.out
    assert "Uploading" in captured.err and "Verifying" in captured.err  # the export, then the upload
    assert fake_hub.repos[("model", "tester/cli-model")].meta["private"] is False

    exported = export_run(run, tmp_path / "adapterless", verify=False)
    assert main(["push", str(exported.folder), "tester/from-folder"]) == 0
    [_, commit] = fake_hub.commits
    assert commit["files"]["model.safetensors"] == (exported.folder / "model.safetensors").read_bytes()
    assert "The repository is private." in capsys.readouterr().out


def test_push_with_a_read_only_token_sends_nothing(fake_hub: FakeHub, tmp_path: Path, capsys) -> None:
    sources.set_token(sources.HUGGING_FACE, READ_TOKEN)
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / ".finetune-studio-export").write_text("{}", encoding="utf-8")
    (folder / "config.json").write_text("{}", encoding="utf-8")
    assert main(["push", str(folder), "tester/m"]) == 2
    err = capsys.readouterr().err
    assert "may only read" in err and "https://huggingface.co/settings/tokens" in err
    assert not [p for m, p in fake_hub.requests if m in ("POST", "PUT")]


@pytest.mark.slow
def test_push_of_a_gguf_sends_the_file_with_its_modelfile_and_card(
    fake_hub: FakeHub, run: RunDir, capsys
) -> None:
    sources.set_token(sources.HUGGING_FACE, TOKEN)
    assert (
        main(
            [
                "push",
                run.path.name,
                "tester/gguf",
                "--format",
                "gguf",
                "--no-verify",
                "--runs-dir",
                str(run.path.parent),
            ]
        )
        == 0
    )
    [commit] = fake_hub.commits
    assert set(commit["files"]) == {f"{run.path.name}-F16.gguf", "Modelfile", "README.md"}
    assert commit["files"][f"{run.path.name}-F16.gguf"][:4] == b"GGUF"
    assert f"FROM ./{run.path.name}-F16.gguf" in commit["files"]["Modelfile"].decode()
    assert commit["summary"] == f"Upload {run.path.name} (GGUF model) from Finetune Studio"
