"""The hub from the CLI against a fake hub on 127.0.0.1: search, download, list, train offline."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from desktop.cli import main
from tests.fakehub import FakeHub
from tests.tiny_models import tiny_parameters


def _fast() -> list[str]:
    settings = [
        "training.max_steps=4",
        "training.batch_size=8",
        "training.max_length=32",
        "training.logging_steps=2",
    ]
    return [arg for s in settings for arg in ("--set", s)]


def test_search_lists_models_with_their_figures(
    fake_hub: FakeHub, capsys: pytest.CaptureFixture, tiny_gpt2
) -> None:
    assert main(["models", "search", "tiny", "--task", "causal-lm", "--source", "hf", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert [(h["ref"], h["downloads"], h["likes"], h["parameters"], h["license"]) for h in hits] == [
        ("tiny/gpt2", 500, 7, tiny_parameters(tiny_gpt2), "apache-2.0")
    ]
    assert main(["models", "search", "tiny", "--task", "classification"]) == 0  # a GPT-2 is not one
    assert "No models match" in capsys.readouterr().err
    assert main(["models", "search", "tiny", "--source", "modelscope", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert [h["ref"] for h in hits] == ["modelscope:tiny/gpt2"]
    assert hits[0]["parameters"] > 0  # from the safetensors headers: ModelScope's search has no counts


@pytest.mark.slow
def test_download_then_train_with_the_network_off(
    fake_hub: FakeHub,
    samples: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    assert main(["models", "download", "tiny/gpt2"]) == 0
    out, err = capsys.readouterr()
    folder = Path(out.strip())
    assert (folder / "model.safetensors").is_file() and "100%" in err
    assert main(["models", "list"]) == 0
    assert "tiny/gpt2" in capsys.readouterr().out
    fake_hub.stop()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    config = tmp_path / "run.toml"
    chat = samples / "chat.jsonl"
    assert (
        main(["init", "--task", "causal-lm", "--model", "tiny/gpt2", "--data", str(chat), "-o", str(config)])
        == 0
    )
    assert main(["train", str(config), "--runs-dir", str(tmp_path / "runs"), *_fast()]) == 0
    assert "not on this computer" not in capsys.readouterr().err


def test_an_unreachable_endpoint_fails_within_seconds(capsys: pytest.CaptureFixture, monkeypatch) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    started = time.monotonic()
    assert main(["models", "download", "someone/model", "--endpoint", "http://127.0.0.1:9"]) == 2
    assert time.monotonic() - started < 5
    err = capsys.readouterr().err
    assert "error: someone/model is not on this computer, and mirror (127.0.0.1:9)" in err
    assert "did not answer" in err and "Traceback" not in err


def test_init_with_a_hub_dataset_downloads_it_first(
    fake_hub: FakeHub, samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    from tests.fakehub import Repo

    fake_hub.add(
        Repo("someone/reviews", {"train.csv": (samples / "reviews.csv").read_bytes()}, kind="dataset")
    )
    config = tmp_path / "run.toml"
    assert (
        main(
            [
                "init",
                "--task",
                "classification",
                "--model",
                "tiny/bert",
                "--data",
                "someone/reviews",
                "-o",
                str(config),
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "The dataset someone/reviews is not on this computer yet: downloading it first." in err
    assert 'hub_id = "someone/reviews"' in config.read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("presses", [1, 2, "SIGTERM"])
def test_ctrl_c_ends_a_stalled_download_at_once_without_a_traceback_or_empty_files(
    fake_hub: FakeHub, tmp_path: Path, presses: int | str
) -> None:
    """Today Ctrl-C printed "Download stopped" and the program went on waiting for the stalled
    connection (30 s here), a second one printed a traceback, and 0-byte partial files stayed."""
    import os
    import signal
    import subprocess
    import sys
    import threading

    release = fake_hub.stall["model.safetensors"] = threading.Event()
    foreign = tmp_path / "hf" / "models--tiny--gpt2" / "blobs" / "0123abcd.other-program.incomplete"
    foreign.parent.mkdir(parents=True)
    foreign.write_bytes(b"")  # another program's download, started before ours: not ours to delete
    env = {**os.environ, "FINETUNE_STUDIO_HOME": str(tmp_path / "home")}
    command = [
        sys.executable,
        "-m",
        "desktop.cli",
        "models",
        "download",
        "tiny/gpt2",
        "--source",
        "huggingface",
    ]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert fake_hub.stalled.wait(60)  # half of the weights sent, then nothing
        pressed = time.monotonic()
        for _ in range(presses) if isinstance(presses, int) else []:
            proc.send_signal(signal.SIGINT)
            time.sleep(0.1)
        if presses == "SIGTERM":  # the task manager, or a service stopping
            proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        took = time.monotonic() - pressed
    finally:
        release.set()
        proc.kill()
    assert proc.returncode == 130 and took < 2.5, (proc.returncode, took)
    assert "Traceback" not in err and "Run the same command again to resume" in err
    assert [p for p in (tmp_path / "hf").rglob("*.incomplete") if p.stat().st_size == 0] == [foreign]
