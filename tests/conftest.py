"""Shared fixtures: tiny models, sample data, and an isolated app data folder."""

from __future__ import annotations

import http.server
import os
import sys
import threading
import types
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# One compute thread per process: the tiny models gain nothing from more, and on cores shared with child
# processes and other runs PyTorch's idle threads spin, taking the CPU those need.
os.environ.setdefault("OMP_NUM_THREADS", "1")
# The tests read English unless they choose another language: a Chinese system locale is set aside.
for _variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
    if os.environ.get(_variable, "").lower().startswith("zh"):
        os.environ[_variable] = "C.UTF-8"

SAMPLES = Path(__file__).resolve().parent.parent / "resources" / "samples"


@pytest.fixture(autouse=True)
def app_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own app data folder, so runs never land in the user's."""
    home = tmp_path / "home"
    monkeypatch.setenv("FINETUNE_STUDIO_HOME", str(home))
    for name in (
        "FINETUNE_STUDIO_SOURCE",
        "HF_ENDPOINT",
        "MODELSCOPE_ENDPOINT",
    ):  # the CLI's --source sets them
        monkeypatch.setenv(name, "recorded")  # so that the undo removes what a test sets
        monkeypatch.delenv(name)
    return home


@pytest.fixture(autouse=True)
def quick_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Evaluations answer their few sample rows only: a tiny random model never stops talking, and its
    BLEU over 200 rows would cost every sequence-to-sequence test a minute."""
    from desktop.core.training import evaluation

    monkeypatch.setattr(evaluation, "GENERATION_S", 0.0)


@pytest.fixture(scope="session")
def samples() -> Path:
    """The bundled sample data folder."""
    return SAMPLES


@pytest.fixture(scope="session")
def tiny_gpt2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests import tiny_models

    return tiny_models.gpt2(tmp_path_factory.mktemp("gpt2"))


@pytest.fixture(scope="session")
def tiny_chat_models(tiny_gpt2: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Tiny random causal LMs by llama.cpp architecture: ``gpt2``, ``llama`` and ``qwen2`` (read only)."""
    from tests import tiny_models

    return {
        "gpt2": tiny_gpt2,
        "llama": tiny_models.chat_model("llama", tiny_gpt2, tmp_path_factory.mktemp("llama")),
        "qwen2": tiny_models.chat_model("qwen2", tiny_gpt2, tmp_path_factory.mktemp("qwen2")),
    }


@pytest.fixture(scope="session")
def tiny_gguf_models(
    tiny_chat_models: dict[str, Path], tiny_gpt2: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    """``tiny_chat_models`` and one of every other kind GGUF export writes (read only): ``qwen3`` with the
    GPT-2 tokenizer, and with SentencePiece tokenizers ``mistral``, ``phi3``, ``gemma2``, ``gemma3`` and
    ``gemma3-vision`` (Gemma 3 4B's layout)."""
    from tests import tiny_models

    models = {**tiny_chat_models, "qwen3": tiny_models.qwen3(tiny_gpt2, tmp_path_factory.mktemp("qwen3"))}
    for kind in tiny_models.SPM_KINDS:
        # A folder whose name does not say Phi-3: the GGUF's name must (gguf_vocab.gguf_name).
        folder = tmp_path_factory.mktemp(kind.replace("phi3", "mini"))
        models[kind] = tiny_models.spm_chat_model(kind, folder)
    models["gemma3-vision"] = tiny_models.gemma3_with_vision(tmp_path_factory.mktemp("gemma3-vision"))
    return models


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests import tiny_models

    return tiny_models.bert(tmp_path_factory.mktemp("bert"))


@pytest.fixture(scope="session")
def tiny_vit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests import tiny_models

    return tiny_models.vit(tmp_path_factory.mktemp("vit"))


@pytest.fixture(scope="session")
def tiny_llava(tiny_gpt2: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests import tiny_models

    return tiny_models.llava(tiny_gpt2, tmp_path_factory.mktemp("llava"))


@pytest.fixture(scope="session")
def tiny_t5(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests import tiny_models

    return tiny_models.t5(tmp_path_factory.mktemp("t5"))


@pytest.fixture
def keyring_backend(monkeypatch: pytest.MonkeyPatch) -> dict:
    """A real ``keyring`` backend that keeps secrets in a dict (what the OS keyring would hold)."""
    import keyring
    from keyring.backend import KeyringBackend

    store: dict = {}

    class Memory(KeyringBackend):
        priority = 1

        def get_password(self, service: str, username: str) -> str | None:
            return store.get((service, username))

        def set_password(self, service: str, username: str, password: str) -> None:
            store[(service, username)] = password

        def delete_password(self, service: str, username: str) -> None:
            store.pop((service, username), None)

    previous = keyring.get_keyring()
    keyring.set_keyring(Memory())
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("MODELSCOPE_API_TOKEN", raising=False)
    yield store
    keyring.set_keyring(previous)


@pytest.fixture
def fake_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny_gpt2: Path, keyring_backend: dict):
    """A fake Hugging Face + ModelScope hub on 127.0.0.1 serving the tiny GPT-2 (with an ONNX copy and a
    ``.bin`` beside the safetensors, which a download must skip), as ``HF_ENDPOINT`` and
    ``MODELSCOPE_ENDPOINT``, with empty caches in the test's folder."""
    import huggingface_hub.constants as constants

    from desktop.core.hub import access as hub_module
    from tests.fakehub import FakeHub
    from tests.tiny_models import tiny_parameters

    fake = FakeHub().start()
    meta = {"downloads": 500, "likes": 7, "parameters": tiny_parameters(tiny_gpt2)}  # as the real hub counts
    repo = fake.add_folder("tiny/gpt2", tiny_gpt2, meta=meta)
    repo.files["onnx/model.onnx"] = b"o" * 5000
    repo.files["pytorch_model.bin"] = b"b" * 5000
    monkeypatch.setenv("HF_ENDPOINT", fake.url)
    monkeypatch.setenv("MODELSCOPE_ENDPOINT", fake.url)
    monkeypatch.setenv("MODELSCOPE_CACHE", str(tmp_path / "modelscope"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))  # for the helper process (its own import)
    monkeypatch.setattr(hub_module, "_answers", {})
    yield fake
    fake.stop()


@pytest.fixture
def gated_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """A package ``studio_gated`` of two modules. Importing the first sets the event returned (a test
    makes the user act just then), so that an import stepping aside stops before the second one,
    holding the package's import lock."""
    from desktop.core.system import lazy

    first_ran = threading.Event()
    gate = types.ModuleType("studio_gated_gate")
    gate.first_ran = first_ran
    monkeypatch.setitem(sys.modules, "studio_gated_gate", gate)
    package = tmp_path / "studio_gated"
    package.mkdir()
    (package / "__init__.py").write_text("import studio_gated.first\nimport studio_gated.second\n")
    (package / "first.py").write_text("import studio_gated_gate\nstudio_gated_gate.first_ran.set()\n")
    (package / "second.py").write_text("LOADED = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(lazy, "PAUSE_S", 0.005)
    yield first_ran
    first_ran.clear()  # a thread still stepping aside goes on
    for name in ("studio_gated", "studio_gated.first", "studio_gated.second"):
        sys.modules.pop(name, None)


REQUIRE_LLAMA_CPP = "FINETUNE_STUDIO_REQUIRE_LLAMA_CPP"
"""Set to 1 (CI does) and a test that needs llama.cpp fails where it is missing, instead of skipping."""


def llama_cpp_installed() -> bool:
    """Whether the real ``llama-cpp-python`` can be imported here (whatever a test patched in the app).

    Where it cannot and ``FINETUNE_STUDIO_REQUIRE_LLAMA_CPP=1``, the calling test fails: in CI a missing
    llama.cpp is a broken setup, not a reason to check less.
    """
    import importlib.util

    if importlib.util.find_spec("llama_cpp") is not None:
        return True
    if os.environ.get(REQUIRE_LLAMA_CPP, "") not in ("", "0"):
        pytest.fail(f"llama-cpp-python is not installed, and this run requires it ({REQUIRE_LLAMA_CPP}=1)")
    return False


@pytest.fixture
def llama_cpp() -> types.ModuleType:
    """llama.cpp's Python binding, for a test that loads a GGUF file with it. Where ``llama-cpp-python``
    is not installed the test skips, saying so (``pip install llama-cpp-python`` runs it), or fails under
    ``FINETUNE_STUDIO_REQUIRE_LLAMA_CPP=1``, as CI sets it."""
    reason = "llama-cpp-python is not installed (pip install llama-cpp-python; CI installs it)"
    if not llama_cpp_installed():
        pytest.skip(reason)
    return pytest.importorskip("llama_cpp", reason=reason)


@pytest.fixture
def fake_llama_cpp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """Puts a stand-in ``llama_cpp`` package (its source given) before the real one, for this process and
    the child processes the export checks files in."""
    import importlib
    import textwrap

    def install(source: str) -> None:
        folder = tmp_path / "fake-llama-cpp"
        (folder / "llama_cpp").mkdir(parents=True, exist_ok=True)
        (folder / "llama_cpp" / "__init__.py").write_text(textwrap.dedent(source), encoding="utf-8")
        monkeypatch.syspath_prepend(str(folder))
        paths = [str(folder), os.environ.get("PYTHONPATH", "")]
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in paths if p))
        monkeypatch.delitem(sys.modules, "llama_cpp", raising=False)
        importlib.invalidate_caches()

    return install


PARTING_LLAMA = """\
class Llama:
    \"\"\"Answers every prompt with tokens 5 to 20: apart from transformers' from the first token on.\"\"\"

    def __init__(self, model_path, **kwargs):
        open(model_path, "rb").close()

    def reset(self):
        pass

    def token_eos(self):
        return -1

    def generate(self, ids, **kwargs):
        yield from range(5, 21)
"""


@pytest.fixture
def parting_llama(fake_llama_cpp: Callable[[str], None]) -> None:
    """llama.cpp stood in for by one whose answers part from transformers'."""
    fake_llama_cpp(PARTING_LLAMA)


FAKE_OLLAMA = """\
import pathlib, sys
pathlib.Path("args.txt").write_text(" ".join(sys.argv[1:]))
if "broken" in sys.argv:
    print("Error: invalid model name", flush=True)
    sys.exit(1)
for line in ("gathering model components", "copying file sha256:abc 40%", "copying file sha256:abc 100%",
             "parsing GGUF", "writing manifest", "success"):
    print(line, flush=True)
"""


@pytest.fixture
def fake_ollama(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An ``ollama`` program on the PATH that records its arguments and prints what Ollama 0.12 prints."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program = bin_dir / "ollama"
    program.write_text(f"#!{sys.executable}\n{FAKE_OLLAMA}", encoding="utf-8")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    return program


@pytest.fixture
def ollama_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Ollama's server as far as the app asks it: ``/api/version`` on 127.0.0.1."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200 if self.path == "/api/version" else 404)
            self.end_headers()
            self.wfile.write(b'{"version": "0.12.0"}')

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{server.server_address[1]}")
    yield
    server.shutdown()
