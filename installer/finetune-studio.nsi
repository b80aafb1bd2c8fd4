; Finetune Studio's Windows installer: per user, no administrator rights, 64-bit.
;
; Build (installer/build.py does this after PyInstaller; makensis works in this file's folder, so pass
; absolute paths):
;   makensis -DVERSION=0.1.0 -DBUNDLE_DIR=$PWD/build/bundle/FinetuneStudio -DOUT_FILE=$PWD/dist/FinetuneStudio-0.1.0-setup.exe installer/finetune-studio.nsi
;
; Installs the frozen launcher into %LOCALAPPDATA%\Programs\Finetune Studio, adds a Start-menu
; shortcut (and, if the user keeps the box ticked, a desktop one) and registers the uninstaller in
; Apps & Features. The launcher sets up the runtime in %LOCALAPPDATA%\FinetuneStudio on first start;
; the uninstaller asks whether to remove that too (or where the user moved it), and the settings in
; %APPDATA%\FinetuneStudio.
; -DVCREDIST=path\vc_redist.x64.exe ships Microsoft's C++ runtime, installed when it is missing
; (PyTorch's DLLs need MSVCP140.dll, which neither Windows nor uv's Python brings).
; The offline installer of a CUDA build is this setup plus a `wheelhouse` folder beside it (NSIS cannot
; hold a file over 2 GB, and PyTorch's CUDA wheel is 2.7 GB): the folder is copied into the installed
; one, where the launcher finds it and installs from it alone.
;
; This file is UTF-8 with a byte-order mark (the Chinese texts): makensis on Windows reads a file
; without one in the ANSI code page. installer/build.py also passes -INPUTCHARSET UTF8.

Unicode true
ManifestDPIAware true
!ifdef QUICK
  SetCompress off  ; -DQUICK: a fast, uncompressed build that checks the script (CI), not one to ship
!else
  SetCompressor /SOLID lzma
!endif

!include "MUI2.nsh"
!include "x64.nsh"
!include "FileFunc.nsh"
!include "LogicLib.nsh"
!include "Win\COM.nsh"
!include "Win\Propkey.nsh"
!include "nsDialogs.nsh"

!ifndef VERSION
  !error "Pass the app version: -DVERSION=x.y.z"
!endif
!ifndef BUNDLE_DIR
  !error "Pass the PyInstaller folder: -DBUNDLE_DIR=build/bundle/FinetuneStudio"
!endif
!ifndef OUT_FILE
  !define OUT_FILE "FinetuneStudio-${VERSION}-setup.exe"
!endif
!ifndef FILE_VERSION  ; Windows' version fields take four numbers; VERSION may be 0.2.0rc1
  !define FILE_VERSION "${VERSION}.0"
!endif

!define APP_NAME "Finetune Studio"
!define APP_ID "FinetuneStudio"
!define EXE "FinetuneStudio.exe"
!define DATA_DIR "$LOCALAPPDATA\FinetuneStudio"
!define SETTINGS_DIR "$APPDATA\FinetuneStudio"
; The app and the command line hold this named mutex while they run (desktop/core/system/instance.py).
!define RUNNING_MUTEX "FinetuneStudio.Running"
!define VCRUNTIME_MAJOR 14  ; the oldest Visual C++ runtime PyTorch's DLLs run with (launcher: runtime.py)
!define VCRUNTIME_MINOR 40
!define VCRUNTIME_MINIMUM "14.40"
!define UNINSTALL_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\${APP_ID}"

!ifdef SIGN_COMMAND
  ; -DSIGN_COMMAND="signtool sign ...": the uninstaller and the installer are signed as they are written.
  !uninstfinalize '${SIGN_COMMAND} "%1"'
  !finalize '${SIGN_COMMAND} "%1"'
!endif

Name "${APP_NAME}"
OutFile "${OUT_FILE}"
RequestExecutionLevel user
InstallDir "$LOCALAPPDATA\Programs\${APP_NAME}"
InstallDirRegKey HKCU "Software\${APP_ID}" "InstallDir"
BrandingText "${APP_NAME} ${VERSION}"
VIProductVersion "${FILE_VERSION}"
VIAddVersionKey /LANG=1033 "ProductName" "${APP_NAME}"
VIAddVersionKey /LANG=1033 "FileDescription" "${APP_NAME} installer"
VIAddVersionKey /LANG=1033 "FileVersion" "${VERSION}"
VIAddVersionKey /LANG=1033 "ProductVersion" "${VERSION}"
VIAddVersionKey /LANG=1033 "LegalCopyright" "Apache-2.0"

!define MUI_ICON "../resources/icon.ico"
!define MUI_UNICON "../resources/icon.ico"
!define MUI_ABORTWARNING
!define MUI_LANGDLL_ALLLANGUAGES
; The desktop shortcut and "start now" are chosen before installing (OptionsPage): the finish page
; shows a restart question instead of its boxes when the C++ runtime needs one, and the choices made
; stay made. A restart is never the default (vc_redist's 3010 leaves Windows usable until then).
!define MUI_FINISHPAGE_REBOOTLATER_DEFAULT
!define MUI_FINISHPAGE_TEXT_REBOOT "$(FinishRestart)"

!insertmacro MUI_PAGE_WELCOME
!insertmacro MUI_PAGE_DIRECTORY
Page custom OptionsPage OptionsPageLeave
!insertmacro MUI_PAGE_INSTFILES
!insertmacro MUI_PAGE_FINISH
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES

!insertmacro MUI_LANGUAGE "English"
!insertmacro MUI_LANGUAGE "SimpChinese"
!insertmacro MUI_LANGUAGE "TradChinese"

LangString StartNow ${LANG_ENGLISH} "Start ${APP_NAME} when the installation finishes (the first start sets it up: a few minutes)"
LangString StartNow ${LANG_SIMPCHINESE} "安装完成后启动 ${APP_NAME}（首次启动需要几分钟完成设置）"
LangString StartNow ${LANG_TRADCHINESE} "安裝完成後啟動 ${APP_NAME}（首次啟動需要幾分鐘完成設定）"
LangString OptionsTitle ${LANG_ENGLISH} "Options"
LangString OptionsTitle ${LANG_SIMPCHINESE} "选项"
LangString OptionsTitle ${LANG_TRADCHINESE} "選項"
LangString OptionsSubtitle ${LANG_ENGLISH} "A desktop shortcut, and whether ${APP_NAME} starts when the installation finishes."
LangString OptionsSubtitle ${LANG_SIMPCHINESE} "是否创建桌面快捷方式，以及安装完成后是否启动 ${APP_NAME}。"
LangString OptionsSubtitle ${LANG_TRADCHINESE} "是否建立桌面捷徑，以及安裝完成後是否啟動 ${APP_NAME}。"
LangString FinishRestart ${LANG_ENGLISH} "${APP_NAME} is installed. The Microsoft Visual C++ runtime that PyTorch needs is completed when Windows restarts: restart before you train (${APP_NAME} can set itself up before then)."
LangString FinishRestart ${LANG_SIMPCHINESE} "${APP_NAME} 已安装。PyTorch 需要的 Microsoft Visual C++ 运行库在 Windows 重启后才能完成安装：请在训练前重启（在此之前 ${APP_NAME} 可以先完成设置）。"
LangString FinishRestart ${LANG_TRADCHINESE} "${APP_NAME} 已安裝。PyTorch 需要的 Microsoft Visual C++ 執行階段在 Windows 重新啟動後才能完成安裝：請在訓練前重新啟動（在此之前 ${APP_NAME} 可以先完成設定）。"
LangString DesktopShortcut ${LANG_ENGLISH} "Create a desktop shortcut"
LangString DesktopShortcut ${LANG_SIMPCHINESE} "创建桌面快捷方式"
LangString DesktopShortcut ${LANG_TRADCHINESE} "建立桌面捷徑"
LangString Needs64Bit ${LANG_ENGLISH} "${APP_NAME} needs 64-bit Windows."
LangString Needs64Bit ${LANG_SIMPCHINESE} "${APP_NAME} 需要 64 位 Windows。"
LangString Needs64Bit ${LANG_TRADCHINESE} "${APP_NAME} 需要 64 位元 Windows。"
; A data folder the user moved to another drive (Settings > Move the data folder), read at uninstall,
; and the model cache the move took along into it (the app's own then: HF_HOME points there).
Var MovedData
LangString RemoveData ${LANG_ENGLISH} "Also remove the runtime (Python, PyTorch), your runs with their trained models, and the app's settings?$\r$\n$\r$\n${DATA_DIR}$\r$\n${SETTINGS_DIR}$\r$\n$\r$\nChoose No to keep them for a later installation. Models downloaded from Hugging Face or ModelScope are in their shared caches (%USERPROFILE%\.cache\huggingface and %USERPROFILE%\.cache\modelscope), which other programs use too; they are left alone."
LangString RemoveData ${LANG_SIMPCHINESE} "同时删除运行环境（Python、PyTorch）、训练记录及其训练好的模型和应用设置吗？$\r$\n$\r$\n${DATA_DIR}$\r$\n${SETTINGS_DIR}$\r$\n$\r$\n选择“否”可保留，以便以后重新安装时使用。从 Hugging Face 或魔搭（ModelScope）下载的模型位于共享缓存（%USERPROFILE%\.cache\huggingface 和 %USERPROFILE%\.cache\modelscope），其他程序也会使用，不会被删除。"
LangString RemoveData ${LANG_TRADCHINESE} "同時刪除執行環境（Python、PyTorch）、訓練記錄及其訓練好的模型和應用程式設定嗎？$\r$\n$\r$\n${DATA_DIR}$\r$\n${SETTINGS_DIR}$\r$\n$\r$\n選擇「否」可保留，以便日後重新安裝時使用。從 Hugging Face 或 ModelScope 下載的模型位於共用快取（%USERPROFILE%\.cache\huggingface 與 %USERPROFILE%\.cache\modelscope），其他程式也會使用，不會被刪除。"
LangString RemoveMovedData ${LANG_ENGLISH} "Also remove the runtime (Python, PyTorch), your runs with their trained models, and the app's settings? The data folder was moved to:$\r$\n$\r$\n$MovedData$\r$\n$\r$\nand the app's settings are in ${SETTINGS_DIR} (and ${DATA_DIR}, which points to the moved folder).$\r$\n$\r$\nChoose No to keep them for a later installation. Models downloaded from Hugging Face or ModelScope are in their shared caches (%USERPROFILE%\.cache\huggingface and %USERPROFILE%\.cache\modelscope), which other programs use too; they are left alone."
LangString RemoveMovedData ${LANG_SIMPCHINESE} "同时删除运行环境（Python、PyTorch）、训练记录及其训练好的模型和应用设置吗？数据文件夹已移到：$\r$\n$\r$\n$MovedData$\r$\n$\r$\n应用设置位于 ${SETTINGS_DIR}（以及指向移动后文件夹的 ${DATA_DIR}）。$\r$\n$\r$\n选择“否”可保留，以便以后重新安装时使用。从 Hugging Face 或魔搭（ModelScope）下载的模型位于共享缓存（%USERPROFILE%\.cache\huggingface 和 %USERPROFILE%\.cache\modelscope），其他程序也会使用，不会被删除。"
LangString RemoveMovedData ${LANG_TRADCHINESE} "同時刪除執行環境（Python、PyTorch）、訓練記錄及其訓練好的模型和應用程式設定嗎？資料夾已移到：$\r$\n$\r$\n$MovedData$\r$\n$\r$\n應用程式設定位於 ${SETTINGS_DIR}（以及指向移動後資料夾的 ${DATA_DIR}）。$\r$\n$\r$\n選擇「否」可保留，以便日後重新安裝時使用。從 Hugging Face 或 ModelScope 下載的模型位於共用快取（%USERPROFILE%\.cache\huggingface 與 %USERPROFILE%\.cache\modelscope），其他程式也會使用，不會被刪除。"
LangString RemoveMovedDataAndModels ${LANG_ENGLISH} "Also remove the runtime (Python, PyTorch), your runs with their trained models, the models downloaded from Hugging Face, and the app's settings? The data folder was moved, with the Hugging Face model cache inside it, to:$\r$\n$\r$\n$MovedData$\r$\n$\r$\nand the app's settings are in ${SETTINGS_DIR} (and ${DATA_DIR}, which points to the moved folder).$\r$\n$\r$\nChoose No to keep them for a later installation. Models downloaded from ModelScope are in their shared cache (%USERPROFILE%\.cache\modelscope), which other programs use too; it is left alone."
LangString RemoveMovedDataAndModels ${LANG_SIMPCHINESE} "同时删除运行环境（Python、PyTorch）、训练记录及其训练好的模型、从 Hugging Face 下载的模型和应用设置吗？数据文件夹（连同其中的 Hugging Face 模型缓存）已移到：$\r$\n$\r$\n$MovedData$\r$\n$\r$\n应用设置位于 ${SETTINGS_DIR}（以及指向移动后文件夹的 ${DATA_DIR}）。$\r$\n$\r$\n选择“否”可保留，以便以后重新安装时使用。从魔搭（ModelScope）下载的模型位于共享缓存（%USERPROFILE%\.cache\modelscope），其他程序也会使用，不会被删除。"
LangString RemoveMovedDataAndModels ${LANG_TRADCHINESE} "同時刪除執行環境（Python、PyTorch）、訓練記錄及其訓練好的模型、從 Hugging Face 下載的模型和應用程式設定嗎？資料夾（連同其中的 Hugging Face 模型快取）已移到：$\r$\n$\r$\n$MovedData$\r$\n$\r$\n應用程式設定位於 ${SETTINGS_DIR}（以及指向移動後資料夾的 ${DATA_DIR}）。$\r$\n$\r$\n選擇「否」可保留，以便日後重新安裝時使用。從 ModelScope 下載的模型位於共用快取（%USERPROFILE%\.cache\modelscope），其他程式也會使用，不會被刪除。"
LangString MovedDataNotFound ${LANG_ENGLISH} "The data folder was moved to $MovedData, which cannot be found now (a drive that is not connected?): it is left as it is. Delete it yourself if you no longer want it."
LangString MovedDataNotFound ${LANG_SIMPCHINESE} "数据文件夹已移到 $MovedData，但现在找不到它（驱动器未连接？）：它保持原样。如果不再需要，请自行删除。"
LangString MovedDataNotFound ${LANG_TRADCHINESE} "資料夾已移到 $MovedData，但現在找不到它（磁碟機未連接？）：它保持原樣。如果不再需要，請自行刪除。"

LangString VcRuntimeInstalled ${LANG_ENGLISH} "Microsoft Visual C++ runtime: ready."
LangString VcRuntimeInstalled ${LANG_SIMPCHINESE} "Microsoft Visual C++ 运行库：已就绪。"
LangString VcRuntimeInstalled ${LANG_TRADCHINESE} "Microsoft Visual C++ 執行階段：已就緒。"
LangString VcRuntimeRestart ${LANG_ENGLISH} "Microsoft Visual C++ runtime: installed; restart Windows before training."
LangString VcRuntimeRestart ${LANG_SIMPCHINESE} "Microsoft Visual C++ 运行库：已安装；训练前请重启 Windows。"
LangString VcRuntimeRestart ${LANG_TRADCHINESE} "Microsoft Visual C++ 執行階段：已安裝；訓練前請重新啟動 Windows。"
LangString VcRuntimeNewer ${LANG_ENGLISH} "Microsoft Visual C++ runtime: a newer version is already installed; it is used."
LangString VcRuntimeNewer ${LANG_SIMPCHINESE} "Microsoft Visual C++ 运行库：已安装更新的版本，将使用该版本。"
LangString VcRuntimeNewer ${LANG_TRADCHINESE} "Microsoft Visual C++ 執行階段：已安裝較新的版本，將使用該版本。"
LangString VcRuntimeDeclined ${LANG_ENGLISH} "The Microsoft Visual C++ runtime was not installed: its installation was cancelled, or Windows' administrator prompt was declined (code 1602). PyTorch needs it: install it from https://aka.ms/vs/17/release/vc_redist.x64.exe (it asks for administrator rights once), then start ${APP_NAME}."
LangString VcRuntimeDeclined ${LANG_SIMPCHINESE} "未安装 Microsoft Visual C++ 运行库：安装被取消，或 Windows 的管理员权限提示被拒绝（代码 1602）。PyTorch 需要它：请从 https://aka.ms/vs/17/release/vc_redist.x64.exe 安装（需要一次管理员权限），然后启动 ${APP_NAME}。"
LangString VcRuntimeDeclined ${LANG_TRADCHINESE} "未安裝 Microsoft Visual C++ 執行階段：安裝被取消，或 Windows 的系統管理員權限提示被拒絕（代碼 1602）。PyTorch 需要它：請從 https://aka.ms/vs/17/release/vc_redist.x64.exe 安裝（需要一次系統管理員權限），然後啟動 ${APP_NAME}。"
LangString VcRuntimeFailed ${LANG_ENGLISH} "The Microsoft Visual C++ runtime (${VCRUNTIME_MINIMUM} or newer) could not be installed (code $1). PyTorch needs it: install it from https://aka.ms/vs/17/release/vc_redist.x64.exe, then start ${APP_NAME}."
LangString VcRuntimeFailed ${LANG_SIMPCHINESE} "无法安装 Microsoft Visual C++ 运行库（${VCRUNTIME_MINIMUM} 或更新版本，错误代码 $1）。PyTorch 需要它：请从 https://aka.ms/vs/17/release/vc_redist.x64.exe 安装，然后启动 ${APP_NAME}。"
LangString VcRuntimeFailed ${LANG_TRADCHINESE} "無法安裝 Microsoft Visual C++ 執行階段（${VCRUNTIME_MINIMUM} 或更新版本，錯誤代碼 $1）。PyTorch 需要它：請從 https://aka.ms/vs/17/release/vc_redist.x64.exe 安裝，然後啟動 ${APP_NAME}。"
LangString StillRunning ${LANG_ENGLISH} "${APP_NAME} is running. Close it (and any training in a command window), then press Retry."
LangString StillRunning ${LANG_SIMPCHINESE} "${APP_NAME} 正在运行。请先关闭它（以及命令行窗口中的训练），然后点“重试”。"
LangString StillRunning ${LANG_TRADCHINESE} "${APP_NAME} 正在執行。請先關閉它（以及命令列視窗中的訓練），然後按「重試」。"
LangString CopyingWheels ${LANG_ENGLISH} "Copying the offline packages ($R2 MB) from $EXEDIR\wheelhouse ..."
LangString CopyingWheels ${LANG_SIMPCHINESE} "正在从 $EXEDIR\wheelhouse 复制离线安装包（$R2 MB）……"
LangString CopyingWheels ${LANG_TRADCHINESE} "正在從 $EXEDIR\wheelhouse 複製離線安裝套件（$R2 MB）……"
LangString CopyingWheel ${LANG_ENGLISH} "Copying $R4 ($R5 of $R3)"
LangString CopyingWheel ${LANG_SIMPCHINESE} "正在复制 $R4（第 $R5 个，共 $R3 个）"
LangString CopyingWheel ${LANG_TRADCHINESE} "正在複製 $R4（第 $R5 個，共 $R3 個）"
LangString WheelsNeedSpace ${LANG_ENGLISH} "The offline packages need $R2 MB on the drive of $INSTDIR, and $R1 MB are free. Free some space there, or install into a folder on another drive."
LangString WheelsNeedSpace ${LANG_SIMPCHINESE} "离线安装包需要 $INSTDIR 所在驱动器上的 $R2 MB 空间，目前只有 $R1 MB 可用。请先腾出空间，或安装到其他驱动器上的文件夹。"
LangString WheelsNeedSpace ${LANG_TRADCHINESE} "離線安裝套件需要 $INSTDIR 所在磁碟機上的 $R2 MB 空間，目前只有 $R1 MB 可用。請先騰出空間，或安裝到其他磁碟機上的資料夾。"
LangString WheelsNotCopied ${LANG_ENGLISH} "The offline packages could not be copied from $EXEDIR\wheelhouse (a file is missing or the drive is full). Copy the whole folder beside the setup again, or start ${APP_NAME} connected to the internet."
LangString WheelsNotCopied ${LANG_SIMPCHINESE} "无法从 $EXEDIR\wheelhouse 复制离线安装包（缺少文件或驱动器已满）。请把整个文件夹重新复制到安装程序旁边，或在联网时启动 ${APP_NAME}。"
LangString WheelsNotCopied ${LANG_TRADCHINESE} "無法從 $EXEDIR\wheelhouse 複製離線安裝套件（缺少檔案或磁碟機已滿）。請把整個資料夾重新複製到安裝程式旁邊，或在連網時啟動 ${APP_NAME}。"

; Waits until no Finetune Studio process holds the mutex, or the user cancels (then the (un)installer stops).
!macro WAIT_UNTIL_CLOSED
  ${Do}
    System::Call 'kernel32::OpenMutexW(i 0x00100000, i 0, w "${RUNNING_MUTEX}") p .r0'
    ${If} $0 P= 0
      ${Break}
    ${EndIf}
    System::Call 'kernel32::CloseHandle(p r0)'
    MessageBox MB_RETRYCANCEL|MB_ICONEXCLAMATION "$(StillRunning)" /SD IDCANCEL IDRETRY +2
    Abort
  ${Loop}
!macroend

; RMDir /r stops at paths over 260 characters (uv's cache has them for longer user names);
; cmd's rd with the \\?\ prefix removes them, and RMDir /r cleans up whatever is left.
!macro REMOVE_TREE DIR
  nsExec::Exec '"$SYSDIR\cmd.exe" /c rd /s /q "\\?\${DIR}"'
  Pop $0
  RMDir /r "${DIR}"
!macroend

; The choices of the options page: made before installing, so a restart question cannot drop them.
; A silent install (/S) makes the desktop shortcut and starts nothing.
Var DesktopShortcutWanted
Var StartWanted
Var DesktopShortcutBox
Var StartBox

Function .onInit
  InitPluginsDir
  ${IfNot} ${RunningX64}
    MessageBox MB_ICONSTOP "$(Needs64Bit)" /SD IDOK
    Abort
  ${EndIf}
  SetShellVarContext current
  StrCpy $DesktopShortcutWanted 1
  StrCpy $StartWanted 1
  ${If} ${Silent}
    StrCpy $StartWanted 0
  ${EndIf}
  Call CountWheelhouse
  !insertmacro MUI_LANGDLL_DISPLAY
FunctionEnd

Function OptionsPage
  !insertmacro MUI_HEADER_TEXT "$(OptionsTitle)" "$(OptionsSubtitle)"
  nsDialogs::Create 1018
  Pop $0
  ${If} $0 == error
    Abort
  ${EndIf}
  ${NSD_CreateCheckbox} 0 0 100% 12u "$(DesktopShortcut)"
  Pop $DesktopShortcutBox
  ${If} $DesktopShortcutWanted = 1
    ${NSD_Check} $DesktopShortcutBox
  ${EndIf}
  ${NSD_CreateCheckbox} 0 20u 100% 24u "$(StartNow)"
  Pop $StartBox
  ${If} $StartWanted = 1
    ${NSD_Check} $StartBox
  ${EndIf}
  nsDialogs::Show
FunctionEnd

Function OptionsPageLeave
  ${NSD_GetState} $DesktopShortcutBox $0
  ${NSD_GetState} $StartBox $1
  StrCpy $DesktopShortcutWanted 0
  StrCpy $StartWanted 0
  ${If} $0 = ${BST_CHECKED}
    StrCpy $DesktopShortcutWanted 1
  ${EndIf}
  ${If} $1 = ${BST_CHECKED}
    StrCpy $StartWanted 1
  ${EndIf}
FunctionEnd

; After the finish page: a "Restart now" there never comes back (Reboot does not return), so the app
; starts only when Windows is not restarting.
Function .onInstSuccess
  ${If} $StartWanted = 1
    Exec '"$INSTDIR\${EXE}"'
  ${EndIf}
FunctionEnd

; The app's windows belong to the runtime's pythonw.exe; they carry this AppUserModelID (desktop/app.py),
; and so do the shortcuts: the taskbar groups the window under the shortcut, and pinning the running
; window pins the launcher, not Python. NSIS's own COM helpers (Include\Win\COM.nsh) do the COM calls.
!define APP_USER_MODEL_ID "FinetuneStudio.App"

; Stack: the .lnk path. A shortcut that cannot be changed keeps working, without the ID.
Function SetShortcutAppId
  Exch $R0
  Push $0
  Push $1
  Push $2
  Push $3
  Push $4
  Push $5
  !insertmacro ComHlpr_CreateInProcInstance ${CLSID_ShellLink} ${IID_IShellLink} r0 ""
  ${If} $0 P<> 0
    ${IUnknown::QueryInterface} $0 '("${IID_IPersistFile}",.r1)'
    ${If} $1 P<> 0
      ${IPersistFile::Load} $1 '("$R0",${STGM_READWRITE}).r5'
      ${If} $5 = 0
        ${IUnknown::QueryInterface} $0 '("${IID_IPropertyStore}",.r2)'
        ${If} $2 P<> 0
          System::Call '*${SYSSTRUCT_PROPERTYKEY}(${PKEY_AppUserModel_ID})p.r3'
          System::Call '*(&w64 "${APP_USER_MODEL_ID}")p.r4'
          System::Call '*${SYSSTRUCT_PROPVARIANT}(${VT_LPWSTR},,p r4)p.r5'
          ${IPropertyStore::SetValue} $2 '($3,$5)'
          ${IPropertyStore::Commit} $2 ""
          System::Free $3
          System::Free $4
          System::Free $5
          ${IUnknown::Release} $2 ""
          ${IPersistFile::Save} $1 '("$R0",1)'
        ${EndIf}
      ${EndIf}
      ${IUnknown::Release} $1 ""
    ${EndIf}
    ${IUnknown::Release} $0 ""
  ${EndIf}
  Pop $5
  Pop $4
  Pop $3
  Pop $2
  Pop $1
  Pop $0
  Pop $R0
FunctionEnd

Function CreateDesktopShortcut
  CreateShortcut "$DESKTOP\${APP_NAME}.lnk" "$INSTDIR\${EXE}"
  Push "$DESKTOP\${APP_NAME}.lnk"
  Call SetShortcutAppId
FunctionEnd

; The offline packages: $EXEDIR\wheelhouse (beside the setup) into $INSTDIR\wheelhouse, where the
; launcher looks and then installs from them alone. An earlier install's copy goes first: without a
; folder beside this setup, the launcher must not install offline from old packages.
Function CopyWheelhouse
  RMDir /r "$INSTDIR\wheelhouse"
  ${IfNot} ${FileExists} "$EXEDIR\wheelhouse\*.whl"
    Return
  ${EndIf}
  ${GetSize} "$EXEDIR\wheelhouse" "/S=0M /G=0" $R2 $R3 $0
  ${GetRoot} "$INSTDIR" $0
  ${DriveSpace} "$0\" "/D=F /S=M" $R1
  ${If} $R1 < $R2
    MessageBox MB_ICONSTOP "$(WheelsNeedSpace)" /SD IDOK
    Abort
  ${EndIf}
  DetailPrint "$(CopyingWheels)"
  CreateDirectory "$INSTDIR\wheelhouse"
  StrCpy $R5 0
  FindFirst $0 $R4 "$EXEDIR\wheelhouse\*.*"
  ${DoWhile} $R4 != ""
    ${IfNot} ${FileExists} "$EXEDIR\wheelhouse\$R4\*.*"  ; files only: the folder is flat
      IntOp $R5 $R5 + 1
      DetailPrint "$(CopyingWheel)"
      ClearErrors
      CopyFiles /SILENT "$EXEDIR\wheelhouse\$R4" "$INSTDIR\wheelhouse"
      ${If} ${Errors}
        FindClose $0
        MessageBox MB_ICONSTOP "$(WheelsNotCopied)" /SD IDOK
        RMDir /r "$INSTDIR\wheelhouse"
        Abort
      ${EndIf}
    ${EndIf}
    FindNext $0 $R4
  ${Loop}
  FindClose $0
FunctionEnd

Section "Install" SecInstall
  !insertmacro WAIT_UNTIL_CLOSED
!ifdef VCREDIST
  ; PyTorch's DLLs need the Visual C++ 2015-2022 runtime, and at least ${VCRUNTIME_MINIMUM}: what Visual
  ; Studio 17.10 and later builds crashes in std::mutex with an older MSVCP140.dll. Installed or
  ; updated when it is missing or older (desktop/launcher/runtime.py checks the same before a setup).
  SetRegView 64
  ReadRegDWORD $0 HKLM "SOFTWARE\Microsoft\VisualStudio\14.0\VC\Runtimes\x64" "Installed"
  ReadRegDWORD $2 HKLM "SOFTWARE\Microsoft\VisualStudio\14.0\VC\Runtimes\x64" "Major"
  ReadRegDWORD $3 HKLM "SOFTWARE\Microsoft\VisualStudio\14.0\VC\Runtimes\x64" "Minor"
  SetRegView lastused
  StrCpy $4 0
  ${If} $0 != 1
    StrCpy $4 1
  ${ElseIf} $2 < ${VCRUNTIME_MAJOR}
    StrCpy $4 1
  ${ElseIf} $2 = ${VCRUNTIME_MAJOR}
  ${AndIf} $3 < ${VCRUNTIME_MINOR}
    StrCpy $4 1
  ${EndIf}
  ${If} $4 = 1
    File "/oname=$PLUGINSDIR\vc_redist.x64.exe" "${VCREDIST}"
    ClearErrors
    ExecWait '"$PLUGINSDIR\vc_redist.x64.exe" /install /quiet /norestart' $1
    ${If} ${Errors}  ; Windows could not start it at all: no exit code
      StrCpy $1 "-"
      MessageBox MB_ICONEXCLAMATION "$(VcRuntimeFailed)" /SD IDOK
    ${Else}
      ${If} $1 = 0
        DetailPrint "$(VcRuntimeInstalled)"
      ${ElseIf} $1 = 1638  ; a newer version was already there
        DetailPrint "$(VcRuntimeNewer)"
      ${ElseIf} $1 = 3010  ; installed; Windows finishes it at the next restart (offered, "later" chosen)
        DetailPrint "$(VcRuntimeRestart)"
        SetRebootFlag true
      ${ElseIf} $1 = 1602  ; the user cancelled it, or declined the administrator prompt
        MessageBox MB_ICONEXCLAMATION "$(VcRuntimeDeclined)" /SD IDOK
      ${Else}
        MessageBox MB_ICONEXCLAMATION "$(VcRuntimeFailed)" /SD IDOK
      ${EndIf}
    ${EndIf}
  ${EndIf}
!endif
  SetOutPath "$INSTDIR"
  ; An update replaces the program files; the runtime in ${DATA_DIR} is updated by the launcher.
  RMDir /r "$INSTDIR\_internal"
  Call CopyWheelhouse  ; first: a drive too small for it stops the setup before anything is replaced
  File /r "${BUNDLE_DIR}/*"
  WriteUninstaller "$INSTDIR\Uninstall.exe"
  CreateShortcut "$SMPROGRAMS\${APP_NAME}.lnk" "$INSTDIR\${EXE}"
  Push "$SMPROGRAMS\${APP_NAME}.lnk"
  Call SetShortcutAppId
  ${If} $DesktopShortcutWanted = 1
    Call CreateDesktopShortcut
  ${EndIf}

  WriteRegStr HKCU "Software\${APP_ID}" "InstallDir" "$INSTDIR"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayName" "${APP_NAME}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "Publisher" "${APP_NAME}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayIcon" "$INSTDIR\${EXE}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "UninstallString" '"$INSTDIR\Uninstall.exe"'
  WriteRegStr HKCU "${UNINSTALL_KEY}" "QuietUninstallString" '"$INSTDIR\Uninstall.exe" /S'
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoRepair" 1
  ${GetSize} "$INSTDIR" "/S=0K" $0 $1 $2
  IntFmt $0 "0x%08X" $0
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "EstimatedSize" "$0"
SectionEnd

; The offline packages beside the setup count in the space the directory page asks for (after the
; section, whose index it needs).
Function CountWheelhouse
  ${If} ${FileExists} "$EXEDIR\wheelhouse\*.whl"
    ${GetSize} "$EXEDIR\wheelhouse" "/S=0K /G=0" $0 $1 $2
    SectionGetSize ${SecInstall} $1
    IntOp $1 $1 + $0
    SectionSetSize ${SecInstall} $1
  ${EndIf}
FunctionEnd

Section "Uninstall"
  SetShellVarContext current
  !insertmacro WAIT_UNTIL_CLOSED
  Delete "$SMPROGRAMS\${APP_NAME}.lnk"
  Delete "$DESKTOP\${APP_NAME}.lnk"
  ; Only what the installer put there: never a recursive delete of a folder the user chose.
  RMDir /r "$INSTDIR\_internal"
  RMDir /r "$INSTDIR\wheelhouse"
  Delete "$INSTDIR\${EXE}"
  Delete "$INSTDIR\Uninstall.exe"
  RMDir "$INSTDIR"
  ; A moved data folder is named in location.txt (UTF-16, written by the app when it moved it). It is
  ; named, and removed on Yes, only when it holds our runtime or runs: never a folder the file merely
  ; names. Moved back to the default place, it is that folder.
  StrCpy $MovedData ""
  ClearErrors
  FileOpen $0 "${DATA_DIR}\location.txt" r
  ${IfNot} ${Errors}
    FileReadUTF16LE $0 $MovedData
    FileClose $0
  ${EndIf}
  StrCpy $1 "none"  ; where the data is: none (moved nowhere), ours, ours with the model cache, gone
  ${If} $MovedData != ""
  ${AndIf} $MovedData != "${DATA_DIR}"
    StrCpy $1 "gone"
    ${If} ${FileExists} "$MovedData\runtime\finetune-studio-runtime.json"
    ${OrIf} ${FileExists} "$MovedData\runs\*.*"
      StrCpy $1 "ours"
      ${If} ${FileExists} "$MovedData\huggingface\*.*"
        StrCpy $1 "models"
      ${EndIf}
    ${EndIf}
  ${EndIf}
  ; Silent uninstalls (/S) keep the user's data.
  ${If} $1 == "ours"
    MessageBox MB_YESNO|MB_ICONQUESTION "$(RemoveMovedData)" /SD IDNO IDNO keep_data
  ${ElseIf} $1 == "models"
    MessageBox MB_YESNO|MB_ICONQUESTION "$(RemoveMovedDataAndModels)" /SD IDNO IDNO keep_data
  ${Else}
    ${If} $1 == "gone"
      MessageBox MB_ICONINFORMATION "$(MovedDataNotFound)" /SD IDOK
    ${EndIf}
    MessageBox MB_YESNO|MB_ICONQUESTION "$(RemoveData)" /SD IDNO IDNO keep_data
  ${EndIf}
    ${If} $1 == "ours"
    ${OrIf} $1 == "models"
      !insertmacro REMOVE_TREE "$MovedData"
    ${EndIf}
    !insertmacro REMOVE_TREE "${DATA_DIR}"
    !insertmacro REMOVE_TREE "${SETTINGS_DIR}"
  keep_data:
  DeleteRegKey HKCU "${UNINSTALL_KEY}"
  DeleteRegKey HKCU "Software\${APP_ID}"
SectionEnd
