"""Which addresses a server reaches: this computer only (loopback), or the network, and this computer's
own addresses and names there."""

from __future__ import annotations

import contextlib
import ipaddress
import socket


def is_local(host: str) -> bool:
    """Whether only this computer can reach ``host`` (a loopback address or ``localhost``)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def lan_addresses() -> list[str]:
    """This computer's IPv4 addresses that other computers may reach (no loopback, no link-local)."""
    import psutil

    found = []
    for addresses in psutil.net_if_addrs().values():
        for address in addresses:
            if address.family != socket.AF_INET:
                continue
            ip = ipaddress.ip_address(address.address)
            if not (ip.is_loopback or ip.is_link_local) and address.address not in found:
                found.append(address.address)
    return found


def this_computer() -> set[str]:
    """This computer's names and the addresses other computers reach it by (lower case)."""
    name = socket.gethostname().lower()
    found = {name, f"{name}.local", *lan_addresses()}
    with contextlib.suppress(OSError):
        found.add(socket.getfqdn().lower())
    return found
