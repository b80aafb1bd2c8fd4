"""Windows' proxy settings reach uv and the app as HTTPS_PROXY / HTTP_PROXY / NO_PROXY (a fake reader
stands for the registry and WinHTTP)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest

from desktop.launcher.proxy import (
    InternetSettings,
    no_proxy_from_override,
    parse_proxy_server,
    proxy_environment,
    system_proxy,
)

PYPI, TORCH, HUB = "https://pypi.org/simple/", "https://download.pytorch.org/whl/", "https://huggingface.co/"


@dataclass
class FakeReader:
    """Windows' settings as given; a script's answers by host (absent: no answer)."""

    settings_: InternetSettings | None
    script: dict[str, str] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)

    def settings(self) -> InternetSettings | None:
        return self.settings_

    def proxies_for_urls(self, urls: Sequence[str], settings: InternetSettings) -> list[str | None]:
        self.asked.extend(urls)
        return [next((a for host, a in self.script.items() if host in url), None) for url in urls]


def _env(
    reader: FakeReader, environ: dict[str, str] | None = None, urls=(PYPI, TORCH, HUB)
) -> dict[str, str]:
    return proxy_environment(urls, environ=environ or {"PATH": "x"}, reader=reader, windows=True)


def test_a_manual_proxy_server_for_every_scheme_with_its_exceptions() -> None:
    reader = FakeReader(
        InternetSettings(
            proxy_enable=True,
            proxy_server="proxy.corp.example:8080",
            proxy_override="*.corp.example;10.*;192.168.1.*;intranet:8443;<local>",
        )
    )
    env = _env(reader)
    assert env["HTTPS_PROXY"] == env["HTTP_PROXY"] == "http://proxy.corp.example:8080"
    assert env["NO_PROXY"].split(",") == [
        "localhost",
        "127.0.0.1",
        "::1",
        ".corp.example",
        "10.0.0.0/8",
        "192.168.1.0/24",
        "intranet",
    ]
    assert reader.asked == []  # no script set: WinHTTP is not asked


def test_a_proxy_server_per_scheme() -> None:
    assert parse_proxy_server("http=web:80;https=secure:443;ftp=f:21") == {
        "http": "http://web:80",
        "https": "http://secure:443",
    }
    assert parse_proxy_server("HTTP=web:80") == {"http": "http://web:80"}  # https goes direct, as in Windows
    assert parse_proxy_server("socks=s:1080") == {}  # neither uv nor the hub client is given a SOCKS proxy
    assert parse_proxy_server("https://secure:443") == {
        "http": "https://secure:443",
        "https": "https://secure:443",
    }
    env = _env(FakeReader(InternetSettings(proxy_enable=True, proxy_server="http=web:80;https=secure:443")))
    assert (env["HTTP_PROXY"], env["HTTPS_PROXY"]) == ("http://web:80", "http://secure:443")


def test_a_server_that_is_switched_off_or_empty_is_no_proxy() -> None:
    assert _env(FakeReader(InternetSettings(proxy_enable=False, proxy_server="proxy:8080"))) == {}
    assert _env(FakeReader(InternetSettings(proxy_enable=True, proxy_server=" "))) == {}
    assert _env(FakeReader(None)) == {}  # settings that cannot be read


def test_a_pac_file_is_evaluated_by_windows_for_the_urls_fetched() -> None:
    reader = FakeReader(
        InternetSettings(auto_config_url="http://wpad.corp.example/proxy.pac"),
        script={
            "pypi.org": "DIRECT",
            "pytorch.org": "proxy-a:3128;proxy-b:3128",
            "huggingface": "proxy-a:3128",
        },
    )
    env = _env(reader)
    assert reader.asked == [PYPI, TORCH, HUB]
    assert env["HTTPS_PROXY"] == env["HTTP_PROXY"] == "http://proxy-a:3128"  # the first answer's first proxy
    assert env["NO_PROXY"] == "localhost,127.0.0.1,::1,pypi.org"  # what the script sends direct


def test_a_script_that_sends_everything_direct_means_no_proxy_even_with_a_server_set() -> None:
    settings = InternetSettings(auto_detect=True, proxy_enable=True, proxy_server="proxy:8080")
    assert _env(FakeReader(settings, script={"": ""})) == {}


def test_without_an_answer_from_the_script_the_manual_server_is_used() -> None:
    # Automatically detect settings is on by default: on most networks no script is found.
    settings = InternetSettings(auto_detect=True, proxy_enable=True, proxy_server="proxy:8080")
    found = system_proxy([PYPI], FakeReader(settings))
    assert found is not None and found.origin == "manual" and found.https == "http://proxy:8080"
    assert _env(FakeReader(InternetSettings(auto_detect=True))) == {}


@pytest.mark.parametrize("name", ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "ALL_PROXY"])
def test_a_proxy_the_user_set_wins(name: str) -> None:
    reader = FakeReader(InternetSettings(proxy_enable=True, proxy_server="proxy:8080"))
    assert _env(reader, {name: "http://mine:1"}) == {}


def test_a_no_proxy_the_user_set_is_kept() -> None:
    reader = FakeReader(InternetSettings(proxy_enable=True, proxy_server="proxy:8080"))
    env = _env(reader, {"no_proxy": "mine.example"})
    assert env == {"HTTPS_PROXY": "http://proxy:8080", "HTTP_PROXY": "http://proxy:8080"}


def test_off_windows_nothing_is_read() -> None:
    reader = FakeReader(InternetSettings(proxy_enable=True, proxy_server="proxy:8080"))
    assert proxy_environment([PYPI], environ={}, reader=reader, windows=False) == {}


def test_a_reader_that_fails_means_no_proxy() -> None:
    class Broken(FakeReader):
        def proxies_for_urls(self, urls, settings):
            raise OSError("WinHTTP is not there")

    assert _env(Broken(InternetSettings(auto_config_url="http://x/p.pac"))) == {}


def test_override_patterns_no_proxy_cannot_say_are_left_out() -> None:
    assert no_proxy_from_override("*internal*;10.*.1.*;*.ok.example;https://site.example/") == (
        "localhost,127.0.0.1,::1,.ok.example,site.example"
    )


def test_only_web_urls_are_given_to_the_script() -> None:
    # The bundle's Python mirror is a file:// URL; WinHTTP refuses it, which would end the session.
    reader = FakeReader(InternetSettings(auto_detect=True), script={"pypi.org": "proxy:3128"})
    env = _env(reader, urls=("file:///C:/FinetuneStudio/python", PYPI))
    assert reader.asked == [PYPI] and env["HTTPS_PROXY"] == "http://proxy:3128"
