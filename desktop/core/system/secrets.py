"""Keeping credentials out of what is shown, logged or saved, and commands safe to paste."""

from __future__ import annotations

import contextlib
import re
import shlex
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

# scheme://user:password@host or scheme://token@host: everything between "//" and "@".
_URL_CREDENTIALS = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/\s@\"']+@")
REDACTED = "***"
# Hugging Face access tokens (hf_...) and bearer headers, wherever they appear in a message or log.
_TOKENS = re.compile(r"\bhf_[A-Za-z0-9]{20,}\b|(?<=Bearer )[A-Za-z0-9._~+/=-]{8,}")


def redact(text: str) -> str:
    """``text`` with the credentials of every URL in it, and access tokens, replaced by ``***``.

    ``https://user:token@mirror.example/simple`` becomes ``https://***@mirror.example/simple``;
    ``hf_AbCd...`` and what follows ``Bearer`` become ``***``.
    """
    text = _URL_CREDENTIALS.sub(lambda m: f"{m.group('scheme')}{REDACTED}@", text)
    return _TOKENS.sub(REDACTED, text)


def has_credentials(url: str) -> bool:
    """Whether ``url`` carries a user name or password."""
    return redact(url) != url


KEYRING_SERVICE = "FinetuneStudio"


def remember_url(name: str, url: str) -> str:
    """What a settings file may hold for ``url``: the URL itself when it carries no credentials;
    otherwise the redacted URL, with the whole one kept in the OS keyring under ``name``.

    Without a usable keyring the credentials are not kept at all (the user types them again).
    """
    keyring = keyring_backend()
    if not has_credentials(url):
        if keyring is not None:
            with contextlib.suppress(Exception):
                keyring.delete_password(KEYRING_SERVICE, name)
        return url
    if keyring is not None:
        with contextlib.suppress(Exception):
            keyring.set_password(KEYRING_SERVICE, name, url)
    return redact(url)


def recall_url(name: str, saved: str) -> str:
    """The URL that :func:`remember_url` saved as ``saved``, with its credentials from the keyring.

    When the keyring no longer has them, the URL without credentials.
    """
    if f"://{REDACTED}@" not in saved:
        return saved
    keyring = keyring_backend()
    full = None
    if keyring is not None:
        with contextlib.suppress(Exception):
            full = keyring.get_password(KEYRING_SERVICE, name)
    if full and redact(full) == saved:
        return full
    return _URL_CREDENTIALS.sub(lambda m: m.group("scheme"), saved)


def keyring_backend() -> Any:
    try:
        import keyring
    except Exception:  # not installed (the frozen launcher) or no backend
        return None
    return keyring


def shell_join(args: Sequence[str], windows: bool | None = None) -> str:
    """A command line the user's shell runs as ``args``: quoted for cmd.exe on Windows, POSIX elsewhere."""
    windows = sys.platform == "win32" if windows is None else windows
    if windows:
        return subprocess.list2cmdline(list(args))
    return shlex.join(args)
