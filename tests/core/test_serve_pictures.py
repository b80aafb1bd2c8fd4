"""Serve a vision-language model: OpenAI's ``image_url`` parts, as data URLs, files and web addresses."""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

from desktop.core.serving.server import LocalServer, ServeOptions
from tests.core.test_serving import _client, _post

pytestmark = pytest.mark.slow


def _picture(samples: Path) -> Path:
    return next((samples / "shapes" / "circle").glob("*.png"))


def _asked(url: str, question: str = "What is in this picture?") -> list[dict[str, Any]]:
    return [
        {
            "role": "user",
            "content": [{"type": "image_url", "image_url": {"url": url}}, {"type": "text", "text": question}],
        }
    ]


def _direct(folder: Path, picture: Path, question: str, tokens: int) -> str:
    """What plain transformers answers, greedy, with the folder's processor and chat template."""
    import torch
    from PIL import Image
    from transformers import AutoModelForImageTextToText, AutoProcessor

    processor = AutoProcessor.from_pretrained(folder)
    model = AutoModelForImageTextToText.from_pretrained(folder)
    messages = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": question}]}]
    text = processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    inputs = processor(text=[text], images=[[Image.open(picture).convert("RGB")]], return_tensors="pt")
    with torch.no_grad():
        out = model.generate(**inputs, max_new_tokens=tokens, do_sample=False, pad_token_id=0)
    return processor.tokenizer.decode(
        out[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True
    ).strip()


@pytest.fixture
def served(tiny_llava: Path) -> Iterator[LocalServer]:
    server = LocalServer(tiny_llava, ServeOptions(port=0, name="tiny-vision")).open().start()
    yield server
    server.stop()


def test_a_picture_as_a_data_url_or_a_file_is_answered_as_transformers_would(
    served: LocalServer, tiny_llava: Path, samples: Path
) -> None:
    picture = _picture(samples)
    data_url = "data:image/png;base64," + base64.b64encode(picture.read_bytes()).decode()
    expected = _direct(tiny_llava, picture, "What is in this picture?", 6)

    for url in (data_url, str(picture), picture.as_uri()):
        reply = _client(served).chat.completions.create(
            model="tiny-vision", messages=_asked(url), max_tokens=6, temperature=0
        )
        assert reply.choices[0].message.content == expected
        assert reply.usage.prompt_tokens > 4  # the picture's tokens are in the prompt
    streamed = _client(served).chat.completions.create(
        model="tiny-vision", messages=_asked(data_url), max_tokens=6, temperature=0, stream=True
    )
    assert "".join(chunk.choices[0].delta.content or "" for chunk in streamed if chunk.choices) == expected


class _Pictures(BaseHTTPRequestHandler):
    picture = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.end_headers()
        self.wfile.write(self.picture)

    def log_message(self, *args: object) -> None:
        pass


def test_web_pictures_are_fetched_only_when_allowed(tiny_llava: Path, samples: Path) -> None:
    import json

    _Pictures.picture = _picture(samples).read_bytes()
    web = HTTPServer(("127.0.0.1", 0), _Pictures)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{web.server_port}/circle.png"
    body = json.dumps({"model": "v", "messages": _asked(url), "max_tokens": 2}).encode()
    try:
        closed = LocalServer(tiny_llava, ServeOptions(port=0, name="v")).open().start()
        try:
            status, answer = _post(closed, "/chat/completions", body)
        finally:
            closed.stop()
        assert status == 400 and "--allow-remote-images" in answer["error"]["message"]

        opened = LocalServer(tiny_llava, ServeOptions(port=0, name="v", remote_pictures=True)).open().start()
        try:
            status, answer = _post(opened, "/chat/completions", body)
        finally:
            opened.stop()
        assert status == 200 and answer["choices"][0]["message"]["role"] == "assistant"
    finally:
        web.shutdown()


def test_what_is_not_a_picture_is_refused_and_a_text_model_refuses_pictures(
    served: LocalServer, tiny_chat_models: dict[str, Path]
) -> None:
    import io
    import json

    from PIL import Image

    huge = io.BytesIO()
    Image.new("1", (20_000, 20_000)).save(huge, "PNG", optimize=True)  # 400 megapixels in 48 KB: was a 500
    for url, said in (
        ("data:image/png;base64," + base64.b64encode(b"not a picture").decode(), "not a picture"),
        ("data:image/png;base64," + base64.b64encode(huge.getvalue()).decode(), "too large to read"),
        ("data:image/png;base64,@@@", "not valid base64"),
        ("/nowhere/picture.png", "There is no picture at"),
    ):
        status, answer = _post(
            served, "/chat/completions", json.dumps({"messages": _asked(url), "max_tokens": 2}).encode()
        )
        assert status == 400 and said in answer["error"]["message"], answer
    assert _client(served).models.list().data[0].id == "tiny-vision"  # still serving

    text = LocalServer(tiny_chat_models["llama"], ServeOptions(port=0, name="t")).open().start()
    try:
        status, answer = _post(
            text,
            "/chat/completions",
            json.dumps({"messages": _asked("data:,x"), "max_tokens": 2}).encode(),
        )
    finally:
        text.stop()
    assert status == 400 and "reads text only" in answer["error"]["message"]
