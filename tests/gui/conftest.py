"""GUI fixtures: settings in a temp INI file, a fake training controller, the main window."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QObject, Signal

from desktop.core.environment.torch_probe import TorchInfo
from desktop.gui.app_support import workers
from desktop.gui.main_window import MainWindow
from desktop.shared_ui import Settings


class FakeController(QObject):
    """The TrainingController's signals and methods, driven by the test."""

    preparing = Signal(str)
    training_started = Signal(object)
    progress_changed = Signal(object)
    metrics_logged = Signal(object)
    memory_sampled = Signal(object)
    checkpoint_saved = Signal(object)
    settings_adjusted = Signal(object)
    training_finished = Signal(object)
    training_stopped = Signal(object)
    training_failed = Signal(object)
    running_changed = Signal(bool)
    awake_changed = Signal(bool)
    advice_given = Signal(object)
    sampled = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.started: list[tuple] = []
        self.stop_requests = 0
        self.stop_now_requests = 0
        self.running = False
        self.child = False  # a run in a child process (Stop now, ending at close)

    def is_running(self) -> bool:
        return self.running

    def start(self, config: object, resume: object = None) -> None:
        self.started.append((config, resume))
        self.running = True
        self.running_changed.emit(True)

    def stop(self) -> None:
        self.stop_requests += 1

    def stop_now(self) -> None:
        self.stop_now_requests += 1

    def in_child_process(self) -> bool:
        return self.child

    def end(self) -> None:
        self.running = False
        self.running_changed.emit(False)

    def wait(self) -> None:
        pass


@pytest.fixture(scope="session")
def chat_run(tiny_gpt2: Path, tmp_path_factory: pytest.TempPathFactory) -> object:
    """A finished two-step causal-LM run on the tiny GPT-2 and the instructions sample (read only)."""
    from desktop.core.training.run import run_training
    from tests.core.helpers import make_config

    samples = Path(__file__).resolve().parents[2] / "resources" / "samples"
    runs = tmp_path_factory.mktemp("runs")
    config = make_config("causal-lm", tiny_gpt2, [samples / "instructions.jsonl"], runs, max_steps=2)
    result = run_training(config, lambda event: None)
    assert result.status == "finished", result.failure
    return result


@pytest.fixture(scope="session", autouse=True)
def english(qapp) -> None:
    """The app's English translator (plural forms: "1 row", "2 rows"), installed as start-up does."""
    from desktop.shared_ui import install_translators

    install_translators(qapp, "en")


@pytest.fixture(autouse=True)
def english_children(monkeypatch: pytest.MonkeyPatch) -> None:
    """The language the window tells its child processes is English in every test, whatever an earlier
    test installed (a Chinese test that forgot to say so made the server child speak Chinese)."""
    from desktop import shared_ui

    monkeypatch.setattr(shared_ui, "current", "en")


@pytest.fixture(autouse=True)
def background_work_ends(qtbot: object) -> None:
    """Every test waits for the background tasks it started (a fit badge, a search): a thread still
    running when the process ends would abort it."""
    yield
    from desktop.gui.app_support import workers

    qtbot.waitUntil(lambda: not workers.any_running(), timeout=30_000)


@pytest.fixture(autouse=True)
def quick_torch_probe(monkeypatch: pytest.MonkeyPatch) -> TorchInfo:
    """The Environment page's probe answers at once (the real one imports torch in a child process)."""
    info = TorchInfo(installed=True, version="2.13.0+cpu")
    monkeypatch.setattr("desktop.gui.pages.environment_page.probe_torch", lambda: info)
    return info


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(tmp_path / "settings.ini")


@pytest.fixture
def fake_controller() -> FakeController:
    return FakeController()


@pytest.fixture(autouse=True)
def collected_in_the_gui_thread() -> None:
    """Widgets earlier tests left in reference cycles are collected now, on the GUI thread.

    Otherwise the next automatic collection may run in a worker thread (an estimate building a model,
    a training step) and delete Qt objects there, which deadlocks with the GUI thread (seen in CI:
    the worker held a Qt mutex in ~QObject waiting for the GIL; the GUI thread held the GIL waiting for
    that mutex)."""
    import gc

    from PySide6.QtCore import QCoreApplication, QEvent

    if QCoreApplication.instance() is not None:
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()


def _busy(task: object) -> bool:
    """Whether a background task's thread still runs (a task whose dialog is gone has no thread)."""
    try:
        return task.is_running()
    except RuntimeError:  # its C++ side was deleted with its parent
        return False


@pytest.fixture
def window(qtbot: object, settings: Settings, fake_controller: FakeController) -> MainWindow:
    win = MainWindow(settings, fake_controller)
    win.show()
    yield win
    # Closed here rather than by qtbot, after any fake run has ended: closing during a run would
    # open the modal "training is running" question and block the test.
    if fake_controller.running:
        fake_controller.end()
    # Background work the test left running (an estimate after Fit my GPU, a token count) ends first:
    # a worker thread that emits its result while the window's objects are being destroyed can
    # deadlock PySide (the thread holds Qt's connection lock and waits for the GIL, which the
    # destructor holds while it waits for that lock).
    qtbot.waitUntil(lambda: not any(_busy(task) for task in workers.running_tasks()), timeout=30_000)
    win.close()
    win.deleteLater()
