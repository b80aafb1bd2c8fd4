"""The evaluation a finished classification run keeps: per class, the confusion matrix, the wrong rows."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from desktop.core.system.events import PreparingEvent
from desktop.core.training import evaluation
from desktop.core.training.run import run_training
from tests.core.helpers import Recorder, make_config


def test_the_report_counts_every_row_once_and_lists_the_confident_mistakes_first() -> None:
    labels = ["negative", "neutral", "positive"]
    truth = [0, 0, 1, 2, 2, 2]
    probabilities = [
        [0.9, 0.05, 0.05],  # right
        [0.2, 0.1, 0.7],  # negative called positive, 0.7 sure
        [0.3, 0.6, 0.1],  # right
        [0.05, 0.05, 0.9],  # right
        [0.97, 0.02, 0.01],  # positive called negative, 0.97 sure
        [0.1, 0.2, 0.7],  # right
    ]
    texts = [f"row {i}" for i in range(6)]
    report = evaluation.classify_report(labels, truth, probabilities, texts)

    assert report.matrix == [[1, 0, 1], [0, 1, 0], [1, 0, 2]] and report.rows == 6
    assert report.cells[2][0] == [4] and report.cells[0][2] == [1]
    assert report.accuracy == pytest.approx(4 / 6)
    negative, neutral, positive = report.classes
    assert (negative.precision, negative.recall, negative.support) == (0.5, 0.5, 2)
    assert (positive.precision, positive.recall) == (pytest.approx(2 / 3), pytest.approx(2 / 3))
    assert neutral.f1 == 1.0
    assert report.macro_f1 == pytest.approx((0.5 + 1.0 + 2 / 3) / 3)
    assert [(e["text"], e["label"], e["predicted"]) for e in report.errors] == [
        ("row 4", "positive", "negative"),
        ("row 1", "negative", "positive"),
    ]
    assert report.errors[0]["confidence"] == pytest.approx(0.97)


def test_a_finished_run_keeps_an_evaluation_that_matches_the_model_on_its_evaluation_rows(
    tiny_bert: Path, tmp_path: Path
) -> None:
    from desktop.core.data.checks import load_and_check
    from desktop.core.data.columns import label_key
    from desktop.core.results.tryit import Playground, inspect_folder

    rows = ["评论,标签"]
    for i in range(60):
        rows.append(f"这个东西质量很好，非常喜欢 {i},好评" if i % 2 else f"做工粗糙，太让人失望了 {i},差评")
    data = tmp_path / "评论.csv"
    data.write_bytes("\n".join(rows).encode("gbk"))
    config = make_config("classification", tiny_bert, [data], tmp_path / "runs", max_steps=6)
    config.validation.fraction = 0.3
    events = Recorder()
    result = run_training(config, events.append)
    assert result.status == "finished", result.failure

    saved = evaluation.load(result.run_dir)
    report, base = saved["fine_tuned"], saved["base"]
    assert report.rows == base.rows == 18 and base.labels == report.labels  # before and after
    assert any("Evaluating the base model" in e.message for e in events.of(PreparingEvent))
    assert set(report.counts["eval"]) == set(report.labels) == {"好评", "差评"}
    assert sum(report.counts["eval"].values()) == 18 and sum(report.counts["train"].values()) == 42
    # The same numbers computed independently: the saved model, over the same evaluation rows.
    checked = load_and_check(config)
    playground = Playground(inspect_folder(result.model_dir, result.run_dir / "config.toml"))
    playground.load()
    texts = [str(t) for t in checked.eval.frame["评论"]]
    truth = [label_key(v) for v in checked.eval.frame["标签"]]
    predicted = [playground.classify(text)[0][0] for text in texts]
    independent = [
        [sum(1 for t, p in zip(truth, predicted, strict=True) if (t, p) == (a, b)) for b in report.labels]
        for a in report.labels
    ]
    assert report.matrix == independent
    wrong = [r for r, (t, p) in enumerate(zip(truth, predicted, strict=True)) if t != p]
    assert sorted(e["text"] for e in report.errors) == sorted(texts[row] for row in wrong)
    # The most confident first, by the model's own probabilities (rows that differ by a digit tie to the
    # last bits of a float: a batch of 8 and a row alone may order them either way, as CI once did).
    confidences = [dict(playground.classify(e["text"]))[e["predicted"]] for e in report.errors]
    assert all(a >= b - 1e-4 for a, b in itertools.pairwise(confidences))


def test_a_slow_base_evaluation_is_skipped_and_said(
    tiny_bert: Path, samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desktop.core.training import run_evaluation

    monkeypatch.setattr(run_evaluation, "BASE_EVALUATION_S", 0.0)  # as if the evaluation rows were many
    config = make_config(
        "classification", tiny_bert, [samples / "reviews.csv"], tmp_path / "runs", max_steps=2
    )
    config.validation.fraction = 0.5
    events = Recorder()
    result = run_training(config, events.append)

    assert result.status == "finished"
    assert any("would take over a minute" in e.message for e in events.of(PreparingEvent))
    saved = evaluation.load(result.run_dir)
    assert saved["base"] is None and saved["fine_tuned"].rows > 0


def test_bleu_and_chrf_are_sacrebleus_own_with_chinese_tokenization() -> None:
    import sacrebleu

    outputs, references = ["今天天气很好", "我喜欢这部电影"], ["今天天气很好啊", "我很喜欢这部电影"]
    bleu, chrf, tokenize = evaluation.bleu_chrf(outputs, references)
    assert tokenize == "zh"
    assert bleu == sacrebleu.corpus_bleu(outputs, [references], tokenize="zh").score
    assert chrf == sacrebleu.corpus_chrf(outputs, [references]).score
    english = evaluation.bleu_chrf(["the cat sat on the mat"], ["the cat sat on a mat"])
    assert (
        english[2] == "13a"
        and english[0] == sacrebleu.corpus_bleu(["the cat sat on the mat"], [["the cat sat on a mat"]]).score
    )


@pytest.mark.parametrize(
    ("task", "model", "data"),
    [("seq2seq", "tiny_t5", "translation.tsv"), ("causal-lm", "tiny_gpt2", "instructions.jsonl")],
)
def test_a_generator_keeps_its_loss_and_answers_beside_the_references_before_and_after(
    task: str, model: str, data: str, samples: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    folder = request.getfixturevalue(model)
    config = make_config(task, folder, [samples / data], tmp_path / "runs", max_steps=4, max_length=32)
    config.validation.fraction = 0.3
    result = run_training(config, Recorder().append)
    assert result.status == "finished", result.failure

    saved = evaluation.load(result.run_dir)
    tuned, base = saved["fine_tuned"], saved["base"]
    assert tuned.loss == pytest.approx(result.metrics["eval_loss"]) and tuned.perplexity > 1
    assert base.loss is not None and base.loss != tuned.loss  # before and after
    assert len(tuned.samples) == len(base.samples) > 0
    assert [s["reference"] for s in tuned.samples] == [s["reference"] for s in base.samples]
    assert all(s["prompt"] and s["reference"] for s in tuned.samples)
    if task == "seq2seq":
        assert tuned.scored > 0 and tuned.bleu is not None and 0 <= tuned.chrf <= 100
    else:
        assert tuned.bleu is None
