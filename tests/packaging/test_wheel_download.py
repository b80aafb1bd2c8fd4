"""PyTorch's wheel downloaded so that a cut connection or a closed laptop costs only the missing bytes,
checked against the index's sha256, then installed from the file: against a server on 127.0.0.1."""

from __future__ import annotations

import hashlib
import http.server
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.launcher import wheel_download as wd
from desktop.launcher.failures import explain
from desktop.launcher.runtime import (
    Bundle,
    Options,
    Runtime,
    TorchChoice,
    plan,
    wheel_download_script,
)

WHEEL = "torch-2.13.0+cu130-cp{py}-cp{py}-{platform}.whl"


class Server:
    """A PEP 503 index with one wheel, which can drop connections part-way and records each request."""

    def __init__(self, folder: Path, payload: bytes, sha256: str = "") -> None:
        self.payload, self.sha256 = payload, sha256 or hashlib.sha256(payload).hexdigest()
        self.cut_after: list[int] = []  # bytes sent before dropping the connection, one entry per request
        self.ranges: list[str] = []
        self.ignore_ranges = False
        py = f"{sys.version_info[0]}{sys.version_info[1]}"
        platform = "win_amd64" if sys.platform == "win32" else "manylinux_2_17_x86_64.manylinux2014_x86_64"
        self.filename = WHEEL.format(py=py, platform=platform)
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                if self.path == "/whl/cu130/torch/":
                    quoted = server.filename.replace("+", "%2B")
                    body = (
                        f'<html><body><a href="/whl/torch-2.13.0%2Bcu130-cp39-cp39-win_amd64.whl#sha256=00">'
                        f'old</a><a href="/whl/{quoted}#sha256={server.sha256}">{server.filename}</a>'
                        "</body></html>"
                    ).encode()
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                if self.path.endswith("/"):  # another package's page (torchvision): not on this index
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                server.ranges.append(self.headers.get("Range", ""))
                start = 0
                if self.headers.get("Range") and not server.ignore_ranges:
                    start = int(self.headers["Range"].removeprefix("bytes=").rstrip("-"))
                    if start >= len(server.payload):
                        self.send_response(416)
                        self.end_headers()
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(server.payload) - 1}/*")
                else:
                    self.send_response(200)
                body = server.payload[start:]
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                cut = server.cut_after.pop(0) if server.cut_after else None
                self.wfile.write(body if cut is None else body[:cut])
                if cut is not None:
                    self.wfile.flush()
                    self.connection.shutdown(2)  # the network went away mid-file

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.index = f"http://127.0.0.1:{self.httpd.server_port}/whl/cu130"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def wheel(self) -> wd.Wheel:
        return wd.find_wheel(self.index, "torch==2.13.0+cu130")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    found = Server(tmp_path, os.urandom(3 * 2**20 + 123))
    found.thread.start()
    yield found
    found.httpd.shutdown()
    found.httpd.server_close()


def test_a_dropped_connection_resumes_where_it_stopped_and_the_file_is_checked(
    server: Server, tmp_path: Path
) -> None:
    server.cut_after = [2**20]  # the first try ends after 1 MB
    said: list[str] = []
    wheel = server.wheel()
    assert wheel is not None and wheel.filename == server.filename and wheel.sha256 == server.sha256

    path = wd.download(wheel, tmp_path / "downloads", report=said.append, wait=lambda s: None)

    assert server.ranges == ["", f"bytes={2**20}-"]  # the second try asked only for the rest
    assert path.read_bytes() == server.payload and not list(path.parent.glob("*.part"))
    assert any("interrupted" in line for line in said) and any(
        "Resuming the download at 1 MB" in line for line in said
    )


def test_an_interrupted_download_resumes_at_the_next_start(server: Server, tmp_path: Path) -> None:
    server.cut_after = [2**20]
    folder = tmp_path / "downloads"
    with pytest.raises(wd.DownloadError, match="next start resumes") as info:
        wd.download(server.wheel(), folder, report=lambda line: None, attempts=1)
    assert "1 MB downloaded so far are kept" in str(info.value)
    assert (folder / (server.filename + ".part")).stat().st_size == 2**20

    path = wd.download(server.wheel(), folder, report=lambda line: None)  # the next start
    assert server.ranges[-1] == f"bytes={2**20}-" and path.read_bytes() == server.payload


def test_a_server_that_ignores_ranges_sends_the_whole_file_again(server: Server, tmp_path: Path) -> None:
    server.cut_after, server.ignore_ranges = [2**20], True
    path = wd.download(server.wheel(), tmp_path / "d", report=lambda line: None, wait=lambda s: None)
    assert path.read_bytes() == server.payload  # never the first MB twice


def test_a_damaged_download_is_deleted_and_never_installed(tmp_path: Path) -> None:
    bad = Server(tmp_path, os.urandom(2**20), sha256="0" * 64)
    bad.thread.start()
    try:
        folder = tmp_path / "downloads"
        with pytest.raises(wd.DownloadError, match="sha256 mismatch") as info:
            wd.download(bad.wheel(), folder, report=lambda line: None)
        assert list(folder.iterdir()) == []
        assert "damaged" in explain(f"error: {info.value}", "3.12")[0]  # the setup window's words for it
    finally:
        bad.httpd.shutdown()
        bad.httpd.server_close()


@pytest.mark.parametrize(
    ("filename", "system", "glibc", "fits"),
    [
        ("torch-2.13.0+cu130-cp312-cp312-win_amd64.whl", "windows", (0, 0), True),
        ("torch-2.13.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl", "linux", (2, 31), True),
        ("torch-2.13.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl", "linux", (2, 27), False),  # old glibc
        ("torch-2.13.0+cu130-cp311-cp311-win_amd64.whl", "windows", (0, 0), False),  # another Python
        ("torch-2.13.0+cu130-cp312-cp312t-win_amd64.whl", "windows", (0, 0), False),  # free-threaded
        ("torch-2.12.0+cu130-cp312-cp312-win_amd64.whl", "windows", (0, 0), False),  # another version
    ],
)
def test_the_wheel_for_this_python_and_platform_is_picked(
    filename: str, system: str, glibc: tuple[int, int], fits: bool
) -> None:
    listed = [wd.Wheel(filename, "https://example/" + filename, "")]
    found = wd.pick(listed, "torch==2.13.0+cu130", (3, 12), system, "AMD64", glibc)
    assert (found is not None) == fits


def _main(monkeypatch: pytest.MonkeyPatch, args: list[str]) -> tuple[int, list[list[str]]]:
    """The script's main with uv replaced by a recorder: its exit code and the commands it ran."""
    ran: list[list[str]] = []

    class Uv:
        def __init__(self, command: list[str]) -> None:
            ran.append(command)

        def wait(self) -> int:
            return 0

    monkeypatch.setattr(wd.subprocess, "Popen", Uv)
    monkeypatch.setattr(wd.signal, "signal", lambda *args: None)  # pytest keeps its own handlers
    return wd.main(args), ran


def test_the_step_installs_the_checked_file_with_libraries_from_the_package_index(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheel = tmp_path / "finetune_studio-0.3.0-py3-none-any.whl"
    wheel.write_bytes(b"app")
    runtime = Runtime(tmp_path / "data" / "runtime")
    torch = TorchChoice("torch==2.13.0+cu130", server.index, "fits", cuda=True)
    options = Options(index_url="https://mirror.example/simple")
    steps = plan(runtime, Bundle(tmp_path / "uv", wheel), options, torch, fresh=True)
    step = next(s for s in steps if s.key == "torch")
    assert step.command[:2] == [str(runtime.python), str(wheel_download_script())]  # the runtime's Python

    code, ran = _main(monkeypatch, step.command[2:])

    assert code == 0 and len(ran) == 1
    assert ran[0][:5] == [str(tmp_path / "uv"), "pip", "install", "--python", str(runtime.python)]
    assert ran[0][-1] == str(tmp_path / "data" / "downloads" / server.filename)  # the checked file
    assert ran[0][ran[0].index("--index-url") + 1] == "https://mirror.example/simple"  # not PyTorch's index
    # Kept until the app has started from the finished runtime: a later step that fails resumes without it
    # being downloaded again (test_first_start.py); then Runtime.release_downloads frees the 3 GB.
    assert (tmp_path / "data" / "downloads" / server.filename).exists()
    runtime.release_downloads()
    assert not (tmp_path / "data" / "downloads" / server.filename).exists()


def test_an_index_that_cannot_be_read_leaves_the_install_to_uv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--index", "http://127.0.0.1:9/whl/cu130", "--requirement", "torch==2.13.0+cu130"]
    code, ran = _main(monkeypatch, [*args, "--dest", str(tmp_path), "--uv", "uv", "--python", "py"])
    assert code == 0 and "uv installs torch==2.13.0+cu130 itself" in capsys.readouterr().out
    assert ran == [["uv", "pip", "install", "--python", "py", "--index-url", args[1], "torch==2.13.0+cu130"]]


def test_a_failed_download_fails_the_step_with_what_the_setup_explains(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    server.cut_after = [100] * wd.ATTEMPTS
    monkeypatch.setattr(wd.time, "sleep", lambda s: None)  # 1, 2, 4 ... 30 s between tries
    args = ["--index", server.index, "--requirement", "torch==2.13.0+cu130", "--dest", str(tmp_path)]
    code, ran = _main(monkeypatch, [*args, "--uv", "uv", "--python", "py"])
    out = capsys.readouterr().out
    assert code != 0 and ran == [] and "after 8 tries" in out
    message, hint = explain(out, "3.12")
    assert "network" in message and hint  # the setup window's words for it


def test_the_script_runs_on_the_standard_library_alone() -> None:
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(wheel_download_script()), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and "--requirement" in done.stdout, done.stderr


def test_the_setup_window_follows_the_download_on_its_progress_bar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desktop.launcher import runtime as rt

    lines: list[str] = []
    progress = wd.Progress("torch-2.13.0+cu130-cp312-cp312-win_amd64.whl", lines.append, every_s=0)
    progress.update(650 * 2**20, 2_600 * 2**20)
    assert lines[0].startswith(
        "Downloading torch-2.13.0+cu130-cp312-cp312-win_amd64.whl: 650 MB of 2.54 GB (25%)"
    )
    torch = rt.TorchChoice("torch==2.13.0+cu130", "https://download.pytorch.org/whl/cu130", "fits", cuda=True)
    monkeypatch.setattr(rt, "choose_torch", lambda options, wheelhouse: torch)
    steps = [rt.Step("torch", "Installing PyTorch", [sys.executable, "-c", f"print({lines[0]!r})"])]
    monkeypatch.setattr(rt, "plan", lambda *args, **kwargs: steps)
    seen: list[tuple[float, str]] = []
    wheel = tmp_path / "finetune_studio-0.3.0-py3-none-any.whl"
    wheel.write_bytes(b"app")
    (tmp_path / "runtime").mkdir()
    rt.setup(
        Runtime(tmp_path / "runtime"),
        Bundle(tmp_path / "uv", wheel),
        Options(),
        tmp_path,
        fresh=False,
        on_progress=lambda fraction, key: seen.append((fraction, key)),
    )
    assert seen[0] == (0.0, "torch") and seen[-1] == (1.0, "ready")
    assert seen[1] == (pytest.approx(0.25 * 0.9), "torch")  # a quarter of the file: the bar moved


def _private_ca(folder: Path) -> tuple[Path, Path, Path]:
    """A company's root certificate and a server certificate for 127.0.0.1 signed by it, as TLS
    inspection by a proxy or an antivirus presents them: the CA file, the server's certificate and key."""
    import datetime
    import ipaddress

    LOCAL = "127.0.0.1"

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    later = now + datetime.timedelta(days=1)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Example Corp TLS Inspection CA")])
    ca = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
        .serial_number(1).not_valid_before(now).not_valid_after(later)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(*[False] * 5, True, True, False, False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name).public_key(key.public_key()).serial_number(2)
        .not_valid_before(now).not_valid_after(later)
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(LOCAL))]), False)
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    pem = serialization.Encoding.PEM
    paths = folder / "ca.pem", folder / "server.pem", folder / "server.key"
    paths[0].write_bytes(ca.public_bytes(pem))
    paths[1].write_bytes(cert.public_bytes(pem))
    paths[2].write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return paths


def test_a_company_certificate_is_told_apart_from_no_network_and_works_once_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ssl

    ca, cert, key = _private_ca(tmp_path)
    server = Server(tmp_path, os.urandom(2**20))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.httpd.socket = context.wrap_socket(server.httpd.socket, server_side=True)
    server.index = server.index.replace("http://", "https://")
    server.thread.start()
    try:
        monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "no-such-store.pem"))  # the CA is not trusted
        with pytest.raises(OSError) as refused:
            server.wheel()
        message, hint = explain(str(refused.value), "3.12")
        assert "certificate is not trusted" in message and "network" not in message
        assert "certificate store" in hint

        monkeypatch.setenv("SSL_CERT_FILE", str(ca))  # the company's root, installed as IT does
        path = wd.download(server.wheel(), tmp_path / "downloads", report=lambda line: None)
        assert path.read_bytes() == server.payload
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
