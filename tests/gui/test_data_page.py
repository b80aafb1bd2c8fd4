"""The Model & data page: guesses, errors next to their fields, token statistics."""

from __future__ import annotations

import re
from pathlib import Path

from desktop.gui.main_window import MainWindow


def _set_data(window: MainWindow, qtbot, path: Path) -> None:
    page = window.data_page
    dataset = page.dataset_picker
    with qtbot.waitSignal(page.preview_loaded, timeout=30_000):
        dataset.data_edit.setText(str(path))
        dataset.data_edit.editingFinished.emit()


def _load_with_stats(window: MainWindow, qtbot, model: str, data: Path) -> object:
    """Type a model, choose a data file, and wait for the token statistics."""
    page = window.data_page
    picker = page.model_picker
    picker.model_edit.setText(model)
    picker.model_edit.editingFinished.emit()
    with qtbot.waitSignal(page.token_stats_loaded, timeout=60_000):
        _set_data(window, qtbot, data)
    return page


def test_mapping_is_guessed_from_chinese_columns_and_stats_follow(
    window: MainWindow, qtbot, tiny_bert: Path, tmp_path: Path
) -> None:
    page = window.data_page
    picker, mapping, stats = page.model_picker, page.column_mapping, page.token_stats
    picker.model_edit.setText(str(tiny_bert))
    picker.model_edit.editingFinished.emit()
    assert "BertModel" in picker.model_info.text()
    data = tmp_path / "评论.csv"
    data.write_text(
        "编号,评论,类别\n1,这个很好用,好评\n2,太差了,差评\n3,还不错,好评\n4,坏了,差评\n", encoding="utf-8"
    )
    with qtbot.waitSignal(page.token_stats_loaded, timeout=60_000):
        _set_data(window, qtbot, data)
    assert mapping.mapping_combos["text"].currentText() == "评论"
    assert mapping.mapping_combos["label"].currentText() == "类别"
    assert page.table.rowCount() == 3 and page.table.columnCount() == 3  # one of 4 rows held out
    assert "median" in stats.stats_label.text()
    assert page.problem() == ""


def test_malformed_file_shows_its_line_next_to_the_data_field(
    window: MainWindow, qtbot, tmp_path: Path
) -> None:
    data = tmp_path / "bad.jsonl"
    data.write_text('{"text": "a", "label": "x"}\n{"text": oops}\n', encoding="utf-8")
    page = window.data_page
    picker, dataset = page.model_picker, page.dataset_picker
    picker.model_edit.setText("bert-base-uncased")
    picker.model_edit.editingFinished.emit()
    _set_data(window, qtbot, data)
    assert not dataset.data_error.isHidden() and "line 2 is not valid JSON" in dataset.data_error.text()
    assert "line 2" in page.problem()


def test_unknown_model_folder_is_reported(window: MainWindow, tmp_path: Path) -> None:
    page = window.data_page
    picker = page.model_picker
    picker.model_edit.setText(str(tmp_path / "no-such-model"))
    picker.model_edit.editingFinished.emit()
    assert not picker.model_error.isHidden() and "does not exist" in picker.model_error.text()
    assert picker.model_error.text().startswith("Model: the folder")  # a sentence with its subject
    assert page.problem() == picker.model_error.text()
    picker.model_edit.setText("")
    picker.model_edit.editingFinished.emit()
    assert picker.model_error.text().startswith("Choose a model: a hub id")  # not "is empty; give ..."


def test_choosing_another_column_rechecks_the_data(window: MainWindow, qtbot, tmp_path: Path) -> None:
    page = window.data_page
    picker, dataset, mapping = page.model_picker, page.dataset_picker, page.column_mapping
    picker.model_edit.setText("bert-base-uncased")
    picker.model_edit.editingFinished.emit()
    data = tmp_path / "d.csv"
    data.write_text("text,note,label\nhello,,a\nworld,,b\nagain,,a\n", encoding="utf-8")
    _set_data(window, qtbot, data)
    assert dataset.data_error.isHidden()  # the data is fine; the hub model only needs its download
    assert page.problem() == "Download the model before training: it is not on this computer yet."
    assert picker.model_download.isVisibleTo(page)
    combo = mapping.mapping_combos["text"]
    with qtbot.waitSignal(page.preview_loaded, timeout=30_000):
        combo.setCurrentIndex(combo.findData("note"))
        combo.activated.emit(combo.currentIndex())
    assert 'column "note" (text) is empty in every row' in dataset.data_error.text()
    assert window.current_config().columns.text == "note"


def test_file_pickers_start_in_the_last_folder(
    window: MainWindow, qtbot, tmp_path: Path, monkeypatch
) -> None:
    from PySide6.QtWidgets import QFileDialog

    from desktop.shared_ui import Key

    data = tmp_path / "sub" / "d.csv"
    data.parent.mkdir()
    data.write_text("text,label\na,x\nb,y\n", encoding="utf-8")
    starts = []

    def pick(parent, caption, start, filters):
        starts.append(start)
        return str(data), filters

    monkeypatch.setattr(QFileDialog, "getOpenFileName", pick)
    with qtbot.waitSignal(window.data_page.preview_loaded, timeout=30_000):
        window.data_page.dataset_picker.data_browse.click()
    window.data_page.dataset_picker.data_browse.click()
    assert starts[1] == str(data.parent) and window.settings.text(Key.LAST_DATA_FOLDER) == str(data.parent)


def test_no_error_before_the_user_touches_a_field(window: MainWindow) -> None:
    page = window.data_page
    picker, dataset = page.model_picker, page.dataset_picker
    assert picker.model_error.isHidden() and dataset.data_error.isHidden()
    assert page.problem()  # Next still waits for a model and data


def test_a_failed_load_clears_the_last_file_and_a_new_load_clears_the_error(
    window: MainWindow, qtbot, tiny_bert: Path, samples: Path, tmp_path: Path
) -> None:
    page = _load_with_stats(window, qtbot, str(tiny_bert), samples / "reviews.csv")
    dataset, mapping, stats = page.dataset_picker, page.column_mapping, page.token_stats
    assert page.table.rowCount() > 0 and mapping.mapping_combos and "median" in stats.stats_label.text()

    broken = tmp_path / "broken.jsonl"
    broken.write_text("{not json\n", encoding="utf-8")
    _set_data(window, qtbot, broken)
    assert "not valid JSON" in dataset.data_error.text()
    assert page.table.rowCount() == 0 and page.table.columnCount() == 0 and not mapping.mapping_combos
    assert "median" not in stats.stats_label.text() and dataset.split_info.text() == ""

    with qtbot.waitSignal(page.token_stats_loaded, timeout=60_000):
        _set_data(window, qtbot, samples / "reviews.csv")
    assert dataset.data_error.isHidden() and page.table.rowCount() > 0


def test_token_statistics_follow_the_max_length_set_now(
    window: MainWindow, qtbot, tiny_bert: Path, samples: Path
) -> None:
    page = _load_with_stats(window, qtbot, str(tiny_bert), samples / "reviews.csv")
    stats = page.token_stats
    assert "0 of 135 longer than the limit (256)" in stats.stats_label.text()
    window.go_to(2)
    window.options_page.max_length.setValue(8)
    window.go_to(1)
    assert "71 of 135 longer than the limit (8)" in stats.stats_label.text()  # median 9 tokens


def test_the_padding_of_the_batches_is_shown_and_follows_the_options(
    window: MainWindow, qtbot, tiny_bert: Path, samples: Path
) -> None:
    page = _load_with_stats(window, qtbot, str(tiny_bert), samples / "reviews.csv")
    text = page.token_stats.stats_label.text
    found = re.search(
        r"Padding at batch size 8: (\d+)% of the tokens, as batches are grouped by length \((\d+)%", text()
    )
    assert found and int(found.group(1)) < int(found.group(2))  # grouped: less padding than shuffled
    window.go_to(2)
    window.options_page.batch_size.setValue(32)
    window.options_page.sections[0].editors[("performance", "group_by_length")].click()
    window.go_to(1)
    assert "Padding at batch size 32:" in text() and "in shuffled batches (" in text()  # grouping off


def test_switching_the_task_rechecks_the_model_and_the_columns(
    window: MainWindow, qtbot, tiny_bert: Path, samples: Path
) -> None:
    page = window.data_page
    picker, mapping = page.model_picker, page.column_mapping
    picker.model_edit.setText(str(tiny_bert))
    picker.model_edit.editingFinished.emit()
    _set_data(window, qtbot, samples / "reviews.csv")
    assert picker.model_error.isHidden()
    with qtbot.waitSignal(page.preview_loaded, timeout=30_000):
        picker.task_combo.setCurrentIndex(picker.task_combo.findData("causal-lm"))
    assert "encoder-only model (bert)" in picker.model_error.text() and not picker.model_error.isHidden()
    assert "guessed again for Causal-LM" in mapping.mapping_note.text()
    assert page.problem().startswith(picker.model_error.text().splitlines()[0])


def test_chats_are_shown_again_when_the_split_changes(window: MainWindow, qtbot, samples: Path) -> None:
    page = window.data_page
    picker, dataset = page.model_picker, page.dataset_picker
    picker.task_combo.setCurrentIndex(picker.task_combo.findData("causal-lm"))
    picker.model_edit.setText("gpt2")
    picker.model_edit.editingFinished.emit()
    _set_data(window, qtbot, samples / "chat.jsonl")
    first = page.table.item(0, 0).text()
    with qtbot.waitSignal(page.preview_loaded, timeout=30_000):
        dataset.fraction_spin.setValue(dataset.fraction_spin.value() + 10)  # other rows for training
    assert first.startswith("user: ") and "| assistant: " in first  # its turns, not Python's "[{'role'"
    assert page.table.rowCount() > 0 and page.table.item(0, 0).text()


def test_text_the_model_cannot_read_is_warned_on_the_page(window: MainWindow, qtbot, samples: Path) -> None:
    page = _load_with_stats(window, qtbot, "bundled:all-minilm-l6-v2", samples / "reviews-zh.csv")
    dataset = page.dataset_picker
    assert not dataset.notes_label.isHidden()
    assert "does not know most of the characters in your texts" in dataset.notes_label.text()

    # Another model: the last one's warning and token figures go (they followed the old model before).
    picker = page.model_picker
    picker.model_edit.setText("bert-base-chinese")  # a hub model, not on this computer: nothing to measure
    picker.model_edit.editingFinished.emit()
    assert "does not know most of the characters" not in dataset.notes_label.text()
    assert page.token_stats.report is None


def test_the_first_rows_show_while_every_row_is_checked(
    window: MainWindow, qtbot, tmp_path: Path, monkeypatch
) -> None:
    import threading

    from desktop.gui.controllers import data_check_controller

    release = threading.Event()
    full = data_check_controller.preview

    def slow_full_check(*args, **kwargs):  # a file of millions of rows: its full check takes a while
        release.wait(30)
        return full(*args, **kwargs)

    monkeypatch.setattr(data_check_controller, "preview", slow_full_check)
    monkeypatch.setattr(data_check_controller, "HEAD_FIRST_BYTES", 0)  # as a file of millions of rows
    data = tmp_path / "reviews.csv"
    data.write_text("review,label\n" + "".join(f"text number {i},{'ab'[i % 2]}\n" for i in range(3000)))
    page = window.data_page
    picker, dataset, mapping = page.model_picker, page.dataset_picker, page.column_mapping
    picker.model_edit.setText("bert-base-uncased")
    picker.model_edit.editingFinished.emit()
    with qtbot.waitSignal(page.head_loaded, timeout=30_000):
        dataset.data_edit.setText(str(data))
        dataset.data_edit.editingFinished.emit()
    assert page.table.rowCount() > 0 and mapping.mapping_combos["text"].currentText() == "review"
    assert (
        dataset.split_info.text() == "Checking every row…" and dataset.problem()
    )  # Next waits for the check
    combo = mapping.mapping_combos["text"]  # the user may have its list open while every row is checked
    with qtbot.waitSignal(page.preview_loaded, timeout=30_000):
        release.set()
    assert mapping.mapping_combos["text"] is combo  # the same guesses: the list is not made again under them
    lines = dataset.split_info.text().splitlines()
    assert lines[0] == "2700 rows for training, 300 for evaluation" and not dataset.problem()
    train_a, train_b = lines[1].removeprefix("Labels (training/evaluation): ").split(" · ")
    assert {train_a.split()[0], train_b.split()[0]} == {"a", "b"}  # each label's rows in both sets
    assert sum(int(part.split()[1].split("/")[0]) for part in (train_a, train_b)) == 2700


def test_the_full_check_shows_its_progress_and_can_be_cancelled(
    window: MainWindow, qtbot, tmp_path: Path, monkeypatch
) -> None:
    import threading

    from desktop.core.data import checks
    from desktop.core.data.formats import parsing
    from desktop.gui.controllers import data_check_controller

    monkeypatch.setattr(parsing, "READ_BLOCK", 8192)  # a large file's blocks, in a small one
    monkeypatch.setattr(data_check_controller, "HEAD_FIRST_BYTES", 0)  # and its first rows shown first
    gate = threading.Event()
    check_rows = checks.check_rows

    def held_check_rows(*args, **kwargs):  # the checks of millions of rows: time to press Cancel
        gate.wait(30)
        return check_rows(*args, **kwargs)

    monkeypatch.setattr(checks, "check_rows", held_check_rows)
    reported = threading.Event()
    head = data_check_controller.preview_head

    def late_head(*args, **kwargs):  # the first rows come after the check has said how far it is
        reported.wait(30)
        return head(*args, **kwargs)

    monkeypatch.setattr(data_check_controller, "preview_head", late_head)
    path = tmp_path / "reviews.csv"
    path.write_text(
        "review,label\n" + "".join(f"text number {i} is long,{'ab'[i % 2]}\n" for i in range(4000))
    )
    page = window.data_page
    picker, dataset = page.model_picker, page.dataset_picker
    picker.model_edit.setText("bert-base-uncased")
    picker.model_edit.editingFinished.emit()
    dataset.data_edit.setText(str(path))
    dataset.data_edit.editingFinished.emit()
    qtbot.waitUntil(
        lambda: not dataset.cancel_check.isHidden() and dataset.busy.value() == 600, timeout=30_000
    )
    with qtbot.waitSignal(page.head_loaded, timeout=30_000):
        reported.set()
    assert (
        dataset.split_info.text().startswith("Checking every row: ") and ", 60%…" in dataset.split_info.text()
    )
    qtbot.waitUntil(lambda: dataset.split_info.text() == "Checking every row: Checking 4000 rows, 60%…")
    assert dataset.busy.value() == 600 and page.table.rowCount() > 0  # the first rows are shown meanwhile
    with qtbot.waitSignal(page.preview_loaded, timeout=30_000):
        dataset.cancel_check.click()
        gate.set()
    assert "Not every row was checked (cancelled)" in dataset.split_info.text()
    assert not dataset.problem() and dataset.cancel_check.isHidden() and dataset.busy.isHidden()
    assert page.table.rowCount() > 0 and window.current_config().columns.text == "review"


def test_the_histogram_is_made_while_the_user_is_idle_and_shows_the_lengths(
    window: MainWindow, qtbot, tiny_bert: Path, tmp_path: Path
) -> None:
    import pyqtgraph  # noqa: F401  (the window's warm-up imports it)

    from desktop.gui.widgets.token_stats_widget import HISTOGRAM_IDLE_S

    page = window.data_page

    stats = page.token_stats
    idle = {"s": 0.0}
    stats.idle_s = lambda: idle["s"]
    stats.prepare_histogram()
    assert stats.histogram is None  # the user is at work: not now (15-50 ms on the window's thread)
    idle["s"] = HISTOGRAM_IDLE_S
    qtbot.waitUntil(lambda: stats.histogram is not None)
    made = stats.histogram
    assert not made.isVisibleTo(page)  # nothing to show yet
    data = tmp_path / "d.csv"
    data.write_text("text,label\nhello there,a\nworld,b\nagain and again,a\nyes,b\n", encoding="utf-8")
    _load_with_stats(window, qtbot, str(tiny_bert), data)
    assert stats.histogram is made and made.isVisibleTo(page)
    assert "median" in stats.stats_label.text()


def test_missing_labels_and_labels_in_two_cases_are_fixed_with_a_tick_each(
    window: MainWindow, qtbot, tmp_path: Path
) -> None:
    """The data page named both and said to set data.drop_bad_rows: a field it had no control for."""
    page = window.data_page
    dataset, mapping = page.dataset_picker, page.column_mapping
    page.model_picker.model_edit.setText("bundled:all-minilm-l6-v2")
    page.model_picker.model_edit.editingFinished.emit()
    data = tmp_path / "labels.csv"
    rows = "".join(
        f"text {i},{label}\n" for i, label in enumerate(["positive", "positive", "negative", "Positive"] * 3)
    )
    data.write_text(f"text,label\n{rows}nothing to say,\n", encoding="utf-8")
    _set_data(window, qtbot, data)
    assert "1 row has no label" in dataset.data_error.text()

    with qtbot.waitSignal(page.preview_loaded, timeout=30_000):
        mapping.drop_bad_rows.click()
    assert dataset.data_error.isHidden() and window.current_config().data.drop_bad_rows
    assert "differ only in case are separate classes" in dataset.notes_label.text()

    with qtbot.waitSignal(page.preview_loaded, timeout=30_000):
        mapping.merge_label_case.click()
    assert 'merged into one class each: "Positive" (3) -> "positive"' in dataset.notes_label.text()
    assert window.current_config().data.merge_label_case


def test_data_chosen_before_the_model_is_checked_again_once_a_model_is_chosen(
    window: MainWindow, qtbot, samples: Path
) -> None:
    """It kept "model.name is empty" and a disabled Next after a model was chosen."""
    page = window.data_page
    picker, dataset = page.model_picker, page.dataset_picker
    picker.model_edit.setText("")
    picker.model_edit.editingFinished.emit()
    dataset.data_edit.setText(str(samples / "reviews.csv"))
    dataset.data_edit.editingFinished.emit()
    qtbot.waitUntil(
        lambda: "model" in dataset.problem().lower() and "Reading" not in dataset.problem(), timeout=30_000
    )

    picker.model_edit.setText("bundled:all-minilm-l6-v2")
    picker.model_edit.editingFinished.emit()
    qtbot.waitUntil(lambda: page.problem() == "", timeout=30_000)
    assert dataset.data_error.isHidden() and page.table.rowCount() > 0


def test_a_task_change_note_goes_with_a_new_config(window: MainWindow, samples: Path) -> None:
    """A preference run set up from Run history was told its columns were "guessed again for
    Causal-LM": the note of the last task change stayed."""
    picker, mapping = window.data_page.model_picker, window.data_page.column_mapping
    picker.task_combo.setCurrentIndex(picker.task_combo.findData("seq2seq"))
    assert mapping.mapping_note.text() == ""  # no data yet: no columns to guess again
    config = window.current_config()
    config.data.files = [str(samples / "reviews.csv")]
    window.set_config(config)
    picker.task_combo.setCurrentIndex(picker.task_combo.findData("causal-lm"))
    assert "guessed again for" in mapping.mapping_note.text()
    config = window.current_config()
    config.task = "preference"
    window.set_config(config)
    assert mapping.mapping_note.text() == ""
