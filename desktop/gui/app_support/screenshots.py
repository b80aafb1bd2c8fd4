"""Render every page, dialog and the launcher's window with sample content and save PNGs:
``python -m desktop --screenshots DIR [--lang zh_CN]``.

The environment page is shown twice: as this machine really is, and with a simulated RTX 4070
beside a CPU-only PyTorch (the case the repair exists for). The data page shows the real bundled
sample; the train and export pages a synthetic run (made-up but realistic curves), so no
training is needed to take the pictures, except for image classification: a tiny ViT, made on the spot,
trains on the bundled shapes for a few seconds. Each page is also saved at 1024 x 576, the smallest
size the app is made for.
"""

from __future__ import annotations

import math
import random
import tempfile
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QDeadlineTimer, QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

from desktop.core.environment.gpu import GpuInfo, GpuReport
from desktop.core.environment.torch_probe import TorchInfo
from desktop.core.system.events import (
    LogEvent,
    MemoryEvent,
    PreparingEvent,
    ProgressEvent,
    RunResult,
    StartedEvent,
)
from desktop.core.system.messages import Msg
from desktop.gui.main_window import MainWindow
from desktop.shared_ui import Settings

NAMES = ["environment", "model-and-data", "memory-and-speed", "train", "export"]


def wait_for(signal: object, timeout_ms: int = 60_000) -> None:
    """Run the event loop until ``signal`` is emitted (at most ``timeout_ms``)."""
    loop = QEventLoop()
    signal.connect(loop.quit)
    QTimer.singleShot(timeout_ms, loop.quit)
    loop.exec()


def synthetic_run(window: MainWindow, folder: Path) -> None:
    """A made-up but realistic finished run on the Train and Export steps (``folder`` is its run)."""
    page, rng, total = window.train_page, random.Random(7), 120
    page.show_event(StartedEvent(str(folder), total, 255, 45, "cuda:0 (NVIDIA GeForce RTX 4070)"))
    for step in range(1, total + 1):
        page.show_event(
            ProgressEvent(
                step,
                total,
                step / 16,
                step * 0.35,
                (total - step) * 0.35,
                45 + rng.gauss(0, 0.6),
                1150 + rng.gauss(0, 15),
            )
        )
        if step % 5 == 0:
            loss = 0.08 + 0.62 * math.exp(-step / 35) + rng.gauss(0, 0.03)
            lr = 2e-4 * (1 - step / total)
            page.show_event(LogEvent(step, step / 16, {"loss": loss, "learning_rate": lr}))
            page.show_event(
                MemoryEvent(
                    step, "cuda:0", int(1.9e9 + rng.gauss(0, 2e7)), int(2.6e9), int(2.1e9), int(3.4e9)
                )
            )
        if step % 40 == 0:
            eval_loss = 0.12 + 0.5 * math.exp(-step / 40)
            page.show_event(LogEvent(step, step / 16, {"eval_loss": eval_loss, "eval_accuracy": 0.9}))
        training_on = QCoreApplication.translate("TrainPage", "Training on {device}")
        page.status.setText(training_on.format(device="cuda:0 (NVIDIA GeForce RTX 4070)"))
    page.plot_area.flush_plots()
    model = folder / "model"
    model.mkdir(parents=True, exist_ok=True)
    for name in ("model.safetensors", "tokenizer.json", "tokenizer_config.json"):
        (model / name).touch()
    (model / "config.json").write_text('{"architectures": ["BertForSequenceClassification"]}')
    metrics = {"train_loss": 0.2412, "eval_loss": 0.1569, "eval_accuracy": 0.9333, "eval_macro_f1": 0.9321}
    _synthetic_evaluation(folder)
    window.export_page.show_result(RunResult("finished", folder, model, metrics))
    panel = window.export_page.try_it
    panel.prompt.setPlainText("Great quality, and the battery lasts all day.")
    panel.compare_check.setChecked(True)
    panel.show_labels([("positive", 0.962), ("negative", 0.038)], [("negative", 0.507), ("positive", 0.493)])


def _gguf_export(window: MainWindow, folder: Path, out: Path, suffix: str) -> list[Path]:
    """The Export step after a (made-up) chat run was written as q8_0 GGUF and checked by llama.cpp;
    then the same run in the try-it chat and served."""
    from desktop.core.results.gguf_check import GgufVerification, PromptCheck
    from desktop.core.results.gguf_export import GgufExport
    from desktop.core.settings.config import RunConfig

    config = RunConfig(task="causal-lm")
    config.model.name = "Qwen/Qwen2.5-0.5B-Instruct"
    model = folder / "model"
    model.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(config.to_toml(), encoding="utf-8")
    (folder / "events.jsonl").write_text("", encoding="utf-8")
    (model / "config.json").write_text('{"architectures": ["Qwen2ForCausalLM"]}')
    export = window.export_page
    previous = export.result
    export.show_result(RunResult("finished", folder, model, {"train_loss": 1.0712, "eval_loss": 1.1893}))
    export.tabs.setCurrentIndex(export.tabs.count() - 1)
    export.format_combo.setCurrentIndex(export.format_combo.findData("gguf"))
    export.quant_combo.set_value("q8_0")
    dest = Path.home() / "Documents" / "Finetune Studio" / "gguf"
    export.dest_edit.setText(str(dest))
    gguf = dest / f"{folder.name}-Q8_0.gguf"
    answers = [PromptCheck(f"prompt {i}", [1, 2, 3], [1, 2, 3]) for i in range(5)]
    verification = GgufVerification("q8_0", True, answers, 3)
    from unittest import mock

    from desktop.core.results import gguf_export, ollama

    # The same picture on every machine: no Ollama installed, LM Studio's folder where it usually is.
    lm_studio = Path.home() / ".lmstudio" / "models"
    with (
        mock.patch.object(ollama, "state", lambda: ollama.OllamaState(None, False)),
        mock.patch.object(gguf_export, "lm_studio_folder", lambda: lm_studio),
    ):
        export.gguf_panel.show_export(
            GgufExport(gguf, 531_000_000, "q8_0", verification, dest / "Modelfile", dest / "README.md")
        )
    paths = [_grab(window, 4, out / f"5d-export-gguf{suffix}.png")]
    export.gguf_panel.setVisible(False)
    paths.append(_chat(window, out / f"5e-export-chat{suffix}.png"))
    paths.append(_serving(window, out / f"5f-export-serve{suffix}.png"))
    if previous is not None:
        export.show_result(previous)
    return paths


def _chat(window: MainWindow, path: Path) -> Path:
    """Try it on the (made-up) chat run: two turns under a system prompt, beside the base model."""
    from desktop.gui.widgets.chat_conversation import Reply, Turn

    panel = window.export_page.try_it
    panel.system_prompt.setPlainText("You are the support assistant of Acme phones. Answer briefly.")
    typed = panel.prompt.toPlainText()
    panel.prompt.setPlainText("How long does a repair take?")
    panel.compare_check.setChecked(True)
    panel.conversation.turns[:] = [
        Turn(
            "My phone stopped charging overnight. What should I try first?",
            Reply(
                "Sorry to hear that! First try another cable and wall adapter, then clean the port "
                "gently with a dry toothbrush: lint is the most common cause.",
                done=True,
            ),
            Reply("Phones can stop charging for many reasons. There are several things to try.", done=True),
        ),
        Turn(
            "Still nothing. Is it under warranty?",
            Reply(
                "If you bought it less than two years ago, yes. Book a free repair at acme.example/repair "
                "with your order number and we will send a prepaid box.",
                done=True,
            ),
            Reply("Warranty depends on the manufacturer and the country.", done=True),
        ),
    ]
    panel.show_conversation()
    window.export_page.tabs.setCurrentWidget(panel)
    path = _grab(window, 4, path)
    panel.conversation.turns.clear()
    panel.compare_check.setChecked(False)
    panel.prompt.setPlainText(typed)
    return path


def _serving(window: MainWindow, path: Path) -> Path:
    """The Serve tab while the (made-up) chat run is served, after a few requests; nothing is started."""
    from unittest import mock

    panel = window.export_page.serve
    controller = panel.controller
    with mock.patch.object(controller, "is_running", lambda: True):
        controller.running_changed.emit(True)
        controller.server_ready.emit(
            {
                "base_url": "http://127.0.0.1:8000/v1",
                "port": 8000,
                "model": "acme-support",
                "task": "causal-lm",
                "chat": True,
                "keyed": False,
                "device": "cuda",
            }
        )
        for route, seconds in [("models", 0.01), ("chat/completions", 1.84), ("chat/completions", 2.31)]:
            method = "GET" if route == "models" else "POST"
            controller.request_answered.emit(
                {"method": method, "path": f"/v1/{route}", "status": 200, "seconds": seconds}
            )
        window.export_page.tabs.setCurrentWidget(panel)
        path = _grab(window, 4, path)
    controller.running_changed.emit(False)
    controller.server_stopped.emit()
    return path


def _synthetic_evaluation(folder: Path) -> None:
    """The evaluation a run of the English sample keeps: base model -> fine-tuned, with a few mistakes."""
    import csv

    from desktop.core.settings.config import RunConfig
    from desktop.core.system.paths import resources_dir
    from desktop.core.training import evaluation

    config = RunConfig(task="classification")  # the run's config: the try-it panel's base model
    config.model.name = "bundled:all-MiniLM-L6-v2"
    folder.mkdir(parents=True, exist_ok=True)
    config.save(folder / "config.toml")
    with open(resources_dir() / "samples" / "reviews.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))[-45:]
    labels, rng = ["negative", "positive"], random.Random(5)
    texts = [row["text"] for row in rows]
    truth = [labels.index(row["label"]) for row in rows]

    def probabilities(right: float, sure: float) -> list[list[float]]:
        out = []
        for t in truth:
            p = rng.uniform(sure, 0.99) if rng.random() < right else rng.uniform(0.01, 0.45)
            out.append([1 - p, p] if t == 1 else [p, 1 - p])
        return out

    counts = {
        "train": {"negative": 52, "positive": 53},
        "eval": {label: sum(1 for t in truth if labels[t] == label) for label in labels},
    }
    tuned = evaluation.classify_report(labels, truth, probabilities(0.93, 0.7), texts, counts)
    base = evaluation.classify_report(labels, truth, probabilities(0.5, 0.5), texts, counts)
    evaluation.save(folder, tuned, base)


def _gaming_gpu_runs(window: MainWindow, out: Path, suffix: str) -> list[Path]:
    """The Train page on a gaming GPU: Windows paging a run into shared memory (the spill bar), and
    a run that ran out of memory and went on with less (the recovery bar and its log)."""
    from desktop.core.system.events import AdjustedEvent

    page, rng, gib, files = window.train_page, random.Random(11), 2**30, []
    device = "cuda:0 (NVIDIA GeForce RTX 4060 Laptop GPU)"
    page.begin()
    page.spill_bar.reset(windows=True)
    page.show_event(StartedEvent("run", 400, 1800, 200, device, oom_recovery=True))
    elapsed = 0.0
    for step in range(1, 31):
        elapsed += (1.2 if step <= 18 else 31.0) + rng.gauss(0, 0.05)
        page.show_event(
            ProgressEvent(step, 400, step / 40, elapsed, (400 - step) * 31.0, 8 / (elapsed / step), None)
        )
        reserved = min(7.6 * gib + step * 0.08 * gib, 9.7 * gib) if step > 15 else 6.9 * gib
        page.show_event(
            MemoryEvent(
                step,
                "cuda:0",
                int(reserved * 0.93),
                int(reserved),
                int(reserved),
                int(5.1 * gib),
                int(min(reserved, 7.9 * gib)),
                8 * gib,
            )
        )
        page.show_event(
            LogEvent(step, step / 40, {"loss": 1.9 * math.exp(-step / 30) + 0.4, "learning_rate": 2e-4})
        )
    page.plot_area.flush_plots()
    files.append(_grab(window, 3, out / f"4b-train-spill{suffix}.png"))

    page.begin()
    page.show_event(StartedEvent("run", 400, 1800, 200, device, oom_recovery=True))
    page.show_event(PreparingEvent(QCoreApplication.translate("TrainPage", "Preparing…")))
    page.show_event(
        AdjustedEvent(
            step=0,
            reason=Msg("The GPU ran out of memory in the backward pass."),
            changes={"training.batch_size": 8, "training.gradient_accumulation": 4},
            previous={"training.batch_size": 16, "training.gradient_accumulation": 2},
            described=[
                Msg(
                    "batch size {batch} -> {new_batch}, gradient accumulation {accumulation} -> "
                    "{new_accumulation} (the same {effective} examples per update)",
                    batch=16,
                    new_batch=8,
                    accumulation=2,
                    new_accumulation=4,
                    effective=32,
                )
            ],
        )
    )
    page.show_event(StartedEvent("run", 400, 1800, 200, device, oom_recovery=True))
    for step in range(1, 121):
        page.show_event(
            ProgressEvent(
                step, 400, step / 40, step * 1.4, (400 - step) * 1.4, 22.0 + rng.gauss(0, 0.4), None
            )
        )
        if step % 5 == 0:
            loss = 0.5 + 1.4 * math.exp(-step / 40) + rng.gauss(0, 0.03)
            page.show_event(LogEvent(step, step / 40, {"loss": loss, "learning_rate": 2e-4}))
    page.show_event(
        AdjustedEvent(
            step=120,
            reason=Msg("The GPU ran out of memory during evaluation."),
            changes={"training.eval_batch_size": 4},
            previous={"training.eval_batch_size": 0},
            described=[
                Msg("evaluation batch {old} -> {new} (evaluation only: training is unchanged)", old=8, new=4)
            ],
            resumed_from=120,
        )
    )
    page.plot_area.flush_plots()
    files.append(_grab(window, 3, out / f"4c-train-out-of-memory{suffix}.png"))
    return files


def _preference_run(window: MainWindow, out: Path, suffix: str) -> list[Path]:
    """The Train page during a DPO run (LoRA on a 0.5B chat model, 2,000 pairs): the loss falls from
    ln 2, the reward accuracy rises from a coin's 0.5 towards 0.95 and the margin grows, as the rejected
    answers' rewards fall; a third row of plots shows them."""
    page, rng, total, gib = window.train_page, random.Random(13), 250, 2**30
    device = "cuda:0 (NVIDIA GeForce RTX 4070)"
    page.begin(task="preference")
    page.show_event(StartedEvent("run", total, 2000, 200, device))
    for step in range(1, 181):
        page.show_event(
            ProgressEvent(
                step,
                total,
                step / total,
                step * 1.1,
                (total - step) * 1.1,
                7.3 + rng.gauss(0, 0.1),
                2900 + rng.gauss(0, 40),
            )
        )
        if step % 5 == 0:
            learned = 1 - math.exp(-step / 60)
            margin = 3.2 * learned + rng.gauss(0, 0.25)
            chosen = 0.45 * learned - 0.3 * learned**3 + rng.gauss(0, 0.08)
            accuracy = min(1.0, 0.5 + 0.45 * learned + rng.gauss(0, 0.03))
            metrics = {
                "loss": max(0.05, 0.693 - 0.5 * learned + rng.gauss(0, 0.03)),
                "learning_rate": 5e-5 * min(1.0, step / 20) * (1 - step / total),
                "rewards/chosen": chosen,
                "rewards/rejected": chosen - margin,
                "rewards/accuracies": round(accuracy * 16) / 16,  # a share of the 16 pairs logged
                "rewards/margins": margin,
                "logps/chosen": -182 - 4 * learned + rng.gauss(0, 1.5),
                "logps/rejected": -190 - 28 * learned + rng.gauss(0, 1.5),
            }
            page.show_event(LogEvent(step, step / total, metrics))
            used = int(6.2 * gib + rng.gauss(0, 3e7))
            page.show_event(
                MemoryEvent(
                    step, "cuda:0", used, int(7.4 * gib), int(7.1 * gib), int(2.3 * gib), used + gib, 12 * gib
                )
            )
        if step % 50 == 0:
            learned = 1 - math.exp(-step / 70)
            metrics = {
                "eval_loss": 0.693 - 0.42 * learned,
                "eval_rewards/accuracies": 0.5 + 0.4 * learned,
                "eval_rewards/margins": 2.7 * learned,
            }
            page.show_event(LogEvent(step, step / total, metrics))
    page.plot_area.flush_plots()
    window.statusBar().clearMessage()  # "Sample loaded: English reviews…" is no chat model's
    return [_grab(window, 3, out / f"4d-train-preference{suffix}.png")]


def synthetic_history(runs: Path) -> None:
    """Four past runs: two finished with different learning rates, one stopped, one crashed."""
    from desktop.core.runs.folders import RunDir
    from desktop.core.settings.config import RunConfig
    from desktop.core.system.events import FinishedEvent, StoppedEvent

    rng = random.Random(3)
    plans = [
        ("lr-2e-5", 300, 60, 0.914, "finished"),
        ("lr-5e-5", 300, 35, 0.933, "finished"),
        ("qwen-chat-lora", 800, 80, None, "stopped"),
        ("lr-1e-4", 300, 25, None, "crashed"),
    ]
    for name, total, decay, accuracy, status in plans:
        config = RunConfig(task="causal-lm" if "chat" in name else "classification")
        config.model.name = "Qwen/Qwen2.5-0.5B-Instruct" if "chat" in name else "bundled:all-MiniLM-L6-v2"
        config.data.files = ["chat.jsonl" if "chat" in name else "reviews.csv"]
        config.output.name = name
        run = RunDir.create(runs, config)
        run.append(StartedEvent(str(run.path), total, 255, 45, "cuda:0"))
        end = total if status == "finished" else total // 3
        for step in range(10, end + 1, 10):
            loss = 0.1 + 0.7 * math.exp(-step / decay) + rng.gauss(0, 0.02)
            run.append(ProgressEvent(step, total, step / 16, step * 0.3, None, 45.0, None))
            run.append(LogEvent(step, step / 16, {"loss": loss}))
        if accuracy:
            run.append(LogEvent(total, 3.0, {"eval_accuracy": accuracy}))
            run.append(FinishedEvent(total, "model", {}))
        elif status == "stopped":
            run.append(StoppedEvent(end, "checkpoint"))
        checkpoint = run.checkpoints_dir / f"checkpoint-{end}"
        checkpoint.mkdir(parents=True)
        (checkpoint / "trainer_state.json").write_text("{}")
        run.close()


def save_screenshots(out: Path, theme: str = "auto") -> list[Path]:
    """Save one PNG per page into ``out``; returns the files."""
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="fs-shots-"))
    window = MainWindow(Settings(tmp / "settings.ini"))
    window.resize(1280, 820)
    window.show()
    window.environment_page.check()
    wait_for(window.environment_page.checked)
    window.load_sample()
    wait_for(window.data_page.preview_loaded)
    wait_for(window.data_page.token_stats_loaded)
    synthetic_run(window, tmp / "runs" / "20261130-101500-classification-all-minilm-l6-v2")
    files = []
    real = (window.environment_page.report, window.environment_page.info)
    simulated = GpuReport(
        [GpuInfo("NVIDIA GeForce RTX 4070 (simulated)", "nvidia", (8, 9), 12 * 2**30, 11 * 2**30, 2)],
        "581.57",
        (13, 0),
        "nvml",
    )
    window.environment_page.show_findings(simulated, TorchInfo(installed=True, version="2.13.0+cpu"))
    files.append(_grab(window, 0, out / f"1b-environment-repair{'' if theme == 'auto' else '-' + theme}.png"))
    window.environment_page.show_findings(*real)
    window.update_options_context()  # as going to the step does: the estimate for the sample
    wait_for(window.options_page.estimate_updated)
    suffix = "" if theme == "auto" else "-" + theme
    for index, name in enumerate(NAMES):
        files.append(_grab(window, index, out / f"{index + 1}-{name}{suffix}.png"))
    export = window.export_page
    export.evaluation.show_cell(0, 1)  # negative rows the model called positive
    files.append(_grab(window, 4, out / f"5b-export-evaluation{suffix}.png"))
    export.tabs.setCurrentWidget(export.try_it)
    files.append(_grab(window, 4, out / f"5c-export-try-it-beside-the-base-model{suffix}.png"))
    files += _gguf_export(
        window, tmp / "runs" / "20261202-091500-causal-lm-qwen2.5-0.5b-instruct", out, suffix
    )
    export.tabs.setCurrentWidget(export.evaluation)
    export.evaluation.show_errors()
    from desktop.gui.dialogs.runs_dialog import RunsDialog

    synthetic_history(tmp / "history")
    dialog = RunsDialog(tmp / "history", window)
    dialog.resize(1100, 640)
    dialog.show()
    wait_for(dialog.listed)
    dialog.select(*[info.name for info in dialog.infos if "lr-" in info.name])
    wait_for(dialog.curves_shown)
    QApplication.processEvents()
    path = out / f"6-runs{suffix}.png"
    dialog.grab().save(str(path))
    files.append(path)
    dialog.close()
    files += _dialogs(window, out, suffix)
    files += _setup_window(tmp, out, suffix)
    for index, name in enumerate(NAMES):  # the smallest size the app is made for
        window.resize(*SMALL)
        files.append(_grab(window, index, out / f"{index + 1}-{name}-{SMALL[0]}x{SMALL[1]}{suffix}.png"))
    window.resize(1280, 1000)  # tall enough for the bars and the memory plot
    files += _gaming_gpu_runs(window, out, suffix)
    files += _preference_run(window, out, suffix)
    window.resize(1280, 820)
    from desktop.gui.app_support.picture_screenshots import pictures

    files += pictures(window, tmp, out, suffix, _grab, wait_for)
    settle()
    window.close()
    return files


SMALL = (1024, 576)
"""A 1366 x 768 laptop screen at 125% scaling, less the taskbar: every page must fit it."""


def _dialogs(window: MainWindow, out: Path, suffix: str) -> list[Path]:
    """The model browser, the model sources dialog and a download, as the user opens them."""
    from desktop.core.hub.downloads import Progress
    from desktop.core.settings.config import RunConfig
    from desktop.gui.dialogs.hub_settings_dialog import HubSettingsDialog
    from desktop.gui.dialogs.model_browser_dialog import ModelBrowser
    from desktop.gui.widgets.download_panel import DownloadDialog

    files = []
    browser = ModelBrowser(RunConfig(task="causal-lm"), gpu_free=11 * 2**30, ram=16 * 2**30, parent=window)
    browser.resize(1000, 560)
    browser.show()
    settle()  # every "Fit here" worked out (the catalogue's models: offline)
    QApplication.processEvents()
    files.append(_save(browser, out / f"7-browser{suffix}.png"))
    browser.close()
    settings = HubSettingsDialog(window)
    settings.show()
    QApplication.processEvents()
    files.append(_save(settings, out / f"8-model-sources{suffix}.png"))
    settings.close()
    title = QCoreApplication.translate("DatasetPickerWidget", "Download {dataset}").format(
        dataset="lansinuote/ChnSentiCorp"
    )
    download = DownloadDialog(title, window)
    download.show()
    panel = download.panel
    panel.progress.setVisible(True)
    panel.cancel_button.setVisible(True)
    panel.show_progress(Progress(done=310 * 2**20, total=988 * 2**20, speed=12.5 * 2**20))
    QApplication.processEvents()
    files.append(_save(download, out / f"9-download{suffix}.png"))
    download.close()
    return files


def _setup_window(tmp: Path, out: Path, suffix: str) -> list[Path]:
    """The launcher's setup window: installing, and after a failed download."""
    from desktop.core.system.messages import msg
    from desktop.launcher.runtime import Bundle, Options, Runtime
    from desktop.launcher.window import SetupWindow
    from desktop.shared_ui import shown

    wheel = tmp / "finetune_studio-0.3.0-py3-none-any.whl"
    wheel.write_bytes(b"")
    window = SetupWindow(Runtime(tmp / "runtime"), Bundle(tmp / "uv", wheel), Options(), tmp, True)
    window.show()
    window.show_progress(0.42, "torch")
    window.log.appendPlainText("Downloading torch (2.5 GiB)")
    QApplication.processEvents()
    files = [_save(window, out / f"launcher-setup{suffix}.png")]
    message = msg("Could not download the packages: the network or the package server is not reachable.")
    hint = msg("Check the internet connection (or the proxy), or set a mirror, then try again.")
    window.show_failure(shown(message), shown(hint), "error: dns error: failed to lookup address", False)
    QApplication.processEvents()
    files.append(_save(window, out / f"launcher-failed{suffix}.png"))
    window.close()
    return files


def _save(widget: object, path: Path) -> Path:
    widget.grab().save(str(path))
    return path


def settle(timeout_ms: int = 30_000) -> None:
    """Let the background work the pages started (a fit badge, an estimate) end before the app quits."""
    from desktop.gui.app_support import workers

    deadline = QDeadlineTimer(timeout_ms)
    while workers.any_running() and not deadline.hasExpired():
        loop = QEventLoop()
        QTimer.singleShot(50, loop.quit)
        loop.exec()


def _grab(window: MainWindow, index: int, path: Path) -> Path:
    window.stack.setCurrentIndex(index)
    window.steps.blockSignals(True)
    window.steps.setCurrentRow(index)
    window.steps.blockSignals(False)
    window.page_title.setText(window.pages[index].title)
    window.page_subtitle.setText(window.pages[index].subtitle)
    window.update_navigation()
    window.banner.setVisible(False)
    window.train_page.plot_area.reveal_plots()
    loop = QEventLoop()  # a page that reflows when shown lays out in a few turns of the event loop
    QTimer.singleShot(100, loop.quit)
    loop.exec()
    window.grab().save(str(path))
    return path
