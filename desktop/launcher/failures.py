"""What a failed setup command means for the user, and what to do next.

uv's and Python's output is read for the known causes (a full disk, no network, a certificate a
company's TLS inspection signed, the missing C++ runtime, Windows' paging file, ...); the setup window
shows the sentence and the remedy, the log keeps the output.
"""

from __future__ import annotations

import re

from desktop.core.system.messages import msg

NETWORK = re.compile(
    r"dns error|failed to fetch|failed to download|could not connect|connection (refused|reset)|"
    r"tcp connect error|timed out|network is unreachable|error sending request|no such host",
    re.IGNORECASE,
)


CERTIFICATE = re.compile(
    r"invalid peer certificate|unknownissuer|certificate verify failed|self[- ]signed certificate|"
    r"certificate (has expired|is not valid)|unable to get local issuer certificate",
    re.IGNORECASE,
)


def explain(output: str, python: str) -> tuple[str, str]:
    """What a failed uv or Python command means for the user, and what to do next (``python``: the
    runtime's Python version, named when it could not be set up)."""
    text = output.lower()
    if "no space left" in text or "os error 28" in text or "disk full" in text:
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
    if "permission denied" in text or "access is denied" in text or "os error 5" in text:
        return (
            msg("A file could not be written: access was denied."),
            msg("Close other Finetune Studio windows (and antivirus scans of its folder), then try again."),
        )
    return (
        msg("Setting up the runtime failed."),
        msg("The log has the details. Try again; if it fails again, start with --repair."),
    )
