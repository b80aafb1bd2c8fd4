"""Evaluation a person can read: where a model is right and wrong, not only one loss figure.

A finished run with evaluation rows keeps ``evaluation.json`` in its folder (the CLI, the app and the
model card read it), for the fine-tuned model and, measured before the first step, the base model:

- classification: accuracy and macro-F1, precision / recall / F1 per class, the confusion matrix with
  the evaluation rows of each cell, the rows the model got wrong (most confident first) and the label
  counts of the training and evaluation sets;
- causal-LM and sequence-to-sequence: loss and perplexity, a handful of evaluation rows with the
  reference beside the model's answer, and for sequence-to-sequence BLEU and chrF (sacrebleu, with its
  Chinese tokenization when the references are Chinese).

Computed with the model the trainer holds (no second copy in memory).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from desktop.core.data.tasks import SAMPLE_ROWS, SCORED_ROWS
from desktop.core.training.preference_evaluation import PreferenceReport

EVALUATION_NAME = "evaluation.json"
MAX_ERRORS = 500
"""Wrong rows kept in the file (the most confident first): enough to read, small enough to open."""
MAX_TEXT = 500
"""Characters of a row's text kept with an error."""
MAX_ROWS_WITH_TEXT = 5000
"""Up to this many evaluation rows, each row's text (its start) and confidence are kept, so that a click
on any cell of the confusion matrix shows its rows; beyond, the wrong rows only."""
ROW_TEXT = 200
GENERATION_S = 60.0
"""The time the answers for BLEU and chrF may take; the rows answered by then are scored."""


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
    loss: float | None = None  # the validation loss (reports saved before it was kept have none)
    pictures: bool = False  # image classification: each row's "text" is its picture's path (whole)

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


@dataclass
class GenerationReport:
    """A causal-LM or sequence-to-sequence model on the evaluation rows.

    Attributes:
        rows: Evaluation rows (the loss is over all of them).
        loss / perplexity: The evaluation loss and its exponential.
        bleu / chrf: Sequence-to-sequence: corpus BLEU and chrF of the answers to the first ``scored``
            rows (``tokenize``: sacrebleu's tokenization used for BLEU).
        samples: A few rows: ``prompt``, ``reference`` and the model's ``output``.
    """

    task: str
    rows: int
    loss: float | None = None
    perplexity: float | None = None
    bleu: float | None = None
    chrf: float | None = None
    scored: int = 0
    tokenize: str = ""
    samples: list[dict[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GenerationReport:
        return cls(**data)


Report = ClassificationReport | GenerationReport | PreferenceReport


def bleu_chrf(outputs: list[str], references: list[str]) -> tuple[float, float, str]:
    """Corpus BLEU and chrF (0-100) of ``outputs`` against ``references``, and the BLEU tokenization:
    ``zh`` (per character) when the references hold Chinese, else sacrebleu's default ``13a``."""
    import sacrebleu

    tokenize = "zh" if any(_cjk(text) for text in references) else "13a"
    bleu = sacrebleu.corpus_bleu(outputs, [references], tokenize=tokenize)
    chrf = sacrebleu.corpus_chrf(outputs, [references])
    return float(bleu.score), float(chrf.score), tokenize


def _cjk(text: str) -> bool:
    return any("\u4e00" <= c <= "\u9fff" or "\u3400" <= c <= "\u4dbf" for c in text)


def generation_report(
    task: str,
    rows: int,
    loss: float | None,
    pairs: list[tuple[str, str]],
    answer: Any,
    budget_s: float | None = None,
    pictures: list[str] | None = None,
) -> GenerationReport:
    """The report from the evaluation loss and the model's answers to the ``pairs`` (prompt,
    reference); ``answer(prompt, reference)`` returns the model's answer (the reference bounds its
    length). Sequence-to-sequence answers up to
    :data:`SCORED_ROWS` rows within ``budget_s`` (default :data:`GENERATION_S`) for BLEU and chrF;
    causal-LM the samples only. ``pictures``: a vision-language model's picture of each pair (a path,
    or "" for one held as bytes), kept with its sample for the report's thumbnails."""
    import math
    import time

    budget_s = GENERATION_S if budget_s is None else budget_s
    wanted = pairs[:SCORED_ROWS] if task == "seq2seq" else pairs[:SAMPLE_ROWS]
    outputs: list[str] = []
    started = time.perf_counter()
    for prompt, reference in wanted:
        outputs.append(answer(prompt, reference))
        if len(outputs) >= SAMPLE_ROWS and time.perf_counter() - started > budget_s:
            break
    report = GenerationReport(
        task,
        rows,
        loss,
        math.exp(min(loss, 50.0)) if loss is not None else None,
        samples=[
            {"prompt": prompt[:MAX_TEXT], "reference": reference[:MAX_TEXT], "output": output[:MAX_TEXT]}
            for (prompt, reference), output in zip(wanted[:SAMPLE_ROWS], outputs, strict=False)
        ],
    )
    for sample, picture in zip(report.samples, pictures or [], strict=False):
        if picture:
            sample["picture"] = picture
    if task == "seq2seq" and outputs:
        references = [reference for _, reference in wanted[: len(outputs)]]
        report.bleu, report.chrf, report.tokenize = bleu_chrf(outputs, references)
        report.scored = len(outputs)
    return report


def classify_report(
    labels: list[str],
    truth: list[int],
    probabilities: Any,
    texts: list[str] | None = None,
    counts: dict[str, dict[str, int]] | None = None,
    pictures: bool = False,
) -> ClassificationReport:
    """The report from each row's true class and predicted probabilities.

    Args:
        labels: Class names by id.
        truth: The true class id of each evaluation row.
        probabilities: Rows x classes (softmax of the logits).
        texts: Each row's text, for the errors list.
        counts: Label counts of the training and evaluation sets.
        pictures: ``texts`` are the rows' pictures (paths, kept whole).
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
            "text": (texts[row][: None if pictures else MAX_TEXT] if texts else ""),
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
        texts=(
            [t[: None if pictures else ROW_TEXT] for t in texts]
            if texts and len(texts) <= MAX_ROWS_WITH_TEXT
            else []
        ),
        confidence=(
            [round(float(probs[r, predicted[r]]), 4) for r in range(len(true))]
            if len(true) <= MAX_ROWS_WITH_TEXT
            else []
        ),
        pictures=pictures,
    )


def softmax(logits: Any) -> Any:
    """Row-wise probabilities from logits (numpy, stable)."""
    import numpy as np

    values = np.asarray(logits, dtype=float)
    values = values - values.max(axis=1, keepdims=True)
    exp = np.exp(values)
    return exp / exp.sum(axis=1, keepdims=True)


def confusion_svg(report: ClassificationReport, path: Path) -> Path:
    """The confusion matrix as an SVG picture (rows: true label, columns: predicted; the count in each
    cell, green on the diagonal, red off it, darker for more rows): for the model card."""
    import html

    def units(text: str) -> int:  # a Chinese character is as wide as two Latin ones
        return sum(2 if ord(c) > 0x2E7F else 1 for c in text)

    def short(label: str, most: int) -> str:
        out = ""
        for c in label:
            if units(out + c) > most - 1 and units(label) > most:
                return html.escape(out + "…")
            out += c
        return html.escape(out)

    size, cell, top = len(report.labels), 72, 40
    left = 16 + 7 * min(24, max((units(label) for label in report.labels), default=4))
    peak = max(1, max((n for row in report.matrix for n in row), default=1))
    width, height = max(340, left + cell * size + 10), top + cell * size + 34
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
    ]
    for p, label in enumerate(report.labels):
        x = left + p * cell + cell / 2
        parts.append(f'<text x="{x}" y="{top - 8}" text-anchor="middle">{short(label, 10)}</text>')
    for t, label in enumerate(report.labels):
        y = top + t * cell
        parts.append(
            f'<text x="{left - 8}" y="{y + cell / 2 + 4}" text-anchor="end">{short(label, 24)}</text>'
        )
        for p in range(size):
            count = report.matrix[t][p]
            opacity = 0.12 + 0.8 * count / peak if count else 0.0
            color = "rgb(58,165,93)" if t == p else "rgb(217,83,79)"
            x = left + p * cell
            parts.append(
                f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{color}" '
                f'fill-opacity="{opacity:.2f}" stroke="#cccccc"/>'
            )
            parts.append(
                f'<text x="{x + cell / 2}" y="{y + cell / 2 + 4}" text-anchor="middle">{count}</text>'
            )
    parts.append(
        f'<text x="{width / 2}" y="{height - 10}" text-anchor="middle" fill="#666666">'
        "columns: predicted label; rows: true label</text>"
    )
    parts.append("</svg>")
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def card_section(run_dir: Path, out: Path) -> str:
    """The model card's Evaluation section (Markdown, in English like the rest of the card), with the
    confusion matrix picture written into ``out``; "" when the run kept no evaluation."""
    saved = load(run_dir)
    report = saved["fine_tuned"] if saved else None
    if report is None:
        return ""
    base = saved["base"]
    if base is not None and type(base) is not type(report):
        base = None

    def cells(*values: float | None) -> str:
        return " | ".join("" if v is None else f"{v:.3f}" for v in values)

    lines = ["## Evaluation", ""]
    header = "| | base model | fine-tuned |\n|---|---|---|" if base else "| | fine-tuned |\n|---|---|"
    if isinstance(report, ClassificationReport):
        lines += [f"On the {report.rows} evaluation rows the run held out:", "", header]
        for name, attribute in (("accuracy", "accuracy"), ("macro-F1", "macro_f1")):
            values = (
                (getattr(base, attribute), getattr(report, attribute))
                if base
                else (getattr(report, attribute),)
            )
            lines.append(f"| {name} | {cells(*values)} |")
        lines += ["", "| label | precision | recall | F1 | rows |", "|---|---|---|---|---|"]
        for c in report.classes:
            lines.append(
                f"| {_cell(c.label)} | {c.precision:.3f} | {c.recall:.3f} | {c.f1:.3f} | {c.support} |"
            )
        confusion_svg(report, out / "confusion_matrix.svg")
        lines += ["", "![Confusion matrix (rows: true label, columns: predicted)](confusion_matrix.svg)"]
    elif isinstance(report, PreferenceReport):
        lines += _preference_section(report, base, header, cells)
    elif getattr(report, "task", "") == "grpo":
        from desktop.core.training.grpo_evaluation import card_lines

        lines += card_lines(report, base)
    else:
        lines += [f"On the {report.rows} evaluation rows the run held out:", "", header]
        for name, attribute in (
            ("loss", "loss"),
            ("perplexity", "perplexity"),
            ("BLEU", "bleu"),
            ("chrF", "chrf"),
        ):
            if getattr(report, attribute) is None:
                continue
            values = (
                (getattr(base, attribute), getattr(report, attribute))
                if base
                else (getattr(report, attribute),)
            )
            lines.append(f"| {name} | {cells(*values)} |")
        if report.samples:
            lines += ["", "| prompt | reference | answer |", "|---|---|---|"]
            for sample in report.samples:
                row = (_cell(sample["prompt"]), _cell(sample["reference"]), _cell(sample["output"]))
                lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def _preference_section(report: PreferenceReport, base: Any, header: str, cells: Any) -> list[str]:
    lines = [
        f"On {report.rows} preference pairs the run held out (a model prefers the answer with the higher "
        "mean log-probability per token):",
        "",
        header,
    ]
    for name, attribute in (("preference accuracy", "accuracy"), ("mean margin (nats per token)", "margin")):
        values = (
            (getattr(base, attribute), getattr(report, attribute)) if base else (getattr(report, attribute),)
        )
        lines.append(f"| {name} | {cells(*values)} |")
    if report.reward_accuracy is not None:
        lines += [
            "",
            f"{report.method.upper()} reward accuracy at the last evaluation: {report.reward_accuracy:.3f}",
        ]
    for title, examples in (
        ("Now preferring the chosen answer", report.improved),
        ("Still preferring the rejected answer", report.still_wrong),
    ):
        if examples:
            lines += [
                "",
                f"{title}:",
                "",
                "| prompt | chosen | rejected | margin before | after |",
                "|---|---|---|---|---|",
            ]
            for e in examples:
                texts = (_cell(e["prompt"]), _cell(e["chosen"]), _cell(e["rejected"]))
                lines.append("| " + " | ".join(texts) + f" | {cells(e['before'])} | {cells(e['after'])} |")
    return lines


def _cell(text: str, width: int = 120) -> str:
    """Text for a Markdown table cell: one line, pipes escaped, shortened."""
    text = " ".join(str(text).split()).replace("|", "\\|")
    return text if len(text) <= width else text[: width - 1] + "…"


def save(run_dir: Path, fine_tuned: Report | None = None, base: Report | None = None) -> Path:
    """Write the fine-tuned and / or the base model's report into the run's ``evaluation.json``
    (atomically; a part not given keeps what the file has)."""
    from desktop.core.system.paths import atomic_write_text

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


def load(run_dir: Path) -> dict[str, Report | None] | None:
    """The run's evaluation (``fine_tuned`` and ``base``), or ``None`` when it has none or it is damaged."""
    try:
        data = json.loads((Path(run_dir) / EVALUATION_NAME).read_text(encoding="utf-8"))
        return {key: _report(data[key]) if data.get(key) else None for key in ("fine_tuned", "base")}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _report(data: dict[str, Any]) -> Report:
    if data.get("task") == "classification":
        return ClassificationReport.from_dict(data)
    if data.get("task") == "preference":
        return PreferenceReport.from_dict(data)
    if data.get("task") == "grpo":
        from desktop.core.training.grpo_evaluation import RewardReport

        return RewardReport.from_dict(data)
    return GenerationReport.from_dict(data)
