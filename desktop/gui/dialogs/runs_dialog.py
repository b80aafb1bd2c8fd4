"""Run history: every run folder on disk, with resume, export, delete and a loss-curve comparison."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    Qt,
    QUrl,
    Signal,
)
from PySide6.QtGui import QColor, QDesktopServices, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from desktop.core.runs.folders import RunDir, delete_run
from desktop.core.runs.listing import RunInfo, list_runs, loss_curve
from desktop.core.runs.run_models import saved_chat_model
from desktop.core.system.errors import StudioError
from desktop.core.system.lazy import imported
from desktop.gui.app_support.plots_import import import_plots
from desktop.gui.app_support.workers import BackgroundTask, run_in_background
from desktop.gui.widgets.metric_text import metric_name, task_name
from desktop.shared_ui import error_text

CURVE_COLOURS = ("#2f6fde", "#e8793a", "#3aa55d", "#8e5bd9", "#d9534f", "#2aa1b3", "#c2497a", "#d9a21b")


class RunsModel(QAbstractTableModel):
    """The runs as table rows; only the rows on screen are drawn, so a thousand runs cost nothing."""

    def __init__(self, dialog: RunsDialog) -> None:
        super().__init__(dialog)
        self.dialog = dialog
        self.infos: list[RunInfo] = []
        self.headers = dialog.headers()
        self._order: tuple[int, Qt.SortOrder] = (11, Qt.SortOrder.DescendingOrder)  # newest first

    def set_runs(self, infos: list[RunInfo]) -> None:
        self.beginResetModel()
        self.infos = self._sorted(infos)
        self.endResetModel()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort by ``column`` (one pass in Python: no per-comparison calls back from Qt)."""
        self._order = (column, order)
        self.layoutAboutToBeChanged.emit()
        self.infos = self._sorted(self.infos)
        self.layoutChanged.emit()

    def _sorted(self, infos: list[RunInfo]) -> list[RunInfo]:
        column, order = self._order
        numbers = [info for info in infos if _sort_key(info, column) == _sort_key(info, column)]  # not NaN
        blanks = [info for info in infos if _sort_key(info, column) != _sort_key(info, column)]
        ordered = sorted(
            numbers, key=lambda info: _sort_key(info, column), reverse=order == Qt.SortOrder.DescendingOrder
        )
        return ordered + blanks  # runs without a score last, either way

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008 (Qt's)
        return 0 if parent.isValid() else len(self.infos)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008 (Qt's)
        return 0 if parent.isValid() else len(self.headers)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.headers[section]
        return None

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        info = self.infos[index.row()]
        if role == Qt.ItemDataRole.ToolTipRole and index.column() == 1 and info.problem:
            return self.dialog.damaged_advice(info)
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return self.dialog.cell_text(info, index.column())
        if role == Qt.ItemDataRole.ForegroundRole and index.column() == 1 and info.status in STATUS_COLOURS:
            return QColor(STATUS_COLOURS[info.status])
        return None


STATUS_COLOURS = {
    "finished": "#3aa55d",
    "failed": "#d9534f",
    "interrupted": "#d9534f",
    "damaged": "#d9534f",
    "stopped": "#d9a21b",
}


def _curve_key(info: RunInfo) -> tuple[Path, int, str]:
    return info.path, info.step, info.status


def _sort_key(info: RunInfo, column: int) -> object:
    values = (
        info.name,
        info.status,
        info.task,
        info.model,
        info.dataset,
        info.num_train,
        info.learning_rate or 0.0,
        (info.batch_size or 0) * (info.gradient_accumulation or 1),
        info.epochs or 0.0,
        info.lora,
        info.best[1] if info.best else float("nan"),
        info.tokens_per_second or 0.0,
        info.created,
    )
    return values[column]


class RunsDialog(QDialog):
    """Lists past runs from the runs folder; the main window acts on what the user picks.

    The list is read in the background (from each run's small summary), and the loss curves only
    for the runs selected, thinned to what a plot can show.
    """

    resume_requested = Signal(object)
    """Continue this :class:`RunDir` from its last checkpoint."""
    export_requested = Signal(object)
    """Show this finished :class:`RunDir` on the Export page (export, try it)."""
    preference_requested = Signal(object)
    """Set up a preference run from the model this finished chat :class:`RunDir` saved."""
    rewards_requested = Signal(object)
    """Set up a reasoning run (GRPO) from the model this finished chat :class:`RunDir` saved."""
    listed = Signal()
    """The table shows the runs as they are on disk now."""
    curves_shown = Signal()
    """The loss curves of the selected runs are drawn."""
    imported = Signal(object)
    """A run folder from elsewhere was copied in: its new :class:`RunDir`."""

    def __init__(self, runs_dir: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Runs"))
        self.resize(1100, 620)
        self.runs_dir = runs_dir
        self._listing: BackgroundTask | None = None
        self._generation = 0
        # Loss curves read, by run as it was then (folder, step, status): a run that went on is read again.
        self._curves: dict[tuple[Path, int, str], list[tuple[int, float]]] = {}
        self._loading: BackgroundTask | None = None
        self.folder_label = QLabel()
        self.folder_label.setObjectName("hint")
        self.model = RunsModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.horizontalHeader().setSortIndicator(11, Qt.SortOrder.DescendingOrder)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._on_selection_changed())
        self.table.doubleClicked.connect(lambda _index: self._open_folder())

        self.open_button = QPushButton(self.tr("Open folder"))
        self.open_button.clicked.connect(self._open_folder)
        self.resume_button = QPushButton(self.tr("Resume"))
        self.resume_button.setObjectName("primary")
        self.resume_button.clicked.connect(self._resume)
        self.export_button = QPushButton(self.tr("Export / try it"))
        self.export_button.clicked.connect(self._export)
        self.evaluation_button = QPushButton(self.tr("Evaluation…"))
        self.evaluation_button.setToolTip(
            self.tr("Per class, the confusion matrix and the mistakes of a finished classification run")
        )
        self.evaluation_button.clicked.connect(self.show_evaluation)
        self.evaluation_dialog: QDialog | None = None
        self.preference_button = QPushButton(self.tr("Tune preferences…"))
        self.preference_button.setToolTip(
            self.tr(
                "Teach this chat model which answers are better: a preference run (DPO or ORPO) that "
                "starts from the model this run saved"
            )
        )
        self.preference_button.setVisible(False)  # for a finished chat run that saved its model only
        self.preference_button.clicked.connect(self._tune_preferences)
        self.rewards_button = QPushButton(self.tr("Train with rewards…"))
        self.rewards_button.setToolTip(
            self.tr(
                "Teach this chat model to reach answers you can check: a reasoning run (GRPO) that starts "
                "from the model this run saved"
            )
        )
        self.rewards_button.setVisible(False)
        self.rewards_button.clicked.connect(self._train_with_rewards)
        self.delete_button = QPushButton(self.tr("Delete…"))
        self.delete_button.clicked.connect(self._delete)
        self.refresh_button = QPushButton(self.tr("Refresh"))
        self.refresh_button.clicked.connect(self.refresh)
        self.import_button = QPushButton(self.tr("Import run…"))
        self.import_button.setToolTip(
            self.tr("Copy a run folder made elsewhere (a job's runs folder) into this list")
        )
        self.import_button.clicked.connect(self._choose_import)
        self._import_task: BackgroundTask | None = None
        QShortcut(QKeySequence.StandardKey.Refresh, self, activated=self.refresh)
        self.hint = QLabel()
        self.hint.setObjectName("hint")
        self.hint.setWordWrap(True)

        # The plot is made when the first curve is drawn; pyqtgraph (0.4 s to import) is imported
        # in the background meanwhile, so that opening the dialog never waits for it.
        self.plot: Any = None
        self.plot_area = QWidget()
        self.plot_area.setMinimumHeight(200)
        QVBoxLayout(self.plot_area).setContentsMargins(0, 0, 0, 0)
        if not imported("pyqtgraph"):
            import_plots(self, lambda: None)

        buttons = QHBoxLayout()
        for button in (
            self.open_button,
            self.resume_button,
            self.export_button,
            self.evaluation_button,
            self.preference_button,
            self.rewards_button,
            self.delete_button,
        ):
            buttons.addWidget(button)
        buttons.addStretch()
        buttons.addWidget(self.import_button)
        buttons.addWidget(self.refresh_button)
        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(self.folder_label)
        top_layout.addWidget(self.table, 1)
        top_layout.addLayout(buttons)
        top_layout.addWidget(self.hint)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(top)
        splitter.addWidget(self.plot_area)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)
        self.refresh()

    def headers(self) -> list[str]:
        """The table's column titles."""
        return [
            self.tr("Name"),
            self.tr("Status"),
            self.tr("Task"),
            self.tr("Model"),
            self.tr("Dataset"),
            self.tr("Rows"),
            self.tr("Learning rate"),
            self.tr("Batch"),
            self.tr("Epochs"),
            self.tr("LoRA"),
            self.tr("Best score"),
            self.tr("Tokens/s"),
            self.tr("Date"),
        ]

    @property
    def infos(self) -> list[RunInfo]:
        """The runs listed, in the table's order."""
        return list(self.model.infos)

    # ------------------------------------------------------------------ listing

    def status_text(self, status: str) -> str:
        """A run status in the user's language."""
        return {
            "finished": self.tr("Finished"),
            "stopped": self.tr("Stopped"),
            "failed": self.tr("Failed"),
            "running": self.tr("Running"),
            "interrupted": self.tr("Crashed"),
            "damaged": self.tr("Damaged"),
        }.get(status, status)

    def damaged_advice(self, info: RunInfo) -> str:
        """What is wrong with a damaged run (in the files' own words) and what to do."""
        if info.resumable:
            return self.tr("{problem}. Resume the run: it goes on from its last good checkpoint.").format(
                problem=info.problem
            )
        return self.tr("{problem}. It has no checkpoint to resume from: train it again.").format(
            problem=info.problem
        )

    def cell_text(self, info: RunInfo, column: int) -> str:
        """What the table shows for ``info`` in ``column``."""
        if column == 1:
            status = self.status_text(info.status)
            if info.status != "finished" and info.total_steps:
                status = self.tr("{status} ({step}/{total})").format(
                    status=status, step=info.step, total=info.total_steps
                )
            return status
        if column == 7:
            if not info.batch_size:
                return "–"
            accumulation = info.gradient_accumulation or 1
            return f"{info.batch_size}×{accumulation}" if accumulation > 1 else str(info.batch_size)
        return [
            info.name,
            "",
            task_name(info.task),
            info.model,
            info.dataset,
            str(info.num_train) if info.num_train else "–",
            f"{info.learning_rate:g}" if info.learning_rate else "–",
            "",
            epochs_text(info),
            info.lora or "–",
            f"{metric_name(info.best[0])} {info.best[1]:.4g}" if info.best else "–",
            f"{info.tokens_per_second:,.0f}" if info.tokens_per_second else "–",
            time.strftime("%Y-%m-%d %H:%M", time.localtime(info.created)) if info.created else "",
        ][column]

    def refresh(self) -> None:
        """Read the runs folder again, in the background."""
        self.folder_label.setText(self.tr("Reading the runs in {folder}…").format(folder=self.runs_dir))
        self._generation += 1
        generation = self._generation  # a refresh that overtook an earlier one wins

        def listed(infos: list[RunInfo]) -> None:
            if generation == self._generation:
                self._on_listed(infos)

        def failed(exc: object, detail: str) -> None:
            if generation == self._generation:
                self._on_listing_failed(exc, detail)

        runs_dir = self.runs_dir
        self._listing = run_in_background(lambda: list_runs(runs_dir), self, listed, failed)

    def _on_listed(self, infos: list[RunInfo]) -> None:
        chosen = {info.path for info in self.selected()}
        self.model.set_runs(infos)
        listed = {_curve_key(info) for info in infos}
        self._curves = {key: curve for key, curve in self._curves.items() if key in listed}
        self.folder_label.setText(self.tr("Runs in {folder}").format(folder=self.runs_dir))
        if not self.table.property("sized") and infos:
            header = self.table.horizontalHeader()
            header.setResizeContentsPrecision(40)  # widths from the first rows: a guide, not a cost
            self.table.resizeColumnsToContents()
            self.table.setProperty("sized", True)
        if not infos:
            self.hint.setText(self.tr("No runs yet: train a model and it is listed here."))
        self.select(*[info.name for info in infos if info.path in chosen])
        self._on_selection_changed()
        self.listed.emit()

    def _on_listing_failed(self, exc: object, detail: str) -> None:
        self.folder_label.setText(
            self.tr("The runs in {folder} could not be read: {error}").format(
                folder=self.runs_dir, error=error_text(exc)
            )
        )
        self.listed.emit()

    def selected(self) -> list[RunInfo]:
        """The runs whose rows are selected, in table order."""
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        return [self.model.infos[row] for row in rows]

    def select(self, *names: str) -> None:
        """Select the runs with these folder names."""
        selection = QItemSelection()
        last = self.model.columnCount() - 1
        for row, info in enumerate(self.model.infos):
            if info.name in names:
                selection.select(self.model.index(row, 0), self.model.index(row, last))
        self.table.selectionModel().select(selection, QItemSelectionModel.SelectionFlag.ClearAndSelect)

    def _on_selection_changed(self) -> None:
        chosen = self.selected()
        one = chosen[0] if len(chosen) == 1 else None
        self.open_button.setEnabled(one is not None)
        self.resume_button.setEnabled(bool(one and one.resumable))
        self.export_button.setEnabled(bool(one and one.status == "finished"))
        self.evaluation_button.setEnabled(bool(one and (Path(one.path) / "evaluation.json").is_file()))
        self.preference_button.setVisible(one is not None and saved_chat_model(one) is not None)
        self.rewards_button.setVisible(self.preference_button.isVisibleTo(self))
        self.delete_button.setEnabled(bool(chosen) and all(i.status != "running" for i in chosen))
        if one is not None and not one.resumable and one.status in ("stopped", "failed", "interrupted"):
            self.hint.setText(
                self.tr("This run saved no checkpoint, so it cannot be resumed; train it again.")
            )
        elif len(chosen) > 1:
            self.hint.setText(self._differences(chosen))
        elif self.model.infos:
            self.hint.setText(self.tr("Select two or more runs to compare their loss curves."))
        self._load_curves(chosen)

    def _differences(self, chosen: list[RunInfo]) -> str:
        """What differs between the selected runs: every setting of their saved configs (the table's
        columns show a few; two runs of 30 and 400 steps were called "the same settings")."""
        from desktop.core.runs.listing import setting_differences

        found = setting_differences([RunDir(info.path) for info in chosen])
        parts = [
            self.tr("{field}: {values}").format(field=key, values=" / ".join(values)) for key, values in found
        ]
        if not parts:
            return self.tr("The selected runs have the same settings.")
        return self.tr("Differences: {differences}").format(differences="; ".join(parts))

    def _load_curves(self, chosen: list[RunInfo]) -> None:
        """Draw the selected runs' loss curves; those not read yet are read in the background."""
        missing = [_curve_key(info) for info in chosen if _curve_key(info) not in self._curves]
        if not missing:
            self._draw_curves(chosen)
            return
        if self._loading is not None:
            self._loading.cancel()

        def read() -> dict[tuple[Path, int, str], list[tuple[int, float]]]:
            return {key: loss_curve(RunDir(key[0])) for key in missing}

        def done(curves: dict[tuple[Path, int, str], list[tuple[int, float]]]) -> None:
            self._curves.update(curves)
            self._draw_curves(self.selected())

        self._loading = run_in_background(read, self, done, lambda exc, detail: self._draw_curves(chosen))

    def _draw_curves(self, chosen: list[RunInfo]) -> None:
        if self.plot is None:
            if not any(self._curves.get(_curve_key(info)) for info in chosen):
                self.curves_shown.emit()
                return
            if not imported("pyqtgraph"):  # the import begun at opening is not done yet
                import_plots(self, lambda: self._draw_curves(self.selected()), self.curves_shown.emit)
                return
            from desktop.gui.widgets.live_plot_widget import LivePlotWidget

            self.plot = LivePlotWidget(self.tr("Training loss"))
            self.plot_area.layout().addWidget(self.plot)
        self.plot.clear_curves()
        for i, info in enumerate(chosen):
            curve = self._curves.get(_curve_key(info))
            if not curve:
                continue
            self.plot.add_curve(info.name, info.name, CURVE_COLOURS[i % len(CURVE_COLOURS)], width=2)
            for step, loss in curve:
                self.plot.append(info.name, step, loss)
        self.plot.flush()
        self.curves_shown.emit()

    # ------------------------------------------------------------------ actions

    def _open_folder(self) -> None:
        chosen = self.selected()
        if len(chosen) == 1:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(chosen[0].path)))

    def _resume(self) -> None:
        chosen = self.selected()
        if len(chosen) == 1 and chosen[0].resumable:
            self.resume_requested.emit(RunDir(chosen[0].path))

    def _export(self) -> None:
        chosen = self.selected()
        if len(chosen) == 1 and chosen[0].status == "finished":
            self.export_requested.emit(RunDir(chosen[0].path))

    def _tune_preferences(self) -> None:
        chosen = self.selected()
        if len(chosen) == 1 and saved_chat_model(chosen[0]) is not None:
            self.preference_requested.emit(RunDir(chosen[0].path))

    def _train_with_rewards(self) -> None:
        chosen = self.selected()
        if len(chosen) == 1 and saved_chat_model(chosen[0]) is not None:
            self.rewards_requested.emit(RunDir(chosen[0].path))

    def show_evaluation(self) -> None:
        """The selected run's evaluation in a window of its own."""
        from desktop.gui.widgets.evaluation_view import EvaluationView

        chosen = self.selected()
        if len(chosen) != 1:
            return
        view = EvaluationView()
        if not view.show_run(chosen[0].path):
            return
        dialog = self.evaluation_dialog = QDialog(self)
        dialog.setWindowTitle(self.tr("Evaluation: {run}").format(run=chosen[0].name))
        QVBoxLayout(dialog).addWidget(view)
        dialog.resize(1000, 620)
        dialog.show()

    def _choose_import(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, self.tr("Run folder to import"))
        if folder:
            self.import_run(Path(folder))

    def import_run(self, folder: Path) -> None:
        """Copy the run folder ``folder`` into the runs folder in the background, then list it."""
        if self._import_task is not None:
            return
        from desktop.core.runs.folders import import_run

        runs_dir = self.runs_dir
        task = self._import_task = BackgroundTask(lambda: import_run(folder, runs_dir), self)
        task.finished.connect(self._on_imported)
        task.failed.connect(self._on_import_failed)
        self.import_button.setEnabled(False)
        self.hint.setText(self.tr("Copying {folder}…").format(folder=folder.name))
        task.start()

    def _on_imported(self, run: RunDir) -> None:
        self._import_task = None
        self.import_button.setEnabled(True)
        self.hint.setText(self.tr("Imported {run}.").format(run=run.path.name))
        self.imported.emit(run)
        self.refresh()

    def _on_import_failed(self, exc: object, detail: str) -> None:
        self._import_task = None
        self.import_button.setEnabled(True)
        self.hint.setText("")
        QMessageBox.warning(
            self,
            self.tr("The run was not imported"),
            error_text(exc) if isinstance(exc, BaseException) else str(exc),
        )

    def _delete(self) -> None:
        chosen = self.selected()
        if not chosen:
            return
        names = "\n".join(info.name for info in chosen)
        answer = QMessageBox.question(
            self,
            self.tr("Delete runs"),
            self.tr("Delete these runs for good, with their checkpoints and models?\n\n{names}").format(
                names=names
            ),
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        for info in chosen:
            try:
                delete_run(RunDir(info.path))
            except (StudioError, OSError) as exc:
                QMessageBox.warning(self, self.tr("Could not delete a run"), error_text(exc))
                break
        self.refresh()


def epochs_text(info: RunInfo) -> str:
    """The epochs a run trained (``1.6``), with those its config asked for where they differ (``1.6 /
    3``): the column showed the config's figure for runs of 30 and of 400 steps alike."""
    if not info.epochs_trained:
        return f"{info.epochs:g}" if info.epochs else "–"
    trained = f"{info.epochs_trained:.2g}" if info.epochs_trained < 10 else f"{info.epochs_trained:.0f}"
    if info.epochs and abs(info.epochs_trained - info.epochs) > 0.05:
        return f"{trained} / {info.epochs:g}"
    return trained
