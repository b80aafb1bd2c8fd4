"""A chat run exported as GGUF: checked by llama.cpp, renamed when it fails, with a Modelfile and a card.

The tests that load files with llama.cpp take the ``llama_cpp`` fixture (tests/conftest.py): without
``llama-cpp-python`` they skip, saying so; CI installs it and sets ``FINETUNE_STUDIO_REQUIRE_LLAMA_CPP=1`` so
that they fail there.
"""

from __future__ import annotations

import json
import types
from pathlib import Path

import pytest

from desktop.core.results import gguf_check
from desktop.core.results.gguf_export import already_there, export_run_gguf, gguf_path
from desktop.core.results.gguf_writer import GgufCancelled
from desktop.core.system.errors import InputError
from tests.conftest import PARTING_LLAMA
from tests.core.helpers import make_config


def _run(model: Path, samples: Path, folder: Path) -> types.SimpleNamespace:
    """A finished chat run on ``model``, trained on the sample chats (their prompts are the checks')."""
    config = make_config("causal-lm", model, [samples / "chat.jsonl"], folder / "runs")
    config.model.name = "tiny-chat"
    return types.SimpleNamespace(path=folder / "run-chat", model_dir=model, config=lambda: config)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["llama", "qwen2", "gpt2"])
@pytest.mark.usefixtures("llama_cpp")
def test_llama_cpp_answers_as_transformers_does_and_the_card_says_so(
    tiny_chat_models: dict, samples: Path, tmp_path: Path, kind: str
) -> None:
    run = _run(tiny_chat_models[kind], samples, tmp_path)
    stages: list[str] = []
    result = export_run_gguf(run, tmp_path / "out", "f16", lambda stage, _: stages.append(stage))
    check = result.verification
    assert check.verified and check.agreeing >= 4 and len(check.checks) == 5, check.difference()
    assert result.path == gguf_path(run, tmp_path / "out", "f16") and result.path.is_file()
    assert stages[0] == "gguf" and "check" in stages and stages[-1] == "done"
    # The run's own prompts, from its data, rendered with its chat template on both sides.
    said = {
        m["content"]
        for line in (samples / "chat.jsonl").read_text(encoding="utf-8").splitlines()
        for m in json.loads(line)["messages"]
        if m["role"] == "user"
    }
    assert check.checks[0].prompt in said
    card = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    assert f"| `{result.path.name}` | f16 | {check.agreeing} of 5 (needs 4) | verified |" in card
    assert "FROM ./run-chat-F16.gguf" in result.modelfile.read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.usefixtures("llama_cpp")
def test_a_k_quant_is_made_by_llama_cpps_quantizer(
    tiny_chat_models: dict, samples: Path, tmp_path: Path
) -> None:
    import gguf

    run = _run(tiny_chat_models["qwen2"], samples, tmp_path)
    result = export_run_gguf(run, tmp_path / "out", "q4_k_m")
    reader = gguf.GGUFReader(result.path)
    # Rows of 64 are too short for 256-wide K blocks: llama.cpp's quantizer falls back, as it does.
    assert reader.fields["general.file_type"].contents() == gguf.LlamaFileType.MOSTLY_Q4_K_M
    assert {t.tensor_type for t in reader.tensors} - {gguf.GGMLQuantizationType.F32} <= {
        gguf.GGMLQuantizationType.Q5_0,
        gguf.GGMLQuantizationType.Q8_0,
        gguf.GGMLQuantizationType.Q4_K,
        gguf.GGMLQuantizationType.Q6_K,
    }
    assert result.verification.checked and len(result.verification.checks) == 5
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "Modelfile",
        "README.md",
        "gguf-checks.json",
        result.path.name,  # the f16 file it was made from is gone
    ]


@pytest.mark.slow
def test_a_file_that_llama_cpp_answers_differently_is_kept_as_unverified(
    tiny_chat_models: dict, samples: Path, tmp_path: Path, parting_llama: None
) -> None:
    run = _run(tiny_chat_models["llama"], samples, tmp_path)
    result = export_run_gguf(run, tmp_path / "out", "q8_0")
    check = result.verification
    assert result.path.name == "run-chat-Q8_0-unverified.gguf" and result.path.is_file()
    assert not gguf_path(run, tmp_path / "out", "q8_0").exists()  # nothing under the plain name
    assert not check.verified and check.checked and check.agreeing < 3
    assert "Unverified: only" in check.summary() and "wrote" in check.difference()
    card = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    assert "**unverified**" in card and "the answers part at token" in card
    record = json.loads((tmp_path / "out" / "gguf-checks.json").read_text(encoding="utf-8"))
    assert record[result.path.name]["verified"] is False
    assert result.ollama_name == "run-chat-q8_0"
    # A second export of the same quantization must be agreed to: the unverified file is in the way.
    assert already_there(run, tmp_path / "out", "q8_0") == [result.path]
    with pytest.raises(InputError, match="already exists"):
        export_run_gguf(run, tmp_path / "out", "q8_0")


def test_without_llama_cpp_nothing_is_called_verified_and_k_quants_are_refused_first(
    tiny_chat_models: dict, samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gguf_check, "llama_cpp_available", lambda: False)
    run = _run(tiny_chat_models["qwen2"], samples, tmp_path)
    with pytest.raises(InputError, match=r"q4_k_m is made by llama\.cpp's quantizer"):
        export_run_gguf(run, tmp_path / "out", "q4_k_m")
    assert not (tmp_path / "out").exists()
    result = export_run_gguf(run, tmp_path / "out", "f16")
    assert result.path.name == "run-chat-F16.gguf" and not result.verification.verified
    assert (
        result.verification.summary()
    ) == "Not verified: llama.cpp (the llama-cpp-python package) is not installed."
    assert "| not checked | **unverified** |" in (tmp_path / "out" / "README.md").read_text(encoding="utf-8")


def test_the_lm_studio_layout_and_files_that_are_not_ours(
    tiny_chat_models: dict, samples: Path, tmp_path: Path
):
    run = _run(tiny_chat_models["gpt2"], samples, tmp_path)
    theirs = tmp_path / "lms" / "finetune-studio" / "run-chat"
    theirs.mkdir(parents=True)
    (theirs / "README.md").write_text("my notes", encoding="utf-8")
    assert already_there(run, tmp_path / "lms", "f16", "lmstudio") == [theirs / "README.md"]
    with pytest.raises(InputError, match=r"README\.md already exists"):
        export_run_gguf(run, tmp_path / "lms", "f16", layout="lmstudio", verify=False)
    assert (theirs / "README.md").read_text(encoding="utf-8") == "my notes"
    result = export_run_gguf(run, tmp_path / "lms", "f16", layout="lmstudio", verify=False, overwrite=True)
    assert result.path == theirs / "run-chat-F16.gguf"
    assert "skipped" in result.verification.summary()
    # Our own Modelfile and card are rewritten by the next export to the folder, without asking.
    assert already_there(run, tmp_path / "lms", "q8_0", "lmstudio") == []


def test_a_cancelled_export_leaves_no_folder_behind(
    tiny_chat_models: dict, samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _run(tiny_chat_models["llama"], samples, tmp_path)
    with pytest.raises(GgufCancelled):
        export_run_gguf(run, tmp_path / "a" / "b", "f16", cancelled=lambda: True, layout="lmstudio")
    assert not (tmp_path / "a").exists()  # neither the file nor the folders made for it
    monkeypatch.setattr(gguf_check, "llama_cpp_available", lambda: True)
    with pytest.raises(GgufCancelled):  # a K-quant: its f16 file first, then llama.cpp's quantizer
        export_run_gguf(run, tmp_path / "k", "q4_k_m", cancelled=lambda: True)
    assert not (tmp_path / "k").exists()


def test_the_system_prompt_of_the_training_chats_goes_to_the_modelfile(
    tiny_chat_models: dict, tmp_path: Path
) -> None:
    chats = tmp_path / "chats.jsonl"
    rows = [
        [
            {"role": "system", "content": "Answer briefly."},
            {"role": "user", "content": f"Question {i}?"},
            {"role": "assistant", "content": f"Answer {i}."},
        ]
        for i in range(6)
    ]
    chats.write_text("\n".join(json.dumps({"messages": r}) for r in rows), encoding="utf-8")
    config = make_config("causal-lm", tiny_chat_models["qwen2"], [chats], tmp_path / "runs")
    run = types.SimpleNamespace(
        path=tmp_path / "r", model_dir=tiny_chat_models["qwen2"], config=lambda: config
    )
    prompts, system = gguf_check.example_prompts(run)
    assert system == "Answer briefly." and prompts[0].startswith("Question ") and len(prompts) == 5
    result = export_run_gguf(run, tmp_path / "out", "f16", verify=False)
    assert 'SYSTEM """Answer briefly."""' in result.modelfile.read_text(encoding="utf-8")
    # Ollama, given the Modelfile's SYSTEM and each prompt, renders what transformers rendered for the check
    assert result.ollama_agreement == (5, 5)
    assert str(result.ollama_summary()).startswith("Ollama: the Modelfile's template renders 5 of 5 prompts")


MISREADING_LLAMA = """\
import os

import torch
from transformers import AutoModelForCausalLM

MODEL = AutoModelForCausalLM.from_pretrained(os.environ["FAKE_LLAMA_MODEL"], dtype=torch.float32)


class Llama:
    \"\"\"Answers as transformers would, but to the prompt's text read as other tokens.\"\"\"

    def __init__(self, model_path, **kwargs):
        pass

    def reset(self):
        pass

    def token_eos(self):
        return -1

    def tokenize(self, text, add_bos, special):
        return [5, 6, 7]

    def generate(self, ids, **kwargs):
        with torch.no_grad():
            out = MODEL.generate(torch.tensor([ids]), max_new_tokens=16, do_sample=False)
        yield from out[0, len(ids):].tolist()
"""


@pytest.mark.slow
def test_a_prompt_that_llama_cpp_tokenizes_differently_is_named_as_the_tokenizers_fault(
    tiny_chat_models: dict, samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_llama_cpp
) -> None:
    """llama.cpp reads the rendered prompt itself, as Ollama gives it; a wrong tokenizer is told apart."""
    monkeypatch.setenv("FAKE_LLAMA_MODEL", str(tiny_chat_models["llama"]))
    fake_llama_cpp(MISREADING_LLAMA)
    run = _run(tiny_chat_models["llama"], samples, tmp_path)
    check = export_run_gguf(run, tmp_path / "out", "f16").verification
    assert not check.verified and not check.checks[0].same_prompt
    assert (
        "reads the prompt" in check.difference() and "the tokenizer in the file differs" in check.difference()
    )


FAKE_QUANTIZER = """\
import sys, time
for i in range(1, 2001):  # 2,000 tensors: far more log than a pipe holds (4 KB on Windows, 64 KB here)
    print(f"[{i:4d}/2000] blk.{i}.ffn_down.weight - [ 4096, 11008], type = f16, converting to q4_K .. done")
if sys.argv[3] == "hang":
    time.sleep(600)
open(sys.argv[2], "wb").write(b"GGUF")
"""


def test_llama_cpps_quantizer_is_read_as_it_logs_and_stops_on_cancel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desktop.core.results import gguf_quantize

    script = tmp_path / "fake_quantizer.py"
    script.write_text(FAKE_QUANTIZER, encoding="utf-8")
    monkeypatch.setattr(gguf_quantize, "__file__", str(script))
    monkeypatch.setitem(gguf_quantize.K_QUANTS, "q4_k_m", "ok")
    seen: list[tuple[int, int]] = []
    gguf_quantize.quantize(
        "in.gguf", str(tmp_path / "out.gguf"), "q4_k_m", progress=lambda i, n: seen.append((i, n))
    )
    assert seen[-1] == (2000, 2000) and len(seen) == 2000 and (tmp_path / "out.gguf").read_bytes() == b"GGUF"
    monkeypatch.setitem(gguf_quantize.K_QUANTS, "q4_k_m", "hang")
    with pytest.raises(GgufCancelled):
        gguf_quantize.quantize(
            "in.gguf", str(tmp_path / "never.gguf"), "q4_k_m", cancelled=lambda: bool(seen)
        )


@pytest.mark.slow
def test_a_file_llama_cpp_cannot_load_is_unverified_with_llama_cpps_words(
    tiny_chat_models: dict, samples: Path, tmp_path: Path, fake_llama_cpp
) -> None:
    fake_llama_cpp(
        """
        class Llama:
            def __init__(self, model_path, **kwargs):
                raise ValueError("Failed to load model from file")
        """
    )
    run = _run(tiny_chat_models["qwen2"], samples, tmp_path)
    result = export_run_gguf(run, tmp_path / "out", "f16")
    assert result.path.name == "run-chat-F16-unverified.gguf"
    assert result.verification.summary() == (
        "Unverified: llama.cpp could not load or run the file: Failed to load model from file"
    )
    assert "Failed to load model from file" in (tmp_path / "out" / "README.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_llama_cpp_that_takes_the_process_down_leaves_the_file_unverified_not_the_app_gone(
    tiny_chat_models: dict, samples: Path, tmp_path: Path, fake_llama_cpp
) -> None:
    """llama.cpp aborts the process on some malformed files (GGML_ASSERT): the check's child, not us."""
    fake_llama_cpp(
        """
        import os, sys


        class Llama:
            def __init__(self, model_path, **kwargs):
                print("GGML_ASSERT(hparams.n_embd_head_k % 32 == 0) failed", file=sys.stderr, flush=True)
                os.abort()
        """
    )
    run = _run(tiny_chat_models["qwen2"], samples, tmp_path)
    check = export_run_gguf(run, tmp_path / "out", "f16").verification
    assert not check.verified and check.checked
    assert "ended without an answer" in check.summary() and "GGML_ASSERT" in check.summary()


def test_a_check_can_be_cancelled_and_leaves_nothing(
    tiny_chat_models: dict, samples: Path, tmp_path: Path, fake_llama_cpp
) -> None:
    fake_llama_cpp(
        """
        import time


        class Llama:
            def __init__(self, model_path, **kwargs):
                time.sleep(600)  # a 70B model loading
        """
    )
    run = _run(tiny_chat_models["qwen2"], samples, tmp_path)
    stages: list[str] = []
    with pytest.raises(GgufCancelled):
        export_run_gguf(
            run,
            tmp_path / "out",
            "f16",
            lambda stage, _: stages.append(stage),
            cancelled=lambda: "check" in stages,
        )
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
@pytest.mark.usefixtures("llama_cpp")
def test_the_models_own_generation_settings_do_not_sway_the_comparison(
    tiny_chat_models: dict, samples: Path, tmp_path: Path
) -> None:
    """Qwen2.5 ships repetition_penalty 1.05: transformers' side is plain greedy, as llama.cpp's is."""
    import shutil

    model = tmp_path / "model"
    shutil.copytree(tiny_chat_models["qwen2"], model)
    (model / "generation_config.json").write_text(json.dumps({"repetition_penalty": 3.0}), encoding="utf-8")
    run = _run(model, samples, tmp_path)
    assert export_run_gguf(run, tmp_path / "out", "f16").verification.agreeing == 5


def test_the_ollama_name_is_one_ollama_takes_whatever_the_run_is_called() -> None:
    from desktop.core.results.gguf_export import ollama_name

    assert (
        ollama_name(Path("20261204-101500-qwen-chat-Q8_0-unverified.gguf"))
        == "20261204-101500-qwen-chat-q8_0"
    )
    assert ollama_name(Path("20261204-101500-客服助手-F16.gguf")) == "finetune-studio-20261204-101500-f16"


@pytest.mark.slow
def test_replacing_an_export_deletes_its_other_name_only_when_the_app_wrote_it(
    tiny_chat_models: dict, samples: Path, tmp_path: Path, fake_llama_cpp
) -> None:
    """A file that was unverified, exported again and now called not checked, goes under the plain name:
    the old unverified one is the app's (its check is on record) and goes; one the app has no record of
    stays."""
    fake_llama_cpp(PARTING_LLAMA)
    run = _run(tiny_chat_models["qwen2"], samples, tmp_path)
    first = export_run_gguf(run, tmp_path / "out", "f16").path
    assert first.name == "run-chat-F16-unverified.gguf"
    again = export_run_gguf(run, tmp_path / "out", "f16", overwrite=True, verify=False).path
    assert again.name == "run-chat-F16.gguf" and not first.exists()
    record = json.loads((tmp_path / "out" / "gguf-checks.json").read_text(encoding="utf-8"))
    assert list(record) == ["run-chat-F16.gguf"]
    theirs = tmp_path / "out" / "run-chat-Q8_0-unverified.gguf"
    theirs.write_bytes(b"not the app's")
    export_run_gguf(run, tmp_path / "out", "q8_0", overwrite=True, verify=False)
    assert theirs.read_bytes() == b"not the app's"
    assert (
        sorted(p.name for p in (tmp_path / "out").iterdir() if ".partial" in p.name or ".checking" in p.name)
        == []
    )


@pytest.mark.slow
def test_a_file_put_under_a_recorded_name_is_not_deleted_as_the_apps(
    tiny_chat_models: dict, samples: Path, tmp_path: Path, fake_llama_cpp
) -> None:
    """The record names the file the app wrote: a file the user saved under that name since (another size
    or time) is theirs, and replacing the export leaves it."""
    fake_llama_cpp(PARTING_LLAMA)
    run = _run(tiny_chat_models["qwen2"], samples, tmp_path)
    first = export_run_gguf(run, tmp_path / "out", "f16").path
    assert first.name == "run-chat-F16-unverified.gguf"
    first.write_bytes(b"the user's own file, saved under the same name")

    again = export_run_gguf(run, tmp_path / "out", "f16", overwrite=True, verify=False).path

    assert again.name == "run-chat-F16.gguf"
    assert first.read_bytes() == b"the user's own file, saved under the same name"


@pytest.mark.parametrize("kind", ["derived", "none"])
def test_a_template_of_no_family_gets_a_derived_ollama_template_or_the_export_says_it_has_none(
    kind: str, tiny_chat_models: dict, samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ollama's own matching missed a template of no family (the answer lost its first letters), and
    nobody was told. Now the Modelfile gets a Go template derived from it, or the export says it has none."""
    import shutil

    from transformers import AutoTokenizer

    from tests.core.test_template_derive import NUMBERED_JINJA, VICUNA_JINJA

    monkeypatch.setattr(gguf_check, "llama_cpp_available", lambda: False)
    model = tmp_path / "model"
    shutil.copytree(tiny_chat_models["qwen2"], model)
    tokenizer = AutoTokenizer.from_pretrained(model)
    tokenizer.chat_template = VICUNA_JINJA if kind == "derived" else NUMBERED_JINJA
    tokenizer.save_pretrained(model)

    result = export_run_gguf(_run(model, samples, tmp_path), tmp_path / "out", "f16")

    written = result.modelfile.read_text(encoding="utf-8")
    card = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    assert result.chat_format == kind
    if kind == "derived":
        assert 'TEMPLATE """' in written and "ASSISTANT:" in written and result.ollama_note() is None
        assert "Ollama will not apply" not in card
        assert result.ollama_agreement == (
            5,
            5,
        )  # the check's prompts, through the TEMPLATE as Ollama reads it
        assert "its TEMPLATE renders 5 of 5 of the check's prompts exactly" in card
    else:
        assert "TEMPLATE" not in written
        assert str(result.ollama_note()).startswith("Ollama will not apply this model's chat format")
        assert "- Modelfile: Ollama will not apply this model's chat format" in card
        assert result.ollama_agreement == (0, 5) and result.ollama_summary() is None


def test_the_check_says_when_ollamas_template_reads_a_prompt_otherwise() -> None:
    """Gemma's template trims each message and Go's cannot: a prompt that ends in a new line is rendered
    otherwise by Ollama, and the check counts it."""
    from jinja2 import Environment

    from desktop.core.results.modelfile import go_template, template_agreement
    from tests.tiny_models import GEMMA3_JINJA

    jinja = Environment().from_string(GEMMA3_JINJA)

    def render(messages: list[dict[str, str]]) -> str:
        return jinja.render(messages=messages, add_generation_prompt=True, bos_token="<bos>")

    template, _ = go_template(GEMMA3_JINJA, "<eos>")
    prompts = ["What is the capital of Japan?", "Translate this:\n", "Name a fruit."]

    assert template_agreement(template, prompts, render, "Be brief.", "Be brief.", "<bos>") == (2, 3)
    assert template_agreement("", prompts, render) == (0, 3)  # no TEMPLATE: Ollama sends the bare prompt
