"""Tell whether a Windows program is a windowed (GUI) or a console program, from its PE header.

``python installer/pe_subsystem.py FILE [--expect gui|console]`` prints the subsystem and, with
``--expect``, exits 1 when it differs. The release workflow checks that the runtime's ``pythonw.exe``
(uv's stub) is a GUI program: some uv 0.11 releases shipped one that opened a console window.
"""

from __future__ import annotations

import argparse
import struct
import sys
from pathlib import Path

SUBSYSTEMS = {2: "gui", 3: "console"}


def subsystem(path: Path) -> str:
    """``gui``, ``console`` or ``other``: the Subsystem field of the PE optional header.

    Raises:
        ValueError: The file is not a PE program.
    """
    data = path.read_bytes()
    if data[:2] != b"MZ":
        raise ValueError(f"{path} is not a Windows program (no MZ header)")
    (pe,) = struct.unpack_from("<I", data, 0x3C)
    if data[pe : pe + 4] != b"PE\0\0":
        raise ValueError(f"{path} has no PE header")
    optional = pe + 4 + 20  # the signature, then the COFF file header
    (value,) = struct.unpack_from("<H", data, optional + 68)  # the same offset in PE32 and PE32+
    return SUBSYSTEMS.get(value, "other")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pe_subsystem")
    parser.add_argument("file", type=Path)
    parser.add_argument("--expect", choices=("gui", "console"))
    args = parser.parse_args(argv)
    found = subsystem(args.file)
    print(f"{args.file}: {found}")
    return 1 if args.expect and found != args.expect else 0


if __name__ == "__main__":
    sys.exit(main())
