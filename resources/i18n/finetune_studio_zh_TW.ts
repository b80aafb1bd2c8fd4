<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_TW">
<context>
    <name>DataPage</name>
    <message>
        <source>Model &amp; data</source>
        <translation>模型與資料</translation>
    </message>
    <message>
        <source>What to train, and on which examples.</source>
        <translation>訓練什麼，用哪些樣本。</translation>
    </message>
    <message>
        <source>Choose a data file or a hub dataset.</source>
        <translation>請選擇資料檔案或 Hub 資料集。</translation>
    </message>
    <message>
        <source>Text classification</source>
        <translation>文字分類</translation>
    </message>
    <message>
        <source>Causal-LM / chat fine-tuning</source>
        <translation>因果語言模型 / 對話微調</translation>
    </message>
    <message>
        <source>Sequence-to-sequence</source>
        <translation>序列到序列</translation>
    </message>
    <message>
        <source>Hub id such as bert-base-chinese, or a local folder</source>
        <translation>Hub 模型 ID（如 bert-base-chinese）或本機資料夾</translation>
    </message>
    <message>
        <source>Folder…</source>
        <translation>資料夾…</translation>
    </message>
    <message>
        <source>Browse models…</source>
        <translation>瀏覽模型…</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>下載</translation>
    </message>
    <message>
        <source>A CSV, TSV, JSON(L), Parquet, TXT or Excel file, or a hub dataset id</source>
        <translation>CSV、TSV、JSON(L)、Parquet、TXT 或 Excel 檔案，或 Hub 資料集 ID</translation>
    </message>
    <message>
        <source>File…</source>
        <translation>檔案…</translation>
    </message>
    <message>
        <source>Try the sample</source>
        <translation>試用範例</translation>
    </message>
    <message>
        <source>Load short English reviews and a small offline English model</source>
        <translation>載入簡短的英文評論和一個可離線使用的小型英文模型</translation>
    </message>
    <message>
        <source>Share of the rows held out to measure the model; 0 = no evaluation</source>
        <translation>保留一部分資料用來評估模型；0 表示不評估</translation>
    </message>
    <message>
        <source>Chat messages</source>
        <translation>對話訊息</translation>
    </message>
    <message>
        <source>Instruction / input / output</source>
        <translation>指令 / 輸入 / 輸出</translation>
    </message>
    <message>
        <source>Prompt / completion</source>
        <translation>提示 / 補全</translation>
    </message>
    <message>
        <source>Plain text</source>
        <translation>純文字</translation>
    </message>
    <message>
        <source>Token lengths appear once the model and data are loaded.</source>
        <translation>載入模型和資料後，這裡會顯示各筆資料的 token 長度。</translation>
    </message>
    <message>
        <source>Task and model</source>
        <translation>任務和模型</translation>
    </message>
    <message>
        <source>Task:</source>
        <translation>任務：</translation>
    </message>
    <message>
        <source>Model:</source>
        <translation>模型：</translation>
    </message>
    <message>
        <source>Data</source>
        <translation>資料</translation>
    </message>
    <message>
        <source>Dataset:</source>
        <translation>資料集：</translation>
    </message>
    <message>
        <source>seed</source>
        <translation>隨機種子</translation>
    </message>
    <message>
        <source>Evaluation:</source>
        <translation>評估：</translation>
    </message>
    <message>
        <source>Columns</source>
        <translation>欄位</translation>
    </message>
    <message>
        <source>Format:</source>
        <translation>格式：</translation>
    </message>
    <message>
        <source>Token lengths</source>
        <translation>Token 長度</translation>
    </message>
    <message>
        <source>The columns are guessed again for {task}; check them below.</source>
        <translation>已依「{task}」重新推測各欄位，請在下方確認。</translation>
    </message>
    <message>
        <source>Download {dataset}</source>
        <translation>下載 {dataset}</translation>
    </message>
    <message>
        <source>Choose a model folder</source>
        <translation>選擇模型資料夾</translation>
    </message>
    <message>
        <source>Choose a data file</source>
        <translation>選擇資料檔案</translation>
    </message>
    <message>
        <source>Data files ({patterns})</source>
        <translation>資料檔案（{patterns}）</translation>
    </message>
    <message>
        <source>{arch} ({type}), {params} parameters</source>
        <translation>{arch}（{type}），{params} 個參數</translation>
    </message>
    <message>
        <source>A small pretrained model that ships with the app (works offline).</source>
        <translation>應用程式內建的小型預訓練模型（可離線使用）。</translation>
    </message>
    <message>
        <source>Download the model before training: it is not on this computer yet.</source>
        <translation>訓練前請先下載模型：這台電腦上還沒有它。</translation>
    </message>
    <message>
        <source>Not on this computer yet. Download it here (with progress and Cancel); training starts from the downloaded copy, without the network.</source>
        <translation>這台電腦上還沒有這個模型。請在這裡下載（可查看進度、隨時取消）；訓練會使用下載好的副本，不需要連網。</translation>
    </message>
    <message>
        <source>On this computer (downloaded): training needs no network.</source>
        <translation>已在這台電腦上（已下載）：訓練不需要連網。</translation>
    </message>
    <message>
        <source>this GPU</source>
        <translation>這張 GPU</translation>
    </message>
    <message>
        <source>RAM (no NVIDIA GPU)</source>
        <translation>記憶體（沒有 NVIDIA GPU）</translation>
    </message>
    <message>
        <source>Fit here: {badge}. Needs about {need} with the current Memory &amp; speed options; {have} free in {where}.</source>
        <translation>這台電腦：{badge}。依目前的「記憶體與速度」設定約需 {need}；{where}有 {have} 可用。</translation>
    </message>
    <message>
        <source>Roughly {minutes:.0f} min per epoch on this CPU.</source>
        <translation>在這台電腦的 CPU 上，每輪（epoch）約需 {minutes:.0f} 分鐘。</translation>
    </message>
    <message>
        <source>Reading the data…</source>
        <translation>正在讀取資料…</translation>
    </message>
    <message>
        <source>{train} rows for training, {eval} for evaluation</source>
        <translation>{train} 筆用於訓練，{eval} 筆用於評估</translation>
    </message>
    <message>
        <source>(none)</source>
        <translation>（無）</translation>
    </message>
    <message>
        <source>(choose a column)</source>
        <translation>（選擇一個欄位）</translation>
    </message>
    <message>
        <source>guessed from its name</source>
        <translation>依欄位名稱推測</translation>
    </message>
    <message>
        <source>guessed from the content</source>
        <translation>依內容推測</translation>
    </message>
    <message>
        <source> (optional)</source>
        <translation>（選填）</translation>
    </message>
    <message>
        <source>Choose a column for: {roles}.</source>
        <translation>請為以下用途選擇欄位：{roles}。</translation>
    </message>
    <message>
        <source>Loading the tokenizer…</source>
        <translation>正在載入分詞器…</translation>
    </message>
    <message>
        <source>{name}: min {min}, median {median}, 95% {p95}, max {max} tokens; {over} of {count} longer than the limit ({limit}) and cut</source>
        <translation>{name}：最短 {min}，中位數 {median}，95% 為 {p95}，最長 {max} 個 token；{count} 筆中有 {over} 筆超過上限（{limit}）並被截斷</translation>
    </message>
    <message>
        <source>Token lengths unavailable: {error}</source>
        <translation>無法取得 token 長度：{error}</translation>
    </message>
</context>
<context>
    <name>DownloadDialog</name>
    <message>
        <source>Close</source>
        <translation>關閉</translation>
    </message>
</context>
<context>
    <name>DownloadPanel</name>
    <message>
        <source>Cancel download</source>
        <translation>取消下載</translation>
    </message>
    <message>
        <source>Enter an access token…</source>
        <translation>輸入存取權杖…</translation>
    </message>
    <message>
        <source>Preparing the download of {name} from {source}…</source>
        <translation>正在準備從 {source} 下載 {name}…</translation>
    </message>
    <message>
        <source>{minutes}:{seconds:02d} left</source>
        <translation>剩餘 {minutes}:{seconds:02d}</translation>
    </message>
    <message>
        <source>{done} of {total} · {speed}/s · {left}</source>
        <translation>{done} / {total} · {speed}/s · {left}</translation>
    </message>
    <message>
        <source>{name} is on this computer: {folder}</source>
        <translation>{name} 已在這台電腦上：{folder}</translation>
    </message>
    <message>
        <source>Download cancelled. What was downloaded is kept: Download again resumes it.</source>
        <translation>下載已取消。已下載的部分會保留：再按一次「下載」即可從中斷處繼續。</translation>
    </message>
</context>
<context>
    <name>EnvironmentPage</name>
    <message>
        <source>Environment</source>
        <translation>執行環境</translation>
    </message>
    <message>
        <source>Your GPU, your PyTorch, and whether they work together.</source>
        <translation>你的 GPU、你的 PyTorch，以及兩者能否一起運作。</translation>
    </message>
    <message>
        <source>Checking your GPU and PyTorch…</source>
        <translation>正在檢查 GPU 和 PyTorch…</translation>
    </message>
    <message>
        <source>Install the matching PyTorch</source>
        <translation>安裝相符的 PyTorch</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Show log</source>
        <translation>顯示記錄</translation>
    </message>
    <message>
        <source>https://download.pytorch.org/whl (default)</source>
        <translation>https://download.pytorch.org/whl（預設）</translation>
    </message>
    <message>
        <source>A mirror or private index with PyTorch wheels, for slow or blocked networks</source>
        <translation>提供 PyTorch 安裝套件的鏡像站或私有索引，適用於網路慢或受限時</translation>
    </message>
    <message>
        <source>Check again</source>
        <translation>重新檢查</translation>
    </message>
    <message>
        <source>Copy diagnostics</source>
        <translation>複製診斷資訊</translation>
    </message>
    <message>
        <source>Copy a report of this machine to paste into a bug report</source>
        <translation>複製一份這台電腦的報告，貼到問題回報中</translation>
    </message>
    <message>
        <source>Package index:</source>
        <translation>套件索引：</translation>
    </message>
    <message>
        <source>Installs {requirements} from {index} with {tool}.</source>
        <translation>將用 {tool} 從 {index} 安裝 {requirements}。</translation>
    </message>
    <message>
        <source>CPU only</source>
        <translation>僅 CPU</translation>
    </message>
    <message>
        <source>PyTorch {version} ({build})</source>
        <translation>PyTorch {version}（{build}）</translation>
    </message>
    <message>
        <source>PyTorch is not installed.</source>
        <translation>尚未安裝 PyTorch。</translation>
    </message>
    <message>
        <source>The check failed: {error}</source>
        <translation>檢查失敗：{error}</translation>
    </message>
    <message>
        <source>Finetune Studio is still running elsewhere ({others}). Close those windows and command-line runs, then press Install again.</source>
        <translation>Finetune Studio 仍在其他地方執行（{others}）。請關閉那些視窗和命令列作業，然後再按「安裝」。</translation>
    </message>
    <message>
        <source>{message} Proved: a matrix multiplication ran on {device} in {seconds:.2f} s.</source>
        <translation>{message} 已驗證：矩陣乘法在 {device} 上執行成功，耗時 {seconds:.2f} 秒。</translation>
    </message>
    <message>
        <source>{message} But the GPU test failed: {error}</source>
        <translation>{message} 但 GPU 測試失敗：{error}</translation>
    </message>
    <message>
        <source>Diagnostics copied: paste them into your bug report.</source>
        <translation>診斷資訊已複製：請貼到你的問題回報中。</translation>
    </message>
</context>
<context>
    <name>ExportPage</name>
    <message>
        <source>Export</source>
        <translation>匯出</translation>
    </message>
    <message>
        <source>Your fine-tuned model, ready for from_pretrained().</source>
        <translation>你微調好的模型，可直接用 from_pretrained() 載入。</translation>
    </message>
    <message>
        <source>Train a model first: its folder and scores appear here.</source>
        <translation>請先訓練一個模型：它的資料夾和分數會顯示在這裡。</translation>
    </message>
    <message>
        <source>Open model folder</source>
        <translation>開啟模型資料夾</translation>
    </message>
    <message>
        <source>Copy path</source>
        <translation>複製路徑</translation>
    </message>
    <message>
        <source>A new, empty folder</source>
        <translation>一個新的空資料夾</translation>
    </message>
    <message>
        <source>Folder…</source>
        <translation>資料夾…</translation>
    </message>
    <message>
        <source>fp16 and bf16 halve the size; fp32 keeps every bit</source>
        <translation>fp16 和 bf16 可讓大小減半；fp32 保留完整精度</translation>
    </message>
    <message>
        <source>LoRA adapters only (not merged)</source>
        <translation>只匯出 LoRA 適配器（不合併）</translation>
    </message>
    <message>
        <source>Also make a .zip</source>
        <translation>同時產生 .zip</translation>
    </message>
    <message>
        <source>Also log the model to MLflow</source>
        <translation>同時將模型記錄到 MLflow</translation>
    </message>
    <message>
        <source>Logs to {uri}</source>
        <translation>記錄到 {uri}</translation>
    </message>
    <message>
        <source>Set MLFLOW_TRACKING_URI before starting the app to use this.</source>
        <translation>要使用此功能，請在啟動應用程式前設定 MLFLOW_TRACKING_URI。</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Model folder:</source>
        <translation>模型資料夾：</translation>
    </message>
    <message>
        <source>Run folder:</source>
        <translation>訓練任務資料夾：</translation>
    </message>
    <message>
        <source>Scores:</source>
        <translation>分數：</translation>
    </message>
    <message>
        <source>Files:</source>
        <translation>檔案：</translation>
    </message>
    <message>
        <source>Export a copy</source>
        <translation>匯出副本</translation>
    </message>
    <message>
        <source>To:</source>
        <translation>到：</translation>
    </message>
    <message>
        <source>Weights:</source>
        <translation>權重：</translation>
    </message>
    <message>
        <source>Try it</source>
        <translation>試試看</translation>
    </message>
    <message>
        <source>Choose a folder to export to.</source>
        <translation>請選擇要匯出到的資料夾。</translation>
    </message>
    <message>
        <source>Folder not empty</source>
        <translation>資料夾不是空的</translation>
    </message>
    <message>
        <source>{folder} is not empty. Replace what is in it?</source>
        <translation>{folder} 不是空的。要取代其中的內容嗎？</translation>
    </message>
    <message>
        <source>Exporting and verifying…</source>
        <translation>正在匯出並驗證…</translation>
    </message>
    <message>
        <source>Exported to {folder}.</source>
        <translation>已匯出到 {folder}。</translation>
    </message>
    <message>
        <source>Verified: reloaded in a fresh process, outputs differ by at most {diff:.2g}.</source>
        <translation>驗證通過：已在新的處理程序中重新載入，輸出差異不超過 {diff:.2g}。</translation>
    </message>
    <message>
        <source>Warning: the reloaded folder gives different outputs ({diff:.3g}). {error}</source>
        <translation>警告：重新載入的資料夾產生了不同的輸出（{diff:.3g}）。{error}</translation>
    </message>
    <message>
        <source>Logged to MLflow as {uri}.</source>
        <translation>已以 {uri} 記錄到 MLflow。</translation>
    </message>
    <message>
        <source>Export cancelled; nothing was written.</source>
        <translation>匯出已取消；沒有寫入任何內容。</translation>
    </message>
    <message>
        <source>Export failed: {error}</source>
        <translation>匯出失敗：{error}</translation>
    </message>
    <message>
        <source>Loading the model…</source>
        <translation>正在載入模型…</translation>
    </message>
    <message>
        <source>Copying the adapters…</source>
        <translation>正在複製適配器…</translation>
    </message>
    <message>
        <source>Writing the weights…</source>
        <translation>正在寫入權重…</translation>
    </message>
    <message>
        <source>Copying the tokenizer…</source>
        <translation>正在複製分詞器…</translation>
    </message>
    <message>
        <source>Writing the model card…</source>
        <translation>正在寫入模型卡…</translation>
    </message>
    <message>
        <source>Putting the folder in place…</source>
        <translation>正在把資料夾放到定位…</translation>
    </message>
    <message>
        <source>Making the zip archive…</source>
        <translation>正在產生 zip 壓縮檔…</translation>
    </message>
    <message>
        <source>Verifying: reloading the folder in a fresh process…</source>
        <translation>正在驗證：在新的處理程序中重新載入資料夾…</translation>
    </message>
    <message>
        <source>Logging the model to MLflow…</source>
        <translation>正在將模型記錄到 MLflow…</translation>
    </message>
    <message>
        <source>Done.</source>
        <translation>完成。</translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation>正在取消…</translation>
    </message>
    <message>
        <source>Export to</source>
        <translation>匯出到</translation>
    </message>
</context>
<context>
    <name>FitBadge</name>
    <message>
        <source>fits</source>
        <translation>放得下</translation>
    </message>
    <message>
        <source>tight</source>
        <translation>勉強</translation>
    </message>
    <message>
        <source>fits with LoRA</source>
        <translation>用 LoRA 放得下</translation>
    </message>
    <message>
        <source>fits with QLoRA</source>
        <translation>用 QLoRA 放得下</translation>
    </message>
    <message>
        <source>does not fit</source>
        <translation>放不下</translation>
    </message>
</context>
<context>
    <name>GpuInfoWidget</name>
    <message>
        <source>{used:.1f} of {total:.1f} GB in use</source>
        <translation>已用 {used:.1f} GB，共 {total:.1f} GB</translation>
    </message>
    <message>
        <source>compute capability {major}.{minor}</source>
        <translation>運算能力 {major}.{minor}</translation>
    </message>
    <message>
        <source>driver {driver}</source>
        <translation>驅動程式 {driver}</translation>
    </message>
    <message>
        <source>CUDA up to {major}.{minor}</source>
        <translation>最高支援 CUDA {major}.{minor}</translation>
    </message>
    <message>
        <source>{percent}% busy</source>
        <translation>使用率 {percent}%</translation>
    </message>
</context>
<context>
    <name>HistogramWidget</name>
    <message>
        <source>tokens</source>
        <translation>token 數</translation>
    </message>
</context>
<context>
    <name>HubSettingsDialog</name>
    <message>
        <source>Model sources</source>
        <translation>模型下載來源</translation>
    </message>
    <message>
        <source>Auto: the fastest that answers</source>
        <translation>自動：選回應最快的</translation>
    </message>
    <message>
        <source>Hugging Face</source>
        <translation>Hugging Face</translation>
    </message>
    <message>
        <source>A mirror of Hugging Face</source>
        <translation>Hugging Face 鏡像站</translation>
    </message>
    <message>
        <source>ModelScope (魔搭)</source>
        <translation>ModelScope（魔搭）</translation>
    </message>
    <message>
        <source>saved in the system keyring</source>
        <translation>已儲存在系統鑰匙圈中</translation>
    </message>
    <message>
        <source>for gated models; kept in the system keyring</source>
        <translation>用於受限模型；儲存在系統鑰匙圈中</translation>
    </message>
    <message>
        <source>Check which sources answer</source>
        <translation>檢查哪些下載來源可用</translation>
    </message>
    <message>
        <source>Download from:</source>
        <translation>下載來源：</translation>
    </message>
    <message>
        <source>Mirror address:</source>
        <translation>鏡像站網址：</translation>
    </message>
    <message>
        <source>Hugging Face token:</source>
        <translation>Hugging Face 權杖：</translation>
    </message>
    <message>
        <source>ModelScope token:</source>
        <translation>ModelScope 權杖：</translation>
    </message>
    <message>
        <source>Asking each source (at most 3 s)…</source>
        <translation>正在逐一詢問下載來源（最多 3 秒）…</translation>
    </message>
    <message>
        <source>{name}: answered in {ms} ms</source>
        <translation>{name}：{ms} 毫秒內回應</translation>
    </message>
    <message>
        <source>{name}: no answer ({why})</source>
        <translation>{name}：沒有回應（{why}）</translation>
    </message>
    <message>
        <source>Auto uses {source}.</source>
        <translation>「自動」將使用 {source}。</translation>
    </message>
    <message>
        <source>There is no usable system keyring, so the token was not saved. Set HF_TOKEN / MODELSCOPE_API_TOKEN in the environment instead.</source>
        <translation>沒有可用的系統鑰匙圈，權杖未儲存。請改為在環境變數中設定 HF_TOKEN / MODELSCOPE_API_TOKEN。</translation>
    </message>
</context>
<context>
    <name>LivePlotWidget</name>
    <message>
        <source>step</source>
        <translation>步</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>Finetune Studio</source>
        <translation>Finetune Studio</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>繼續訓練</translation>
    </message>
    <message>
        <source>Not now</source>
        <translation>稍後再說</translation>
    </message>
    <message>
        <source>&amp;Back</source>
        <translation>上一步(&amp;B)</translation>
    </message>
    <message>
        <source>&amp;Next</source>
        <translation>下一步(&amp;N)</translation>
    </message>
    <message>
        <source>Training did not finish.</source>
        <translation>訓練沒有完成。</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>檔案(&amp;F)</translation>
    </message>
    <message>
        <source>Try the &amp;sample</source>
        <translation>試用範例(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Open run config…</source>
        <translation>開啟訓練設定檔(&amp;O)…</translation>
    </message>
    <message>
        <source>&amp;Save run config…</source>
        <translation>儲存訓練設定檔(&amp;S)…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>結束(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Runs</source>
        <translation>訓練任務(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Run history…</source>
        <translation>訓練紀錄(&amp;R)…</translation>
    </message>
    <message>
        <source>&amp;Try a model folder…</source>
        <translation>試用模型資料夾(&amp;T)…</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>檢視(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>語言(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;Settings</source>
        <translation>設定(&amp;S)</translation>
    </message>
    <message>
        <source>Model &amp;sources and tokens…</source>
        <translation>模型下載來源與權杖(&amp;S)…</translation>
    </message>
    <message>
        <source>Sample loaded: English reviews with the English all-MiniLM-L6-v2 model.</source>
        <translation>範例已載入：英文評論，搭配英文模型 all-MiniLM-L6-v2。</translation>
    </message>
    <message>
        <source>Open run config</source>
        <translation>開啟訓練設定檔</translation>
    </message>
    <message>
        <source>Run configs (*.toml)</source>
        <translation>訓練設定檔（*.toml）</translation>
    </message>
    <message>
        <source>Cannot open this config</source>
        <translation>無法開啟這個設定檔</translation>
    </message>
    <message>
        <source>Save run config</source>
        <translation>儲存訓練設定檔</translation>
    </message>
    <message>
        <source>Saved {path}</source>
        <translation>已儲存 {path}</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>語言</translation>
    </message>
    <message>
        <source>The new language is used from the next start. Restart Finetune Studio now?</source>
        <translation>新語言會在下次啟動時生效。現在重新啟動 Finetune Studio 嗎？</translation>
    </message>
    <message>
        <source>{headline} See the Environment step to fix it.</source>
        <translation>{headline} 請到「執行環境」步驟修復。</translation>
    </message>
    <message>
        <source>A training run is in progress: stop it first, then install PyTorch.</source>
        <translation>有訓練任務正在進行：請先停止它，再安裝 PyTorch。</translation>
    </message>
    <message>
        <source>An export is in progress: wait for it, then install PyTorch.</source>
        <translation>正在匯出：請等它完成，再安裝 PyTorch。</translation>
    </message>
    <message>
        <source>Restart to install PyTorch</source>
        <translation>重新啟動以安裝 PyTorch</translation>
    </message>
    <message>
        <source>PyTorch is in use by this window, so it cannot be replaced now. Restart the app and install the matching PyTorch first thing?</source>
        <translation>這個視窗正在使用 PyTorch，現在無法替換。要重新啟動應用程式，並優先安裝相符的 PyTorch 嗎？</translation>
    </message>
    <message>
        <source>Could not restart</source>
        <translation>無法重新啟動</translation>
    </message>
    <message>
        <source>Close the app, then run: python -m desktop --repair</source>
        <translation>請關閉應用程式，然後執行：python -m desktop --repair</translation>
    </message>
    <message>
        <source>Training…</source>
        <translation>正在訓練…</translation>
    </message>
    <message>
        <source>Cannot apply this change</source>
        <translation>無法套用這項變更</translation>
    </message>
    <message>
        <source>Changed {fields}; training again.</source>
        <translation>已變更 {fields}；重新訓練。</translation>
    </message>
    <message>
        <source>Training finished. The model is in {folder}</source>
        <translation>訓練完成。模型在 {folder}</translation>
    </message>
    <message>
        <source>A run is in progress</source>
        <translation>有訓練任務正在進行</translation>
    </message>
    <message>
        <source>Stop the current run before resuming another.</source>
        <translation>請先停止目前的訓練任務，再繼續另一個。</translation>
    </message>
    <message>
        <source>Cannot resume this run</source>
        <translation>無法繼續這個訓練任務</translation>
    </message>
    <message>
        <source>Resuming {run}</source>
        <translation>正在繼續 {run}</translation>
    </message>
    <message>
        <source>No model in this run</source>
        <translation>這個訓練任務沒有模型</translation>
    </message>
    <message>
        <source>This run has no finished model to export.</source>
        <translation>這個訓練任務沒有已完成的模型可匯出。</translation>
    </message>
    <message>
        <source>Open a model folder</source>
        <translation>開啟模型資料夾</translation>
    </message>
    <message>
        <source>The run {run} was interrupted at step {step} of {total} (the app or the computer stopped). Resume it from its last checkpoint?</source>
        <translation>訓練任務 {run} 在第 {step} 步（共 {total} 步）時中斷了（應用程式或電腦停止了運作）。要從最近的檢查點繼續嗎？</translation>
    </message>
    <message>
        <source>Training is running</source>
        <translation>正在訓練</translation>
    </message>
    <message>
        <source>Stop training and quit? A checkpoint is saved so you can resume later.</source>
        <translation>停止訓練並結束嗎？會儲存一個檢查點，之後可以繼續。</translation>
    </message>
    <message>
        <source>Stopping training and saving a checkpoint…</source>
        <translation>正在停止訓練並儲存檢查點…</translation>
    </message>
</context>
<context>
    <name>ModelBrowser</name>
    <message>
        <source>Choose a model</source>
        <translation>選擇模型</translation>
    </message>
    <message>
        <source>Languages</source>
        <translation>語言</translation>
    </message>
    <message>
        <source>About</source>
        <translation>簡介</translation>
    </message>
    <message>
        <source>Search models, e.g. qwen, chinese, bert</source>
        <translation>搜尋模型，例如 qwen、chinese、bert</translation>
    </message>
    <message>
        <source>Most downloaded</source>
        <translation>下載最多</translation>
    </message>
    <message>
        <source>Most liked</source>
        <translation>按讚最多</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>搜尋</translation>
    </message>
    <message>
        <source>Delete from this computer…</source>
        <translation>從這台電腦刪除…</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>下載</translation>
    </message>
    <message>
        <source>Use this model</source>
        <translation>使用這個模型</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>關閉</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>參數量</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>License</source>
        <translation>授權條款</translation>
    </message>
    <message>
        <source>Downloads</source>
        <translation>下載次數</translation>
    </message>
    <message>
        <source>Likes</source>
        <translation>讚</translation>
    </message>
    <message>
        <source>Updated</source>
        <translation>更新時間</translation>
    </message>
    <message>
        <source>Fit here</source>
        <translation>這台電腦能否訓練</translation>
    </message>
    <message>
        <source>Recommended</source>
        <translation>推薦</translation>
    </message>
    <message>
        <source>On this computer</source>
        <translation>這台電腦上的</translation>
    </message>
    <message>
        <source>{license} · gated</source>
        <translation>{license} · 受限</translation>
    </message>
    <message>
        <source>Gated: accept the license on the model&apos;s page, then add a token in Settings &gt; Model sources.</source>
        <translation>受限模型：請先在模型頁面同意授權條款，然後在「設定 &gt; 模型下載來源」中加入權杖。</translation>
    </message>
    <message>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <source>{verdict} · {need} of RAM</source>
        <translation>{verdict} · 需 {need} 記憶體</translation>
    </message>
    <message>
        <source> · ~{minutes:.0f} min/epoch</source>
        <translation> · 每輪約 {minutes:.0f} 分鐘</translation>
    </message>
    <message>
        <source>Needs about {need} with the current Memory &amp; speed options; {have} available.</source>
        <translation>依目前的「記憶體與速度」設定約需 {need}；可用 {have}。</translation>
    </message>
    <message>
        <source>Searching {source}…</source>
        <translation>正在搜尋 {source}…</translation>
    </message>
    <message numerus="yes">
        <source>%n model(s) found.</source>
        <translation>
            <numerusform>找到 %n 個模型。</numerusform>
        </translation>
    </message>
    <message>
        <source>Select a model first.</source>
        <translation>請先選擇一個模型。</translation>
    </message>
    <message>
        <source>Select a downloaded model (your own folders are never deleted here).</source>
        <translation>請選擇一個下載的模型（你自己的資料夾不會在這裡被刪除）。</translation>
    </message>
    <message>
        <source>Delete from this computer?</source>
        <translation>從這台電腦刪除？</translation>
    </message>
    <message>
        <source>Delete {model} ({size}) from the download cache? It can be downloaded again later.</source>
        <translation>要從下載快取中刪除 {model}（{size}）嗎？之後可以重新下載。</translation>
    </message>
    <message>
        <source>Deleted {model}: {size} freed.</source>
        <translation>已刪除 {model}：釋放了 {size}。</translation>
    </message>
</context>
<context>
    <name>OptionsPage</name>
    <message>
        <source>Memory &amp; speed</source>
        <translation>記憶體與速度</translation>
    </message>
    <message>
        <source>How long and how hard to train.</source>
        <translation>訓練多久、多用力。</translation>
    </message>
    <message>
        <source>use epochs</source>
        <translation>依輪數</translation>
    </message>
    <message>
        <source>Below 1: a fraction of all steps. From 1: a number of steps.</source>
        <translation>小於 1：占全部步數的比例。1 以上：步數。</translation>
    </message>
    <message>
        <source>each epoch</source>
        <translation>每輪</translation>
    </message>
    <message>
        <source>Folder…</source>
        <translation>資料夾…</translation>
    </message>
    <message>
        <source>tensorboard, mlflow (optional)</source>
        <translation>tensorboard、mlflow（選填）</translation>
    </message>
    <message>
        <source>Also log the run to these trackers; each must be installed</source>
        <translation>同時把訓練過程記錄到這些工具；每個都需要已安裝</translation>
    </message>
    <message>
        <source>task and model</source>
        <translation>任務和模型</translation>
    </message>
    <message>
        <source>Schedule</source>
        <translation>訓練排程</translation>
    </message>
    <message>
        <source>Epochs</source>
        <translation>輪數（epoch）</translation>
    </message>
    <message>
        <source>Max steps</source>
        <translation>最大步數</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>學習率</translation>
    </message>
    <message>
        <source>Scheduler</source>
        <translation>學習率排程</translation>
    </message>
    <message>
        <source>Warm-up</source>
        <translation>暖身</translation>
    </message>
    <message>
        <source>Seed</source>
        <translation>隨機種子</translation>
    </message>
    <message>
        <source>Batches and sequences</source>
        <translation>批次與序列</translation>
    </message>
    <message>
        <source>Batch size per device</source>
        <translation>每個裝置的批次大小</translation>
    </message>
    <message>
        <source>Gradient accumulation</source>
        <translation>梯度累積</translation>
    </message>
    <message>
        <source>Max sequence length</source>
        <translation>最大序列長度</translation>
    </message>
    <message>
        <source>Evaluation, checkpoints and output</source>
        <translation>評估、檢查點與輸出</translation>
    </message>
    <message>
        <source>Evaluate every (steps)</source>
        <translation>評估間隔（步）</translation>
    </message>
    <message>
        <source>Checkpoint every (steps)</source>
        <translation>檢查點間隔（步）</translation>
    </message>
    <message>
        <source>Log every (steps)</source>
        <translation>記錄間隔（步）</translation>
    </message>
    <message>
        <source>Runs folder</source>
        <translation>訓練任務資料夾</translation>
    </message>
    <message>
        <source>Run name</source>
        <translation>訓練任務名稱</translation>
    </message>
    <message>
        <source>Also log to</source>
        <translation>同時記錄到</translation>
    </message>
    <message>
        <source>Speed and memory</source>
        <translation>速度與記憶體</translation>
    </message>
    <message>
        <source>LoRA adapters</source>
        <translation>LoRA 適配器</translation>
    </message>
    <message>
        <source>Memory estimate and presets</source>
        <translation>記憶體估算與預設</translation>
    </message>
    <message>
        <source>Choose a model first.</source>
        <translation>請先選擇模型。</translation>
    </message>
    <message>
        <source>Fastest</source>
        <translation>最快</translation>
    </message>
    <message>
        <source>Balanced</source>
        <translation>均衡</translation>
    </message>
    <message>
        <source>Lowest memory</source>
        <translation>最省記憶體</translation>
    </message>
    <message>
        <source>Fit my GPU</source>
        <translation>配合我的 GPU</translation>
    </message>
    <message>
        <source>Undo</source>
        <translation>復原</translation>
    </message>
    <message>
        <source>No NVIDIA GPU was found to fit the settings to.</source>
        <translation>沒有找到可用來調整設定的 NVIDIA GPU。</translation>
    </message>
    <message>
        <source>Reading the model&apos;s size…</source>
        <translation>正在讀取模型大小…</translation>
    </message>
    <message>
        <source>The model&apos;s size could not be read: {error}</source>
        <translation>無法讀取模型大小：{error}</translation>
    </message>
    <message>
        <source>On this computer the run uses RAM: {parts}</source>
        <translation>在這台電腦上，訓練使用記憶體：{parts}</translation>
    </message>
    <message>
        <source>No NVIDIA GPU here: training runs on the CPU and needs about {total:.1f} GB of RAM ({free:.1f} GB free). It is much slower than on a GPU: small models and short texts suit it best.</source>
        <translation>這裡沒有 NVIDIA GPU：訓練會在 CPU 上執行，約需 {total:.1f} GB 記憶體（可用 {free:.1f} GB）。速度比 GPU 慢得多，最適合小模型和短文字。</translation>
    </message>
    <message>
        <source>fits</source>
        <translation>放得下</translation>
    </message>
    <message>
        <source>fits, but tightly</source>
        <translation>放得下，但很緊</translation>
    </message>
    <message>
        <source>will not fit</source>
        <translation>放不下</translation>
    </message>
    <message>
        <source>Needs about {total:.1f} GB: {verdict} in the {free:.1f} GB free on {gpu}.</source>
        <translation>約需 {total:.1f} GB：在 {gpu} 可用的 {free:.1f} GB 中{verdict}。</translation>
    </message>
    <message>
        <source>nothing: the current settings already match</source>
        <translation>不需變更：目前的設定已經合適</translation>
    </message>
    <message>
        <source>Changed: {changes}</source>
        <translation>已變更：{changes}</translation>
    </message>
    <message>
        <source>all linear layers</source>
        <translation>所有線性層</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>最佳化器</translation>
    </message>
    <message>
        <source>Gradient checkpointing</source>
        <translation>梯度檢查點</translation>
    </message>
    <message>
        <source>Pin memory</source>
        <translation>鎖頁記憶體（pin memory）</translation>
    </message>
    <message>
        <source>Data loader workers</source>
        <translation>資料載入程序數</translation>
    </message>
    <message>
        <source>Empty the GPU cache every (steps)</source>
        <translation>每隔多少步清空 GPU 快取</translation>
    </message>
    <message>
        <source>Compile the model (torch.compile)</source>
        <translation>編譯模型（torch.compile）</translation>
    </message>
    <message>
        <source>Compile backend</source>
        <translation>編譯後端</translation>
    </message>
    <message>
        <source>Attention</source>
        <translation>注意力實作</translation>
    </message>
    <message>
        <source>Train LoRA adapters</source>
        <translation>訓練 LoRA 適配器</translation>
    </message>
    <message>
        <source>Rank</source>
        <translation>秩（rank）</translation>
    </message>
    <message>
        <source>Alpha</source>
        <translation>Alpha</translation>
    </message>
    <message>
        <source>Dropout</source>
        <translation>Dropout</translation>
    </message>
    <message>
        <source>Target modules</source>
        <translation>目標模組</translation>
    </message>
    <message>
        <source>QLoRA (4-bit base model)</source>
        <translation>QLoRA（4 位元基礎模型）</translation>
    </message>
    <message>
        <source>Effective batch: {n} examples per update</source>
        <translation>有效批次大小：每次更新 {n} 個樣本</translation>
    </message>
    <message>
        <source>Folder for run folders</source>
        <translation>存放訓練任務的資料夾</translation>
    </message>
</context>
<context>
    <name>RunsDialog</name>
    <message>
        <source>Runs</source>
        <translation>訓練紀錄</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名稱</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>狀態</translation>
    </message>
    <message>
        <source>Task</source>
        <translation>任務</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Dataset</source>
        <translation>資料集</translation>
    </message>
    <message>
        <source>Best score</source>
        <translation>最佳分數</translation>
    </message>
    <message>
        <source>Date</source>
        <translation>日期</translation>
    </message>
    <message>
        <source>Open folder</source>
        <translation>開啟資料夾</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>繼續訓練</translation>
    </message>
    <message>
        <source>Export / try it</source>
        <translation>匯出 / 試用</translation>
    </message>
    <message>
        <source>Delete…</source>
        <translation>刪除…</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>重新整理</translation>
    </message>
    <message>
        <source>Training loss</source>
        <translation>訓練損失</translation>
    </message>
    <message>
        <source>Finished</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>Stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>失敗</translation>
    </message>
    <message>
        <source>Running</source>
        <translation>執行中</translation>
    </message>
    <message>
        <source>Crashed</source>
        <translation>異常中斷</translation>
    </message>
    <message>
        <source>Runs in {folder}</source>
        <translation>{folder} 中的訓練任務</translation>
    </message>
    <message>
        <source>No runs yet: train a model and it is listed here.</source>
        <translation>還沒有訓練任務：訓練一個模型後，它會列在這裡。</translation>
    </message>
    <message>
        <source>This run saved no checkpoint, so it cannot be resumed; train it again.</source>
        <translation>這個訓練任務沒有儲存檢查點，無法繼續；請重新訓練。</translation>
    </message>
    <message>
        <source>Select two or more runs to compare their loss curves.</source>
        <translation>選擇兩個或更多訓練任務，比較它們的損失曲線。</translation>
    </message>
    <message>
        <source>Delete runs</source>
        <translation>刪除訓練任務</translation>
    </message>
    <message>
        <source>Delete these runs for good, with their checkpoints and models?

{names}</source>
        <translation>要永久刪除這些訓練任務及其檢查點和模型嗎？

{names}</translation>
    </message>
    <message>
        <source>Could not delete a run</source>
        <translation>無法刪除訓練任務</translation>
    </message>
</context>
<context>
    <name>ThroughputPlotWidget</name>
    <message>
        <source>samples/s</source>
        <translation>樣本/秒</translation>
    </message>
    <message>
        <source>tokens/s</source>
        <translation>token/秒</translation>
    </message>
</context>
<context>
    <name>TrainPage</name>
    <message>
        <source>Train</source>
        <translation>訓練</translation>
    </message>
    <message>
        <source>Watch the loss fall. Stop keeps a checkpoint you can resume from.</source>
        <translation>看著損失下降。停止時會保留檢查點，之後可以繼續。</translation>
    </message>
    <message>
        <source>Start training</source>
        <translation>開始訓練</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>繼續訓練</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Ready. Press Start to train.</source>
        <translation>準備就緒。按「開始訓練」即可訓練。</translation>
    </message>
    <message>
        <source>step %v of %m</source>
        <translation>第 %v 步，共 %m 步</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>詳細資訊</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>損失</translation>
    </message>
    <message>
        <source>train</source>
        <translation>訓練</translation>
    </message>
    <message>
        <source>train (smoothed)</source>
        <translation>訓練（平滑）</translation>
    </message>
    <message>
        <source>eval</source>
        <translation>評估</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>學習率</translation>
    </message>
    <message>
        <source>learning rate</source>
        <translation>學習率</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>記憶體</translation>
    </message>
    <message>
        <source>VRAM allocated</source>
        <translation>已配置的顯示記憶體</translation>
    </message>
    <message>
        <source>VRAM reserved</source>
        <translation>已保留的顯示記憶體</translation>
    </message>
    <message>
        <source>process RAM</source>
        <translation>程序記憶體</translation>
    </message>
    <message>
        <source>GPU used, all processes (NVML)</source>
        <translation>GPU 已用（所有程序，NVML）</translation>
    </message>
    <message>
        <source>GPU total</source>
        <translation>GPU 總量</translation>
    </message>
    <message>
        <source>Throughput</source>
        <translation>處理量</translation>
    </message>
    <message>
        <source>samples/s</source>
        <translation>樣本/秒</translation>
    </message>
    <message>
        <source>tokens/s</source>
        <translation>token/秒</translation>
    </message>
    <message>
        <source>Resuming {run}.</source>
        <translation>正在繼續 {run}。</translation>
    </message>
    <message>
        <source>Stopping after this step and saving a checkpoint…</source>
        <translation>將在這一步之後停止並儲存檢查點…</translation>
    </message>
    <message>
        <source>Preparing…</source>
        <translation>正在準備…</translation>
    </message>
    <message>
        <source>Preparing: {what}…</source>
        <translation>正在準備：{what}…</translation>
    </message>
    <message>
        <source>Training on {device}</source>
        <translation>正在 {device} 上訓練</translation>
    </message>
    <message>
        <source>Run folder: {folder}. {train} training and {eval} evaluation examples, {steps} steps.</source>
        <translation>訓練任務資料夾：{folder}。{train} 個訓練樣本，{eval} 個評估樣本，共 {steps} 步。</translation>
    </message>
    <message>
        <source>Elapsed {elapsed}   ·   remaining about {eta}   ·   {speed} samples/s   ·   epoch {epoch:.2f}</source>
        <translation>已用時間 {elapsed}   ·   約剩 {eta}   ·   {speed} 樣本/秒   ·   第 {epoch:.2f} 輪</translation>
    </message>
    <message>
        <source>step {step}: {metrics}</source>
        <translation>第 {step} 步：{metrics}</translation>
    </message>
    <message>
        <source>Checkpoint saved at step {step}.</source>
        <translation>已在第 {step} 步儲存檢查點。</translation>
    </message>
    <message>
        <source>Finished. The model is in {folder}</source>
        <translation>完成。模型在 {folder}</translation>
    </message>
    <message>
        <source>Finished: {metrics}</source>
        <translation>完成：{metrics}</translation>
    </message>
    <message>
        <source>Stopped. The checkpoint is kept: press Resume to continue.</source>
        <translation>已停止。檢查點已保留：按「繼續訓練」即可接著訓練。</translation>
    </message>
    <message>
        <source>Stopped before training began.</source>
        <translation>在訓練開始前已停止。</translation>
    </message>
    <message>
        <source>Training did not finish.</source>
        <translation>訓練沒有完成。</translation>
    </message>
    <message>
        <source>Training failed.</source>
        <translation>訓練失敗。</translation>
    </message>
    <message>
        <source>Apply and retry: {change}</source>
        <translation>套用並重試：{change}</translation>
    </message>
</context>
<context>
    <name>TryItPanel</name>
    <message>
        <source>No model yet: finish a run, or open a model folder.</source>
        <translation>還沒有模型：完成一次訓練，或開啟一個模型資料夾。</translation>
    </message>
    <message>
        <source>Open model folder…</source>
        <translation>開啟模型資料夾…</translation>
    </message>
    <message>
        <source>The longest reply, in tokens</source>
        <translation>回覆的最大長度（token 數）</translation>
    </message>
    <message>
        <source>0 always gives the most likely reply; higher is more varied</source>
        <translation>0 總是給出最可能的回覆；越大越多樣</translation>
    </message>
    <message>
        <source>Use the chat template</source>
        <translation>使用對話範本</translation>
    </message>
    <message>
        <source>Send the text as a user&apos;s message, as the model was trained</source>
        <translation>像訓練時一樣，把文字當作使用者訊息送出</translation>
    </message>
    <message>
        <source>Try it</source>
        <translation>試試看</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>詳細資訊</translation>
    </message>
    <message>
        <source>Max new tokens:</source>
        <translation>最大新 token 數：</translation>
    </message>
    <message>
        <source>Temperature:</source>
        <translation>溫度：</translation>
    </message>
    <message>
        <source>text classification</source>
        <translation>文字分類</translation>
    </message>
    <message>
        <source>text generation</source>
        <translation>文字生成</translation>
    </message>
    <message>
        <source>sequence to sequence</source>
        <translation>序列到序列</translation>
    </message>
    <message>
        <source> (LoRA adapters on {base})</source>
        <translation>（基於 {base} 的 LoRA 適配器）</translation>
    </message>
    <message>
        <source>Model: {folder}, {kind}{adapter}</source>
        <translation>模型：{folder}，{kind}{adapter}</translation>
    </message>
    <message>
        <source>Type a text and press Try it; the model loads on first use.</source>
        <translation>輸入一段文字，然後按「試試看」；模型會在第一次使用時載入。</translation>
    </message>
    <message>
        <source>A text to classify, e.g. a review</source>
        <translation>要分類的文字，例如一則評論</translation>
    </message>
    <message>
        <source>An instruction or a question</source>
        <translation>一則指令或一個問題</translation>
    </message>
    <message>
        <source>A text to transform, e.g. a sentence to translate</source>
        <translation>要轉換的文字，例如一句要翻譯的話</translation>
    </message>
    <message>
        <source>Open a model folder</source>
        <translation>開啟模型資料夾</translation>
    </message>
    <message>
        <source>Type a text first.</source>
        <translation>請先輸入文字。</translation>
    </message>
    <message>
        <source>Loading the model and working…</source>
        <translation>正在載入模型並處理…</translation>
    </message>
    <message>
        <source>Model loaded. Working…</source>
        <translation>模型已載入。正在處理…</translation>
    </message>
    <message>
        <source>Generating…</source>
        <translation>正在生成…</translation>
    </message>
    <message>
        <source>Predicted: {label} ({probability:.1%})</source>
        <translation>預測：{label}（{probability:.1%}）</translation>
    </message>
    <message>
        <source>The model ended its reply at once (it produced no text).</source>
        <translation>模型立即結束了回覆（沒有生成任何文字）。</translation>
    </message>
    <message>
        <source>Stopped.</source>
        <translation>已停止。</translation>
    </message>
    <message>
        <source>Done.</source>
        <translation>完成。</translation>
    </message>
    <message>
        <source>Could not run the model: {error}</source>
        <translation>無法執行模型：{error}</translation>
    </message>
</context>
<context>
    <name>core</name>
    <message>
        <source>{name} cannot be downloaded: the network is switched off (HF_HUB_OFFLINE).</source>
        <translation>無法下載 {name}：網路已關閉（HF_HUB_OFFLINE）。</translation>
    </message>
    <message>
        <source>Unset HF_HUB_OFFLINE, or pick a model that is already on this computer.</source>
        <translation>請取消設定 HF_HUB_OFFLINE，或選擇這台電腦上已有的模型。</translation>
    </message>
    <message>
        <source>The download needs {needed} and {folder} has {free} free.</source>
        <translation>這次下載需要 {needed}，而 {folder} 只剩 {free} 可用空間。</translation>
    </message>
    <message>
        <source>Free some space there, delete models you no longer need (Browse &gt; On this computer), or set HF_HOME / MODELSCOPE_CACHE to a bigger disk.</source>
        <translation>請清出一些空間，刪除不再需要的模型（瀏覽模型 &gt; 這台電腦上的），或把 HF_HOME / MODELSCOPE_CACHE 設到更大的磁碟上。</translation>
    </message>
    <message>
        <source>{name} is not on this computer, and {source} ({endpoint}) did not answer within {seconds} s ({problem}).</source>
        <translation>這台電腦上沒有 {name}，而 {source}（{endpoint}）在 {seconds} 秒內沒有回應（{problem}）。</translation>
    </message>
    <message>
        <source>Check the network, or switch the source (a mirror such as https://hf-mirror.com, or ModelScope) in Settings &gt; Model sources or with --source / HF_ENDPOINT, or pick a local model folder.</source>
        <translation>請檢查網路，或在「設定 &gt; 模型下載來源」中（或用 --source / HF_ENDPOINT）換一個下載來源（如鏡像站 https://hf-mirror.com 或 ModelScope），也可以選擇本機模型資料夾。</translation>
    </message>
    <message>
        <source>{name} is not on this computer yet.</source>
        <translation>這台電腦上還沒有 {name}。</translation>
    </message>
    <message>
        <source>Download it first: Browse &gt; Download on the Model &amp; data step, or finetune-studio-cli models download {ref}</source>
        <translation>請先下載：在「模型與資料」步驟按「瀏覽模型 &gt; 下載」，或執行 finetune-studio-cli models download {ref}</translation>
    </message>
    <message>
        <source>{name} could not be downloaded from {source}: {error}</source>
        <translation>無法從 {source} 下載 {name}：{error}</translation>
    </message>
    <message>
        <source>Try again, or switch the source.</source>
        <translation>請再試一次，或換一個下載來源。</translation>
    </message>
    <message>
        <source>{name} is not on this computer, and the hub is switched off (HF_HUB_OFFLINE).</source>
        <translation>這台電腦上沒有 {name}，而 Hub 已關閉（HF_HUB_OFFLINE）。</translation>
    </message>
    <message>
        <source>Unset HF_HUB_OFFLINE to download it, or pick a local model folder.</source>
        <translation>取消設定 HF_HUB_OFFLINE 即可下載，或選擇本機模型資料夾。</translation>
    </message>
    <message>
        <source>{name} is gated: its authors ask you to accept their license before downloading it.</source>
        <translation>{name} 是受限模型：作者要求你先同意授權條款才能下載。</translation>
    </message>
    <message>
        <source>Accept the license at {page} while signed in, then enter an access token in Settings &gt; Model sources ({source}).</source>
        <translation>請登入後在 {page} 同意授權條款，然後在「設定 &gt; 模型下載來源」中填寫存取權杖（{source}）。</translation>
    </message>
    <message>
        <source>{name} has no revision by that name on {source}.</source>
        <translation>{source} 上的 {name} 沒有這個名稱的版本。</translation>
    </message>
    <message>
        <source>Check the revision, or leave it empty for the newest.</source>
        <translation>請檢查版本名稱，或留空以使用最新版本。</translation>
    </message>
    <message>
        <source>There is no dataset named {name} on {source}.</source>
        <translation>{source} 上沒有名為 {name} 的資料集。</translation>
    </message>
    <message>
        <source>There is no model named {name} on {source}.</source>
        <translation>{source} 上沒有名為 {name} 的模型。</translation>
    </message>
    <message>
        <source>Check the id (owner/name, as on the model&apos;s page), or find it with Browse; on ModelScope some models have other ids than on Hugging Face.</source>
        <translation>請檢查 ID（擁有者/名稱，與模型頁面上一致），或用「瀏覽模型」尋找；有些模型在 ModelScope 上的 ID 與 Hugging Face 上不同。</translation>
    </message>
    <message>
        <source>The download of {name} from {source} was interrupted: the connection failed.</source>
        <translation>從 {source} 下載 {name} 時中斷了：連線失敗。</translation>
    </message>
    <message>
        <source>Try again: the download resumes where it stopped. If it keeps failing, switch the source.</source>
        <translation>請再試一次：下載會從中斷處繼續。如果一直失敗，請換一個下載來源。</translation>
    </message>
    <message>
        <source>{model} cannot be used for this task: its architecture has no such head.</source>
        <translation>{model} 無法用於這個任務：它的架構沒有相應的輸出頭。</translation>
    </message>
    <message>
        <source>Pick another model.</source>
        <translation>請換一個模型。</translation>
    </message>
    <message>
        <source>Check the model id and your network connection, or pick a local model folder.</source>
        <translation>請檢查模型 ID 和網路連線，或選擇本機模型資料夾。</translation>
    </message>
    <message>
        <source>{model} cannot be used for text classification: its architecture has no such head.</source>
        <translation>{model} 無法用於文字分類：它的架構沒有分類頭。</translation>
    </message>
    <message>
        <source>Pick an encoder model such as BERT, RoBERTa or MiniLM.</source>
        <translation>請選擇編碼器模型，如 BERT、RoBERTa 或 MiniLM。</translation>
    </message>
    <message>
        <source>{model} cannot be used for causal-LM fine-tuning: its architecture has no such head.</source>
        <translation>{model} 無法用於因果語言模型微調：它的架構沒有語言模型頭。</translation>
    </message>
    <message>
        <source>Pick a decoder model such as GPT-2, Qwen or Llama.</source>
        <translation>請選擇解碼器模型，如 GPT-2、Qwen 或 Llama。</translation>
    </message>
    <message>
        <source>{model} cannot be used for sequence-to-sequence: its architecture has no such head.</source>
        <translation>{model} 無法用於序列到序列任務：它的架構沒有相應的輸出頭。</translation>
    </message>
    <message>
        <source>Pick an encoder-decoder model such as T5, BART or mT5.</source>
        <translation>請選擇編碼器-解碼器模型，如 T5、BART 或 mT5。</translation>
    </message>
    <message>
        <source>{model} needs to run its own Python code to load.</source>
        <translation>{model} 需要執行它自帶的 Python 程式碼才能載入。</translation>
    </message>
    <message>
        <source>Only if you trust its authors, set model.trust_remote_code = true.</source>
        <translation>僅在你信任其作者時，才設定 model.trust_remote_code = true。</translation>
    </message>
    <message>
        <source>Check that the folder holds a complete Hugging Face model: config, weights, tokenizer files.</source>
        <translation>請確認該資料夾包含完整的 Hugging Face 模型：設定、權重和分詞器檔案。</translation>
    </message>
    <message>
        <source>Pick a decoder model such as Qwen (Qwen/Qwen2.5-0.5B-Instruct), GPT-2 (gpt2) or Llama.</source>
        <translation>請選擇解碼器模型，如 Qwen（Qwen/Qwen2.5-0.5B-Instruct）、GPT-2（gpt2）或 Llama。</translation>
    </message>
    <message>
        <source>Pick an encoder-decoder model such as T5 (t5-small), mT5 (google/mt5-small) or BART (facebook/bart-base).</source>
        <translation>請選擇編碼器-解碼器模型，如 T5（t5-small）、mT5（google/mt5-small）或 BART（facebook/bart-base）。</translation>
    </message>
    <message>
        <source>{model} cannot be used for sequence-to-sequence: it is not an encoder-decoder model ({kind}), and sequence-to-sequence training needs an encoder-decoder model.</source>
        <translation>{model} 無法用於序列到序列任務：它不是編碼器-解碼器模型（{kind}），而序列到序列訓練需要編碼器-解碼器模型。</translation>
    </message>
    <message>
        <source>This model does not know most of the characters in your texts: {share} of their tokens become the unknown token {unknown}, so it cannot tell those texts apart. Pick a model made for your texts&apos; language, e.g. bert-base-chinese or hfl/chinese-roberta-wwm-ext for Chinese, or a multilingual one such as xlm-roberta-base.</source>
        <translation>這個模型不認得你文字中的大部分字元：有 {share} 的 token 變成了未知 token {unknown}，因此它無法區分這些文字。請選擇針對你文字語言的模型，例如中文可用 bert-base-chinese 或 hfl/chinese-roberta-wwm-ext，也可以用 xlm-roberta-base 這類多語言模型。</translation>
    </message>
    <message>
        <source>The model folder {folder} has no tokenizer files (tokenizer.json, or vocab.txt, vocab.json with merges.txt, or a SentencePiece .model file); without them the texts cannot be read the way the model was trained to read them.</source>
        <translation>模型資料夾 {folder} 中沒有分詞器檔案（tokenizer.json，或 vocab.txt，或 vocab.json 加 merges.txt，或 SentencePiece 的 .model 檔案）；沒有它們，就無法依模型訓練時的方式讀取文字。</translation>
    </message>
    <message>
        <source>Copy the tokenizer files from where the model came from into the folder, or pick the model&apos;s complete folder.</source>
        <translation>請從模型的來源處把分詞器檔案複製到該資料夾，或選擇模型的完整資料夾。</translation>
    </message>
    <message>
        <source>{model} cannot be used for causal-LM fine-tuning: it is an encoder-decoder model ({kind}), and causal-LM fine-tuning needs a decoder model that writes text.</source>
        <translation>{model} 無法用於因果語言模型微調：它是編碼器-解碼器模型（{kind}），而因果語言模型微調需要能生成文字的解碼器模型。</translation>
    </message>
    <message>
        <source>{model} cannot be used for causal-LM fine-tuning: it is an encoder-only model ({kind}) that cannot generate text, and causal-LM fine-tuning needs a decoder model that writes text.</source>
        <translation>{model} 無法用於因果語言模型微調：它是只有編碼器的模型（{kind}），無法生成文字，而因果語言模型微調需要能生成文字的解碼器模型。</translation>
    </message>
    <message>
        <source>The tokenizer of {model} knows only {size} tokens: its vocabulary files are missing or empty, and every text would read as the same few tokens.</source>
        <translation>{model} 的分詞器只認得 {size} 個 token：它的詞彙表檔案缺少或是空的，所有文字都會被讀成同樣的幾個 token。</translation>
    </message>
    <message>
        <source>Pick a model folder with its complete tokenizer files (tokenizer.json or vocab.txt).</source>
        <translation>請選擇帶有完整分詞器檔案（tokenizer.json 或 vocab.txt）的模型資料夾。</translation>
    </message>
    <message>
        <source>The tokenizer {model} could not be loaded: {error}</source>
        <translation>無法載入分詞器 {model}：{error}</translation>
    </message>
    <message>
        <source>The model {model} could not be loaded: {error}</source>
        <translation>無法載入模型 {model}：{error}</translation>
    </message>
    <message>
        <source>{folder} holds no model weights.</source>
        <translation>{folder} 中沒有模型權重。</translation>
    </message>
    <message>
        <source>Pick a folder with .safetensors or .bin files.</source>
        <translation>請選擇包含 .safetensors 或 .bin 檔案的資料夾。</translation>
    </message>
    <message>
        <source>The bundled model {name} is not installed.</source>
        <translation>未安裝內建模型 {name}。</translation>
    </message>
    <message>
        <source>Install it with: {command}</source>
        <translation>請用以下指令安裝：{command}</translation>
    </message>
    <message>
        <source>The tokenizer of {model} has neither a padding nor an end-of-text token.</source>
        <translation>{model} 的分詞器既沒有填充 token，也沒有文字結束 token。</translation>
    </message>
    <message>
        <source>Choose a model whose tokenizer defines one of them.</source>
        <translation>請選擇分詞器定義了其中之一的模型。</translation>
    </message>
    <message>
        <source>The tokenizer in {folder} could not be loaded: {error}</source>
        <translation>無法載入 {folder} 中的分詞器：{error}</translation>
    </message>
    <message>
        <source>The model in {folder} could not be loaded: {error}</source>
        <translation>無法載入 {folder} 中的模型：{error}</translation>
    </message>
    <message>
        <source>{folder} has no readable config.json.</source>
        <translation>{folder} 中沒有可讀取的 config.json。</translation>
    </message>
    <message>
        <source>Pick the folder that holds config.json and the weights.</source>
        <translation>請選擇包含 config.json 和權重的資料夾。</translation>
    </message>
    <message>
        <source>mirror ({host})</source>
        <translation>鏡像站（{host}）</translation>
    </message>
    <message>
        <source>ModelScope</source>
        <translation>ModelScope</translation>
    </message>
    <message>
        <source>Hugging Face</source>
        <translation>Hugging Face</translation>
    </message>
</context>
<context>
    <name>page</name>
    <message>
        <source>Training on cuda:0 (NVIDIA GeForce RTX 4070)</source>
        <translation>正在 cuda:0（NVIDIA GeForce RTX 4070）上訓練</translation>
    </message>
</context>
</TS>
