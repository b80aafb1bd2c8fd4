"""The NSIS script: read as UTF-8 on Windows too, the C++ runtime, a running app, and a full uninstall."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from desktop.core.system.instance import MUTEX_NAME

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "installer" / "finetune-studio.nsi"


def test_the_script_is_utf8_with_a_bom_and_built_as_utf8() -> None:
    raw = SCRIPT.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")  # makensis on Windows reads a file without one as ANSI
    assert "首次启动" in raw.decode("utf-8-sig") and "首次啟動" in raw.decode("utf-8-sig")
    build = (ROOT / "installer" / "build.py").read_text(encoding="utf-8")
    assert '"-INPUTCHARSET",\n        "UTF8"' in build


def test_uninstall_waits_for_the_app_and_removes_both_data_folders() -> None:
    text = SCRIPT.read_text(encoding="utf-8-sig")
    assert f'!define RUNNING_MUTEX "{MUTEX_NAME}"' in text  # the app holds the mutex the script looks for
    install, uninstall = text.split('Section "Install"')[1], text.split('Section "Uninstall"')[1]
    assert "!insertmacro WAIT_UNTIL_CLOSED" in install and "!insertmacro WAIT_UNTIL_CLOSED" in uninstall
    assert '!define SETTINGS_DIR "$APPDATA\\FinetuneStudio"' in text  # QSettings' roaming INI file
    removed = re.findall(r'!insertmacro REMOVE_TREE "\$\{(\w+)\}"', uninstall)
    assert removed == ["DATA_DIR", "SETTINGS_DIR"]
    assert 'rd /s /q "\\\\?\\${DIR}"' in text  # paths over 260 characters (uv's cache) go too


def test_the_cpp_runtime_is_installed_when_missing() -> None:
    text = SCRIPT.read_text(encoding="utf-8-sig")
    assert (
        'ReadRegDWORD $0 HKLM "SOFTWARE\\Microsoft\\VisualStudio\\14.0\\VC\\Runtimes\\x64" "Installed"'
        in text
    )
    assert 'vc_redist.x64.exe" /install /quiet /norestart' in text


@pytest.mark.parametrize("version", ["1.2.3", "0.2.0rc1"])  # a release and a pre-release
def test_the_script_compiles_with_the_cpp_runtime(tmp_path: Path, version: str) -> None:
    sys.path.insert(0, str(ROOT / "installer"))
    try:
        from build import file_version  # the numbers installer/build.py passes for Windows' fields
    finally:
        sys.path.remove(str(ROOT / "installer"))
    makensis = shutil.which("makensis")
    if makensis is None and not os.environ.get("CI"):
        pytest.skip("makensis is not installed (Debian: apt install nsis); CI installs it")
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "FinetuneStudio.exe").write_bytes(b"MZ")
    (tmp_path / "vc_redist.x64.exe").write_bytes(b"MZ")
    done = subprocess.run(
        [makensis or "makensis", "-INPUTCHARSET", "UTF8", "-V2", "-WX", "-DQUICK", f"-DVERSION={version}",
         f"-DFILE_VERSION={file_version(version)}",
         f"-DBUNDLE_DIR={bundle}", f"-DOUT_FILE={tmp_path / 'studio-installer.exe'}",
         f"-DVCREDIST={tmp_path / 'vc_redist.x64.exe'}", str(SCRIPT)],
        cwd=SCRIPT.parent, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "studio-installer.exe").stat().st_size > 10_000


def test_the_release_workflow_proves_the_windows_build() -> None:
    import yaml

    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))
    job = workflow["jobs"]["windows"]
    assert job["runs-on"].startswith("windows")
    script = "\n".join(step.get("run", "") for step in job["steps"])
    assert "pip install -r installer/build-requirements.txt" in script  # pinned PyInstaller, uv, PySide6
    assert "tools/dev.py test" in script
    assert '"--smoke","--headless"' in script and "platforms\\qwindows.dll" in script
    assert "pe_subsystem.py" in script and "--expect gui" in script  # uv's pythonw opens no console
    assert '"/S","/D=$target"' in script and "Uninstall.exe" in script
    assert "SIGN_COMMAND" in script and "Get-AuthenticodeSignature" in script
