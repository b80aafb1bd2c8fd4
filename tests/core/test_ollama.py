"""Add to Ollama: Ollama found or not, running or not, and ``ollama create`` with its progress."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from desktop.core.environment.llama_install import install_llama_cpp
from desktop.core.results import ollama
from desktop.core.system.errors import ModelError


@pytest.mark.skipif(sys.platform == "win32", reason="the fake ollama is a script with a shebang")
def test_add_to_ollama_runs_ollama_create_in_the_folder_with_progress(
    fake_ollama: Path, ollama_server: None, tmp_path: Path
) -> None:
    found = ollama.state()
    assert found.binary == str(fake_ollama) and found.running and found.version == "0.12.0"
    assert found.advice() == ""
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "Modelfile").write_text("FROM ./m.gguf\n", encoding="utf-8")
    seen: list[tuple[str, float]] = []
    line = ollama.create("my-chat", folder / "Modelfile", lambda text, done: seen.append((text, done)))
    assert line == "ollama run my-chat"
    assert (folder / "args.txt").read_text() == f"create my-chat -f {folder / 'Modelfile'}"
    assert ("copying file sha256:abc 40%", 0.4) in seen and seen[-1] == ("success", 1.0)
    ollama.create("my-chat-q4_k_m", folder / "Modelfile", quantize="q4_K_M")  # K-quants without llama.cpp
    assert (
        folder / "args.txt"
    ).read_text() == f"create my-chat-q4_k_m --quantize q4_K_M -f {folder / 'Modelfile'}"
    with pytest.raises(ModelError, match="Ollama did not take the model: Error: invalid model name"):
        ollama.create("broken", folder / "Modelfile")


def test_without_ollama_the_screen_says_how_to_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")  # nothing listens there
    found = ollama.state(timeout_s=0.5)
    assert found.binary is None and not found.running
    assert "https://ollama.com/download" in found.advice()
    with pytest.raises(ModelError, match="Ollama is not installed"):
        ollama.create("x", tmp_path / "Modelfile")


@pytest.mark.skipif(sys.platform == "win32", reason="the fake ollama is a script with a shebang")
def test_an_installed_ollama_that_is_not_running_is_told_apart(
    fake_ollama: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")
    assert "not running" in ollama.state(timeout_s=0.5).advice()


def test_llama_cpp_is_installed_with_pips_lines_and_a_failure_says_what_next(tmp_path: Path) -> None:
    script = tmp_path / "fake_pip.py"
    script.write_text(
        "import sys\nprint('Collecting llama-cpp-python')\nprint('Downloading llama_cpp_python.whl')\n"
        "print('Successfully installed llama-cpp-python-0.3.36')\nsys.exit(int(sys.argv[1]))\n",
        encoding="utf-8",
    )
    lines: list[str] = []
    shares: list[float] = []
    done = install_llama_cpp(lines.append, shares.append, command=[sys.executable, str(script), "0"])
    assert done.ok and "llama.cpp is installed" in done.message
    assert lines[-1].startswith("Successfully installed") and shares[-1] == 1.0
    failed = install_llama_cpp(lines.append, shares.append, command=[sys.executable, str(script), "1"])
    assert not failed.ok and "pip exit code 1" in failed.message and "try again" in failed.message
