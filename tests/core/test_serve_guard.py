"""Serve, part two (issue 55): no web page can use the server unless the user allows it; a request must
be addressed to this computer, and a POST must say it is JSON, whatever FastAPI version is installed."""

from __future__ import annotations

import socket
from types import SimpleNamespace

import pytest

from desktop.core.serving.api import build_app
from desktop.core.serving.engine import Limits
from desktop.core.serving.guard import Access, host_name


def _client(access: Access | None = None, key: str = "", host: str = "127.0.0.1:8000"):
    from starlette.testclient import TestClient

    engine = SimpleNamespace(info=SimpleNamespace(task="causal-lm", chat=True), limits=Limits())
    return TestClient(build_app(engine, "tiny-chat", key, access=access), base_url=f"http://{host}")


def test_a_request_addressed_to_another_name_is_refused_dns_rebinding() -> None:
    """A page at attacker.example whose name now resolves to 127.0.0.1 sends its requests with its own
    name as the Host: they are refused, with the sentence and the flag that allows a name."""
    client = _client()
    assert client.get("/v1/models").status_code == 200
    assert client.get("/v1/models", headers={"Host": "localhost:8000"}).status_code == 200
    assert client.get("/v1/models", headers={"Host": "[::1]:8000"}).status_code == 200

    refused = client.get("/v1/models", headers={"Host": "attacker.example:8000"})

    assert refused.status_code == 403 and refused.json()["error"]["code"] == "host_not_allowed"
    assert "addressed to 'attacker.example:8000'" in refused.json()["error"]["message"]
    assert "--allow-host NAME" in refused.json()["error"]["message"]
    allowed = _client(Access(hosts=("studio.lan",)))
    assert allowed.get("/v1/models", headers={"Host": "studio.lan:8000"}).status_code == 200


def test_served_on_the_network_this_computers_addresses_are_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("desktop.core.serving.addresses.lan_addresses", lambda: ["192.0.2.7"])
    names = Access(host="0.0.0.0").names()
    assert {"192.0.2.7", "127.0.0.1", "localhost"} <= names and "0.0.0.0" not in names
    assert "192.0.2.7" not in Access(host="127.0.0.1").names()  # this computer only: loopback names only
    assert {"127.0.0.2", "host.docker.internal"} <= Access(host="127.0.0.2").names()  # itself; containers
    assert (host_name("[::1]:8000"), host_name("Studio.LAN"), host_name("::1")) == (
        "::1",
        "studio.lan",
        "::1",
    )


def test_a_web_page_cannot_use_the_server_unless_its_origin_is_allowed() -> None:
    client = _client()
    chat = {"messages": [{"role": "user", "content": "Hi"}]}

    refused = client.post("/v1/chat/completions", json=chat, headers={"Origin": "https://evil.example"})

    assert refused.status_code == 403 and refused.json()["error"]["code"] == "origin_not_allowed"
    assert "--allow-origin ORIGIN" in refused.json()["error"]["message"]
    assert "access-control-allow-origin" not in refused.headers  # the page cannot read even the refusal
    preflight = {"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}
    assert client.options("/v1/chat/completions", headers=preflight).status_code == 403

    page = "http://localhost:3000"
    allowed = _client(Access(origins=(page,)), key="k")
    asked = allowed.options(
        "/v1/chat/completions",
        headers={
            "Origin": page,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type",
        },
    )
    assert asked.status_code == 200 and asked.headers["access-control-allow-origin"] == page
    listed = allowed.get("/v1/models", headers={"Origin": page, "Authorization": "Bearer k"})
    assert listed.status_code == 200 and listed.headers["access-control-allow-origin"] == page
    assert allowed.get("/v1/models", headers={"Origin": page}).status_code == 401  # still needs the key


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded"])
def test_a_post_that_is_not_json_is_refused_before_it_is_read(content_type: str | None) -> None:
    """A page may POST text across origins without asking first; requiring JSON makes it ask."""
    headers = {"Content-Type": content_type} if content_type else {}
    body = b'{"messages": [{"role": "user", "content": "Hi"}]}'

    refused = _client().post("/v1/chat/completions", content=body, headers=headers)

    assert refused.status_code == 415 and refused.json()["error"]["code"] == "unsupported_media_type"
    assert "Content-Type: application/json" in refused.json()["error"]["message"]
    said = f"(this one said '{content_type}')" if content_type else "(this one said none)"
    assert said in refused.json()["error"]["message"]


def _slow_client(port: int, head: bytes) -> socket.socket:
    """A client that sends the start of a request, and then nothing."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(head)
    return sock


def _closed(sock: socket.socket, within: float) -> bool:
    """Whether the server closes ``sock`` within ``within`` seconds (what it sent before is read)."""
    sock.settimeout(within)
    try:
        while True:
            if not sock.recv(4096):
                return True
    except TimeoutError:
        return False
    except OSError:
        return True  # reset
    finally:
        sock.close()


@pytest.mark.slow
def test_clients_that_never_finish_a_request_cannot_lock_the_key_holder_out(
    tiny_chat_models: dict,
) -> None:
    """On --host 0.0.0.0 anyone could open connections, send half a request and hold them: 2 x 10,500
    filled the file descriptors. Each request now has a deadline for its headers and its body, and a
    client a number of connections."""
    import json
    import urllib.request

    from desktop.core.serving.connections import Deadlines
    from desktop.core.serving.server import LocalServer, ServeOptions

    deadlines = Deadlines(headers=0.5, body=1.0, per_client=4, total=8)
    options = ServeOptions(port=0, name="tiny-chat", key="k", deadlines=deadlines)
    server = LocalServer(tiny_chat_models["llama"], options).open().start()
    try:
        head = b"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n"  # and the rest never comes
        slow = [_slow_client(server.port, head) for _ in range(4)]
        over = _slow_client(server.port, head)
        assert _closed(over, 0.3)  # a fifth connection from the same client: closed at once
        assert all(_closed(sock, 3.0) for sock in slow)  # the others at their headers' deadline

        body = b'{"messages": [{"role": "user", "content": "Hi"}]}'
        half = b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 500\r\n\r\n"
        assert _closed(_slow_client(server.port, half + body), 3.0)  # a body that never ends

        assert _closed(socket.create_connection(("127.0.0.1", server.port), timeout=5), 3.0)  # silent

        request = urllib.request.Request(
            server.base_url + "/chat/completions",
            data=json.dumps({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 3}).encode(),
            headers={"Content-Type": "application/json", "Authorization": "Bearer k"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:  # the key holder is answered
            assert response.status == 200 and json.load(response)["choices"][0]["message"]
    finally:
        server.stop()


def test_a_flood_of_one_log_line_is_bounded() -> None:
    import logging

    from desktop.core.serving.connections import BoundedLog

    bounded, records = BoundedLog(most=5, window=60.0), []
    for _ in range(10_000):
        record = logging.LogRecord(
            "asyncio", logging.ERROR, __file__, 1, "socket.accept() out of system resource", None, None
        )
        if bounded.filter(record):
            records.append(record)
    assert len(records) == 5


REFUSES_SYSTEM = (
    "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
    "{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }}\n{% endfor %}[assistant]"
)


def test_a_conversation_the_chat_template_refuses_is_a_400_with_its_sentence(
    tiny_chat_models: dict, caplog: pytest.LogCaptureFixture
) -> None:
    """Mistral v0.2 and Gemma 2 refuse a system prompt: that was a bare 500 in text/plain, which the
    openai client retries twice."""
    from starlette.testclient import TestClient
    from transformers import AutoTokenizer

    from desktop.core.data.tasks.generation import encode_prompt

    tokenizer = AutoTokenizer.from_pretrained(tiny_chat_models["llama"])
    tokenizer.chat_template = REFUSES_SYSTEM
    engine = SimpleNamespace(
        info=SimpleNamespace(task="causal-lm", chat=True),
        limits=Limits(),
        encode=lambda messages, chat, tools=(): encode_prompt(tokenizer, "causal-lm", messages, chat),
    )
    client = TestClient(build_app(engine, "tiny-chat"), base_url="http://127.0.0.1:8000")
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]

    refused = client.post("/v1/chat/completions", json={"messages": messages})

    assert refused.status_code == 400 and refused.headers["content-type"] == "application/json"
    error = refused.json()["error"]
    assert error["code"] == "invalid_conversation" and error["param"] == "messages"
    assert "refuses the conversation: System role not supported." in error["message"]
    assert "put its text at the start of the first user message" in error["message"]
    assert "Traceback" not in caplog.text


def test_a_seed_out_of_range_is_a_400_naming_it() -> None:
    chat = {"messages": [{"role": "user", "content": "Hi"}], "seed": 2**64}
    refused = _client().post("/v1/chat/completions", json=chat)
    assert refused.status_code == 400 and refused.json()["error"]["param"] == "seed"


def test_fields_that_change_nothing_here_are_read_and_named_back(tiny_chat_models: dict) -> None:
    """reasoning_effort, prompt_cache_key and the like were refused as unknown fields."""
    from starlette.testclient import TestClient

    from desktop.core.serving.engine import Outcome

    class Engine:
        info = SimpleNamespace(task="causal-lm", chat=True)
        limits, context = Limits(), 2048

        def encode(self, messages: object, chat: bool, tools: object = ()) -> list[int]:
            return [1, 2, 3]

        def submit(self, job):  # answers at once
            job.report(("done", Outcome("Hello", 3, 1, "stop")))
            return job

    client = TestClient(build_app(Engine(), "tiny-chat"), base_url="http://127.0.0.1:8000")
    habits = {"reasoning_effort": "low", "prompt_cache_key": "abc", "user": "me", "metadata": {"a": "b"}}
    chat = {"messages": [{"role": "user", "content": "Hi"}], **habits}

    answer = client.post("/v1/chat/completions", json=chat)

    assert answer.status_code == 200 and answer.json()["choices"][0]["message"]["content"] == "Hello"
    assert answer.headers["x-ignored-fields"] == "user, metadata, reasoning_effort, prompt_cache_key"
    assert (
        "x-ignored-fields"
        not in client.post("/v1/chat/completions", json={"messages": chat["messages"]}).headers
    )
    assert client.get("/health").json() == {"status": "ok", "model": "tiny-chat"}


@pytest.mark.slow
def test_a_request_read_in_time_is_never_cut_while_it_is_answered(tiny_chat_models: dict) -> None:
    """The deadlines are on what the client sends: a chunked body with an extension and a trailer, and
    a second request sent before the first is answered, are read as uvicorn reads them, and answers that
    take longer than the deadlines are not cut."""
    import json

    from desktop.core.serving.connections import Deadlines
    from desktop.core.serving.server import LocalServer, ServeOptions

    options = ServeOptions(port=0, name="tiny-chat", key="k", deadlines=Deadlines(headers=0.3, body=0.3))
    server = LocalServer(tiny_chat_models["llama"], options).open().start()
    try:
        body = json.dumps(
            {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 300, "stream": True}
        )
        head = (
            "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Authorization: Bearer k\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        chunked = f"{len(body):x};ext=1\r\n{body}\r\n0\r\nX-Trailer: 1\r\n\r\n"
        second = "GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer k\r\n\r\n"
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
            sock.sendall((head + chunked + second).encode())  # pipelined: the second waits for the first
            received = b""
            while b'"object":"list"' not in received and b'"object": "list"' not in received:
                piece = sock.recv(65536)
                assert piece, f"closed after {len(received)} bytes: {received[-200:]!r}"
                received += piece
        assert b"data: [DONE]" in received  # the whole streamed answer, then the second request's
    finally:
        server.stop()


def test_pages_and_names_typed_are_read_as_a_browser_sends_them() -> None:
    """A browser's Origin has no default port and an international name in its ASCII form; a Host header
    has no scheme: what a user types for either is read that way, or refused."""
    from desktop.core.serving.guard import Access, origin_of

    assert origin_of("http://LOCALHOST:80/") == "http://localhost"
    assert origin_of("https://bücher.example:443") == "https://xn--bcher-kva.example"
    assert origin_of("http://[::1]:5173") == "http://[::1]:5173" and origin_of("app://x") == "app://x"
    assert [origin_of(t) for t in ("localhost:3000", "http://a/chat", "http://a:99999")] == [None] * 3
    names = Access(hosts=("my-pc.local:8000", "http://Studio.LAN/", "[fe80::1]:80")).names()
    assert {"my-pc.local", "studio.lan", "fe80::1"} <= names
