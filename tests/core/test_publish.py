"""Publishing to a hub: the files, the card and the commit arrive; a token that cannot write, a mirror
that takes no uploads and a repository holding something else are each one sentence, and nothing is
sent; a push that stops is resumed by the next without sending a large file twice."""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from pathlib import Path
from typing import ClassVar

import pytest

from desktop.core.hub import sources
from desktop.core.hub.pushed import UploadCancelled
from desktop.core.hub.uploads import push_files, push_source
from desktop.core.results import publish
from desktop.core.results.export import export_run
from desktop.core.runs.folders import RunDir
from desktop.core.system.errors import InputError, ModelError
from desktop.core.training.run import run_training
from tests.core.helpers import Recorder, make_config
from tests.fakehub import READ_TOKEN, TOKEN, Repo

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"


@pytest.fixture
def writer(fake_hub, keyring_backend: dict):
    """The fake hub, with a token that may write saved in the keyring as the Settings dialog saves it."""
    assert sources.set_token(sources.HUGGING_FACE, TOKEN)
    return fake_hub


@pytest.fixture
def finished_run(tiny_gpt2: Path, tmp_path: Path) -> RunDir:
    config = make_config(
        "causal-lm", tiny_gpt2, [SAMPLES / "instructions.jsonl"], tmp_path / "runs", max_steps=4
    )
    result = run_training(config, Recorder().append)
    assert result.status == "finished", result.failure
    return RunDir(result.run_dir)


def _folder(tmp_path: Path, **sizes: int) -> dict[str, Path]:
    folder = tmp_path / "export"
    folder.mkdir(exist_ok=True)
    files = {}
    for name, size in sizes.items():
        name = name.replace("__", ".")
        (folder / name).write_bytes(os.urandom(size))
        files[name] = folder / name
    return files


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_run_is_published_with_its_card_in_one_commit(writer, finished_run: RunDir, tmp_path: Path) -> None:
    leftovers = set(Path(tempfile.gettempdir()).glob("finetune-studio-publish-*"))
    told: list[str] = []
    pushed = publish.publish_run(
        finished_run, "my-model", push_source("hf"), on_progress=lambda words, f, p: told.append(str(words))
    )
    assert pushed.url == f"{writer.url}/tester/my-model"
    assert pushed.created and pushed.private and writer.repos[("model", "tester/my-model")].meta["private"]
    [commit] = writer.commits
    assert commit["summary"] == f"Upload {finished_run.path.name} (model) from Finetune Studio"
    assert "for causal-lm on instructions.jsonl" in commit["description"]
    names = set(commit["files"])
    assert {"config.json", "model.safetensors", "README.md", "tokenizer.json"} <= names
    assert not any(name.startswith(".") for name in names)  # the export's own marker stays home
    card = commit["files"]["README.md"].decode()
    assert (
        card.startswith("---\nlibrary_name: transformers\n") and "tags: [finetune-studio, causal-lm]" in card
    )
    assert "## Results" in card and finished_run.path.name in card
    # The weights are what an export of the run writes, byte for byte.
    local = export_run(finished_run, tmp_path / "local", verify=False)
    assert commit["files"]["model.safetensors"] == (local.folder / "model.safetensors").read_bytes()
    assert "Uploading" in told and pushed.sent == sum(len(b) for b in commit["files"].values())
    assert set(Path(tempfile.gettempdir()).glob("finetune-studio-publish-*")) == leftovers


def test_a_cancelled_push_changes_nothing_and_the_next_sends_no_large_file_twice(
    writer, tmp_path: Path
) -> None:
    files = _folder(tmp_path, first__safetensors=2 * 2**20, second__safetensors=3 * 2**20, config__json=300)
    cancel = threading.Event()

    def progress(stage: str, figures) -> None:  # Cancel once the second large file is on its way
        if stage == "send" and figures.file == "second.safetensors":
            cancel.set()

    source = push_source("hf")
    with pytest.raises(UploadCancelled) as cancelled:
        push_files(source, "tester/big", files, "Upload big", on_progress=progress, cancel=cancel)
    assert "not changed" in str(cancelled.value.message)
    assert writer.commits == [] and set(writer.repos[("model", "tester/big")].files) == {".gitattributes"}
    first, second = _sha(files["first.safetensors"]), _sha(files["second.safetensors"])
    assert first in writer.lfs and second not in writer.lfs

    pushed = push_files(source, "tester/big", files, "Upload big")
    assert (pushed.kept, pushed.kept_bytes) == (1, 2 * 2**20)
    assert writer.received[first] == 2 * 2**20  # sent once, in the cancelled push
    assert pushed.sent == 3 * 2**20 + 300
    [commit] = writer.commits
    assert {n: len(b) for n, b in commit["files"].items()} == {
        "first.safetensors": 2 * 2**20,
        "second.safetensors": 3 * 2**20,
        "config.json": 300,
    }
    assert "were on the hub already" in str(publish.summary(pushed))


def test_a_refused_upload_is_one_sentence_and_the_retry_resumes(writer, tmp_path: Path) -> None:
    files = _folder(tmp_path, first__safetensors=2**20, second__safetensors=2**20)
    writer.refuse_once.add(_sha(files["second.safetensors"]))
    with pytest.raises(ModelError) as refused:
        push_files(push_source("hf"), "tester/again", files, "Upload")
    assert "refused the upload to tester/again" in str(refused.value.message)
    assert "not sent again" in str(refused.value.hint)
    pushed = push_files(push_source("hf"), "tester/again", files, "Upload")
    assert pushed.kept == 1 and len(writer.commits) == 1


def test_a_read_only_or_missing_token_is_said_before_anything_is_sent(
    fake_hub, keyring_backend: dict, tmp_path: Path
) -> None:
    files = _folder(tmp_path, model__safetensors=1000)
    with pytest.raises(InputError) as missing:
        push_files(push_source("hf"), "tester/m", files, "Upload")
    assert "none is saved" in str(missing.value.message)
    assert "https://huggingface.co/settings/tokens" in str(missing.value.hint)

    sources.set_token(sources.HUGGING_FACE, READ_TOKEN)
    with pytest.raises(InputError) as read_only:
        push_files(push_source("hf"), "tester/m", files, "Upload")
    assert "of tester may only read" in str(read_only.value.message)
    assert "Write role" in str(read_only.value.hint)
    assert ("model", "tester/m") not in fake_hub.repos
    assert not [p for m, p in fake_hub.requests if m in ("POST", "PUT")]


def test_a_repository_holding_something_else_is_replaced_only_when_asked(writer, tmp_path: Path) -> None:
    writer.add(
        Repo("tester/taken", {".gitattributes": b"", "weights.bin": b"w" * 100, "README.md": b"# theirs"})
    )
    files = _folder(tmp_path, model__safetensors=1000)
    files["README.md"] = tmp_path / "README.md"
    files["README.md"].write_text("---\ntags: [ours]\n---\n# ours\n", encoding="utf-8")
    with pytest.raises(InputError) as held:
        push_files(push_source("hf"), "tester/taken", files, "Upload")
    assert "tester/taken already holds files (README.md, weights.bin)" in str(held.value.message)
    assert "--replace" in str(held.value.hint)
    assert writer.commits == [] and writer.repos[("model", "tester/taken")].files["README.md"] == b"# theirs"

    pushed = push_files(push_source("hf"), "tester/taken", files, "Upload", replace=True)
    assert not pushed.created
    assert set(writer.repos[("model", "tester/taken")].files) == {
        ".gitattributes",
        "model.safetensors",
        "README.md",
    }
    assert writer.commits[0]["deleted"] == ["weights.bin"]

    again = push_files(push_source("hf"), "tester/taken", files, "Upload", replace=True)
    assert (again.sent, again.kept) == (0, 2)  # the small card is compared, not counted as sent


def test_a_mirror_that_takes_no_uploads_is_named(
    writer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer.uploads = False
    with pytest.raises(InputError) as refused:
        push_files(push_source("hf"), "tester/m", _folder(tmp_path, a__safetensors=10), "Upload")
    host = writer.url.split("://")[1]
    assert str(refused.value.message) == f"mirror ({host}) does not take uploads: it only mirrors downloads."
    assert "Settings > Model sources" in str(refused.value.hint)


def test_the_settings_mirror_is_where_a_push_goes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    settings = sources.HubSettings(source=sources.MIRROR, mirror_url="https://mirror.example")
    sources.save_settings(settings)
    assert push_source("hf").endpoint == "https://mirror.example"
    sources.save_settings(sources.HubSettings(source=sources.AUTO, auto_picked=sources.MIRROR))
    assert push_source("hf").endpoint == sources.HF_URL  # Auto's pick is for downloads
    assert push_source("hf", "http://127.0.0.1:9").endpoint == "http://127.0.0.1:9"
    assert push_source("modelscope").kind == sources.MODELSCOPE


def test_what_a_gguf_push_sends(tmp_path: Path) -> None:
    folder = tmp_path / "gguf"
    folder.mkdir()
    for name in ("run-F16.gguf", "Modelfile", "README.md", "other-run-F16.gguf"):
        (folder / name).write_bytes(b"x")
    assert set(publish.gguf_files(folder / "run-F16.gguf")) == {"run-F16.gguf", "Modelfile", "README.md"}
    (folder / "run-Q8_0-unverified.gguf").write_bytes(b"x")
    with pytest.raises(InputError, match="was not verified"):
        publish.gguf_files(folder / "run-Q8_0-unverified.gguf")
    with pytest.raises(InputError, match="holds no LoRA adapters"):
        publish.exported_parcel(folder, "adapter")


class _ModelScope:
    """Stands in for ``modelscope_hub.HubApi`` (ModelScope's upload protocol is its client's business):
    records what the push asks of it."""

    calls: ClassVar[list] = []
    holds: ClassVar[list[str]] = []
    token_ok = True

    def __init__(self, endpoint: str = "", token: str | None = None) -> None:
        self.token = token

    def whoami(self):
        from modelscope_hub.errors import AuthenticationError

        if not self.token_ok:
            raise AuthenticationError("token expired")
        return type("User", (), {"username": "ms-user"})()

    def repo_exists(self, repo_id: str, repo_type: str) -> bool:
        return bool(self.holds)

    def create_repo(self, repo_id: str, repo_type: str, visibility: str = "public") -> None:
        self.calls.append(("create", repo_id, visibility))

    def list_repo_files(self, repo_id: str, repo_type: str):
        return [type("File", (), {"path": p})() for p in self.holds]

    def upload_folder(self, repo_id: str, repo_type: str, folder_path, **options):
        self.calls.append(("upload", repo_id, Path(folder_path), options))
        options["progress_callback"]({"event": "batch_committed", "committed_bytes": 10})
        return {"commit_url": "https://modelscope.example/commit/1"}


def test_modelscope_gets_the_files_private_and_resumable(
    keyring_backend: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import modelscope_hub

    monkeypatch.setattr(modelscope_hub, "HubApi", _ModelScope)
    monkeypatch.setattr(_ModelScope, "calls", [])
    files = _folder(tmp_path, model__safetensors=10, config__json=5)
    with pytest.raises(InputError, match="needs a ModelScope token"):
        push_files(push_source("modelscope"), "m", files, "Upload")
    sources.set_token(sources.MODELSCOPE, "ms-token")
    pushed = push_files(push_source("modelscope"), "m", files, "Upload m", "about m")
    create, (_, repo_id, folder, options) = _ModelScope.calls
    assert create == ("create", "ms-user/m", "private") and repo_id == "ms-user/m"
    assert folder == tmp_path / "export" and options["allow_patterns"] == ["config.json", "model.safetensors"]
    assert options["commit_message"] == "Upload m" and options["sync_remote_repo"] is False
    # What the client sent is remembered outside the folder (a temporary one, for a run), to resume.
    assert tmp_path / "export" not in Path(options["tracker_path"]).parents
    assert pushed.url.endswith("/models/ms-user/m") and pushed.commit_url.endswith("/commit/1")

    monkeypatch.setattr(_ModelScope, "holds", ["weights.bin"])
    with pytest.raises(InputError, match=r"already holds files \(weights.bin\)"):
        push_files(push_source("modelscope"), "ms-user/m", files, "Upload m")
    monkeypatch.setattr(_ModelScope, "token_ok", False)
    with pytest.raises(InputError, match="ModelScope refused the saved ModelScope token"):
        push_files(push_source("modelscope"), "ms-user/m", files, "Upload m")
