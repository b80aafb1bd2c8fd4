"""The Modelfile's Go template renders what the model's Jinja chat template renders, for each family."""

from __future__ import annotations

import pytest
from jinja2 import Environment

from desktop.core.data.tasks.causal_lm import FALLBACK_CHAT_TEMPLATE
from desktop.core.results.go_template import render as render_go
from desktop.core.results.modelfile import family, go_template, modelfile
from tests.tiny_models import GEMMA2_JINJA, GEMMA3_JINJA, MISTRAL_JINJA, PHI3_JINJA

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


@pytest.mark.parametrize(
    ("jinja", "kind", "bos", "chat"),
    [
        (CHATML_JINJA, "chatml", "", CHAT),
        (LLAMA3_JINJA, "llama3", "<|begin_of_text|>", CHAT),
        (GEMMA3_JINJA, "gemma", "<bos>", CHAT),  # the system prompt opens the first user turn
        (GEMMA3_JINJA, "gemma", "<bos>", CHAT[1:]),
        (GEMMA2_JINJA, "gemma", "<bos>", CHAT[1:]),  # Gemma 2's template refuses a system prompt
        (PHI3_JINJA, "phi3", "", CHAT),
        (MISTRAL_JINJA, "mistral", "<s>", CHAT[1:]),  # so does Mistral's
        (FALLBACK_CHAT_TEMPLATE, "fallback", "", CHAT),
    ],
)
def test_the_go_template_renders_what_the_jinja_template_renders(
    jinja: str, kind: str, bos: str, chat: list[dict[str, str]]
) -> None:
    eos = "</s>"
    expected = (
        Environment()
        .from_string(jinja)
        .render(messages=chat, add_generation_prompt=True, bos_token=bos, eos_token=eos)
    )
    template, stops = go_template(jinja, eos)
    assert family(jinja) == kind and stops
    assert render_go(template, chat) == expected.removeprefix(bos)  # llama.cpp adds the BOS token itself


def test_our_go_renderer_renders_go_conditions_and_refuses_what_it_does_not_know() -> None:
    from desktop.core.results.go_template import Unsupported

    template = (
        '{{ $seen := false }}{{ range .Messages }}{{ if eq .Role "user" }}U{{ else if $seen }}S'
        "{{ else }}F{{ $seen = true }}{{ end }}{{ end }}"
    )
    assert render_go(template, CHAT) == "FUSU"
    assert render_go('{{ range .Messages }}{{ "{{" }}{{ end }}', CHAT[:2]) == "{{{{"
    with pytest.raises(Unsupported, match="not rendered here"):
        render_go("{{ range .Messages }}{{ .Images }}{{ end }}", CHAT)
    with pytest.raises(Unsupported, match="not evaluated here"):
        render_go('{{ range .Messages }}{{ if ne .Role "user" }}x{{ end }}{{ end }}', CHAT)


def test_a_modelfile_names_its_gguf_and_an_unknown_template_is_left_to_ollama() -> None:
    text = modelfile("run-Q8_0.gguf", CHATML_JINJA, "<|endoftext|>", system="Be brief.")
    lines = text.splitlines()
    assert lines[1] == "FROM ./run-Q8_0.gguf" and lines[2].startswith('TEMPLATE """')
    assert 'PARAMETER stop "<|im_end|>"' in text
    assert 'SYSTEM """Be brief."""' in text
    gemma = modelfile("m.gguf", GEMMA3_JINJA, "<eos>")
    assert 'PARAMETER stop "<end_of_turn>"' in gemma and '{{ if eq .Role "assistant" }}model' in gemma
    unknown = modelfile("m.gguf", "{{ messages }}", "</s>")
    assert "TEMPLATE" not in unknown and "PARAMETER stop" not in unknown  # Ollama reads the GGUF's own


QWEN25_JINJA = (  # Qwen2.5's, without its tools branch: a chat without a system turn gets Qwen's own
    "{%- if messages[0]['role'] == 'system' %}"
    "{{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}"
    "{%- else %}"
    "{{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant."
    "<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- for message in messages %}{%- if not (message.role == 'system' and loop.first) %}"
    "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}"
    "{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)


def test_a_system_prompt_the_template_adds_by_itself_goes_to_the_modelfile() -> None:
    """Ollama gives the Go template the Modelfile's SYSTEM as the first message: with Qwen2.5's own
    system prompt there, a user's lone question renders as the Jinja template renders it."""
    from desktop.core.results.modelfile import template_system

    question = [{"role": "user", "content": "What is the capital of Japan?"}]
    jinja = Environment().from_string(QWEN25_JINJA).render(messages=question, add_generation_prompt=True)
    system = template_system(QWEN25_JINJA, jinja)
    assert system == "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
    template, _ = go_template(QWEN25_JINJA, "<|im_end|>")
    assert render_go(template, [{"role": "system", "content": system}, *question]) == jinja
    assert f'SYSTEM """{system}"""' in modelfile("m.gguf", QWEN25_JINJA, "<|im_end|>", system)
    assert template_system(CHATML_JINJA, "<|im_start|>user\nHi<|im_end|>\n") == ""  # none of its own
