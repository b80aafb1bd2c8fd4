"""The main window: the five steps in a sidebar, the current page, Back / Next and a status bar."""

from __future__ import annotations

import copy
import os
import sys
from pathlib import Path

from PySide6.QtCore import QProcess, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from desktop.core.runs.folders import RunDir, newest_crashed
from desktop.core.settings.config import RunConfig, load_config, with_changes
from desktop.core.system.errors import StudioError
from desktop.core.system.events import AdjustedEvent, RunResult
from desktop.core.system.paths import resources_dir
from desktop.gui.app_support.workers import BackgroundTask, shutdown_all
from desktop.gui.controllers.training_controller import TrainingController
from desktop.gui.pages.base import WizardPage
from desktop.gui.pages.data_page import DataPage
from desktop.gui.pages.environment_page import EnvironmentPage
from desktop.gui.pages.export_page import ExportPage
from desktop.gui.pages.options_page import OptionsPage
from desktop.gui.pages.train_page import TrainPage
from desktop.shared_ui import Key, Settings, error_text, shown

SAMPLE_CONFIG = resources_dir() / "samples" / "classification.toml"
PAGE_AFTER_CONFIG_MS = 30
"""The sample's config is put on every page, and its page shown this much later: both in one turn of the
event loop (then the page's first layout and paint in the next) froze the window 50-70 ms in the
responsiveness bench; between them the window handles input."""


class MainWindow(QMainWindow):
    """The wizard.

    Args:
        settings: Where UI state is kept.
        controller: Runs training; a fake with the same signals works for tests.
    """

    resume_offer_checked = Signal()
    """The runs folder was looked at for a crashed run to offer (whether or not one was offered)."""
    job_exported = Signal(object)
    """A job folder was written: its path."""

    def __init__(
        self, settings: Settings, controller: object | None = None, repair_on_start: bool = False
    ) -> None:
        super().__init__()
        from desktop.core.system.lazy import load_libraries_outside_the_lock
        from desktop.core.system.processes import switch_the_lock_often, wake_the_window_promptly
        from desktop.gui.app_support.import_hook import read_sources_cheaply

        switch_the_lock_often()  # the window's thread waits less for Python's lock at each of its slots
        wake_the_window_promptly()  # and less for a core each time it wakes (Linux)
        load_libraries_outside_the_lock()  # background imports (PyTorch, Arrow) never freeze the window
        read_sources_cheaply()  # nor does PySide6's look at each of their modules keep its source
        self.setWindowTitle(self.tr("Finetune Studio"))
        self.setMinimumSize(QSize(800, 520))  # a 1366 x 768 laptop at 125% has about 1024 x 576
        self.settings = settings
        self._sample_page = QTimer(self, singleShot=True, interval=PAGE_AFTER_CONFIG_MS)
        self._sample_page.timeout.connect(self._show_sample_page)
        self._sample_from = 0
        self.controller = controller or TrainingController(self)
        self.config = RunConfig()
        self._closing = False

        self.environment_page = EnvironmentPage(settings)
        self.data_page = DataPage(settings)
        self.options_page = OptionsPage()
        self.options_page.job_export_requested.connect(self.export_job)
        self._job_task: BackgroundTask | None = None
        self.train_page = TrainPage(self.controller, self.current_config)
        self.export_page = ExportPage()
        from desktop.gui.app_support.collector import Collector
        from desktop.gui.app_support.warmup import Warmup

        self.collector = Collector(self)  # cycles collected on this thread, the whole heap when idle
        self.collector.start()
        self.data_warmup = Warmup(self, "data", self.collector.idle_s_now, imported=self.collector.freeze)
        QTimer.singleShot(0, self.data_warmup.want)  # once the user leaves the window alone a moment
        self.warmup = Warmup(
            self,
            "training",
            self.collector.idle_s_now,
            running=self.controller.is_running,
            imported=self.collector.freeze,
            window_busy=lambda: self.train_page.plot_area.making_plots,
        )
        self.data_page.token_stats_loaded.connect(self.warmup.want)  # a model and data: training is near
        self.collector.importing = lambda: "importing" in (self.data_warmup.state, self.warmup.state)
        self.train_page.plot_area.idle_s = self.data_page.token_stats.idle_s = self.collector.idle_s_now
        self.data_warmup.done.connect(self.data_page.token_stats.prepare_histogram)  # pyqtgraph is imported
        self.pages: list[WizardPage] = [
            self.environment_page,
            self.data_page,
            self.options_page,
            self.train_page,
            self.export_page,
        ]

        self.steps = QListWidget()
        self.steps.setObjectName("steps")
        self.steps.setFixedWidth(200)
        for i, page in enumerate(self.pages, 1):
            item = QListWidgetItem(f"{i}   {page.title}")
            item.setSizeHint(QSize(180, 40))
            self.steps.addItem(item)
        self.steps.currentRowChanged.connect(self._on_steps_current_row_changed)
        self.stack = QStackedWidget()
        for page in self.pages:
            # On a small screen (1024 x 576) a page scrolls instead of squeezing its fields.
            scroll = QScrollArea()
            scroll.setWidgetResizable(True)
            scroll.setFrameShape(QFrame.Shape.NoFrame)
            scroll.setWidget(page)
            self.stack.addWidget(scroll)
            page.validity_changed.connect(self._update_navigation)
        self.page_title = QLabel()
        self.page_title.setObjectName("pageTitle")
        self.page_subtitle = QLabel()
        self.page_subtitle.setObjectName("hint")
        self.banner = QLabel()
        self.banner.setObjectName("banner")
        self.banner.setWordWrap(True)
        self.banner.setVisible(False)
        self.resume_bar = QFrame()
        self.resume_bar.setObjectName("banner")
        self.resume_text = QLabel()
        self.resume_text.setWordWrap(True)
        self.resume_yes = QPushButton(self.tr("Resume"))
        self.resume_yes.clicked.connect(self._on_resume_yes_clicked)
        self.resume_no = QPushButton(self.tr("Not now"))
        self.resume_no.clicked.connect(self._on_resume_no_clicked)
        bar = QHBoxLayout(self.resume_bar)
        bar.addWidget(self.resume_text, 1)
        bar.addWidget(self.resume_yes)
        bar.addWidget(self.resume_no)
        self.resume_bar.setVisible(False)
        self._crashed: RunDir | None = None
        self.runs_dialog = None
        self.reason = QLabel()
        self.reason.setObjectName("reason")
        self.reason.setWordWrap(True)
        self.back_button = QPushButton(self.tr("&Back"))
        self.back_button.clicked.connect(lambda: self.go_to(self.stack.currentIndex() - 1))
        self.next_button = QPushButton(self.tr("&Next"))
        self.next_button.setObjectName("primary")
        self.next_button.setDefault(True)
        self.next_button.clicked.connect(lambda: self.go_to(self.stack.currentIndex() + 1))

        nav = QHBoxLayout()
        nav.addWidget(self.reason, 1)
        nav.addWidget(self.back_button)
        nav.addWidget(self.next_button)
        content = QVBoxLayout()
        content.setContentsMargins(20, 16, 20, 12)
        content.addWidget(self.page_title)
        content.addWidget(self.page_subtitle)
        content.addSpacing(6)
        content.addWidget(self.banner)
        content.addWidget(self.resume_bar)
        content.addWidget(self.stack, 1)
        content.addLayout(nav)
        body = QHBoxLayout()
        body.setContentsMargins(0, 0, 0, 0)
        body.setSpacing(0)
        body.addWidget(self.steps)
        body.addLayout(content, 1)
        central = QWidget()
        central.setLayout(body)
        self.setCentralWidget(central)
        self._build_menu()

        self.data_page.sample_requested.connect(self.load_sample)
        self.train_page.retry_requested.connect(self._on_train_page_retry_requested)
        self.train_page.fit_requested.connect(self._on_train_page_fit_requested)
        self.train_page.undo_requested.connect(self._on_train_page_undo_requested)
        self.controller.settings_adjusted.connect(self._on_controller_settings_adjusted)
        self.environment_page.checked.connect(self._update_banner)
        self.environment_page.restart_requested.connect(self.restart_for_repair)
        # PyTorch is not swapped while a run or an export uses it.
        self.controller.running_changed.connect(self._update_install_block)
        self.export_page.busy_changed.connect(self._update_install_block)
        self._repair_on_start = repair_on_start
        if repair_on_start:
            self.environment_page.checked.connect(self._on_environment_page_checked)
        self.controller.training_finished.connect(self._on_controller_training_finished)
        self.controller.running_changed.connect(self._on_controller_running_changed)
        self.controller.training_failed.connect(
            lambda result: self.statusBar().showMessage(self.tr("Training did not finish."))
        )
        self._restore()

    # ------------------------------------------------------------------ menu and actions

    def _build_menu(self) -> None:
        file_menu = self.menuBar().addMenu(self.tr("&File"))
        sample = QAction(self.tr("Try the &sample"), self)
        sample.triggered.connect(self.load_sample)
        open_action = QAction(self.tr("&Open run config…"), self, shortcut=QKeySequence.StandardKey.Open)
        open_action.triggered.connect(self._open_config)
        save_action = QAction(self.tr("&Save run config…"), self, shortcut=QKeySequence.StandardKey.Save)
        save_action.triggered.connect(self._save_config)
        quit_action = QAction(self.tr("&Quit"), self, shortcut=QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        for action in (sample, open_action, save_action):
            file_menu.addAction(action)
        file_menu.addSeparator()
        file_menu.addAction(quit_action)
        runs_menu = self.menuBar().addMenu(self.tr("&Runs"))
        history = QAction(self.tr("&Run history…"), self, shortcut=QKeySequence("Ctrl+R"))
        history.triggered.connect(self.show_runs)
        try_folder = QAction(self.tr("&Try a model folder…"), self)
        try_folder.triggered.connect(self._try_folder)
        runs_menu.addAction(history)
        runs_menu.addAction(try_folder)
        view_menu = self.menuBar().addMenu(self.tr("&View"))
        language_menu = view_menu.addMenu(self.tr("&Language"))
        self.language_actions = self._language_actions(language_menu)
        settings_menu = self.menuBar().addMenu(self.tr("&Settings"))
        sources_action = QAction(self.tr("Model &sources and tokens…"), self)
        sources_action.triggered.connect(self.open_hub_settings)
        settings_menu.addAction(sources_action)
        self.keep_awake_action = QAction(self.tr("&Keep the computer awake while training"), self)
        self.keep_awake_action.setCheckable(True)
        self.keep_awake_action.setChecked(bool(self.settings.number(Key.KEEP_AWAKE, 1)))
        self.keep_awake_action.toggled.connect(self._on_keep_awake_toggled)
        settings_menu.addAction(self.keep_awake_action)
        self.controller.keep_awake = self.keep_awake_action.isChecked()

    def _on_keep_awake_toggled(self, on: bool) -> None:
        self.settings.set_number(Key.KEEP_AWAKE, int(on))
        self.controller.keep_awake = on  # from the next run on

    def load_sample(self) -> None:
        """Preload the sample reviews and the bundled model, then show the data page (a moment later,
        unless the user has gone to another step meanwhile)."""
        self.set_config(load_config(SAMPLE_CONFIG))
        self._sample_from = self.stack.currentIndex()
        self._sample_page.start()
        self.statusBar().showMessage(
            self.tr("Sample loaded: English reviews with the English all-MiniLM-L6-v2 model.")
        )

    def _show_sample_page(self) -> None:
        if self.stack.currentIndex() == self._sample_from:
            self.go_to(1)

    def set_config(self, config: RunConfig) -> None:
        """Show ``config`` on every page."""
        self.config = copy.deepcopy(config)
        for page in self.pages:
            page.load_config(self.config)
        self._update_navigation()

    def current_page(self) -> WizardPage:
        """The page shown now."""
        return self.pages[self.stack.currentIndex()]

    def current_config(self) -> RunConfig:
        """The run config as the pages now say."""
        config = copy.deepcopy(self.config)
        for page in self.pages:
            page.apply_to(config)
        return config

    def _open_config(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, self.tr("Open run config"), "", self.tr("Run configs (*.toml)")
        )
        if not path:
            return
        try:
            self.set_config(load_config(path))
        except StudioError as exc:
            QMessageBox.warning(self, self.tr("Cannot open this config"), error_text(exc))

    def _save_config(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, self.tr("Save run config"), "run.toml", self.tr("Run configs (*.toml)")
        )
        if path:
            self.current_config().save(path, comments=True)
            self.statusBar().showMessage(self.tr("Saved {path}").format(path=path))

    # ------------------------------------------------------------------ navigation

    def go_to(self, index: int) -> None:
        """Show step ``index`` if every step before it is complete."""
        if 0 <= index < len(self.pages) and self._reachable(index):
            self.steps.setCurrentRow(index)

    def _furthest_allowed(self) -> int:
        for i, page in enumerate(self.pages):
            if page.problem():
                return i
        return len(self.pages) - 1

    def _reachable(self, index: int) -> bool:
        """Steps open in order; a running run's Train step and a model's Export step are always open."""
        page = self.pages[index]
        return (
            index <= self._furthest_allowed()
            or (page is self.train_page and self.controller.is_running())
            or (page is self.export_page and self.export_page.has_content())
        )

    def _on_steps_current_row_changed(self, row: int) -> None:
        if not self._reachable(row):
            self.steps.setCurrentRow(self.stack.currentIndex())
            return
        self.stack.setCurrentIndex(row)
        page = self.pages[row]
        self.page_title.setText(page.title)
        self.page_subtitle.setText(page.subtitle)
        if page is self.environment_page and page.info is None:
            # After the first paint: the check spawns a child process and loads NVML.
            QTimer.singleShot(100, page.check)
        if page is self.options_page:
            # The next step's plots, made while the user reads this one.
            self.train_page.plot_area.prepare_plots()
            self._give_options_their_context()
            self.options_page.set_train_rows(self.data_page.train_rows())
        if page is self.data_page:  # token statistics count what the max length set now would cut
            self.data_page.set_max_length(self.options_page.max_length.value())
        self._update_navigation()
        self._update_banner()

    def _give_options_their_context(self) -> None:
        """Tell the Memory & speed page which model and GPU its estimate is for."""
        from desktop.core.settings.options import Capabilities, installed

        env = self.environment_page
        gpus = env.report.nvidia if env.report else []
        info = env.info
        caps = Capabilities(
            cuda=bool(info and info.cuda_available),
            bf16=bool(info and info.bf16),
            bitsandbytes=installed("bitsandbytes"),
            triton=installed("triton"),
            flash_attn=installed("flash_attn"),
        )
        gpu = gpus[0] if gpus else None
        free = gpu.memory_free if gpu and gpu.memory_free else None
        self.options_page.set_gpus(len(gpus))
        self.options_page.set_context(self.current_config(), gpu.name if gpu else "", free, caps)
        self.data_page.set_gpu_free(free)

    def _language_actions(self, menu: object) -> dict[str, QAction]:
        """English, 简体中文, 繁體中文: each named as its readers write it; the one in use checked."""
        from PySide6.QtGui import QActionGroup

        from desktop.core.system.language import LANGUAGES, choose

        current = choose("", self.settings.text(Key.LANGUAGE))
        group = QActionGroup(self)
        actions = {}
        for code, name in LANGUAGES.items():
            action = QAction(name, self, checkable=True, checked=code == current)
            action.triggered.connect(lambda _=False, code=code: self.choose_language(code))
            group.addAction(action)
            menu.addAction(action)
            actions[code] = action
        return actions

    def choose_language(self, code: str) -> None:
        """Remember the language and offer to restart in it (every window is built in one language)."""
        if code == self.settings.text(Key.LANGUAGE):
            return
        self.settings.set_text(Key.LANGUAGE, code)
        answer = QMessageBox.question(
            self,
            self.tr("Language"),
            self.tr("The new language is used from the next start. Restart Finetune Studio now?"),
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        started = QProcess.startDetached(sys.executable, ["-m", "desktop", "--lang", code])
        if started[0] if isinstance(started, tuple) else started:
            self.close()

    def open_hub_settings(self) -> None:
        """Settings > Model sources: where models come from, and tokens (kept in the keyring)."""
        from desktop.gui.dialogs.hub_settings_dialog import HubSettingsDialog

        self.hub_settings = HubSettingsDialog(self)
        self.hub_settings.open()

    def _update_banner(self) -> None:
        result = self.environment_page.verdict_now
        show = result is not None and not result.ok and self.stack.currentIndex() != 0
        if result is not None:
            self.banner.setText(
                self.tr("{headline} See the Environment step to fix it.").format(
                    headline=shown(result.headline)
                )
            )
        self.banner.setVisible(show)

    def _on_environment_page_checked(self) -> None:
        if self._repair_on_start:
            self._repair_on_start = False
            self.environment_page.start_repair()

    def _update_install_block(self) -> None:
        reason = ""
        if self.controller.is_running():
            reason = self.tr("A training run is in progress: stop it first, then install PyTorch.")
        elif self.export_page.is_busy():
            reason = self.tr("An export is in progress: wait for it, then install PyTorch.")
        self.environment_page.set_blocked(reason)

    def restart_for_repair(self) -> None:
        """Start a fresh copy of the app that repairs PyTorch before anything imports it, then quit."""
        answer = QMessageBox.question(
            self,
            self.tr("Restart to install PyTorch"),
            self.tr(
                "PyTorch is in use by this window, so it cannot be replaced now. Restart the app and "
                "install the matching PyTorch first thing?"
            ),
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        # The new process waits for this one to end: its PyTorch DLLs stay locked until then.
        started = QProcess.startDetached(
            sys.executable, ["-m", "desktop", "--repair", "--wait-pid", str(os.getpid())]
        )
        if started[0] if isinstance(started, tuple) else started:
            self.close()
        else:
            QMessageBox.warning(
                self,
                self.tr("Could not restart"),
                self.tr("Close the app, then run: python -m desktop --repair"),
            )

    def _update_navigation(self) -> None:
        index = self.stack.currentIndex()
        problem = self.pages[index].problem()
        last = index == len(self.pages) - 1
        self.back_button.setEnabled(index > 0)
        self.next_button.setVisible(not last)
        running = self.controller.is_running()
        self.next_button.setEnabled(not problem and not (running and index == 3))
        self.reason.setText(shown(problem).splitlines()[0] if problem else "")
        for i in range(self.steps.count()):
            item = self.steps.item(i)
            enabled = self._reachable(i)
            flags = item.flags()
            item.setFlags(
                flags | Qt.ItemFlag.ItemIsEnabled if enabled else flags & ~Qt.ItemFlag.ItemIsEnabled
            )

    # ------------------------------------------------------------------ training

    def _on_controller_running_changed(self, running: bool) -> None:
        for page in (self.data_page, self.options_page):
            page.setEnabled(not running)
        self.statusBar().showMessage(self.tr("Training…") if running else "")
        self._update_navigation()
        if not running and self.runs_dialog is not None and self.runs_dialog.isVisible():
            self.runs_dialog.refresh()
        if not running and self._closing:
            self.close()

    def _on_train_page_fit_requested(self) -> None:
        """The run spilled out of the GPU: Memory & speed, with Fit my GPU applied to the current figures."""
        self.go_to(self.pages.index(self.options_page))
        self.options_page.estimate.fit_my_gpu()

    def _on_controller_settings_adjusted(self, event: AdjustedEvent) -> None:
        """The run went on with less memory: the next run starts with the settings that fit."""
        if event.changes:
            self.set_config(with_changes(self.current_config(), event.changes))

    def _on_train_page_undo_requested(self, previous: dict) -> None:
        """Back to the user's own settings for the next run."""
        self.set_config(with_changes(self.current_config(), previous))
        self.statusBar().showMessage(
            self.tr("Your own settings are back for the next run: {fields}.").format(
                fields=", ".join(previous)
            )
        )

    def _on_train_page_retry_requested(self, changes: dict) -> None:
        """Apply a remedy's changes to the config the pages show, then train again."""
        try:
            config = with_changes(self.current_config(), changes)
        except StudioError as exc:
            QMessageBox.warning(self, self.tr("Cannot apply this change"), error_text(exc))
            return
        self.set_config(config)
        self.statusBar().showMessage(
            self.tr("Changed {fields}; training again.").format(fields=", ".join(changes))
        )
        self.train_page.start_button.click()

    def _on_controller_training_finished(self, result: RunResult) -> None:
        self.export_page.show_result(result)
        self.statusBar().showMessage(
            self.tr("Training finished. The model is in {folder}").format(folder=result.model_dir)
        )

    # ------------------------------------------------------------------ jobs for other machines

    def export_job(self) -> None:
        """Write the run as a job folder (launch.sh, a Slurm script) in a folder the user picks."""
        if self._job_task is not None:
            return
        config = self.current_config()
        shape = self._ask_job_shape(config.launch.num_processes)
        if shape is None:
            return
        parent = QFileDialog.getExistingDirectory(self, self.tr("Where to write the job folder"))
        if not parent:
            return
        from desktop.core.training.jobs import export_job, job_folder_name

        dest = Path(parent) / job_folder_name(config, Path(parent))
        gpus, nodes = shape
        task = self._job_task = BackgroundTask(
            lambda: export_job(config, dest, num_processes=gpus, nodes=nodes), self
        )
        task.finished.connect(self._on_job_exported)
        task.failed.connect(self._on_job_failed)
        self.statusBar().showMessage(
            self.tr("Writing the job folder (the data and a local model are copied)…")
        )
        task.start()

    def _ask_job_shape(self, gpus: int) -> tuple[int, int] | None:
        """GPUs per machine and machines for the job (the other machine is often bigger than this one)."""
        from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QSpinBox

        dialog = QDialog(self)
        dialog.setWindowTitle(self.tr("Job for another machine or a cluster"))
        form = QFormLayout(dialog)
        per_node = QSpinBox(minimum=1, maximum=64, value=max(1, gpus))
        machines = QSpinBox(minimum=1, maximum=1024, value=1)
        form.addRow(self.tr("GPUs per machine:"), per_node)
        form.addRow(self.tr("Machines (for the Slurm script):"), machines)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(dialog.accept)
        buttons.rejected.connect(dialog.reject)
        form.addRow(buttons)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return per_node.value(), machines.value()

    def _on_job_exported(self, folder: Path) -> None:
        self._job_task = None
        self.statusBar().clearMessage()
        box = QMessageBox(self)
        box.setWindowTitle(self.tr("Job written"))
        box.setText(
            self.tr(
                "The job is in {folder}.\n\nOne machine: run launch.sh there. A Slurm cluster: sbatch "
                "job.sbatch. Its README says how to install the runtime. The run folder ends up in its runs "
                "folder: bring it back with Run history › Import run."
            ).format(folder=folder)
        )
        open_button = box.addButton(self.tr("Open folder"), QMessageBox.ButtonRole.ActionRole)
        box.addButton(QMessageBox.StandardButton.Close)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def clicked(button: object) -> None:
            if button is open_button:
                from PySide6.QtCore import QUrl
                from PySide6.QtGui import QDesktopServices

                QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))

        box.buttonClicked.connect(clicked)
        box.open()
        self.job_exported.emit(folder)

    def _on_job_failed(self, exc: object, detail: str) -> None:
        self._job_task = None
        self.statusBar().clearMessage()
        QMessageBox.warning(
            self,
            self.tr("The job was not written"),
            error_text(exc) if isinstance(exc, BaseException) else str(exc),
        )

    # ------------------------------------------------------------------ run history

    def runs_dir(self) -> Path:
        """The folder the runs go to (the config's, else the app's data folder)."""
        from desktop.core.system.paths import default_runs_dir

        folder = self.current_config().output.runs_dir
        return Path(folder) if folder else default_runs_dir()

    def show_runs(self) -> None:
        """Open (or bring forward) the run history."""
        from desktop.gui.dialogs.runs_dialog import RunsDialog

        if self.runs_dialog is None or self.runs_dialog.runs_dir != self.runs_dir():
            if self.runs_dialog is not None:
                self.runs_dialog.close()
            self.runs_dialog = RunsDialog(self.runs_dir(), self)
            self.runs_dialog.resume_requested.connect(self.resume_run)
            self.runs_dialog.export_requested.connect(self.show_finished_run)
        else:
            self.runs_dialog.refresh()
        self.runs_dialog.show()
        self.runs_dialog.raise_()

    def resume_run(self, run: RunDir) -> None:
        """Continue ``run`` from its last checkpoint and show the Train step."""
        if self.controller.is_running():
            QMessageBox.information(
                self,
                self.tr("A run is in progress"),
                self.tr("Stop the current run before resuming another."),
            )
            return
        try:
            config = run.config()
        except StudioError as exc:
            QMessageBox.warning(self, self.tr("Cannot resume this run"), error_text(exc))
            return
        self.resume_bar.setVisible(False)
        self.set_config(config)
        self.train_page.resume_run(run)
        self.go_to(self.pages.index(self.train_page))
        self.statusBar().showMessage(self.tr("Resuming {run}").format(run=run.path.name))

    def show_finished_run(self, run: RunDir) -> None:
        """Show a finished run on the Export step, to export it or try it."""
        from desktop.core.runs.folders import run_result

        result = run_result(run)
        if result.model_dir is None:
            QMessageBox.information(
                self, self.tr("No model in this run"), self.tr("This run has no finished model to export.")
            )
            return
        self.export_page.show_result(result)
        self._update_navigation()
        self.go_to(self.pages.index(self.export_page))

    def _try_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, self.tr("Open a model folder"))
        if folder and self.export_page.try_folder(folder):
            self._update_navigation()
            self.go_to(self.pages.index(self.export_page))

    def offer_resume(self) -> None:
        """If the newest crashed run can be resumed and the user has not declined it, offer it."""
        dismissed = set(self.settings.text(Key.DISMISSED_RESUME).splitlines())
        found = newest_crashed(self.runs_dir(), dismissed)
        self.resume_offer_checked.emit()
        if found is None:
            return
        self._crashed, step, total = found
        self.resume_text.setText(
            self.tr(
                "The run {run} was interrupted at step {step} of {total} (the app or the computer "
                "stopped). Resume it from its last checkpoint?"
            ).format(run=self._crashed.path.name, step=step, total=total)
        )
        self.resume_bar.setVisible(True)

    def _on_resume_yes_clicked(self) -> None:
        if self._crashed is not None:
            self.resume_run(self._crashed)

    def _on_resume_no_clicked(self) -> None:
        if self._crashed is not None:
            dismissed = self.settings.text(Key.DISMISSED_RESUME).splitlines()
            self.settings.set_text(
                Key.DISMISSED_RESUME, "\n".join([*dismissed[-50:], str(self._crashed.path)])
            )
        self._crashed = None
        self.resume_bar.setVisible(False)

    # ------------------------------------------------------------------ state

    def _restore(self) -> None:
        geometry = self.settings.bytes(Key.GEOMETRY)
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(1180, 780)
        text = (
            "" if self._repair_on_start else self.settings.text(Key.LAST_CONFIG)
        )  # nothing may import torch
        config = RunConfig()
        if text:
            try:
                from desktop.core.settings.config import from_dict, parse_toml

                config = from_dict(parse_toml(text))
            except Exception:  # a damaged setting must not stop the app from starting
                config = RunConfig()
        self.set_config(config)
        self.steps.setCurrentRow(0)
        if not self._repair_on_start:
            QTimer.singleShot(200, self.offer_resume)  # after the first paint: it reads the runs folder
        QTimer.singleShot(500, self.probe_sources)

    def probe_sources(self) -> None:
        """With the source on Auto and no pick from the last day, find in the background which source
        answers fastest (at most 3 s; remembered for the next day)."""
        from desktop.gui.app_support.workers import run_in_background

        def probe() -> None:
            from desktop.core.hub import sources  # imported here too: urllib and its kin, 20-30 ms

            if sources.auto_is_stale():
                sources.pick()

        run_in_background(probe, self, lambda result: None, lambda exc, detail: None)

    def save_state(self) -> None:
        """Remember geometry and the run config for the next start."""
        self.settings.set_bytes(Key.GEOMETRY, self.saveGeometry())
        self.settings.set_text(Key.LAST_CONFIG, self.current_config().to_toml())
        self.settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.controller.is_running():
            if not self._closing:
                child = self.controller.in_child_process()
                answer = QMessageBox.question(
                    self,
                    self.tr("Training is running"),
                    self.tr(
                        "End training and quit? The training process is ended at once; the run resumes "
                        "from its last checkpoint."
                    )
                    if child
                    else self.tr("Stop training and quit? A checkpoint is saved so you can resume later."),
                )
                if answer != QMessageBox.StandardButton.Yes:
                    event.ignore()
                    return
                self._closing = True
                if child:
                    self.controller.stop_now()
                    self.statusBar().showMessage(self.tr("Ending the training process…"))
                else:
                    self.controller.stop()
                    self.statusBar().showMessage(self.tr("Stopping training and saving a checkpoint…"))
            event.ignore()  # closes itself when the run has ended
            return
        self.save_state()
        for page in self.pages:
            page.shutdown()
        shutdown_all()  # at most about 2 s; what has not ended by then is left behind
        self.collector.stop()  # the helper process ends with the app (its stdin closes)
        event.accept()
