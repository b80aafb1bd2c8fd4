"""Code a user copies to call a served model: ``curl`` and the official ``openai`` Python client.

Each works as shown against the running server. A key never appears in a snippet: it is read from
the environment variable :data:`~desktop.core.serving.keys.KEY_ENV`, which the user sets once.
"""

from __future__ import annotations

import json
import sys

from desktop.core.serving.keys import KEY_ENV

EXAMPLE = {
    "classification": "The battery lasts all day and the screen is sharp.",
    "seq2seq": "translate English to German: The house is wonderful.",
    "causal-lm": "Write a haiku about the sea.",
    "vision-chat": "What is in this picture?",
}


def snippets(
    base_url: str, name: str, task: str, keyed: bool, chat: bool = True, windows: bool | None = None
) -> dict[str, str]:
    """``{"curl": ..., "python": ...}`` for the model's main route.

    Args:
        base_url: ``http://HOST:PORT/v1``.
        name: The model's name in the API.
        task: ``classification``, ``causal-lm`` or ``seq2seq``.
        keyed: Requests must carry the API key.
        chat: A causal LM trained on chats answers ``/v1/chat/completions``; one trained on plain text
            continues a prompt (``/v1/completions``).
        windows: Write ``curl`` for Windows' Command Prompt (one line, ``curl.exe``, ``%VARIABLE%``);
            default: on Windows.
    """
    if windows is None:
        windows = sys.platform == "win32"
    example = EXAMPLE.get(task, EXAMPLE["causal-lm"])
    if task == "classification":
        route, body = "/classify", {"model": name, "input": [example]}
    elif task == "vision-chat":  # a picture as a data URL (the Python snippet reads a file into one)
        route = "/chat/completions"
        parts = [
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,<the picture, base64>"}},
            {"type": "text", "text": example},
        ]
        body = {"model": name, "messages": [{"role": "user", "content": parts}], "max_tokens": 200}
    elif task == "causal-lm" and chat:
        route = "/chat/completions"
        body = {"model": name, "messages": [{"role": "user", "content": example}], "max_tokens": 200}
    else:
        route, body = "/completions", {"model": name, "prompt": example, "max_tokens": 200}
    return {
        "curl": (_curl_cmd if windows else _curl)(base_url + route, body, keyed),
        "python": _python(base_url, name, task, example, keyed, chat),
    }


def _quoted(value: str) -> str:
    """A Python string literal in double quotes (JSON's escapes are Python's too)."""
    return json.dumps(value, ensure_ascii=False)


def _curl(url: str, body: dict, keyed: bool) -> str:
    data = json.dumps(body, ensure_ascii=False).replace("'", "'\\''")
    lines = [f"curl {url} \\", '  -H "Content-Type: application/json" \\']
    if keyed:
        lines.append(f'  -H "Authorization: Bearer ${KEY_ENV}" \\')
    lines.append(f"  -d '{data}'")
    return "\n".join(lines)


def _curl_cmd(url: str, body: dict, keyed: bool) -> str:
    """The same request for Windows' Command Prompt: its quoting, on one line."""
    data = json.dumps(body, ensure_ascii=False).replace('"', '\\"')
    auth = f' -H "Authorization: Bearer %{KEY_ENV}%"' if keyed else ""
    return f'curl.exe {url} -H "Content-Type: application/json"{auth} -d "{data}"'


def _python(base_url: str, name: str, task: str, example: str, keyed: bool, chat: bool) -> str:
    key = f'os.environ["{KEY_ENV}"]' if keyed else '"not-needed"'
    head = ["import os", ""] if keyed else []
    if task == "classification":
        return "\n".join(
            [
                "import json",
                *(["import os"] if keyed else []),
                "import urllib.request",
                "",
                "request = urllib.request.Request(",
                f'    "{base_url}/classify",',
                f'    data=json.dumps({{"model": "{name}", "input": [{_quoted(example)}]}}).encode(),',
                '    headers={"Content-Type": "application/json"'
                + (f', "Authorization": "Bearer " + os.environ["{KEY_ENV}"]' if keyed else "")
                + "},",
                ")",
                "with urllib.request.urlopen(request) as response:",
                '    print(json.load(response)["data"][0]["label"])',
            ]
        )
    lines = [*head, "from openai import OpenAI", "", f'client = OpenAI(base_url="{base_url}", api_key={key})']
    if task == "vision-chat":
        return "\n".join(
            [
                "import base64",
                *lines,
                'with open("picture.png", "rb") as file:',
                '    url = "data:image/png;base64," + base64.b64encode(file.read()).decode()',
                "reply = client.chat.completions.create(",
                f'    model="{name}",',
                "    messages=[{",
                '        "role": "user",',
                '        "content": [',
                '            {"type": "image_url", "image_url": {"url": url}},',
                f'            {{"type": "text", "text": {_quoted(example)}}},',
                "        ],",
                "    }],",
                "    max_tokens=200,",
                ")",
                "print(reply.choices[0].message.content)",
            ]
        )
    if task == "causal-lm" and chat:
        lines += [
            "stream = client.chat.completions.create(",
            f'    model="{name}",',
            f'    messages=[{{"role": "user", "content": {_quoted(example)}}}],',
            "    max_tokens=200,",
            "    stream=True,",
            ")",
            "for chunk in stream:",
            "    if chunk.choices and chunk.choices[0].delta.content:",
            '        print(chunk.choices[0].delta.content, end="", flush=True)',
            "print()",
        ]
    else:
        lines += [
            f'reply = client.completions.create(model="{name}", prompt={_quoted(example)}, max_tokens=200)',
            "print(reply.choices[0].text)",
        ]
    return "\n".join(lines)
