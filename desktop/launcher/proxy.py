"""The proxy Windows is set to, as the variables uv and the hub client read (``HTTPS_PROXY``, ...).

uv and huggingface_hub follow ``HTTPS_PROXY`` / ``HTTP_PROXY`` / ``NO_PROXY`` only; a company network
sets its proxy in Windows' settings instead, as a server (``ProxyServer`` under
``HKCU\\...\\Internet Settings``, ``host:port`` or ``http=host:port;https=host:port``) or as an
automatic configuration script (a PAC file: ``AutoConfigURL``, or "Automatically detect settings").
Windows evaluates a script itself, through WinHTTP, for the URLs the setup and the app fetch from; a
manual server is used when there is no script or it gave no answer, as Windows does. A proxy variable
the user set wins, and so does the launcher's ``--proxy``: nothing is read then.

Standard library only (the frozen launcher has nothing else); the registry and WinHTTP are reached
through a :class:`ProxyReader`, so the rules are tested anywhere with a fake one.
"""

from __future__ import annotations

import ipaddress
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit

PROXY_VARIABLES = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY")
NO_PROXY = "NO_PROXY"
LOCAL = ("localhost", "127.0.0.1", "::1")
"""Never through a proxy: the app's own local servers and a hub served on this computer."""

URLS = (
    "https://pypi.org/simple/",
    "https://download.pytorch.org/whl/",
    "https://github.com/",
    "https://huggingface.co/",
    "https://www.modelscope.cn/",
)
"""Where the setup and the app fetch from by default (packages, PyTorch, uv's Python, the hubs)."""


@dataclass(frozen=True)
class InternetSettings:
    """What Windows' proxy settings say (``HKCU\\Software\\Microsoft\\Windows\\CurrentVersion\\Internet
    Settings``).

    Attributes:
        proxy_enable: ``ProxyEnable``: the manual proxy server is on.
        proxy_server: ``ProxyServer``: ``host:port``, or ``http=host:port;https=host:port;...``.
        proxy_override: ``ProxyOverride``: hosts that go direct, ``;``-separated, ``<local>`` for
            names without a dot.
        auto_config_url: ``AutoConfigURL``: the automatic configuration script (a PAC file).
        auto_detect: "Automatically detect settings" (WPAD) is on.
    """

    proxy_enable: bool = False
    proxy_server: str = ""
    proxy_override: str = ""
    auto_config_url: str = ""
    auto_detect: bool = False


class ProxyReader(Protocol):
    """Where the settings come from: Windows' registry and WinHTTP (:class:`WindowsProxyReader`), or a
    fake in tests."""

    def settings(self) -> InternetSettings | None:
        """The user's proxy settings; ``None`` when they cannot be read."""

    def proxies_for_urls(self, urls: Sequence[str], settings: InternetSettings) -> list[str | None]:
        """The proxy the automatic configuration gives for each of ``urls`` (``host:port``, possibly
        a ``;``-separated list), ``""`` for a direct connection, ``None`` when there is no answer (no
        script found, a script that fails)."""


@dataclass(frozen=True)
class SystemProxy:
    """The proxy Windows uses, as the environment says it.

    Attributes:
        https: For ``https://`` URLs (``http://host:port``), or ``""``.
        http: For ``http://`` URLs, or ``""``.
        no_proxy: Hosts that go direct, as ``NO_PROXY`` writes them.
        origin: ``manual`` (the proxy server setting) or ``script`` (a PAC file, set or detected).
    """

    https: str
    http: str
    no_proxy: str
    origin: str


def proxy_environment(
    urls: Sequence[str] = URLS,
    environ: Mapping[str, str] | None = None,
    reader: ProxyReader | None = None,
    windows: bool = sys.platform == "win32",
) -> dict[str, str]:
    """The variables that give uv and the app Windows' proxy: ``HTTPS_PROXY``, ``HTTP_PROXY`` and
    ``NO_PROXY``, each only when there is something to say.

    Args:
        urls: What will be fetched, most important first (a script may answer per URL; the first
            URL's proxy is the one used, and hosts the script sends direct go into ``NO_PROXY``).
        environ: The environment the children get (default: this process's): a proxy variable in it
            means the user chose, and nothing is returned; a ``NO_PROXY`` in it is kept.
        reader: Where Windows' settings come from (default: the registry and WinHTTP).
        windows: Whether this is Windows; elsewhere the environment is the only source.

    Returns:
        The variables to add; empty off Windows, when the user set a proxy variable, and when
        Windows uses no proxy.
    """
    environ = os.environ if environ is None else environ
    names = {name.upper() for name, value in environ.items() if value}
    if not windows or names & set(PROXY_VARIABLES):
        return {}
    found = system_proxy(urls, reader or WindowsProxyReader())
    if found is None:
        return {}
    env = {"HTTPS_PROXY": found.https, "HTTP_PROXY": found.http}
    if NO_PROXY not in names:
        env[NO_PROXY] = found.no_proxy
    return {name: value for name, value in env.items() if value}


def system_proxy(urls: Sequence[str], reader: ProxyReader) -> SystemProxy | None:
    """The proxy Windows' settings give for ``urls``, or ``None`` for none (direct connections).

    A configuration script (set or detected) comes first; when it gives no answer for any URL, the
    manual proxy server, when it is on: the order Windows follows.
    """
    try:
        settings = reader.settings()
    except OSError:
        return None
    if settings is None:
        return None
    urls = [url for url in urls if urlsplit(url).scheme in ("http", "https")]  # a file:// mirror has none
    if urls and (settings.auto_config_url or settings.auto_detect):
        found = _from_script(urls, settings, reader)
        if found is not None:
            return found if found.https or found.http else None
    if settings.proxy_enable and settings.proxy_server.strip():
        return _from_manual(settings)
    return None


def _from_script(urls: Sequence[str], settings: InternetSettings, reader: ProxyReader) -> SystemProxy | None:
    try:
        found = reader.proxies_for_urls(urls, settings)
    except OSError:
        return None
    answers = {url: answer for url, answer in zip(urls, found, strict=False) if answer is not None}
    if not answers:
        return None
    chosen = next((_first_proxy(answer) for answer in answers.values() if _first_proxy(answer)), "")
    direct = [urlsplit(url).hostname or "" for url, answer in answers.items() if not _first_proxy(answer)]
    no_proxy = ",".join(dict.fromkeys([*LOCAL, *filter(None, direct)])) if chosen else ""
    return SystemProxy(chosen, chosen, no_proxy, "script")


def _from_manual(settings: InternetSettings) -> SystemProxy | None:
    servers = parse_proxy_server(settings.proxy_server)
    https, http = servers.get("https", ""), servers.get("http", "")
    if not (https or http):
        return None
    return SystemProxy(https, http, no_proxy_from_override(settings.proxy_override), "manual")


def parse_proxy_server(value: str) -> dict[str, str]:
    """``ProxyServer`` as proxy URLs by scheme: ``{"http": "http://host:port", "https": ...}``.

    ``host:port`` serves every scheme; ``http=a:1;https=b:2`` names each (a scheme left out goes
    direct, as in Windows). ``socks=`` entries are left out: uv and the hub client speak to HTTP
    proxies here.
    """
    entries = [part.strip() for part in value.replace(" ", ";").split(";") if part.strip()]
    if not entries:
        return {}
    if not any("=" in entry for entry in entries):
        url = _as_url(entries[0])
        return {"http": url, "https": url}
    found: dict[str, str] = {}
    for entry in entries:
        scheme, _, server = entry.partition("=")
        scheme = scheme.strip().lower()
        if scheme in ("http", "https") and server.strip() and scheme not in found:
            found[scheme] = _as_url(server.strip())
    return found


def no_proxy_from_override(value: str) -> str:
    """``ProxyOverride`` as ``NO_PROXY``: ``*.corp.example`` becomes ``.corp.example``, ``10.*`` the
    network ``10.0.0.0/8``; ``<local>`` (names without a dot, which ``NO_PROXY`` cannot say) becomes
    this computer's own names. Patterns ``NO_PROXY`` cannot express are left out."""
    hosts: list[str] = list(LOCAL)
    for entry in (part.strip() for part in value.split(";")):
        if not entry or entry.lower() == "<local>":
            continue
        entry = entry.split("://", 1)[-1].rstrip("/")
        if entry.count(":") == 1:  # host:port: the port is not NO_PROXY's business
            entry = entry.split(":")[0]
        network = _wildcard_network(entry)
        if network:
            hosts.append(network)
        elif entry.startswith("*.") and "*" not in entry[2:]:
            hosts.append(entry[1:])
        elif "*" not in entry:
            hosts.append(entry)
    return ",".join(dict.fromkeys(hosts))


def _wildcard_network(entry: str) -> str:
    """``10.*`` or ``192.168.1.*`` as a network (``10.0.0.0/8``); ``""`` for anything else."""
    parts = entry.split(".")
    if not 1 <= len(parts) <= 4 or "*" not in parts:
        return ""
    fixed = parts[: parts.index("*")]
    if any(part != "*" for part in parts[len(fixed) :]) or not all(p.isdigit() for p in fixed):
        return ""
    try:
        address = ipaddress.IPv4Address(".".join([*fixed, *["0"] * (4 - len(fixed))]))
    except ValueError:
        return ""
    return f"{address}/{8 * len(fixed)}" if fixed else ""


def _first_proxy(answer: str) -> str:
    """The first proxy of WinHTTP's answer (``a:8080;b:8080``), as a URL; ``""`` for direct."""
    for entry in answer.replace(" ", ";").split(";"):
        entry = entry.strip()
        if not entry or entry.upper() == "DIRECT":
            continue
        if "=" in entry:
            servers = parse_proxy_server(answer)
            return servers.get("https") or servers.get("http", "")
        return _as_url(entry)
    return ""


def _as_url(server: str) -> str:
    return server if "://" in server else f"http://{server}"


# The Windows reader: the registry and WinHTTP through ctypes. Nothing below runs off Windows.

INTERNET_SETTINGS = r"Software\Microsoft\Windows\CurrentVersion\Internet Settings"
CONNECTIONS = INTERNET_SETTINGS + r"\Connections"
AUTO_DETECT_FLAG = 0x08
"""In ``DefaultConnectionSettings``' flags byte (offset 8): "Automatically detect settings"."""
TIMEOUT_MS = 5000
"""How long WinHTTP may take to find and fetch a script: a network without one answers sooner."""


class WindowsProxyReader:
    """The current user's settings from the registry; scripts evaluated by WinHTTP."""

    def settings(self) -> InternetSettings | None:
        import winreg

        try:
            with winreg.OpenKey(winreg.HKEY_CURRENT_USER, INTERNET_SETTINGS) as key:
                names = ("ProxyEnable", "ProxyServer", "ProxyOverride", "AutoConfigURL")
                values = {name: _value(key, name) for name in names}
        except OSError:
            return None
        try:
            with winreg.OpenKey(winreg.HKEY_CURRENT_USER, CONNECTIONS) as key:
                blob = _value(key, "DefaultConnectionSettings")
        except OSError:
            blob = None
        detect = isinstance(blob, bytes) and len(blob) > 8 and bool(blob[8] & AUTO_DETECT_FLAG)
        return InternetSettings(
            proxy_enable=values["ProxyEnable"] == 1,
            proxy_server=str(values["ProxyServer"] or ""),
            proxy_override=str(values["ProxyOverride"] or ""),
            auto_config_url=str(values["AutoConfigURL"] or ""),
            auto_detect=detect,
        )

    def proxies_for_urls(self, urls: Sequence[str], settings: InternetSettings) -> list[str | None]:
        return _winhttp_proxies(urls, settings.auto_config_url, settings.auto_detect)


def _value(key: object, name: str) -> object:
    import winreg

    try:
        return winreg.QueryValueEx(key, name)[0]  # type: ignore[arg-type]
    except OSError:
        return None


def _winhttp_proxies(urls: Sequence[str], config_url: str, detect: bool) -> list[str | None]:
    """``WinHttpGetProxyForUrl`` for each URL: Windows runs the script (downloaded, or found by WPAD)
    in one session, which fetches it once."""
    import ctypes
    from ctypes import wintypes

    class AutoProxyOptions(ctypes.Structure):
        _fields_ = [
            ("dwFlags", wintypes.DWORD),
            ("dwAutoDetectFlags", wintypes.DWORD),
            ("lpszAutoConfigUrl", wintypes.LPCWSTR),
            ("lpvReserved", ctypes.c_void_p),
            ("dwReserved", wintypes.DWORD),
            ("fAutoLogonIfChallenged", wintypes.BOOL),
        ]

    class ProxyInfo(ctypes.Structure):
        _fields_ = [
            ("dwAccessType", wintypes.DWORD),
            ("lpszProxy", ctypes.c_void_p),  # freed with GlobalFree, so kept as a pointer
            ("lpszProxyBypass", ctypes.c_void_p),
        ]

    winhttp = ctypes.WinDLL("winhttp", use_last_error=True)  # type: ignore[attr-defined]
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    text, dword, pointer = wintypes.LPCWSTR, wintypes.DWORD, ctypes.c_void_p
    winhttp.WinHttpOpen.restype = pointer
    winhttp.WinHttpOpen.argtypes = [text, dword, text, text, dword]
    winhttp.WinHttpSetTimeouts.argtypes = [pointer, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    winhttp.WinHttpGetProxyForUrl.argtypes = [
        pointer,
        text,
        ctypes.POINTER(AutoProxyOptions),
        ctypes.POINTER(ProxyInfo),
    ]
    winhttp.WinHttpGetProxyForUrl.restype = wintypes.BOOL
    winhttp.WinHttpCloseHandle.argtypes = [pointer]
    kernel32.GlobalFree.argtypes = [pointer]
    kernel32.GlobalFree.restype = pointer

    no_proxy, named_proxy = 1, 3  # WINHTTP_ACCESS_TYPE_NO_PROXY, WINHTTP_ACCESS_TYPE_NAMED_PROXY
    options = AutoProxyOptions()
    if detect:
        options.dwFlags |= 0x1  # WINHTTP_AUTOPROXY_AUTO_DETECT
        options.dwAutoDetectFlags = 0x1 | 0x2  # by DHCP, then by DNS (wpad.<domain>)
    if config_url:
        options.dwFlags |= 0x2  # WINHTTP_AUTOPROXY_CONFIG_URL
        options.lpszAutoConfigUrl = config_url
    options.fAutoLogonIfChallenged = True  # a script behind the company's Windows sign-in
    session = winhttp.WinHttpOpen("Finetune Studio", no_proxy, None, None, 0)
    if not session:
        return [None] * len(urls)
    answers: list[str | None] = []
    try:
        winhttp.WinHttpSetTimeouts(session, TIMEOUT_MS, TIMEOUT_MS, TIMEOUT_MS, TIMEOUT_MS)
        for url in urls:
            info = ProxyInfo()
            if not winhttp.WinHttpGetProxyForUrl(session, url, ctypes.byref(options), ctypes.byref(info)):
                # No script found, or one that cannot be fetched or run: the same for every URL, and
                # detection that failed once would take its time again for each.
                break
            named = info.dwAccessType == named_proxy and info.lpszProxy
            answers.append(ctypes.wstring_at(info.lpszProxy) if named else "")
            for held in (info.lpszProxy, info.lpszProxyBypass):
                if held:
                    kernel32.GlobalFree(held)
    finally:
        winhttp.WinHttpCloseHandle(session)
    return answers + [None] * (len(urls) - len(answers))
