"""Run history: every run folder on disk, with resume, export, delete and a loss-curve comparison."""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QColor, QDesktopServices, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.core.errors import StudioError
from desktop.core.runs import RunDir, RunInfo, delete_run, list_runs
from desktop.gui.core_text import error_text

CURVE_COLOURS = ("#2f6fde", "#e8793a", "#3aa55d", "#8e5bd9", "#d9534f", "#2aa1b3", "#c2497a", "#d9a21b")


class RunsDialog(QDialog):
    """Lists past runs from the runs folder; the main window acts on what the user picks."""

    resume_requested = Signal(object)
    """Continue this :class:`RunDir` from its last checkpoint."""
    export_requested = Signal(object)
    """Show this finished :class:`RunDir` on the Export page (export, try it)."""

    def __init__(self, runs_dir: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Runs"))
        self.resize(1000, 620)
        self.runs_dir = runs_dir
        self.infos: list[RunInfo] = []
        self.folder_label = QLabel()
        self.folder_label.setObjectName("hint")
        self.table = QTableWidget(0, 7)
        self.table.setHorizontalHeaderLabels(
            [
                self.tr("Name"),
                self.tr("Status"),
                self.tr("Task"),
                self.tr("Model"),
                self.tr("Dataset"),
                self.tr("Best score"),
                self.tr("Date"),
            ]
        )
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.itemSelectionChanged.connect(self._on_selection_changed)
        self.table.itemDoubleClicked.connect(lambda _item: self._open_folder())

        self.open_button = QPushButton(self.tr("Open folder"))
        self.open_button.clicked.connect(self._open_folder)
        self.resume_button = QPushButton(self.tr("Resume"))
        self.resume_button.setObjectName("primary")
        self.resume_button.clicked.connect(self._resume)
        self.export_button = QPushButton(self.tr("Export / try it"))
        self.export_button.clicked.connect(self._export)
        self.delete_button = QPushButton(self.tr("Delete…"))
        self.delete_button.clicked.connect(self._delete)
        self.refresh_button = QPushButton(self.tr("Refresh"))
        self.refresh_button.clicked.connect(self.refresh)
        QShortcut(QKeySequence.StandardKey.Refresh, self, activated=self.refresh)
        self.hint = QLabel()
        self.hint.setObjectName("hint")
        self.hint.setWordWrap(True)

        from desktop.gui.widgets.live_plot_widget import LivePlotWidget  # pyqtgraph: loaded on first use

        self.plot = LivePlotWidget(self.tr("Training loss"))
        self.plot.setMinimumHeight(200)

        buttons = QHBoxLayout()
        for button in (self.open_button, self.resume_button, self.export_button, self.delete_button):
            buttons.addWidget(button)
        buttons.addStretch()
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
        splitter.addWidget(self.plot)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)
        self.refresh()

    # ------------------------------------------------------------------ listing

    def status_text(self, status: str) -> str:
        """A run status in the user's language."""
        return {
            "finished": self.tr("Finished"),
            "stopped": self.tr("Stopped"),
            "failed": self.tr("Failed"),
            "running": self.tr("Running"),
            "interrupted": self.tr("Crashed"),
        }.get(status, status)

    def refresh(self) -> None:
        """Read the runs folder again."""
        self.infos = list_runs(self.runs_dir)
        self.folder_label.setText(self.tr("Runs in {folder}").format(folder=self.runs_dir))
        self.table.setRowCount(len(self.infos))
        colours = {"finished": "#3aa55d", "failed": "#d9534f", "interrupted": "#d9534f", "stopped": "#d9a21b"}
        for row, info in enumerate(self.infos):
            best = f"{info.best[0]} {info.best[1]:.4g}" if info.best else "–"
            date = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.created)) if info.created else ""
            status = self.status_text(info.status)
            if info.status != "finished" and info.total_steps:
                status += f" ({info.step}/{info.total_steps})"
            cells = [info.name, status, info.task, info.model, info.dataset, best, date]
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                if column == 1 and info.status in colours:
                    item.setForeground(QColor(colours[info.status]))
                self.table.setItem(row, column, item)
        if not self.infos:
            self.hint.setText(self.tr("No runs yet: train a model and it is listed here."))
        self._on_selection_changed()

    def selected(self) -> list[RunInfo]:
        """The runs whose rows are selected, in table order."""
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        return [self.infos[row] for row in rows]

    def select(self, *names: str) -> None:
        """Select the runs with these folder names."""
        self.table.clearSelection()
        mode = self.table.selectionMode()
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.MultiSelection)
        for row, info in enumerate(self.infos):
            if info.name in names:
                self.table.selectRow(row)
        self.table.setSelectionMode(mode)

    def _on_selection_changed(self) -> None:
        chosen = self.selected()
        one = chosen[0] if len(chosen) == 1 else None
        self.open_button.setEnabled(one is not None)
        self.resume_button.setEnabled(bool(one and one.resumable))
        self.export_button.setEnabled(bool(one and one.status == "finished"))
        self.delete_button.setEnabled(bool(chosen) and all(i.status != "running" for i in chosen))
        if one is not None and not one.resumable and one.status in ("stopped", "failed", "interrupted"):
            self.hint.setText(
                self.tr("This run saved no checkpoint, so it cannot be resumed; train it again.")
            )
        elif self.infos:
            self.hint.setText(self.tr("Select two or more runs to compare their loss curves."))
        self.plot.clear_curves()
        for i, info in enumerate(chosen):
            if not info.losses:
                continue
            self.plot.add_curve(info.name, info.name, CURVE_COLOURS[i % len(CURVE_COLOURS)], width=2)
            for step, loss in info.losses:
                self.plot.append(info.name, step, loss)
        self.plot.flush()

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
