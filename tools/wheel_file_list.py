"""Write the binary, plugin and translation entries of a PySide6-Essentials wheel for another platform.

``python tools/wheel_file_list.py 6.11.3 win_amd64`` downloads that wheel from PyPI (pip, no install)
and writes ``tests/packaging/data/pyside6_essentials-VERSION-PLATFORM.txt``, which the bundle filter
test reads, so the test itself never touches the network. Run it again when the pin moves.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    version, platform = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
             "--platform", platform, "--python-version", "3.12", "--dest", folder,
             f"pyside6-essentials=={version}"],
            check=True,
        )  # fmt: skip
        (wheel,) = Path(folder).glob("*.whl")
        names = zipfile.ZipFile(wheel).namelist()
    kept = sorted(
        n
        for n in names
        if n.startswith("PySide6/") and (n.endswith((".dll", ".pyd", ".qm")) or "/plugins/" in n)
    )
    out = ROOT / "tests" / "packaging" / "data" / f"pyside6_essentials-{version}-{platform}.txt"
    header = (
        f"# Binary, plugin and translation entries of {wheel.name} from PyPI\n"
        "# (tools/wheel_file_list.py writes this list; the bundle filter test reads it, not the network).\n"
    )
    out.write_text(header + "\n".join(kept) + "\n", encoding="utf-8")
    print(f"Wrote {out} ({len(kept)} entries).")


if __name__ == "__main__":
    main()
