"""Keeping credentials out of what is shown, logged or saved, and commands safe to paste."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from collections.abc import Sequence

# scheme://user:password@host or scheme://token@host: everything between "//" and "@".
_URL_CREDENTIALS = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/\s@\"']+@")
REDACTED = "***"


def redact(text: str) -> str:
    """``text`` with the credentials of every URL in it replaced by ``***``.

    ``https://user:token@mirror.example/simple`` becomes ``https://***@mirror.example/simple``.
    """
    return _URL_CREDENTIALS.sub(lambda m: f"{m.group('scheme')}{REDACTED}@", text)


def has_credentials(url: str) -> bool:
    """Whether ``url`` carries a user name or password."""
    return redact(url) != url


def shell_join(args: Sequence[str], windows: bool | None = None) -> str:
    """A command line the user's shell runs as ``args``: quoted for cmd.exe on Windows, POSIX elsewhere."""
    windows = sys.platform == "win32" if windows is None else windows
    if windows:
        return subprocess.list2cmdline(list(args))
    return shlex.join(args)
