"""What a failed setup command means for the user, and what to do next.

uv's and Python's output is read for the known causes (a full disk, no network, a certificate a
company's TLS inspection signed, a proxy that wants a password, the missing C++ runtime, Windows'
paging file, a file another program holds or an antivirus blocked, a path or a file too large for the
drive, ...); the setup window shows the sentence and the remedy, the log keeps the output.
"""

from __future__ import annotations

import re
import sys

from desktop.core.system.messages import msg

WINDOWS = sys.platform == "win32"

NETWORK = re.compile(
    r"dns error|failed to fetch|failed to download|could not connect|connection (refused|reset)|"
    r"tcp connect error|timed out|network is unreachable|error sending request|no such host",
    re.IGNORECASE,
)


PROXY_AUTHENTICATION = re.compile(
    r"proxy[- ]auth(entication|orization)[- ]required|\b407 proxy|status(?: code)?:? 407\b", re.IGNORECASE
)
"""uv (reqwest): ``407 Proxy Authentication Required`` or ``proxy authorization required`` (a tunnel);
Python: ``Tunnel connection failed: 407 Proxy Authentication Required``."""

OS_ERROR = re.compile(r"(os error|winerror|errno)\s*(\d+)", re.IGNORECASE)
"""uv's ``(os error 32)`` (Windows' own code there, errno elsewhere), Python's ``[WinError 32]`` and
``[Errno 27]`` (a C errno, on Windows too). Windows words them in its display language: the code is
what can be read."""

QUOTED_PATH = re.compile(r"[`'\"]([\\?]*[A-Za-z]:\\[^`'\"]*)[`'\"]")
"""A Windows path as uv (in backticks) and Python (in quotes, backslashes doubled) print it."""
LONG_PATH = 260
"""Windows' MAX_PATH: a longer path fails unless long paths are enabled."""

CERTIFICATE = re.compile(
    r"invalid peer certificate|unknownissuer|certificate verify failed|self[- ]signed certificate|"
    r"certificate (has expired|is not valid)|unable to get local issuer certificate",
    re.IGNORECASE,
)


STALLED = re.compile(r"no data came from (\S+) for \d+ s")
"""``wheel_download.py``'s sentence for a download that received nothing for a minute."""


def explain(output: str, python: str, windows: bool = WINDOWS) -> tuple[str, str]:
    """What a failed uv or Python command means for the user, and what to do next (``python``: the
    runtime's Python version, named when it could not be set up; ``windows``: whether uv's ``os error``
    codes are Windows' or errno)."""
    text = output.lower()
    win_codes, errnos = error_codes(output, windows)
    if stalled := STALLED.search(output):  # wheel_download.py: a minute without a byte
        return (
            msg("The download stalled: nothing came from {host} for a minute.", host=stalled.group(1)),
            msg(
                'Set a PyTorch mirror (the "PyTorch mirror" field below, or --torch-index-url) or check '
                "the network, then try again: the part downloaded so far is kept."
            ),
        )
    if "no space left" in text or 28 in errnos or 112 in win_codes or "disk full" in text:
        return (
            msg("The disk became full while installing."),
            msg(
                "Free a few gigabytes on that drive, then start Finetune Studio again; it finishes the setup."
            ),
        )
    if "network was disabled" in text or "not found in the provided package locations" in text:
        return (
            msg("A package is missing from the offline package."),
            msg("Use the complete offline installer, or start while connected to the internet."),
        )
    if "sha256 mismatch" in text:
        return (
            msg("The PyTorch download was damaged: it does not match its checksum."),
            msg(
                "Start Finetune Studio again: it downloads the file again. If this repeats, a proxy or an "
                "antivirus is changing downloads: set a PyTorch mirror, or ask your IT department."
            ),
        )
    if file_problem := _file_problem(output, text, win_codes, errnos, windows):
        return file_problem
    if PROXY_AUTHENTICATION.search(output):
        return (
            msg("The proxy asks for a user name and password (HTTP 407: proxy authentication required)."),
            msg(
                "Set the proxy with them: in the setup window's Proxy field, or start "
                "FinetuneStudio --proxy http://USER:PASSWORD@HOST:PORT (the password is not written into "
                "any file). A proxy that signs in with your Windows account alone (NTLM, Kerberos) needs "
                "a user name and password from your IT department."
            ),
        )
    if CERTIFICATE.search(output):
        return (
            msg("The download was refused: the server's certificate is not trusted on this computer."),
            msg(
                "A company network or an antivirus that inspects secure connections uses its own "
                "certificate: install it in the system's certificate store (your IT department has it), "
                "or set a mirror or proxy you are given; then try again."
            ),
        )
    if NETWORK.search(output):
        return (
            msg("Could not download the packages: the network or the package server is not reachable."),
            msg("Check the internet connection (or the proxy), or set a mirror, then try again."),
        )
    if "no interpreter found" in text or ("python" in text and "download" in text):
        return (
            msg("Python {version} could not be set up.", version=python),
            msg("Check the internet connection, then try again; uv downloads Python the first time."),
        )
    if "winerror 1455" in text or "paging file is too small" in text:
        return (
            msg(
                "Windows ran out of virtual memory loading PyTorch: the paging file is too small "
                "(error 1455)."
            ),
            msg(
                "Let Windows manage the paging file size (Advanced system settings > Performance > Settings "
                "> Advanced > Virtual memory), keep a few GB free on the system drive, restart Windows, then "
                "start Finetune Studio again."
            ),
        )
    if "dll load failed" in text or "winerror 126" in text or "msvcp140" in text or "vcruntime140" in text:
        return (
            msg("PyTorch cannot load: the Microsoft Visual C++ runtime is missing on this PC."),
            msg(
                "Install the Microsoft Visual C++ 2015-2022 Redistributable (x64) from "
                "https://aka.ms/vs/17/release/vc_redist.x64.exe, then start Finetune Studio again."
            ),
        )
    if "permission denied" in text or "access is denied" in text or 5 in win_codes:
        return (
            msg("A file could not be written: access was denied."),
            msg("Close other Finetune Studio windows (and antivirus scans of its folder), then try again."),
        )
    return (
        msg("Setting up the runtime failed."),
        msg("The log has the details. Try again; if it fails again, start with --repair."),
    )


def error_codes(output: str, windows: bool = WINDOWS) -> tuple[set[int], set[int]]:
    """The Windows error codes and the errno numbers that ``output`` names."""
    win_codes: set[int] = set()
    errnos: set[int] = set()
    for kind, number in OS_ERROR.findall(output):
        kind = kind.lower()
        windows_code = kind == "winerror" or (kind == "os error" and windows)
        (win_codes if windows_code else errnos).add(int(number))
    return win_codes, errnos


def _file_problem(
    output: str, text: str, win_codes: set[int], errnos: set[int], windows: bool
) -> tuple[str, str] | None:
    """A file Windows would not write or load: another program holds it, the antivirus or Smart App
    Control blocked it, its path or its size is too much for the drive."""
    if win_codes & {32, 33} or "being used by another process" in text:
        return (
            msg("A file of the runtime is in use by another program, so it cannot be replaced (error 32)."),
            msg(
                "Close every Finetune Studio window and command-line run; wait until an antivirus scan, "
                "a backup or OneDrive has finished with the data folder (or restart Windows); then try "
                "again."
            ),
        )
    if 225 in win_codes or "contains a virus" in text or "virus detected" in text:
        return (
            msg("The antivirus blocked a file of the setup as a threat (error 225)."),
            msg(
                "It is usually a false alarm on a Python or PyTorch file. Open Windows Security > Virus "
                "& threat protection > Protection history, allow the item when it is a file of Finetune "
                "Studio's data folder, then try again; or ask your IT department."
            ),
        )
    if 4551 in win_codes or "application control policy has blocked" in text:
        return (
            msg(
                "Windows blocked a file of the runtime: Smart App Control or a company's application "
                "control policy does not allow it (error 4551)."
            ),
            msg(
                "Smart App Control judges each Python and PyTorch file by its maker's signature and "
                "reputation (the README explains the choice): turn it off in Windows Security > App & "
                "browser control, or on a company PC ask your IT department to allow the data folder; "
                "then start Finetune Studio again."
            ),
        )
    paths = [path.replace("\\\\", "\\") for path in QUOTED_PATH.findall(output)]
    too_long = any(len(path) >= LONG_PATH for path in paths)
    if (
        206 in win_codes
        or "filename or extension is too long" in text
        or "long path support" in text
        or (windows and "name too long" in text)
        or (too_long and (win_codes & {2, 3} or errnos & {2}))
    ):
        return (
            msg("A file path in the runtime is too long for Windows (260 characters at most)."),
            msg(
                "Enable long paths (as administrator: reg add HKLM\\SYSTEM\\CurrentControlSet\\Control\\"
                "FileSystem /v LongPathsEnabled /t REG_DWORD /d 1 /f, then restart Windows), or move "
                "the data folder to a short path (FinetuneStudio --data-folder D:\\FinetuneStudio); then "
                "try again."
            ),
        )
    if 223 in win_codes or 27 in errnos or "file too large" in text or "exceeds the limit allowed" in text:
        return (
            msg(
                "A file is too large for the data drive: it is formatted FAT32, which holds files of at "
                "most 4 GB."
            ),
            msg(
                "Move the data folder to a drive formatted NTFS or ext4 (FinetuneStudio --data-folder "
                "FOLDER), or convert that drive to NTFS; then try again."
            ),
        )
    return None
