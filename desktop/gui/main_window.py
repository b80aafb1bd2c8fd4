"""The main window: the five steps in a sidebar, the current page, Back / Next and a status bar."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.core.settings.config import RunConfig, load_config, with_changes
from desktop.core.system.errors import StudioError
from desktop.core.system.events import AdjustedEvent, RunResult
from desktop.gui.app_support.geometry import fit_to_screen
from desktop.gui.app_support.workers import shutdown_all
from desktop.gui.config_model import RunConfigModel
from desktop.gui.controllers.job_export_controller import JobExportController
from desktop.gui.controllers.restart_controller import RestartController
from desktop.gui.controllers.training_controller import TrainingController
from desktop.gui.dialogs.sample_dialog import PAGE_AFTER_CONFIG_MS, sample_to_load
from desktop.gui.pages.base import WizardPage
from desktop.gui.pages.environment_page import EnvironmentPage
from desktop.gui.pages.stack import DATA, EXPORT, OPTIONS, PAGES, TRAIN, PageStack, step_title
from desktop.gui.run_history import RunHistory
from desktop.gui.widgets.main_menu_bar import MainMenuBar
from desktop.gui.widgets.resume_offer_widget import ResumeOfferWidget
from desktop.shared_ui import Key, Settings, error_text, shown


class MainWindow(QMainWindow):
    """The wizard.

    Args:
        settings: Where UI state is kept.
        controller: Runs training; a fake with the same signals works for tests.
        repair_on_start: Start the PyTorch repair as soon as the environment check has run.
    """

    resume_offer_checked = Signal()
    """The runs folder was looked at for a crashed run to offer (whether or not one was offered)."""
    job_exported = Signal(object)
    """A job folder was written: its path."""

    def __init__(
        self, settings: Settings, controller: object | None = None, repair_on_start: bool = False
    ) -> None:
        super().__init__()
        from desktop.core.system.lazy import load_extensions_without_gil
        from desktop.core.system.processes import request_short_time_slice, set_gil_switch_interval
        from desktop.gui.app_support.import_hook import read_sources_cheaply

        set_gil_switch_interval()  # the window's thread waits less for Python's lock at each of its slots
        request_short_time_slice()  # and less for a core each time it wakes (Linux)
        load_extensions_without_gil()  # background imports (PyTorch, Arrow) never freeze the window
        read_sources_cheaply()  # nor does PySide6's look at each of their modules keep its source
        self.setWindowTitle(self.tr("Finetune Studio"))
        self.setMinimumSize(QSize(760, 480))  # 1280 x 720 at 125%: about 1024 x 538 without the taskbar
        self.settings = settings
        self._sample_page = QTimer(self, singleShot=True, interval=PAGE_AFTER_CONFIG_MS)
        self._sample_page.timeout.connect(self._show_sample_page)
        self._sample_from = 0
        self.controller = controller or TrainingController(self)
        self.run_config = RunConfigModel(self)
        """The run config every page reads and edits; what Start trains, Save writes, Quit remembers."""
        self._closing = False

        self.environment_page = EnvironmentPage(settings)
        self.job_export = JobExportController(self)
        self.job_export.job_exported.connect(self.job_exported)
        self.job_export.status_changed.connect(self.statusBar().showMessage)  # "" clears it
        self.restarts = RestartController(self, settings)
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
            window_busy=self._making_plots,  # called from the importing thread: it never makes a page
        )
        self.collector.importing = lambda: "importing" in (self.data_warmup.state, self.warmup.state)

        self.steps = QListWidget()
        self.steps.setObjectName("steps")
        self.steps.setFixedWidth(200)
        for i in range(len(PAGES)):
            item = QListWidgetItem(f"{i + 1}   {step_title(i)}")
            item.setSizeHint(QSize(180, 40))
            self.steps.addItem(item)
        self.steps.currentRowChanged.connect(self._on_steps_current_row_changed)
        self.stack = PageStack(self.environment_page, self._make_page)
        self.stack.page_made.connect(self._on_stack_page_made)
        self.environment_page.validity_changed.connect(self.update_navigation)
        self.page_title = QLabel()
        self.page_title.setObjectName("pageTitle")
        self.page_subtitle = QLabel()
        self.page_subtitle.setObjectName("hint")
        self.banner = QLabel()
        self.banner.setObjectName("banner")
        self.banner.setWordWrap(True)
        self.banner.setVisible(False)
        self.resume_bar = ResumeOfferWidget(settings)
        self.resume_bar.checked.connect(self.resume_offer_checked)
        self.history = RunHistory(self, self)
        """The Runs dialog, resume, a finished run on the Export step, preference tuning of a run."""
        self.resume_bar.resume_requested.connect(self.history.resume_run)
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
        self.stack.page(TRAIN)  # made now: it hears the controller from a run's first signal on

        self.controller.settings_adjusted.connect(self._on_controller_settings_adjusted)
        self.environment_page.checked.connect(self._update_banner)
        self.environment_page.restart_requested.connect(self.restarts.restart_for_repair)
        self.environment_page.swap_requested.connect(self.restarts.restart_to_swap)
        self.controller.running_changed.connect(self._update_install_block)  # no swap while a run is on
        self._repair_on_start = repair_on_start
        if repair_on_start:
            self.environment_page.checked.connect(self._on_environment_page_checked)
        self.controller.training_finished.connect(self._on_controller_training_finished)
        self.controller.running_changed.connect(self._on_controller_running_changed)
        self.controller.training_failed.connect(
            lambda result: self.statusBar().showMessage(self.tr("Training did not finish."))
        )
        self._restore()
        QTimer.singleShot(0, self.stack, self.stack.make_the_rest)  # the others once the window shows

    # ------------------------------------------------------------------ pages, made on first need

    @property
    def pages(self) -> list[WizardPage]:
        """The five steps' pages (all made)."""
        return [self.stack.page(i) for i in range(len(PAGES))]

    @property
    def data_page(self) -> Any:
        """Step 2, Model & data."""
        return self.stack.page(DATA)

    @property
    def options_page(self) -> Any:
        """Step 3, Memory & speed."""
        return self.stack.page(OPTIONS)

    @property
    def train_page(self) -> Any:
        """Step 4, Train."""
        return self.stack.page(TRAIN)

    @property
    def export_page(self) -> Any:
        """Step 5, Export."""
        return self.stack.page(EXPORT)

    def _make_page(self, index: int, page_class: type) -> WizardPage:
        if index == DATA:
            return page_class(self.run_config, self.settings)
        if index == OPTIONS:
            return page_class(self.run_config)
        if index == TRAIN:
            return page_class(self.controller, self.run_config)
        if index == EXPORT:
            return page_class(self.settings)
        return page_class()

    def _on_stack_page_made(self, index: int, page: Any) -> None:
        """What the window hears from a page it has just made, and tells it."""
        page.validity_changed.connect(self.update_navigation)
        if index == DATA:
            page.token_stats_loaded.connect(self.warmup.want)  # a model and data: training is near
            page.token_stats.idle_s = self.collector.idle_s_now
            page.sample_requested.connect(self.load_sample)
            self.data_warmup.done.connect(page.token_stats.prepare_histogram)  # pyqtgraph is imported
            page.setEnabled(not self.controller.is_running())
            if self.data_warmup.state == "done":
                QTimer.singleShot(0, page.token_stats, page.token_stats.prepare_histogram)
        elif index == OPTIONS:
            page.job_export_requested.connect(lambda: self.job_export.export(self.current_config()))
            page.setEnabled(not self.controller.is_running())
        elif index == TRAIN:
            page.plot_area.idle_s = self.collector.idle_s_now
            page.retry_requested.connect(self._on_train_page_retry_requested)
            page.fit_requested.connect(self._on_train_page_fit_requested)
            page.undo_requested.connect(self._on_train_page_undo_requested)
        elif index == EXPORT:
            page.busy_changed.connect(self._update_install_block)
        self.update_navigation()

    def _making_plots(self) -> bool:
        page = self.stack.made(TRAIN)
        return page is not None and page.plot_area.making_plots

    # ------------------------------------------------------------------ menu and actions

    def _build_menu(self) -> None:
        self.menu_bar = MainMenuBar(self.settings)
        self.setMenuBar(self.menu_bar)
        self.menu_bar.sample_requested.connect(self.load_sample)
        self.menu_bar.open_requested.connect(self._open_config)
        self.menu_bar.save_requested.connect(self._save_config)
        self.menu_bar.quit_requested.connect(self.close)
        self.menu_bar.history_requested.connect(self.history.show_runs)
        self.menu_bar.try_folder_requested.connect(self.history.try_folder)
        self.menu_bar.language_chosen.connect(self.restarts.choose_language)
        self.menu_bar.sources_requested.connect(self.open_hub_settings)
        self.menu_bar.move_data_requested.connect(self.restarts.move_data_folder)
        self.menu_bar.keep_awake_toggled.connect(self._on_menu_bar_keep_awake_toggled)
        self.menu_bar.diagnostics_requested.connect(self._copy_diagnostics)
        self.menu_bar.logs_requested.connect(self._open_logs)
        self.controller.keep_awake = self.menu_bar.keep_awake_action.isChecked()

    def _copy_diagnostics(self) -> None:
        """Help › Copy diagnostics: the Environment step's report on the clipboard, said in the status bar."""
        if self.environment_page.report is None:
            self.statusBar().showMessage(
                self.tr("The environment is still being checked; try again in a moment.")
            )
            return
        self.environment_page.copy_diagnostics()
        self.statusBar().showMessage(self.tr("Diagnostics copied: paste them into your problem report."))

    def _open_logs(self) -> None:
        """Help › Open the logs folder, in the file manager (made first if nothing was logged yet)."""
        from PySide6.QtCore import QUrl
        from PySide6.QtGui import QDesktopServices

        from desktop.core.system.paths import data_dir

        folder = data_dir() / "logs"
        folder.mkdir(parents=True, exist_ok=True)
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))

    def _on_menu_bar_keep_awake_toggled(self, on: bool) -> None:
        self.controller.keep_awake = on  # from the next run on

    def load_sample(self) -> None:
        """Preload the sample reviews and the bundled model, then show the data page (a moment later,
        unless the user has gone to another step meanwhile); asks before replacing a model or data chosen."""
        sample = sample_to_load(self, self.current_config())
        if sample is None:
            return
        self.set_config(sample)
        self._sample_from = self.stack.currentIndex()
        self._sample_page.start()
        self.statusBar().showMessage(
            self.tr("Sample loaded: English reviews with the English all-MiniLM-L6-v2 model.")
        )

    def _show_sample_page(self) -> None:
        if self.stack.currentIndex() == self._sample_from:
            self.go_to(1)

    def set_config(self, config: RunConfig) -> None:
        """Make ``config`` the run config; every page shows it."""
        self.run_config.replace(config)
        self.update_navigation()

    def current_page(self) -> WizardPage:
        """The page shown now."""
        return self.stack.page(self.stack.currentIndex())

    def current_config(self) -> RunConfig:
        """A copy of the run config as the pages now show it."""
        return self.run_config.snapshot()

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
            self.run_config.config.save(path, comments=True)
            self.statusBar().showMessage(self.tr("Saved {path}").format(path=path))

    # ------------------------------------------------------------------ navigation

    def go_to(self, index: int) -> None:
        """Show step ``index`` if every step before it is complete."""
        if 0 <= index < len(PAGES) and self._reachable(index):
            self.steps.setCurrentRow(index)

    def _furthest_allowed(self) -> int:
        for i in range(len(PAGES)):
            page = self.stack.made(i)
            if page is None or page.problem():  # a page not made yet has had nothing entered
                return i
        return len(PAGES) - 1

    def _reachable(self, index: int) -> bool:
        """Steps open in order; a running run's Train step and a model's Export step are always open."""
        export = self.stack.made(EXPORT)
        return (
            index <= self._furthest_allowed()
            or (index == TRAIN and self.controller.is_running())
            or (index == EXPORT and export is not None and export.has_content())
        )

    def _on_steps_current_row_changed(self, row: int) -> None:
        if not self._reachable(row):
            self.steps.setCurrentRow(self.stack.currentIndex())
            return
        page = self.stack.page(row)
        self.stack.setCurrentIndex(row)
        self.page_title.setText(page.title)
        self.page_subtitle.setText(page.subtitle)
        if page is self.environment_page and page.info is None:
            QTimer.singleShot(100, page.check)  # after the first paint: it spawns a child, loads NVML
        if row == OPTIONS:
            # The next step's plots, made while the user reads this one.
            self.train_page.plot_area.prepare_plots()
            self.update_options_context()
            self.options_page.set_train_rows(self.data_page.train_rows())
        self.update_navigation()
        self._update_banner()

    def update_options_context(self) -> None:
        """Tell the Memory & speed page which model and GPU its estimate is for (as going to it does)."""
        gpus = self.environment_page.nvidia_gpus()
        gpu = gpus[0] if gpus else None
        free = gpu.memory_free if gpu and gpu.memory_free else None
        caps = self.environment_page.capabilities()
        self.options_page.set_gpus(len(gpus))
        self.options_page.set_context(self.current_config(), gpu.name if gpu else "", free, caps)
        self.data_page.set_gpu_free(free)

    def open_hub_settings(self) -> None:
        """Settings > Model sources: where models come from, and tokens (kept in the keyring)."""
        from desktop.gui.dialogs.hub_settings_dialog import HubSettingsDialog

        self.hub_settings = HubSettingsDialog(self)
        self.hub_settings.open()

    def _update_banner(self) -> None:
        result = self.environment_page.verdict_now
        show = result is not None and not result.ok and self.stack.currentIndex() != 0
        if result is not None:
            text = self.tr("{headline} See the Environment step to fix it.")
            self.banner.setText(text.format(headline=shown(result.headline)))
        self.banner.setVisible(show)

    def _on_environment_page_checked(self) -> None:
        if self._repair_on_start:
            self._repair_on_start = False
            self.environment_page.start_repair()

    def _update_install_block(self) -> None:
        reason = ""
        if self.controller.is_running():
            reason = self.tr("A training run is in progress: stop it first, then install PyTorch.")
        elif (export := self.stack.made(EXPORT)) is not None and export.is_busy():
            reason = self.tr("An export is in progress: wait for it, then install PyTorch.")
        self.environment_page.set_blocked(reason)

    def update_navigation(self) -> None:
        """Back, Next and the reason Next waits, and which steps the sidebar opens, for the step shown."""
        index = self.stack.currentIndex()
        page = self.stack.made(index)
        if page is None:  # a page being made: it updates the navigation when it is
            return
        problem = page.problem()
        last = index == len(PAGES) - 1
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
        for page in (self.stack.made(DATA), self.stack.made(OPTIONS)):
            if page is not None:  # one made later starts disabled if a run is on (_on_stack_page_made)
                page.setEnabled(not running)
        self.statusBar().showMessage(self.tr("Training…") if running else "")
        self.update_navigation()
        if not running:
            self.history.refresh()
        if not running and self._closing:
            self.close()

    def _on_train_page_fit_requested(self) -> None:
        """The run spilled out of the GPU: Memory & speed, with Fit my GPU applied to the current figures."""
        self.go_to(OPTIONS)
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
        said = self.tr("Training finished. The model is in {folder}")
        room = self.statusBar().width() - self.fontMetrics().horizontalAdvance(said) - 40
        folder = self.fontMetrics().elidedText(
            str(result.model_dir), Qt.TextElideMode.ElideMiddle, max(room, 200)
        )
        self.statusBar().showMessage(said.format(folder=folder))  # a long path cut in the middle, not the end

    # ------------------------------------------------------------------ state

    def _restore(self) -> None:
        geometry = self.settings.bytes(Key.GEOMETRY)
        if geometry is None or not self.restoreGeometry(geometry):
            self.resize(1180, 780)
        fit_to_screen(self)  # a 768-pixel laptop; a window last closed on a larger screen
        text = "" if self._repair_on_start else self.settings.text(Key.LAST_CONFIG)  # no torch import here
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
            QTimer.singleShot(200, self.history.offer_resume)  # after the first paint: reads the runs folder
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
        self.settings.set_text(Key.LAST_CONFIG, self.run_config.config.to_toml())
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
        for page in self.stack.made_pages():
            page.shutdown()
        shutdown_all()  # at most about 2 s; what has not ended by then is left behind
        self.collector.stop()  # the helper process ends with the app (its stdin closes)
        event.accept()
