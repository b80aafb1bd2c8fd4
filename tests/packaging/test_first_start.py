"""Installs that are the same every time and a first start that never loops (issue 52), with the real uv
against local indexes: the lock decides versions, an update keeps the PyTorch build, a setup that fails
after PyTorch goes on from there without downloading it again, an early app exit keeps the runtime, a
stalled download ends naming its server, and a dead display or missing Qt library is named."""

from __future__ import annotations

import argparse
import base64
import csv
import hashlib
import io
import json
import socket
import sys
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from uv import find_uv_bin

from desktop.launcher import display, main
from desktop.launcher import runtime as rt
from desktop.launcher import wheel_download as wd
from desktop.launcher.runtime import Bundle, Marker, Options, Runtime, SetupError, TorchChoice
from tests.packaging.test_wheel_download import Server

BASE_PYTHON = getattr(sys, "_base_executable", sys.executable)
PY = f"cp{sys.version_info[0]}{sys.version_info[1]}"
LINUX_TAG = "manylinux_2_17_x86_64.manylinux2014_x86_64"


def make_wheel(
    folder: Path,
    name: str,
    version: str,
    requires: tuple[str, ...] = (),
    tag: str = "py3-none-any",
    files: dict[str, str] | None = None,
) -> Path:
    """A minimal valid wheel of package ``name`` (a module of that name, plus ``files``)."""
    dist = f"{name.replace('-', '_')}-{version}"
    path = folder / f"{dist}-{tag}.whl"
    contents = {f"{name.replace('-', '_')}/__init__.py": f"__version__ = {version!r}\n", **(files or {})}
    contents[f"{dist}.dist-info/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        + "".join(f"Requires-Dist: {r}\n" for r in requires)
    )
    contents[f"{dist}.dist-info/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: {tag}\n"
    )
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for member, text in contents.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        writer.writerow([member, f"sha256={digest}", len(text.encode())])
    writer.writerow([f"{dist}.dist-info/RECORD", "", ""])
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as wheel:
        for member, text in contents.items():
            wheel.writestr(member, text)
        wheel.writestr(f"{dist}.dist-info/RECORD", record.getvalue())
    return path


def _site(runtime: Runtime, packages: dict[str, str]) -> None:
    """A runtime folder whose site-packages holds ``packages`` (name: version), as dist-info folders."""
    site = runtime.root / ("Lib/site-packages" if rt.WINDOWS else "lib/python3.12/site-packages")
    for name, version in packages.items():
        info = site / f"{name}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")


# --------------------------------------------------------------------------- the lock


def test_the_launcher_installs_the_locked_version_when_the_index_serves_a_newer_one(tmp_path: Path) -> None:
    index = tmp_path / "index"
    make_wheel(index, "fakedep", "1.0")
    make_wheel(index, "fakedep", "2.0")  # newer: what an install without the lock would take
    app = make_wheel(tmp_path / "app", "finetune-studio", "9.0", requires=("fakedep>=1",))
    lock = tmp_path / "requirements-lock.txt"
    lock.write_text("fakedep==1.0\n    # via finetune-studio\n")
    runtime = Runtime(tmp_path / "runtime")
    bundle = Bundle(Path(find_uv_bin()), app, index, lock)
    options = Options(offline=True, python=BASE_PYTHON)
    steps = {s.key: s for s in rt.plan(runtime, bundle, options, TorchChoice("torch==0", "", ""), fresh=True)}
    env = rt.child_env(tmp_path / "data", options)

    for key in ("python", "app"):
        rt._run(steps[key].command, env, lambda line: None, None)

    assert runtime.installed("fakedep") == "1.0"
    assert runtime.installed("finetune-studio") == "9.0"


# --------------------------------------------------------------------------- updates keep PyTorch


def test_an_update_keeps_the_installed_pytorch_build_as_a_constraint(tmp_path: Path) -> None:
    runtime = Runtime(tmp_path / "runtime")
    _site(runtime, {"torch": "2.14.1+cu130"})
    app = make_wheel(tmp_path / "app", "finetune-studio", "9.0", requires=("torch>=2.4",))
    bundle = Bundle(tmp_path / "uv", app, None, tmp_path / "lock.txt")
    lines: list[str] = []

    torch, new, _ = rt.torch_for_update(runtime, bundle, Options(), lines.append)
    steps = rt.plan(runtime, bundle, Options(), torch, fresh=False, keep=tmp_path / "keep.txt")

    assert (torch.requirement, new) == ("torch==2.14.1+cu130", False)
    assert [s.key for s in steps] == ["app", "torch_check", "check", "prune"]  # no PyTorch step
    app_step = steps[0].command
    constraints = [app_step[i + 1] for i, a in enumerate(app_step) if a == "--constraint"]
    assert constraints == [str(tmp_path / "lock.txt"), str(tmp_path / "keep.txt")]


def test_an_update_that_needs_a_newer_pytorch_takes_the_same_cuda_flavour_from_the_same_index(
    tmp_path: Path,
) -> None:
    runtime = Runtime(tmp_path / "runtime")
    _site(runtime, {"torch": "2.12.0+cu126", "torchvision": "0.27.0+cu126"})
    index = "https://mirror.example/whl/cu126"
    runtime.root.mkdir(exist_ok=True)
    marker = Marker("8.0", "x", "torch==2.12.0+cu126", "3.12")
    marker.torch_index = index
    runtime.write_marker(marker)
    app = make_wheel(tmp_path / "app", "finetune-studio", "9.0", requires=("torch>=2.14",))
    bundle = Bundle(tmp_path / "uv", app)
    lines: list[str] = []

    torch, new, companions = rt.torch_for_update(runtime, bundle, Options(), lines.append)
    steps = rt.plan(runtime, bundle, Options(), torch, fresh=False, companions=companions, new_torch=True)

    assert new and torch.requirement == "torch==2.14.1+cu126" and torch.index_url == index  # never PyPI's
    assert companions == ("torchvision",)
    assert [s.key for s in steps][:3] == ["torch", "companions", "app"]
    assert "older than this version of Finetune Studio needs (>=2.14)" in lines[0]


def test_no_build_of_that_flavour_meets_the_floor_says_so_before_anything_changes(tmp_path: Path) -> None:
    with pytest.raises(SetupError, match="needs PyTorch >=9"):
        rt.torch_for_floor("2.12.0+cu118", ">=9", Options())
    assert rt.torch_for_floor("2.14.1+cu130", ">=2.4", Options()) is None


def test_a_repair_keeps_the_pytorch_build_the_runtime_had(tmp_path: Path) -> None:
    runtime = Runtime(tmp_path / "runtime")
    runtime.root.mkdir()
    marker = Marker("9.0", "x", "torch==2.13.0+cu126", "3.12")
    marker.torch_index = "https://mirror.example/whl/cu126"
    runtime.write_marker(marker)

    kept = rt.kept_torch(runtime, Options())

    assert kept is not None and kept.requirement == "torch==2.13.0+cu126" and kept.cuda
    assert kept.index_url == "https://mirror.example/whl/cu126"
    assert rt.kept_torch(runtime, Options(torch_index_url="https://other.example/cu126")).index_url == (
        "https://other.example/cu126"  # a mirror the user set since
    )


# --------------------------------------------------------------------------- a first start that never loops


class CountingServer(Server):
    """The wheel index of test_wheel_download.py, serving a real (tiny) PyTorch wheel and counting
    the downloads of it."""

    def __init__(self, folder: Path) -> None:
        tag = f"{PY}-{PY}-" + ("win_amd64" if sys.platform == "win32" else LINUX_TAG)
        fake = (
            "__version__ = '2.13.0+cu130'\n"
            "class _T:\n    def __matmul__(self, other):\n        return 2.0\n"
            "def ones(n):\n    return _T()\n"
        )
        wheel = make_wheel(folder, "torch", "2.13.0+cu130", tag=tag, files={"torch/__init__.py": fake})
        super().__init__(folder, wheel.read_bytes())
        self.filename = wheel.name

    def downloads(self) -> int:
        return len(self.ranges)


@pytest.fixture
def counting(tmp_path: Path) -> Iterator[CountingServer]:
    found = CountingServer(tmp_path / "served")
    found.thread.start()
    yield found
    found.httpd.shutdown()
    found.httpd.server_close()


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="the served wheel is a Linux x86-64 one")
def test_a_setup_that_fails_after_pytorch_goes_on_from_there_and_downloads_it_once(
    tmp_path: Path, counting: CountingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = tmp_path / "index"
    app = make_wheel(tmp_path / "app", "finetune-studio", "9.0", requires=("fakedep>=1",))
    runtime = Runtime(tmp_path / "data" / "runtime")
    torch = TorchChoice("torch==2.13.0+cu130", counting.index, "fits", cuda=True)
    # Only the steps this test is about: the app's own import check needs the real app. The served
    # "CUDA build" is a few bytes: the 10 GB a real one needs free must not fail a full CI disk first.
    monkeypatch.setattr(rt, "STEP_WEIGHTS", {**rt.STEP_WEIGHTS})
    monkeypatch.setattr(rt, "NEEDED_BYTES", {"cpu": 2**20, "cuda": 2**20})
    real_plan = rt.plan
    monkeypatch.setattr(
        rt,
        "plan",
        lambda *a, **k: [s for s in real_plan(*a, **k) if s.key not in ("check", "sample", "prune")],
    )
    bundle = Bundle(Path(find_uv_bin()), app, index)
    options = Options(python=BASE_PYTHON, index_url=index.as_uri())
    lines: list[str] = []

    index.mkdir()  # first start: the package index lacks a library the app needs
    with pytest.raises(SetupError):
        rt.setup(runtime, bundle, options, tmp_path / "data", True, on_line=lines.append, torch=torch)
    assert any("fakedep" in line for line in lines), lines  # it failed where the index lacks it, not before
    # torchvision (not on this index) is optional: the setup went on to the app without it
    assert any(line.startswith("(optional, skipped)") and "torchvision" in line for line in lines), lines
    assert runtime.marker() is None and runtime.installed("torch") == "2.13.0+cu130"
    assert counting.downloads() == 1

    make_wheel(index, "fakedep", "1.0")  # fixed (a mirror set, the network back): the next start
    lines.clear()
    rt.setup(runtime, bundle, options, tmp_path / "data", True, on_line=lines.append, torch=torch)

    assert runtime.marker() is not None and runtime.installed("finetune-studio") == "9.0"
    assert counting.downloads() == 1  # PyTorch was not downloaded again
    assert any(line.startswith("[torch]") and "kept" in line for line in lines)
    assert any(line.startswith("[python]") and "kept" in line for line in lines)  # the venv was not cleared
    assert "[companions] Installing torchvision for this PyTorch" in lines  # skipped before: tried again
    assert (runtime.downloads / counting.filename).is_file()  # kept until the app has started once
    runtime.release_downloads()
    assert not (runtime.downloads / counting.filename).exists()


def _args(**kwargs: object) -> argparse.Namespace:
    return argparse.Namespace(**{"smoke": False, "headless": True, **kwargs})


def test_an_app_that_stops_right_after_starting_keeps_the_runtime_and_the_pytorch_wheel(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runtime = Runtime(tmp_path / "data" / "runtime")
    runtime.python.parent.mkdir(parents=True)
    runtime.python.symlink_to(BASE_PYTHON)
    runtime.write_marker(Marker("9.0", "x", "torch==2.13.0+cpu", "3.12"))
    runtime.downloads.mkdir(parents=True)
    kept = runtime.downloads / "torch-2.13.0+cpu-cp312-cp312-win_amd64.whl"
    kept.write_bytes(b"wheel")

    # ``python -m desktop`` fails at once in this runtime: no such module there.
    code = main._start_app(runtime, tmp_path / "data", ["-I"], _args())

    assert code == main.EXIT_FAILED
    assert runtime.marker() is not None and kept.is_file()  # nothing cleared, nothing to download again
    said = capsys.readouterr().err
    assert "stopped right after starting" in said and "--repair" in said and "app-start.log" in said


def test_an_app_that_starts_frees_the_kept_pytorch_wheel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = Runtime(tmp_path / "data" / "runtime")
    runtime.python.parent.mkdir(parents=True)
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "desktop.py").write_text("")  # ``python -m desktop`` that ends well
    runtime.python.symlink_to(BASE_PYTHON)
    runtime.downloads.mkdir(parents=True)
    kept = runtime.downloads / "torch-2.13.0+cpu-cp312-cp312-win_amd64.whl"
    kept.write_bytes(b"wheel")
    monkeypatch.chdir(tmp_path / "app")
    assert main._start_app(runtime, tmp_path / "data", [], _args(smoke=True)) == main.EXIT_OK
    assert not kept.exists()


# --------------------------------------------------------------------------- downloads that stall


def test_a_stalled_download_ends_within_its_timeout_naming_the_server_and_the_mirror_field(
    tmp_path: Path,
) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    held = []

    def accept() -> None:  # headers, a few bytes, then nothing: a network that stalls
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n" + b"x" * 1000)
            held.append(conn)

    threading.Thread(target=accept, daemon=True).start()
    port = listener.getsockname()[1]
    wheel = wd.Wheel("torch-2.13.0+cu130-cp312-cp312-win_amd64.whl", f"http://127.0.0.1:{port}/t.whl", "")
    started = time.monotonic()
    try:
        with pytest.raises(wd.Stalled) as stalled:
            wd.download(wheel, tmp_path, report=lambda line: None, timeout_s=1.0, wait=lambda s: None)
    finally:
        listener.close()
        for conn in held:
            conn.close()

    assert time.monotonic() - started < 10  # once, not tried again eight times
    assert "127.0.0.1" in str(stalled.value) and "PyTorch mirror" in str(stalled.value)
    assert (tmp_path / (wheel.filename + ".part")).stat().st_size == 1000  # kept for the next start
    assert wd.TIMEOUT_S == 60  # what users get: a minute without a byte


# --------------------------------------------------------------------------- the display


def test_a_set_but_dead_display_is_named_with_what_to_do() -> None:
    said = display.problem({"DISPLAY": ":7"}, connect=lambda address, family: False)
    assert said is not None and ":7" in said[0] and "--headless" in said[1]
    assert display.problem({"DISPLAY": ":7", "QT_QPA_PLATFORM": "offscreen"}) is None
    assert display.problem({}) is None  # no display: the launcher sets up without a window


def test_missing_qt_libraries_are_named_with_the_install_command_of_the_distribution() -> None:
    def find(name: str) -> str | None:
        return None if name in ("xcb-cursor", "xcb-icccm") else f"lib{name}.so"

    debian = display.problem({"DISPLAY": ":0"}, lambda a, f: True, find, "ID=ubuntu\nID_LIKE=debian\n")
    fedora = display.problem({"DISPLAY": ":0"}, lambda a, f: True, find, 'ID="fedora"\n')

    assert debian is not None and "libxcb-cursor0, libxcb-icccm4" in debian[0]
    assert "sudo apt install libxcb-cursor0 libxcb-icccm4" in debian[1]
    assert fedora is not None and "sudo dnf install xcb-util-cursor xcb-util-wm" in fedora[1]
    assert display.problem({"DISPLAY": ":0"}, lambda a, f: True, lambda name: "lib.so") is None


def test_a_live_x_socket_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(display, "SOCKET_DIR", str(tmp_path))
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "X5"))
    server.listen()
    try:
        assert display.display_answers(":5")
        assert not display.display_answers(":6")
    finally:
        server.close()


# --------------------------------------------------------------------------- the bundled Python


def test_the_bundled_python_is_uvs_mirror_and_the_build_uv_installs_for_the_runtime(tmp_path: Path) -> None:
    pin = json.loads((Path(__file__).resolve().parents[2] / "installer" / "python-build.json").read_text())
    recipe = (Path(__file__).resolve().parents[2] / "installer" / "build-requirements.txt").read_text()
    assert f"uv=={pin['uv']}\n" in recipe  # the pin is the release uv's choice
    import subprocess

    listed = json.loads(
        subprocess.run(
            [find_uv_bin(), "python", "list", rt.PYTHON, "--only-downloads", "--all-platforms",
             "--output-format", "json"],
            capture_output=True, text=True, check=True,
        ).stdout
    )  # fmt: skip
    urls = {
        e["os"]: e["url"]
        for e in listed
        if e["implementation"] == "cpython"
        and e["arch"] == "x86_64"
        and e["variant"] == "default"
        and e["libc"] in ("gnu", "none")
    }
    for system, build in pin["builds"].items():
        assert urls[system].endswith(f"/{pin['release']}/{build['file'].replace('+', '%2B')}")

    assert rt.python_mirror(tmp_path) == tmp_path.resolve().as_uri()


def test_the_setup_window_says_a_stalled_download_with_its_host_and_the_mirror_field() -> None:
    from desktop.launcher.failures import explain

    said = "error: no data came from download.pytorch.org for 60 s, so the download of torch.whl was stopped"
    message, hint = explain(f"$ python wheel_download.py\n{said}", "3.12")

    assert "download.pytorch.org" in message and "PyTorch mirror" in hint
