"""Serve, part two (issue 55): tool definitions rendered with a chat template that takes them, calls read
back for the families that define a format, and a conversation with earlier calls and their results."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from desktop.core.serving.api import build_app
from desktop.core.serving.engine import Limits, Outcome
from desktop.core.serving.tool_calls import parse

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city now",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
HERMES_JINJA = (  # the Hermes / Qwen 2.5 layout, as many fine-tunes carry it
    "{%- if tools %}<|im_start|>system\n# Tools\n<tools>{% for t in tools %}{{ t | tojson }}{% endfor %}"
    "</tools><|im_end|>\n{%- endif %}"
    "{%- for m in messages %}"
    "{%- if m.role == 'assistant' and m.tool_calls %}<|im_start|>assistant\n{% for c in m.tool_calls %}"
    "<tool_call>{{ {'name': c.function.name, 'arguments': c.function.arguments} | tojson }}</tool_call>"
    "{% endfor %}<|im_end|>\n"
    "{%- elif m.role == 'tool' %}<|im_start|>user\n<tool_response>{{ m.content }}</tool_response><|im_end|>\n"
    "{%- else %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{%- endif %}"
    "{%- endfor %}{%- if add_generation_prompt %}<|im_start|>assistant\n{%- endif %}"
)


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "杭州"}}\n</tool_call>', None),
        (
            'Let me look. <tool_call>{"name": "get_weather", "arguments": {"city": "杭州"}}</tool_call>',
            "Let me look.",
        ),
        ('[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "杭州"}}]', None),
        ('<|python_tag|>{"name": "get_weather", "parameters": {"city": "杭州"}}', None),
    ],
    ids=["hermes", "hermes-with-text", "mistral", "llama-3.1"],
)
def test_each_familys_call_is_read_back_as_openais(text: str, content: str | None) -> None:
    parsed = parse(text, {"get_weather"})
    (call,) = parsed.calls
    assert call["function"] == {"name": "get_weather", "arguments": '{"city": "杭州"}'}
    assert call["type"] == "function" and call["id"].startswith("call_")
    assert (parsed.content or None) == content


def test_a_call_to_a_tool_not_offered_or_no_call_stays_text() -> None:
    text = '<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>'
    assert parse(text, {"get_weather"}).calls == [] and parse(text, {"get_weather"}).content == text
    assert parse('{"name": "get_weather"} is a JSON object', {"get_weather"}).calls == []


class _Engine:
    """The model's side, faked: it takes tools and answers with ``answer``; what it was asked is kept."""

    info = SimpleNamespace(task="causal-lm", chat=True)
    limits, context = Limits(), 2048

    def __init__(self, answer: str, takes_tools: bool = True) -> None:
        self.answer, self._takes, self.asked = answer, takes_tools, []

    def takes_tools(self) -> bool:
        return self._takes

    def encode(self, messages: object, chat: bool, tools: object = ()) -> list[int]:
        self.asked.append((messages, tools))
        return [1, 2, 3]

    def submit(self, job):
        job.report(("done", Outcome(self.answer, 3, 9, "stop")))
        return job


def _post(engine: _Engine, body: dict):
    from starlette.testclient import TestClient

    client = TestClient(build_app(engine, "tiny-chat"), base_url="http://127.0.0.1:8000")
    return client.post("/v1/chat/completions", json=body)


CONVERSATION = [
    {"role": "user", "content": "Weather in Hangzhou?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "杭州"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "Sunny, 21 °C"},
    {"role": "user", "content": "And tomorrow?"},
]


def test_a_call_is_answered_as_openais_tool_calls_whole_or_streamed() -> None:
    engine = _Engine('<tool_call>{"name": "get_weather", "arguments": {"city": "杭州"}}</tool_call>')

    answer = _post(engine, {"messages": CONVERSATION, "tools": [WEATHER]})

    assert answer.status_code == 200, answer.text
    choice = answer.json()["choices"][0]
    assert choice["finish_reason"] == "tool_calls" and choice["message"]["content"] is None
    assert choice["message"]["tool_calls"][0]["function"] == {
        "name": "get_weather",
        "arguments": '{"city": "杭州"}',
    }
    messages, tools = engine.asked[0]
    assert tools == [WEATHER]  # the definitions go to the template as they came
    assert messages[1]["tool_calls"][0]["function"]["arguments"] == {"city": "杭州"}  # as templates read it
    assert messages[2] == {"role": "tool", "content": "Sunny, 21 °C", "tool_call_id": "call_1"}

    streamed = _post(engine, {"messages": CONVERSATION, "tools": [WEATHER], "stream": True})
    chunks = [json.loads(line[6:]) for line in streamed.text.splitlines() if line.startswith("data: {")]
    deltas = [c["choices"][0] for c in chunks]
    assert deltas[1]["delta"]["tool_calls"][0]["index"] == 0 and deltas[-1]["finish_reason"] == "tool_calls"
    assert streamed.text.rstrip().endswith("data: [DONE]")


def test_tools_for_a_template_without_them_is_a_400_saying_so() -> None:
    refused = _post(_Engine("Hi", takes_tools=False), {"messages": CONVERSATION[:1], "tools": [WEATHER]})
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "tools_not_supported"
    answered = _post(
        _Engine("Hi", takes_tools=False),
        {"messages": CONVERSATION[:1], "tools": [WEATHER], "tool_choice": "none"},
    )
    assert answered.status_code == 200 and answered.json()["choices"][0]["message"]["content"] == "Hi"


@pytest.mark.slow
def test_the_tools_are_rendered_by_the_models_own_template(tiny_chat_models: dict, tmp_path) -> None:
    """Through a real server: the prompt the model reads is its template's rendering with the tools."""
    import shutil

    from transformers import AutoTokenizer

    from desktop.core.serving.server import LocalServer, ServeOptions

    folder = tmp_path / "hermes"
    shutil.copytree(tiny_chat_models["llama"], folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.chat_template = HERMES_JINJA
    tokenizer.save_pretrained(folder)
    expected = tokenizer.apply_chat_template(
        [
            m
            if m["role"] != "assistant"
            else {
                **m,
                "tool_calls": [
                    {**m["tool_calls"][0], "function": {"name": "get_weather", "arguments": {"city": "杭州"}}}
                ],
            }
            for m in CONVERSATION
        ],
        tools=[WEATHER],
        add_generation_prompt=True,
        tokenize=True,
        return_dict=True,
    )["input_ids"]
    server = LocalServer(folder, ServeOptions(port=0, name="hermes")).open().start()
    try:
        import openai

        client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0, timeout=60)
        answer = client.chat.completions.create(
            model="hermes", messages=CONVERSATION, tools=[WEATHER], max_tokens=3
        )
    finally:
        server.stop()
    assert answer.usage.prompt_tokens == len(expected)
    assert answer.choices[0].finish_reason in ("stop", "length")  # a random model calls nothing


def test_mistrals_call_is_read_with_its_special_token_and_odd_calls_never_fail_the_answer() -> None:
    """[TOOL_CALLS] is a special token in Mistral's tokenizers: the text a client reads has it stripped."""
    engine = _Engine(' [{"name": "get_weather", "arguments": {"city": "杭州"}}]')
    engine.tokenizer = SimpleNamespace(  # what the answer's tokens read with their special tokens kept
        decode=lambda ids, skip_special_tokens: (
            '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "杭州"}}]'
        )
    )
    engine.submit = lambda job: (
        job.report(("done", Outcome(engine.answer, 3, 9, "stop", None, [7, 8]))),
        job,
    )[1]

    answer = _post(engine, {"messages": CONVERSATION[:1], "tools": [WEATHER]})

    assert answer.json()["choices"][0]["finish_reason"] == "tool_calls"
    odd = '<tool_call>{"name": ["get_weather"]}</tool_call> and <tool_call>not json</tool_call>'
    assert parse(odd, {"get_weather"}).calls == []  # a name that is no string: text, not a 500
    mixed = parse(
        '<tool_call>{"name": "rm"}</tool_call><tool_call>{"name": "get_weather"}</tool_call>', {"get_weather"}
    )
    assert (
        len(mixed.calls) == 1 and mixed.content == '<tool_call>{"name": "rm"}</tool_call>'
    )  # kept as written


def test_a_streamed_answer_that_is_only_a_call_keeps_its_log_probabilities() -> None:
    class Scored(_Engine):
        def token_text(self, token: int) -> str:
            return f"<{token}>"

        def submit(self, job):
            tokens = [{"id": i, "logprob": -0.5, "top": [(i, -0.5)]} for i in (7, 8)]
            job.report(("done", Outcome(self.answer, 3, 2, "stop", logprobs=tokens)))
            return job

    engine = Scored('<tool_call>{"name": "get_weather", "arguments": {"city": "杭州"}}</tool_call>')
    body = {"messages": CONVERSATION, "tools": [WEATHER], "logprobs": True, "top_logprobs": 1, "stream": True}
    streamed = _post(engine, body)
    chunks = [json.loads(line[6:]) for line in streamed.text.splitlines() if line.startswith("data: {")]
    [calls] = [c["choices"][0] for c in chunks if c["choices"] and "tool_calls" in c["choices"][0]["delta"]]
    assert [t["token"] for t in calls["logprobs"]["content"]] == ["<7>", "<8>"]
