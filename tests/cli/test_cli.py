"""The CLI as a user runs it: init, validate, preview, train, runs, Ctrl-C and resume, the worker."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from desktop.cli import main
from desktop.core.settings.config import load_config

ROOT = Path(__file__).resolve().parents[2]
POSITIVE = ["非常好用", "物超所值", "质量很好", "值得推荐", "让人惊喜"]
NEGATIVE = ["两天就坏了", "太让人失望了", "做工粗糙", "总是闪退", "态度很差"]
THINGS = ["手机", "耳机", "电脑", "相机", "台灯", "水杯"]


def _gbk_csv(path: Path) -> Path:
    lines = ["用户留言,结果"]
    for thing in THINGS:
        lines += [f"这个{thing}{p}，我很喜欢。,好评" for p in POSITIVE]
        lines += [f"这个{thing}{n}，不推荐。,差评" for n in NEGATIVE]
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode("gbk"))
    return path


def _fast(*extra: str) -> list[str]:
    settings = [
        "training.max_steps=12",
        "training.batch_size=8",
        "training.learning_rate=1e-2",
        "training.max_length=48",
        "training.logging_steps=4",
    ]
    return [arg for s in (*settings, *extra) for arg in ("--set", s)]


@pytest.mark.slow
def test_init_then_train_on_gbk_chinese_csv(
    tiny_bert: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    from transformers import AutoModelForSequenceClassification

    data = _gbk_csv(tmp_path / "评论.csv")
    config_path = tmp_path / "run.toml"
    assert (
        main(
            [
                "init",
                "--task",
                "classification",
                "--model",
                str(tiny_bert),
                "--data",
                str(data),
                "-o",
                str(config_path),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "text         <- 用户留言  (by content)" in out and "label        <- 结果  (by content)" in out
    text = config_path.read_text(encoding="utf-8")
    assert 'files = ["评论.csv"]' in text and "# Peak learning rate." in text

    runs = tmp_path / "runs"
    assert main(["train", str(config_path), "--runs-dir", str(runs), *_fast()]) == 0
    out = capsys.readouterr().out
    model_dir = next(runs.iterdir()) / "model"
    assert f"Model saved in {model_dir}" in out
    model = AutoModelForSequenceClassification.from_pretrained(model_dir)
    assert set(model.config.label2id) == {"好评", "差评"}

    assert main(["runs", "--runs-dir", str(runs)]) == 0
    assert "finished" in capsys.readouterr().out


def test_the_next_commands_are_quoted_to_paste(
    tmp_path: Path, samples: Path, capsys: pytest.CaptureFixture
) -> None:
    import shlex

    config_path = tmp_path / "my runs" / "run one.toml"
    config_path.parent.mkdir()
    args = ["init", "--task", "seq2seq", "--model", "t5-small", "--data", str(samples / "translation.tsv")]
    assert main([*args, "-o", str(config_path)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("Next:"))
    pasted = line.split("then")[1].strip()  # finetune-studio-cli train '<path>'
    assert shlex.split(pasted) == ["finetune-studio-cli", "train", str(config_path)]


def test_init_refuses_to_overwrite(tmp_path: Path, samples: Path, capsys: pytest.CaptureFixture) -> None:
    config_path = tmp_path / "run.toml"
    config_path.write_text("keep me", encoding="utf-8")
    code = main(
        [
            "init",
            "--task",
            "seq2seq",
            "--model",
            "t5-small",
            "--data",
            str(samples / "translation.tsv"),
            "-o",
            str(config_path),
        ]
    )
    assert code == 2 and config_path.read_text(encoding="utf-8") == "keep me"
    assert "--force" in capsys.readouterr().err


def test_validate_reports_every_problem_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    config_path = tmp_path / "run.toml"
    config_path.write_text(
        'schema_version = "1.0"\ntask = "clasification"\n[training]\nbatch_size = 0\n', encoding="utf-8"
    )
    assert main(["validate", str(config_path)]) == 2
    err = capsys.readouterr().err
    for field in ("task:", "model.name:", "data:", "training.batch_size:"):
        assert field in err


def test_validate_and_preview_a_good_config(
    tiny_gpt2: Path, samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    config_path = tmp_path / "run.toml"
    assert (
        main(
            [
                "init",
                "--task",
                "causal-lm",
                "--model",
                str(tiny_gpt2),
                "--data",
                str(samples / "instructions.jsonl"),
                "-o",
                str(config_path),
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["validate", str(config_path)]) == 0
    assert "OK. 180 training rows, 20 for evaluation" in capsys.readouterr().out
    assert main(["preview", str(config_path), "--rows", "2"]) == 0
    out = capsys.readouterr().out
    assert "instruction  <- instruction  (from the config)" in out  # init wrote the guess into the config
    assert "1. instruction:" in out and "Tokens (text): min" in out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"text": "ok", "label": "a"}\n{"text": "bad", "label": \n', "line 2 is not valid JSON"),
        (
            '{"text": "ok", "label": "a"}\n{"text": "", "label": "b"}\n{"text": "x", "label": "b"}\n',
            "1 row has an empty text",
        ),
    ],
)
def test_bad_data_exits_2_without_a_run_folder(
    tiny_bert: Path, tmp_path: Path, content: str, message: str, capsys: pytest.CaptureFixture
) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text(content, encoding="utf-8")
    config_path = tmp_path / "run.toml"
    config_path.write_text(
        f'schema_version = "1.0"\n[model]\nname = "{tiny_bert.as_posix()}"\n[data]\nfiles = ["data.jsonl"]\n',
        encoding="utf-8",
    )
    runs = tmp_path / "runs"
    assert main(["train", str(config_path), "--runs-dir", str(runs)]) == 2
    assert message in capsys.readouterr().err
    assert not runs.exists()


def _cli(*args: str, **kwargs: object) -> subprocess.Popen:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, *args], cwd=ROOT, env=env, text=True, encoding="utf-8", **kwargs)


def _write_config(path: Path, model: Path, data: Path) -> Path:
    path.write_text(
        f'schema_version = "1.0"\n[model]\nname = "{model.as_posix()}"\n'
        f'[data]\nfiles = ["{data.as_posix()}"]\n'
        "[training]\nmax_steps = 100000\nbatch_size = 4\nmax_length = 32\nlogging_steps = 1\n",
        encoding="utf-8",
    )
    return path


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process is a POSIX test")
def test_ctrl_c_stops_with_checkpoint_and_resume_continues(
    tiny_bert: Path, samples: Path, tmp_path: Path
) -> None:
    config_path = _write_config(tmp_path / "run.toml", tiny_bert, samples / "reviews.csv")
    runs = tmp_path / "runs"
    proc = _cli(
        "-m",
        "desktop.cli",
        "train",
        str(config_path),
        "--runs-dir",
        str(runs),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    for line in proc.stderr:  # wait until training really runs
        if line.startswith("step"):
            break
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Stopped." in out and "--resume" in out
    run = next(runs.iterdir())
    checkpoint = sorted((run / "checkpoints").glob("checkpoint-*"))[-1]
    stopped_at = int(checkpoint.name.split("-")[1])

    # The same command with --resume continues that run (here with a nearer end).
    code = main(
        [
            "train",
            str(config_path),
            "--runs-dir",
            str(runs),
            "--resume",
            "--set",
            f"training.max_steps={stopped_at + 3}",
        ]
    )
    assert code == 0
    events = [json.loads(line) for line in (run / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [e["resumed_from_step"] for e in events if e["event"] == "started"] == [0, stopped_at]
    after = [e["step"] for e in events if e["event"] == "progress"][-3:]
    assert after == [stopped_at + 1, stopped_at + 2, stopped_at + 3]
    assert events[-1]["event"] == "finished" and (run / "model" / "config.json").is_file()
    assert load_config(run / "config.toml").training.max_steps == stopped_at + 3


@pytest.mark.slow
def test_worker_prints_json_events_and_stops_on_request(
    tiny_bert: Path, samples: Path, tmp_path: Path
) -> None:
    config_path = _write_config(tmp_path / "run.toml", tiny_bert, samples / "reviews.csv")
    text = (
        config_path.read_text(encoding="utf-8") + f'[output]\nruns_dir = "{(tmp_path / "runs").as_posix()}"\n'
    )
    config_path.write_text(text, encoding="utf-8")
    proc = _cli(
        "-m",
        "desktop.worker",
        str(config_path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    events = []
    for line in proc.stdout:
        events.append(json.loads(line))
        if events[-1]["event"] == "progress" and events[-1]["step"] == 3:
            proc.stdin.write("stop\n")
            proc.stdin.flush()
    assert proc.wait(timeout=60) == 130
    kinds = [e["event"] for e in events]
    assert kinds[0] == "preparing" and "started" in kinds and kinds[-1] == "stopped"
    assert events[-1]["step"] >= 3 and events[-1]["checkpoint"].endswith(f"checkpoint-{events[-1]['step']}")


@pytest.mark.slow
def test_doctor_reports_this_cpu_machine_as_json(capsys: pytest.CaptureFixture) -> None:
    import desktop.core.environment.gpu as gpu

    if gpu.detect_gpus().nvidia:
        pytest.skip("this machine has an NVIDIA GPU; the verdict differs")
    assert main(["doctor", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["gpus"]["gpus"] == [] and report["torch"]["installed"] is True
    assert report["verdict"]["kind"] == "no_gpu" and report["verdict"]["ok"] is True
    assert "the CPU build is right" in report["verdict"]["headline"]


@pytest.mark.usefixtures("cpu_torch_beside_rtx_4070")
def test_doctor_fix_dry_run_with_a_faked_gpu(capsys: pytest.CaptureFixture) -> None:
    assert main(["doctor"]) == 1  # needs attention
    assert "CPU-only PyTorch on a machine with NVIDIA GeForce RTX 4070" in capsys.readouterr().out
    assert main(["doctor", "--fix", "--dry-run", "--index-url", "https://mirror.example/cu130"]) == 0
    command = capsys.readouterr().out.strip().splitlines()[-1]
    assert command.endswith("torch==2.13.0+cu130") and "--index-url https://mirror.example/cu130" in command


@pytest.mark.slow
def test_export_command(
    tiny_bert: Path, samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    config_path = tmp_path / "run.toml"
    config_path.write_text(
        f'[model]\nname = "{tiny_bert.as_posix()}"\n'
        f'[data]\nfiles = ["{(samples / "reviews.csv").as_posix()}"]\n'
        "[training]\nmax_steps = 4\nbatch_size = 8\nmax_length = 32\n",
        encoding="utf-8",
    )
    runs = tmp_path / "runs"
    assert main(["train", str(config_path), "--runs-dir", str(runs)]) == 0
    name = next(runs.iterdir()).name
    capsys.readouterr()
    assert main(["export", name, str(tmp_path / "out"), "--runs-dir", str(runs)]) == 0
    assert "Verified: reloaded in a fresh process" in capsys.readouterr().out
    assert main(["export", name, str(tmp_path / "out"), "--runs-dir", str(runs)]) == 2  # not empty
    err = capsys.readouterr().err
    assert "is not empty" in err and "--force" in err  # the way to say yes here
    assert main(["export", "no-such-run", str(tmp_path / "x"), "--runs-dir", str(runs)]) == 2


def _train_gbk(model: Path, tmp_path: Path, *settings: str) -> Path:
    """``init`` and ``train`` on the GBK reviews, as a user does; the runs folder."""
    data = _gbk_csv(tmp_path / "评论.csv")
    config_path = tmp_path / "run.toml"
    init = ["init", "--task", "classification", "--model", str(model), "--data", str(data)]
    assert main([*init, "-o", str(config_path)]) == 0
    runs = tmp_path / "runs"
    assert main(["train", str(config_path), "--runs-dir", str(runs), *_fast(*settings)]) == 0
    return runs


def test_train_says_how_it_went_on_after_running_out_of_memory(
    tiny_bert: Path, tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch
    from transformers import Trainer

    step = Trainer.training_step

    def out_of_memory_at_step_6(self: Trainer, *args: object, **kwargs: object) -> object:
        if self.state.global_step == 6 and self.args.per_device_train_batch_size > 4:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return step(self, *args, **kwargs)

    monkeypatch.setattr(Trainer, "training_step", out_of_memory_at_step_6)
    runs = _train_gbk(tiny_bert, tmp_path, "training.save_steps=4")

    err = capsys.readouterr().err
    assert (
        "The GPU ran out of memory in the forward pass. Going back to the checkpoint at step 4 with:" in err
    )
    assert "batch size 8 -> 4, gradient accumulation 1 -> 2 (the same 8 examples per update)" in err
    saved = load_config(next(runs.iterdir()) / "config.toml").training
    assert (saved.batch_size, saved.gradient_accumulation) == (4, 2)


def test_predict_on_a_gbk_csv_keeps_its_rows_and_encoding_and_evaluate_shows_the_confusions(
    tiny_bert: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    runs = _train_gbk(tiny_bert, tmp_path)
    run = next(runs.iterdir())
    held_out = tmp_path / "新评论.csv"
    held_out.write_bytes(
        "用户留言,日期\r\n这个台灯非常好用,2026-11-01\r\n总是闪退，太让人失望了,2026-11-02\r\n".encode("gbk")
    )
    capsys.readouterr()

    assert main(["predict", run.name, str(held_out), "--runs-dir", str(runs)]) == 0
    out = tmp_path / "新评论.predicted.csv"
    assert "2 rows predicted from column 用户留言" in capsys.readouterr().out
    lines = out.read_bytes().decode("gbk").splitlines()  # still GBK, as Excel in China writes it
    assert lines[0] == "用户留言,日期,prediction,probability"
    assert lines[1].startswith("这个台灯非常好用,2026-11-01,") and len(lines) == 3
    assert {line.split(",")[2] for line in lines[1:]} <= {"好评", "差评"}
    assert main(["predict", run.name, str(held_out), "--runs-dir", str(runs)]) == 2  # never overwritten
    assert "--force" in capsys.readouterr().err

    assert main(["evaluate", str(run)]) == 0
    shown = capsys.readouterr().out
    assert "evaluation rows" in shown and "Confusion matrix" in shown and "好评" in shown
    assert " -> " in shown.splitlines()[1]  # accuracy: base -> fine-tuned


def test_evaluate_shows_a_generators_figures_and_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    from desktop.core.system.events import FinishedEvent
    from desktop.core.training import evaluation
    from tests.core.helpers import fake_run

    run = fake_run(tmp_path / "runs", "chat", FinishedEvent(20, "model", {}))
    sample = {"prompt": "你好", "reference": "你好！有什么可以帮你？", "output": "你好！"}
    evaluation.save(
        run.path,
        evaluation.GenerationReport("causal-lm", 12, 1.2, 3.32, samples=[sample]),
        evaluation.GenerationReport("causal-lm", 12, 2.5, 12.18, samples=[{**sample, "output": "？？"}]),
    )
    assert main(["evaluate", str(run.path)]) == 0
    out = capsys.readouterr().out
    assert "2.500 -> 1.200" in out and "12.180 -> 3.320" in out
    assert "base model: ？？" in out and "fine-tuned: 你好！" in out and "BLEU" not in out


def test_move_data_moves_the_folder_and_refuses_while_a_window_runs(
    capsys: pytest.CaptureFixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desktop.core.system.paths import data_dir
    from tests.core.test_instance import _holder

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "no-cache"))
    old = data_dir()
    (old / "runs" / "run-1").mkdir(parents=True)
    (old / "runs" / "run-1" / "config.toml").write_text("task = 'classification'\n", encoding="utf-8")
    target = tmp_path / "D" / "Studio"

    window = _holder("app")  # a Finetune Studio window that runs from the folder
    try:
        assert main(["move-data", str(target)]) == 2
    finally:
        window.kill()
        window.wait()
    assert "cannot move now" in capsys.readouterr().err and data_dir() == old

    assert main(["move-data", str(target)]) == 0
    assert f"The data folder is now {target}" in capsys.readouterr().out
    assert data_dir() == target and (target / "runs" / "run-1" / "config.toml").is_file()
    assert not (old / "runs").exists()


@pytest.mark.slow
def test_export_as_gguf(
    tiny_gpt2: Path, tiny_bert: Path, samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    import gguf

    from tests.conftest import llama_cpp_installed

    runs = tmp_path / "runs"
    for task, model, data in (
        ("causal-lm", tiny_gpt2, samples / "instructions.jsonl"),
        ("classification", tiny_bert, samples / "reviews.csv"),
    ):
        config_path = tmp_path / f"{task}.toml"
        config_path.write_text(
            f'task = "{task}"\n[model]\nname = "{model.as_posix()}"\n'
            f'[data]\nfiles = ["{data.as_posix()}"]\n'
            "[training]\nmax_steps = 2\nbatch_size = 4\nmax_length = 64\n",
            encoding="utf-8",
        )
        assert main(["train", str(config_path), "--runs-dir", str(runs)]) == 0
    chat, classifier = sorted(runs.iterdir(), key=lambda p: "classification" in p.name)
    capsys.readouterr()
    args = ["--runs-dir", str(runs), "--format", "gguf", "--quant", "q8_0"]
    assert main(["export", chat.name, str(tmp_path / "gguf"), *args]) == 0
    written = tmp_path / "gguf" / f"{chat.name}-Q8_0.gguf"
    out = capsys.readouterr().out
    assert f"Exported to {written}" in out and "ollama create" in out
    checked = llama_cpp_installed()  # CI has llama.cpp (and fails without it): there the file is checked
    assert ("Verified by llama.cpp: " if checked else "Not verified: llama.cpp") in out
    assert f"FROM ./{written.name}\n" in (tmp_path / "gguf" / "Modelfile").read_text(encoding="utf-8")
    reader = gguf.GGUFReader(written)
    assert reader.fields["general.architecture"].contents() == "gpt2" and len(reader.tensors) > 10
    assert main(["export", chat.name, str(tmp_path / "gguf"), *args]) == 2  # never replaced unasked
    assert "already exists" in capsys.readouterr().err
    assert main(["export", chat.name, str(tmp_path / "gguf"), *args, "--force"]) == 0
    assert main(["export", classifier.name, str(tmp_path / "no"), *args]) == 2
    assert "GGUF is for decoder chat models" in capsys.readouterr().err and not (tmp_path / "no").exists()


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="the fake ollama is a script with a shebang")
def test_export_to_ollama_makes_q4_there_without_llama_cpp(
    tiny_gpt2: Path,
    samples: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    fake_ollama: Path,
    ollama_server: None,
) -> None:
    from desktop.core.results import gguf_check

    config_path = tmp_path / "chat.toml"
    config_path.write_text(
        f'task = "causal-lm"\n[model]\nname = "{tiny_gpt2.as_posix()}"\n'
        f'[data]\nfiles = ["{(samples / "instructions.jsonl").as_posix()}"]\n'
        "[training]\nmax_steps = 1\nbatch_size = 4\nmax_length = 64\n",
        encoding="utf-8",
    )
    assert main(["train", str(config_path), "--runs-dir", str(tmp_path / "runs")]) == 0
    (run,) = (tmp_path / "runs").iterdir()
    monkeypatch.setattr(gguf_check, "llama_cpp_available", lambda: False)
    capsys.readouterr()
    args = ["--runs-dir", str(tmp_path / "runs"), "--format", "gguf", "--quant", "q4_k_m", "--ollama"]
    assert main(["export", run.name, str(tmp_path / "gguf"), *args]) == 0
    out, err = capsys.readouterr()
    name = f"{run.name}-q4_k_m".lower()
    assert "Ollama will make q4_K_M from the f16 file" in err and "ollama: success" in err
    assert (
        f"Added to Ollama: ollama run {name}" in out
        and (tmp_path / "gguf" / f"{run.name}-F16.gguf").is_file()
    )
    assert (tmp_path / "gguf" / "args.txt").read_text() == (
        f"create {name} --quantize q4_K_M -f {tmp_path / 'gguf' / 'Modelfile'}"
    )


@pytest.mark.parametrize("buffered", [True, False], ids=["buffered", "unbuffered"])
def test_output_piped_into_a_reader_that_stops_early_ends_quietly(buffered: bool, tmp_path: Path) -> None:
    """`finetune-studio-cli evaluate RUN | head -2`: the reader closes the pipe; that is no error. Into a
    pipe, Python keeps short output in a buffer until the end: the closed pipe is found there."""
    (tmp_path / "runs").mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    command = [
        sys.executable,
        "-m",
        "desktop.cli",
        "--lang",
        "en",
        "runs",
        "--runs-dir",
        str(tmp_path / "runs"),
    ]
    cli = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    cli.stdout.close()  # before the CLI has printed a line (it takes a second to start)

    said = cli.stderr.read()
    assert cli.wait(timeout=60) == 0 and said == ""


def test_init_with_the_config_in_another_folder_gives_no_false_warning(
    tiny_vit: Path,
    samples: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import shutil

    shutil.copytree(tiny_vit, tmp_path / "models" / "vit")
    monkeypatch.chdir(tmp_path)
    args = [
        "init",
        "--task",
        "image-classification",
        "--model",
        "models/vit",
        "--data",
        str(samples / "shapes"),
    ]

    assert main([*args, "-o", "configs/run.toml"]) == 0

    assert "warning" not in capsys.readouterr().err  # models/vit is right from here, and from configs/
    assert 'name = "../models/vit"' in (tmp_path / "configs" / "run.toml").read_text(encoding="utf-8")
