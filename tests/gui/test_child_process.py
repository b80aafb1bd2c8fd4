"""Runs in a child process as the window sees them: the same signals, Stop now, a child killed from outside,
several GPUs on the Memory & speed page, and run folders imported into Run history."""

from __future__ import annotations

import importlib.util
import os
import signal
import sys
from pathlib import Path

import psutil
import pytest

from desktop.core.runs.folders import RunDir
from desktop.core.settings.config import RunConfig
from desktop.core.system.events import LogEvent, ProgressEvent, StartedEvent
from desktop.gui.controllers.training_controller import TrainingController
from desktop.gui.main_window import MainWindow
from desktop.shared_ui import Key, Settings


def _config(tmp_path: Path, model: Path, data: Path, steps: int) -> RunConfig:
    config = RunConfig()
    config.model.name = str(model)
    config.data.files = [str(data)]
    config.training.max_steps, config.training.batch_size, config.training.max_length = steps, 4, 32
    config.training.logging_steps, config.training.save_steps = 1, 2
    config.output.runs_dir = str(tmp_path / "runs")
    config.launch.separate_process = True
    return config


@pytest.mark.slow
def test_a_child_process_run_feeds_the_same_signals(qtbot, tiny_bert: Path, samples: Path, tmp_path) -> None:
    controller = TrainingController()
    seen: dict[str, list] = {"started": [], "progress": [], "logs": []}
    controller.training_started.connect(seen["started"].append)
    controller.progress_changed.connect(seen["progress"].append)
    controller.metrics_logged.connect(seen["logs"].append)
    with qtbot.waitSignal(controller.training_finished, timeout=120_000) as finished:
        controller.start(_config(tmp_path, tiny_bert, samples / "reviews.csv", 4))
    assert controller.in_child_process()
    result = finished.args[0]
    assert result.status == "finished" and (result.model_dir / "config.json").is_file()
    assert isinstance(seen["started"][0], StartedEvent)
    assert [e.step for e in seen["progress"]] == [1, 2, 3, 4] and isinstance(
        seen["progress"][0], ProgressEvent
    )
    assert all(isinstance(e, LogEvent) for e in seen["logs"]) and seen["logs"]


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_a_child_killed_from_outside_is_a_failed_run_and_the_window_goes_on(
    qtbot, tiny_bert: Path, samples: Path, tmp_path: Path, monkeypatch
) -> None:
    from tests.core.test_awake import fake_inhibitor

    record = fake_inhibitor(tmp_path, monkeypatch)  # the computer is kept awake: released by the crash too
    window = MainWindow(Settings(tmp_path / "s.ini"), TrainingController())
    qtbot.addWidget(window)
    window.set_config(_config(tmp_path, tiny_bert, samples / "reviews.csv", 100000))
    controller = window.controller
    with qtbot.waitSignal(controller.progress_changed, timeout=120_000):
        controller.start(window.current_config())
    awake = window.train_page.awake
    assert record.is_file() and awake.text() == "Kept awake" and "stays awake" in awake.toolTip()
    inhibitor = psutil.Process(controller.awake._inhibitor.pid)
    worker = next(
        p for p in psutil.Process().children(recursive=True) if "desktop.worker" in " ".join(p.cmdline())
    )
    with qtbot.waitSignal(controller.training_failed, timeout=30_000) as failed:
        os.kill(worker.pid, signal.SIGKILL)  # what the out-of-memory killer does
    result = failed.args[0]
    assert "killed by the system (SIGKILL)" in result.failure.reason
    assert RunDir(result.run_dir).status() == "failed"
    page = window.train_page
    assert (
        not page.failure.isHidden()
        and "SIGKILL" in page.failure.reason.text()
        and page.start_button.isEnabled()
    )
    window.options_page.batch_size.setValue(3)  # the window still answers
    assert window.current_config().training.batch_size == 3
    assert not inhibitor.is_running() or inhibitor.status() == psutil.STATUS_ZOMBIE  # may sleep again
    assert page.awake.isHidden()


@pytest.mark.slow
def test_a_stopped_run_lets_the_computer_sleep_again_and_the_setting_turns_it_off(
    qtbot, tiny_bert: Path, samples: Path, tmp_path: Path, monkeypatch
) -> None:
    from tests.core.test_awake import fake_inhibitor

    record = fake_inhibitor(tmp_path, monkeypatch)
    window = MainWindow(Settings(tmp_path / "s.ini"), TrainingController())
    qtbot.addWidget(window)
    config = _config(tmp_path, tiny_bert, samples / "reviews.csv", 100000)
    config.launch.separate_process = False  # in the app's process
    window.set_config(config)
    controller = window.controller
    with qtbot.waitSignal(controller.progress_changed, timeout=120_000):
        controller.start(window.current_config())
    inhibitor = psutil.Process(controller.awake._inhibitor.pid)
    with qtbot.waitSignal(controller.training_stopped, timeout=60_000):
        window.train_page.stop_button.click()
    assert not inhibitor.is_running() or inhibitor.status() == psutil.STATUS_ZOMBIE
    record.unlink()
    window.menu_bar.keep_awake_action.setChecked(False)  # Settings › Keep the computer awake while training
    assert Settings(tmp_path / "s.ini").number(Key.KEEP_AWAKE, 1) == 0
    with qtbot.waitSignal(controller.training_finished, timeout=120_000):
        config.training.max_steps = 2
        controller.start(config)
    assert not record.exists() and window.train_page.awake.isHidden()


def test_stop_twice_ends_a_child_at_once(window: MainWindow, qtbot) -> None:
    controller = window.controller
    controller.child = True
    window.train_page.start_button.click()
    page = window.train_page
    page.stop_button.click()
    assert controller.stop_requests == 1 and page.stop_button.text() == "Stop now"
    assert page.stop_button.isEnabled() and "Stop now ends it at once" in page.status.text()
    page.stop_button.click()
    assert controller.stop_now_requests == 1 and not page.stop_button.isEnabled()
    controller.end()
    assert page.stop_button.text() == "Stop"


def test_closing_during_a_child_run_ends_it_at_once(window: MainWindow, qtbot, monkeypatch) -> None:
    from PySide6.QtWidgets import QMessageBox

    asked: list[str] = []

    def yes(parent, title, text, *args):
        asked.append(text)
        return QMessageBox.StandardButton.Yes

    monkeypatch.setattr(QMessageBox, "question", yes)
    window.controller.child = True
    window.train_page.start_button.click()
    window.close()
    assert "ended at once" in asked[0] and window.controller.stop_now_requests == 1
    assert window.isVisible()  # closes when the run has ended
    window.controller.end()
    qtbot.waitUntil(lambda: not window.isVisible())


def test_two_gpus_offer_processes_and_a_per_gpu_estimate(window: MainWindow, qtbot, tiny_gpt2) -> None:
    from desktop.core.settings.options import Capabilities

    page = window.options_page
    processes = page.processes
    assert (
        processes.gpu_count.isHidden() and processes.strategy.isHidden()
    )  # one GPU or none: nothing to choose
    config = RunConfig(task="causal-lm")
    config.model.name = str(tiny_gpt2)
    window.set_config(config)
    page.set_gpus(2)
    assert not processes.gpu_count.isHidden() and processes.gpu_count.maximum() == 2
    with qtbot.waitSignal(page.estimate_updated, timeout=60_000):
        page.set_context(window.current_config(), "Fake GPU", 8 * 2**30, Capabilities(cuda=True, bf16=True))
    one = page.estimate.current_estimate()
    processes.gpu_count.setValue(2)
    assert processes.separate_process.isChecked() and not processes.separate_process.isEnabled()
    assert "across the GPUs" in page.effective.text()
    ddp = page.estimate.current_estimate()
    processes.strategy.setCurrentIndex(processes.strategy.findData("fsdp"))
    fsdp = page.estimate.current_estimate()
    assert ddp.weights == one.weights and ddp.gradients == 2 * one.gradients  # DDP's buckets
    assert fsdp.weights * 2 >= one.weights > fsdp.weights and fsdp.optimizer < one.optimizer
    launch = window.current_config().launch
    assert (launch.num_processes, launch.strategy, launch.child) == (2, "fsdp", True)
    deepspeed = processes.strategy.model().item(processes.strategy.findData("deepspeed-zero3"))
    assert deepspeed.isEnabled() == (
        importlib.util.find_spec("deepspeed") is not None and sys.platform != "win32"
    )


def test_an_imported_run_folder_is_listed_with_its_curve(
    window: MainWindow, qtbot, tmp_path, app_home
) -> None:
    from tests.gui.test_runs import _opened, _run

    _run(app_home / "runs", "made-here")
    elsewhere = _run(tmp_path / "cluster" / "runs", "on-the-cluster")
    dialog = _opened(window, qtbot)
    with qtbot.waitSignal(dialog.listed, timeout=30_000):
        dialog.import_run(elsewhere.path)
    assert dialog.infos[0].name.endswith("on-the-cluster")
    with qtbot.waitSignal(dialog.curves_shown):
        dialog.select(dialog.infos[0].name)
    assert dialog.plot.count(dialog.infos[0].name) >= 1
    assert (elsewhere.path / "config.toml").is_file()  # copied, not moved


def test_export_as_a_job_writes_the_folder_for_the_machines_asked_for(
    window: MainWindow, qtbot, tmp_path: Path, monkeypatch
) -> None:
    from PySide6.QtWidgets import QFileDialog

    with qtbot.waitSignal(window.data_page.preview_loaded, timeout=30_000):
        window.load_sample()
    monkeypatch.setattr(window.job_export, "ask_shape", lambda gpus: (4, 2))
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(tmp_path))
    with qtbot.waitSignal(window.job_exported, timeout=60_000) as written:
        window.options_page.processes.job_button.click()
    folder = written.args[0]
    assert folder.parent == tmp_path and folder.name.endswith("-job")
    assert (folder / "data" / "reviews.csv").is_file() and (folder / "launch.sh").is_file()
    assert "#SBATCH --nodes=2" in (folder / "job.sbatch").read_text(encoding="utf-8")
    assert "num_processes: 4" in (folder / "accelerate.yaml").read_text(encoding="utf-8")
