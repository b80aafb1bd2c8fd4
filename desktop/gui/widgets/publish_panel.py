"""After an export: publish it to the Hugging Face hub or ModelScope (the folder, the LoRA adapters or
the GGUF file with its Modelfile and card), with progress and Cancel, and the repository's address at
the end (:mod:`desktop.core.results.publish`)."""

from __future__ import annotations

import html
import re
import threading
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QWidget,
)

from desktop.gui.app_support.workers import BackgroundTask
from desktop.gui.widgets.error_label import show_error
from desktop.gui.widgets.progress_bar import ProgressBar
from desktop.shared_ui import sentences, shown


class PublishPanel(QGroupBox):
    """Hidden until :meth:`offer` gives it an export; then the repository, where, private, Publish."""

    published = Signal(object)
    """A push ended well: the :class:`~desktop.core.hub.uploads.Pushed`."""
    busy_changed = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(self.tr("Publish to a model hub"), parent)
        self.export: Path | None = None
        self.format = "folder"
        self._task: BackgroundTask | None = None
        self._pushing: Any = None  # (source, repository, parcel) of the push under way
        self._cancel = threading.Event()
        self.what = QLabel()
        self.what.setWordWrap(True)
        self.repo_edit = QLineEdit()
        self.repo_edit.setPlaceholderText(self.tr("name, or owner/name"))
        self.hub_combo = QComboBox()
        self.hub_combo.addItem(self.tr("Hugging Face"), "hf")
        self.hub_combo.addItem(self.tr("ModelScope"), "modelscope")
        self.hub_combo.setToolTip(
            self.tr("Hugging Face goes where Settings > Model sources points (a mirror must take uploads)")
        )
        self.private_check = QCheckBox(self.tr("Private: only you (and your organization) can see it"))
        self.private_check.setChecked(True)
        self.publish_button = QPushButton(self.tr("Publish"))
        self.publish_button.clicked.connect(lambda: self.start())
        self.cancel_button = QPushButton(self.tr("Cancel"))
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.busy = ProgressBar()
        self.busy.setRange(0, 1000)
        self.busy.setVisible(False)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setOpenExternalLinks(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        form = QFormLayout(self)
        form.addRow(self.what)
        form.addRow(self.tr("Repository:"), self.repo_edit)
        form.addRow(self.tr("Hub:"), self.hub_combo)
        form.addRow("", self.private_check)
        buttons = QHBoxLayout()
        buttons.addWidget(self.publish_button)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.busy, 1)
        form.addRow("", buttons)
        form.addRow(self.status)
        self.setVisible(False)

    def offer(self, export: Path, fmt: str, name: str) -> None:
        """Offer to publish ``export`` (a folder, or a GGUF file when ``fmt`` is ``gguf``); not while a
        push is under way (it keeps what it was given)."""
        if self._task is not None:
            return
        self.export, self.format = Path(export), fmt
        words = {
            "folder": self.tr("The model folder {name} with its model card."),
            "adapter": self.tr("The LoRA adapters in {name} with their model card."),
            "gguf": self.tr("{name} with its Modelfile and card."),
        }
        self.what.setText(words[fmt].format(name=self.export.name))
        if not self.repo_edit.text().strip():
            self.repo_edit.setText(re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")[:90] or "model")
        self.status.clear()
        self.setVisible(True)
        parent = self.parentWidget()
        while parent is not None and not isinstance(parent, QScrollArea):
            parent = parent.parentWidget()
        if parent is not None:  # below the fold on a small screen: brought into view once it is laid out
            QTimer.singleShot(0, self, lambda: parent.ensureWidgetVisible(self.publish_button))

    def start(self, replace: bool = False, again: Any = None) -> None:
        """Publish in the background (``again``: the push the user agreed may replace the repository's
        files, as it was: the same files, hub and repository)."""
        if self.export is None or self._task is not None:
            return
        from desktop.core.hub.uploads import push_source
        from desktop.core.results import publish

        if again is not None:
            source, repo, package = again
        else:
            repo = self.repo_edit.text().strip()
            if not re.fullmatch(r"([\w.-]+/)?[\w.-]+", repo):
                self.status.setText(
                    self.tr("Give the repository as name, or owner/name (letters, digits, - _ .).")
                )
                return
            try:
                package = publish.exported_parcel(self.export, self.format)
                source = push_source(self.hub_combo.currentData())
            except Exception as exc:  # a file gone since the export: said, nothing sent
                show_error(self.status, exc)
                return
        self._pushing = (source, repo, package)
        private, cancel = self.private_check.isChecked(), self._cancel
        cancel.clear()
        self._task = BackgroundTask(
            lambda: publish.publish(
                source,
                repo,
                package,
                private,
                replace,
                on_progress=lambda words, fraction, figures: task.report((words, fraction, figures)),
                cancel=cancel,
            ),
            self,
        )
        task = self._task
        task.progressed.connect(self._on_progress)
        task.finished.connect(self._on_finished)
        task.failed.connect(self._on_failed)
        self._set_busy(True)
        # ModelScope's client cannot stop an upload in the middle: no Cancel that would not cancel.
        self.cancel_button.setVisible(source.kind != "modelscope")
        self.status.setText(self.tr("Checking the token…"))
        task.start()

    def cancel(self) -> None:
        self._cancel.set()
        self.cancel_button.setEnabled(False)
        self.status.setText(self.tr("Cancelling…"))

    def is_busy(self) -> bool:
        return self._task is not None

    def shutdown(self) -> None:
        self._cancel.set()  # the repository stays as it was; the next push goes on

    def _on_progress(self, value: Any) -> None:
        from desktop.core.system.errors import human_size

        words, fraction, figures = value
        if self._task is None:
            return
        self.busy.setValue(round(fraction * 1000))
        line = shown(words) + "…"
        if figures is not None and figures.total:
            line += " " + self.tr("{done} of {total}").format(
                done=human_size(figures.done), total=human_size(figures.total)
            )
            if figures.speed > 0:
                line += self.tr(", {speed}/s").format(speed=human_size(figures.speed))
        if not self._cancel.is_set():
            self.status.setText(line)

    def _on_finished(self, pushed: Any) -> None:
        from desktop.core.results.publish import summary

        self._set_busy(False)
        link = f'<a href="{html.escape(pushed.url)}">{html.escape(pushed.url)}</a>'
        self.status.setText(
            sentences(self.tr("Published to {url}.").format(url=link), html.escape(shown(summary(pushed))))
        )
        self.published.emit(pushed)

    def _on_failed(self, exc: object, detail: str) -> None:
        from desktop.core.hub.pushed import HoldsOtherFiles

        self._set_busy(False)
        if isinstance(exc, HoldsOtherFiles):
            answer = QMessageBox.question(
                self,
                self.tr("Replace the repository's files?"),
                self.tr(
                    "{problem}\n\nReplace them? Files of the same names are overwritten and the others "
                    "deleted (the hub keeps the old ones in the repository's history)."
                ).format(problem=shown(exc.message)),
            )
            if answer == QMessageBox.StandardButton.Yes:
                self.start(replace=True, again=self._pushing)
                return
        show_error(self.status, exc)

    def _set_busy(self, busy: bool) -> None:
        if not busy:
            self._task = None
        self.publish_button.setEnabled(not busy)
        self.cancel_button.setVisible(busy)
        self.cancel_button.setEnabled(busy)
        self.busy.setValue(0)
        self.busy.setVisible(busy)
        for widget in (self.repo_edit, self.hub_combo, self.private_check):
            widget.setEnabled(not busy)
        self.busy_changed.emit(busy)
