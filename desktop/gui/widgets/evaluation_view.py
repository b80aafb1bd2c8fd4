"""A finished run's evaluation at a glance, base -> fine-tuned. A classifier: each class, the confusion
matrix (click a cell for its rows), the mistakes the model was surest of, and the labels of the training
and evaluation sets. A causal LM or a sequence-to-sequence model: loss, perplexity, BLEU and chrF, and
evaluation rows with the reference beside the base model's and the fine-tuned model's answers. A
preference run: how often the chosen answer is preferred, the margin, TRL's reward accuracy, and the pairs
it now gets right and still gets wrong. Reads ``evaluation.json`` from the run folder
(:mod:`desktop.core.training.evaluation`)."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QIcon
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QSplitter,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.core.training import evaluation
from desktop.core.training.evaluation import ClassificationReport, GenerationReport
from desktop.core.training.preference_evaluation import PreferenceReport
from desktop.gui.widgets.pictures import THUMBNAIL, thumbnail_pixmap
from desktop.shared_ui import shown

SHOWN_THUMBNAILS = 100
"""An image classifier's rows: the first this many get their picture (each decoded when listed)."""
RIGHT = QColor(58, 165, 93)
WRONG = QColor(217, 83, 79)


def _table(headers: list[str]) -> QTableWidget:
    table = QTableWidget(0, len(headers))
    table.setHorizontalHeaderLabels(headers)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.verticalHeader().setVisible(False)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    table.horizontalHeader().setStretchLastSection(True)
    return table


def _item(value: object, align_right: bool = False) -> QTableWidgetItem:
    item = QTableWidgetItem(str(value))
    if align_right:
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item


class EvaluationView(QWidget):
    """Shows a run's evaluation; :meth:`show_run` says whether the run has one."""

    cell_shown = Signal(int, int)
    """The rows of a confusion-matrix cell (true, predicted) are listed."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.report: ClassificationReport | None = None
        self.base: ClassificationReport | None = None
        self.measure = ""
        """The metric key the run chose its best checkpoint by (``eval_loss``...); "" when none."""
        self.summary = QLabel()
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setWordWrap(True)
        self.checkpoint = QLabel()  # which step's model was evaluated, by which figure (best.py)
        self.checkpoint.setWordWrap(True)
        self.checkpoint.setVisible(False)
        self.verdict = QLabel()
        self.verdict.setObjectName("hint")
        self.verdict.setWordWrap(True)
        self.classes = _table(
            [self.tr("Label"), self.tr("Precision"), self.tr("Recall"), self.tr("F1"), self.tr("Rows")]
        )
        self.counts = _table([self.tr("Label"), self.tr("Training rows"), self.tr("Evaluation rows")])
        self.matrix = QTableWidget()
        self.matrix.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.matrix.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.matrix.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.matrix.horizontalHeader().setMinimumSectionSize(64)
        self.matrix.setToolTip(
            self.tr("Rows: the true label. Columns: the predicted label. Click a cell for its rows.")
        )
        self.matrix.cellClicked.connect(self.show_cell)
        self.rows_title = QLabel()
        self.rows_title.setWordWrap(True)
        self.rows = _table([self.tr("Text"), self.tr("Label"), self.tr("Predicted"), self.tr("Confidence")])
        self.rows.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.rows.horizontalHeader().setStretchLastSection(False)

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(QLabel(self.tr("Each class")))
        left_layout.addWidget(self.classes, 2)
        left_layout.addWidget(QLabel(self.tr("Labels in the training and evaluation sets")))
        left_layout.addWidget(self.counts, 1)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(QLabel(self.tr("Confusion matrix (rows: true label, columns: predicted)")))
        right_layout.addWidget(self.matrix, 2)
        right_layout.addWidget(self.rows_title)
        right_layout.addWidget(self.rows, 3)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)
        self.samples = _table(
            [self.tr("Prompt"), self.tr("Reference"), self.tr("Base model"), self.tr("Fine-tuned")]
        )
        self.samples.setWordWrap(True)
        for column in range(4):
            self.samples.horizontalHeader().setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)
        self.samples.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.pages = QStackedWidget()
        self.pages.addWidget(splitter)
        self.pages.addWidget(self.samples)
        self.pages.addWidget(self._preference_page())
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.checkpoint)
        layout.addWidget(self.verdict)
        layout.addWidget(self.pages, 1)

    def show_run(self, run_dir: str | Path | None) -> bool:
        """Show the evaluation kept in ``run_dir``; ``False`` (and nothing shown) when it has none."""
        saved = evaluation.load(Path(run_dir)) if run_dir else None
        if not saved or saved["fine_tuned"] is None:
            self.report = self.base = None
            return False
        from desktop.core.training import best

        found = best.of_run(run_dir)
        self.measure = found.get("metric", "")  # the header leads with the figure the run chose
        self.show_report(saved["fine_tuned"], saved["base"])
        which = best.model_sentence(found)
        self.checkpoint.setText(shown(which) if which is not None else "")
        self.checkpoint.setVisible(which is not None)
        return True

    def show_report(
        self,
        report: ClassificationReport | GenerationReport | PreferenceReport,
        base: ClassificationReport | GenerationReport | PreferenceReport | None = None,
    ) -> None:
        """Show ``report`` (and the base model's, for the before and after)."""
        self.report, self.base = report, base
        self.summary.setToolTip("")
        self.checkpoint.setVisible(False)  # show_run names the checkpoint of a run's report
        if isinstance(report, PreferenceReport):
            self._show_preference(report, base if isinstance(base, PreferenceReport) else None)
            return
        if getattr(report, "task", "") == "grpo":
            self._show_rewards(report, base if getattr(base, "task", "") == "grpo" else None)
            return
        if isinstance(report, GenerationReport):
            self._show_generation(report, base if isinstance(base, GenerationReport) else None)
            return
        self.pages.setCurrentIndex(0)
        self._show_summary()
        self._show_classes()
        self._show_counts()
        self._show_matrix()
        self.show_errors()

    def _show_generation(self, report: GenerationReport, base: GenerationReport | None) -> None:
        self.pages.setCurrentIndex(1)
        parts = []
        for name, now, before in (
            (self.tr("Loss"), report.loss, base.loss if base else None),
            (self.tr("Perplexity"), report.perplexity, base.perplexity if base else None),
            ("BLEU", report.bleu, base.bleu if base else None),
            ("chrF", report.chrf, base.chrf if base else None),
        ):
            if now is not None:
                parts.append(f"{html.escape(name)} {self._figure(now, before)}")
        text = " · ".join(parts) + " · " + self.tr("on {rows} evaluation rows").format(rows=report.rows)
        if report.bleu is not None:
            text += "<br>" + html.escape(
                self.tr(
                    "BLEU and chrF over the answers to the first {count} rows (tokenization {tokenize})."
                ).format(count=report.scored, tokenize=report.tokenize)
            )
        self.summary.setText(text + (html.escape(self.tr("  (base model → fine-tuned)")) if base else ""))
        worse = (
            base is not None and base.loss is not None and report.loss is not None and report.loss > base.loss
        )
        self.verdict.setText(
            self.tr(
                "The fine-tuned model fits the evaluation rows worse than the base model: train longer, with "
                "a lower learning rate, or with more examples."
            )
            if worse
            else ""
        )
        self.verdict.setVisible(worse)
        before = base.samples if base else []
        pictures = any(sample.get("picture") for sample in report.samples)  # a vision-language model's
        self.samples.setIconSize(QSize(THUMBNAIL, THUMBNAIL) if pictures else QSize(16, 16))
        self.samples.setRowCount(len(report.samples))
        silent = self.tr("(no text: the model ended its answer at once)")
        for row, sample in enumerate(report.samples):
            then = before[row]["output"] if row < len(before) else None
            answers = [silent if answer == "" else answer or "" for answer in (then, sample["output"])]
            for column, value in enumerate((sample["prompt"], sample["reference"], *answers)):
                self.samples.setItem(row, column, _item(value))
            pixmap = thumbnail_pixmap(sample["picture"]) if sample.get("picture") else None
            if pixmap is not None:
                self.samples.item(row, 0).setIcon(QIcon(pixmap))

    def _show_rewards(self, report: Any, base: Any) -> None:
        """A reasoning run's: the share of held-out prompts whose greedy answer earns each reward (base →
        fine-tuned), and the first prompts' answers beside their references."""
        from desktop.core.data.rewards import describe

        self.pages.setCurrentIndex(1)
        parts = []
        for name, share in report.earned.items():
            before = base.earned.get(name) if base else None
            parts.append(f"{html.escape(shown(describe(name)))} {self._figure(share, before)}")
        words = self.tr("share of {rows} held-out prompts whose greedy answer earns each reward")
        text = " · ".join(parts) + "<br>" + html.escape(words.format(rows=report.rows))
        self.summary.setText(text + (html.escape(self.tr("  (base model → fine-tuned)")) if base else ""))
        self.verdict.setVisible(False)
        before = base.samples if base else []
        self.samples.setRowCount(len(report.samples))
        for row, sample in enumerate(report.samples):
            then = before[row]["output"] if row < len(before) else ""
            for column, value in enumerate((sample["prompt"], sample["reference"], then, sample["output"])):
                self.samples.setItem(row, column, _item(value))

    def _preference_page(self) -> QWidget:
        """Two tables of pairs: those the tuned model now gets right, and those it still gets wrong."""
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        headers = [
            self.tr("Prompt"),
            self.tr("Chosen"),
            self.tr("Rejected"),
            self.tr("Margin before"),
            self.tr("Margin after"),
        ]
        self.improved_title = QLabel(self.tr("Now preferring the chosen answer"))
        self.still_wrong_title = QLabel(self.tr("Still preferring the rejected answer"))
        self.improved, self.still_wrong = _table(headers), _table(headers)
        for title, table in (
            (self.improved_title, self.improved),
            (self.still_wrong_title, self.still_wrong),
        ):
            table.setWordWrap(True)
            for column in range(3):
                table.horizontalHeader().setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)
            table.horizontalHeader().setStretchLastSection(False)
            table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
            table.setToolTip(
                self.tr("Margin: how much likelier the chosen answer is than the rejected one (per token).")
            )
            layout.addWidget(title)
            layout.addWidget(table, 1)
        return page

    def _show_preference(self, report: PreferenceReport, base: PreferenceReport | None) -> None:
        self.pages.setCurrentIndex(2)
        parts = []
        for name, now, before in (
            (self.tr("Preference accuracy"), report.accuracy, base.accuracy if base else None),
            (self.tr("Mean margin"), report.margin, base.margin if base else None),
        ):
            if now is not None:
                parts.append(f"{html.escape(name)} {self._figure(now, before)}")
        parts.append(html.escape(self.tr("on {rows} held-out pairs").format(rows=report.rows)))
        text = " · ".join(parts)
        if base:
            text += html.escape(self.tr("  (base model → fine-tuned)"))
        if report.reward_accuracy is not None:
            reward = self.tr("{method} reward accuracy {accuracy:.3f} at the last evaluation").format(
                method=report.method.upper() or "TRL", accuracy=report.reward_accuracy
            )
            if report.reward_margin is not None:
                reward += " · " + self.tr("reward margin {margin:.3f}").format(margin=report.reward_margin)
            text += "<br>" + html.escape(reward)
        self.summary.setText(text)
        self.summary.setToolTip(
            self.tr(
                "A model prefers the answer it finds likelier (mean log-probability per token). The margin "
                "is chosen minus rejected."
            )
        )
        worse = (
            base is not None
            and base.accuracy is not None
            and report.accuracy is not None
            and report.accuracy < base.accuracy
        )
        self.verdict.setText(
            self.tr(
                "The tuned model prefers the chosen answers less often than the base model: check that "
                "chosen and rejected are not swapped, or lower the learning rate."
            )
            if worse
            else ""
        )
        self.verdict.setVisible(worse)
        self.improved_title.setVisible(bool(report.improved))
        self.still_wrong_title.setText(
            self.tr("Still preferring the rejected answer")
            if report.still_wrong
            else self.tr("The tuned model prefers the chosen answer in every pair measured.")
        )
        self.still_wrong_title.setVisible(bool(report.still_wrong or report.rows))
        for table, examples in ((self.improved, report.improved), (self.still_wrong, report.still_wrong)):
            table.setVisible(bool(examples))
            table.setRowCount(len(examples))
            for row, example in enumerate(examples):
                before, after = example.get("before"), example.get("after")
                for column, value in enumerate(
                    (
                        example.get("prompt", ""),
                        example.get("chosen", ""),
                        example.get("rejected", ""),
                        f"{before:+.3f}" if before is not None else "",
                        f"{after:+.3f}" if after is not None else "",
                    )
                ):
                    item = _item(value, align_right=column >= 3)
                    margin = (None, None, None, before, after)[column]
                    if margin is not None:  # green where the chosen answer is preferred
                        item.setForeground(QBrush(RIGHT if margin > 0 else WRONG))
                    table.setItem(row, column, item)

    def _figure(self, now: float, before: float | None) -> str:
        return f"{before:.3f} → <b>{now:.3f}</b>" if before is not None else f"<b>{now:.3f}</b>"

    def _show_summary(self) -> None:
        report, base = self.report, self.base
        figures = {
            "eval_loss": (self.tr("Validation loss"), report.loss, base.loss if base else None),
            "eval_accuracy": (self.tr("Accuracy"), report.accuracy, base.accuracy if base else None),
            "eval_macro_f1": (self.tr("macro-F1"), report.macro_f1, base.macro_f1 if base else None),
        }
        # The figure the run chose its best checkpoint by comes first: a run whose validation loss rose
        # from 0.72 to 2.98 read "Accuracy 0.375 -> 0.475" at the top, as if it had learnt.
        order = sorted(figures, key=lambda key: key != self.measure)
        parts = [
            f"{html.escape(name)} {self._figure(now, before)}"
            for name, now, before in (figures[key] for key in order)
            if now is not None
        ]
        parts.append(html.escape(self.tr("on {rows} evaluation rows").format(rows=report.rows)))
        self.summary.setText(
            " · ".join(parts) + (html.escape(self.tr("  (base model → fine-tuned)")) if base else "")
        )
        if self._worse_than_base():
            self.verdict.setText(
                self.tr(
                    "The fine-tuned model does worse than the base model on these rows: train longer, with "
                    "a lower learning rate, or with more examples of the classes it gets wrong."
                )
            )
        elif (
            len(report.labels) > 1
            and max(sum(row) for row in zip(*report.matrix, strict=True)) == report.rows
        ):
            self.verdict.setText(
                self.tr(
                    "The model gives every row the same label: it has learnt the most common label, not "
                    "the task. Train longer, or balance the labels (see the counts)."
                )
            )
        else:
            self.verdict.setText("")
        self.verdict.setVisible(bool(self.verdict.text()))

    def _worse_than_base(self) -> bool:
        """Whether the fine-tuned classifier scores worse than the base model by the run's measure
        (macro-F1 when the run chose none, or the reports lack its figure)."""
        report, base = self.report, self.base
        if base is None:
            return False
        if self.measure == "eval_loss" and report.loss is not None and base.loss is not None:
            # A higher loss with more rows right is not worse (a surer model pays more for its few
            # mistakes: a tiny image run went from 22% to 78% right): said only when no more are right.
            return report.loss > base.loss and report.accuracy <= base.accuracy
        if self.measure == "eval_accuracy":
            return report.accuracy < base.accuracy
        return report.macro_f1 < base.macro_f1

    def _show_classes(self) -> None:
        report = self.report
        base = {c.label: c for c in self.base.classes} if self.base else {}
        self.classes.setRowCount(len(report.classes))
        for row, scores in enumerate(report.classes):
            self.classes.setItem(row, 0, _item(scores.label))
            before = base.get(scores.label)
            for column, (now, then) in enumerate(
                (
                    (scores.precision, before.precision if before else None),
                    (scores.recall, before.recall if before else None),
                    (scores.f1, before.f1 if before else None),
                ),
                start=1,
            ):
                self.classes.setItem(
                    row, column, _item(f"{then:.2f} → {now:.2f}" if then is not None else f"{now:.2f}", True)
                )
            self.classes.setItem(row, 4, _item(scores.support, True))

    def _show_counts(self) -> None:
        counts = self.report.counts
        train, eval_ = counts.get("train", {}), counts.get("eval", {})
        labels = list(self.report.labels) + [k for k in {**train, **eval_} if k not in self.report.labels]
        self.counts.setRowCount(len(labels))
        for row, label in enumerate(labels):
            self.counts.setItem(row, 0, _item(label))
            self.counts.setItem(row, 1, _item(train.get(label, 0), True))
            self.counts.setItem(row, 2, _item(eval_.get(label, 0), True))

    def _show_matrix(self) -> None:
        report = self.report
        size = len(report.labels)
        self.matrix.clear()
        self.matrix.setRowCount(size)
        self.matrix.setColumnCount(size)
        self.matrix.setHorizontalHeaderLabels(report.labels)
        self.matrix.setVerticalHeaderLabels(report.labels)
        peak = max(1, max((n for row in report.matrix for n in row), default=1))
        for t in range(size):
            for p in range(size):
                count = report.matrix[t][p]
                item = _item(count)
                item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                color = QColor(RIGHT if t == p else WRONG)
                color.setAlpha(int(30 + 190 * count / peak) if count else 0)
                item.setBackground(QBrush(color))
                item.setToolTip(
                    self.tr("{count} rows labelled {label}, predicted {predicted}").format(
                        count=count, label=report.labels[t], predicted=report.labels[p]
                    )
                )
                self.matrix.setItem(t, p, item)

    def show_errors(self) -> None:
        """List the wrong rows, the ones the model was surest of first."""
        errors = self.report.errors
        total = self.report.rows - sum(self.report.matrix[i][i] for i in range(len(self.report.labels)))
        self.rows_title.setText(
            self.tr("Wrong: 1 row.")
            if total == 1
            else self.tr("Wrong: {count} rows, the ones the model was surest of first").format(count=total)
            if total
            else self.tr("Every evaluation row is right.")
        )
        self._fill_rows([(e["text"], e["label"], e["predicted"], e["confidence"]) for e in errors])

    def show_cell(self, true: int, predicted: int) -> None:
        """List the rows of a confusion-matrix cell."""
        report = self.report
        rows = report.cells[true][predicted]
        label, guess = report.labels[true], report.labels[predicted]
        self.rows_title.setText(
            self.tr("{count} rows labelled {label} and predicted {predicted}").format(
                count=len(rows), label=label, predicted=guess
            )
        )
        confidence = report.confidence
        listed = [
            (report.row_text(row), label, guess, confidence[row] if row < len(confidence) else None)
            for row in rows
        ]
        self._fill_rows(listed)
        self.cell_shown.emit(true, predicted)

    def _fill_rows(self, rows: list[tuple[str, str, str, float | None]]) -> None:
        pictures = bool(getattr(self.report, "pictures", False))  # an image classifier's: thumbnails
        header = self.tr("Picture") if pictures else self.tr("Text")
        self.rows.setHorizontalHeaderItem(0, QTableWidgetItem(header))
        self.rows.setIconSize(QSize(THUMBNAIL, THUMBNAIL) if pictures else QSize(16, 16))
        self.rows.verticalHeader().setDefaultSectionSize(THUMBNAIL + 6 if pictures else 22)
        self.rows.setRowCount(len(rows))
        for index, (text, label, predicted, confidence) in enumerate(rows):
            if pictures:
                item = _item(Path(text).name if text else "")
                item.setToolTip(text)
                pixmap = thumbnail_pixmap(text) if index < SHOWN_THUMBNAILS else None
                if pixmap is not None:
                    item.setIcon(QIcon(pixmap))
                self.rows.setItem(index, 0, item)
            else:
                self.rows.setItem(index, 0, _item(text.replace("\n", " ")))
            self.rows.setItem(index, 1, _item(label))
            self.rows.setItem(index, 2, _item(predicted))
            self.rows.setItem(index, 3, _item(f"{confidence:.0%}" if confidence is not None else "", True))
