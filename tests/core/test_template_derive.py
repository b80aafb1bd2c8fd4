"""Ollama's Go template derived from any Jinja chat template (issue 55, item 5): it renders what the Jinja
template renders, in Go's own text/template as Ollama runs it, for our families and for templates of no
family; where none can be derived, nothing is claimed."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from jinja2 import Environment

from desktop.core.data.tasks.causal_lm import FALLBACK_CHAT_TEMPLATE
from desktop.core.results.template_derive import TEST_CHATS, derive
from tests.core.test_modelfile import CHATML_JINJA, LLAMA3_JINJA, render_go
from tests.tiny_models import GEMMA2_JINJA, GEMMA3_JINJA, MISTRAL_JINJA, PHI3_JINJA

VICUNA_JINJA = (  # no family of ours: "USER: ... ASSISTANT: ...</s>", the system prompt as plain text
    "{% if messages[0]['role'] == 'system' %}{{ messages[0]['content'] + '\\n\\n' }}"
    "{% set loop_messages = messages[1:] %}{% else %}{% set loop_messages = messages %}{% endif %}"
    "{% for m in loop_messages %}{% if m['role'] == 'user' %}{{ 'USER: ' + m['content'] + '\\n' }}"
    "{% else %}{{ 'ASSISTANT: ' + m['content'] + eos_token + '\\n' }}{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}{{ 'ASSISTANT:' }}{% endif %}"
)
DEEPSEEK_JINJA = (  # DeepSeek-style full-width bars, the system prompt first without a header
    "{{ bos_token }}{% for m in messages %}{% if m['role'] == 'system' %}{{ m['content'] }}"
    "{% elif m['role'] == 'user' %}{{ '<｜User｜>' + m['content'] }}"
    "{% else %}{{ '<｜Assistant｜>' + m['content'] + '<｜end▁of▁sentence｜>' }}{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<｜Assistant｜>' }}{% endif %}"
)
NUMBERED_JINJA = (  # each turn numbered: the text between two messages is not the same each time
    "{% for m in messages %}[{{ loop.index }}] {{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}[{{ messages | length + 1 }}] assistant:{% endif %}"
)
TEMPLATES = {
    "chatml": (CHATML_JINJA, ""),
    "llama3": (LLAMA3_JINJA, "<|begin_of_text|>"),
    "gemma2": (GEMMA2_JINJA, "<bos>"),
    "gemma3": (GEMMA3_JINJA, "<bos>"),  # the system prompt opens the first user turn: a step of its own
    "phi3": (PHI3_JINJA, ""),
    "mistral": (MISTRAL_JINJA, "<s>"),
    "fallback": (FALLBACK_CHAT_TEMPLATE, ""),
    "vicuna": (VICUNA_JINJA, "<s>"),
    "deepseek": (DEEPSEEK_JINJA, "<｜begin▁of▁sentence｜>"),
}


def _renderer(jinja: str, bos: str):
    """The template applied as transformers applies it (raise_exception included)."""

    def raise_exception(message: str) -> None:
        raise ValueError(message)

    template = Environment().from_string(jinja)
    return lambda messages: template.render(
        messages=messages,
        add_generation_prompt=True,
        bos_token=bos,
        eos_token="</s>",
        raise_exception=raise_exception,
    )


@pytest.fixture(scope="session")
def go_render(tmp_path_factory: pytest.TempPathFactory):
    """Go's text/template, as Ollama runs a Modelfile's TEMPLATE: a tiny program built with Debian's
    golang-go (.ci/run installs it)."""
    go = shutil.which("go")
    assert go is not None, (
        "Go is needed to render Ollama's templates as Ollama does: apt-get install golang-go"
    )
    folder = tmp_path_factory.mktemp("gorender")
    (folder / "main.go").write_text(
        'package main\n\nimport (\n\t"encoding/json"\n\t"os"\n\t"text/template"\n)\n\n'
        'type Message struct {\n\tRole    string `json:"role"`\n\tContent string `json:"content"`\n}\n\n'
        'func main() {\n\tvar in struct {\n\t\tTemplate string    `json:"template"`\n'
        '\t\tMessages []Message `json:"messages"`\n\t}\n'
        "\tif err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {\n\t\tpanic(err)\n\t}\n"
        '\tt := template.Must(template.New("t").Parse(in.Template))\n'
        '\tif err := t.Execute(os.Stdout, map[string]any{"Messages": in.Messages}); err != nil {\n'
        "\t\tpanic(err)\n\t}\n}\n",
        encoding="utf-8",
    )
    (folder / "go.mod").write_text("module gorender\n\ngo 1.18\n", encoding="utf-8")
    env = {
        "PATH": str(Path(go).parent),
        "HOME": str(folder),
        "GOCACHE": str(folder / "cache"),
        "GOFLAGS": "-mod=mod",
    }
    subprocess.run(
        [go, "build", "-o", str(folder / "gorender"), "."], cwd=folder, env=env, check=True, timeout=300
    )

    def render(template: str, messages: list[dict[str, str]]) -> str:
        request = json.dumps({"template": template, "messages": messages})
        done = subprocess.run(
            [str(folder / "gorender")], input=request, capture_output=True, text=True, timeout=60, check=True
        )
        return done.stdout

    return render


@pytest.mark.parametrize("name", list(TEMPLATES))
def test_the_derived_go_template_renders_what_the_jinja_template_renders(name: str, go_render) -> None:
    jinja, bos = TEMPLATES[name]
    render = _renderer(jinja, bos)

    pieces = derive(render, bos)

    assert pieces is not None, name
    template = pieces.go()
    for chat in TEST_CHATS:
        if chat[0][0] == "system" and not pieces.takes_system:
            continue  # Gemma 2's and Mistral v0.2's refuse one: left out, as Ollama's would be
        messages = [{"role": role, "content": content} for role, content in chat]
        expected = render(messages).removeprefix(bos)  # llama.cpp adds the BOS token itself
        assert go_render(template, messages) == expected, (name, chat)
        assert render_go(template, messages) == expected  # and ours, which the GGUF check uses
    assert pieces.takes_system == (name not in ("gemma2", "mistral"))
    assert pieces.stops("</s>")[0] == "</s>"


def test_what_ends_an_answer_is_read_from_the_template() -> None:
    chatml = derive(_renderer(CHATML_JINJA, ""))
    assert chatml is not None and chatml.stops("<|endoftext|>") == ["<|endoftext|>", "<|im_end|>"]
    deepseek = derive(_renderer(DEEPSEEK_JINJA, ""))
    assert deepseek is not None and deepseek.stops("") == []  # no token of a known shape: the EOS alone


def test_no_go_template_is_claimed_where_none_renders_the_same() -> None:
    assert derive(_renderer(NUMBERED_JINJA, "")) is None
    assert derive(_renderer("{{ raise_exception('no chats here') }}", "")) is None


@pytest.mark.parametrize("name", ["chatml", "llama3", "gemma3", "phi3", "mistral", "fallback"])
def test_our_go_renderer_renders_each_family_template_as_go_does(name: str, go_render) -> None:
    """The GGUF check reads the Modelfile's TEMPLATE with ``go_template.render``: for every template the
    exports write by hand, it writes what Go's text/template writes."""
    from desktop.core.results.modelfile import go_template

    template, _ = go_template(TEMPLATES[name][0], "</s>")
    assert template
    for chat in TEST_CHATS:
        messages = [{"role": role, "content": content} for role, content in chat]
        assert render_go(template, messages) == go_render(template, messages), (name, chat)
