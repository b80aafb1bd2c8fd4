"""An Ollama ``Modelfile`` beside a GGUF: its chat template in Ollama's Go template language, stop tokens.

Ollama renders prompts with Go templates, not the Jinja templates models carry. For the chat formats our
runs produce and the recommended models use, the template is written here by hand to render exactly
what the Jinja template renders (the tests render both for a two-turn chat, with a system prompt where
the template takes one):

- ChatML (Qwen): ``<|im_start|>role\\ncontent<|im_end|>\\n``;
- Llama 3: ``<|start_header_id|>role<|end_header_id|>\\n\\ncontent<|eot_id|>``;
- Gemma 2 and 3: ``<start_of_turn>role\\ncontent<end_of_turn>\\n``, the assistant's role called
  ``model``; Gemma has no system role: Gemma 3's template opens the first user turn with the system
  prompt and a blank line (Gemma 2's refuses one; the Go template does as Gemma 3's). Gemma's template
  also trims each message, which Go's cannot: a message that starts or ends with whitespace differs;
- Phi-3: ``<|role|>\\ncontent<|end|>\\n``;
- Mistral (``[INST] content [/INST]answer</s>``): no system role; Mistral 7B Instruct v0.2's template
  refuses one and the Go template leaves it out (later Mistral templates put it before the last user
  message: with a system prompt those render differently);
- our fallback template (a tokenizer without one): ``<|role|>\\ncontent EOS\\n``.

The BOS token that Llama 3's, Gemma's and Mistral's templates begin with is llama.cpp's to add (the
GGUF's ``add_bos_token``), not the Go template's. Any other template's Go template is derived by
rendering it (``template_derive.py``); where none renders the same, the Modelfile has no ``TEMPLATE``
line, and the export says that Ollama will not apply the chat format.
"""

from __future__ import annotations

import re
from typing import Any

MARK = "# Written by Finetune Studio for the GGUF file below; a new export replaces it."

# Ollama puts the system prompt (the request's, else the Modelfile's SYSTEM) first in .Messages.
CHATML = (
    "{{ range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n{{ end }}<|im_start|>assistant\n"
)
LLAMA3 = (  # the BOS token is llama.cpp's to add (add_bos_token), not the template's
    "{{ range .Messages }}<|start_header_id|>{{ .Role }}<|end_header_id|>\n\n"
    "{{ .Content }}<|eot_id|>{{ end }}<|start_header_id|>assistant<|end_header_id|>\n\n"
)

# $system: a system message was just written, so the user turn it opened has its header already.
GEMMA = (
    '{{ $system := false }}{{ range .Messages }}{{ if eq .Role "system" }}<start_of_turn>user\n'
    "{{ .Content }}\n\n{{ $system = true }}{{ else }}{{ if $system }}{{ $system = false }}{{ else }}"
    '<start_of_turn>{{ if eq .Role "assistant" }}model{{ else }}{{ .Role }}{{ end }}\n{{ end }}'
    "{{ .Content }}<end_of_turn>\n{{ end }}{{ end }}<start_of_turn>model\n"
)
PHI3 = "{{ range .Messages }}<|{{ .Role }}|>\n{{ .Content }}<|end|>\n{{ end }}<|assistant|>\n"


def family(chat_template: str) -> str:
    """``chatml``, ``llama3``, ``gemma``, ``phi3``, ``mistral``, ``fallback`` (ours) or ``""`` (one we do
    not translate)."""
    if "<|im_start|>" in chat_template:
        return "chatml"
    if "<|start_header_id|>" in chat_template:
        return "llama3"
    if "<start_of_turn>" in chat_template:
        return "gemma"
    if "<|end|>" in chat_template and "<|assistant|>" in chat_template:
        return "phi3"
    if "[INST]" in chat_template and "<<SYS>>" not in chat_template:  # <<SYS>>: Llama 2's, not ours
        return "mistral"
    if "'<|' + message['role'] + '|>" in chat_template:
        return "fallback"
    return ""


def go_template(chat_template: str, eos_token: str) -> tuple[str, list[str]]:
    """The Go template and stop tokens for ``chat_template`` (``("", [])`` for one we do not translate)."""
    kind = family(chat_template)
    if kind == "chatml":
        return CHATML, ["<|im_end|>", "<|im_start|>"]
    if kind == "llama3":
        return LLAMA3, ["<|eot_id|>", "<|start_header_id|>"]
    if kind == "gemma":
        return GEMMA, ["<end_of_turn>", "<start_of_turn>"]
    if kind == "phi3":
        return PHI3, ["<|end|>", "<|user|>", "<|assistant|>"]
    if kind == "mistral":
        template = (
            '{{ range .Messages }}{{ if eq .Role "user" }}[INST] {{ .Content }} [/INST]'
            '{{ else if eq .Role "assistant" }}{{ .Content }}' + eos_token + "{{ end }}{{ end }}"
        )
        return template, ["[INST]", "[/INST]"]
    if kind == "fallback":
        template = (
            "{{ range .Messages }}<|{{ .Role }}|>\n{{ .Content }}" + eos_token + "\n{{ end }}<|assistant|>\n"
        )
        return template, [eos_token, "<|user|>"]
    return "", []


SYSTEM_BLOCKS = {
    "chatml": re.compile(r"^<\|im_start\|>system\n(.*?)<\|im_end\|>\n", re.S),
    "llama3": re.compile(r"<\|start_header_id\|>system<\|end_header_id\|>\n\n(.*?)<\|eot_id\|>", re.S),
}


def template_system(chat_template: str, rendered: str) -> str:
    """The system prompt a chat template puts in by itself, read from ``rendered`` (the template applied to
    a lone user turn): Qwen2.5's "You are Qwen, created by Alibaba Cloud...", Llama 3.1's knowledge-date
    header. A Go template cannot make it up, so it goes to the Modelfile's ``SYSTEM`` ("" when none)."""
    pattern = SYSTEM_BLOCKS.get(family(chat_template))
    found = pattern.search(rendered) if pattern else None
    return found.group(1) if found else ""


def is_ours(path: object) -> bool:
    """Whether the Modelfile at ``path`` is one this app wrote (a new export may replace it)."""
    try:
        with open(path, encoding="utf-8") as file:  # type: ignore[arg-type]
            return file.readline().rstrip("\n") == MARK
    except (OSError, UnicodeDecodeError):
        return False


def modelfile(
    gguf_name: str, chat_template: str, eos_token: str, system: str = "", derived: Any = None
) -> str:
    """The ``Modelfile`` for ``gguf_name`` (beside it): FROM, TEMPLATE, stop tokens, temperature, system.

    ``derived``: for a template of no family here, the pieces ``template_derive.derive`` read from it (its
    Go template renders what the Jinja template renders); ``None``: no TEMPLATE line.
    """
    template, stops = go_template(chat_template, eos_token)
    if not template and derived is not None:
        template, stops = derived.go(), derived.stops(eos_token)
    lines = [MARK, f"FROM ./{gguf_name}"]
    if template:
        lines.append(f'TEMPLATE """{template}"""')
    lines += [f'PARAMETER stop "{stop}"' for stop in stops]
    lines.append("PARAMETER temperature 0.7")
    if system:
        lines.append(f'SYSTEM """{system}"""')
    return "\n".join(lines) + "\n"


def template_agreement(
    template: str,
    prompts: list[str],
    render: Any,
    run_system: str = "",
    modelfile_system: str = "",
    bos_token: str = "",
) -> tuple[int, int]:
    """How many of ``prompts`` Ollama's ``template`` renders as the model's chat template (``render``, a
    conversation to its text) does, of how many the chat template renders at all.

    Ollama is sent each prompt as a user turn after the Modelfile's ``SYSTEM`` (``modelfile_system``: the
    run's system prompt, else the one the chat template adds by itself); the chat template gets the run's
    own (``run_system``). The BOS token the chat template begins with is llama.cpp's to add. No template
    (``""``) agrees with none: Ollama then sends the bare prompt.
    """
    from desktop.core.results.go_template import render as render_go

    agreeing = total = 0
    for prompt in prompts:
        user = {"role": "user", "content": prompt}
        try:
            expected = render(([{"role": "system", "content": run_system}] if run_system else []) + [user])
        except Exception:  # the chat template refuses it: llama.cpp was not asked it either
            continue
        total += 1
        if not template:
            continue
        asked = ([{"role": "system", "content": modelfile_system}] if modelfile_system else []) + [user]
        try:
            got = render_go(template, asked)
        except ValueError:  # Unsupported, or a string literal Go reads and JSON does not
            continue
        expected = expected[len(bos_token) :] if bos_token and expected.startswith(bos_token) else expected
        agreeing += got == expected
    return agreeing, total
