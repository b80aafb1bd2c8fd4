"""The launcher's runtime logic without building anything: states, the plan, the PyTorch choice, errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from desktop.core.environment.gpu import GpuInfo, GpuReport
from desktop.launcher import runtime as rt
from desktop.launcher.failures import explain
from desktop.launcher.runtime import PYTHON, Bundle, Marker, Options, Runtime, SetupError, TorchChoice


def test_states_missing_ready_outdated_incomplete(tmp_path: Path, bundle: Bundle) -> None:
    runtime = Runtime(tmp_path / "runtime")
    assert runtime.state(bundle) == "missing"
    runtime.python.parent.mkdir(parents=True)
    runtime.python.write_text("")
    assert runtime.state(bundle) == "incomplete"  # a venv without the marker: a setup that did not finish

    runtime.write_marker(Marker(bundle.version, bundle.digest(), "torch==2.13.0+cpu", "3.12"))
    assert runtime.state(bundle) == "ready"
    bundle.app_wheel.write_bytes(b"rebuilt app")  # same version number, new contents
    assert runtime.state(bundle) == "outdated"
    runtime.clear_marker()
    assert runtime.state(bundle) == "incomplete"


def test_a_fresh_setup_installs_pytorch_first_then_the_app(tmp_path: Path, bundle: Bundle) -> None:
    runtime = Runtime(tmp_path / "runtime")
    torch = TorchChoice("torch==2.14.1+cu130", "https://download.pytorch.org/whl/cu130", "fits", cuda=True)

    steps = rt.plan(runtime, bundle, Options(index_url="https://mirror.example/simple"), torch, fresh=True)

    keys = ["python", "torch", "companions", "app", "sample", "torch_check", "check", "prune"]
    assert [s.key for s in steps] == keys
    venv, install_torch, vision, app = (step.command for step in steps[:4])
    assert venv[1:3] == ["venv", "--clear"] and "--managed-python" in venv and "3.12" in venv
    # The runtime's Python downloads the wheel resumably, checks it and installs it (test_wheel_download.py).
    assert install_torch[0] == str(runtime.python) and install_torch[1].endswith("wheel_download.py")
    assert install_torch[install_torch.index("--requirement") + 1] == "torch==2.14.1+cu130"
    assert install_torch[install_torch.index("--index") + 1] == "https://download.pytorch.org/whl/cu130"
    assert install_torch[install_torch.index("--package-index") + 1] == "https://mirror.example/simple"
    assert app[-1] == str(bundle.app_wheel) and "https://mirror.example/simple" in app
    # torchvision for Qwen2-VL's processor: built for this PyTorch, from its index; a setup goes on without
    # (its exact build, no dependencies: the resolver never reads PyTorch's 2.5 GB again)
    vision_index = vision[vision.index("--index-url") + 1]
    assert (
        vision[-1] == "torchvision==0.29.1+cu130"
        and vision_index.endswith("/cu130")
        and "--no-deps" in vision
    )
    assert all(isinstance(part, str) for step in steps for part in step.command)  # argument lists only
    assert steps[2].optional and steps[4].optional and not steps[3].optional


def test_offline_uses_only_the_wheelhouse_and_an_update_reinstalls_only_the_app(
    tmp_path: Path, bundle: Bundle
) -> None:
    house = tmp_path / "wheelhouse"
    bundle = Bundle(bundle.uv, bundle.app_wheel, house)
    runtime = Runtime(tmp_path / "runtime")
    torch = TorchChoice("torch==2.13.0+cpu", "", "offline")
    options = Options(offline=True, python="/usr/bin/python3.11")

    fresh = rt.plan(runtime, bundle, options, torch, fresh=True)
    for step in fresh[1:4]:
        assert {"--offline", "--no-index"} <= set(step.command)
        assert step.command[step.command.index("--find-links") + 1] == str(house)
    assert "--managed-python" not in fresh[0].command  # an interpreter's path is used as it is

    update = rt.plan(runtime, bundle, options, torch, fresh=False)
    # A runtime set up before torchvision came with it gets it (from the wheelhouse here), optionally.
    assert [s.key for s in update] == ["companions", "app", "torch_check", "check", "prune"]
    assert update[0].optional and update[0].command[-1] == "torchvision==0.28.0+cpu"
    assert update[-1].command[1:] == ["cache", "prune"] and update[-1].optional  # the cache is tidied
    assert "--reinstall-package" in update[1].command and "torch" not in " ".join(update[1].command)
    site = runtime.root / ("Lib/site-packages" if rt.WINDOWS else "lib/python3.12/site-packages")
    (site / "torchvision-0.28.0.dist-info").mkdir(parents=True)
    (site / "torchvision-0.28.0.dist-info" / "METADATA").write_text("Name: torchvision\nVersion: 0.28.0\n")
    assert next(s.key for s in rt.plan(runtime, bundle, options, torch, fresh=False)) == "app"  # has it


def test_pytorch_choice_follows_the_doctor(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    rtx = GpuReport(
        [GpuInfo("NVIDIA GeForce RTX 4070", "nvidia", (8, 9), 12 * 2**30)], "581.57", (13, 0), "nvml"
    )
    monkeypatch.setattr("desktop.core.environment.gpu.detect_gpus", lambda: rtx)
    choice = rt.choose_torch(Options(), None, "windows")
    assert choice.cuda and choice.requirement.endswith("+cu130") and "cu130" in choice.index_url

    monkeypatch.setattr("desktop.core.environment.gpu.detect_gpus", lambda: GpuReport())
    choice = rt.choose_torch(Options(torch_index_url="https://mirror.example/whl/cpu"), None, "linux")
    assert not choice.cuda and choice.requirement.endswith("+cpu")
    assert choice.index_url == "https://mirror.example/whl/cpu"
    assert choice.reason == "no NVIDIA GPU was found, so the CPU build"

    kepler = GpuReport([GpuInfo("Tesla K80", "nvidia", (3, 7), 12 * 2**30)], "470.82.01", (11, 4), "nvml")
    monkeypatch.setattr("desktop.core.environment.gpu.detect_gpus", lambda: kepler)
    choice = rt.choose_torch(Options(), None, "linux")
    assert not choice.cuda and choice.reason == "this GPU is too old for current PyTorch, so the CPU build"

    house = tmp_path / "wheelhouse"
    house.mkdir()
    (house / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"")
    assert rt.choose_torch(Options(offline=True), house, "linux").requirement == "torch==2.13.0+cpu"
    with pytest.raises(SetupError, match="holds no PyTorch"):
        rt.choose_torch(Options(offline=True), tmp_path / "empty", "linux")


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("error: failed to write: No space left on device (os error 28)", "disk became full"),
        ("error: Failed to fetch: `https://pypi.org/simple/tomlkit/`\n  Caused by: dns error", "network"),
        (
            "Because tomlkit was not found in the provided package locations and finetune-studio depends "
            "on tomlkit, we can conclude...\n"
            "hint: Packages were unavailable because the network was disabled.",
            "missing from the offline package",
        ),
        ("error: Access is denied. (os error 5)", "access was denied"),
        (
            "OSError: [WinError 126] The specified module could not be found. Error loading "
            '"C:\\rt\\Lib\\site-packages\\torch\\lib\\c10.dll" or one of its dependencies.',
            "Visual C++ runtime is missing",
        ),
        (
            "error: Request failed after 3 retries\n  Caused by: error sending request for url "
            "(https://download.pytorch.org/whl/cu130/torch/)\n  Caused by: client error (Connect)\n"
            "  Caused by: invalid peer certificate: UnknownIssuer",
            "certificate is not trusted",  # a company's TLS inspection: not "no network"
        ),
        (
            "OSError: [WinError 1455] The paging file is too small for this operation to complete",
            "error 1455",
        ),
        ("something nobody foresaw", "Setting up the runtime failed"),
    ],
)
def test_failures_are_explained_with_a_next_step(output: str, expected: str) -> None:
    message, hint = explain(output, PYTHON)
    assert expected in message and hint


def test_too_little_disk_space_refuses_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    usage = rt.shutil.disk_usage(tmp_path)
    monkeypatch.setattr(rt.shutil, "disk_usage", lambda path: usage._replace(free=2**30))
    runtime = Runtime(tmp_path / "data" / "runtime")
    with pytest.raises(SetupError, match="Not enough disk space") as info:
        rt.check_disk(runtime, TorchChoice("torch==2.14.1+cu130", "", "", cuda=True))
    assert "Free some space" in info.value.hint and not runtime.root.exists()


def test_a_python_mirror_reaches_uv(tmp_path: Path) -> None:
    env = rt.child_env(tmp_path, Options(python_mirror="https://mirror.example/python-build-standalone"))
    assert env["UV_PYTHON_INSTALL_MIRROR"] == "https://mirror.example/python-build-standalone"
    assert env["UV_PYTHON_INSTALL_DIR"] == str(tmp_path / "python")  # removed with the app's data


def test_uv_trusts_the_systems_certificates_stops_a_stalled_read_and_takes_the_proxy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HTTPS_PROXY", raising=False)
    env = rt.child_env(tmp_path, Options())
    assert env["UV_SYSTEM_CERTS"] == "1"  # a company's inspecting proxy signs with a root the system has
    # A read with no data for a minute is a stall (the 60 s); a cut connection is tried again.
    assert int(env["UV_HTTP_TIMEOUT"]) == 60 and int(env["UV_HTTP_RETRIES"]) > 3
    assert "HTTPS_PROXY" not in env

    monkeypatch.setenv("UV_HTTP_TIMEOUT", "900")  # what the user set wins
    env = rt.child_env(tmp_path, Options(proxy="http://proxy.corp.example:8080"))
    assert env["UV_HTTP_TIMEOUT"] == "900"
    assert env["HTTPS_PROXY"] == env["HTTP_PROXY"] == "http://proxy.corp.example:8080"


def test_the_setup_check_imports_torch_without_qt(tmp_path: Path, bundle: Bundle) -> None:
    # PySide6 brings its own copy of the C++ runtime; with it loaded, a missing one goes unnoticed.
    torch = TorchChoice("torch==2.13.0+cpu", "", "offline")
    steps = {
        s.key: s.command for s in rt.plan(Runtime(tmp_path / "rt"), bundle, Options(), torch, fresh=True)
    }
    assert "PySide6" not in steps["torch_check"][-1].replace("'PySide6' not in sys.modules", "")
    assert "import sys, torch" in steps["torch_check"][-1]


def test_a_setup_counts_as_a_running_studio_until_it_ends(app_home: Path) -> None:
    """The installer's upgrade and uninstall wait while the launcher sets up (on Windows through the
    named mutex that the same mark creates), and a second launcher is told to wait for the first."""
    import os
    import subprocess
    import sys

    from desktop.launcher.main import _single_setup

    ask = "from desktop.core.system.instance import others_running; print(others_running())"

    def others() -> str:
        done = subprocess.run(
            [sys.executable, "-c", ask], capture_output=True, text=True, env=dict(os.environ)
        )
        return done.stdout.strip()

    with _single_setup(app_home):
        assert others() == f"['setup-{os.getpid()}']"
        with pytest.raises(SetupError, match="already being set up"), _single_setup(app_home):
            pass
    assert others() == "[]"


CURRENT = {"Installed": 1, "Major": 14, "Minor": 44}  # the C++ runtime of late 2025


@pytest.mark.parametrize(
    ("registry", "expected"),
    [
        (CURRENT, None),
        ({"Installed": 1, "Major": 14, "Minor": 29}, "runtime 14.29 is older than PyTorch needs (14.40"),
        ({}, "Visual C++ runtime that PyTorch needs is not installed"),
        (
            {"Installed": 1, "Major": 14, "Minor": 44, "VerifiedAndReputablePolicyState": 1},
            "Smart App Control",
        ),
        ({"Installed": 1, "Major": 14, "Minor": 44, "VerifiedAndReputablePolicyState": 2}, None),  # watches
    ],
)
def test_windows_is_checked_before_gigabytes_are_downloaded(
    registry: dict, expected: str | None, tmp_path: Path, bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desktop.launcher import windows_checks

    read = lambda key, name: registry.get(name)  # noqa: E731
    found = windows_checks.blocker(read)
    assert (found is None) if expected is None else (expected in found[0] and found[1])

    monkeypatch.setattr(rt, "WINDOWS", True)
    original = windows_checks.blocker
    monkeypatch.setattr(windows_checks, "blocker", lambda: original(read))  # this registry
    ran: list[str] = []
    monkeypatch.setattr(rt, "choose_torch", lambda *args: ran.append("choose") or pytest.fail("got past"))
    if expected is not None:
        with pytest.raises(SetupError, match=re.escape(expected.split(" (")[0])):
            rt.setup(Runtime(tmp_path / "runtime"), bundle, Options(), tmp_path, fresh=True)
        assert ran == []  # nothing chosen, nothing downloaded


def test_a_crash_after_the_first_seconds_is_reported_and_a_normal_close_is_not(
    tmp_path: Path, bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    import argparse
    import sys

    from desktop.launcher import main as launcher

    monkeypatch.setattr(launcher, "EARLY_EXIT_S", 0.2)
    exit_code = {"value": 3}
    app = "import sys, time; time.sleep(0.8); print('Traceback: boom', file=sys.stderr); sys.exit({})"
    monkeypatch.setattr(
        launcher,
        "app_command",
        lambda runtime, args, windowed: [sys.executable, "-c", app.format(exit_code["value"])],
    )
    failures: list[SetupError] = []
    monkeypatch.setattr(launcher, "_fail", lambda args, exc: failures.append(exc) or launcher.EXIT_FAILED)
    runtime = Runtime(tmp_path / "runtime")
    runtime.root.mkdir()
    runtime.write_marker(Marker(bundle.version, bundle.digest(), "torch==2.13.0+cpu", "3.12"))
    args = argparse.Namespace(smoke=False, headless=True)

    assert launcher._start_app(runtime, tmp_path, [], args) == launcher.EXIT_FAILED
    assert "stopped unexpectedly (exit code 3)" in failures[0].message and "boom" in failures[0].log
    assert "resumes from its last checkpoint" in failures[0].hint
    assert runtime.marker() is not None  # the runtime started the app: it is not repaired for this

    exit_code["value"] = 0  # the user closed the window
    assert launcher._start_app(runtime, tmp_path, [], args) == launcher.EXIT_OK and len(failures) == 1


def test_on_windows_the_launcher_prints_to_the_console_it_was_started_from(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import io
    import sys

    from desktop.launcher import main as launcher

    class Kernel32:
        def __init__(self, parent: bool) -> None:
            self.parent, self.asked = parent, []

        def AttachConsole(self, pid: int) -> int:
            self.asked.append(pid)
            return int(self.parent)

    opened: list[str] = []

    def opener(name: str, *args, **kwargs) -> io.StringIO:
        opened.append(name)
        return io.StringIO()

    monkeypatch.setattr(sys, "stdout", None)  # a windowed program's streams
    monkeypatch.setattr(sys, "stderr", None)
    from_explorer = Kernel32(parent=False)
    assert not launcher.console_output(from_explorer, opener) and sys.stdout is None and opened == []
    from_cmd = Kernel32(parent=True)
    assert launcher.console_output(from_cmd, opener) and from_cmd.asked == [-1]
    assert opened == ["CONOUT$", "CONOUT$"] and sys.stdout is not None and sys.stderr is not None
