"""Vision-language fine-tuning: a picture and a question, the answer learned; tested with a tiny LLaVA."""

from __future__ import annotations

import base64
import json
import os
import shutil
import threading
from pathlib import Path

import pytest

from desktop.core.data.checks import load_and_check
from desktop.core.runs.folders import RunDir
from desktop.core.system.errors import ModelError
from desktop.core.system.events import ProgressEvent, StartedEvent
from desktop.core.training.run import run_training
from tests.core.helpers import Recorder, make_config


def _config(model: Path, samples: Path, tmp_path: Path, **training: object):
    values = {"max_steps": 40, "learning_rate": 3e-3, "max_length": 64, "save_steps": 100, **training}
    config = make_config("vision-chat", model, [samples / "shapes-vqa.jsonl"], tmp_path / "runs", **values)
    config.validation.fraction = 0.1
    return config


def _picture(samples: Path) -> Path:
    return next((samples / "shapes" / "circle").glob("*.png"))


def test_the_loss_covers_the_answer_only(tiny_llava: Path, samples: Path) -> None:
    from transformers import AutoProcessor

    from desktop.core.data.images import decode
    from desktop.core.data.tasks.vision_chat import VisionCollator, conversation

    processor = AutoProcessor.from_pretrained(tiny_llava)
    features = [
        {"images": [decode(_picture(samples))], "messages": conversation("What is it?", "A blue circle.")},
        {"images": [decode(_picture(samples))], "messages": conversation("And the colour, please?", "Blue.")},
    ]

    batch = VisionCollator(processor)(features)

    tokenizer = processor.tokenizer
    for row, answer in enumerate(("A blue circle.", "Blue.")):
        learned = batch["labels"][row][batch["labels"][row] != -100]
        assert tokenizer.decode(learned, skip_special_tokens=True).strip() == answer
    image_token = tokenizer.convert_tokens_to_ids("<image>")
    assert (batch["labels"] == image_token).sum() == 0  # the picture's tokens are read, never learned
    assert (batch["input_ids"] == image_token).sum() == 2 * 4


def test_the_picture_tokens_counted_from_the_config_match_the_processors(
    tiny_llava: Path, samples: Path
) -> None:
    from transformers import AutoProcessor

    from desktop.core.data.images import decode
    from desktop.core.data.tasks.vision_chat import picture_tokens
    from desktop.core.settings.memory import vision_tokens

    model_config = json.loads((tiny_llava / "config.json").read_text(encoding="utf-8"))
    processor = AutoProcessor.from_pretrained(tiny_llava)

    assert vision_tokens(model_config) == picture_tokens(processor, decode(_picture(samples))) == 4
    qwen = {"model_type": "qwen2_vl", "vision_config": {"patch_size": 14, "spatial_merge_size": 2}}
    assert vision_tokens(qwen, 448) == 256 and vision_tokens(qwen, 224) == 64  # the resolution is memory


def test_a_picture_chat_model_trains_resumes_evaluates_exports_and_answers(
    tiny_llava: Path, samples: Path, tmp_path: Path
) -> None:
    from desktop.core.results.export import export_run
    from desktop.core.results.tryit import Playground, inspect_folder

    stop = threading.Event()
    first = Recorder()

    def on_event(event: object) -> None:
        first.append(event)
        if isinstance(event, ProgressEvent) and event.step == 20:
            stop.set()

    assert run_training(_config(tiny_llava, samples, tmp_path), on_event, stop).status == "stopped"
    run = RunDir(Path(first.of(StartedEvent)[0].run_dir))
    resumed = Recorder()
    result = run_training(run.config(), resumed.append, resume=run)

    assert result.status == "finished", result.failure
    losses = first.losses() + resumed.losses()
    assert losses[-1] < losses[0] * 0.5, losses
    assert resumed.losses()[0] < first.losses()[0] * 0.8  # went on from the checkpoint, not from the start
    saved = json.loads((run.path / "evaluation.json").read_text(encoding="utf-8"))
    tuned = saved["fine_tuned"]
    assert tuned["task"] == "vision-chat" and tuned["loss"] < saved["base"]["loss"]
    assert Path(tuned["samples"][0]["picture"]).is_file()  # its thumbnail in the report
    assert tuned["samples"] and tuned["samples"][0]["prompt"].startswith(
        "["
    )  # the picture's name, the question

    exported = export_run(run, tmp_path / "exported")

    assert exported.verification.ok and exported.verification.examples == 4
    playground = Playground(inspect_folder(tmp_path / "exported"))
    playground.load()
    assert playground.info.task == "vision-chat"
    pieces: list[str] = []
    said = playground.describe(_picture(samples), "What is in this picture?", 8, pieces.append)
    assert said and "".join(pieces).strip() == said  # streamed as it was written (Try it shows it so)
    stop = threading.Event()
    stop.set()  # Stop pressed: the answer ends after its first token
    assert len(playground.describe(_picture(samples), "What is in this picture?", 8, stop=stop)) < len(said)


def test_lora_adapts_the_language_model_and_leaves_the_vision_tower(
    tiny_llava: Path, samples: Path, tmp_path: Path
) -> None:
    config = _config(tiny_llava, samples, tmp_path, max_steps=4)
    config.lora.enabled = True
    config.validation.evaluate_base = False

    result = run_training(config, Recorder().append)

    assert result.status == "finished", result.failure
    from safetensors import safe_open

    with safe_open(str(Path(result.run_dir) / "adapter" / "adapter_model.safetensors"), "pt") as adapter:
        names = list(adapter.keys())
    assert names and not [n for n in names if "vision_tower" in n]
    assert any("language_model" in n for n in names)


def test_a_model_that_does_not_read_pictures_is_refused(
    tiny_gpt2: Path, samples: Path, tmp_path: Path
) -> None:
    with pytest.raises(ModelError) as refused:
        load_and_check(_config(tiny_gpt2, samples, tmp_path))
    assert "does not read pictures" in str(refused.value) or "preprocessor" in str(refused.value)


def test_gguf_export_of_a_vision_language_run_is_refused_in_one_sentence(tmp_path: Path) -> None:
    from desktop.core.results.gguf_export import _model_dir
    from desktop.core.settings.config import RunConfig
    from desktop.core.system.errors import InputError

    class Run:
        path = tmp_path / "run"

        def config(self) -> RunConfig:
            return RunConfig(task="vision-chat")

    with pytest.raises(InputError) as refused:
        _model_dir(Run())
    assert "mmproj" in refused.value.message and refused.value.message.count(".") == 1


LAYOUTS = ("parts", "images-column", "llama-factory", "llava", "openai")


def _picture_chats(samples: Path, folder: Path, layout: str) -> Path:
    """Conversations about the sample shapes, two turns each, their pictures' paths relative to the file:
    in their image parts (``parts``), in an images column the image parts take in order, as ``<image>``
    in the text with an images column (LLaMA-Factory's), or as LLaVA's ShareGPT turns beside an image
    column, or OpenAI's ``image_url`` parts (a relative path, a ``file://`` address, a data URL, the
    address as a bare string)."""
    data = folder / "data" / f"{layout}.jsonl"
    data.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    for index, path in enumerate(sorted((samples / "shapes" / "square").glob("*.png"))[:12]):
        relative = Path(os.path.relpath(path, data.parent)).as_posix()
        colour = path.stem.split("-")[0]
        if layout == "llava":
            turns = [
                ("human", "<image>\nWhat shape is it?"),
                ("gpt", "A square."),
                ("human", "And its colour?"),
            ]
            talk = [{"from": who, "value": said} for who, said in [*turns, ("gpt", colour)]]
            rows.append(json.dumps({"id": path.stem, "image": relative, "conversations": talk}))
            continue
        if layout == "openai":  # the relative paths under the file's own folder, not the app's
            shutil.copy(path, data.parent / path.name)
            url = [
                path.name,
                path.resolve().as_uri(),
                "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode(),
            ][index % 3]
            picture = {"type": "image_url", "image_url": {"url": url} if index % 4 else url}
        asked = (
            "<image>What shape is it?"
            if layout == "llama-factory"
            else [picture, {"type": "text", "text": "What shape is it?"}]
            if layout == "openai"
            else [
                {"type": "image", **({"image": relative} if layout == "parts" else {})},
                {"type": "text", "text": "What shape is it?"},
            ]
        )
        row: dict = {
            "messages": [
                {"role": "user", "content": asked},
                {"role": "assistant", "content": "A square."},
                {"role": "user", "content": "And its colour?"},
                {"role": "assistant", "content": [{"type": "text", "text": colour}]},
            ]
        }
        if layout not in ("parts", "openai"):
            row["images"] = [relative]
        rows.append(json.dumps(row))
    data.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return data


@pytest.mark.parametrize("layout", LAYOUTS)
def test_conversations_holding_pictures_train_on_every_answer(
    layout: str, tiny_llava: Path, samples: Path, tmp_path: Path
) -> None:
    from transformers import AutoProcessor

    from desktop.core.data.tasks.vision_chat import VisionCollator, _rows

    data = _picture_chats(samples, tmp_path, layout)
    config = _config(tiny_llava, samples, tmp_path, max_steps=4, max_length=96)
    config.data.files = [str(data)]
    config.validation.evaluate_base = False

    checked = load_and_check(config)

    columns = {"parts": ("messages", ""), "openai": ("messages", ""), "llava": ("conversations", "image")}
    assert (checked.guess.columns.messages, checked.guess.columns.image) == columns.get(
        layout, ("messages", "images")
    )
    rows = _rows(checked.train, checked.guess.columns)
    assert all(len(p) == 1 and (isinstance(p[0], bytes) or Path(p[0]).is_file()) for p in rows.sources)
    assert rows.messages[0][0]["content"][0] == {"type": "image"}  # where the picture goes, first
    processor = AutoProcessor.from_pretrained(tiny_llava)
    from desktop.core.data.images import decode

    feature = {"messages": rows.messages[0], "images": [decode(rows.sources[0][0])]}
    batch = VisionCollator(processor)([feature])
    learned = batch["labels"][0][batch["labels"][0] != -100]
    said = processor.tokenizer.decode(learned, skip_special_tokens=True)
    assert "A square." in said and "What shape" not in said and "colour" not in said and "<image>" not in said
    assert run_training(config, Recorder().append).status == "finished"


def test_predict_answers_the_conversations_a_run_trained_on_and_refuses_when_none_can_be(
    tiny_llava: Path, samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """predict read a conversations file as a picture and a question per row: every row unread, and it
    still wrote the file and said it had (a CLI walk)."""
    import pandas as pd

    from desktop.core.results.predict import predict_file
    from desktop.core.system.errors import InputError

    data = _picture_chats(samples, tmp_path, "images-column")
    config = _config(tiny_llava, samples, tmp_path, max_steps=2, max_length=96)
    config.data.files, config.validation.fraction = [str(data)], 0.0
    result = run_training(config, Recorder().append)
    assert result.status == "finished", result.failure
    asked, gone, answered = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()[:3]]
    for row in (asked, answered):  # pictures beside the file, named relative to it: read from its folder
        picture = data.parent / row["images"][0]
        shutil.copy(picture, data.parent / picture.name)
        row["images"] = [picture.name]
    asked["messages"] = asked["messages"][:1]  # a question alone, not yet answered
    gone["images"] = ["gone.png"]
    table = data.with_name("ask.jsonl")
    table.write_text("\n".join(json.dumps(row) for row in (asked, gone, answered)) + "\n", encoding="utf-8")

    from desktop.core.results.tryit import Playground

    asked_model, real = [], Playground.converse

    def converse(self: Playground, messages: list, pictures: list, max_new_tokens: int = 128) -> str:
        asked_model.append((len(messages), len(pictures)))
        return real(self, messages, pictures, max_new_tokens)

    monkeypatch.setattr(Playground, "converse", converse)

    written = predict_file(result.run_dir, table, tmp_path / "answers.csv", max_new_tokens=4)

    assert asked_model == [(1, 1), (3, 1)]  # each asked up to its last question, with its picture
    frame = pd.read_csv(tmp_path / "answers.csv", keep_default_na=False)
    assert written.column == "messages" and written.rows == 3 and written.predicted == 2
    assert frame["generated"][1] == ""  # (a tiny random model's answers may be empty too)
    assert "1 of 3 rows could not be answered" in written.notes[0] and "line 2" in written.notes[0]
    assert json.loads(frame["messages"][0]) == asked["messages"]  # the conversation as JSON, not a repr
    assert json.loads(frame["images"][1]) == ["gone.png"]  # the cells as written
    predict_file(result.run_dir, table, tmp_path / "answers.jsonl", max_new_tokens=4)
    jsonl = (tmp_path / "answers.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in jsonl.splitlines()]
    assert rows[0]["messages"] == asked["messages"] and rows[1]["images"] == ["gone.png"]

    table.write_text(json.dumps(gone) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as refused:  # nothing to predict: an error, no file of empty cells
        predict_file(result.run_dir, table, tmp_path / "none.csv", max_new_tokens=4)
    assert "1 of 1 rows could not be answered" in refused.value.message
    assert not (tmp_path / "none.csv").exists()


def test_a_missing_picture_in_a_conversation_is_named_with_its_row(
    tiny_llava: Path, samples: Path, tmp_path: Path
) -> None:
    from desktop.core.system.errors import DataError

    data = _picture_chats(samples, tmp_path, "parts")
    lines = data.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2].replace("square/", "square/gone-")
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    config = _config(tiny_llava, samples, tmp_path)
    config.data.files = [str(data)]

    with pytest.raises(DataError) as refused:
        load_and_check(config)
    assert "1 picture is missing (parts.jsonl line 3)" in str(refused.value)


def test_the_memory_estimate_trains_the_vision_tower_only_when_asked(tiny_llava: Path) -> None:
    from transformers import AutoConfig

    from desktop.core.hub.shapes import shapes_for_model_config
    from desktop.core.settings.config import RunConfig
    from desktop.core.settings.memory import estimate

    config = RunConfig(task="vision-chat")
    frozen = shapes_for_model_config(AutoConfig.from_pretrained(tiny_llava), config)
    config.images.train_vision = True
    whole = shapes_for_model_config(AutoConfig.from_pretrained(tiny_llava), config)

    assert frozen.num_trainable < whole.num_trainable == whole.num_parameters
    assert estimate(frozen, config).optimizer < estimate(whole, config).optimizer
    assert frozen.picture_tokens == 4


def test_a_processor_that_needs_torchvision_names_it_and_the_install_for_this_pytorch(
    tiny_gpt2: Path, tmp_path: Path
) -> None:
    """Qwen2.5-VL's processor (with its video processor) cannot be made without torchvision in
    Transformers 5: the error says so, with the install that keeps this PyTorch, not a traceback."""
    import importlib.util

    import torch

    from desktop.core.hub.models import load_processor
    from desktop.core.settings.config import ModelSource
    from tests import tiny_models

    folder = tiny_models.qwen2_5_vl(tiny_gpt2, tmp_path / "qwen2.5-vl")
    if importlib.util.find_spec("torchvision") is not None:  # where it is installed, the processor loads
        assert load_processor(ModelSource(str(folder))).image_processor is not None
        return
    with pytest.raises(ModelError) as failed:
        load_processor(ModelSource(str(folder)))

    assert failed.value.message == f"{folder}'s processor needs torchvision, which is not installed."
    vision = f"0.{int(torch.__version__.split('.')[1]) + 15}"  # torch 2.13 is torchvision 0.28's
    assert " --no-deps " in failed.value.hint and f"torchvision=={vision}." in failed.value.hint


def test_smolvlm_pictures_in_tiles_learn_the_answers_only_and_count_as_the_processor_counts(
    tiny_gpt2: Path, samples: Path, tmp_path: Path
) -> None:
    """Idefics 3 / SmolVLM: the processor cuts a picture into tiles plus the whole, each framed by its
    own tokens; the labels still hold the answers only and the estimate counts every tile's tokens."""
    from transformers import AutoProcessor

    from desktop.core.data.images import decode
    from desktop.core.data.tasks.vision_chat import VisionCollator, conversation, picture_tokens
    from desktop.core.settings.memory import vision_tokens
    from tests import tiny_models

    folder = tiny_models.idefics3(tiny_gpt2, tmp_path / "smolvlm")
    processor = AutoProcessor.from_pretrained(folder)
    picture = decode(_picture(samples))  # 64 x 64: four 32-pixel tiles and the whole picture
    features = [
        {"images": [picture], "messages": conversation("What is it?", "A blue circle.")},
        {"images": [picture], "messages": conversation("The colour?", "Blue.")},
    ]

    batch = VisionCollator(processor)(features)

    for row, answer in enumerate(("A blue circle.", "Blue.")):
        learned = batch["labels"][row][batch["labels"][row] != -100]
        assert processor.tokenizer.decode(learned, skip_special_tokens=True).strip() == answer
    model_config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    counted = picture_tokens(processor, picture)
    estimated = vision_tokens(model_config, 64)
    assert estimated == counted == 5 * 4 + 14  # and the tokens that frame each tile, each row, the whole
    assert vision_tokens(model_config) == 17 * 4 + 40  # at the processors' own size: four tiles a side

    config = _config(folder, samples, tmp_path, max_steps=12, max_length=160)
    result = run_training(config, Recorder().append, threading.Event())
    assert result.status == "finished", result.failure


def test_gemma3_learns_its_answers_only_and_exports_verified(samples: Path, tmp_path: Path) -> None:
    """Gemma 3's processor widens each picture's <start_of_image> into its image tokens framed by
    new lines; its chat template names the assistant "model"."""
    from transformers import AutoProcessor

    from desktop.core.data.images import decode
    from desktop.core.data.tasks.vision_chat import VisionCollator, conversation, picture_tokens
    from desktop.core.results.export import export_run
    from desktop.core.settings.memory import vision_tokens
    from tests import tiny_models

    folder = tiny_models.gemma3_picture_chat(tmp_path / "gemma3")
    processor = AutoProcessor.from_pretrained(folder)
    picture = decode(_picture(samples))
    feature = {"images": [picture], "messages": conversation("What is it?", "A blue circle.")}

    batch = VisionCollator(processor)([feature])

    learned = batch["labels"][0][batch["labels"][0] != -100]
    assert processor.tokenizer.decode(learned, skip_special_tokens=True).strip() == "A blue circle."
    model_config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    # Its four image tokens and the four that frame them (two more here: this tokenizer splits "\n\n")
    assert vision_tokens(model_config) == 4 + 4 <= picture_tokens(processor, picture) <= 4 + 4 + 3

    events = Recorder()
    result = run_training(_config(folder, samples, tmp_path, max_steps=20), events.append, threading.Event())
    assert result.status == "finished", result.failure
    assert events.losses()[-1] < events.losses()[0]
    exported = export_run(RunDir(Path(result.run_dir)), tmp_path / "exported")
    assert exported.verification.ok and exported.verification.examples == 4


def test_conversations_in_a_layout_not_read_are_said_as_such_not_as_empty(tmp_path: Path) -> None:
    from desktop.core.data.columns import check_rows, guess_columns
    from desktop.core.data.local_files import read_file
    from desktop.core.system.errors import DataError

    data = tmp_path / "chats.jsonl"
    rows = [{"messages": [{"speaker": "me", "text": "What is it?"}], "images": ["a.png"]}] * 3
    data.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    table = read_file(data, pictures=True)
    columns = guess_columns(table, "vision-chat").columns
    columns.messages = "messages"

    with pytest.raises(DataError) as refused:
        check_rows(table, "vision-chat", columns, drop_bad_rows=False)

    assert (
        refused.value.message
        == 'chats.jsonl: no row of the column "messages" is a conversation this task reads.'
    )
    assert "<image>" in refused.value.hint and '"from"' in refused.value.hint


def test_a_conversation_short_of_pictures_is_said_so_and_the_switch_named_is_the_pictures_one(
    tmp_path: Path,
) -> None:
    """A row with two image parts and one picture was "no chat conversation with an assistant reply",
    and the fix named the text tasks' switch, which the picture tasks do not show."""
    from desktop.core.data.columns import Columns, check_rows
    from desktop.core.data.local_files import read_file
    from desktop.core.system.errors import DataError

    talk = [{"type": "image"}, {"type": "text", "text": "What is it?"}]
    good = {"messages": [{"role": "user", "content": talk}, {"role": "assistant", "content": "A dot."}]}
    short = {"messages": [{"role": "user", "content": [{"type": "image"}, *talk]}, good["messages"][1]]}
    rows = [dict(good, images=["a.png"])] * 3 + [dict(short, images=["a.png"])]
    data = tmp_path / "chats.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")

    with pytest.raises(DataError) as refused:
        check_rows(read_file(data), "vision-chat", Columns(messages="messages", image="images"))

    assert refused.value.message == (
        'chats.jsonl: 1 row has no conversation that can be read in column "messages" (chats.jsonl line 4): '
        "it needs an assistant reply, and as many pictures as image parts."
    )
    assert '"Leave out rows with a missing or unreadable picture, or no label"' in refused.value.hint
