"""The NSIS script: read as UTF-8 on Windows too, the C++ runtime, a running app, and a full uninstall."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from desktop.core.system.instance import MUTEX_NAME
from tests.scripts import script

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
    # A data folder moved to another drive goes too, read from the file the move leaves behind, and
    # only when it holds our runtime or runs.
    assert "FileReadUTF16LE $0 $MovedData" in uninstall and '"${DATA_DIR}\\location.txt"' in uninstall
    assert '!insertmacro REMOVE_TREE "$MovedData"' in uninstall.split("FileExists")[-1]
    assert all("$MovedData" in line for line in text.splitlines() if line.startswith("LangString RemoveData"))
    assert 'rd /s /q "\\\\?\\${DIR}"' in text  # paths over 260 characters (uv's cache) go too


def test_the_cpp_runtime_is_installed_when_missing() -> None:
    text = SCRIPT.read_text(encoding="utf-8-sig")
    assert (
        'ReadRegDWORD $0 HKLM "SOFTWARE\\Microsoft\\VisualStudio\\14.0\\VC\\Runtimes\\x64" "Installed"'
        in text
    )
    assert 'vc_redist.x64.exe" /install /quiet /norestart' in text
    # An old runtime is updated too, not only a missing one, and every exit code says what happened.
    from desktop.launcher.windows_checks import VCRUNTIME_MINIMUM

    assert f"!define VCRUNTIME_MAJOR {VCRUNTIME_MINIMUM[0]}" in text  # the launcher checks the same
    assert f"!define VCRUNTIME_MINOR {VCRUNTIME_MINIMUM[1]}" in text
    assert '"Minor"' in text and "${AndIf} $3 < ${VCRUNTIME_MINOR}" in text
    for code in ("${If} $1 = 0", "${ElseIf} $1 = 1638", "${ElseIf} $1 = 3010"):
        assert code in text
    assert "SetRebootFlag true" in text and '"$(VcRuntimeFailed)"' in text


@pytest.mark.parametrize("version", ["1.2.3", "0.2.0rc1"])  # a release and a pre-release
def test_the_script_compiles_with_the_cpp_runtime(tmp_path: Path, version: str) -> None:
    file_version = script("installer/build.py").file_version  # the numbers build.py passes to makensis
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
    assert (
        "tools/dev.py test tests/packaging/test_bundle.py" in script
    )  # the install's whole life, as on Linux
    assert '"--smoke","--headless"' in script and "platforms\\qwindows.dll" in script
    assert "pe_subsystem.py" in script and "--expect gui" in script  # uv's pythonw opens no console
    assert '"/S","/D=$target"' in script and "Uninstall.exe" in script
    assert "SIGN_COMMAND" in script and "Get-AuthenticodeSignature" in script
    build = next(step for step in job["steps"] if step.get("name") == "Build the bundle and the installer")
    assert build["env"]["SIGNING_PASSWORD"] == "${{ secrets.SIGNING_PASSWORD }}"  # this step alone has it
    assert "%SIGNING_PASSWORD%" in script and '/p `"$env:SIGNING_PASSWORD`"' not in script
    # A native command that fails in the middle of a step fails the step, not only the last one.
    assert "$PSNativeCommandUseErrorActionPreference = $true" in job["defaults"]["run"]["shell"]
    assert "tools/check_torch_table.py --system windows" in script
    upload = next(step for step in job["steps"] if step.get("uses", "").startswith("actions/upload-artifact"))
    assert "SHA256SUMS" in script and "dist/SHA256SUMS" in upload["with"]["path"]


def test_the_signing_command_starts_signtool_and_takes_the_password_at_signing_time(monkeypatch) -> None:
    build = script("installer/build.py")
    monkeypatch.setenv("SIGNING_PASSWORD", "s3cret")
    text = (
        '"C:\\Program Files (x86)\\Windows Kits\\10\\bin\\10.0.26100.0\\x64\\signtool.exe" sign '
        '/f "C:\\a\\_temp\\signing.pfx" /p %SIGNING_PASSWORD% /fd sha256 /tr http://timestamp.digicert.com'
    )
    command = build.sign_command(text, windows=True)
    assert command[0] == "C:\\Program Files (x86)\\Windows Kits\\10\\bin\\10.0.26100.0\\x64\\signtool.exe"
    assert command[1:5] == ["sign", "/f", "C:\\a\\_temp\\signing.pfx", "/p"] and command[5] == "s3cret"
    assert build.sign_command("", windows=True) == []  # unsigned
    cloud = build.sign_command(
        'signtool sign /dlib "Azure.CodeSigning.Dlib.dll" /dmdf meta.json', windows=True
    )
    assert cloud == ["signtool", "sign", "/dlib", "Azure.CodeSigning.Dlib.dll", "/dmdf", "meta.json"]


def test_the_torch_table_check_resolves_every_pin_and_names_the_missing_ones(monkeypatch, capsys) -> None:
    check = script("tools/check_torch_table.py")
    from desktop.core.environment.wheels import WheelTable

    table = WheelTable.load()
    pins = check.rows(table)
    newest = table.release(table.newest())
    assert (f"torch=={newest['latest']}+cpu", table.index_url("cpu")) in pins
    assert all(f"torch=={newest['latest']}+{tag}" in dict(pins) for tag in newest["cuda"])
    command = check.command(["uv"], pins[0][0], pins[0][1], "windows", "3.12")
    assert command[command.index("--python-platform") + 1] == "x86_64-pc-windows-msvc"

    def resolve(command, input, **kwargs):  # one pin lacks its wheel
        missing = input.strip() == pins[1][0]
        return subprocess.CompletedProcess(command, 1 if missing else 0, "" if missing else input, "no wheel")

    monkeypatch.setattr(check.subprocess, "run", resolve)
    assert check.main(["--system", "windows"]) == 1
    out = capsys.readouterr().out
    assert f"FAIL {pins[1][0]}" in out and "1 pinned build(s) do not exist for Python 3.12 on windows" in out


def test_the_linux_uninstall_removes_a_moved_data_folder_when_asked(tmp_path: Path) -> None:
    home = tmp_path / "home"
    data = home / "share" / "FinetuneStudio"
    moved = tmp_path / "D" / "FinetuneStudio"
    (moved / "runs" / "run-1").mkdir(parents=True)
    data.mkdir(parents=True)
    (data / "location.txt").write_bytes(str(moved).encode("utf-16-le"))  # as data_location writes it
    env = {**os.environ, "HOME": str(home), "XDG_DATA_HOME": str(home / "share")}
    uninstall = ["sh", str(ROOT / "installer" / "linux" / "install.sh"), "--uninstall"]

    kept = subprocess.run(uninstall, env=env, input="n\n", text=True, capture_output=True, check=True)
    assert str(moved) in kept.stdout and moved.is_dir() and data.is_dir()  # named, and kept on No

    subprocess.run(uninstall, env=env, input="y\n", text=True, capture_output=True, check=True)
    assert not moved.exists() and not data.exists() and (tmp_path / "D").is_dir()


def test_the_shortcuts_carry_the_apps_taskbar_identity() -> None:
    """The window is pythonw.exe's: without the shortcut's AppUserModelID, pinning it pinned Python."""
    from desktop.app import APP_USER_MODEL_ID

    text = SCRIPT.read_text(encoding="utf-8-sig")
    assert f'!define APP_USER_MODEL_ID "{APP_USER_MODEL_ID}"' in text
    assert "${PKEY_AppUserModel_ID}" in text and "${IPersistFile::Save}" in text
    for shortcut in ("$SMPROGRAMS\\${APP_NAME}.lnk", "$DESKTOP\\${APP_NAME}.lnk"):
        assert (
            f'CreateShortcut "{shortcut}"' in text and f'Push "{shortcut}"\n  Call SetShortcutAppId' in text
        )
