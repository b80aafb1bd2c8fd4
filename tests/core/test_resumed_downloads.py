"""A big file's own download (the client's public HTTP session, a ``Range`` request from our partial
file) against the fake hub: resumed in the same download when the connection drops, started over
when the server ignores the range; and the cache folders where the client looks for them."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from desktop.core.hub import clients, downloads, sources
from desktop.core.hub.downloads import Progress
from tests.fakehub import FakeHub

WEIGHTS = "model.safetensors"


def _cache() -> Path:
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)  # the fake hub's fixture points it into the test's folder


def _weights(fake_hub: FakeHub) -> bytes:
    return fake_hub.repos[("model", "tiny/gpt2")].files[WEIGHTS]


def test_a_connection_dropped_mid_file_is_asked_for_the_rest_in_the_same_download(
    fake_hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    import huggingface_hub.constants

    monkeypatch.setattr(clients, "RESUME_FROM", 0)  # 8 MB for real: the tiny model's weights take our path
    monkeypatch.setattr(huggingface_hub.constants, "DOWNLOAD_CHUNK_SIZE", 16 * 1024)  # 1 MB: one chunk
    fake_hub.drop_once.add(WEIGHTS)
    seen: list[Progress] = []
    folder = downloads.download("tiny/gpt2", sources.resolve(), on_progress=seen.append)
    assert (folder / WEIGHTS).read_bytes() == _weights(fake_hub)
    starts = [start for name, start in fake_hub.served if name == WEIGHTS]
    assert starts[0] == 0 and len(starts) == 2 and 0 < starts[1] < len(_weights(fake_hub))  # the rest only
    assert seen[-1].done == seen[-1].total and all(a.done <= b.done for a, b in itertools.pairwise(seen))


def test_a_server_that_ignores_the_range_starts_the_partial_file_over(
    fake_hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests import fakehub

    monkeypatch.setattr(clients, "RESUME_FROM", 0)
    send_file = fakehub._Handler._send_file

    def whole_file(handler: fakehub._Handler, *args: object) -> None:
        del handler.headers["Range"]  # a proxy or CDN that answers 200 with the whole file
        send_file(handler, *args)

    monkeypatch.setattr(fakehub._Handler, "_send_file", whole_file)
    blobs = clients.hf_repo_folder(_cache(), "tiny/gpt2") / "blobs"
    blobs.mkdir(parents=True)
    etag = fake_hub.digest(_weights(fake_hub))
    (blobs / (etag + clients.PARTIAL_SUFFIX)).write_bytes(b"left by an earlier try" * 10)
    folder = downloads.download("tiny/gpt2", sources.resolve())
    assert (folder / WEIGHTS).read_bytes() == _weights(fake_hub)  # not appended to the old bytes
    assert [start for name, start in fake_hub.served if name == WEIGHTS] == [0]
    assert not (blobs / (etag + clients.PARTIAL_SUFFIX)).exists()


@pytest.mark.parametrize("kind", ["model", "dataset"])
def test_our_cache_folder_is_the_one_the_client_reads(tmp_path: Path, kind: str) -> None:
    """``hf_repo_folder`` writes the layout the client documents; its public ``try_to_load_from_cache``
    finds a file there (a release that moved the cache fails here, not in a user's download)."""
    from huggingface_hub import try_to_load_from_cache

    commit = "0123456789abcdef0123456789abcdef01234567"
    folder = clients.hf_repo_folder(tmp_path, "owner/name", kind)
    (folder / "snapshots" / commit).mkdir(parents=True)
    (folder / "snapshots" / commit / "config.json").write_text("{}", encoding="utf-8")
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text(commit, encoding="utf-8")
    found = try_to_load_from_cache("owner/name", "config.json", cache_dir=tmp_path, repo_type=kind)
    assert found == str(folder / "snapshots" / commit / "config.json")


def test_a_token_goes_only_to_the_hub_it_belongs_to() -> None:
    hub = "https://hf-mirror.example/owner/name/resolve/abc/model.safetensors"
    assert clients.same_origin(hub, "https://hf-mirror.example/other/path")
    assert not clients.same_origin(hub, "https://cdn.example/signed?X-Amz=1")  # a signed CDN address
    assert not clients.same_origin(hub, "http://hf-mirror.example/owner/name")
    assert not clients.same_origin(hub, "https://hf-mirror.example:8443/owner/name")
