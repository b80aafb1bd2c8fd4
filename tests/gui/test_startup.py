"""Start-up stays light: opening the window imports no heavy library."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"

CODE = """
import sys
from PySide6.QtWidgets import QApplication
app = QApplication([])
from desktop.app import apply_theme
from desktop.gui.main_window import MainWindow
from desktop.shared_ui import Settings
apply_theme(app, "light")
window = MainWindow(Settings(sys.argv[1]))
window.show()
app.processEvents()
print("heavy:", *sorted(m for m in sys.modules if m.split(".")[0] in
      ("torch", "transformers", "datasets", "peft", "accelerate", "pandas")), flush=True)
window.close()
# Then as the app ends (desktop/app.py): the Environment page's probe of PyTorch, which the first turn
# of the event loop may have started, can outlast the close's grace on a busy machine; left running
# at the interpreter's exit its thread aborted the process ("QThread: Destroyed while ... running").
from desktop.gui.app_support.workers import leave
sys.exit(leave(0))
"""


def test_opening_the_window_imports_no_heavy_library(tmp_path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run(
        [sys.executable, "-c", CODE, str(tmp_path / "s.ini")],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    )
    assert out.stdout.strip() == "heavy:"


JOURNEY = """
import sys
from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication
app = QApplication([])
from desktop.gui.main_window import MainWindow
from desktop.shared_ui import Settings
import desktop.gui.app_support.warmup
desktop.gui.app_support.warmup.IDLE_S = 3600  # this test is about what the steps themselves import

def wait(signal):
    loop = QEventLoop()
    signal.connect(loop.quit)
    QTimer.singleShot(120_000, loop.quit)
    loop.exec()

window = MainWindow(Settings(sys.argv[1]))
window.show()
page = window.data_page
page.model_picker.model_edit.setText(sys.argv[2])
page.model_picker.model_edit.editingFinished.emit()
page.dataset_picker.data_edit.setText(sys.argv[3])
QTimer.singleShot(0, page.dataset_picker.data_edit.editingFinished.emit)
wait(page.token_stats_loaded)
print("stats:", page.token_stats.stats_label.text().splitlines()[0])
QTimer.singleShot(0, lambda: window.go_to(2))
wait(window.options_page.estimate_updated)
print("estimate:", window.options_page.estimate.fit_label.text().splitlines()[0])
print("heavy:", " ".join(sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "transformers"))))
window.close()
from desktop.gui.app_support.workers import leave
sys.exit(leave(0))  # as the app ends: a warm-up or probe still running must not abort the exit
"""


@pytest.mark.slow
def test_token_statistics_and_the_estimate_leave_pytorch_out_of_the_window(tmp_path, tiny_bert) -> None:
    """They are answered by the helper process: importing PyTorch would freeze the window (issue 14)."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "FINETUNE_STUDIO_HOME": str(tmp_path / "home")}
    data = SAMPLES / "reviews.csv"
    out = subprocess.run(
        [sys.executable, "-c", JOURNEY, str(tmp_path / "s.ini"), str(tiny_bert), str(data)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=300,
    )
    lines = dict(line.split(": ", 1) for line in out.stdout.splitlines() if ": " in line)
    assert lines["stats"].startswith("text: min ")  # the statistics were shown
    assert "GB" in lines["estimate"] or "MB" in lines["estimate"]  # and the estimate
    assert lines["heavy"] == ""


def test_a_windowed_app_without_stdout_writes_to_its_log(app_home, monkeypatch) -> None:
    import sys

    from desktop.app import windowed_streams

    monkeypatch.setattr(sys, "stdout", None)  # pythonw on Windows
    monkeypatch.setattr(sys, "stderr", None)
    windowed_streams()
    print("progress bar text")  # tqdm and warnings would raise without a stream
    sys.stdout.flush()
    assert "progress bar text" in (app_home / "logs" / "app-output.log").read_text(encoding="utf-8")


@pytest.mark.slow
def test_the_readme_screenshots_render(tmp_path, qtbot) -> None:
    from desktop.gui.app_support.screenshots import save_screenshots

    files = save_screenshots(tmp_path / "shots", "light")
    assert {f.name for f in files} >= {"2-model-and-data-light.png", "5-export-light.png", "6-runs-light.png"}
    assert all(f.stat().st_size > 5_000 for f in files)  # a picture, not an empty window
    names = {f.name for f in files}
    assert {"7-browser-light.png", "launcher-failed-light.png", "4-train-1024x576-light.png"} <= names
    assert "4d-train-preference-light.png" in names  # a DPO run: the reward plots
    assert {
        "2c-model-and-data-pictures-light.png",
        "5g-export-try-a-picture-light.png",
    } <= names  # a real run
