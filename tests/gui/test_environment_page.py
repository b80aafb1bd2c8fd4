"""The Environment page: real probe here, faked GPUs for the verdict and the repair."""

from __future__ import annotations

import importlib.metadata
import sys

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from desktop.core.environment.gpu import GpuInfo, GpuReport
from desktop.core.environment.repair import RepairResult
from desktop.core.environment.torch_probe import GpuProof, TorchDevice, TorchInfo, probe_torch
from desktop.gui.pages.environment_page import EnvironmentPage, check_environment

RTX_4070 = GpuReport(
    [GpuInfo("NVIDIA GeForce RTX 4070", "nvidia", (8, 9), 12 * 2**30, 10 * 2**30, 3)],
    "581.57",
    (13, 0),
    "nvml",
)
CPU_TORCH = TorchInfo(installed=True, version="2.13.0+cpu")
CUDA_TORCH = TorchInfo(
    installed=True,
    version="2.13.0+cu130",
    cuda_build="13.0",
    cuda_available=True,
    torch_devices=[TorchDevice("NVIDIA GeForce RTX 4070", (8, 9))],
)


def _page(qtbot, check) -> EnvironmentPage:
    page = EnvironmentPage(check=check)
    qtbot.addWidget(page)
    with qtbot.waitSignal(page.checked, timeout=60_000):
        page.check()
    return page


@pytest.mark.slow
def test_this_machine_is_cpu_only_and_that_is_right(qtbot, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("desktop.gui.pages.environment_page.probe_torch", probe_torch)  # the real probe
    page = _page(qtbot, check_environment)
    if page.report.nvidia:
        pytest.skip("this machine has an NVIDIA GPU")
    assert page.verdict.text() == "No NVIDIA GPU: training runs on the CPU, and the CPU build is right."
    assert page.install_button.isHidden() and page.verdict_now.ok
    assert page.info.version.split("+")[0] in page.torch_label.text()


def test_cpu_build_on_a_gpu_machine_offers_the_repair(qtbot) -> None:
    page = _page(qtbot, lambda: (RTX_4070, CPU_TORCH))
    assert page.verdict.text().startswith("CPU-only PyTorch on a machine with NVIDIA GeForce RTX 4070")
    assert not page.install_button.isHidden()
    assert (
        "torch==2.13.0+cu130" in page.plan_label.text()
        and "download.pytorch.org/whl/cu130" in page.plan_label.text()
    )
    cards = [page.gpu_grid.itemAt(i).widget() for i in range(page.gpu_grid.count())]
    assert len(cards) == 1 and "RTX 4070" in cards[0].findChild(type(page.verdict), "cardTitle").text()


def test_mirror_setting_changes_the_plan(qtbot) -> None:
    page = _page(qtbot, lambda: (RTX_4070, CPU_TORCH))
    page.index_edit.setText("https://mirrors.example.cn/pytorch/cu130")
    page.index_edit.editingFinished.emit()
    assert page.plan.index_url == "https://mirrors.example.cn/pytorch/cu130"
    assert "mirrors.example.cn" in page.plan_label.text()


def test_repair_streams_progress_and_proves_the_gpu(qtbot, monkeypatch: pytest.MonkeyPatch) -> None:
    page = _page(qtbot, lambda: (RTX_4070, CPU_TORCH))

    def fake_run_repair(plan, on_line, on_progress, cancel):
        for share, line in (
            (0.15, "Resolved 1 package"),
            (0.7, "Prepared 1 package"),
            (1.0, "Installed 1 package"),
        ):
            on_line(line)
            on_progress(share)
        return RepairResult(True, 0, probe=CUDA_TORCH, message="Installed torch==2.13.0+cu130.")

    monkeypatch.setattr("desktop.gui.controllers.repair_controller.run_repair", fake_run_repair)
    monkeypatch.setattr(
        "desktop.core.environment.torch_probe.prove_gpu",
        lambda python: GpuProof(True, "NVIDIA GeForce RTX 4070", 0.12),
    )
    monkeypatch.delitem(sys.modules, "torch", raising=False)  # as in the app, which never imports torch
    with qtbot.waitSignal(page.repair.repair_finished, timeout=30_000):
        qtbot.mouseClick(page.install_button, Qt.MouseButton.LeftButton)
    assert page.progress.value() == 100
    assert page.log.toPlainText().splitlines() == [
        "Resolved 1 package",
        "Prepared 1 package",
        "Installed 1 package",
    ]
    assert "Proved: a matrix multiplication ran on NVIDIA GeForce RTX 4070" in page.result_label.text()
    assert page.verdict_now.kind == "ok" and page.install_button.isHidden()


def test_repair_with_torch_loaded_asks_for_a_restart(qtbot) -> None:
    import torch  # noqa: F401  (loaded, as after a training run)

    page = _page(qtbot, lambda: (RTX_4070, CPU_TORCH))
    with qtbot.waitSignal(page.restart_requested, timeout=1000):
        page.start_repair()
    assert not page.repair.is_running()


def test_copy_diagnostics(qtbot) -> None:
    page = _page(qtbot, lambda: (RTX_4070, CPU_TORCH))
    qtbot.mouseClick(page.copy_button, Qt.MouseButton.LeftButton)
    text = QGuiApplication.clipboard().text()
    assert "Finetune Studio diagnostics" in text and "NVIDIA GeForce RTX 4070" in text and "581.57" in text
    assert "Verdict: cpu_build_with_gpu" in text and "'version': '2.13.0+cpu'" in text  # the probe's
    assert f"  torch {importlib.metadata.version('torch')}\n" in text  # and what this environment has


def test_install_waits_for_runs_exports_and_other_windows(qtbot, window, fake_controller) -> None:
    from tests.core.test_instance import _holder

    page = window.environment_page
    page.show_findings(RTX_4070, CPU_TORCH)
    fake_controller.running = True
    fake_controller.running_changed.emit(True)
    assert (
        not page.install_button.isEnabled() and "training run is in progress" in page.install_button.toolTip()
    )
    fake_controller.running = False
    fake_controller.running_changed.emit(False)
    assert page.install_button.isEnabled()

    other = _holder("app")  # another Finetune Studio window
    try:
        page.start_repair()
    finally:
        other.kill()
        other.wait()
    assert "still running elsewhere" in page.result_label.text() and not page.repair.is_running()


def _launched_app(tmp_path, monkeypatch: pytest.MonkeyPatch):
    """This app as the launcher starts it: from a runtime the launcher made, told the launcher's path (a
    script that writes the arguments it was started with into the file returned)."""
    from desktop.core.environment.swap_request import LAUNCHER_VARIABLE, RUNTIME_MARKER

    told = tmp_path / "launcher-arguments"
    launcher = tmp_path / "FinetuneStudio"
    launcher.write_text(f"#!/bin/sh\necho \"$@\" > '{told}'\n", encoding="utf-8")
    launcher.chmod(0o755)
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    (runtime / RUNTIME_MARKER).write_text("{}", encoding="utf-8")
    monkeypatch.setattr(sys, "prefix", str(runtime))
    monkeypatch.setenv(LAUNCHER_VARIABLE, str(launcher))
    return told


def test_install_in_the_launchers_runtime_restarts_through_the_launcher(
    qtbot, window, monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    """The app cannot swap the PyTorch it runs on: it asks the launcher, which does it at its start."""
    from PySide6.QtWidgets import QMessageBox

    from desktop.core.environment.swap_request import pending_swap
    from desktop.core.system.paths import data_dir

    started = _launched_app(tmp_path, monkeypatch)
    asked: list[str] = []
    monkeypatch.setattr(
        QMessageBox,
        "question",
        lambda parent, title, text: asked.append(text) or QMessageBox.StandardButton.Yes,
    )
    page = window.environment_page
    page.show_findings(RTX_4070, CPU_TORCH)

    page.start_repair()

    qtbot.waitUntil(started.exists, timeout=10_000)  # the launcher was started
    request = pending_swap(data_dir())
    assert request is not None and request.requirement == page.plan.requirements[0]
    assert request.index_url == page.plan.index_url and "cu" in request.requirement
    assert "keeps working until the new one is complete" in asked[0]
    assert not window.isVisible() and not page.repair.is_running()  # nothing was installed in place


def test_moving_the_data_folder_restarts_through_the_launcher_which_moves_it(
    qtbot, window, monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    from PySide6.QtWidgets import QFileDialog, QMessageBox

    told = _launched_app(tmp_path, monkeypatch)
    drive = tmp_path / "D"
    (drive / "Games").mkdir(parents=True)
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *args: str(drive))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "cache" / "huggingface" / "hub").mkdir(parents=True)  # models downloaded before
    asked: list[str] = []

    def answer(box: QMessageBox) -> QMessageBox.StandardButton:
        asked.append(f"{box.text()} | {box.checkBox().text()}")
        box.checkBox().setChecked(True)  # the user takes the models along
        return QMessageBox.StandardButton.Yes

    monkeypatch.setattr(QMessageBox, "exec", answer)

    window.menu_bar.move_data_requested.emit()

    qtbot.waitUntil(told.exists, timeout=10_000)
    target = drive / "FinetuneStudio"  # beside what the drive holds, not among it
    assert told.read_text(encoding="utf-8").split() == ["--data-folder", str(target), "--with-model-cache"]
    assert "a rename on the same drive" in asked[0] and "download their models again" in asked[0]
    assert not window.isVisible()
