"""What Windows must offer before a setup of several GB is worth starting.

Two things make PyTorch fail only after the whole download, at the setup's last check: a missing or
too old Microsoft C++ runtime (PyTorch's DLLs need MSVCP140.dll 14.40 or newer: what Visual Studio
17.10 and later builds crashes in ``std::mutex`` with an older one), and Smart App Control (Windows
11), which blocks the unsigned Python that uv installs. The installer installs the runtime
(``installer/finetune-studio.nsi``, with the same minimum); a portable copy, a runtime removed later
or an installer run without rights meet this check instead.
"""

from __future__ import annotations

from collections.abc import Callable

from desktop.core.system.messages import msg

VCRUNTIME_MINIMUM = (14, 40)
VCRUNTIME_KEY = r"SOFTWARE\Microsoft\VisualStudio\14.0\VC\Runtimes\x64"
SMART_APP_CONTROL_KEY = r"SYSTEM\CurrentControlSet\Control\CI\Policy"
SMART_APP_CONTROL_ON = 1
"""``VerifiedAndReputablePolicyState``: 0 off, 1 on (blocks), 2 evaluation (watches, blocks nothing)."""
VCREDIST_URL = "https://aka.ms/vs/17/release/vc_redist.x64.exe"


def read_dword(key: str, name: str) -> int | None:
    """A DWORD value under HKEY_LOCAL_MACHINE (the 64-bit view), or ``None``."""
    import winreg

    access = winreg.KEY_READ | winreg.KEY_WOW64_64KEY
    try:
        with winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, key, 0, access) as handle:
            value, kind = winreg.QueryValueEx(handle, name)
    except OSError:
        return None
    return value if kind == winreg.REG_DWORD else None


def blocker(read: Callable[[str, str], int | None] = read_dword) -> tuple[str, str] | None:
    """Why a setup on this Windows would fail after its downloads, and the fix; ``None`` if nothing."""
    if read(SMART_APP_CONTROL_KEY, "VerifiedAndReputablePolicyState") == SMART_APP_CONTROL_ON:
        return (
            msg(
                "Smart App Control is on: it blocks the Python and PyTorch files the setup installs, "
                "because they are not signed the way it requires."
            ),
            msg(
                "Turn Smart App Control off (Windows Security > App & browser control > Smart App "
                "Control), then start Finetune Studio again. Windows cannot turn it back on without "
                "reinstalling; the README explains the choice."
            ),
        )
    installed = read(VCRUNTIME_KEY, "Installed")
    version = (read(VCRUNTIME_KEY, "Major") or 0, read(VCRUNTIME_KEY, "Minor") or 0)
    if installed == 1 and version >= VCRUNTIME_MINIMUM:
        return None
    minimum = ".".join(map(str, VCRUNTIME_MINIMUM))
    fix = msg(
        "Install the latest Microsoft Visual C++ 2015-2022 Redistributable (x64) from {url} (the "
        "Finetune Studio installer does it too), then start Finetune Studio again.",
        url=VCREDIST_URL,
    )
    if installed != 1:
        return msg("The Microsoft Visual C++ runtime that PyTorch needs is not installed."), fix
    found = f"{version[0]}.{version[1]}"
    headline = msg(
        "The Microsoft Visual C++ runtime {found} is older than PyTorch needs ({minimum} or newer).",
        found=found,
        minimum=minimum,
    )
    return headline, fix
