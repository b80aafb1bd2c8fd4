"""The Modelfile's Go template renders what the model's Jinja chat template renders, for each family."""

from __future__ import annotations

import re

import pytest
from jinja2 import Environment

from desktop.core.data.tasks.causal_lm import FALLBACK_CHAT_TEMPLATE
from desktop.core.results.modelfile import family, go_template, modelfile

CHATML_JINJA = (  # Qwen2.5's, without its tools branch and default system prompt
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
    "'<|im_end|>' + '\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
LLAMA3_JINJA = (  # Meta Llama 3's
    "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = "
    "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim + "
    "'<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}"
    "{% endif %}"
)
CHAT = [
    {"role": "system", "content": "Answer in one sentence."},
    {"role": "user", "content": "What is the capital of Japan?"},
    {"role": "assistant", "content": "Tokyo is the capital of Japan."},
    {"role": "user", "content": "And of China?"},
]


def render_go(template: str, messages: list[dict[str, str]]) -> str:
    """Ollama's Go template language as far as ours use it: range over .Messages, .Role, .Content."""
    out, rest = [], template
    while rest:
        found = re.search(r"\{\{ range \.Messages \}\}(.*?)\{\{ end \}\}", rest, re.S)
        if not found:
            out.append(rest)
            break
        out.append(rest[: found.start()])
        for message in messages:
            body = (
                found.group(1)
                .replace("{{ .Role }}", message["role"])
                .replace("{{ .Content }}", message["content"])
            )
            out.append(body)
        rest = rest[found.end() :]
    text = "".join(out)
    assert "{{" not in text, text  # nothing left that Ollama would render and this stand-in did not
    return text


@pytest.mark.parametrize(
    ("jinja", "kind", "bos"),
    [
        (CHATML_JINJA, "chatml", ""),
        (LLAMA3_JINJA, "llama3", "<|begin_of_text|>"),
        (FALLBACK_CHAT_TEMPLATE, "fallback", ""),
    ],
)
def test_the_go_template_renders_what_the_jinja_template_renders(jinja: str, kind: str, bos: str) -> None:
    eos = "</s>"
    expected = (
        Environment()
        .from_string(jinja)
        .render(messages=CHAT, add_generation_prompt=True, bos_token=bos, eos_token=eos)
    )
    template, stops = go_template(jinja, eos)
    assert family(jinja) == kind and stops
    assert render_go(template, CHAT) == expected.removeprefix(bos)  # llama.cpp adds the BOS token itself


def test_a_modelfile_names_its_gguf_and_an_unknown_template_is_left_to_ollama() -> None:
    text = modelfile("run-Q8_0.gguf", CHATML_JINJA, "<|endoftext|>", system="Be brief.")
    lines = text.splitlines()
    assert lines[1] == "FROM ./run-Q8_0.gguf" and lines[2].startswith('TEMPLATE """')
    assert 'PARAMETER stop "<|im_end|>"' in text
    assert 'SYSTEM """Be brief."""' in text
    unknown = modelfile("m.gguf", "{{ messages }}", "</s>")
    assert "TEMPLATE" not in unknown and "PARAMETER stop" not in unknown  # Ollama reads the GGUF's own
