"""An Ollama ``Modelfile`` beside a GGUF: its chat template in Ollama's Go template language, stop tokens.

Ollama renders prompts with Go templates, not the Jinja templates models carry. For the chat formats our
runs produce and the recommended models use, the template is written here by hand to render exactly
what the Jinja template renders (the tests render both for a two-turn chat with a system prompt):

- ChatML (Qwen): ``<|im_start|>role\\ncontent<|im_end|>\\n``;
- Llama 3: ``<|start_header_id|>role<|end_header_id|>\\n\\ncontent<|eot_id|>``;
- our fallback template (a tokenizer without one): ``<|role|>\\ncontent EOS\\n``.

For any other template the Modelfile has no ``TEMPLATE`` line: Ollama then reads the chat template in
the GGUF's metadata and maps it to one it knows, and the screen says so.
"""

from __future__ import annotations

MARK = "# Written by Finetune Studio for the GGUF file below; a new export replaces it."

# Ollama puts the system prompt (the request's, else the Modelfile's SYSTEM) first in .Messages.
CHATML = (
    "{{ range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n{{ end }}<|im_start|>assistant\n"
)
LLAMA3 = (  # the BOS token is llama.cpp's to add (add_bos_token), not the template's
    "{{ range .Messages }}<|start_header_id|>{{ .Role }}<|end_header_id|>\n\n"
    "{{ .Content }}<|eot_id|>{{ end }}<|start_header_id|>assistant<|end_header_id|>\n\n"
)


def family(chat_template: str) -> str:
    """``chatml``, ``llama3``, ``fallback`` (ours) or ``""`` (one we do not translate)."""
    if "<|im_start|>" in chat_template:
        return "chatml"
    if "<|start_header_id|>" in chat_template:
        return "llama3"
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
    if kind == "fallback":
        template = (
            "{{ range .Messages }}<|{{ .Role }}|>\n{{ .Content }}" + eos_token + "\n{{ end }}<|assistant|>\n"
        )
        return template, [eos_token, "<|user|>"]
    return "", []


def is_ours(path: object) -> bool:
    """Whether the Modelfile at ``path`` is one this app wrote (a new export may replace it)."""
    try:
        with open(path, encoding="utf-8") as file:  # type: ignore[arg-type]
            return file.readline().rstrip("\n") == MARK
    except (OSError, UnicodeDecodeError):
        return False


def modelfile(gguf_name: str, chat_template: str, eos_token: str, system: str = "") -> str:
    """The ``Modelfile`` for ``gguf_name`` (beside it): FROM, TEMPLATE, stop tokens, temperature, system."""
    template, stops = go_template(chat_template, eos_token)
    lines = [MARK, f"FROM ./{gguf_name}"]
    if template:
        lines.append(f'TEMPLATE """{template}"""')
    lines += [f'PARAMETER stop "{stop}"' for stop in stops]
    lines.append("PARAMETER temperature 0.7")
    if system:
        lines.append(f'SYSTEM """{system}"""')
    return "\n".join(lines) + "\n"
