"""Download PyTorch's wheel so that an interrupted download resumes, check it, then install it with uv.

    python wheel_download.py --index URL --requirement torch==2.13.0+cu130 --dest DIR \\
        --uv UV --python PY [--package-index URL]

Run by the runtime's own Python in the setup's PyTorch step (the frozen launcher has no TLS of its own;
this Python has, with the system's certificates on Windows). The CUDA wheel is up to 3 GB: uv starts a
failed download over, on the next try and the next start alike; here the bytes stay in
``DIR/<wheel>.part``, each try and each start asks for the rest (HTTP range), and the whole file must
match the sha256 the index lists before it is installed. PyTorch's libraries then come from the
package index (a mirror, if the user set one), not from PyTorch's. When the index does not list a
wheel for this Python and platform the way download.pytorch.org does, uv installs the requirement
from the index itself, as before.

Standard library only: it runs before anything else is installed in the runtime.
"""

from __future__ import annotations

import argparse
import hashlib
import html.parser
import http.client
import platform
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

CHUNK = 1 << 20
ATTEMPTS = 8
"""Tries within one start; each asks only for the bytes still missing."""
TIMEOUT_S = 60.0
"""A download that receives nothing for this long is stopped (not tried again: a stalled network stays
stalled), with a sentence that names the server and the mirror setting."""
REPORT_EVERY_S = 2.0
RETRYABLE_HTTP = {408, 429, 500, 502, 503, 504}


class DownloadError(Exception):
    """The wheel could not be downloaded or is damaged (the message says which)."""


class Stalled(DownloadError):
    """Nothing arrived for :data:`TIMEOUT_S`; the bytes so far are kept for the next start."""


@dataclass(frozen=True)
class Wheel:
    """A wheel an index lists: its file name, address and the sha256 the index gives (may be empty)."""

    filename: str
    url: str
    sha256: str


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.hrefs.append(href)


def listed_wheels(page: str, page_url: str) -> list[Wheel]:
    """The wheels a PEP 503 project page links to, with their sha256 fragments."""
    parser = _Links()
    parser.feed(page)
    wheels = []
    for href in parser.hrefs:
        address, _, fragment = urllib.parse.urljoin(page_url, href).partition("#")
        filename = urllib.parse.unquote(address.rsplit("/", 1)[-1])
        if filename.endswith(".whl"):
            digest = fragment.removeprefix("sha256=") if fragment.startswith("sha256=") else ""
            wheels.append(Wheel(filename, address, digest))
    return wheels


def platform_fits(tag: str, system: str, machine: str, glibc: tuple[int, int]) -> bool:
    """Whether a wheel's platform tag runs here (``system``: ``windows`` or ``linux``)."""
    machine = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine.lower(), machine.lower())
    if system == "windows":
        return tag == {"x86_64": "win_amd64", "aarch64": "win_arm64"}.get(machine, "")
    if not tag.endswith("_" + machine):
        return False
    if tag == f"linux_{machine}":
        return True
    legacy = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}
    found = re.fullmatch(r"manylinux_(\d+)_(\d+)_.+", tag)
    needs = (int(found.group(1)), int(found.group(2))) if found else legacy.get(tag.rsplit("_", 2)[0])
    return needs is not None and needs <= glibc


def pick(
    wheels: list[Wheel],
    requirement: str,
    python: tuple[int, int],
    system: str,
    machine: str,
    glibc: tuple[int, int],
) -> Wheel | None:
    """The wheel of ``requirement`` (``name==version``) for this Python and platform, if listed."""
    name, _, version = requirement.partition("==")
    tag = f"cp{python[0]}{python[1]}"
    for wheel in wheels:
        parts = wheel.filename[: -len(".whl")].split("-")
        if len(parts) != 5:  # name-version-python-abi-platform (no build tag)
            continue
        wheel_name, wheel_version, py, abi, platforms = parts
        if wheel_name.lower() != name.lower().replace("-", "_") or wheel_version != version:
            continue
        if (
            py == tag
            and abi == tag
            and any(platform_fits(p, system, machine, glibc) for p in platforms.split("."))
        ):
            return wheel
    return None


def _size(value: int) -> str:
    return f"{value / 2**20:,.0f} MB" if value < 2**30 else f"{value / 2**30:,.2f} GB"


class Progress:
    """Lines for the setup's log: how much, how fast, how long still (at most one per ``every_s``)."""

    def __init__(self, name: str, report: Callable[[str], None], every_s: float = REPORT_EVERY_S) -> None:
        self.name, self.report, self.every_s = name, report, every_s
        self.started = self.last = time.monotonic()
        self.first: int | None = None

    def update(self, have: int, total: int | None, final: bool = False) -> None:
        now = time.monotonic()
        if self.first is None:
            self.first = have
        if not final and now - self.last < self.every_s:
            return
        self.last = now
        speed = (have - self.first) / max(now - self.started, 1e-6)
        if total:
            left = f", about {(total - have) / speed / 60:.0f} min left" if speed > 0 and have < total else ""
            self.report(
                f"Downloading {self.name}: {_size(have)} of {_size(total)} ({have * 100 // total}%), "
                f"{speed / 2**20:.1f} MB/s{left}"
            )
        else:
            self.report(f"Downloading {self.name}: {_size(have)}, {speed / 2**20:.1f} MB/s")


def download(
    wheel: Wheel,
    folder: Path,
    report: Callable[[str], None] = print,
    attempts: int = ATTEMPTS,
    timeout_s: float = TIMEOUT_S,
    wait: Callable[[float], None] | None = None,
) -> Path:
    """``wheel`` in ``folder``, complete and checked; the bytes of an earlier try are kept and resumed.

    Raises:
        DownloadError: The network failed ``attempts`` times (the part is kept for the next start), the
            server refused, or the file does not match its sha256 (it is deleted).
    """
    folder.mkdir(parents=True, exist_ok=True)
    done, part = folder / wheel.filename, folder / (wheel.filename + ".part")
    if done.is_file() and wheel.sha256 and _sha256(done) == wheel.sha256:
        report(f"{wheel.filename} was downloaded before and is complete.")
        return done
    progress = Progress(wheel.filename, report)
    error = ""
    for attempt in range(attempts):
        have = part.stat().st_size if part.exists() else 0
        if have:
            report(f"Resuming the download at {_size(have)}.")
        try:
            if _fetch(wheel.url, part, have, timeout_s, progress):
                break
            error = "the connection ended before the file did"
        except urllib.error.HTTPError as exc:
            if exc.code not in RETRYABLE_HTTP:
                message = f"failed to download {wheel.filename}: the server answered {exc.code} {exc.reason}"
                raise DownloadError(message) from exc
            error = f"the server answered {exc.code} {exc.reason}"
        except (OSError, http.client.HTTPException) as exc:  # URLError, resets, timeouts, cut connections
            if isinstance(exc, TimeoutError) or isinstance(getattr(exc, "reason", None), TimeoutError):
                host = urllib.parse.urlsplit(wheel.url).hostname or wheel.url
                raise Stalled(
                    f"no data came from {host} for {timeout_s:.0f} s, so the download of {wheel.filename} "
                    f"was stopped; the {_size(part.stat().st_size if part.exists() else 0)} downloaded so "
                    'far are kept. Set a PyTorch mirror (the setup window\'s "PyTorch mirror" field, or '
                    "--torch-index-url) or check the network, then start again"
                ) from exc
            error = str(getattr(exc, "reason", "") or exc) or type(exc).__name__
        if attempt + 1 < attempts:
            pause = min(2.0**attempt, 30.0)
            report(f"The download was interrupted ({error}); trying again in {pause:.0f} s.")
            (wait or time.sleep)(pause)
    else:
        kept = _size(part.stat().st_size if part.exists() else 0)
        raise DownloadError(
            f"failed to download {wheel.filename} after {attempts} tries: {error}; the {kept} "
            "downloaded so far are kept, and the next start resumes from there"
        )
    report(f"Checking {wheel.filename} (sha256) ...")
    if wheel.sha256 and _sha256(part) != wheel.sha256:
        part.unlink()
        raise DownloadError(
            f"sha256 mismatch: {wheel.filename} is damaged; it was deleted, the next try downloads it again"
        )
    part.replace(done)
    return done


def _fetch(url: str, part: Path, have: int, timeout_s: float, progress: Progress) -> bool:
    """Append to ``part`` what the server sends from byte ``have`` on; whether the file is complete."""
    headers = {"User-Agent": "FinetuneStudio-setup", "Accept-Encoding": "identity"}
    if have:
        headers["Range"] = f"bytes={have}-"
    try:
        response = urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout_s)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and have:  # nothing after the bytes we have: the file is complete
            return True
        raise
    with response:
        start = have
        if response.status == 206:
            found = re.match(r"bytes (\d+)-", response.headers.get("Content-Range", ""))
            if found is None or int(found.group(1)) != have:
                raise http.client.HTTPException("the server sent another part of the file than asked for")
        elif have:  # 200: the server ignores ranges and sends the whole file again
            start = 0
        length = response.headers.get("Content-Length")
        total = start + int(length) if length and length.isdigit() else None
        written = start
        with open(part, "ab" if start else "wb") as out:
            while chunk := response.read1(CHUNK):  # what has arrived: kept even if the next read stalls
                out.write(chunk)
                written += len(chunk)
                progress.update(written, total)
        progress.update(written, total, final=True)
        return total is None or written >= total


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(CHUNK * 8):
            digest.update(block)
    return digest.hexdigest()


def find_wheel(index: str, requirement: str, timeout_s: float = TIMEOUT_S) -> Wheel | None:
    """The wheel of ``requirement`` for the running Python and platform that ``index`` lists."""
    name = re.sub(r"[-_.]+", "-", requirement.partition("==")[0]).lower()
    page_url = index.rstrip("/") + f"/{name}/"
    request = urllib.request.Request(
        page_url, headers={"User-Agent": "FinetuneStudio-setup", "Accept": "text/html"}
    )
    with urllib.request.urlopen(request, timeout=timeout_s) as response:
        page = response.read().decode("utf-8", "replace")
    system = "windows" if sys.platform == "win32" else "linux"
    libc, version = platform.libc_ver()
    glibc = tuple(int(x) for x in version.split(".")[:2]) if libc == "glibc" and version else (0, 0)
    return pick(
        listed_wheels(page, page_url), requirement, sys.version_info[:2], system, platform.machine(), glibc
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True, help="PyTorch's index (or its mirror)")
    parser.add_argument("--requirement", required=True, help="torch==VERSION+TAG")
    parser.add_argument("--dest", required=True, type=Path, help="where the download is kept until installed")
    parser.add_argument("--uv", required=True)
    parser.add_argument("--python", required=True, help="the runtime's Python, for uv")
    parser.add_argument("--package-index", default="", help="the package index for PyTorch's libraries")
    args = parser.parse_args(argv)
    child: list[subprocess.Popen] = []

    def stop(signum: int, frame: object) -> None:  # Cancel: uv under us ends too
        for proc in child:
            proc.terminate()
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    install = [args.uv, "pip", "install", "--python", args.python]
    path = None
    try:
        wheel = find_wheel(args.index, args.requirement)
        if wheel is None:
            print(f"The index lists no {args.requirement} wheel for this Python; uv installs it.", flush=True)
    except (OSError, http.client.HTTPException, ValueError) as exc:
        wheel = None
        print(f"The index could not be read ({exc}); uv installs {args.requirement} itself.", flush=True)
    if wheel is None:
        command = [*install, "--index-url", args.index, args.requirement]
    else:
        try:
            path = download(wheel, args.dest, report=lambda line: print(line, flush=True))
        except DownloadError as exc:
            print(f"error: {exc}", flush=True)
            return 3
        index = ["--index-url", args.package_index] if args.package_index else []
        command = [*install, *index, str(path)]
    print("$ " + re.sub(r"://[^/@\s]+@", "://***@", " ".join(command)), flush=True)  # no password in logs
    child.append(subprocess.Popen(command))
    # The wheel stays until the app has started from the finished runtime (Runtime.release_downloads):
    # a setup that fails after this step goes on from here at the next start, without downloading again.
    return child[0].wait()


if __name__ == "__main__":
    sys.exit(main())
