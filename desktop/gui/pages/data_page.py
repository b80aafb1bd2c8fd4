"""Step 2: task, model and dataset, with a preview, the column mapping and token statistics."""

from __future__ import annotations

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QGridLayout, QTabWidget

from desktop.core.data.columns import CAUSAL_FORMATS, roles_for
from desktop.core.data.preview import Preview
from desktop.core.helper_process import TokenReport
from desktop.core.settings.config import Columns, RunConfig
from desktop.core.settings.config_sections import IMAGE_TASKS, learning_rate_for
from desktop.core.system.errors import StudioError
from desktop.gui.config_model import RunConfigModel
from desktop.gui.controllers.data_check_controller import DataCheckController
from desktop.gui.pages.base import WizardPage
from desktop.gui.widgets.column_mapping_widget import ColumnMappingWidget
from desktop.gui.widgets.dataset_picker_widget import DatasetPickerWidget
from desktop.gui.widgets.metric_text import task_name
from desktop.gui.widgets.model_picker_widget import ModelPickerWidget
from desktop.gui.widgets.pair_preview_widget import PairPreviewWidget
from desktop.gui.widgets.preview_table_widget import PreviewTableWidget
from desktop.gui.widgets.rewards_widget import RewardsWidget
from desktop.gui.widgets.token_stats_widget import TokenStatsWidget
from desktop.shared_ui import Settings, shown

PADDING_FIELDS = (
    "training.max_length",
    "training.batch_size",
    "performance.padding_free",
    "performance.group_by_length",
)
"""Fields whose change the token statistics follow: what is cut, and the batches' padding."""


class DataPage(WizardPage):
    """Chooses the task, the model and the data, and maps the data's columns.

    The page writes what it edits of the run config (task, model, data, columns, validation) into
    ``run_config`` and composes its parts: the model picker, the dataset picker, the preview table,
    the column mapping and the token statistics (which count the texts the max length set on Memory &
    speed cuts); a :class:`DataCheckController` reads the data in the background.

    Args:
        run_config: The run config the window edits.
        settings: Where the last folders are remembered (``None``: nowhere).
    """

    head_loaded = Signal()
    """The first rows and the guessed mapping are shown; every row is still being checked."""
    preview_loaded = Signal()
    """A preview of the data arrived (or its error)."""
    token_stats_loaded = Signal()
    """Token statistics arrived (or their error)."""
    sample_requested = Signal()
    """The user asked to load the bundled sample."""

    def __init__(self, run_config: RunConfigModel, settings: Settings | None = None) -> None:
        super().__init__()
        self.title = self.tr("Model & data")
        self.subtitle = self.tr("What to train, and on which examples.")
        self._run_config = run_config
        run_config.changed.connect(self._on_run_config_changed)
        self._preview: Preview | None = None
        self._guess_answers = True  # reasoning runs: the answer check is guessed from the next data read
        self._debounce = QTimer(self, singleShot=True, interval=300)
        self._debounce.timeout.connect(self._load_preview)
        self.checker = DataCheckController(self)
        self.checker.head_loaded.connect(self._on_checker_head_loaded)
        self.checker.check_progressed.connect(self._on_checker_check_progressed)
        self.checker.checked.connect(self._on_checker_checked)
        self.checker.check_failed.connect(self._on_checker_check_failed)
        self.checker.stats_loaded.connect(self._on_checker_stats_loaded)
        self.checker.stats_failed.connect(self._on_checker_stats_failed)

        self.model_picker = ModelPickerWidget(settings, self._current, self.train_rows)
        self.model_picker.task_changed.connect(self._on_model_picker_task_changed)
        self.model_picker.method_changed.connect(self._on_model_picker_method_changed)
        self.model_picker.model_changed.connect(self._on_model_picker_model_changed)
        self.model_picker.validity_changed.connect(self.validity_changed)
        self.dataset_picker = DatasetPickerWidget(settings, self._current)
        self.dataset_picker.data_changed.connect(self._on_dataset_picker_data_changed)
        self.dataset_picker.split_changed.connect(self._schedule_preview)
        self.dataset_picker.dataset_downloaded.connect(self._on_dataset_picker_dataset_downloaded)
        self.dataset_picker.sample_requested.connect(self.sample_requested)
        self.dataset_picker.cancel_requested.connect(self.checker.cancel_check)
        self.dataset_picker.validity_changed.connect(self.validity_changed)
        self.column_mapping = ColumnMappingWidget()
        self.column_mapping.format_chosen.connect(self._on_column_mapping_format_chosen)
        self.column_mapping.columns_chosen.connect(self._on_column_mapping_columns_chosen)
        self.column_mapping.validity_changed.connect(self.validity_changed)
        self.column_mapping.option_changed.connect(self._on_column_mapping_option_changed)
        self.table = PreviewTableWidget()
        self.pairs = PairPreviewWidget()  # a tab of its own for preference pairs, the first one
        self.rewards = RewardsWidget()  # reasoning runs: the rewards, previewed on the first rows
        self.rewards.changed.connect(self._run_config.set)
        self.rewards.changed.connect(self._on_rewards_changed)
        self.rewards.validity_changed.connect(self.validity_changed)
        self.preview_tabs = QTabWidget()
        self.preview_tabs.setDocumentMode(True)
        self.preview_tabs.setTabBarAutoHide(True)  # the table alone has no tab bar
        self.preview_tabs.addTab(self.table, self.tr("Rows"))
        self.token_stats = TokenStatsWidget()

        self.table.setMinimumHeight(110)
        self.column_mapping.setMaximumHeight(230)
        self.token_stats.setMaximumHeight(230)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(self.model_picker, 0, 0)
        grid.addWidget(self.dataset_picker, 0, 1)
        grid.addWidget(self.preview_tabs, 1, 0, 1, 2)
        grid.addWidget(self.column_mapping, 2, 0)
        grid.addWidget(self.token_stats, 2, 1)
        grid.setRowStretch(1, 1)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1)
        self._on_run_config_changed("")  # the run config as it is (the window makes this page late)

    def _current(self) -> RunConfig:
        return self._run_config.config

    # ------------------------------------------------------------------ the run config

    def _on_run_config_changed(self, path: str) -> None:
        if path == "":  # a whole new config: show it
            config = self._run_config.config
            self._guess_answers = False  # its answer check is the user's (a new task or data guesses)
            self.model_picker.show_config(config)
            self.dataset_picker.show_config(config)
            self.rewards.show_config(config)
            self.column_mapping.forget_task_change()  # "guessed again for Causal-LM" of a preference run
            self.model_picker.check()
            self._show_options()
            self._load_preview()
        elif path in PADDING_FIELDS and self.token_stats.report is not None:
            # The token statistics count what the max length set now would cut, and the padding.
            self.token_stats.show_report(self.token_stats.report, self._current())

    def problem(self) -> str:
        picker = self.model_picker
        rewards = self.rewards.problem() if self._current().task == "grpo" else ""
        first = (
            picker.model_problem or self.dataset_picker.problem() or self.column_mapping.problem() or rewards
        )
        return first or picker.download_problem

    def train_rows(self) -> int:
        """Training rows in the data as loaded (0 before a preview)."""
        return self._preview.num_train if self._preview is not None else 0

    def set_gpu_free(self, free: int | None) -> None:
        """Free memory of the NVIDIA GPU (``None`` without one), for the model's fit badges."""
        self.model_picker.set_gpu_free(free)

    def shutdown(self) -> None:
        """Cancel background loading (the app waits for it at most briefly)."""
        self.checker.shutdown()
        self.model_picker.shutdown()

    # ------------------------------------------------------------------ user changes

    def _show_options(self) -> None:
        config = self._current()
        self.column_mapping.show_options(config.task, config.data.drop_bad_rows, config.data.merge_label_case)
        self.dataset_picker.show_task(config.task)
        self.token_stats.setVisible(config.task not in IMAGE_TASKS)  # pictures: no tokens to count
        self._show_tab(self.pairs, self.tr("Pairs"), config.task == "preference")
        self._show_tab(self.rewards, self.tr("Rewards"), config.task == "grpo")

    def _show_tab(self, tab: object, title: str, shown: bool) -> None:
        """A task's own tab (the pairs, the rewards), first and current, for that task only."""
        index = self.preview_tabs.indexOf(tab)
        if shown and index < 0:
            self.preview_tabs.insertTab(0, tab, title)
            self.preview_tabs.setCurrentIndex(0)
        elif not shown and index >= 0:
            self.preview_tabs.removeTab(index)

    def _on_rewards_changed(self, path: str, value: object) -> None:
        if self.dataset_picker.problem():  # the data's check said a setting was wrong: checked again
            self._schedule_preview()

    def _on_column_mapping_option_changed(self, name: str, on: bool) -> None:
        self._run_config.set(f"data.{name}", on)
        self._schedule_preview()  # checked again: rows left out, classes merged

    def _on_model_picker_task_changed(self, task: str) -> None:
        self._run_config.set("task", task)
        self._guess_answers = True
        rate = learning_rate_for(task, self._current().training.learning_rate)
        self._run_config.set("training.learning_rate", rate)  # preference tuning: a tenth of the default
        self._show_options()
        self._run_config.set("columns", Columns())
        self.model_picker.check()  # a model that fits one task may not fit another
        data = self._current().data
        if data.files or data.hub_id:  # no data yet: no columns to guess again, nothing to check
            self.column_mapping.show_task_changed(task_name(task))  # the task chosen, not the combo's text
        self._schedule_preview()

    def _on_model_picker_method_changed(self, method: str) -> None:
        self._run_config.set("preference.method", method)
        self.model_picker.check()  # the fit badge: DPO holds a reference copy of the model

    def _on_model_picker_model_changed(self, name: str) -> None:
        self._run_config.set("model.name", name)
        self.model_picker.check()
        if self.dataset_picker.problem():  # the data was checked before a model was chosen ("model.name
            self._schedule_preview()  # is empty"): checked again with it, so Next follows
            return
        # The last model's token figures and [UNK] warning go: this model's follow when it can be read.
        self.token_stats.clear_report()
        self.dataset_picker.show_notes(self._preview.notes if self._preview is not None else [])
        self._load_token_stats()

    def _on_dataset_picker_data_changed(self, files: list[str], hub_id: str) -> None:
        self._guess_answers = True
        self._run_config.set("data.files", files)
        self._run_config.set("data.hub_id", hub_id)
        self._run_config.set("columns", Columns())
        self.column_mapping.forget_task_change()
        self._schedule_preview()

    def _on_dataset_picker_dataset_downloaded(self) -> None:
        self._run_config.set("columns", Columns())
        self._schedule_preview()

    def _on_column_mapping_format_chosen(self, fmt: str) -> None:
        required, optional = CAUSAL_FORMATS[fmt]
        self._run_config.set("columns", Columns())
        self._show_mapping(required, optional, {})
        self.column_mapping.check(self._current().task, self._current().columns)

    def _on_column_mapping_columns_chosen(self, columns: Columns) -> None:
        self._run_config.set("columns", columns)
        self._schedule_preview()

    # ------------------------------------------------------------------ preview

    def _schedule_preview(self) -> None:
        fraction, seed = self.dataset_picker.split()
        self._run_config.set("validation.fraction", fraction)
        self._run_config.set("validation.seed", seed)
        self._debounce.start()

    def _load_preview(self) -> None:
        self.checker.next_generation()
        self.dataset_picker.forget_check_progress()
        config = self._run_config.snapshot()
        problems = [p.message for p in config.validate() if p.field.startswith(("data", "validation"))]
        if not config.data.files and not config.data.hub_id:
            self._clear_data()
            self.dataset_picker.ask_for_data()
            return
        if problems:
            self._clear_data()
            self.dataset_picker.show_problem(problems[0])
            return
        # A new load clears the last one's error (Next waits for the result).
        self.dataset_picker.show_reading()
        self.checker.check(config)

    def _on_checker_check_progressed(self, value: tuple) -> None:
        self.dataset_picker.show_check_share(value)
        if self._preview is not None and not self._preview.complete:
            self.dataset_picker.show_check_progress()

    def _on_checker_head_loaded(self, result: Preview) -> None:
        self._show_preview(result)
        self.dataset_picker.show_check_progress()
        self.head_loaded.emit()

    def _on_checker_checked(self, result: Preview) -> None:
        self.dataset_picker.show_checked()
        self.dataset_picker.show_notes(result.notes)
        self._show_preview(result)
        self.dataset_picker.show_split(result)
        self.dataset_picker.show_problem("")
        self.column_mapping.check(self._current().task, self._current().columns)
        self.preview_loaded.emit()
        self._load_token_stats()

    def _on_checker_check_failed(self, exc: object) -> None:
        self.dataset_picker.show_checked()
        from desktop.core.system.progress import Cancelled

        if isinstance(exc, Cancelled) and self._preview is not None:  # the first rows stay
            self.dataset_picker.show_cancelled()
            self.dataset_picker.show_problem("")
            self.column_mapping.check(self._current().task, self._current().columns)
            self.preview_loaded.emit()
            return
        message = shown(exc.message) if isinstance(exc, StudioError) else str(exc)
        hint = shown(exc.hint) if isinstance(exc, StudioError) else ""
        partial = getattr(exc, "partial", None)
        self._clear_data()
        if partial is not None:  # read, but it does not fit as mapped: show it so the mapping can be fixed
            self._show_preview(partial)
        self.dataset_picker.show_problem(f"{message}\n{hint}".strip())
        self.preview_loaded.emit()

    def _show_preview(self, result: Preview) -> None:
        """The rows of ``result`` in the table, and its guessed mapping (now the config's)."""
        self._preview = result
        self._run_config.set("columns", result.guess.columns)
        pictures = result.guess.columns.image if self._current().task in IMAGE_TASKS else ""
        self.table.show_preview(result, pictures)
        if self._current().task == "preference":
            self.pairs.show_pairs(result.rows, self._current().columns)
        if self._current().task == "grpo":
            if self._guess_answers and result.guess.columns.answer:  # new data or a new task: how the
                from desktop.core.data.rewards import guess_check  # answers compare, from what they are

                answers = [row.get(result.guess.columns.answer) for row in result.rows]
                check, labels = guess_check(answers)
                self._run_config.set("grpo.answer_check", check)
                self._run_config.set("grpo.labels", labels)
            self._guess_answers = False
            self.rewards.show_config(self._current())
            self.rewards.show_rows(result.rows, self._current().columns)
        required, optional = roles_for(self._current().task, result.guess.columns)
        self._show_mapping(required, optional, result.guess.found_by)

    def _show_mapping(self, required: tuple[str, ...], optional: tuple[str, ...], found_by: dict) -> None:
        available = list(self._preview.columns) if self._preview else []
        config = self._current()
        self.column_mapping.show_mapping(config.task, config.columns, available, required, optional, found_by)

    def _clear_data(self) -> None:
        """Forget the last file's table, mapping, notes and token statistics."""
        self._preview = None
        self.table.clear_preview()
        self.pairs.clear_pairs()
        self._show_mapping((), (), {})
        self.dataset_picker.split_info.setText("")
        self.dataset_picker.show_notes([])
        self.token_stats.clear_report()

    # ------------------------------------------------------------------ token statistics

    def _load_token_stats(self) -> None:
        if (
            self._current().task in IMAGE_TASKS
            or self._preview is None
            or self.dataset_picker.problem()
            or self.model_picker.model_error.text()
            or not self._current().model.name
        ):
            return
        config = self._run_config.snapshot()
        self.token_stats.show_loading()
        self.checker.measure(config)

    def _on_checker_stats_loaded(self, result: TokenReport) -> None:
        self.dataset_picker.show_notes(result.notes)
        self.token_stats.show_report(result, self._current())
        self.token_stats_loaded.emit()

    def _on_checker_stats_failed(self, exc: object) -> None:
        message = shown(exc.message) if isinstance(exc, StudioError) else str(exc)
        self.token_stats.show_failure(message)
        self.token_stats_loaded.emit()
