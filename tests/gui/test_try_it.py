"""The try-it panel answers with each task's model without blocking the window."""

from __future__ import annotations

import copy
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest
from PySide6.QtCore import Qt, QThread
from PySide6.QtWidgets import QApplication

from desktop.core.results.export import export_run
from desktop.core.results.tryit import Playground
from desktop.core.settings.config import RunConfig
from desktop.gui.widgets.chat_view import ChatView
from desktop.gui.widgets.try_it_panel import TryItPanel
from tests.core.test_export import _finished_run

ANSWER_MS = 60_000


@pytest.fixture
def panel(qtbot) -> TryItPanel:
    widget = TryItPanel()
    qtbot.addWidget(widget)
    yield widget
    widget.shutdown()


def test_classification_shows_the_label_and_probabilities(
    request, panel: TryItPanel, qtbot, tmp_path
) -> None:
    run = _finished_run(request, "classification", "tiny_bert", "reviews.csv", tmp_path)
    assert panel.set_folder(run.model_dir, run.config_path)
    assert panel.options.isHidden() and not panel.labels_area.isHidden()
    panel.prompt.setPlainText("质量很好，非常满意")
    with qtbot.waitSignal(panel.answered, timeout=ANSWER_MS):
        panel.run_button.click()
        assert not panel.run_button.isEnabled()  # busy while the model loads on its thread
    assert panel.status.text().startswith("Predicted: ")
    shown = [panel.labels_grid.itemAtPosition(r, 0).widget().text() for r in range(2)]
    assert {s.replace("<b>", "").replace("</b>", "") for s in shown} == {"positive", "negative"}
    assert panel.run_button.isEnabled()


@pytest.mark.slow
def test_causal_lm_reply_streams_into_the_panel(request, panel: TryItPanel, qtbot, tmp_path) -> None:
    run = _finished_run(request, "causal-lm", "tiny_gpt2", "instructions.jsonl", tmp_path)
    folder = export_run(run, tmp_path / "export", verify=False).folder  # an exported folder, opened
    assert panel.set_folder(folder)
    assert panel.chat_check.isChecked() and not panel.options.isHidden()
    panel.temperature.setValue(0.0)
    panel.max_tokens.setValue(16)
    panel.prompt.setPlainText("Give me three tips for staying healthy.")
    pieces: list[str] = []
    threads: set[object] = set()
    panel.text_streamed.connect(pieces.append)
    panel.text_streamed.connect(lambda _piece: threads.add(QThread.currentThread()))

    with qtbot.waitSignal(panel.answered, timeout=ANSWER_MS):
        panel.run_button.click()

    assert len(pieces) >= 1 and _answers(panel.output) == ["".join(pieces)]
    assert threads == {QApplication.instance().thread()}  # the widgets were updated on the GUI thread only
    assert panel.status.text() == "Done."


@pytest.mark.slow
def test_seq2seq_generates_and_a_bad_folder_is_explained(request, panel: TryItPanel, qtbot, tmp_path) -> None:
    assert not panel.set_folder(tmp_path)
    assert "holds no model" in panel.status.text() and not panel.run_button.isEnabled()

    run = _finished_run(request, "seq2seq", "tiny_t5", "translation.tsv", tmp_path)
    assert panel.set_folder(run.model_dir, run.config_path)
    assert panel.chat_check.isHidden()
    panel.temperature.setValue(0.0)
    panel.max_tokens.setValue(8)
    panel.prompt.setPlainText("The weather is nice today.")
    with qtbot.waitSignal(panel.answered, timeout=ANSWER_MS):
        panel.run_button.click()
    assert panel.status.text() in ("Done.", "The model ended its reply at once (it produced no text).")
    assert panel.details_button.isHidden()


def test_a_model_that_fails_to_load_says_so_with_details(panel: TryItPanel, qtbot, tmp_path: Path) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "config.json").write_text(
        '{"architectures": ["BertForSequenceClassification"]}', encoding="utf-8"
    )
    assert panel.set_folder(folder)
    panel.prompt.setPlainText("hello")
    with qtbot.waitSignal(panel.answered, timeout=ANSWER_MS):
        panel.run_button.click()
    assert panel.status.text().startswith("Could not run the model:")
    assert not panel.details_button.isHidden() and "Traceback" in panel.details.toPlainText()


def test_the_base_model_answers_side_by_side(request, panel: TryItPanel, qtbot, tmp_path) -> None:
    run = _finished_run(request, "classification", "tiny_bert", "reviews.csv", tmp_path)
    assert panel.set_folder(run.model_dir, run.config_path)
    assert not panel.compare_check.isHidden()
    panel.compare_check.setChecked(True)
    panel.prompt.setPlainText("The battery died after a day.")
    with qtbot.waitSignal(panel.answered, timeout=ANSWER_MS):
        panel.run_button.click()

    assert panel.labels_grid.itemAtPosition(0, 2).widget().text().startswith("Base model (")
    bars = [panel.labels_grid.itemAtPosition(r, c).widget() for r in (1, 2) for c in (1, 2)]
    assert all(bar.format().endswith("%") for bar in bars)
    assert "Base model: " in panel.status.text()
    base = panel._base
    assert base is not None and base.made_for == panel.info
    panel.compare_check.setChecked(False)  # its memory goes back at once
    assert panel._base is None


@pytest.mark.slow
def test_a_chat_model_and_its_base_reply_in_two_columns(request, panel: TryItPanel, qtbot, tmp_path) -> None:
    run = _finished_run(request, "causal-lm", "tiny_gpt2", "instructions.jsonl", tmp_path)
    assert panel.set_folder(run.model_dir, run.config_path)
    panel.compare_check.setChecked(True)
    assert not panel.base_output.isHidden() and not panel.output_title.isHidden()
    panel.temperature.setValue(0.0)
    panel.max_tokens.setValue(6)
    panel.prompt.setPlainText("Name a colour.")
    with qtbot.waitSignal(panel.answered, timeout=ANSWER_MS):
        panel.run_button.click()
    (answer,), (base_answer,) = _answers(panel.output), _answers(panel.base_output)
    assert answer and base_answer and answer != base_answer


# ---------------------------------------------------------------------------- the chat


class Sent(NamedTuple):
    model: str
    """``tuned`` or ``base``."""
    prompt: object
    reply: str


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[Sent]:
    """What each model was sent (the conversation, as Playground.generate received it) and said."""
    calls: list[Sent] = []
    real = Playground.generate

    def recording(self: Playground, prompt: object, *args: object, **kwargs: object) -> str:
        reply = real(self, prompt, *args, **kwargs)
        calls.append(Sent("base" if self.made_for else "tuned", copy.deepcopy(prompt), reply))
        return reply

    monkeypatch.setattr(Playground, "generate", recording)
    return calls


@pytest.fixture
def chat_model(tiny_chat_models: dict[str, Path], tmp_path: Path) -> tuple[Path, Path]:
    """A chat run's model folder and config: a tiny Qwen2 taught chats, started from a tiny Llama with the
    same tokenizer (so the base model beside it answers differently)."""
    config = RunConfig(task="causal-lm")
    config.model.name = str(tiny_chat_models["llama"])
    shutil.copytree(tiny_chat_models["qwen2"], tmp_path / "model")
    config.save(tmp_path / "config.toml")
    return tmp_path / "model", tmp_path / "config.toml"


def _send(panel: TryItPanel, qtbot, text: str) -> None:
    panel.prompt.setPlainText(text)
    with qtbot.waitSignal(panel.answered, timeout=ANSWER_MS):
        qtbot.keyClick(panel.prompt, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert "Could not run" not in panel.status.text(), panel.details.toPlainText()


def _answers(view: ChatView) -> list[str]:
    return [bubble.text.text() for bubble in view.answers()]


def _user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def _assistant(text: str) -> dict[str, str]:
    return {"role": "assistant", "content": text}


def test_the_second_message_carries_the_first_exchange(
    chat_model: tuple[Path, Path], panel: TryItPanel, qtbot, sent: list[Sent]
) -> None:
    assert panel.set_folder(*chat_model)
    assert panel.chat_check.isChecked() and not panel.system_box.isHidden()
    panel.temperature.setValue(0.0)
    panel.max_tokens.setValue(8)

    _send(panel, qtbot, "Name a colour.")
    assert panel.prompt.toPlainText() == ""  # the message moved into the transcript
    _send(panel, qtbot, "And another one?")

    first, second = sent
    assert first.prompt == [_user("Name a colour.")]
    assert second.prompt == [_user("Name a colour."), _assistant(first.reply), _user("And another one?")]
    assert _answers(panel.output) == [first.reply, second.reply]
    model = chat_model[0].name  # each answer under the model that wrote it
    assert [bubble.role.text() for bubble in panel.output.bubbles] == ["You", model, "You", model]
    assert panel.status.text() == "Done."


def test_the_system_prompt_is_sent_first(
    chat_model: tuple[Path, Path], panel: TryItPanel, qtbot, sent: list[Sent]
) -> None:
    assert panel.set_folder(*chat_model)
    panel.system_toggle.click()
    assert not panel.system_prompt.isHidden()
    panel.system_prompt.setPlainText("You answer in one word.")
    panel.max_tokens.setValue(4)

    _send(panel, qtbot, "Name a fruit.")

    assert sent[0].prompt == [
        {"role": "system", "content": "You answer in one word."},
        _user("Name a fruit."),
    ]


def test_regenerate_replaces_the_last_answer(
    chat_model: tuple[Path, Path], panel: TryItPanel, qtbot, sent: list[Sent]
) -> None:
    assert panel.set_folder(*chat_model)
    panel.max_tokens.setValue(8)
    _send(panel, qtbot, "Name a colour.")
    _send(panel, qtbot, "And another one?")

    with qtbot.waitSignal(panel.answered, timeout=ANSWER_MS):
        panel.regenerate_button.click()

    assert sent[2].prompt == sent[1].prompt  # asked again with the same history
    assert _answers(panel.output) == [sent[0].reply, sent[2].reply]  # the new answer in place of the old
    assert len(panel.output.bubbles) == 4


def test_clear_empties_the_conversation_but_keeps_the_system_prompt(
    chat_model: tuple[Path, Path], panel: TryItPanel, qtbot, sent: list[Sent]
) -> None:
    assert panel.set_folder(*chat_model)
    panel.system_prompt.setPlainText("Be kind.")
    panel.max_tokens.setValue(4)
    _send(panel, qtbot, "Hello!")

    panel.clear_button.click()

    assert panel.output.bubbles == [] and not panel.output.empty.isHidden()
    assert panel.system_prompt.toPlainText() == "Be kind." and not panel.clear_button.isEnabled()
    _send(panel, qtbot, "Who are you?")
    assert sent[1].prompt == [{"role": "system", "content": "Be kind."}, _user("Who are you?")]


def test_copy_puts_that_answer_on_the_clipboard(
    chat_model: tuple[Path, Path], panel: TryItPanel, qtbot, sent: list[Sent]
) -> None:
    import torch

    assert panel.set_folder(*chat_model)
    panel.temperature.setValue(1.5)  # two different answers
    panel.top_p.setValue(1.0)
    panel.max_tokens.setValue(8)
    torch.manual_seed(0)
    _send(panel, qtbot, "Name a colour.")
    _send(panel, qtbot, "Name a fruit.")
    assert sent[0].reply.strip() and sent[0].reply != sent[1].reply

    panel.output.answers()[0].copy_button.click()

    assert QApplication.clipboard().text() == sent[0].reply
    assert panel.status.text() == "The answer is on the clipboard."


def test_stop_leaves_the_partial_answer_marked_as_stopped(
    chat_model: tuple[Path, Path], panel: TryItPanel, qtbot, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = Playground.generate

    def slow(self: Playground, prompt: object, max_new_tokens: int, temperature: float, chat: bool,
             on_text: Callable[[str], None], stop: threading.Event, top_p: float) -> str:  # fmt: skip
        def piece_then_wait(piece: str) -> None:  # each piece waits for the user (a slow model)
            on_text(piece)
            stop.wait(ANSWER_MS / 1000)

        return real(self, prompt, max_new_tokens, temperature, chat, piece_then_wait, stop, top_p)

    monkeypatch.setattr(Playground, "generate", slow)
    assert panel.set_folder(*chat_model)
    panel.temperature.setValue(0.0)
    panel.max_tokens.setValue(200)
    pieces: list[str] = []
    panel.text_streamed.connect(pieces.append)
    panel.prompt.setPlainText("Tell me a long story.")
    with qtbot.waitSignal(panel.text_streamed, timeout=ANSWER_MS):
        panel.run_button.click()
    assert panel.stop_button.isEnabled() and not panel.run_button.isEnabled()

    with qtbot.waitSignal(panel.answered, timeout=ANSWER_MS):
        panel.stop_button.click()

    (answer,) = panel.output.answers()
    assert answer.text.text() == "".join(pieces) and 1 <= len(pieces) <= 2
    assert answer.note.text() == "stopped" and panel.status.text() == "Stopped."
    assert panel.run_button.isEnabled() and panel.regenerate_button.isEnabled()


def test_what_was_typed_survives_a_reload_and_a_failed_load(
    chat_model: tuple[Path, Path], panel: TryItPanel, qtbot, tmp_path: Path
) -> None:
    folder, config = chat_model
    assert panel.set_folder(folder, config)
    panel.max_tokens.setValue(4)
    _send(panel, qtbot, "Hello!")
    panel.system_prompt.setPlainText("Be brief.")
    panel.prompt.setPlainText("What is the capital of France?")

    assert panel.set_folder(folder, config)  # the same model again (after an export, say)
    assert panel.prompt.toPlainText() == "What is the capital of France?"
    assert panel.system_prompt.toPlainText() == "Be brief."
    assert len(panel.output.answers()) == 1 and "conversation is kept" in panel.status.text()

    other = tmp_path / "other-model"  # another model of the same kind: the answers keep their writer
    shutil.copytree(folder, other)
    assert panel.set_folder(other, config)
    _send(panel, qtbot, "And of Spain?")
    first, second = panel.output.answers()
    assert (first.role.text(), second.role.text()) == (folder.name, "other-model")
    assert panel.set_folder(folder, config)
    panel.prompt.setPlainText("What is the capital of France?")

    broken = tmp_path / "broken"  # a chat model of the same kind whose weights are missing
    broken.mkdir()
    (broken / "config.json").write_text('{"architectures": ["Qwen2ForCausalLM"]}', encoding="utf-8")
    shutil.copy(folder / "chat_template.jinja", broken)
    assert panel.set_folder(broken)
    with qtbot.waitSignal(panel.answered, timeout=ANSWER_MS):
        panel.run_button.click()
    assert panel.status.text().startswith("Could not run the model:")
    assert not panel.details_button.isHidden() and "Traceback" in panel.details.toPlainText()
    assert panel.prompt.toPlainText() == "What is the capital of France?"  # back in the box, to send again
    assert panel.system_prompt.toPlainText() == "Be brief."
    assert len(panel.output.answers()) == 2  # the conversation before it is still there

    classifier = tmp_path / "classifier"  # another kind of model: the conversation goes, the text stays
    classifier.mkdir()
    (classifier / "config.json").write_text(
        '{"architectures": ["BertForSequenceClassification"]}', encoding="utf-8"
    )
    assert panel.set_folder(classifier)
    assert panel.output.answers() == [] and "conversation was cleared" in panel.status.text()
    assert panel.prompt.toPlainText() == "What is the capital of France?"


def test_the_base_model_sees_its_own_answers(
    chat_model: tuple[Path, Path], panel: TryItPanel, qtbot, sent: list[Sent]
) -> None:
    assert panel.set_folder(*chat_model)
    panel.compare_check.setChecked(True)
    assert not panel.base_output.isHidden() and panel.base_title.text().startswith("Base model (")
    panel.temperature.setValue(0.0)
    panel.max_tokens.setValue(6)

    _send(panel, qtbot, "Name a colour.")
    _send(panel, qtbot, "And another one?")

    tuned = [call for call in sent if call.model == "tuned"]
    base = [call for call in sent if call.model == "base"]
    assert tuned[0].reply != base[0].reply
    assert base[1].prompt == [_user("Name a colour."), _assistant(base[0].reply), _user("And another one?")]
    assert tuned[1].prompt[1] == _assistant(tuned[0].reply)
    assert _answers(panel.base_output) == [call.reply for call in base]
    assert _answers(panel.output) == [call.reply for call in tuned]
