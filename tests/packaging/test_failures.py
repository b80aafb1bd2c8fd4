"""What uv's and Python's words about a failed setup mean for the user: one sentence and a remedy each,
read from the lines they really print (Windows' and Linux's)."""

from __future__ import annotations

import pytest

from desktop.launcher.failures import error_codes, explain

DEEP = (
    "C:\\Users\\Jiahui Zhang\\AppData\\Local\\FinetuneStudio\\runtime\\Lib\\site-packages\\"
    + ("nvidia\\cuda_nvrtc\\include\\" * 8)
    + "nvrtc_builtin_header_for_the_long_name.h"
)


@pytest.mark.parametrize(
    ("output", "expected", "remedy"),
    [
        (  # uv through a proxy that wants a password: the tunnel is refused
            "error: Request failed after 3 retries\n"
            "  Caused by: Failed to fetch: `https://pypi.org/simple/tomlkit/`\n"
            "  Caused by: error sending request for url (https://pypi.org/simple/tomlkit/)\n"
            "  Caused by: client error (Connect)\n"
            "  Caused by: proxy authorization required",
            "HTTP 407",
            "--proxy http://USER:PASSWORD@HOST:PORT",
        ),
        (  # uv with a plain HTTP proxy that answers the request itself
            "error: Failed to fetch: `http://mirror.corp.example/simple/torch/`\n"
            "  Caused by: HTTP status client error (407 Proxy Authentication Required) for url "
            "(http://mirror.corp.example/simple/torch/)",
            "HTTP 407",
            "not written into any file",
        ),
        (  # Python's urllib (wheel_download.py) and pip
            "error: failed to download torch-2.14.1+cu130-cp312-cp312-win_amd64.whl after 8 tries: "
            "Tunnel connection failed: 407 Proxy Authentication Required",
            "HTTP 407",
            "not written into any file",
        ),
        (
            "error: Failed to install: torch-2.14.1+cu130-cp312-cp312-win_amd64.whl (torch==2.14.1+cu130)\n"
            "  Caused by: failed to remove directory `C:\\Users\\li\\AppData\\Local\\FinetuneStudio\\runtime"
            "\\Lib\\site-packages\\torch\\lib`: The process cannot access the file because it is being used "
            "by another process. (os error 32)",
            "in use by another program",
            "OneDrive",
        ),
        (  # a Chinese Windows words it in Chinese: the code is what can be read
            "error: Failed to install: numpy-2.3.1-cp312-cp312-win_amd64.whl (numpy==2.3.1)\n"
            "  Caused by: failed to rename file: 另一个程序正在使用此文件，进程无法访问。 (os error 32)",
            "in use by another program",
            "restart Windows",
        ),
        (
            "PermissionError: [WinError 32] The process cannot access the file because it is being used by "
            "another process: 'C:\\\\Users\\\\li\\\\AppData\\\\Local\\\\FinetuneStudio\\\\"
            "downloads\\\\torch.whl'",
            "in use by another program",
            "OneDrive",
        ),
        (
            "error: Failed to install: torch-2.14.1+cpu-cp312-cp312-win_amd64.whl (torch==2.14.1+cpu)\n"
            "  Caused by: failed to hardlink file from C:\\...\\archive-v0\\x\\torch\\lib\\fbgemm.dll to "
            "C:\\...\\runtime\\Lib\\site-packages\\torch\\lib\\fbgemm.dll: Operation did not complete "
            "successfully because the file contains a virus or potentially unwanted software. (os error 225)",
            "as a threat (error 225)",
            "Protection history",
        ),
        (
            "OSError: [WinError 225] Operation did not complete successfully because the file contains a "
            "virus or potentially unwanted software: 'C:\\\\rt\\\\Scripts\\\\python.exe'",
            "as a threat (error 225)",
            "Protection history",
        ),
        (
            "error: Failed to install: nvidia_cuda_nvrtc-12.8.93-py3-none-win_amd64.whl\n"
            "  Caused by: failed to create directory `C:\\Users\\...\\nvidia\\cuda_nvrtc\\include`: "
            "The filename or extension is too long. (os error 206)",
            "too long for Windows",
            "LongPathsEnabled",
        ),
        (  # Python's own words for a path over 260 characters: "not found"
            f"FileNotFoundError: [WinError 3] The system cannot find the path specified: "
            f"'{DEEP.replace(chr(92), chr(92) * 2)}'",
            "too long for Windows",
            "--data-folder",
        ),
        (
            f"error: failed to open file `{DEEP}`: The system cannot find the path specified. (os error 3)",
            "too long for Windows",
            "--data-folder",
        ),
        (  # pip's hint
            "ERROR: Could not install packages due to an OSError: [Errno 2] No such file or directory: "
            "'C:\\\\Users\\\\li\\\\x.h'\nHINT: This error might have occurred since this system does not "
            "have Windows Long Path support enabled. You can find information on how to enable this at "
            "https://pip.pypa.io/warnings/enable-long-paths",
            "too long for Windows",
            "LongPathsEnabled",
        ),
        (
            "error: Failed to install: torch-2.14.1+cu130-cp312-cp312-win_amd64.whl\n"
            "  Caused by: failed to write to file `E:\\FinetuneStudio\\uv-cache\\archive-v0\\x\\torch\\lib\\"
            "torch_cuda.dll`: The file size exceeds the limit allowed and cannot be saved. (os error 223)",
            "formatted FAT32",
            "NTFS",
        ),
        (
            "OSError: [WinError 4551] An Application Control policy has blocked this file. Error loading "
            '"C:\\rt\\Lib\\site-packages\\torch\\lib\\c10.dll" or one of its dependencies.',
            "Smart App Control",
            "App & browser control",
        ),
        (
            "error: Failed to install: torch-2.14.1+cu130-cp312-cp312-win_amd64.whl\n"
            "  Caused by: failed to write to file `C:\\rt\\torch_cuda.dll`: There is not enough space on "
            "the disk. (os error 112)",
            "disk became full",
            "Free a few gigabytes",
        ),
    ],
)
def test_windows_failures_get_their_own_sentence_and_remedy(output: str, expected: str, remedy: str) -> None:
    message, hint = explain(output, "3.12", windows=True)
    assert expected in message, message
    assert remedy in hint, hint


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (  # a FAT32 USB disk (vfat) as the data folder on Linux
            "error: Failed to install: torch-2.14.1+cu130-cp312-cp312-manylinux_2_28_x86_64.whl\n"
            "  Caused by: failed to write to file `/media/li/USB/FinetuneStudio/uv-cache/x`: File too "
            "large (os error 27)",
            "formatted FAT32",
        ),
        ("error: failed to write: No space left on device (os error 28)", "disk became full"),
        # Linux's os error 32 is a broken pipe, and 5 an I/O error: not Windows' sharing violation or
        # access denied.
        ("error: failed to read from stdout: Broken pipe (os error 32)", "Setting up the runtime failed"),
        ("error: Input/output error (os error 5)", "Setting up the runtime failed"),
        ("OSError: [Errno 36] File name too long: 'x'", "Setting up the runtime failed"),
    ],
)
def test_linux_failures_read_errno_as_errno(output: str, expected: str) -> None:
    assert expected in explain(output, "3.12", windows=False)[0]


def test_a_size_or_a_port_of_407_is_no_proxy_password() -> None:
    output = "error: Failed to fetch: `https://pypi.org/simple/x/`\n  Caused by: dns error: 407 ms"
    assert "network" in explain(output, "3.12", windows=True)[0]


def test_a_short_path_that_is_not_found_is_not_called_too_long() -> None:
    output = "FileNotFoundError: [WinError 3] The system cannot find the path specified: 'C:\\\\rt\\\\x'"
    assert "too long" not in explain(output, "3.12", windows=True)[0]


def test_the_codes_are_windows_or_errno_by_what_printed_them() -> None:
    line = "[WinError 32] a (os error 206) [Errno 2] b"
    assert error_codes(line, windows=True) == ({32, 206}, {2})
    assert error_codes(line, windows=False) == ({32}, {206, 2})
