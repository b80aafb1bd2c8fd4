"""The server's API key: made here, kept in the OS keyring, never written to a file or a log."""

from __future__ import annotations

import contextlib
import secrets
from dataclasses import dataclass

from desktop.core.serving.addresses import is_local
from desktop.core.system.secrets import KEYRING_SERVICE, keyring_backend

__all__ = ["KEY_ENV", "ApiKey", "api_key", "is_local"]  # is_local: where callers have it from

KEY_NAME = "serve-api-key"
KEY_ENV = "FINETUNE_STUDIO_API_KEY"
"""How the app hands the key to the server it starts: the environment, never the command line (which
other users of the computer can read)."""


@dataclass(frozen=True)
class ApiKey:
    """A key, and what the user must be told about it: ``new`` (show it now, once) and ``kept`` (it is
    in the keyring for the next start; without a keyring a new one is made each time)."""

    value: str
    new: bool
    kept: bool


def api_key(renew: bool = False) -> ApiKey:
    """The key kept in the keyring, or a new one (then kept there when a keyring can hold it)."""
    keyring = keyring_backend()
    if keyring is not None and not renew:
        with contextlib.suppress(Exception):
            saved = keyring.get_password(KEYRING_SERVICE, KEY_NAME)
            if saved:
                return ApiKey(saved, new=False, kept=True)
    value = "fts-" + secrets.token_urlsafe(32)
    kept = False
    if keyring is not None:
        with contextlib.suppress(Exception):
            keyring.set_password(KEYRING_SERVICE, KEY_NAME, value)
            kept = keyring.get_password(KEYRING_SERVICE, KEY_NAME) == value
    return ApiKey(value, new=True, kept=kept)
