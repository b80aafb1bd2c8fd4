"""Serve: a tiny model behind the OpenAI-compatible endpoint, called with the official ``openai`` client."""

from __future__ import annotations

import itertools
import json
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop.core.serving.engine import Limits
from desktop.core.serving.server import LocalServer, PortInUse, ServeOptions

pytestmark = pytest.mark.slow
KEY = "fts-test-key"


def _greedy(folder: Path, messages: list[dict[str, str]] | str, max_new_tokens: int) -> str:
    """What plain transformers answers with the same greedy settings."""
    import torch
    from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    if isinstance(messages, str):
        seq2seq = "T5" in json.loads((folder / "config.json").read_text())["architectures"][0]
        model = (AutoModelForSeq2SeqLM if seq2seq else AutoModelForCausalLM).from_pretrained(folder)
        ids = tokenizer(messages, return_tensors="pt")["input_ids"]
    else:
        model = AutoModelForCausalLM.from_pretrained(folder)
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        ids = tokenizer(text, add_special_tokens=False, return_tensors="pt")["input_ids"]
        seq2seq = False
    with torch.no_grad():
        out = model.generate(
            ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=max_new_tokens,
            do_sample=False,
            pad_token_id=tokenizer.pad_token_id or tokenizer.eos_token_id,
        )
    new = out[0] if seq2seq else out[0, ids.shape[1] :]
    return tokenizer.decode(new, skip_special_tokens=True)


@pytest.fixture
def served(tiny_chat_models: dict[str, Path]) -> Iterator[LocalServer]:
    server = LocalServer(tiny_chat_models["llama"], ServeOptions(port=0, name="tiny-chat")).open().start()
    yield server
    server.stop()


def _client(server: LocalServer, key: str = "not-needed") -> Any:
    import openai

    return openai.OpenAI(base_url=server.base_url, api_key=key, max_retries=0, timeout=60)


def _post(server: LocalServer, route: str, body: bytes, **headers: str) -> tuple[int, dict]:
    request = urllib.request.Request(
        server.base_url + route, data=body, headers={"Content-Type": "application/json", **headers}
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def test_the_openai_client_gets_the_same_answer_as_generate_streamed_or_not(
    served: LocalServer, tiny_chat_models: dict[str, Path]
) -> None:
    client = _client(served)
    messages = [
        {"role": "system", "content": "You answer briefly."},
        {"role": "user", "content": "Name a colour."},
    ]
    expected = _greedy(tiny_chat_models["llama"], messages, 12)

    whole = client.chat.completions.create(model="tiny-chat", messages=messages, max_tokens=12, temperature=0)
    stream = client.chat.completions.create(
        model="tiny-chat", messages=messages, max_tokens=12, temperature=0, stream=True
    )
    pieces = [chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices]

    assert whole.choices[0].message.content == expected
    assert "".join(pieces) == expected and len([p for p in pieces if p]) > 1  # it came piece by piece
    assert whole.usage.completion_tokens <= 12 and whole.usage.prompt_tokens > 0
    assert [m.id for m in client.models.list()] == ["tiny-chat"]
    completion = client.completions.create(
        model="tiny-chat", prompt="I like tea", max_tokens=8, temperature=0
    )
    assert completion.choices[0].text == _greedy(tiny_chat_models["llama"], "I like tea", 8)


def test_four_clients_at_once_each_get_their_own_answer(
    served: LocalServer, tiny_chat_models: dict[str, Path]
) -> None:
    prompts = ["Name a colour.", "Name a fruit.", "Say hello.", "Count to three."]
    expected = {p: _greedy(tiny_chat_models["llama"], [{"role": "user", "content": p}], 10) for p in prompts}
    got: dict[str, str] = {}
    start = threading.Barrier(len(prompts))

    def ask(prompt: str) -> None:
        client = _client(served)
        start.wait()
        stream = client.chat.completions.create(
            model="tiny-chat",
            messages=[{"role": "user", "content": prompt}],
            max_tokens=10,
            temperature=0,
            stream=True,
        )
        got[prompt] = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)

    threads = [threading.Thread(target=ask, args=(p,)) for p in prompts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert got == expected  # each as generate gives it alone
    assert len(set(expected.values())) > 1  # different prompts, different answers: a mix-up would show
    assert served.engine.largest >= 2  # those that waited were answered together, in one generate


def test_bad_requests_get_a_clear_4xx_and_the_server_keeps_serving(served: LocalServer) -> None:
    user = [{"role": "user", "content": "Hi"}]
    status, body = _post(served, "/chat/completions", b'{"messages": [')
    assert status == 400 and "not valid JSON" in body["error"]["message"]
    status, body = _post(
        served, "/chat/completions", json.dumps({"messages": user, "max_tokens": 10**9}).encode()
    )
    assert status == 400 and "4096" in body["error"]["message"] and body["error"]["param"] == "max_tokens"
    status, body = _post(served, "/chat/completions", json.dumps({"messages": user, "max_token": 5}).encode())
    assert status == 400 and "Unknown field 'max_token'" in body["error"]["message"]
    status, body = _post(served, "/chat/completions", b'{"messages": "' + b"x" * (10 << 20) + b'"}')
    assert status == 413 and "larger than this server accepts" in body["error"]["message"]
    status, body = _post(
        served, "/chat/completions", json.dumps({"model": "gpt-4o", "messages": user}).encode()
    )
    assert status == 404 and "tiny-chat" in body["error"]["message"]
    status, body = _post(served, "/classify", json.dumps({"input": "Hi"}).encode())
    assert status == 400 and "/v1/chat/completions" in body["error"]["message"]
    long_prompt = [{"role": "user", "content": "tea " * 3000}]  # past the model's 2048 positions
    status, body = _post(served, "/chat/completions", json.dumps({"messages": long_prompt}).encode())
    assert status == 400 and body["error"]["code"] == "context_length_exceeded"

    answer = _client(served).chat.completions.create(model="tiny-chat", messages=user, max_tokens=3)
    assert answer.choices[0].message.content is not None


def test_a_client_that_hangs_up_mid_stream_stops_its_generation(served: LocalServer) -> None:
    never_ends = served.engine.playground.model.generation_config  # left alone, it would make 2000 tokens
    never_ends.suppress_tokens = [served.engine.playground.tokenizer.eos_token_id]
    body = {
        "messages": [{"role": "user", "content": "Tell a long story."}],
        "max_tokens": 2000,
        "stream": True,
    }
    request = urllib.request.Request(
        served.base_url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    response = urllib.request.urlopen(request, timeout=60)
    for _ in range(4):  # the role chunk and a few pieces of text
        assert response.readline().startswith(b"data: ") and response.readline() == b"\n"
    response.close()

    answer = _client(served).chat.completions.create(
        model="tiny-chat", messages=[{"role": "user", "content": "Hi"}], max_tokens=2
    )

    assert answer.choices[0].message.content is not None
    _, outcome = served.engine.answered[0]
    assert outcome.finish_reason == "cancelled" and outcome.completion_tokens < 2000


def test_a_key_is_required_when_one_is_set(tiny_chat_models: dict[str, Path]) -> None:
    server = LocalServer(tiny_chat_models["llama"], ServeOptions(port=0, name="m", key=KEY)).open().start()
    try:
        user = json.dumps({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2}).encode()
        assert _post(server, "/chat/completions", user)[0] == 401
        status, body = _post(server, "/chat/completions", user, Authorization="Bearer wrong")
        assert status == 401 and "not the server's" in body["error"]["message"]
        assert _post(server, "/chat/completions", user, Authorization=f"Bearer {KEY}")[0] == 200
        assert [m.id for m in _client(server, KEY).models.list()] == ["m"]
    finally:
        server.stop()


def test_another_host_without_a_key_is_refused(tiny_chat_models: dict[str, Path]) -> None:
    from desktop.core.system.errors import InputError

    with pytest.raises(InputError, match="needs an API key"):
        LocalServer(tiny_chat_models["llama"], ServeOptions(host="0.0.0.0", port=0))


def test_a_port_in_use_is_one_sentence_naming_it(tiny_chat_models: dict[str, Path]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = LocalServer(tiny_chat_models["llama"], ServeOptions(port=port))
        with pytest.raises(PortInUse) as caught:
            server.open()
    assert f"Port {port} on 127.0.0.1 is already in use" in caught.value.message
    assert server.engine.playground.model is None  # refused before the model was loaded


def test_stop_frees_the_model_and_the_port(tiny_chat_models: dict[str, Path]) -> None:
    server = LocalServer(tiny_chat_models["llama"], ServeOptions(port=0)).open().start()
    port = server.port
    server.stop()
    assert server.engine.playground.model is None
    with socket.socket() as again:
        again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        again.bind(("127.0.0.1", port))  # the port is free for the next server


def test_a_classifier_answers_classify_with_every_label(tiny_bert: Path, tmp_path: Path) -> None:
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    folder = tmp_path / "classifier"
    labels = {0: "negative", 1: "positive"}
    model = AutoModelForSequenceClassification.from_pretrained(
        tiny_bert, num_labels=2, id2label=labels, label2id={v: k for k, v in labels.items()}
    )
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(tiny_bert).save_pretrained(folder)
    server = LocalServer(folder, ServeOptions(port=0, name="reviews")).open().start()
    try:
        status, body = _post(server, "/classify", json.dumps({"input": ["Great phone.", "Awful."]}).encode())
        assert status == 200 and [row["index"] for row in body["data"]] == [0, 1]
        for row in body["data"]:
            assert {s["label"] for s in row["scores"]} == {"negative", "positive"}
            assert sum(s["score"] for s in row["scores"]) == pytest.approx(1.0, abs=1e-5)
            assert row["label"] == row["scores"][0]["label"]
        status, body = _post(server, "/chat/completions", b'{"messages": [{"role": "user", "content": "x"}]}')
        assert status == 400 and "/v1/classify" in body["error"]["message"]
        status, body = _post(server, "/classify", json.dumps({"input": "great " * 5000}).encode())
        assert status == 200 and body["data"][0]["label"]  # cut at the model's 512 positions, as trained
        # Its encoder's embeddings, through the openai client (which asks for base64 by default).
        embedded = _client(server).embeddings.create(model="reviews", input=["Great phone.", "Awful."])
        vectors = [row.embedding for row in embedded.data]
        assert len(vectors) == 2 and len(vectors[0]) == model.config.hidden_size
        assert sum(v * v for v in vectors[0]) == pytest.approx(1.0, abs=1e-5)
        assert vectors[0] == pytest.approx(_mean_pooled(folder, "Great phone."), abs=1e-5)
        assert embedded.usage.prompt_tokens > 0
        status, body = _post(server, "/embeddings", json.dumps({"input": "x", "dimensions": 3}).encode())
        assert status == 400 and body["error"]["param"] == "dimensions"
    finally:
        server.stop()


def _mean_pooled(folder: Path, text: str) -> list[float]:
    """The encoder's last hidden states averaged over the text's tokens, to length 1."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(folder)
    inputs = AutoTokenizer.from_pretrained(folder)(text, return_tensors="pt")
    with torch.no_grad():
        states = model(**inputs, output_hidden_states=True).hidden_states[-1][0]
    return torch.nn.functional.normalize(states.mean(dim=0), dim=0).tolist()


def test_a_sequence_to_sequence_model_answers_completions(tiny_t5: Path) -> None:
    server = LocalServer(tiny_t5, ServeOptions(port=0, name="t5")).open().start()
    try:
        reply = _client(server).completions.create(
            model="t5", prompt="translate: the house", max_tokens=8, temperature=0
        )
        assert reply.choices[0].text == _greedy(tiny_t5, "translate: the house", 8)
    finally:
        server.stop()


def test_a_full_queue_says_busy(tiny_chat_models: dict[str, Path]) -> None:
    options = ServeOptions(port=0, name="m", limits=Limits(queue=0))
    server = LocalServer(tiny_chat_models["llama"], options).open().start()
    try:
        status, body = _post(server, "/completions", json.dumps({"prompt": "Hi", "max_tokens": 2}).encode())
        assert status == 503 and "busy" in body["error"]["message"]
    finally:
        server.stop()
    # A queue smaller than n: the n answers are asked for one after another, not refused as busy.
    options = ServeOptions(port=0, name="m", limits=Limits(queue=1))
    server = LocalServer(tiny_chat_models["llama"], options).open().start()
    try:
        body_n = {"prompt": "Hi", "max_tokens": 2, "n": 3}
        status, body = _post(server, "/completions", json.dumps(body_n).encode())
        assert status == 200 and [c["index"] for c in body["choices"]] == [0, 1, 2]
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("pieces", "stops", "sent", "text"),
    [
        (["Hello", "Hello wor", "Hello world. Bye"], [". "], ["Hello", " wor", "ld"], "Hello world"),
        (["ab", "abc"], ["cd"], ["ab", "c"], "abc"),  # "c" held back until the answer ended
        (["Hi", "Hi\ufffd", "Hi!"], [], ["Hi", "!"], "Hi!"),  # half a character waits for its rest
    ],
)
def test_stop_strings_cut_the_answer_and_are_never_sent(
    pieces: list[str], stops: list[str], sent: list[str], text: str
) -> None:
    from desktop.core.serving.engine import StopStrings

    got: list[str] = []
    stream = StopStrings(stops, got.append)
    for decoded in pieces:
        stream.feed(decoded)
    stream.finish()
    assert got == sent and stream.text == text


@pytest.mark.parametrize("fixture", ["tiny_gpt2", "tiny_t5"])
def test_the_answer_read_token_by_token_is_the_whole_answer_decoded(request, fixture: str) -> None:
    from transformers import AutoTokenizer

    from desktop.core.serving.engine import Detokenizer

    tokenizer = AutoTokenizer.from_pretrained(request.getfixturevalue(fixture))
    ids = tokenizer("今天天气很好，我们去公园。 The house is wonderful!", add_special_tokens=False)[
        "input_ids"
    ]
    reader = Detokenizer(tokenizer)
    texts = [reader.add(token) for token in ids]

    assert reader.rest() == tokenizer.decode(ids, skip_special_tokens=True)
    assert all("\ufffd" not in text for text in texts)  # never half a character
    assert all(a == b[: len(a)] for a, b in itertools.pairwise(texts))  # only ever grows


def test_a_gpu_out_of_memory_fails_that_answer_only(served: LocalServer, monkeypatch) -> None:
    class OutOfMemoryError(RuntimeError):  # what torch.cuda raises
        pass

    model = served.engine.playground.model
    generate = model.generate

    def too_big(*args: Any, **kwargs: Any) -> Any:
        monkeypatch.setattr(model, "generate", generate)  # the next answer fits
        raise OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(model, "generate", too_big)
    user = json.dumps({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2}).encode()
    status, body = _post(served, "/chat/completions", user)
    assert status == 503 and "ran out of memory" in body["error"]["message"]
    assert _post(served, "/chat/completions", user)[0] == 200


def _until(condition: Any, timeout: float = 30) -> None:
    """Wait for ``condition()`` (polled) to hold, as qtbot.waitUntil does for the window."""
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _never_ending(server: LocalServer) -> None:
    """Left alone, the model writes every token asked for (every token that ends an answer is suppressed:
    the tokenizer's end of text and the generation config's, a chat template's end of turn among them;
    with only the first, random weights wrote the end of turn now and then and the answer ended)."""
    model, tokenizer = server.engine.playground.model, server.engine.playground.tokenizer
    ends = model.generation_config.eos_token_id
    ends = set(ends if isinstance(ends, list) else [] if ends is None else [ends])
    model.generation_config.suppress_tokens = sorted(ends | {tokenizer.eos_token_id})


def test_a_waiting_client_that_hangs_up_stops_its_whole_answer(served: LocalServer) -> None:
    _never_ending(served)
    body = json.dumps({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2000}).encode()
    with socket.create_connection(("127.0.0.1", served.port)) as raw:
        raw.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        _until(lambda: served.engine.answering)  # answering, not yet done
    _until(lambda: len(served.engine.answered) == 1)

    _, outcome = served.engine.answered[0]
    assert outcome.finish_reason == "cancelled" and outcome.completion_tokens < 2000


def test_stopping_the_server_ends_the_running_answer_and_refuses_the_waiting_ones(
    served: LocalServer,
) -> None:
    _never_ending(served)
    long = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2000, "stream": True}
    request = urllib.request.Request(
        served.base_url + "/chat/completions",
        data=json.dumps(long).encode(),
        headers={"Content-Type": "application/json"},
    )
    stream = urllib.request.urlopen(request, timeout=60)
    assert stream.readline().startswith(b"data: ")  # it is answering
    waiting: list[tuple[int, dict]] = []
    queued = threading.Thread(
        target=lambda: waiting.append(_post(served, "/completions", body)),
    )
    body = b'{"prompt": "Hi", "max_tokens": 5, "seed": 7}'  # seeded: it waits, it never joins the answer
    queued.start()
    _until(lambda: served.engine.waiting == 1)

    served.stop()
    queued.join(timeout=30)
    rest = stream.read().decode()

    assert waiting[0][0] == 503 and waiting[0][1]["error"]["code"] == "server_stopping"
    assert '"code": "server_stopping"' in rest and rest.rstrip().endswith("data: [DONE]")
    assert served.engine.playground.model is None


def test_what_clients_send_by_habit_is_read_and_what_cannot_be_done_is_named(served: LocalServer) -> None:
    user = [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]
    habits = {
        "messages": user, "max_tokens": 2, "temperature": None, "top_p": None, "n": 1, "logprobs": False,
        "presence_penalty": 0, "logit_bias": {}, "response_format": {"type": "text"}, "tools": [],
        "tool_choice": "none", "store": False, "stream": False, "user": "me", "seed": None,
    }  # fmt: skip
    assert _post(served, "/chat/completions", json.dumps(habits).encode())[0] == 200
    for extra, field in [
        ({"n": 5}, "n"),
        ({"tools": [{"type": "function"}]}, "tools.0.function"),  # a tool without its function
        ({"stop": list("abcdefghijklmnopq")}, "stop"),  # 17: more than any client sends
    ]:
        status, body = _post(served, "/chat/completions", json.dumps({"messages": user, **extra}).encode())
        assert status == 400 and body["error"]["param"] == field, body
    status, body = _post(served, "/completions", b'{"prompt": "", "max_tokens": 5}')
    assert status == 400 and "empty" in body["error"]["message"]
    status, body = _post(served, "/completions", b"")
    assert status == 400 and body["error"]["message"] == "The request body is empty: send a JSON object."
    image = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]
    status, body = _post(served, "/chat/completions", json.dumps({"messages": image}).encode())
    assert status == 400 and "reads text only" in body["error"]["message"]


def _reference(
    folder: Path, messages: list[dict[str, str]], tokens: int, seed: int | None, **args: Any
) -> str:
    """What plain transformers answers with the same settings (and seed)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder)
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    ids = tokenizer(text, add_special_tokens=False, return_tensors="pt")["input_ids"]
    if seed is not None:
        torch.manual_seed(seed)
    with torch.no_grad():
        out = model.generate(
            ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=tokens,
            pad_token_id=tokenizer.pad_token_id or tokenizer.eos_token_id,
            **args,
        )
    return tokenizer.decode(out[0, ids.shape[1] :], skip_special_tokens=True)


class _FrequencyPenalty:
    """OpenAI's frequency penalty written out plainly, as the reference for the server's."""

    def __init__(self, prompt_length: int, penalty: float) -> None:
        self.prompt_length, self.penalty = prompt_length, penalty

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        scores = scores.clone()
        for token in input_ids[0, self.prompt_length :].tolist():
            scores[0, token] -= self.penalty
        return scores


def test_each_sampling_field_a_client_sends_changes_the_answer_as_generate_does(
    served: LocalServer, tiny_chat_models: dict[str, Path]
) -> None:
    """top_k, min_p, repetition_penalty and frequency_penalty were refused or unknown: a front end that
    always sends one never worked."""
    from transformers import AutoTokenizer, LogitsProcessorList

    folder = tiny_chat_models["llama"]
    messages = [{"role": "user", "content": "Tell me about tea."}]
    tokenizer = AutoTokenizer.from_pretrained(folder)
    prompt = len(
        tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True, return_dict=True)[
            "input_ids"
        ]
    )
    greedy, sampled = {"do_sample": False}, {"do_sample": True, "temperature": 1.0, "top_p": 1.0}
    penalty = LogitsProcessorList([_FrequencyPenalty(prompt, 1.5)])
    cases = [
        ({"temperature": 0, "repetition_penalty": 1.8}, None, {**greedy, "repetition_penalty": 1.8}),
        ({"temperature": 1.0, "top_k": 5, "seed": 7}, 7, {**sampled, "top_k": 5}),
        ({"temperature": 1.0, "min_p": 0.2, "seed": 7}, 7, {**sampled, "min_p": 0.2}),
        ({"temperature": 0, "frequency_penalty": 1.5}, None, {**greedy, "logits_processor": penalty}),
    ]
    plain = _reference(folder, messages, 24, None, do_sample=False)
    for fields, seed, args in cases:
        answer = _client(served).chat.completions.create(
            model="tiny-chat", messages=messages, max_tokens=24, extra_body=fields
        )
        # The server keeps back half a character at the end of a cut answer; the rest is the same.
        expected = _reference(folder, messages, 24, seed, **args).rstrip("\ufffd")
        assert answer.choices[0].message.content.rstrip("\ufffd") == expected, fields
        if seed is None:
            assert expected != plain, fields  # the field changed the answer: the test can tell


def test_several_answers_and_log_probabilities_are_given_as_openai_gives_them(
    served: LocalServer, tiny_chat_models: dict[str, Path]
) -> None:
    """'n' and 'logprobs' were refused: clients that rank answers or show confidence never worked."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    client = _client(served)
    messages = [{"role": "user", "content": "Tell me about tea."}]
    three = client.chat.completions.create(
        model="tiny-chat", messages=messages, max_tokens=8, n=3, temperature=1.0, seed=7
    )
    assert [c.index for c in three.choices] == [0, 1, 2]
    assert len({c.message.content for c in three.choices}) > 1  # seeded apart, not three copies
    assert three.usage.completion_tokens == 24
    unseeded = client.chat.completions.create(
        model="tiny-chat", messages=messages, max_tokens=20, n=3, temperature=1.0
    )
    assert len(unseeded.choices) == 3 and served.engine.largest >= 3  # made together, in one batch

    scored = client.chat.completions.create(
        model="tiny-chat", messages=messages, max_tokens=8, temperature=0, logprobs=True, top_logprobs=3
    )
    tokens = scored.choices[0].logprobs.content
    assert len(tokens) == 8 and all(len(t.top_logprobs) == 3 for t in tokens)
    assert all(t.logprob == t.top_logprobs[0].logprob for t in tokens)  # greedy: the likeliest each time
    # The log-probabilities are the model's own: one forward pass over prompt and answer says the same.
    folder = tiny_chat_models["llama"]
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder)
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    prompt = tokenizer(text, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        ids = list(prompt)
        expected = []
        for _ in range(8):
            row = torch.log_softmax(model(torch.tensor([ids])).logits[0, -1].float(), dim=-1)
            token = int(row.argmax())
            expected.append(float(row[token]))
            ids.append(token)
    assert [t.logprob for t in tokens] == pytest.approx(expected, abs=1e-4)

    status, body = _post(
        served, "/completions", json.dumps({"prompt": "Tea is", "max_tokens": 4, "logprobs": 2}).encode()
    )
    logprobs = body["choices"][0]["logprobs"]
    assert status == 200 and len(logprobs["tokens"]) == len(logprobs["token_logprobs"]) == 4
    # Keyed by text, as OpenAI's are: two tokens that read the same (half characters) make one entry.
    assert all(1 <= len(top) <= 2 for top in logprobs["top_logprobs"]) and logprobs["text_offset"][0] == 0

    # Streamed: the same answers, each as the chunks of its index, with its log-probabilities.
    chunks = list(
        client.chat.completions.create(
            model="tiny-chat", messages=messages, max_tokens=8, n=3, temperature=1.0, seed=7, stream=True,
            logprobs=True, top_logprobs=3, stream_options={"include_usage": True},
        )
    )  # fmt: skip
    texts: dict[int, str] = {}
    streamed_scores: dict[int, list] = {}
    for chunk in chunks:
        for choice in chunk.choices:
            texts[choice.index] = texts.get(choice.index, "") + (choice.delta.content or "")
            if choice.logprobs is not None:
                streamed_scores.setdefault(choice.index, []).extend(choice.logprobs.content)
    assert texts == {c.index: c.message.content for c in three.choices}
    assert all(len(streamed_scores[i]) == 8 for i in range(3)) and chunks[-1].usage.completion_tokens == 24
    asked = {"model": "tiny-chat", "prompt": "Tea is", "max_tokens": 4, "logprobs": 2, "temperature": 0}
    whole = client.completions.create(**asked).choices[0]
    pieces = [c.choices[0] for c in client.completions.create(**asked, stream=True) if c.choices]
    assert "".join(p.text for p in pieces) == whole.text
    assert pieces[0].logprobs.tokens == whole.logprobs.tokens and len(whole.logprobs.tokens) == 4


@pytest.mark.parametrize("front_end", ["open_webui", "continue"])
def test_the_requests_popular_front_ends_send_are_answered(
    front_end: str, tiny_chat_models: dict[str, Path]
) -> None:
    """Recorded request shapes (tests/fixtures/frontends): each is answered, streamed, with a key."""
    fixture = json.loads(
        (Path(__file__).parents[1] / "fixtures" / "frontends" / f"{front_end}.json").read_text()
    )
    server = (
        LocalServer(tiny_chat_models["llama"], ServeOptions(port=0, name="tiny-chat", key="KEY"))
        .open()
        .start()
    )
    try:
        request = urllib.request.Request(
            server.base_url + "/chat/completions",
            data=json.dumps(fixture["body"]).encode(),
            headers=fixture["headers"],
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            assert response.status == 200 and response.headers["Content-Type"].startswith("text/event-stream")
            events = [line[6:] for line in response.read().decode().splitlines() if line.startswith("data: ")]
    finally:
        server.stop()
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert not [c for c in chunks if "error" in c]
    assert chunks[-1 if front_end == "continue" else -2]["choices"][0]["finish_reason"] in ("stop", "length")
    if front_end == "open_webui":
        assert chunks[-1]["usage"]["completion_tokens"] >= 1  # stream_options.include_usage


def test_requests_answered_together_keep_their_own_limits_stops_and_clients(served: LocalServer) -> None:
    """Batched: each row stops at its own token limit and stop string, a hang-up ends its row only, and
    every answer is the one its request gets alone."""
    from desktop.core.serving.engine import Job, Sampling

    engine = served.engine
    prompts = [engine.encode([{"role": "user", "content": p}], True) for p in ("Hi", "Tea?", "Name a fruit.")]

    def submit(
        ids: list[int], sampling: Sampling, hang_up: bool = False
    ) -> tuple[Job, threading.Event, list]:
        """A job; with ``hang_up``, its client goes away at the first piece of its answer."""
        done, got = threading.Event(), []

        def report(event: tuple) -> None:
            if event[0] == "text" and hang_up:
                job.cancel()
            if event[0] in ("done", "failed"):
                got.append(event[1])
                done.set()

        job = Job("generate", report, ids=list(ids), sampling=sampling)
        return engine.submit(job), done, got

    settings = [
        Sampling(12, temperature=0),
        Sampling(4, temperature=0),
        Sampling(24, temperature=0, stop=("e",)),
    ]
    alone = []
    for ids, sampling in zip(prompts, settings, strict=True):
        _, done, got = submit(ids, sampling)
        assert done.wait(60)
        alone.append(got[0])
    busy, busy_done, _ = submit(prompts[0], Sampling(400, temperature=0))  # the model is busy with this one
    _until(lambda: engine.answering)
    waiting = [submit(ids, sampling) for ids, sampling in zip(prompts, settings, strict=True)]
    hung_up = submit(prompts[1], Sampling(200, temperature=0), hang_up=True)
    busy.cancel()
    assert all(done.wait(60) for _, done, _ in waiting) and hung_up[1].wait(60) and busy_done.wait(60)

    assert engine.largest >= 4  # the four that waited were answered together
    together = [got[0] for _, _, got in waiting]
    assert [o.text for o in together] == [o.text for o in alone]
    assert [o.finish_reason for o in together] == [o.finish_reason for o in alone]
    assert together[1].completion_tokens == 4 and together[1].finish_reason == "length"
    assert "e" not in together[2].text
    assert hung_up[2][0].finish_reason == "cancelled" and hung_up[2][0].completion_tokens < 200


def test_a_request_that_comes_mid_answer_joins_it_and_both_answer_as_alone(served: LocalServer) -> None:
    """A newcomer does not wait for a long answer's end: it joins it at the next token, and each answer
    is still the one its request gets alone."""
    from desktop.core.serving.engine import Job, Sampling

    _never_ending(served)
    engine = served.engine
    long_ids = engine.encode([{"role": "user", "content": "Tell me a story."}], True)
    short_ids = engine.encode([{"role": "user", "content": "Hi"}], True)
    events: list[tuple[str, str]] = []
    submitted = threading.Event()

    def submit(name: str, ids: list[int], tokens: int) -> tuple[threading.Event, list]:
        done, got = threading.Event(), []

        def report(event: tuple) -> None:
            events.append((name, event[0]))
            if name == "long" and events.count(("long", "text")) == 3:  # the model waits for the newcomer
                assert submitted.wait(30)
            if event[0] in ("done", "failed"):
                got.append(event[1])
                done.set()

        engine.submit(Job("generate", report, ids=list(ids), sampling=Sampling(tokens, temperature=0)))
        return done, got

    alone = []
    for ids, tokens in ((long_ids, 120), (short_ids, 10)):
        done, got = submit("alone", ids, tokens)
        assert done.wait(60)
        alone.append(got[0])
    long_done, long_got = submit("long", long_ids, 120)
    _until(lambda: ("long", "text") in events)
    short_done, short_got = submit("short", short_ids, 10)
    submitted.set()
    assert short_done.wait(60) and long_done.wait(60)

    assert events.index(("short", "done")) < events.index(("long", "done"))  # it did not wait for the end
    assert engine.largest >= 2
    assert [long_got[0].text, short_got[0].text] == [o.text for o in alone]
    assert [long_got[0].completion_tokens, short_got[0].completion_tokens] == [120, 10]


def test_an_answer_asked_for_a_json_schema_follows_it(tiny_chat_models: dict[str, Path]) -> None:
    """``response_format`` held by llguidance: a random model's answer is a document the schema accepts,
    greedy or sampled, streamed or not; a schema that cannot be followed is a 400 that says why."""
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 8},
            "age": {"type": "integer", "minimum": 0, "maximum": 120},
            "kind": {"enum": ["cat", "dog"]},
        },
        "required": ["name", "age", "kind"],
        "additionalProperties": False,
    }
    wanted = {"type": "json_schema", "json_schema": {"name": "pet", "schema": schema, "strict": True}}
    server = LocalServer(tiny_chat_models["qwen2"], ServeOptions(port=0, name="tiny")).open().start()
    try:
        client = _client(server)
        asked = {"model": "tiny", "messages": [{"role": "user", "content": "A pet?"}], "max_tokens": 60}
        for temperature in (0, 1.0):
            answer = client.chat.completions.create(**asked, temperature=temperature, response_format=wanted)
            pet = json.loads(answer.choices[0].message.content)
            assert set(pet) == {"name", "age", "kind"} and pet["kind"] in ("cat", "dog")
            assert isinstance(pet["age"], int) and 0 <= pet["age"] <= 120 and len(pet["name"]) <= 8
            assert answer.choices[0].finish_reason == "stop"  # whole, then ended
        streamed = client.chat.completions.create(**asked, stream=True, response_format=wanted)
        text = "".join(chunk.choices[0].delta.content or "" for chunk in streamed if chunk.choices)
        assert set(json.loads(text)) == {"name", "age", "kind"}
        # Any object: a random model's strings need not end within 60 tokens, but it writes one
        anything = client.chat.completions.create(**asked, response_format={"type": "json_object"})
        assert anything.choices[0].message.content.startswith("{")
        plain = client.chat.completions.create(**asked, temperature=0)
        with pytest.raises(json.JSONDecodeError):  # the same model unheld does not write JSON
            json.loads(plain.choices[0].message.content)

        bad = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "nosuch"}}}
        status, body = _post(
            server, "/chat/completions", json.dumps({**asked, "response_format": bad}).encode()
        )
        assert status == 400 and body["error"]["param"] == "response_format"
        assert body["error"]["message"].startswith("The JSON schema cannot be followed:")
        assert "nosuch" in body["error"]["message"]
        status, body = _post(
            server, "/chat/completions", json.dumps({**asked, "response_format": {"type": "xml"}}).encode()
        )
        assert status == 400 and "'xml' is not known here" in body["error"]["message"]
    finally:
        server.stop()
