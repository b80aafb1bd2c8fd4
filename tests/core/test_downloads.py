"""Downloads from a fake hub on 127.0.0.1: the files needed, progress, cancel and resume, failures."""

from __future__ import annotations

import itertools
import shutil
import threading
import time
from pathlib import Path

import pytest

from desktop.core.hub import clients as clients
from desktop.core.hub import downloads, sources
from desktop.core.hub import search as hub_search
from desktop.core.hub.clients import DownloadCancelled
from desktop.core.hub.downloads import Progress
from desktop.core.hub.models import load_tokenizer
from desktop.core.settings.config import ModelSource
from desktop.core.system.errors import DiskInputError, ModelError
from tests.fakehub import TOKEN, FakeHub, Repo


def test_a_download_fetches_only_what_training_needs_and_reports_up_to_100_percent(fake_hub: FakeHub) -> None:
    seen: list[Progress] = []
    folder = downloads.download("tiny/gpt2", sources.resolve(), on_progress=seen.append)
    names = sorted(p.name for p in folder.iterdir())
    assert "model.safetensors" in names and "config.json" in names and "tokenizer.json" in names
    assert "pytorch_model.bin" not in names and "onnx" not in names  # safetensors exist; no ONNX
    assert seen[-1].done == seen[-1].total > 0 and seen[-1].fraction == 1.0
    assert all(a.done <= b.done for a, b in itertools.pairwise(seen))  # never goes backwards
    fake_hub.stop()  # the network is gone: the model loads from the cache
    assert load_tokenizer(ModelSource("tiny/gpt2")).vocab_size > 0
    assert clients.local_copy("tiny/gpt2") == folder


@pytest.mark.slow
def test_cancel_keeps_the_partial_file_and_the_next_try_resumes_it(
    fake_hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    import huggingface_hub.constants

    from desktop.core.hub import clients as hub_clients

    monkeypatch.setattr(huggingface_hub.constants, "DOWNLOAD_CHUNK_SIZE", 16 * 1024)  # 10 MB for real
    monkeypatch.setattr(hub_clients, "RESUME_FROM", 0)  # 8 MB for real: the tiny model's weights resume
    size = len(fake_hub.repos[("model", "tiny/gpt2")].files["model.safetensors"])
    release = fake_hub.stall["model.safetensors"] = threading.Event()
    cancel, written = threading.Event(), threading.Event()
    count = downloads._Meter.add

    def add(meter: downloads._Meter, n: int, file: str = "") -> None:
        count(meter, n, file)
        if meter.done > size // 2:  # some of the weights are written to the partial file
            written.set()

    monkeypatch.setattr(downloads._Meter, "add", add)
    errors: list[BaseException] = []

    def first_try() -> None:
        try:
            downloads.download("tiny/gpt2", sources.resolve(), cancel=cancel)
        except BaseException as exc:
            errors.append(exc)

    worker = threading.Thread(target=first_try)
    worker.start()
    assert written.wait(20)  # half of the weights are written, the rest is held back by the server
    assert fake_hub.stalled.wait(20)  # and the connection sends nothing more: a stalled server
    cancelled_at = time.monotonic()
    cancel.set()
    worker.join(20)
    waited = time.monotonic() - cancelled_at
    assert len(errors) == 1 and isinstance(errors[0], DownloadCancelled)
    assert waited < 2.5, waited  # Cancel answers although no byte arrives (the server holds it 30 s)
    del fake_hub.stall["model.safetensors"]
    release.set()  # the abandoned request ends; what it wrote stays for the next download
    folder = downloads.download("tiny/gpt2", sources.resolve())
    assert (folder / "model.safetensors").stat().st_size == size
    resumed = [start for name, start in fake_hub.served if name == "model.safetensors"][-1]
    assert resumed > 0  # the second request asked for the rest only (Range)


@pytest.mark.slow
def test_a_connection_dropped_in_the_middle_of_a_file_is_resumed(fake_hub: FakeHub) -> None:
    fake_hub.drop_once.add("model.safetensors")
    folder = downloads.download("tiny/gpt2", sources.resolve())
    expected = fake_hub.repos[("model", "tiny/gpt2")].files["model.safetensors"]
    assert (folder / "model.safetensors").read_bytes() == expected


def test_a_gated_model_names_the_license_page_and_works_with_a_token_from_the_keyring(
    fake_hub: FakeHub, keyring_backend: dict
) -> None:
    fake_hub.repos[("model", "tiny/gpt2")].gated = True
    with pytest.raises(ModelError) as caught:
        downloads.download("tiny/gpt2", sources.resolve())
    assert "gated" in caught.value.message
    assert f"{fake_hub.url}/tiny/gpt2" in caught.value.hint and "token" in caught.value.hint
    assert sources.set_token(sources.HUGGING_FACE, TOKEN)
    assert list(keyring_backend.values()) == [TOKEN]  # in the keyring, nowhere else
    assert TOKEN not in sources.settings_path().read_text() if sources.settings_path().exists() else True
    assert (downloads.download("tiny/gpt2", sources.resolve()) / "config.json").is_file()


def test_a_rejected_token_is_called_rejected_not_a_gated_model(
    fake_hub: FakeHub, keyring_backend: dict
) -> None:
    assert sources.set_token(sources.HUGGING_FACE, "hf_revoked_last_week")
    with pytest.raises(ModelError) as caught:
        downloads.download("tiny/gpt2", sources.resolve())  # a public model: only the token is wrong
    assert "rejected the access token" in caught.value.message and "gated" not in caught.value.message
    assert "Settings > Model sources" in caught.value.hint and "HF_TOKEN" in caught.value.hint


def test_a_file_missing_from_an_existing_repository_is_named(fake_hub: FakeHub) -> None:
    fake_hub.vanished.add("model.safetensors")  # listed, then gone (a mirror out of step)
    with pytest.raises(ModelError) as caught:
        downloads.download("tiny/gpt2", sources.resolve())
    assert caught.value.message == f"tiny/gpt2 on {sources.resolve().label} has no file model.safetensors."


def test_a_search_that_cannot_run_is_not_called_a_missing_model(
    fake_hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desktop.core.hub import access

    monkeypatch.setattr(access, "unreachable", lambda source=None: "timed out")
    with pytest.raises(ModelError) as caught:
        hub_search.search(sources.resolve(), "qwen")
    assert caught.value.message.startswith("The search for 'qwen' could not run")
    assert "not on this computer" not in caught.value.message


@pytest.mark.parametrize("resumable", [True, False])  # weights over 8 MB, or a small file
def test_a_file_that_arrives_damaged_is_fetched_again_and_never_used(
    fake_hub: FakeHub, monkeypatch: pytest.MonkeyPatch, resumable: bool
) -> None:
    """Today a file whose bytes did not match the hub's sha256 was used as it came (sizes only)."""
    if resumable:
        monkeypatch.setattr(clients, "RESUME_FROM", 0)
    expected = fake_hub.repos[("model", "tiny/gpt2")].files["model.safetensors"]
    fake_hub.corrupt["model.safetensors"] = 1
    folder = downloads.download("tiny/gpt2", sources.resolve())
    assert (folder / "model.safetensors").read_bytes() == expected  # the second fetch was good
    assert [n for n, _ in fake_hub.served].count("model.safetensors") == 2


def test_a_file_damaged_twice_is_one_sentence_and_leaves_nothing_to_load(
    fake_hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(clients, "RESUME_FROM", 0)
    fake_hub.corrupt["model.safetensors"] = 2
    with pytest.raises(ModelError) as caught:
        downloads.download("tiny/gpt2", sources.resolve())
    assert caught.value.message.startswith("model.safetensors of tiny/gpt2 arrived damaged from")
    assert (
        clients.local_copy("tiny/gpt2") is None
        or not (clients.local_copy("tiny/gpt2") / "model.safetensors").exists()
    )


def test_a_damaged_file_the_download_did_not_write_is_named_and_left_alone(fake_hub: FakeHub) -> None:
    folder = downloads.download("tiny/gpt2", sources.resolve())
    blob = (folder / "config.json").resolve()  # small: placed by the client, its blob named by sha256
    if not clients.is_sha256(blob.name):
        blob = (folder / "model.safetensors").resolve()
    original = blob.read_bytes()
    blob.write_bytes(original[:-1] + bytes([original[-1] ^ 1]))  # changed on disk since, by something else
    (folder / blob.name).unlink(missing_ok=True)
    for link in folder.iterdir():
        if link.resolve() == blob:
            link.unlink()  # the snapshot lost its link: the client links the cached blob again
    with pytest.raises(ModelError) as caught:
        downloads.download("tiny/gpt2", sources.resolve())
    assert "in the download cache does not match" in caught.value.message and str(blob) in caught.value.hint
    assert blob.exists()  # not ours: never deleted


def test_an_unknown_model_is_one_sentence(fake_hub: FakeHub) -> None:
    with pytest.raises(ModelError) as caught:
        downloads.download("nobody/nothing", sources.resolve())
    assert caught.value.message == f"There is no model named nobody/nothing on {sources.resolve().label}."


def test_too_little_free_space_stops_before_anything_is_written(
    fake_hub: FakeHub, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(downloads, "free_mb", lambda folder: 0.01)
    with pytest.raises(DiskInputError, match="The download needs"):
        downloads.download("tiny/gpt2", sources.resolve())
    assert not [r for r in fake_hub.served]


def test_modelscope_downloads_into_its_own_cache_and_trains_from_there(fake_hub: FakeHub) -> None:
    seen: list[Progress] = []
    folder = downloads.download("modelscope:tiny/gpt2", sources.resolve(), on_progress=seen.append)
    assert "modelscope" in str(folder) and (folder / "model.safetensors").is_file()
    assert not (folder / "pytorch_model.bin").exists()
    assert seen[-1].done == seen[-1].total
    fake_hub.stop()
    assert load_tokenizer(ModelSource("modelscope:tiny/gpt2")).vocab_size > 0
    listed = {h.ref: h for h in hub_search.on_this_computer()}
    assert listed["modelscope:tiny/gpt2"].size_bytes > 200_000
    import dataclasses

    elsewhere = dataclasses.replace(listed["modelscope:tiny/gpt2"], path=str(folder.parent))
    with pytest.raises(ValueError, match="not a model folder in the ModelScope cache"):
        hub_search.delete_from_cache(elsewhere)  # only a repository folder of the cache is deleted
    assert hub_search.delete_from_cache(listed["modelscope:tiny/gpt2"]) > 200_000
    assert clients.local_copy("modelscope:tiny/gpt2") is None


def test_auto_picks_the_source_that_answers(fake_hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("MODELSCOPE_ENDPOINT", "http://127.0.0.1:9")
    settings = sources.HubSettings(mirror_url=fake_hub.url)
    chosen, probes = sources.pick(settings, timeout=1.0)
    assert chosen is not None and chosen.name == sources.MIRROR and chosen.endpoint == fake_hub.url
    assert {p.name: p.ok for p in probes} == {"huggingface": False, "mirror": True, "modelscope": False}
    monkeypatch.delenv("HF_ENDPOINT")
    assert sources.resolve(sources.AUTO) == chosen  # remembered


def test_a_hub_dataset_downloads_its_data_files_and_loads_from_the_cache(
    fake_hub: FakeHub, samples: Path
) -> None:
    from desktop.core.data.train_eval import load_train_eval
    from desktop.core.settings.config import RunConfig

    csv = (samples / "reviews.csv").read_bytes()
    fake_hub.add(
        Repo(
            "someone/reviews",
            {"data/train.csv": csv, "README.md": b"# reviews", "logo.png": b"png"},
            kind="dataset",
        )
    )
    folder = downloads.download("someone/reviews", sources.resolve(), dataset=True)
    assert (folder / "data" / "train.csv").read_bytes() == csv and not (folder / "logo.png").exists()
    fake_hub.stop()
    config = RunConfig(task="classification")
    config.data.hub_id = "someone/reviews"
    train, held_out = load_train_eval(config)
    assert len(train) + len(held_out) == csv.decode("utf-8").count("\n") - 1


def test_a_config_fetched_for_the_fit_badge_is_not_taken_for_a_download(fake_hub: FakeHub) -> None:
    from desktop.core.data.model_checks import check_model_folder
    from desktop.core.hub import access as hub
    from desktop.core.hub.fit import fetch_config
    from desktop.core.settings.config import RunConfig

    assert fetch_config("tiny/gpt2")["model_type"] == "gpt2"
    served = {name for name, _ in fake_hub.served}
    assert served == {"config.json"}  # a few kB, never the weights
    config = RunConfig(task="causal-lm")
    config.model.name = "tiny/gpt2"
    check_model_folder(config)  # not "the folder has no tokenizer files": the download brings them
    assert not hub.complete_in_cache("tiny/gpt2")  # still to be downloaded before training
    config.task = "seq2seq"
    with pytest.raises(ModelError, match="cannot be used for"):
        check_model_folder(config)  # the task check works from the config alone


def test_parameters_and_size_come_from_the_safetensors_headers(fake_hub: FakeHub, tiny_gpt2: Path) -> None:
    from desktop.core.hub.models import describe_local_model

    expected = describe_local_model(tiny_gpt2).num_parameters
    weights = len(fake_hub.repos[("model", "tiny/gpt2")].files["model.safetensors"])
    params, size = hub_search.weights_info("tiny/gpt2", sources.resolve())
    assert params == expected and 0 < size <= weights
    params, size = hub_search.weights_info("modelscope:tiny/gpt2", sources.resolve())
    assert (params, size) == (expected, weights)
    assert fake_hub.sent["model.safetensors"] < weights / 2  # headers only, both times: never the weights


def test_the_memory_estimate_of_a_hub_model_needs_only_its_config(fake_hub: FakeHub) -> None:
    from desktop.core.hub.fit import shapes_for_config
    from desktop.core.settings.config import RunConfig
    from desktop.core.settings.memory import estimate

    config = RunConfig(task="causal-lm")
    config.model.name = "tiny/gpt2"
    shapes = shapes_for_config(config)
    assert shapes.num_parameters > 0 and estimate(shapes, config).total > 0
    assert {name for name, _ in fake_hub.served} == {"config.json"}  # not the weights, not the tokenizer


def test_a_modelscope_file_that_arrives_damaged_is_fetched_again_or_named(
    fake_hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ModelScope's listing publishes each file's sha256; its client checks it and fetches again."""
    import modelscope_hub._download as ms_download

    monkeypatch.setattr(ms_download, "DOWNLOAD_INTEGRITY_RETRY_BACKOFF", 0)  # its pause between tries
    expected = fake_hub.repos[("model", "tiny/gpt2")].files["model.safetensors"]
    fake_hub.corrupt["model.safetensors"] = 1
    folder = downloads.download("modelscope:tiny/gpt2", sources.resolve())
    assert (folder / "model.safetensors").read_bytes() == expected

    fake_hub.corrupt["model.safetensors"] = 100  # damaged every time
    shutil.rmtree(folder)
    with pytest.raises(ModelError) as caught:
        downloads.download("modelscope:tiny/gpt2", sources.resolve())
    assert caught.value.message.startswith(
        "model.safetensors of tiny/gpt2 arrived damaged from ModelScope each time"
    )
    assert not (folder / "model.safetensors").exists()  # nothing damaged is left to load


def test_bytes_already_here_are_no_speed_and_the_first_moment_shows_none() -> None:
    """Today: "1 KB of 4.5 MB · 51 MB/s · 0:00 left", then "50 GB/s" (cached files counted as arriving)."""
    seen: list[Progress] = []
    meter = downloads._Meter(10 * 2**20, seen.append, None)
    meter.skip(6 * 2**20)  # files already on this computer
    meter.add(1024)  # the first kilobyte, a moment later
    assert seen[-1].done == 6 * 2**20 + 1024 and seen[-1].speed == 0 and seen[-1].eta_s is None
