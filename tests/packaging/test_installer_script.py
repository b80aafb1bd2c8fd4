"""The NSIS script: read as UTF-8 on Windows too, the C++ runtime, a running app, and a full uninstall."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from fnmatch import fnmatch
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
    assert 'rd /s /q "\\\\?\\${DIR}"' in text  # paths over 260 characters (uv's cache) go too


def test_the_uninstaller_names_where_the_data_is_after_a_move() -> None:
    """Moved, the runtime and runs are where location.txt says, and the Hugging Face model cache moved
    into that folder with them (HF_HOME points there): the question names that folder, and says the
    models go too, instead of naming the old place and calling the models a shared cache left alone."""
    text = SCRIPT.read_text(encoding="utf-8-sig")
    strings = {}
    for line in text.splitlines():
        if line.startswith("LangString "):
            name, language, value = line.split(" ", 3)[1:]
            strings.setdefault(name, {})[language] = value
    languages = {"${LANG_ENGLISH}", "${LANG_SIMPCHINESE}", "${LANG_TRADCHINESE}"}
    for name in ("RemoveData", "RemoveMovedData", "RemoveMovedDataAndModels", "MovedDataNotFound"):
        assert set(strings[name]) == languages, name
    assert all(
        "${DATA_DIR}" in value and "$MovedData" not in value for value in strings["RemoveData"].values()
    )
    for name in ("RemoveMovedData", "RemoveMovedDataAndModels", "MovedDataNotFound"):
        assert all("$MovedData" in value for value in strings[name].values()), name
    english = strings["RemoveMovedDataAndModels"]["${LANG_ENGLISH}"]
    assert "models downloaded from Hugging Face" in english and ".cache\\huggingface" not in english
    assert ".cache\\huggingface" in strings["RemoveMovedData"]["${LANG_ENGLISH}"]  # not moved with it
    uninstall = text.split('Section "Uninstall"')[1]
    assert '$MovedData != "${DATA_DIR}"' in uninstall  # moved back: the default folder, named once
    assert '${FileExists} "$MovedData\\huggingface\\*.*"' in uninstall
    for name in ("RemoveMovedData", "RemoveMovedDataAndModels", "RemoveData", "MovedDataNotFound"):
        assert f'"$({name})"' in uninstall


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
    for code in ("${If} $1 = 0", "${ElseIf} $1 = 1638", "${ElseIf} $1 = 3010", "${ElseIf} $1 = 1602"):
        assert code in text
    assert "SetRebootFlag true" in text and '"$(VcRuntimeFailed)"' in text
    # Declined and "a newer one is there" each say so in a sentence of their own.
    after = {code: text.split(f"$1 = {code}")[1].split("${ElseIf}")[0] for code in (1602, 1638)}
    assert '"$(VcRuntimeDeclined)"' in after[1602] and '"$(VcRuntimeNewer)"' in after[1638]


def test_a_restart_the_cpp_runtime_asks_for_is_never_the_default_and_keeps_the_choices() -> None:
    text = SCRIPT.read_text(encoding="utf-8-sig")
    assert "!define MUI_FINISHPAGE_REBOOTLATER_DEFAULT" in text
    # The finish page swaps its boxes for the restart question: the choices are made before installing.
    assert "MUI_FINISHPAGE_RUN" not in text and "MUI_FINISHPAGE_SHOWREADME" not in text
    pages = [line for line in text.splitlines() if "MUI_PAGE_" in line or line.startswith("Page custom")]
    assert pages.index("Page custom OptionsPage OptionsPageLeave") < pages.index(
        "!insertmacro MUI_PAGE_INSTFILES"
    )
    install = text.split('Section "Install"')[1].split("SectionEnd")[0]
    assert "${If} $DesktopShortcutWanted = 1\n    Call CreateDesktopShortcut" in install  # the install step
    started = text.split("Function .onInstSuccess")[1].split("FunctionEnd")[0]
    assert "${If} $StartWanted = 1" in started and "Exec '\"$INSTDIR\\${EXE}\"'" in started


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


def test_the_offline_packages_beside_the_setup_are_copied_in() -> None:
    text = SCRIPT.read_text(encoding="utf-8-sig")
    copy = text.split("Function CopyWheelhouse")[1].split("FunctionEnd")[0]
    assert copy.index('RMDir /r "$INSTDIR\\wheelhouse"') < copy.index(
        '${IfNot} ${FileExists} "$EXEDIR\\wheelhouse'
    )
    assert '${DriveSpace} "$0\\" "/D=F /S=M" $R1' in copy and '"$(WheelsNeedSpace)"' in copy
    assert 'DetailPrint "$(CopyingWheel)"' in copy and 'CopyFiles /SILENT "$EXEDIR\\wheelhouse\\$R4"' in copy
    count = text.split("Function CountWheelhouse")[1].split("FunctionEnd")[0]
    assert "SectionSetSize ${SecInstall} $1" in count  # the directory page's space check counts it
    assert "Call CountWheelhouse" in text.split("Function .onInit")[1].split("FunctionEnd")[0]


def test_the_installer_ships_no_software_opengl() -> None:
    """opengl32sw.dll (Qt's software OpenGL) is 20,639,544 bytes of the 6.11.3 Windows wheel, about 5.5 MB
    compressed in the installer: the launcher's one window paints without OpenGL. No other DLL goes.
    (Beside tests/packaging/test_bundle_filter.py, which checks the plugins against the same list.)"""
    import sys

    sys.path.insert(0, str(ROOT / "installer"))
    from bundle_filter import keep

    wheel = ROOT / "tests" / "packaging" / "data" / "pyside6_essentials-6.11.3-win_amd64.txt"
    names = [n for n in wheel.read_text(encoding="utf-8").splitlines() if not n.startswith("#")]
    assert "PySide6/opengl32sw.dll" in names  # still in the wheel, so the rule still has work to do
    dlls = [n for n in names if n.endswith(".dll") and "/plugins/" not in n]
    assert [Path(n).name for n in dlls if not keep(n, "windows")] == ["opengl32sw.dll"]
    assert not keep(r"_internal\PySide6\opengl32sw.dll", "windows")  # where PyInstaller puts it


def _setup_runner(tmp_path: Path) -> tuple[list[str], dict[str, str], Callable[[Path], str]]:
    """How to run a Windows setup here: natively on the Windows CI runner, under wine (a prefix of its
    own) on Linux; skipped elsewhere, so a developer's own Windows profile is never installed into."""
    if os.name == "nt":
        if not os.environ.get("GITHUB_ACTIONS"):
            pytest.skip("installs into this Windows user's profile: the release workflow runs it")
        return [], dict(os.environ), str
    wine = shutil.which("wine")
    if wine is None or shutil.which("makensis") is None:
        pytest.skip("needs wine and makensis (Debian: apt install wine nsis)")
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **os.environ,
        "HOME": str(home),
        "WINEPREFIX": str(tmp_path / "wine"),
        "WINEDEBUG": "-all",
        "WINEDLLOVERRIDES": "winemenubuilder.exe=d;mscoree=;mshtml=",
    }
    return [wine], env, lambda path: "Z:" + str(path).replace("/", "\\")


@pytest.mark.slow
def test_a_setup_with_a_wheelhouse_beside_it_copies_it_in_and_one_without_removes_it(tmp_path: Path) -> None:
    runner, env, windows_path = _setup_runner(tmp_path)
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "FinetuneStudio.exe").write_bytes(b"MZ")
    offline = tmp_path / "offline"
    (offline / "wheelhouse").mkdir(parents=True)
    setup = offline / "FinetuneStudio-1.2.3-setup.exe"
    subprocess.run(
        [shutil.which("makensis") or "makensis", "-INPUTCHARSET", "UTF8", "-V2", "-WX", "-DQUICK",
         "-DVERSION=1.2.3", f"-DBUNDLE_DIR={bundle}", f"-DOUT_FILE={setup}", str(SCRIPT)],
        cwd=SCRIPT.parent, capture_output=True, text=True, check=True,
    )  # fmt: skip
    wheels = {
        "torch-2.14.1+cu130-cp312-cp312-win_amd64.whl": os.urandom(3 << 20),
        "tomlkit-0.13-py3.whl": b"x",
    }
    for name, data in wheels.items():
        (offline / "wheelhouse" / name).write_bytes(data)
    target = tmp_path / "installed"

    def run(program: Path, *args: str) -> None:
        done = subprocess.run([*runner, str(program), *args], env=env, capture_output=True, timeout=300)
        assert done.returncode == 0, done

    run(setup, "/S", f"/D={windows_path(target)}")
    assert {p.name: p.read_bytes() for p in (target / "wheelhouse").iterdir()} == wheels
    # An update from a setup without offline packages: the launcher must not go on installing offline
    # from the old ones.
    online = tmp_path / "online" / setup.name
    online.parent.mkdir()
    shutil.copy(setup, online)
    run(online, "/S", f"/D={windows_path(target)}")
    assert (target / "FinetuneStudio.exe").is_file() and not (target / "wheelhouse").exists()
    run(target / "Uninstall.exe", "/S", f"_?={windows_path(target)}")
    assert not (target / "FinetuneStudio.exe").exists()


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


def test_a_release_tag_without_signing_fails_and_an_unsigned_build_says_so_in_its_name() -> None:
    import yaml

    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))
    assert "workflow_dispatch" in workflow[True]  # YAML reads the key "on" as True
    job = workflow["jobs"]["windows"]
    assert job["env"]["SIGNED"] == "${{ secrets.SIGNING_CERTIFICATE != '' || vars.SIGN_COMMAND != '' }}"
    guard = job["steps"][0]  # before anything is built
    assert guard["if"] == "github.event_name == 'push' && github.ref_type == 'tag' && env.SIGNED != 'true'"
    lines = guard["run"].strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith('echo "::error ') and lines[1] == "exit 1"
    names = [step.get("name", "") for step in job["steps"]]
    rename = job["steps"][names.index("An unsigned installer says so in its name")]
    assert names.index("Build the bundle and the installer") < names.index(rename["name"])
    assert rename["if"] == "env.SIGNED != 'true'" and "-unsigned-setup.exe" in rename["run"]
    # The silent install, the checksums and the upload find the renamed installer too.
    upload = next(step for step in job["steps"] if step.get("uses", "").startswith("actions/upload-artifact"))
    assert fnmatch("dist/FinetuneStudio-1.0.0-unsigned-setup.exe", upload["with"]["path"].split()[0])


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
