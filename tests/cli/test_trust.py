"""Trust, through the CLI: nothing destroyed, nothing silently wrong, damage survived, clear errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from desktop.cli import main
from desktop.core.runs.folders import RunDir
from tests.cli.test_cli import _cli, _write_config
from tests.core.helpers import fake_run

FAST = ["--set", "training.max_steps=4", "--set", "training.batch_size=8", "--set", "training.max_length=32"]


def _config(path: Path, model: Path, data: Path, extra: str = "") -> Path:
    path.write_text(
        f'[model]\nname = "{model.as_posix()}"\n[data]\nfiles = ["{data.as_posix()}"]\n'
        "[training]\nmax_steps = 4\nbatch_size = 8\nmax_length = 32\nsave_steps = 2\n" + extra,
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def finished(tiny_bert: Path, tmp_path_factory: pytest.TempPathFactory) -> RunDir:
    """A finished run in a runs folder of its own (shared by the export tests, which never change it)."""
    home = tmp_path_factory.mktemp("finished")
    samples = Path(__file__).resolve().parents[2] / "resources" / "samples"
    config = _config(home / "run.toml", tiny_bert, samples / "reviews.csv")
    assert main(["train", str(config), "--runs-dir", str(home / "runs")]) == 0
    return RunDir(next((home / "runs").iterdir()))


def _export(run: RunDir, dest: Path, *extra: str) -> int:
    return main(["export", str(run.path), str(dest), "--no-verify", *extra])


# --------------------------------------------------------------------------- nothing destroyed


def test_export_refuses_to_replace_runs_the_run_or_folders_no_export_wrote(
    finished: RunDir, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    runs = finished.path.parent
    for dest in (runs, finished.path, finished.path / "model", finished.path / "new-folder"):
        assert _export(finished, dest, "--force") == 2
        assert "exporting there could overwrite it" in capsys.readouterr().err
    mine = tmp_path / "my-notes"
    mine.mkdir()
    (mine / "thesis.docx").write_text("years of work", encoding="utf-8")
    assert _export(finished, mine, "--force") == 2
    assert "was not written by an export" in capsys.readouterr().err
    assert (mine / "thesis.docx").read_text(encoding="utf-8") == "years of work"
    assert sorted(p.name for p in runs.iterdir()) == [finished.path.name]
    assert (finished.model_dir / "config.json").is_file()


def test_export_replaces_only_an_earlier_export_and_refuses_a_file(
    finished: RunDir, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    dest = tmp_path / "export"
    assert _export(finished, dest) == 0
    (dest / "stale.txt").write_text("from the first export", encoding="utf-8")
    assert _export(finished, dest, "--force", "--dtype", "fp16") == 0
    assert not (dest / "stale.txt").exists() and (dest / "model.safetensors").is_file()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # nothing left beside it
    afile = tmp_path / "model.bin"
    afile.write_bytes(b"x")
    capsys.readouterr()
    assert _export(finished, afile, "--force") == 2
    assert "is a file" in capsys.readouterr().err and afile.read_bytes() == b"x"


def test_a_second_export_to_the_same_folder_at_once_is_refused(
    finished: RunDir, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    from desktop.core.results.destination import lock_destination

    dest = tmp_path / "export"
    with lock_destination(dest.absolute()):  # another export to the same place is running
        assert _export(finished, dest) == 2
    assert "Another export to" in capsys.readouterr().err and not dest.exists()
    assert _export(finished, dest) == 0  # once it is done, exporting there works


# --------------------------------------------------------------------------- nothing silently wrong


def test_label_spellings_of_one_value_are_one_class(
    tiny_bert: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    rows = ["text,label"] + [f"good thing {i},{s}" for i, s in enumerate(["1", "1.0", " 1", "1"] * 5)]
    rows += [f"bad thing {i},{s}" for i, s in enumerate(["0", "0.0", "0 ", "0"] * 5)]
    data = tmp_path / "labels.csv"
    data.write_text("\n".join(rows) + "\n", encoding="utf-8")
    config = _config(tmp_path / "run.toml", tiny_bert, data)

    assert main(["validate", str(config)]) == 0
    out = capsys.readouterr().out
    assert "merged into one class each:" in out
    assert '"0" "0 " "0.0" -> 0' in out and '" 1" "1" "1.0" -> 1' in out
    assert main(["train", str(config), "--runs-dir", str(tmp_path / "runs")]) == 0
    labels = json.loads((next((tmp_path / "runs").iterdir()) / "model" / "config.json").read_text())[
        "id2label"
    ]
    assert sorted(labels.values()) == ["0", "1"]


def test_a_model_folder_without_tokenizer_files_is_refused(
    tiny_bert: Path, samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    bare = tmp_path / "weights-only"
    bare.mkdir()
    for name in ("config.json", "model.safetensors"):
        (bare / name).write_bytes((tiny_bert / name).read_bytes())
    config = _config(tmp_path / "run.toml", bare, samples / "reviews.csv")
    for command in (["validate", str(config)], ["train", str(config), "--runs-dir", str(tmp_path / "r")]):
        assert main(command) == 2
        assert "has no tokenizer files" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("task", "model", "data", "words"),
    [
        ("causal-lm", "tiny_bert", "instructions.jsonl", "encoder-only model (bert)"),
        ("seq2seq", "tiny_gpt2", "translation.tsv", "not an encoder-decoder model (gpt2)"),
    ],
)
def test_a_model_that_does_not_fit_the_task_is_refused(
    task: str,
    model: str,
    data: str,
    words: str,
    request: pytest.FixtureRequest,
    samples: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture,
) -> None:
    config = _config(tmp_path / "run.toml", request.getfixturevalue(model), samples / data)
    config.write_text(f'task = "{task}"\n' + config.read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["validate", str(config)]) == 2
    err = capsys.readouterr().err
    assert words in err and "such as" in err


def test_text_the_model_cannot_read_is_warned_about(samples: Path, capsys: pytest.CaptureFixture) -> None:
    # The bundled English MiniLM reads Chinese reviews as mostly [UNK].
    config = samples / "classification.toml"
    assert main(["validate", str(config), "--set", 'data.files=["reviews-zh.csv"]']) == 0
    out = capsys.readouterr().out
    assert "does not know most of the characters in your texts" in out and "[UNK]" in out
    assert main(["validate", str(config)]) == 0  # the shipped sample pairs data and model sensibly
    assert "does not know" not in capsys.readouterr().out


@pytest.mark.parametrize(
    ("setting", "field"),
    [
        ("training.gradient_accumulation=50", "training.gradient_accumulation"),
        ("training.epochs=inf", "training.epochs"),
        ("training.epochs=nan", "training.epochs"),
        ("training.warmup=nan", "training.warmup"),
    ],
)
def test_impossible_schedules_are_refused_before_training(
    setting: str, field: str, tiny_bert: Path, samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    config = _config(tmp_path / "run.toml", tiny_bert, samples / "reviews.csv")
    for command in ("validate", "train"):
        assert main([command, str(config), "--set", setting, "--set", "training.max_steps=0"]) == 2
        assert field in capsys.readouterr().err


def test_validate_refuses_what_training_refuses(
    tiny_bert: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    train = tmp_path / "train.csv"
    train.write_text("text,label\n" + "".join(f"text {i},{i % 2}\n" for i in range(40)), encoding="utf-8")
    held_out = tmp_path / "eval.csv"
    held_out.write_text("text,label\nfine,1\n ,0\n", encoding="utf-8")  # a blank text
    config = _config(
        tmp_path / "run.toml", tiny_bert, train, f'[validation]\nfiles = ["{held_out.as_posix()}"]\n'
    )
    assert main(["validate", str(config)]) == 2
    assert "eval.csv: 1 row has an empty text" in capsys.readouterr().err

    many = tmp_path / "many.csv"
    many.write_text("text,label\n" + "".join(f"text {i},class {i}\n" for i in range(5000)), encoding="utf-8")
    config = _config(tmp_path / "many.toml", tiny_bert, many)
    assert main(["validate", str(config)]) == 2
    assert "has 4500 different values in 4500 rows" in capsys.readouterr().err


# --------------------------------------------------------------------------- damaged state


def test_one_damaged_run_does_not_break_the_list(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    runs = tmp_path / "runs"
    fake_run(runs, "good")
    noisy = fake_run(runs, "noisy")
    with open(noisy.events_path, "ab") as fh:
        fh.write(os.urandom(300) + '\n{"event": "log", "step": 1, "metrics": "好'.encode()[:-1])
    broken = fake_run(runs, "broken")
    broken.events_path.write_bytes(os.urandom(2000))
    broken.config_path.write_bytes(b"\xff\xfe not toml")

    assert main(["runs", "--runs-dir", str(runs)]) == 0
    out = capsys.readouterr().out.splitlines()
    lines = {line.split()[0].split("-", 2)[-1]: line for line in out if not line.startswith(" ")}
    assert set(lines) == {"good", "noisy", "broken"}
    assert " damaged " in lines["broken"] and " crashed " in lines["noisy"]
    advice = out[out.index(lines["broken"]) + 1]  # under the damaged run: what is wrong, what to do
    assert (
        advice
        == "    its config or event log cannot be read: it has no checkpoint to resume from; train it again."
    )


def _crashed_with_two_checkpoints(
    tiny_bert: Path, samples: Path, tmp_path: Path
) -> tuple[Path, Path, RunDir, Path, Path]:
    """A run with checkpoints at steps 4 and 6 that crashed before its last event was written."""
    config = _config(tmp_path / "run.toml", tiny_bert, samples / "reviews.csv")
    runs = tmp_path / "runs"
    assert main(["train", str(config), "--runs-dir", str(runs), "--set", "training.max_steps=6"]) == 0
    run = RunDir(next(runs.iterdir()))
    lines = run.events_path.read_text(encoding="utf-8").splitlines()
    run.events_path.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    older, newest = run.checkpoints()[-2:]
    return config, runs, run, older, newest


def test_resume_skips_a_damaged_checkpoint_and_says_which_it_used(
    tiny_bert: Path, samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    config, runs, run, older, newest = _crashed_with_two_checkpoints(tiny_bert, samples, tmp_path)
    weights = newest / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-100])  # a full disk cut it short
    capsys.readouterr()
    assert (
        main(["train", str(config), "--runs-dir", str(runs), "--resume", "--set", "training.max_steps=8"])
        == 0
    )
    err = capsys.readouterr().err
    assert f"Resuming from {older.name}: the newer {newest.name} (model.safetensors is cut short)" in err
    started = [json.loads(line) for line in run.events_path.read_text(encoding="utf-8").splitlines()]
    assert [e["resumed_from_step"] for e in started if e["event"] == "started"][-1] == int(older.name[11:])
    assert (run.checkpoints_dir / f"damaged-{newest.name}").is_dir()


def test_a_resume_with_every_checkpoint_damaged_names_each_one(
    tiny_bert: Path, samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """It said "No stopped or interrupted run ... with a checkpoint was found" of a run with two."""
    config, runs, run, older, newest = _crashed_with_two_checkpoints(tiny_bert, samples, tmp_path)
    for checkpoint in (older, newest):
        weights = checkpoint / "model.safetensors"
        weights.write_bytes(weights.read_bytes()[:-100])
    capsys.readouterr()

    for command in ([str(config), "--runs-dir", str(runs)], [str(run.config_path)]):  # by origin, by run
        assert main(["train", *command, "--resume"]) == 2
        err = capsys.readouterr().err
        assert f"The run {run.path.name} cannot be resumed: none of its checkpoints can be loaded: " in err
        assert f"{older.name} (model.safetensors is cut short), {newest.name} (model.safetensors" in err
        assert "without --resume" in err
    assert older.is_dir() and newest.is_dir()  # kept for a look


def test_resume_continues_only_a_run_of_the_same_config(
    tiny_bert: Path, samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    runs = tmp_path / "runs"
    a = _config(tmp_path / "a.toml", tiny_bert, samples / "reviews.csv")
    b = _config(tmp_path / "b.toml", tiny_bert, samples / "reviews.csv", "learning_rate = 1e-3\n")
    crashed_a = fake_run(runs, "a", checkpoint=2)
    crashed_a.config_path.write_text(a.read_text(encoding="utf-8"), encoding="utf-8")
    (crashed_a.path / "origin.json").write_text(
        json.dumps({"config_file": str(a.resolve())}), encoding="utf-8"
    )
    unreadable = fake_run(runs, "zzz-unreadable", checkpoint=2)
    unreadable.config_path.write_text("[[[", encoding="utf-8")

    assert main(["train", str(b), "--runs-dir", str(runs), "--resume"]) == 2
    assert "No stopped or interrupted run of" in capsys.readouterr().err

    b.write_text(a.read_text(encoding="utf-8").replace("[training]", "[training]\nlearning_rate = 1e-3"))
    b.rename(a)  # the same file, now with another learning rate
    assert main(["train", str(a), "--runs-dir", str(runs), "--resume"]) == 2
    assert "trained with other settings (training.learning_rate)" in capsys.readouterr().err


def test_a_run_already_training_elsewhere_cannot_be_resumed_twice(
    tiny_bert: Path, samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    run = fake_run(tmp_path / "runs", "busy", checkpoint=2)
    _config(run.config_path, tiny_bert, samples / "reviews.csv")
    (run.path / "origin.json").write_text(
        json.dumps({"config_file": str(tmp_path / "run.toml")}), encoding="utf-8"
    )
    _config(tmp_path / "run.toml", tiny_bert, samples / "reviews.csv")
    run.lock()  # another process's training holds the run
    try:
        assert main(["train", str(run.config_path), "--resume"]) == 2  # by its own config.toml
        assert "is being trained right now by another process" in capsys.readouterr().err
        assert (
            main(["train", str(tmp_path / "run.toml"), "--resume", "--runs-dir", str(run.path.parent)]) == 2
        )
        assert "is being trained right now by another process" in capsys.readouterr().err  # by its origin
    finally:
        run.unlock()


# --------------------------------------------------------------------------- stops, disks, paths, secrets


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="SIGTERM to a child process is a POSIX test")
def test_sigterm_stops_like_ctrl_c_with_a_checkpoint(tiny_bert: Path, samples: Path, tmp_path: Path) -> None:
    config_path = _write_config(tmp_path / "run.toml", tiny_bert, samples / "reviews.csv")
    runs = tmp_path / "runs"
    proc = _cli(
        "-m", "desktop.cli", "train", str(config_path), "--runs-dir", str(runs),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    for line in proc.stderr:
        if line.startswith("step"):
            break
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    assert "SIGTERM" in err and "Stopped." in out and "Traceback" not in err
    run = RunDir(next(runs.iterdir()))
    assert run.status() == "stopped" and run.latest_checkpoint() is not None


def test_a_full_disk_at_a_checkpoint_is_one_sentence_and_leaves_no_partial_checkpoint(
    tiny_bert: Path,
    samples: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import desktop.core.training.callbacks as callbacks

    monkeypatch.setattr(callbacks, "free_bytes", lambda folder: 1024)
    config = _config(tmp_path / "run.toml", tiny_bert, samples / "reviews.csv")
    assert main(["train", str(config), "--runs-dir", str(tmp_path / "runs")]) == 1
    err = capsys.readouterr().err
    assert "Not enough disk space for the checkpoint at step 2: it needs about" in err
    assert "Traceback" not in err
    assert RunDir(next((tmp_path / "runs").iterdir())).checkpoints() == []


def test_an_unwritable_runs_folder_is_found_before_the_model_loads(
    tiny_bert: Path,
    samples: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import desktop.core.system.errors as errors

    def denied(*args: object, dir: str = "", **kwargs: object) -> object:
        raise PermissionError(13, "Permission denied", dir)

    monkeypatch.setattr(errors.tempfile, "TemporaryFile", denied)
    config = _config(tmp_path / "run.toml", tiny_bert, samples / "reviews.csv")
    assert main(["train", str(config), "--runs-dir", str(tmp_path / "locked")]) == 2
    err = capsys.readouterr().err
    assert "may not write in" in err and "Loading the tokenizer" not in err


def test_set_paths_are_relative_to_the_config_file(
    tiny_bert: Path,
    samples: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "mine.csv").write_bytes((samples / "reviews.csv").read_bytes())
    config = _config(folder / "run.toml", tiny_bert, folder / "other.csv")
    monkeypatch.chdir(tmp_path)  # somewhere else
    assert main(["validate", str(config), "--set", 'data.files=["mine.csv"]']) == 0
    assert main(["train", str(config), "--set", 'data.files=["mine.csv"]', "--runs-dir", "runs", *FAST]) == 0
    saved = next((tmp_path / "runs").iterdir()) / "config.toml"
    monkeypatch.chdir(samples)
    assert main(["validate", str(saved)]) == 0  # the saved config works from anywhere


@pytest.mark.usefixtures("cpu_torch_beside_rtx_4070")
def test_credentials_in_urls_are_never_printed(capsys: pytest.CaptureFixture) -> None:
    mirror = "https://alice:s3cret-token@mirror.example/whl/cu130"
    for args in (["--fix", "--dry-run"], ["--json"], []):
        main(["doctor", *args, "--index-url", mirror])
        out = capsys.readouterr()
        assert "s3cret" not in out.out + out.err
    assert main(["doctor", "--fix", "--dry-run", "--index-url", mirror]) == 0
    assert "https://***@mirror.example/whl/cu130" in capsys.readouterr().out


def test_commands_to_copy_are_quoted_for_the_shell() -> None:
    from desktop.core.system.secrets import shell_join

    args = ["finetune-studio-cli", "train", "/home/a b/run's/config.toml", "--resume"]
    assert (
        shell_join(args, windows=False)
        == "finetune-studio-cli train '/home/a b/run'\"'\"'s/config.toml' --resume"
    )
    assert shell_join(["x", r"C:\My Runs\config.toml"], windows=True) == r'x "C:\My Runs\config.toml"'


def test_a_checkpoint_that_looks_whole_but_does_not_load_falls_back_to_the_older_one(
    tiny_bert: Path, samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    import zipfile

    config, runs, run, older, newest = _crashed_with_two_checkpoints(tiny_bert, samples, tmp_path)
    with zipfile.ZipFile(newest / "optimizer.pt", "w") as archive:  # a whole zip, but not PyTorch's
        archive.writestr("optimizer/data.pkl", os.urandom(256))
    capsys.readouterr()

    assert (
        main(["train", str(config), "--runs-dir", str(runs), "--resume", "--set", "training.max_steps=8"])
        == 0
    )
    err = capsys.readouterr().err
    assert f"Resuming from {older.name}: {newest.name} could not be loaded" in err and "Traceback" not in err
    assert (run.checkpoints_dir / f"damaged-{newest.name}").is_dir() and run.status() == "finished"


@pytest.mark.usefixtures("cpu_torch_beside_rtx_4070")
def test_doctor_fix_refuses_while_the_app_runs(capsys: pytest.CaptureFixture) -> None:
    from tests.core.test_instance import _holder

    app = _holder("app")
    try:
        assert main(["doctor", "--fix"]) == 2
    finally:
        app.kill()
        app.wait()
    assert "cannot be replaced while it is in use" in capsys.readouterr().err
