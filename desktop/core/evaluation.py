"""Evaluation a person can read: where a classifier is right and wrong, not only one accuracy figure.

A finished classification run keeps ``evaluation.json`` in its folder (the CLI, the app and the model
card read it): accuracy and macro-F1, precision / recall / F1 per class, the confusion matrix with the
evaluation rows of each cell, the rows the model got wrong (most confident first) and the label counts
of the training and evaluation sets. Computed from the predictions the trainer makes on the evaluation
split, so it costs one pass over that split and no second copy of the model.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

EVALUATION_NAME = "evaluation.json"
MAX_ERRORS = 500
"""Wrong rows kept in the file (the most confident first): enough to read, small enough to open."""
MAX_TEXT = 500
"""Characters of a row's text kept with an error."""
MAX_ROWS_WITH_TEXT = 5000
"""Up to this many evaluation rows, each row's text (its start) and confidence are kept, so that a click
on any cell of the confusion matrix shows its rows; beyond, the wrong rows only."""
ROW_TEXT = 200


@dataclass
class ClassScores:
    """Precision, recall and F1 of one class, and how many evaluation rows have it (``support``)."""

    label: str
    precision: float
    recall: float
    f1: float
    support: int


@dataclass
class ClassificationReport:
    """What a classifier got right and wrong on the evaluation rows.

    Attributes:
        labels: The class names, in the model's order (rows and columns of ``matrix``).
        matrix: ``matrix[true][predicted]``: evaluation rows per cell; sums to the row count.
        cells: The evaluation row indices of each cell, ``cells[true][predicted]``.
        errors: The wrong rows, the most confident first: row, text, label, predicted, confidence.
        counts: Rows per label of the ``train`` and ``eval`` sets.
        texts: The start of each evaluation row's text, and ``confidence`` the probability of its
            predicted class (up to :data:`MAX_ROWS_WITH_TEXT` rows; empty beyond).
    """

    labels: list[str]
    accuracy: float
    macro_f1: float
    classes: list[ClassScores]
    matrix: list[list[int]]
    cells: list[list[list[int]]]
    errors: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    texts: list[str] = field(default_factory=list)
    confidence: list[float] = field(default_factory=list)

    @property
    def rows(self) -> int:
        """Evaluation rows."""
        return sum(map(sum, self.matrix))

    def row_text(self, row: int) -> str:
        """The text of evaluation row ``row`` as far as it is kept ("" when not)."""
        if row < len(self.texts):
            return self.texts[row]
        return next((e["text"] for e in self.errors if e["row"] == row), "")

    def to_dict(self) -> dict[str, Any]:
        return {"task": "classification", **asdict(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ClassificationReport:
        values = {k: v for k, v in data.items() if k != "task"}
        values["classes"] = [ClassScores(**c) for c in values.get("classes", [])]
        return cls(**values)


def classify_report(
    labels: list[str],
    truth: list[int],
    probabilities: Any,
    texts: list[str] | None = None,
    counts: dict[str, dict[str, int]] | None = None,
) -> ClassificationReport:
    """The report from each row's true class and predicted probabilities.

    Args:
        labels: Class names by id.
        truth: The true class id of each evaluation row.
        probabilities: Rows x classes (softmax of the logits).
        texts: Each row's text, for the errors list.
        counts: Label counts of the training and evaluation sets.
    """
    import numpy as np

    probs = np.asarray(probabilities, dtype=float)
    true = np.asarray(truth, dtype=int)
    predicted = probs.argmax(axis=1) if len(probs) else np.zeros(0, dtype=int)
    size = len(labels)
    matrix = np.zeros((size, size), dtype=int)
    np.add.at(matrix, (true, predicted), 1)
    cells: list[list[list[int]]] = [[[] for _ in range(size)] for _ in range(size)]
    for row, (t, p) in enumerate(zip(true.tolist(), predicted.tolist(), strict=True)):
        cells[t][p].append(row)
    classes = []
    for c, label in enumerate(labels):
        tp = int(matrix[c, c])
        predicted_c, support = int(matrix[:, c].sum()), int(matrix[c, :].sum())
        precision = tp / predicted_c if predicted_c else 0.0
        recall = tp / support if support else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        classes.append(ClassScores(label, precision, recall, f1, support))
    present = [s for s in classes if s.support or matrix[:, labels.index(s.label)].sum()]
    wrong = [row for row in range(len(true)) if predicted[row] != true[row]]
    wrong.sort(key=lambda row: -probs[row, predicted[row]])
    errors = [
        {
            "row": row,
            "text": (texts[row][:MAX_TEXT] if texts else ""),
            "label": labels[true[row]],
            "predicted": labels[predicted[row]],
            "confidence": float(probs[row, predicted[row]]),
        }
        for row in wrong[:MAX_ERRORS]
    ]
    return ClassificationReport(
        labels=list(labels),
        accuracy=float((predicted == true).mean()) if len(true) else 0.0,
        macro_f1=float(np.mean([s.f1 for s in present])) if present else 0.0,
        classes=classes,
        matrix=matrix.tolist(),
        cells=cells,
        errors=errors,
        counts=counts or {},
        texts=[t[:ROW_TEXT] for t in texts] if texts and len(texts) <= MAX_ROWS_WITH_TEXT else [],
        confidence=(
            [round(float(probs[r, predicted[r]]), 4) for r in range(len(true))]
            if len(true) <= MAX_ROWS_WITH_TEXT
            else []
        ),
    )


def label_counts(values: list[Any]) -> dict[str, int]:
    """Rows per label, labels written as the model names them."""
    from collections import Counter

    from desktop.core.columns import label_key

    return dict(Counter(label_key(v) for v in values))


def softmax(logits: Any) -> Any:
    """Row-wise probabilities from logits (numpy, stable)."""
    import numpy as np

    values = np.asarray(logits, dtype=float)
    values = values - values.max(axis=1, keepdims=True)
    exp = np.exp(values)
    return exp / exp.sum(axis=1, keepdims=True)


def save(
    run_dir: Path, fine_tuned: ClassificationReport | None = None, base: ClassificationReport | None = None
) -> Path:
    """Write the fine-tuned and / or the base model's report into the run's ``evaluation.json``
    (atomically; a part not given keeps what the file has)."""
    from desktop.core.paths import atomic_write_text

    path = Path(run_dir) / EVALUATION_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    if not isinstance(data, dict):
        data = {}
    for key, report in (("fine_tuned", fine_tuned), ("base", base)):
        if report is not None:
            data[key] = report.to_dict()
        data.setdefault(key, None)
    atomic_write_text(path, json.dumps(data, ensure_ascii=False, indent=1))
    return path


def load(run_dir: Path) -> dict[str, ClassificationReport | None] | None:
    """The run's evaluation (``fine_tuned`` and ``base``), or ``None`` when it has none or it is damaged."""
    try:
        data = json.loads((Path(run_dir) / EVALUATION_NAME).read_text(encoding="utf-8"))
        return {
            key: ClassificationReport.from_dict(data[key]) if data.get(key) else None
            for key in ("fine_tuned", "base")
        }
    except (OSError, ValueError, KeyError, TypeError):
        return None
