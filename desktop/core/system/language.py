"""Which language the user reads: English, Simplified or Traditional Chinese.

The order: ``--lang``, then the language chosen in the app (View > Language), then the operating
system's (the Windows UI language; ``LC_ALL`` / ``LC_MESSAGES`` / ``LANG`` elsewhere).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

ENGLISH, SIMPLIFIED, TRADITIONAL = "en", "zh_CN", "zh_TW"
LANGUAGES = {ENGLISH: "English", SIMPLIFIED: "简体中文", TRADITIONAL: "繁體中文"}
"""Each supported language with its name as its readers write it (for the menu)."""

# Chinese written with traditional characters: Taiwan, Hong Kong, Macau, and explicit Hant.
_TRADITIONAL_REGIONS = ("TW", "HK", "MO", "HANT")


def normalize(name: str) -> str:
    """``zh_CN``, ``zh_TW`` or ``en`` for a locale or language tag (``zh-Hans-CN``, ``zh_HK.UTF-8``,
    ``en_US``, ``C``...)."""
    tag = name.split(".")[0].split("@")[0].replace("-", "_").upper()
    if not tag.startswith("ZH"):
        return ENGLISH
    parts = tag.split("_")[1:]
    return TRADITIONAL if any(p in _TRADITIONAL_REGIONS for p in parts) else SIMPLIFIED


def system_language(environ: Mapping[str, str] | None = None) -> str:
    """The operating system's language, as one of :data:`LANGUAGES`."""
    if sys.platform == "win32" and environ is None:
        name = _windows_ui_locale()
        if name:
            return normalize(name)
    environ = os.environ if environ is None else environ
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):  # the POSIX order of precedence
        value = environ.get(variable, "")
        if value:
            return normalize(value)
    return ENGLISH


def _windows_ui_locale() -> str:
    """The Windows display language, e.g. ``zh-CN`` (not the region format)."""
    try:
        import ctypes

        kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
        buffer = ctypes.create_unicode_buffer(85)
        if kernel32.LCIDToLocaleName(kernel32.GetUserDefaultUILanguage(), buffer, len(buffer), 0):
            return buffer.value
    except (AttributeError, OSError):
        pass
    return ""


def choose(explicit: str = "", saved: str = "", environ: Mapping[str, str] | None = None) -> str:
    """The language to show: ``explicit`` (``--lang``), else ``saved`` (the app's), else the system's."""
    for value in (explicit, saved):
        if value in LANGUAGES:
            return value
    return system_language(environ)
