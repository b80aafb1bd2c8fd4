<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_TW">
<context>
    <name>ChatView</name>
    <message>
        <source>You</source>
        <translation>您</translation>
    </message>
    <message>
        <source>Base model</source>
        <translation>基礎模型</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>The conversation appears here.</source>
        <translation>對話會顯示在這裡。</translation>
    </message>
    <message>
        <source>not asked</source>
        <translation>未提問</translation>
    </message>
    <message>
        <source>answering…</source>
        <translation>正在回答…</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>(no text: the model ended its answer at once)</source>
        <translation>（沒有文字：模型立即結束了回答）</translation>
    </message>
</context>
<context>
    <name>CheckpointChoice</name>
    <message>
        <source>The run&apos;s model is the checkpoint that scored best on the validation rows. The last step&apos;s model is made from its checkpoint when you choose it (a LoRA run&apos;s is merged).</source>
        <translation>執行的模型是在驗證資料上得分最好的檢查點。選擇最後一步時，會從它的檢查點產生最後一步的模型（LoRA 執行會先合併）。</translation>
    </message>
    <message>
        <source>Best checkpoint: step {step}, {metric} {value:.4g}</source>
        <translation>最佳檢查點：第 {step} 步，{metric} {value:.4g}</translation>
    </message>
    <message>
        <source>Last step: step {step}, {metric} {value}</source>
        <translation>最後一步：第 {step} 步，{metric} {value}</translation>
    </message>
    <message>
        <source>Making the last step&apos;s model from checkpoint-{step}…</source>
        <translation>正在從 checkpoint-{step} 產生最後一步的模型…</translation>
    </message>
    <message>
        <source>The last step&apos;s model could not be made: {error}</source>
        <translation>無法產生最後一步的模型：{error}</translation>
    </message>
</context>
<context>
    <name>ChoiceCombo</name>
    <message>
        <source>chosen for this computer</source>
        <translation>依這台電腦自動選擇</translation>
    </message>
    <message>
        <source>full precision: most memory, slowest</source>
        <translation>全精度：占用最多、最慢</translation>
    </message>
    <message>
        <source>half precision, for older NVIDIA GPUs</source>
        <translation>半精度，適合較舊的 NVIDIA GPU</translation>
    </message>
    <message>
        <source>half precision, steadier (RTX 30 series and newer)</source>
        <translation>半精度，更穩定（RTX 30 系列及更新）</translation>
    </message>
    <message>
        <source>AdamW, the usual choice</source>
        <translation>AdamW，常用選擇</translation>
    </message>
    <message>
        <source>fused AdamW, faster on a GPU</source>
        <translation>融合版 AdamW，GPU 上更快</translation>
    </message>
    <message>
        <source>least memory; learns a little differently</source>
        <translation>最省記憶體；學習方式略有不同</translation>
    </message>
    <message>
        <source>AdamW in 8 bits: a quarter of its memory</source>
        <translation>8 位元 AdamW：只占四分之一記憶體</translation>
    </message>
    <message>
        <source>8-bit AdamW that can spill to RAM</source>
        <translation>可溢出到記憶體的 8 位元 AdamW</translation>
    </message>
    <message>
        <source>PyTorch&apos;s fast attention</source>
        <translation>PyTorch 的快速注意力</translation>
    </message>
    <message>
        <source>plain, slowest: for debugging</source>
        <translation>一般實作，最慢：用於除錯</translation>
    </message>
    <message>
        <source>FlashAttention 2 (needs the flash-attn package)</source>
        <translation>FlashAttention 2（需要 flash-attn 套件）</translation>
    </message>
    <message>
        <source>fastest code, slow first step</source>
        <translation>產生最快的程式碼，第一步較慢</translation>
    </message>
    <message>
        <source>checks compilation without speeding up</source>
        <translation>只檢查編譯，不加速</translation>
    </message>
    <message>
        <source>16 bits: the largest file, the closest answers</source>
        <translation>16 位元：檔案最大，回答最接近原模型</translation>
    </message>
    <message>
        <source>8 bits: half the size, nearly the same answers</source>
        <translation>8 位元：體積減半，回答幾乎不變</translation>
    </message>
    <message>
        <source>4 bits: a third of the size, made by llama.cpp</source>
        <translation>4 位元：約三分之一大小，由 llama.cpp 產生</translation>
    </message>
    <message>
        <source>falls in a straight line to 0</source>
        <translation>直線下降到 0</translation>
    </message>
    <message>
        <source>falls along a cosine curve to 0</source>
        <translation>沿餘弦曲線下降到 0</translation>
    </message>
    <message>
        <source>stays the same</source>
        <translation>保持不變</translation>
    </message>
    <message>
        <source>rises during warm-up, then stays</source>
        <translation>暖機時上升，之後不變</translation>
    </message>
    <message>
        <source>cosine curves, starting again</source>
        <translation>餘弦曲線，週期性重新開始</translation>
    </message>
    <message>
        <source>falls along a polynomial curve</source>
        <translation>沿多項式曲線下降</translation>
    </message>
    <message>
        <source>the validation loss, lowest (every task)</source>
        <translation>驗證損失，越低越好（所有任務）</translation>
    </message>
    <message>
        <source>the share classified right, highest (classification)</source>
        <translation>分類正確的比例，越高越好（分類）</translation>
    </message>
    <message>
        <source>F1 averaged over the classes, highest (classification)</source>
        <translation>各類 F1 的平均值，越高越好（分類）</translation>
    </message>
    <message>
        <source>{value}: {meaning}</source>
        <translation>{value}：{meaning}</translation>
    </message>
</context>
<context>
    <name>CoachWidget</name>
    <message>
        <source>Apply and retry: {change}</source>
        <translation>套用並重試：{change}</translation>
    </message>
    <message>
        <source>Stop the run first; the change applies to a new run.</source>
        <translation>請先停止訓練；此變更用於新的訓練。</translation>
    </message>
</context>
<context>
    <name>CodeView</name>
    <message>
        <source>Copy</source>
        <translation>複製</translation>
    </message>
</context>
<context>
    <name>ColumnMappingWidget</name>
    <message>
        <source>Columns</source>
        <translation>欄位</translation>
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
        <source>Chosen: the better answer; rejected: the worse one. Each is a text or a whole conversation. Prompt: only when the answers do not include it.</source>
        <translation>選中回答：較好的回答；被拒回答：較差的回答。兩者都可以是一段文字或一整段對話。提示詞：只在回答不包含它時才需要。</translation>
    </message>
    <message>
        <source>Leave out rows with a blank text or no label</source>
        <translation>略過文字為空或沒有標籤的列</translation>
    </message>
    <message>
        <source>Labels that differ only in case are one class</source>
        <translation>只有大小寫不同的標籤視為同一類</translation>
    </message>
    <message>
        <source>Format:</source>
        <translation>格式：</translation>
    </message>
    <message>
        <source>Leave out rows with a missing or unreadable picture, or no label</source>
        <translation>略過缺少圖片、圖片無法讀取或沒有標籤的列</translation>
    </message>
    <message>
        <source>The columns are guessed again for {task}; check them below.</source>
        <translation>已依「{task}」重新推測各欄位，請在下方確認。</translation>
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
        <source>{role}:</source>
        <translation>{role}：</translation>
    </message>
    <message>
        <source>{role} (optional):</source>
        <translation>{role}（選填）：</translation>
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
        <source>Choose a column for: {roles}.</source>
        <translation>請為以下用途選擇欄位：{roles}。</translation>
    </message>
    <message>
        <source>Text</source>
        <translation>文字</translation>
    </message>
    <message>
        <source>Text pair</source>
        <translation>第二段文字</translation>
    </message>
    <message>
        <source>Label</source>
        <translation>標籤</translation>
    </message>
    <message>
        <source>Instruction</source>
        <translation>指令</translation>
    </message>
    <message>
        <source>Input</source>
        <translation>輸入</translation>
    </message>
    <message>
        <source>Output</source>
        <translation>輸出</translation>
    </message>
    <message>
        <source>Messages</source>
        <translation>對話訊息</translation>
    </message>
    <message>
        <source>Prompt</source>
        <translation>提示詞</translation>
    </message>
    <message>
        <source>Completion</source>
        <translation>接續內容</translation>
    </message>
    <message>
        <source>Source text</source>
        <translation>來源文字</translation>
    </message>
    <message>
        <source>Target text</source>
        <translation>目標文字</translation>
    </message>
    <message>
        <source>Chosen answer</source>
        <translation>選中回答</translation>
    </message>
    <message>
        <source>Rejected answer</source>
        <translation>被拒回答</translation>
    </message>
    <message>
        <source>Reference answer</source>
        <translation>參考答案</translation>
    </message>
    <message>
        <source>Picture</source>
        <translation>圖片</translation>
    </message>
    <message>
        <source>The better answer: a text, or the whole conversation as a list of messages.</source>
        <translation>較好的回答：一段文字，或以訊息清單表示的整段對話。</translation>
    </message>
    <message>
        <source>The worse answer to the same prompt, written as the chosen one is.</source>
        <translation>同一提示詞下較差的回答，寫法與選中回答相同。</translation>
    </message>
    <message>
        <source>The prompt both answers reply to; none when the answers hold the conversation.</source>
        <translation>兩個回答所回應的提示詞；如果回答裡已包含整段對話，則不需要。</translation>
    </message>
</context>
<context>
    <name>ConfigSectionWidget</name>
    <message>
        <source>the model&apos;s own</source>
        <translation>使用模型自己的尺寸</translation>
    </message>
    <message>
        <source>all linear layers</source>
        <translation>所有線性層</translation>
    </message>
    <message>
        <source>Only with an NVIDIA GPU: this computer trains on its processor.</source>
        <translation>僅在有 NVIDIA GPU 時有效：這台電腦用處理器訓練。</translation>
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
        <translation>資料載入行程數</translation>
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
        <source>Liger fused kernels</source>
        <translation>Liger 融合核心</translation>
    </message>
    <message>
        <source>Padding-free batches (causal LM)</source>
        <translation>無填充批次（因果語言模型）</translation>
    </message>
    <message>
        <source>Group batches by length</source>
        <translation>依長度分組成批</translation>
    </message>
    <message>
        <source>Recover from out of memory</source>
        <translation>顯示記憶體不足時自動復原</translation>
    </message>
    <message>
        <source>Train LoRA adapters</source>
        <translation>訓練 LoRA 轉接器</translation>
    </message>
    <message>
        <source>Rank</source>
        <translation>秩（rank）</translation>
    </message>
    <message>
        <source>Alpha</source>
        <translation>Alpha（縮放係數）</translation>
    </message>
    <message>
        <source>Dropout</source>
        <translation>Dropout（丟棄率）</translation>
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
        <source>Vary the training pictures (augmentation)</source>
        <translation>變換訓練圖片（資料擴增）</translation>
    </message>
    <message>
        <source>Picture size (longest side, pixels)</source>
        <translation>圖片尺寸（最長邊，像素）</translation>
    </message>
    <message>
        <source>Also train the vision tower</source>
        <translation>同時訓練視覺編碼器</translation>
    </message>
</context>
<context>
    <name>CopyRow</name>
    <message>
        <source>Copy</source>
        <translation>複製</translation>
    </message>
</context>
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
        <source>Rows</source>
        <translation>列</translation>
    </message>
    <message>
        <source>Pairs</source>
        <translation>偏好對</translation>
    </message>
    <message>
        <source>Rewards</source>
        <translation>獎勵</translation>
    </message>
</context>
<context>
    <name>DatasetPickerWidget</name>
    <message>
        <source>Data</source>
        <translation>資料</translation>
    </message>
    <message>
        <source>Choose a data file or a hub dataset.</source>
        <translation>請選擇資料檔案或 Hub 資料集。</translation>
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
        <source>Folder…</source>
        <translation>資料夾…</translation>
    </message>
    <message>
        <source>A folder with one folder of pictures per class, named after the class</source>
        <translation>一個資料夾，其中每個類別一個以類別命名的圖片資料夾</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>下載</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Stop checking every row; training checks them all before it starts</source>
        <translation>停止逐列檢查；訓練開始前會檢查所有列</translation>
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
        <source>Dataset:</source>
        <translation>資料集：</translation>
    </message>
    <message>
        <source>seed</source>
        <translation>隨機種子</translation>
    </message>
    <message>
        <source>Evaluation:</source>
        <translation>驗證集：</translation>
    </message>
    <message>
        <source>A folder of class folders, a table of picture paths and labels, or a hub dataset id</source>
        <translation>類別資料夾所在的資料夾、含圖片路徑和標籤的表格，或模型中心的資料集 ID</translation>
    </message>
    <message>
        <source>A table of picture paths, questions and answers, or a hub dataset id</source>
        <translation>含圖片路徑、問題和答案的表格，或模型中心的資料集 ID</translation>
    </message>
    <message>
        <source>Download {dataset}</source>
        <translation>下載 {dataset}</translation>
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
        <source>Choose the folder of class folders</source>
        <translation>選擇類別資料夾所在的資料夾</translation>
    </message>
    <message>
        <source>Reading the data…</source>
        <translation>正在讀取資料…</translation>
    </message>
    <message>
        <source>Checking every row…</source>
        <translation>正在檢查每一列……</translation>
    </message>
    <message>
        <source>Checking every row: {what}, {percent}%…</source>
        <translation>正在檢查每一列：{what}，{percent}%…</translation>
    </message>
    <message>
        <source>Not every row was checked (cancelled): training checks them all before it starts.</source>
        <translation>沒有檢查完所有列（已取消）：訓練開始前會檢查所有列。</translation>
    </message>
    <message numerus="yes">
        <source>%n row(s) for training, {eval} for evaluation</source>
        <translation>
            <numerusform>%n 列用於訓練，{eval} 列用於評估</numerusform>
        </translation>
    </message>
    <message>
        <source>Labels (training/evaluation): {labels}</source>
        <translation>標籤（訓練/評估）：{labels}</translation>
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
        <source>Cancelling…</source>
        <translation>正在取消…</translation>
    </message>
    <message>
        <source>{minutes}:{seconds:02d} left</source>
        <translation>剩餘 {minutes}:{seconds:02d}</translation>
    </message>
    <message>
        <source>{done} of {total}</source>
        <translation>{done} / {total}</translation>
    </message>
    <message>
        <source>{amount} · {speed}/s · {left}</source>
        <translation>{amount} · {speed}/秒 · {left}</translation>
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
        <source>{plan} {warning}</source>
        <translation>{plan}{warning}</translation>
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
    <name>ErrorLabel</name>
    <message>
        <source>Details</source>
        <translation>詳細資訊</translation>
    </message>
</context>
<context>
    <name>EvaluationView</name>
    <message>
        <source>Label</source>
        <translation>標籤</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精確率</translation>
    </message>
    <message>
        <source>Recall</source>
        <translation>召回率</translation>
    </message>
    <message>
        <source>F1</source>
        <translation>F1</translation>
    </message>
    <message>
        <source>Rows</source>
        <translation>列數</translation>
    </message>
    <message>
        <source>Training rows</source>
        <translation>訓練列數</translation>
    </message>
    <message>
        <source>Evaluation rows</source>
        <translation>評估列數</translation>
    </message>
    <message>
        <source>Rows: the true label. Columns: the predicted label. Click a cell for its rows.</source>
        <translation>列：真實標籤。欄：預測標籤。按一下儲存格可查看其中的資料列。</translation>
    </message>
    <message>
        <source>Text</source>
        <translation>文字</translation>
    </message>
    <message>
        <source>Predicted</source>
        <translation>預測</translation>
    </message>
    <message>
        <source>Confidence</source>
        <translation>信賴度</translation>
    </message>
    <message>
        <source>Each class</source>
        <translation>各個類別</translation>
    </message>
    <message>
        <source>Labels in the training and evaluation sets</source>
        <translation>訓練集和評估集中的標籤</translation>
    </message>
    <message>
        <source>Confusion matrix (rows: true label, columns: predicted)</source>
        <translation>混淆矩陣（列：真實標籤，欄：預測標籤）</translation>
    </message>
    <message>
        <source>Prompt</source>
        <translation>提示詞</translation>
    </message>
    <message>
        <source>Reference</source>
        <translation>參考答案</translation>
    </message>
    <message>
        <source>Base model</source>
        <translation>基礎模型</translation>
    </message>
    <message>
        <source>Fine-tuned</source>
        <translation>微調後</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>損失</translation>
    </message>
    <message>
        <source>Perplexity</source>
        <translation>困惑度</translation>
    </message>
    <message>
        <source>on {rows} evaluation rows</source>
        <translation>基於 {rows} 列評估資料</translation>
    </message>
    <message>
        <source>BLEU and chrF over the answers to the first {count} rows (tokenization {tokenize}).</source>
        <translation>BLEU 和 chrF 基於前 {count} 列的回答（斷詞方式 {tokenize}）。</translation>
    </message>
    <message>
        <source>The fine-tuned model fits the evaluation rows worse than the base model: train longer, with a lower learning rate, or with more examples.</source>
        <translation>微調後的模型在評估資料上比基礎模型還差：請訓練更久、降低學習率，或補充更多樣本。</translation>
    </message>
    <message>
        <source>(no text: the model ended its answer at once)</source>
        <translation>（沒有文字：模型立即結束了回答）</translation>
    </message>
    <message>
        <source>share of {rows} held-out prompts whose greedy answer earns each reward</source>
        <translation>{rows} 個預留提示詞中，貪婪解碼的回答獲得各項獎勵的比例</translation>
    </message>
    <message>
        <source>Chosen</source>
        <translation>選中</translation>
    </message>
    <message>
        <source>Rejected</source>
        <translation>被拒</translation>
    </message>
    <message>
        <source>Margin before</source>
        <translation>之前的差值</translation>
    </message>
    <message>
        <source>Margin after</source>
        <translation>之後的差值</translation>
    </message>
    <message>
        <source>Now preferring the chosen answer</source>
        <translation>現在偏向選中回答</translation>
    </message>
    <message>
        <source>Still preferring the rejected answer</source>
        <translation>仍然偏向被拒回答</translation>
    </message>
    <message>
        <source>Margin: how much likelier the chosen answer is than the rejected one (per token).</source>
        <translation>差值：選中回答比被拒回答的可能性高多少（按每個詞元計）。</translation>
    </message>
    <message>
        <source>Preference accuracy</source>
        <translation>偏好準確率</translation>
    </message>
    <message>
        <source>Mean margin</source>
        <translation>平均差值</translation>
    </message>
    <message>
        <source>on {rows} held-out pairs</source>
        <translation>基於 {rows} 個保留的偏好對</translation>
    </message>
    <message>
        <source>{method} reward accuracy {accuracy:.3f} at the last evaluation</source>
        <translation>最後一次評估時 {method} 獎勵準確率為 {accuracy:.3f}</translation>
    </message>
    <message>
        <source>reward margin {margin:.3f}</source>
        <translation>獎勵差值 {margin:.3f}</translation>
    </message>
    <message>
        <source>A model prefers the answer it finds likelier (mean log-probability per token). The margin is chosen minus rejected.</source>
        <translation>模型偏向它認為可能性較高的回答（每個詞元的平均對數機率）。差值＝選中回答減去被拒回答。</translation>
    </message>
    <message>
        <source>The tuned model prefers the chosen answers less often than the base model: check that chosen and rejected are not swapped, or lower the learning rate.</source>
        <translation>微調後的模型比基礎模型更少偏向選中回答：請檢查選中回答和被拒回答是否弄反了，或者降低學習率。</translation>
    </message>
    <message>
        <source>The tuned model prefers the chosen answer in every pair measured.</source>
        <translation>在測量的每一對中，微調後的模型都偏向選中回答。</translation>
    </message>
    <message>
        <source>Wrong: 1 row.</source>
        <translation>判斷錯誤：1 列。</translation>
    </message>
    <message>
        <source>Picture</source>
        <translation>圖片</translation>
    </message>
    <message>
        <source>  (base model → fine-tuned)</source>
        <translation>（基礎模型 → 微調後）</translation>
    </message>
    <message>
        <source>Validation loss</source>
        <translation>驗證損失</translation>
    </message>
    <message>
        <source>Accuracy</source>
        <translation>準確率</translation>
    </message>
    <message>
        <source>macro-F1</source>
        <translation>宏平均 F1</translation>
    </message>
    <message>
        <source>The fine-tuned model does worse than the base model on these rows: train longer, with a lower learning rate, or with more examples of the classes it gets wrong.</source>
        <translation>微調後的模型在這些資料上比基礎模型還差：請訓練更久、降低學習率，或為它判斷錯的類別補充更多樣本。</translation>
    </message>
    <message>
        <source>The model gives every row the same label: it has learnt the most common label, not the task. Train longer, or balance the labels (see the counts).</source>
        <translation>模型給每一列都標了同一個標籤：它學到的只是最常見的標籤，而不是任務本身。請訓練更久，或讓各標籤的數量更平均（見計數）。</translation>
    </message>
    <message>
        <source>{count} rows labelled {label}, predicted {predicted}</source>
        <translation>{count} 列標籤為 {label}，預測為 {predicted}</translation>
    </message>
    <message>
        <source>Wrong: {count} rows, the ones the model was surest of first</source>
        <translation>判斷錯誤：{count} 列，模型最有把握的排在前面</translation>
    </message>
    <message>
        <source>Every evaluation row is right.</source>
        <translation>所有評估資料都判斷正確。</translation>
    </message>
    <message>
        <source>{count} rows labelled {label} and predicted {predicted}</source>
        <translation>{count} 列標籤為 {label}、預測為 {predicted}</translation>
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
        <translation>您微調好的模型，可直接用 from_pretrained() 載入。</translation>
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
        <source>Model folder (transformers)</source>
        <translation>模型資料夾（transformers）</translation>
    </message>
    <message>
        <source>GGUF file (llama.cpp, Ollama, LM Studio)</source>
        <translation>GGUF 檔案（llama.cpp、Ollama、LM Studio）</translation>
    </message>
    <message>
        <source>Plain folder (Ollama, llama.cpp)</source>
        <translation>一般資料夾（Ollama、llama.cpp）</translation>
    </message>
    <message>
        <source>LM Studio layout (publisher/model folders)</source>
        <translation>LM Studio 配置（發行者/模型 資料夾）</translation>
    </message>
    <message>
        <source>Install llama.cpp</source>
        <translation>安裝 llama.cpp</translation>
    </message>
    <message>
        <source>fp16 and bf16 halve the size; fp32 keeps every bit</source>
        <translation>fp16 和 bf16 可讓大小減半；fp32 保留完整精度</translation>
    </message>
    <message>
        <source>LoRA adapters only (not merged)</source>
        <translation>只匯出 LoRA 轉接器（不合併）</translation>
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
        <source>Logs to a store in the app&apos;s data folder (MLFLOW_TRACKING_URI chooses another)</source>
        <translation>記錄到應用程式資料夾中的儲存區（MLFLOW_TRACKING_URI 可指定其他位置）</translation>
    </message>
    <message>
        <source>To:</source>
        <translation>到：</translation>
    </message>
    <message>
        <source>Format:</source>
        <translation>格式：</translation>
    </message>
    <message>
        <source>Weights:</source>
        <translation>權重：</translation>
    </message>
    <message>
        <source>GGUF weights:</source>
        <translation>GGUF 權重：</translation>
    </message>
    <message>
        <source>Layout:</source>
        <translation>配置：</translation>
    </message>
    <message>
        <source>Try it</source>
        <translation>試試看</translation>
    </message>
    <message>
        <source>Serve</source>
        <translation>提供服務</translation>
    </message>
    <message>
        <source>Predict on a file</source>
        <translation>對檔案做預測</translation>
    </message>
    <message>
        <source>Evaluation</source>
        <translation>評估</translation>
    </message>
    <message>
        <source>Wait until the last step&apos;s model is made, then export.</source>
        <translation>請等最後一步的模型產生後再匯出。</translation>
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
        <source>Verified: reloaded in a fresh process, the outputs are the same.</source>
        <translation>驗證通過：已在新的行程中重新載入，輸出完全相同。</translation>
    </message>
    <message>
        <source>Verified: reloaded in a fresh process, outputs differ by at most {diff:.2g}.</source>
        <translation>驗證通過：已在新的行程中重新載入，輸出差異不超過 {diff:.2g}。</translation>
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
        <source>To look: {command}</source>
        <translation>檢視方法：{command}</translation>
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
        <source>GGUF is for decoder chat models (causal LM), which llama.cpp, Ollama and LM Studio run; this run&apos;s model is for {task}: export it as a folder.</source>
        <translation>GGUF 用於 llama.cpp、Ollama 和 LM Studio 執行的解碼器對話模型（因果語言模型）；這次訓練的模型用於{task}：請匯出為資料夾。</translation>
    </message>
    <message>
        <source>llama.cpp is not installed: q4_k_m needs its quantizer.</source>
        <translation>未安裝 llama.cpp：q4_k_m 需要用它的量化器產生。</translation>
    </message>
    <message>
        <source>llama.cpp is not installed: the file will be written, but not checked.</source>
        <translation>未安裝 llama.cpp：檔案會照常寫出，但不會被驗證。</translation>
    </message>
    <message>
        <source>Replace the file?</source>
        <translation>取代檔案嗎？</translation>
    </message>
    <message>
        <source>{files} already in {folder}. Replace?</source>
        <translation>{folder} 中已有 {files}。要取代嗎？</translation>
    </message>
    <message>
        <source>Writing the GGUF file…</source>
        <translation>正在寫入 GGUF 檔案…</translation>
    </message>
    <message>
        <source>Loading the model…</source>
        <translation>正在載入模型…</translation>
    </message>
    <message>
        <source>Copying the adapters…</source>
        <translation>正在複製轉接器…</translation>
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
        <translation>正在驗證：在新的行程中重新載入資料夾…</translation>
    </message>
    <message>
        <source>Logging the model to MLflow…</source>
        <translation>正在將模型記錄到 MLflow…</translation>
    </message>
    <message>
        <source>Quantizing with llama.cpp…</source>
        <translation>正在用 llama.cpp 量化…</translation>
    </message>
    <message>
        <source>Checking the file with llama.cpp: its answers against transformers&apos;…</source>
        <translation>正在用 llama.cpp 驗證檔案：把它的回答與 transformers 的比對…</translation>
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
    <name>FailureWidget</name>
    <message>
        <source>Details</source>
        <translation>詳細資訊</translation>
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
    <name>FitBadgeWidget</name>
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
</context>
<context>
    <name>GgufPanel</name>
    <message>
        <source>Install llama.cpp</source>
        <translation>安裝 llama.cpp</translation>
    </message>
    <message>
        <source>Installs llama-cpp-python into the app&apos;s Python: it checks GGUF files and makes q4_k_m</source>
        <translation>把 llama-cpp-python 安裝到應用程式的執行環境中：用於驗證 GGUF 檔案和產生 q4_k_m</translation>
    </message>
    <message>
        <source>Add to Ollama</source>
        <translation>加入 Ollama</translation>
    </message>
    <message>
        <source>as q4_K_M (Ollama quantizes it)</source>
        <translation>以 q4_K_M 加入（由 Ollama 量化）</translation>
    </message>
    <message>
        <source>Ollama makes the 4-bit model from this f16 file as it takes it; llama.cpp is not needed</source>
        <translation>Ollama 在接收這個 f16 檔案時產生 4 位元模型，不需要 llama.cpp</translation>
    </message>
    <message>
        <source>Check again</source>
        <translation>重新檢查</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>複製</translation>
    </message>
    <message>
        <source>Open folder</source>
        <translation>開啟資料夾</translation>
    </message>
    <message>
        <source>Ollama:</source>
        <translation>Ollama：</translation>
    </message>
    <message>
        <source>LM Studio:</source>
        <translation>LM Studio：</translation>
    </message>
    <message>
        <source>Exported to {file} ({size}).</source>
        <translation>已匯出到 {file}（{size}）。</translation>
    </message>
    <message>
        <source>Added. In a terminal: {command}</source>
        <translation>已加入。在終端機中執行：{command}</translation>
    </message>
    <message>
        <source>Ollama {version} is running: add the model as {name}.</source>
        <translation>Ollama {version} 正在執行：以 {name} 為名加入這個模型。</translation>
    </message>
    <message>
        <source>Adding to Ollama…</source>
        <translation>正在加入 Ollama…</translation>
    </message>
    <message>
        <source>Installing llama.cpp…</source>
        <translation>正在安裝 llama.cpp…</translation>
    </message>
    <message>
        <source>In LM Studio&apos;s models folder: it lists the model as {name}.</source>
        <translation>已在 LM Studio 的模型資料夾中：它會把模型列為 {name}。</translation>
    </message>
    <message>
        <source>LM Studio loads models from {models}, one folder per publisher and model: choose the LM Studio layout and that folder, or move {folder} there.</source>
        <translation>LM Studio 從 {models} 載入模型，每個發行者和模型各一個資料夾：選擇「LM Studio 配置」和那個資料夾，或者把 {folder} 移到那裡。</translation>
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
        <translation>詞元數</translation>
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
        <source>In use now: {source}.</source>
        <translation>目前使用：{source}。</translation>
    </message>
    <message>
        <source>HF_ENDPOINT is set in the environment, so it is used for Hugging Face whatever is chosen below (except a mirror or ModelScope).</source>
        <translation>環境變數中設定了 HF_ENDPOINT，因此無論下面選擇什麼，Hugging Face 都使用它（鏡像站或 ModelScope 除外）。</translation>
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
    <name>JobExportController</name>
    <message>
        <source>Where to write the job folder</source>
        <translation>選擇作業資料夾的位置</translation>
    </message>
    <message>
        <source>Writing the job folder (the data and a local model are copied)…</source>
        <translation>正在寫入作業資料夾（會複製資料和本機模型）…</translation>
    </message>
    <message>
        <source>Job written</source>
        <translation>作業已寫好</translation>
    </message>
    <message>
        <source>The job is in {folder}.

One machine: run launch.sh there. A Slurm cluster: sbatch job.sbatch. Its README says how to install the runtime. The run folder ends up in its runs folder: bring it back with Run history › Import run.</source>
        <translation>作業位於 {folder}。

單台機器：在那裡執行 launch.sh。Slurm 叢集：sbatch job.sbatch。其中的 README 說明了如何安裝執行環境。訓練任務資料夾會出現在它的 runs 資料夾裡：用「訓練紀錄 › 匯入訓練任務」把它帶回來。</translation>
    </message>
    <message>
        <source>Open folder</source>
        <translation>開啟資料夾</translation>
    </message>
    <message>
        <source>The job was not written</source>
        <translation>作業沒有寫出</translation>
    </message>
</context>
<context>
    <name>JobShapeDialog</name>
    <message>
        <source>Job for another machine or a cluster</source>
        <translation>在另一台機器或叢集上訓練的作業</translation>
    </message>
    <message>
        <source>GPUs per machine:</source>
        <translation>每台機器的 GPU 數：</translation>
    </message>
    <message>
        <source>Machines (for the Slurm script):</source>
        <translation>機器數（用於 Slurm 指令碼）：</translation>
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
        <source>&amp;Move the data folder…</source>
        <translation>移動資料資料夾(&amp;M)…</translation>
    </message>
    <message>
        <source>Runs, the runtime and caches (and, if you choose, the downloaded models) to another drive</source>
        <translation>把訓練記錄、執行環境和快取（如果你選擇，也包括已下載的模型）移到另一個磁碟</translation>
    </message>
    <message>
        <source>&amp;Keep the computer awake while training</source>
        <translation>訓練時保持電腦喚醒(&amp;K)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>說明(&amp;H)</translation>
    </message>
    <message>
        <source>Copy &amp;diagnostics for a problem report</source>
        <translation>複製診斷資訊用於問題回報(&amp;D)</translation>
    </message>
    <message>
        <source>This computer&apos;s GPUs, drivers and libraries, ready to paste into a report</source>
        <translation>這台電腦的 GPU、驅動程式和函式庫，可直接貼到回報中</translation>
    </message>
    <message>
        <source>Open the &amp;logs folder</source>
        <translation>開啟記錄檔資料夾(&amp;L)</translation>
    </message>
    <message>
        <source>The app&apos;s own log; each run keeps its train.log in its folder</source>
        <translation>應用程式本身的記錄檔；每次訓練的 train.log 保存在其訓練資料夾中</translation>
    </message>
    <message>
        <source>The environment is still being checked; try again in a moment.</source>
        <translation>仍在檢查執行環境，請稍後再試。</translation>
    </message>
    <message>
        <source>Diagnostics copied: paste them into your problem report.</source>
        <translation>診斷資訊已複製：請貼到你的問題回報中。</translation>
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
        <source>Training…</source>
        <translation>正在訓練…</translation>
    </message>
    <message>
        <source>Your own settings are back for the next run: {fields}.</source>
        <translation>下次訓練將恢復使用您自己的設定：{fields}。</translation>
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
        <source>Training is running</source>
        <translation>正在訓練</translation>
    </message>
    <message>
        <source>End training and quit? The training process is ended at once; the run resumes from its last checkpoint.</source>
        <translation>結束訓練並離開？訓練行程會立即結束；訓練任務可以從最後一個檢查點繼續訓練。</translation>
    </message>
    <message>
        <source>Stop training and quit? A checkpoint is saved so you can resume later.</source>
        <translation>停止訓練並結束嗎？會儲存一個檢查點，之後可以繼續。</translation>
    </message>
    <message>
        <source>Ending the training process…</source>
        <translation>正在結束訓練行程…</translation>
    </message>
    <message>
        <source>Stopping training and saving a checkpoint…</source>
        <translation>正在停止訓練並儲存檢查點…</translation>
    </message>
</context>
<context>
    <name>MemoryEstimateWidget</name>
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
        <translation>依我的 GPU 調整</translation>
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
        <translation>本機訓練的記憶體占用——{parts}</translation>
    </message>
    <message>
        <source>No NVIDIA GPU here: training runs on the CPU and needs about {total} of RAM ({free} free). It is much slower than on a GPU: small models and short texts suit it best.</source>
        <translation>這裡沒有 NVIDIA GPU：訓練會在 CPU 上執行，約需 {total} 記憶體（可用 {free}）。速度比 GPU 慢得多，最適合小模型和短文字。</translation>
    </message>
    <message>
        <source>Needs about {total}: fits in the {free} free on {gpu}.</source>
        <translation>約需 {total}：{gpu} 的 {free} 可用顯示記憶體放得下。</translation>
    </message>
    <message>
        <source>Needs about {total}: fits, but tightly, in the {free} free on {gpu}.</source>
        <translation>約需 {total}：{gpu} 的 {free} 可用顯示記憶體勉強放得下。</translation>
    </message>
    <message>
        <source>Needs about {total}: will not fit in the {free} free on {gpu}.</source>
        <translation>約需 {total}：{gpu} 的 {free} 可用顯示記憶體放不下。</translation>
    </message>
    <message>
        <source>Changed: {changes}.</source>
        <translation>已變更：{changes}。</translation>
    </message>
    <message>
        <source>On Windows it will not fail: the driver moves what does not fit into shared system memory, and each step becomes many times slower. Fit my GPU finds settings that fit.</source>
        <translation>在 Windows 上它不會報錯：驅動程式會把放不下的部分移到共用系統記憶體中，每一步都會慢很多倍。「依我的 GPU 調整」可以找到放得下的設定。</translation>
    </message>
    <message>
        <source>{term}: {size}</source>
        <translation>{term}：{size}</translation>
    </message>
    <message>
        <source>Nothing changed: the current settings already match.</source>
        <translation>沒有變更：目前的設定已經符合。</translation>
    </message>
</context>
<context>
    <name>MessageBubble</name>
    <message>
        <source>Copy</source>
        <translation>複製</translation>
    </message>
    <message>
        <source>Copy this answer to the clipboard</source>
        <translation>把這個回答複製到剪貼簿</translation>
    </message>
</context>
<context>
    <name>MetricText</name>
    <message>
        <source>loss</source>
        <translation>損失</translation>
    </message>
    <message>
        <source>accuracy</source>
        <translation>準確率</translation>
    </message>
    <message>
        <source>macro F1</source>
        <translation>宏平均 F1</translation>
    </message>
    <message>
        <source>F1</source>
        <translation>F1</translation>
    </message>
    <message>
        <source>precision</source>
        <translation>精確率</translation>
    </message>
    <message>
        <source>recall</source>
        <translation>召回率</translation>
    </message>
    <message>
        <source>BLEU</source>
        <translation>BLEU</translation>
    </message>
    <message>
        <source>chrF</source>
        <translation>chrF</translation>
    </message>
    <message>
        <source>perplexity</source>
        <translation>困惑度</translation>
    </message>
    <message>
        <source>gradient norm</source>
        <translation>梯度範數</translation>
    </message>
    <message>
        <source>learning rate</source>
        <translation>學習率</translation>
    </message>
    <message>
        <source>epoch</source>
        <translation>輪數</translation>
    </message>
    <message>
        <source>time (s)</source>
        <translation>用時（秒）</translation>
    </message>
    <message>
        <source>samples/s</source>
        <translation>樣本/秒</translation>
    </message>
    <message>
        <source>steps/s</source>
        <translation>步/秒</translation>
    </message>
    <message>
        <source>tokens/s</source>
        <translation>詞元/秒</translation>
    </message>
    <message>
        <source>reward accuracy</source>
        <translation>獎勵準確率</translation>
    </message>
    <message>
        <source>reward margin</source>
        <translation>獎勵差值</translation>
    </message>
    <message>
        <source>chosen reward</source>
        <translation>選中回答獎勵</translation>
    </message>
    <message>
        <source>rejected reward</source>
        <translation>被拒回答獎勵</translation>
    </message>
    <message>
        <source>chosen log-probability</source>
        <translation>選中回答對數機率</translation>
    </message>
    <message>
        <source>rejected log-probability</source>
        <translation>被拒回答對數機率</translation>
    </message>
    <message>
        <source>mean reward</source>
        <translation>平均獎勵</translation>
    </message>
    <message>
        <source>answer length</source>
        <translation>回答長度</translation>
    </message>
    <message>
        <source>KL</source>
        <translation>KL</translation>
    </message>
    <message>
        <source>reward: {name}</source>
        <translation>獎勵：{name}</translation>
    </message>
    <message>
        <source>validation {metric}</source>
        <translation>驗證集{metric}</translation>
    </message>
    <message>
        <source>training {metric}</source>
        <translation>訓練{metric}</translation>
    </message>
    <message>
        <source>test {metric}</source>
        <translation>測試集{metric}</translation>
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
        <source>Preference (DPO / ORPO)</source>
        <translation>偏好微調（DPO / ORPO）</translation>
    </message>
    <message>
        <source>Reasoning (GRPO)</source>
        <translation>推理（GRPO）</translation>
    </message>
    <message>
        <source>Image classification</source>
        <translation>影像分類</translation>
    </message>
    <message>
        <source>Vision-language (pictures and text)</source>
        <translation>視覺語言（圖片與文字）</translation>
    </message>
    <message>
        <source>prediction</source>
        <translation>預測</translation>
    </message>
    <message>
        <source>probability</source>
        <translation>機率</translation>
    </message>
    <message>
        <source>generated text</source>
        <translation>生成的文字</translation>
    </message>
    <message>
        <source>{name} ({key})</source>
        <translation>{name}（{key}）</translation>
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
        <source>Weights</source>
        <translation>權重</translation>
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
        <translation>本機已有</translation>
    </message>
    <message>
        <source>run: {name} (finished chat run)</source>
        <translation>訓練：{name}（已完成的對話訓練）</translation>
    </message>
    <message>
        <source>{license} · gated</source>
        <translation>{license} · 受限</translation>
    </message>
    <message>
        <source>{weights} of weights, as on the hub; {disk} on disk with every file.</source>
        <translation>權重 {weights}，與模型庫上一致；連同所有檔案在磁碟上占 {disk}。</translation>
    </message>
    <message>
        <source>Gated: accept the license on the model&apos;s page, then add a token in Settings &gt; Model sources.</source>
        <translation>受限模型：請先在模型頁面同意授權條款，然後在「設定 &gt; 模型下載來源」中加入權杖。</translation>
    </message>
    <message>
        <source>Chinese</source>
        <translation>中文</translation>
    </message>
    <message>
        <source>English</source>
        <translation>英文</translation>
    </message>
    <message>
        <source>multilingual</source>
        <translation>多語言</translation>
    </message>
    <message>
        <source>, </source>
        <translation>、</translation>
    </message>
    <message>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <source>{verdict} · {need} of RAM · ~{minutes:.0f} min/epoch</source>
        <translation>{verdict} · 需 {need} 記憶體 · 每輪約 {minutes:.0f} 分鐘</translation>
    </message>
    <message>
        <source>{verdict} · {need} of RAM</source>
        <translation>{verdict} · 需 {need} 記憶體</translation>
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
        <source>{model} was not deleted: {error}</source>
        <translation>{model} 沒有刪除：{error}</translation>
    </message>
    <message>
        <source>Deleted {model}: {size} freed.</source>
        <translation>已刪除 {model}：釋放了 {size}。</translation>
    </message>
</context>
<context>
    <name>ModelPickerWidget</name>
    <message>
        <source>Task and model</source>
        <translation>任務和模型</translation>
    </message>
    <message>
        <source>Keeps a frozen reference copy of the model: more memory.</source>
        <translation>保留一份凍結的模型副本作參照：佔用更多顯示記憶體。</translation>
    </message>
    <message>
        <source>Needs no reference model: less memory.</source>
        <translation>不需要參照模型：佔用較少顯示記憶體。</translation>
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
        <source>Task:</source>
        <translation>任務：</translation>
    </message>
    <message>
        <source>Method:</source>
        <translation>方法：</translation>
    </message>
    <message>
        <source>Model:</source>
        <translation>模型：</translation>
    </message>
    <message>
        <source>Choose a model folder</source>
        <translation>選擇模型資料夾</translation>
    </message>
    <message>
        <source>Choose a model: a hub id such as &quot;bert-base-uncased&quot;, or a local model folder.</source>
        <translation>請選擇模型：模型庫 ID（如 &quot;bert-base-uncased&quot;）或本機模型資料夾。</translation>
    </message>
    <message>
        <source>Model: {problem}</source>
        <translation>模型：{problem}</translation>
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
        <source>The run&apos;s model is its best checkpoint</source>
        <translation>執行的模型取最佳檢查點</translation>
    </message>
    <message>
        <source>never</source>
        <translation>從不</translation>
    </message>
    <message>
        <source> evaluations without improvement</source>
        <translation> 次評估無改進</translation>
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
        <source>Best checkpoint</source>
        <translation>最佳檢查點</translation>
    </message>
    <message>
        <source>Best by</source>
        <translation>最佳依據</translation>
    </message>
    <message>
        <source>Stop early after</source>
        <translation>提前停止於</translation>
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
        <translation>LoRA 轉接器</translation>
    </message>
    <message>
        <source>Pictures</source>
        <translation>圖片</translation>
    </message>
    <message>
        <source>{field}:</source>
        <translation>{field}：</translation>
    </message>
    <message>
        <source>{field}: {problem}</source>
        <translation>{field}：{problem}</translation>
    </message>
    <message numerus="yes">
        <source>Effective batch: %n example(s) per update</source>
        <translation>
            <numerusform>有效批次大小：每次更新 %n 個範例</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Effective batch: %n example(s) per update, across the GPUs</source>
        <translation>
            <numerusform>有效批次大小：每次更新 %n 個範例（所有 GPU 合計）</numerusform>
        </translation>
    </message>
    <message>
        <source>Folder for run folders</source>
        <translation>存放訓練任務的資料夾</translation>
    </message>
</context>
<context>
    <name>PairPreviewWidget</name>
    <message>
        <source>Choose the chosen and rejected columns to see the pairs.</source>
        <translation>請先選好「選中回答」和「被拒回答」兩欄，才能查看偏好對。</translation>
    </message>
    <message>
        <source>No rows to show.</source>
        <translation>沒有可顯示的列。</translation>
    </message>
    <message>
        <source>Pair {number}</source>
        <translation>第 {number} 對</translation>
    </message>
    <message>
        <source>This row holds no readable pair: check the chosen, rejected and prompt columns.</source>
        <translation>這一列讀不出偏好對：請檢查選中回答、被拒回答和提示詞三欄。</translation>
    </message>
    <message>
        <source>Chosen</source>
        <translation>選中</translation>
    </message>
    <message>
        <source>Rejected</source>
        <translation>被拒</translation>
    </message>
    <message>
        <source>Prompt: {text}</source>
        <translation>提示詞：{text}</translation>
    </message>
    <message>
        <source>User</source>
        <translation>使用者</translation>
    </message>
    <message>
        <source>Assistant</source>
        <translation>助理</translation>
    </message>
    <message>
        <source>System</source>
        <translation>系統</translation>
    </message>
    <message>
        <source>{speaker}: {text}</source>
        <translation>{speaker}：{text}</translation>
    </message>
</context>
<context>
    <name>PictureDrop</name>
    <message>
        <source>Drop a picture here, paste one (Ctrl+V), or choose one</source>
        <translation>把圖片拖到這裡、貼上（Ctrl+V）或選擇一張</translation>
    </message>
    <message>
        <source>Choose picture…</source>
        <translation>選擇圖片…</translation>
    </message>
    <message>
        <source>Paste</source>
        <translation>貼上</translation>
    </message>
    <message>
        <source>Use the picture on the clipboard (Ctrl+V)</source>
        <translation>使用剪貼簿中的圖片（Ctrl+V）</translation>
    </message>
    <message>
        <source>That file is not a picture that can be read.</source>
        <translation>該檔案不是可讀取的圖片。</translation>
    </message>
    <message>
        <source>The clipboard holds no picture.</source>
        <translation>剪貼簿中沒有圖片。</translation>
    </message>
    <message>
        <source>Choose a picture</source>
        <translation>選擇一張圖片</translation>
    </message>
    <message>
        <source>Pictures ({patterns})</source>
        <translation>圖片（{patterns}）</translation>
    </message>
</context>
<context>
    <name>PredictPanel</name>
    <message>
        <source>A CSV, TSV, JSONL or Excel file with the rows to predict</source>
        <translation>包含待預測資料的 CSV、TSV、JSONL 或 Excel 檔案</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>瀏覽…</translation>
    </message>
    <message>
        <source>Folder…</source>
        <translation>資料夾…</translation>
    </message>
    <message>
        <source>A folder of pictures, for an image classifier: every picture in it</source>
        <translation>圖片資料夾，供影像分類器使用：其中的每一張圖片</translation>
    </message>
    <message>
        <source>The column the model reads</source>
        <translation>模型讀取的欄位</translation>
    </message>
    <message>
        <source>Save as…</source>
        <translation>另存新檔…</translation>
    </message>
    <message>
        <source>Predict</source>
        <translation>預測</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Open folder</source>
        <translation>開啟資料夾</translation>
    </message>
    <message>
        <source>File:</source>
        <translation>檔案：</translation>
    </message>
    <message>
        <source>Column to read:</source>
        <translation>要讀取的欄位：</translation>
    </message>
    <message>
        <source>Write to:</source>
        <translation>寫入到：</translation>
    </message>
    <message>
        <source>The file comes back with the prediction added to each row: the label and its probability, or the generated text. A CSV keeps its encoding (GBK stays GBK).</source>
        <translation>檔案的每一列都會加上預測結果：標籤及其機率，或產生的文字。CSV 保持原有編碼（GBK 仍是 GBK）。</translation>
    </message>
    <message>
        <source>File to predict</source>
        <translation>要預測的檔案</translation>
    </message>
    <message>
        <source>Data ({files})</source>
        <translation>資料（{files}）</translation>
    </message>
    <message>
        <source>Folder of pictures to label</source>
        <translation>要加上標籤的圖片資料夾</translation>
    </message>
    <message>
        <source>Write the predictions to</source>
        <translation>預測結果寫入到</translation>
    </message>
    <message>
        <source>(as trained)</source>
        <translation>（與訓練時相同）</translation>
    </message>
    <message>
        <source>Replace the file?</source>
        <translation>取代檔案？</translation>
    </message>
    <message>
        <source>{file} exists. Replace it?</source>
        <translation>{file} 已存在。要取代它嗎？</translation>
    </message>
    <message>
        <source>Loading the model…</source>
        <translation>正在載入模型…</translation>
    </message>
    <message>
        <source>The picture is labelled; written to {file} with {added}.</source>
        <translation>圖片已標註；已寫入 {file}，新增欄位：{added}。</translation>
    </message>
    <message>
        <source>{done} of {rows} pictures labelled; written to {file} with {added}.</source>
        <translation>{rows} 張圖片中已標註 {done} 張；已寫入 {file}，新增欄位：{added}。</translation>
    </message>
    <message>
        <source>{done} of {rows} rows predicted from column {column}; written to {file} with {added}.</source>
        <translation>已根據 {column} 欄位預測 {rows} 列中的 {done} 列；已寫入 {file}，新增欄位：{added}。</translation>
    </message>
    <message>
        <source>{rows} rows predicted from column {column}; written to {file} with {added}.</source>
        <translation>已根據 {column} 欄位預測 {rows} 列；已寫入 {file}，新增欄位：{added}。</translation>
    </message>
    <message>
        <source>, </source>
        <translation>、</translation>
    </message>
    <message>
        <source>Predicting failed: {error}</source>
        <translation>預測失敗：{error}</translation>
    </message>
</context>
<context>
    <name>ProcessesWidget</name>
    <message>
        <source>Processes and GPUs</source>
        <translation>行程與 GPU</translation>
    </message>
    <message>
        <source>Run in a separate process</source>
        <translation>在獨立的行程中訓練</translation>
    </message>
    <message>
        <source>Stop can then end the run at once, a crash cannot close the app, and every byte of GPU memory goes back to the system when the run ends. It costs a few seconds at the start.</source>
        <translation>這樣「停止」可以立即結束訓練，當機不會讓應用程式關閉，訓練結束後所有顯示記憶體都會還給系統。開始時多花幾秒鐘。</translation>
    </message>
    <message>
        <source>DDP: a whole copy of the model on each GPU (fastest)</source>
        <translation>DDP：每張 GPU 上一份完整的模型（最快）</translation>
    </message>
    <message>
        <source>FSDP: the model split across the GPUs (for a model too big for one)</source>
        <translation>FSDP：模型拆分到各張 GPU 上（適合一張 GPU 放不下的模型）</translation>
    </message>
    <message>
        <source>DeepSpeed ZeRO-2: gradients and optimizer split</source>
        <translation>DeepSpeed ZeRO-2：拆分梯度和最佳化器狀態</translation>
    </message>
    <message>
        <source>DeepSpeed ZeRO-3: everything split</source>
        <translation>DeepSpeed ZeRO-3：全部拆分</translation>
    </message>
    <message>
        <source>GPUs to use</source>
        <translation>使用的 GPU 數</translation>
    </message>
    <message>
        <source>Strategy</source>
        <translation>策略</translation>
    </message>
    <message>
        <source>Export as a job for another machine or a cluster…</source>
        <translation>匯出為作業，在另一台機器或叢集上訓練…</translation>
    </message>
    <message>
        <source>Writes a folder with the config, the data, launch.sh (one machine) and a Slurm script (several); bring the run folder back with Run history › Import run</source>
        <translation>寫出一個資料夾，包含設定、資料、launch.sh（單台機器）和 Slurm 指令碼（多台機器）；用「訓練紀錄 › 匯入訓練任務」把訓練任務資料夾帶回來</translation>
    </message>
    <message>
        <source>Needs the deepspeed package (pip install deepspeed; Linux only)</source>
        <translation>需要 deepspeed 套件（pip install deepspeed；僅限 Linux）</translation>
    </message>
    <message>
        <source>One GPU. With more, the run is split into one process per GPU (accelerate launch).</source>
        <translation>一張 GPU。有多張時，訓練會拆成每張 GPU 一個行程（accelerate launch）。</translation>
    </message>
    <message>
        <source>{count} processes through accelerate launch; progress comes from the first. On Windows the GPUs exchange gradients with gloo, through system memory (PyTorch has no NCCL for Windows): each step waits longer for that exchange than on Linux, so {count} GPUs gain less than {count} times the speed. For the most speed, train on Linux or WSL2.</source>
        <translation>透過 accelerate launch 啟動 {count} 個行程；進度來自第一個行程。在 Windows 上，GPU 之間用 gloo 經由系統記憶體交換梯度（PyTorch 在 Windows 上沒有 NCCL）：每一步等待交換的時間比在 Linux 上長，所以 {count} 張 GPU 的速度提升不到 {count} 倍。要最快，請在 Linux 或 WSL2 上訓練。</translation>
    </message>
    <message>
        <source>{count} processes through accelerate launch (NCCL); progress, plots and checkpoints come from the first. The memory estimate is per GPU.</source>
        <translation>透過 accelerate launch 啟動 {count} 個行程（NCCL）；進度、曲線和檢查點來自第一個行程。顯示記憶體估算是每張 GPU 的。</translation>
    </message>
</context>
<context>
    <name>PublishPanel</name>
    <message>
        <source>Publish to a model hub</source>
        <translation>發布到模型中心</translation>
    </message>
    <message>
        <source>name, or owner/name</source>
        <translation>名稱，或 擁有者/名稱</translation>
    </message>
    <message>
        <source>Hugging Face</source>
        <translation>Hugging Face</translation>
    </message>
    <message>
        <source>ModelScope</source>
        <translation>ModelScope</translation>
    </message>
    <message>
        <source>Hugging Face goes where Settings &gt; Model sources points (a mirror must take uploads)</source>
        <translation>Hugging Face 使用「設定 &gt; 模型來源」中的位址（鏡像須支援上傳）</translation>
    </message>
    <message>
        <source>Private: only you (and your organization) can see it</source>
        <translation>私人：只有你（和你的組織）能看到</translation>
    </message>
    <message>
        <source>Publish</source>
        <translation>發布</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Repository:</source>
        <translation>儲存庫：</translation>
    </message>
    <message>
        <source>Hub:</source>
        <translation>模型中心：</translation>
    </message>
    <message>
        <source>The model folder {name} with its model card.</source>
        <translation>模型資料夾 {name}，附模型卡片。</translation>
    </message>
    <message>
        <source>The LoRA adapters in {name} with their model card.</source>
        <translation>{name} 中的 LoRA 配接器，附模型卡片。</translation>
    </message>
    <message>
        <source>{name} with its Modelfile and card.</source>
        <translation>{name}，附 Modelfile 和模型卡片。</translation>
    </message>
    <message>
        <source>Give the repository as name, or owner/name (letters, digits, - _ .).</source>
        <translation>請按「名稱」或「擁有者/名稱」填寫儲存庫（字母、數字、- _ .）。</translation>
    </message>
    <message>
        <source>Checking the token…</source>
        <translation>正在檢查權杖…</translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation>正在取消…</translation>
    </message>
    <message>
        <source>{done} of {total}</source>
        <translation>{done} / {total}</translation>
    </message>
    <message>
        <source>, {speed}/s</source>
        <translation>，{speed}/秒</translation>
    </message>
    <message>
        <source>Published to {url}.</source>
        <translation>已發布到 {url}。</translation>
    </message>
    <message>
        <source>Replace the repository&apos;s files?</source>
        <translation>取代儲存庫中的檔案？</translation>
    </message>
    <message>
        <source>{problem}

Replace them? Files of the same names are overwritten and the others deleted (the hub keeps the old ones in the repository&apos;s history).</source>
        <translation>{problem}

要取代嗎？同名檔案會被覆寫，其餘檔案會被刪除（舊檔案仍保留在儲存庫的歷史紀錄中）。</translation>
    </message>
</context>
<context>
    <name>RecoveryBarWidget</name>
    <message>
        <source>Undo for the next run</source>
        <translation>下次訓練復原這些變更</translation>
    </message>
    <message>
        <source>Use your own settings again in the next run</source>
        <translation>下次訓練重新使用您自己的設定</translation>
    </message>
    <message>
        <source>The run starts with:</source>
        <translation>訓練開始時改為：</translation>
    </message>
    <message>
        <source>The run goes on at step {step} with:</source>
        <translation>訓練在第 {step} 步繼續，改為：</translation>
    </message>
    <message>
        <source>The run goes back to its checkpoint at step {step} and goes on with:</source>
        <translation>訓練回到第 {step} 步的檢查點繼續，改為：</translation>
    </message>
    <message>
        <source>The run starts again from the beginning with:</source>
        <translation>訓練從頭重新開始，改為：</translation>
    </message>
    <message>
        <source>These settings are now on Memory &amp; speed for your next run; Undo restores yours.</source>
        <translation>這些設定已填入「記憶體與速度」，供下次訓練使用；按「復原」可恢復您自己的設定。</translation>
    </message>
    <message>
        <source>Undone: the next run uses your own settings again.</source>
        <translation>已復原：下次訓練將重新使用您自己的設定。</translation>
    </message>
</context>
<context>
    <name>RestartController</name>
    <message>
        <source>Language</source>
        <translation>語言</translation>
    </message>
    <message>
        <source>The new language is used from the next start. Restart Finetune Studio now?</source>
        <translation>新語言會在下次啟動時生效。現在重新啟動 Finetune Studio 嗎？</translation>
    </message>
    <message>
        <source>Move the data folder into</source>
        <translation>把資料資料夾移到</translation>
    </message>
    <message>
        <source>Cannot move the data folder</source>
        <translation>無法移動資料資料夾</translation>
    </message>
    <message>
        <source>Move the data folder</source>
        <translation>移動資料資料夾</translation>
    </message>
    <message>
        <source>Close Finetune Studio, then run: {command}</source>
        <translation>請關閉 Finetune Studio，然後執行：{command}</translation>
    </message>
    <message>
        <source>{size:.1f} GB to copy</source>
        <translation>需複製 {size:.1f} GB</translation>
    </message>
    <message>
        <source>a rename on the same drive</source>
        <translation>同一磁碟上重新命名即可</translation>
    </message>
    <message>
        <source>Finetune Studio closes, moves its data folder ({size}) from {source} to {target}, and starts again. Command-line runs must end first. Continue?</source>
        <translation>Finetune Studio 將關閉，把資料資料夾（{size}）從 {source} 移到 {target}，然後重新啟動。命令列中的訓練必須先結束。繼續嗎？</translation>
    </message>
    <message>
        <source>Also move the downloaded models ({folder}). Other programs that use this Hugging Face cache will then download their models again.</source>
        <translation>同時移動已下載的模型（{folder}）。使用這個 Hugging Face 快取的其他程式之後會重新下載它們的模型。</translation>
    </message>
    <message>
        <source>Restart to install PyTorch</source>
        <translation>重新啟動以安裝 PyTorch</translation>
    </message>
    <message>
        <source>Finetune Studio closes, installs PyTorch {version} beside the one you have, and starts again with it. The PyTorch you have keeps working until the new one is complete; if anything fails, it stays. Runs started from the command line are waited for. Continue?</source>
        <translation>Finetune Studio 將關閉，在現有 PyTorch 旁邊安裝 PyTorch {version}，然後用它重新啟動。新的裝好之前，現有的 PyTorch 照常可用；任何一步失敗，都保留現有的。會等待命令列啟動的訓練結束。繼續嗎？</translation>
    </message>
    <message>
        <source>The request could not be written ({error}). Check that the data folder is writable.</source>
        <translation>無法寫入請求（{error}）。請檢查資料夾是否可寫入。</translation>
    </message>
    <message>
        <source>Close Finetune Studio and start it again: PyTorch is installed at that start.</source>
        <translation>請關閉 Finetune Studio 再重新啟動：啟動時會安裝 PyTorch。</translation>
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
</context>
<context>
    <name>ResumeOfferWidget</name>
    <message>
        <source>Resume</source>
        <translation>繼續訓練</translation>
    </message>
    <message>
        <source>Not now</source>
        <translation>稍後再說</translation>
    </message>
    <message>
        <source>The run {run} was interrupted at step {step} of {total} (the app or the computer stopped). Resume it from its last checkpoint?</source>
        <translation>訓練任務 {run} 在第 {step} 步（共 {total} 步）時中斷了（應用程式或電腦停止了運作）。要從最近的檢查點繼續嗎？</translation>
    </message>
</context>
<context>
    <name>RewardsWidget</name>
    <message>
        <source>The reward&apos;s weight; 0 turns it off</source>
        <translation>該獎勵的權重；0 表示關閉</translation>
    </message>
    <message>
        <source>Asked before every prompt; it should say where the final answer goes.</source>
        <translation>放在每個提示詞之前；應說明最終答案寫在哪裡。</translation>
    </message>
    <message>
        <source>equals the reference (as text)</source>
        <translation>與參考答案相同（按文字）</translation>
    </message>
    <message>
        <source>equals the reference (as a number)</source>
        <translation>與參考答案相同（按數值）</translation>
    </message>
    <message>
        <source>is the reference label</source>
        <translation>是參考標籤</translation>
    </message>
    <message>
        <source>not checked</source>
        <translation>不檢查</translation>
    </message>
    <message>
        <source>Numbers closer than this share of the reference count as equal</source>
        <translation>與參考答案相差不超過該比例的數值視為相等</translation>
    </message>
    <message>
        <source>positive, negative (empty: any)</source>
        <translation>positive, negative（留空：任意）</translation>
    </message>
    <message>
        <source>Reasoning, then a last line &quot;Answer: X&quot;</source>
        <translation>先推理，最後一行寫「Answer: X」</translation>
    </message>
    <message>
        <source>&lt;think&gt;reasoning&lt;/think&gt;, then the answer</source>
        <translation>&lt;think&gt;推理&lt;/think&gt;，然後寫答案</translation>
    </message>
    <message>
        <source>The answer in \boxed{X}</source>
        <translation>答案寫在 \boxed{X} 中</translation>
    </message>
    <message>
        <source>My own regular expression…</source>
        <translation>自訂正規表示式…</translation>
    </message>
    <message>
        <source>Chinese prompts answered in Chinese, English ones in English</source>
        <translation>中文提示詞用中文回答，英文提示詞用英文回答</translation>
    </message>
    <message>
        <source>My own reward (Python)</source>
        <translation>自訂獎勵（Python）</translation>
    </message>
    <message>
        <source>a .py file with reward(prompts, completions, **columns)</source>
        <translation>含有 reward(prompts, completions, **columns) 的 .py 檔案</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>瀏覽…</translation>
    </message>
    <message>
        <source>Your own code runs in the training process, with your rights: use only files you trust.</source>
        <translation>你自己的程式碼會以你的權限在訓練程序中執行：只使用你信任的檔案。</translation>
    </message>
    <message>
        <source>Answers written per prompt and compared with each other</source>
        <translation>每個提示詞產生並相互比較的回答數</translation>
    </message>
    <message>
        <source>0: the model is not held near where it started, and no reference copy is kept</source>
        <translation>0：不把模型約束在起點附近，也不保留參考副本</translation>
    </message>
    <message>
        <source>Prompt</source>
        <translation>提示詞</translation>
    </message>
    <message>
        <source>Reference answer</source>
        <translation>參考答案</translation>
    </message>
    <message>
        <source>A wrong answer</source>
        <translation>一個錯誤答案</translation>
    </message>
    <message>
        <source>weight</source>
        <translation>權重</translation>
    </message>
    <message>
        <source>Final answer:</source>
        <translation>最終答案：</translation>
    </message>
    <message>
        <source>Tolerance:</source>
        <translation>容差：</translation>
    </message>
    <message>
        <source>Labels:</source>
        <translation>標籤：</translation>
    </message>
    <message>
        <source>Format:</source>
        <translation>格式：</translation>
    </message>
    <message>
        <source>characters, weight</source>
        <translation>個字元，權重</translation>
    </message>
    <message>
        <source>Length:</source>
        <translation>長度：</translation>
    </message>
    <message>
        <source>Prompt&apos;s language, weight:</source>
        <translation>提示詞的語言，權重：</translation>
    </message>
    <message>
        <source>System prompt:</source>
        <translation>系統提示詞：</translation>
    </message>
    <message>
        <source>Answers per prompt:</source>
        <translation>每個提示詞的回答數：</translation>
    </message>
    <message>
        <source>Longest answer (tokens):</source>
        <translation>最長回答（詞元）：</translation>
    </message>
    <message>
        <source>Temperature:</source>
        <translation>溫度：</translation>
    </message>
    <message>
        <source>Beta (KL):</source>
        <translation>Beta（KL）：</translation>
    </message>
    <message>
        <source>What the rewards give the first rows:</source>
        <translation>各獎勵對前幾列給出的分數：</translation>
    </message>
    <message>
        <source>Your reward</source>
        <translation>你的獎勵</translation>
    </message>
    <message>
        <source>Python files (*.py)</source>
        <translation>Python 檔案 (*.py)</translation>
    </message>
    <message>
        <source>Answers per prompt</source>
        <translation>每個提示詞的回答數</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>溫度</translation>
    </message>
    <message>
        <source>Beta (KL)</source>
        <translation>Beta（KL）</translation>
    </message>
    <message>
        <source>Longest answer</source>
        <translation>最長回答</translation>
    </message>
    <message>
        <source>Length</source>
        <translation>長度</translation>
    </message>
    <message>
        <source>The rewards</source>
        <translation>獎勵設定</translation>
    </message>
    <message>
        <source>{field} {problem}</source>
        <translation>{field}{problem}</translation>
    </message>
    <message>
        <source>This expression {problem}</source>
        <translation>該表示式{problem}</translation>
    </message>
    <message>
        <source>The preview waits until the rewards can be used.</source>
        <translation>獎勵設定可用後才會顯示預覽。</translation>
    </message>
    <message>
        <source>No row has a reference answer (map the answer column): only the format, length, language and your own rewards can score the answers.</source>
        <translation>沒有一列有參考答案（請對應答案欄）：只有格式、長度、語言和自訂獎勵能為回答評分。</translation>
    </message>
    <message>
        <source>The reference answer should earn every reward it is checked by, and the wrong one less: if not, the format or the answer check does not fit the data.</source>
        <translation>參考答案應得到所有檢查它的獎勵，錯誤答案應得分更低；否則說明格式或答案檢查方式與資料不符。</translation>
    </message>
</context>
<context>
    <name>RunHistory</name>
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
        <source>Preference tuning of the model {run} trained: choose pairs of answers (prompt, chosen, rejected) as the data.</source>
        <translation>對 {run} 訓練出的模型做偏好微調：請選擇成對的回答（提示詞、選中回答、被拒回答）作為資料。</translation>
    </message>
    <message>
        <source>Training the model {run} trained with rewards: choose prompts (with their reference answers) as the data, then the rewards.</source>
        <translation>用獎勵訓練 {run} 訓練出的模型：先選擇提示詞（及其參考答案）作為資料，再選擇獎勵。</translation>
    </message>
</context>
<context>
    <name>RunsDialog</name>
    <message>
        <source>Runs</source>
        <translation>訓練紀錄</translation>
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
        <source>Name</source>
        <translation>名稱</translation>
    </message>
    <message>
        <source>Evaluation…</source>
        <translation>評估…</translation>
    </message>
    <message>
        <source>Per class, the confusion matrix and the mistakes of a finished classification run</source>
        <translation>已完成的分類訓練：各類別指標、混淆矩陣和判斷錯誤的資料</translation>
    </message>
    <message>
        <source>Tune preferences…</source>
        <translation>偏好微調…</translation>
    </message>
    <message>
        <source>Teach this chat model which answers are better: a preference run (DPO or ORPO) that starts from the model this run saved</source>
        <translation>教這個對話模型哪些回答更好：從這次訓練儲存的模型開始做偏好微調（DPO 或 ORPO）</translation>
    </message>
    <message>
        <source>Train with rewards…</source>
        <translation>用獎勵訓練…</translation>
    </message>
    <message>
        <source>Teach this chat model to reach answers you can check: a reasoning run (GRPO) that starts from the model this run saved</source>
        <translation>教這個對話模型得出可以核對的答案：從該訓練任務儲存的模型開始一次推理訓練（GRPO）</translation>
    </message>
    <message>
        <source>Import run…</source>
        <translation>匯入訓練任務…</translation>
    </message>
    <message>
        <source>Copy a run folder made elsewhere (a job&apos;s runs folder) into this list</source>
        <translation>把在別處產生的訓練任務資料夾（作業的 runs 資料夾中）複製到這個清單</translation>
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
        <source>Rows</source>
        <translation>列數</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>學習率</translation>
    </message>
    <message>
        <source>Batch</source>
        <translation>批次大小</translation>
    </message>
    <message>
        <source>Epochs</source>
        <translation>輪數</translation>
    </message>
    <message>
        <source>LoRA</source>
        <translation>LoRA</translation>
    </message>
    <message>
        <source>Best score</source>
        <translation>最佳分數</translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation>詞元/秒</translation>
    </message>
    <message>
        <source>Date</source>
        <translation>日期</translation>
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
        <translation>已當機</translation>
    </message>
    <message>
        <source>Damaged</source>
        <translation>已損壞</translation>
    </message>
    <message>
        <source>{problem}. Resume the run: it goes on from its last good checkpoint.</source>
        <translation>{problem}。請繼續此訓練：它會從最後一個完好的檢查點接著訓練。</translation>
    </message>
    <message>
        <source>{problem}. It has no checkpoint to resume from: train it again.</source>
        <translation>{problem}。它沒有可繼續的檢查點：請重新訓練。</translation>
    </message>
    <message>
        <source>{status} ({step}/{total})</source>
        <translation>{status}（{step}/{total}）</translation>
    </message>
    <message>
        <source>Reading the runs in {folder}…</source>
        <translation>正在讀取 {folder} 中的訓練任務……</translation>
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
        <source>The runs in {folder} could not be read: {error}</source>
        <translation>無法讀取 {folder} 中的訓練任務：{error}</translation>
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
        <source>{field}: {values}</source>
        <translation>{field}：{values}</translation>
    </message>
    <message>
        <source>The selected runs have the same settings.</source>
        <translation>所選訓練任務的設定相同。</translation>
    </message>
    <message>
        <source>Differences: {differences}</source>
        <translation>不同之處：{differences}</translation>
    </message>
    <message>
        <source>Evaluation: {run}</source>
        <translation>評估：{run}</translation>
    </message>
    <message>
        <source>Run folder to import</source>
        <translation>要匯入的訓練任務資料夾</translation>
    </message>
    <message>
        <source>Copying {folder}…</source>
        <translation>正在複製 {folder}…</translation>
    </message>
    <message>
        <source>Imported {run}.</source>
        <translation>已匯入 {run}。</translation>
    </message>
    <message>
        <source>The run was not imported</source>
        <translation>訓練任務沒有匯入</translation>
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
    <name>SampleDialog</name>
    <message>
        <source>Replace your choices with the sample?</source>
        <translation>用範例取代你的選擇嗎？</translation>
    </message>
    <message>
        <source>The sample sets its own model and data (short English reviews, the bundled English model) on every page. Your choices now: {mine}.

Save them first with File &gt; Save run config… to come back to them.</source>
        <translation>範例會在每一頁換上它自己的模型和資料（英文短評論、內建的英文模型）。你現在的選擇：{mine}。

想以後再用它們，請先用「檔案 &gt; 儲存訓練設定檔…」儲存。</translation>
    </message>
    <message>
        <source>Load the sample</source>
        <translation>載入範例</translation>
    </message>
    <message>
        <source>Keep mine</source>
        <translation>保留我的</translation>
    </message>
</context>
<context>
    <name>ServeController</name>
    <message>
        <source>The server ended unexpectedly (exit code {code}).</source>
        <translation>服務意外結束（結束代碼 {code}）。</translation>
    </message>
    <message>
        <source>Start it again; if it ends again, Details shows what it printed.</source>
        <translation>請再啟動一次；如果它又結束了，「詳細資訊」裡有它輸出的內容。</translation>
    </message>
    <message>
        <source>The server could not be started: {error}.</source>
        <translation>無法啟動服務：{error}。</translation>
    </message>
    <message>
        <source>Check that the app&apos;s Python ({python}) runs, then try again.</source>
        <translation>請檢查本應用程式的 Python（{python}）能否執行，然後重試。</translation>
    </message>
</context>
<context>
    <name>ServePanel</name>
    <message>
        <source>No model yet: train one, or open a model folder.</source>
        <translation>還沒有模型：請先訓練一個，或開啟一個模型資料夾。</translation>
    </message>
    <message>
        <source>This computer only</source>
        <translation>僅限本機</translation>
    </message>
    <message>
        <source>Other computers on my network (needs an API key)</source>
        <translation>我網路中的其他電腦（需要 API 金鑰）</translation>
    </message>
    <message>
        <source>Anyone on your network who has the key can use the model; your firewall may ask whether to let them connect.</source>
        <translation>網路中任何擁有金鑰的人都能使用這個模型；防火牆可能會詢問是否允許他們連線。</translation>
    </message>
    <message>
        <source>New key</source>
        <translation>新金鑰</translation>
    </message>
    <message>
        <source>Replace the API key; the new one is used from the next start</source>
        <translation>更換 API 金鑰；新金鑰從下次啟動起生效</translation>
    </message>
    <message>
        <source>none (e.g. http://localhost:3000)</source>
        <translation>無（例如 http://localhost:3000）</translation>
    </message>
    <message>
        <source>Only for a front end that runs in your browser and calls the server from the page itself. Any other web page you visit is refused, so that it cannot use your model. Separate several with spaces.</source>
        <translation>僅用於在瀏覽器中執行、由網頁本身呼叫伺服器的前端。您造訪的其他任何網頁都會被拒絕，因此無法使用您的模型。多個之間以空格分隔。</translation>
    </message>
    <message>
        <source>none (e.g. my-pc.local)</source>
        <translation>無（例如 my-pc.local）</translation>
    </message>
    <message>
        <source>Requests must be addressed to this computer by a name it knows (localhost, its addresses). Add a name you use for it, such as a proxy&apos;s. Separate several with spaces.</source>
        <translation>請求必須以這台電腦認得的名稱傳送（localhost、它的位址）。可在此加入您用來稱呼它的名稱，例如代理伺服器的名稱。多個之間以空格分隔。</translation>
    </message>
    <message>
        <source>Fetch pictures that requests give by web address</source>
        <translation>下載請求中以網址給出的圖片</translation>
    </message>
    <message>
        <source>Off: requests send their pictures as data URLs, or as files on this computer when it serves this computer only. On: the server downloads any http(s) address a request names, so a request can make it connect anywhere.</source>
        <translation>關閉時：請求以 data URL 傳送圖片；只為本機提供服務時也可用本機檔案。開啟時：伺服器會下載請求給出的任何 http(s) 位址，因此一個請求可以讓它連線到任何地方。</translation>
    </message>
    <message>
        <source>any free port</source>
        <translation>任意可用連接埠</translation>
    </message>
    <message>
        <source>0 takes any free port</source>
        <translation>0 表示使用任意可用連接埠</translation>
    </message>
    <message>
        <source>Start</source>
        <translation>啟動</translation>
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
        <source>Model:</source>
        <translation>模型：</translation>
    </message>
    <message>
        <source>Who can connect:</source>
        <translation>誰可以連線：</translation>
    </message>
    <message>
        <source>Port:</source>
        <translation>連接埠：</translation>
    </message>
    <message>
        <source>Web pages that may use it:</source>
        <translation>允許使用它的網頁：</translation>
    </message>
    <message>
        <source>Other names for this computer:</source>
        <translation>這台電腦的其他名稱：</translation>
    </message>
    <message>
        <source>Connect</source>
        <translation>連線</translation>
    </message>
    <message>
        <source>Base URL:</source>
        <translation>基礎 URL：</translation>
    </message>
    <message>
        <source>Model name:</source>
        <translation>模型名稱：</translation>
    </message>
    <message>
        <source>API key:</source>
        <translation>API 金鑰：</translation>
    </message>
    <message>
        <source>Requests appear here as they are answered.</source>
        <translation>請求被回答後會顯示在這裡。</translation>
    </message>
    <message>
        <source>Requests:</source>
        <translation>請求：</translation>
    </message>
    <message>
        <source>{value} is not a web page&apos;s origin: write it as scheme://host:port, e.g. http://localhost:3000 (no path).</source>
        <translation>{value} 不是網頁的來源（origin）：請寫成 scheme://host:port，例如 http://localhost:3000（不含路徑）。</translation>
    </message>
    <message>
        <source>Starting the server…</source>
        <translation>正在啟動服務…</translation>
    </message>
    <message>
        <source>Stopping…</source>
        <translation>正在停止…</translation>
    </message>
    <message>
        <source>A new API key was made: it is shown when the server starts.</source>
        <translation>已產生新的 API 金鑰：服務啟動時會顯示它。</translation>
    </message>
    <message>
        <source>Shown this once; it is kept in your OS keyring.</source>
        <translation>僅顯示這一次；它保存在系統金鑰圈中。</translation>
    </message>
    <message>
        <source>Shown this once; it is not kept (no OS keyring): a new key is made at each start.</source>
        <translation>僅顯示這一次；它不會被保存（沒有系統金鑰圈）：每次啟動都會產生新的金鑰。</translation>
    </message>
    <message>
        <source>It is used from the next start.</source>
        <translation>它從下次啟動起生效。</translation>
    </message>
    <message>
        <source>Loading the model…</source>
        <translation>正在載入模型…</translation>
    </message>
    <message>
        <source>Serving at {url}</source>
        <translation>正在 {url} 提供服務</translation>
    </message>
    <message>
        <source>Requests need the API key shown when it was made; if it is lost, New key makes another for the next start.</source>
        <translation>請求需要產生時顯示的那個 API 金鑰；如果遺失了，用「新金鑰」為下次啟動再產生一個。</translation>
    </message>
    <message>
        <source>The examples read the key from the environment variable {env}: set it first.</source>
        <translation>範例從環境變數 {env} 讀取金鑰：請先設定它。</translation>
    </message>
    <message>
        <source>From other computers: {urls}</source>
        <translation>從其他電腦存取：{urls}</translation>
    </message>
    <message>
        <source>Other computers use this computer&apos;s address in place of 127.0.0.1.</source>
        <translation>其他電腦請用本機的位址代替 127.0.0.1。</translation>
    </message>
    <message>
        <source>{method} {path} {status} {seconds:.2f} s</source>
        <translation>{method} {path} {status} {seconds:.2f} 秒</translation>
    </message>
    <message>
        <source>Stopped: the page now shows another model. Start to serve it.</source>
        <translation>已停止：頁面現在顯示的是另一個模型。按「啟動」來提供它。</translation>
    </message>
    <message>
        <source>Stopped — the GPU memory is free again.</source>
        <translation>已停止——GPU 記憶體已釋放。</translation>
    </message>
    <message>
        <source>Stopped — the model&apos;s memory is free again.</source>
        <translation>已停止——模型占用的記憶體已釋放。</translation>
    </message>
</context>
<context>
    <name>SetupWindow</name>
    <message>
        <source>Finetune Studio: setting up</source>
        <translation>Finetune Studio：正在安裝</translation>
    </message>
    <message>
        <source>Installing PyTorch {requirement}. The PyTorch you have keeps working until the new one is complete.</source>
        <translation>正在安裝 PyTorch {requirement}。新的裝好之前，現有的 PyTorch 照常可用。</translation>
    </message>
    <message>
        <source>Setting up Finetune Studio. This happens once and takes a few minutes.</source>
        <translation>正在安裝 Finetune Studio 的執行環境。只需安裝一次，需要幾分鐘。</translation>
    </message>
    <message>
        <source>Repairing Finetune Studio&apos;s runtime.</source>
        <translation>正在修復 Finetune Studio 的執行環境。</translation>
    </message>
    <message>
        <source>Updating Finetune Studio to version {version}.</source>
        <translation>正在把 Finetune Studio 更新到 {version} 版。</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>詳細資訊</translation>
    </message>
    <message>
        <source>https://pypi.tuna.tsinghua.edu.cn/simple (optional)</source>
        <translation>https://pypi.tuna.tsinghua.edu.cn/simple（選填）</translation>
    </message>
    <message>
        <source>https://download.pytorch.org/whl/cu126 or a mirror of it (optional)</source>
        <translation>https://download.pytorch.org/whl/cu126 或其鏡像（選填）</translation>
    </message>
    <message>
        <source>https://registry.npmmirror.com/-/binary/python-build-standalone (optional)</source>
        <translation>https://registry.npmmirror.com/-/binary/python-build-standalone（選填）</translation>
    </message>
    <message>
        <source>http://proxy.example.com:8080 (optional)</source>
        <translation>http://proxy.example.com:8080（選填）</translation>
    </message>
    <message>
        <source>Package mirror:</source>
        <translation>套件鏡像站：</translation>
    </message>
    <message>
        <source>PyTorch mirror:</source>
        <translation>PyTorch 鏡像站：</translation>
    </message>
    <message>
        <source>Python mirror:</source>
        <translation>Python 鏡像站：</translation>
    </message>
    <message>
        <source>Proxy:</source>
        <translation>代理伺服器：</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Try again</source>
        <translation>重試</translation>
    </message>
    <message>
        <source>Copy log</source>
        <translation>複製記錄</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>關閉</translation>
    </message>
    <message>
        <source>Change…</source>
        <translation>變更…</translation>
    </message>
    <message>
        <source>Another drive, if this one is small: the runtime, runs and downloaded models go there</source>
        <translation>如果這個磁碟空間小，可以換一個：執行環境、訓練記錄和下載的模型都會放在那裡</translation>
    </message>
    <message>
        <source>Data folder:</source>
        <translation>資料資料夾：</translation>
    </message>
    <message>
        <source>Install</source>
        <translation>安裝</translation>
    </message>
    <message>
        <source>It needs about 3 GB of space (about 10 GB with an NVIDIA GPU) in the data folder below.</source>
        <translation>需要在下面的資料資料夾中佔用約 3 GB 空間（有 NVIDIA GPU 時約 10 GB）。</translation>
    </message>
    <message>
        <source>Put the data folder in</source>
        <translation>把資料資料夾放在</translation>
    </message>
    <message>
        <source>The data folder could not be moved: {error}</source>
        <translation>無法移動資料資料夾：{error}</translation>
    </message>
    <message>
        <source>Setting up Python…</source>
        <translation>正在準備 Python……</translation>
    </message>
    <message>
        <source>Installing PyTorch (the largest part)…</source>
        <translation>正在安裝 PyTorch（最大的一部分）……</translation>
    </message>
    <message>
        <source>Installing torchvision / torchaudio for this PyTorch…</source>
        <translation>正在安裝與此 PyTorch 配套的 torchvision / torchaudio…</translation>
    </message>
    <message>
        <source>Putting the new PyTorch in place (once every Finetune Studio window has closed)…</source>
        <translation>正在換上新的 PyTorch（等所有 Finetune Studio 視窗關閉後）…</translation>
    </message>
    <message>
        <source>Installing Finetune Studio and its libraries…</source>
        <translation>正在安裝 Finetune Studio 及其相依函式庫……</translation>
    </message>
    <message>
        <source>Installing the sample model…</source>
        <translation>正在安裝範例模型……</translation>
    </message>
    <message>
        <source>Checking PyTorch…</source>
        <translation>正在檢查 PyTorch……</translation>
    </message>
    <message>
        <source>Checking the installation…</source>
        <translation>正在檢查安裝……</translation>
    </message>
    <message>
        <source>Tidying the download cache…</source>
        <translation>正在清理下載快取…</translation>
    </message>
    <message>
        <source>Ready. Starting Finetune Studio…</source>
        <translation>準備就緒，正在啟動 Finetune Studio……</translation>
    </message>
    <message>
        <source>PyTorch was not replaced</source>
        <translation>PyTorch 未被替換</translation>
    </message>
    <message>
        <source>The PyTorch you had is unchanged: Finetune Studio starts with it when you close this.</source>
        <translation>原有的 PyTorch 沒有變動：關閉此視窗後，Finetune Studio 用它啟動。</translation>
    </message>
    <message>
        <source>Setup did not finish</source>
        <translation>安裝沒有完成</translation>
    </message>
    <message>
        <source>Nothing half-made will be used: the next start repairs it, or try again now.</source>
        <translation>未裝完的內容不會被使用：下次啟動時會自動修復，你也可以現在重試。</translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation>正在取消……</translation>
    </message>
</context>
<context>
    <name>SpillBarWidget</name>
    <message>
        <source>Stop and fit my GPU</source>
        <translation>停止並依我的 GPU 調整</translation>
    </message>
    <message>
        <source>Turn the fallback off…</source>
        <translation>關閉記憶體後援…</translation>
    </message>
    <message>
        <source>Windows is moving this run&apos;s GPU memory into shared system memory: the card is full, and the steps are now {slowdown:.0f} times slower than at the start. Use less memory, or turn the fallback off so that the run stops with a clear out-of-memory error instead.</source>
        <translation>Windows 正在把這次訓練的顯示記憶體移到共用系統記憶體中：顯示卡已滿，現在每一步比開始時慢 {slowdown:.0f} 倍。請減少顯示記憶體用量，或者關閉記憶體後援，讓訓練在顯示記憶體不足時明確報錯停止。</translation>
    </message>
    <message>
        <source>Windows is moving this run&apos;s GPU memory into shared system memory: PyTorch holds more than the card&apos;s {total:.1f} GB, so every step waits for system RAM. Use less memory, or turn the fallback off so that the run stops with a clear out-of-memory error instead.</source>
        <translation>Windows 正在把這次訓練的顯示記憶體移到共用系統記憶體中：PyTorch 佔用的顯示記憶體超過了顯示卡的 {total:.1f} GB，每一步都要等待系統記憶體。請減少顯示記憶體用量，或者關閉記憶體後援，讓訓練在顯示記憶體不足時明確報錯停止。</translation>
    </message>
    <message>
        <source>Turn the fallback off</source>
        <translation>關閉記憶體後援</translation>
    </message>
    <message>
        <source>1. Open the NVIDIA Control Panel (right-click the desktop).
2. 3D Settings › Manage 3D settings › Program Settings › Add, and choose:
{programs}
3. Set &quot;CUDA - Sysmem Fallback Policy&quot; to &quot;Prefer No Sysmem Fallback&quot; and Apply.

A run that needs more memory than the card has then stops with an out-of-memory error, which the app explains and offers to fix, instead of slowing down.</source>
        <translation>1. 開啟 NVIDIA 控制面板（在桌面上按右鍵）。
2. 3D 設定 › 管理 3D 設定 › 程式設定 › 新增，選擇：
{programs}
3. 將「CUDA - 系統記憶體後援原則」（CUDA - Sysmem Fallback Policy）設為「偏好不使用系統記憶體後援」（Prefer No Sysmem Fallback），然後按套用。

之後，需要的顯示記憶體超過顯示卡容量的訓練會以顯示記憶體不足的錯誤停止（應用程式會說明原因並提供修正方法），而不是變慢。</translation>
    </message>
    <message>
        <source>Open the NVIDIA Control Panel</source>
        <translation>開啟 NVIDIA 控制面板</translation>
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
        <translation>詞元/秒</translation>
    </message>
</context>
<context>
    <name>TokenStatsWidget</name>
    <message>
        <source>Token lengths</source>
        <translation>詞元長度</translation>
    </message>
    <message>
        <source>Token lengths appear once the model and data are loaded.</source>
        <translation>載入模型和資料後，這裡會顯示各筆資料的詞元長度。</translation>
    </message>
    <message>
        <source>Loading the tokenizer…</source>
        <translation>正在載入分詞器…</translation>
    </message>
    <message>
        <source>{name}: min {min}, median {median}, 95% {p95}, max {max} tokens; {over} of {count} longer than the limit ({limit}) and cut</source>
        <translation>{name}：最短 {min}，中位數 {median}，95% 為 {p95}，最長 {max} 個詞元；{count} 筆中有 {over} 筆超過上限（{limit}）並被截斷</translation>
    </message>
    <message>
        <source>Padding at batch size {batch}: a few tokens a row, as batches are padding-free ({shuffled:.0%} of the tokens if they were padded).</source>
        <translation>批次大小為 {batch} 時的填充：批次無填充，每列只有幾個填充詞元（若以填充方式組批，將占 {shuffled:.0%} 的詞元）。</translation>
    </message>
    <message>
        <source>Padding at batch size {batch}: {shuffled:.0%} of the tokens (too few rows for batches grouped by length to differ).</source>
        <translation>批次大小為 {batch} 時的填充：占 {shuffled:.0%} 的詞元（列數太少，依長度分組也不會更少）。</translation>
    </message>
    <message>
        <source>Padding at batch size {batch}: {grouped:.0%} of the tokens, as batches are grouped by length ({shuffled:.0%} in shuffled batches).</source>
        <translation>批次大小為 {batch} 時的填充：占 {grouped:.0%} 的詞元，因為批次依長度分組（隨機組批時為 {shuffled:.0%}）。</translation>
    </message>
    <message>
        <source>Padding at batch size {batch}: {shuffled:.0%} of the tokens in shuffled batches ({grouped:.0%} grouped by length: Memory &amp; speed).</source>
        <translation>批次大小為 {batch} 時的填充：隨機組批時占 {shuffled:.0%} 的詞元（依長度分組時為 {grouped:.0%}：見「記憶體與速度」）。</translation>
    </message>
    <message>
        <source>Token lengths unavailable: {error}</source>
        <translation>無法取得詞元長度：{error}</translation>
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
        <source>If the GPU runs out of memory, the run goes on by itself with less memory (a smaller batch with the same effective batch first); every change is shown here.</source>
        <translation>如果顯示記憶體不足，訓練會自動改用更少顯示記憶體繼續（首先是更小的批次大小，等效批次大小不變）；每項變更都會顯示在這裡。</translation>
    </message>
    <message>
        <source>Advice: {advice}</source>
        <translation>建議：{advice}</translation>
    </message>
    <message>
        <source>step %v of %m</source>
        <translation>第 %v 步，共 %m 步</translation>
    </message>
    <message>
        <source>Resuming {run}.</source>
        <translation>正在繼續 {run}。</translation>
    </message>
    <message>
        <source>Ending the training process; the run keeps its last checkpoint…</source>
        <translation>正在結束訓練行程；訓練任務保留最後一個檢查點…</translation>
    </message>
    <message>
        <source>Stop now</source>
        <translation>立即停止</translation>
    </message>
    <message>
        <source>End the training process at once; the run resumes from its last checkpoint</source>
        <translation>立即結束訓練行程；訓練任務可以從最後一個檢查點繼續訓練</translation>
    </message>
    <message>
        <source>Stopping after this step and saving a checkpoint… Stop now ends it at once.</source>
        <translation>這一步結束後停止並儲存檢查點……「立即停止」會馬上結束。</translation>
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
        <source>Kept awake</source>
        <translation>保持喚醒</translation>
    </message>
    <message>
        <source>The computer stays awake while this run trains (the display may still turn off). Settings › Keep the computer awake while training.</source>
        <translation>訓練期間電腦不會進入睡眠（螢幕仍可能關閉）。設定 › 訓練時保持電腦喚醒。</translation>
    </message>
    <message>
        <source>Sleep would stop this run</source>
        <translation>睡眠會中斷本次訓練</translation>
    </message>
    <message>
        <source>This computer could not be kept awake: if it goes to sleep, the run stops there. For a long run, set its power settings not to sleep.</source>
        <translation>無法阻止這台電腦進入睡眠：如果它睡眠了，訓練會就此中斷。長時間訓練時，請在電源設定中關閉睡眠。</translation>
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
        <source>Training on {count} processes ({device}); progress from the first</source>
        <translation>在 {count} 個行程上訓練（{device}）；進度來自第一個行程</translation>
    </message>
    <message>
        <source>Run folder: {folder}. {train} training and {eval} evaluation examples, {steps} steps.</source>
        <translation>訓練任務資料夾：{folder}。{train} 個訓練樣本，{eval} 個評估樣本，共 {steps} 步。</translation>
    </message>
    <message>
        <source>Elapsed {elapsed}   ·   remaining about {eta}   ·   {speed} samples/s   ·   epoch {epoch:.2f}</source>
        <translation>已用時間 {elapsed}   ·   約剩 {eta}   ·   {speed} 樣本/秒   ·   {epoch:.2f} 輪</translation>
    </message>
    <message>
        <source>{tokens} tokens/s ({padding:.0%} of the compute on padding, {padded:.0%} if padded)</source>
        <translation>{tokens} 詞元/秒（{padding:.0%} 的運算花在填充上，若用填充方式則為 {padded:.0%}）</translation>
    </message>
    <message>
        <source>{tokens} tokens/s ({padding:.0%} of the compute on padding)</source>
        <translation>{tokens} 詞元/秒（{padding:.0%} 的運算花在填充上）</translation>
    </message>
    <message>
        <source>step {step}: {metrics}</source>
        <translation>第 {step} 步：{metrics}</translation>
    </message>
    <message>
        <source>reward accuracy {accuracy:.2f}, margin {margin:.3g}</source>
        <translation>獎勵準確率 {accuracy:.2f}，差值 {margin:.3g}</translation>
    </message>
    <message>
        <source>validation reward accuracy {accuracy:.2f}, margin {margin:.3g}</source>
        <translation>驗證集獎勵準確率 {accuracy:.2f}，差值 {margin:.3g}</translation>
    </message>
    <message>
        <source>Out of memory: going on with less memory…</source>
        <translation>顯示記憶體不足：正在改用更少顯示記憶體繼續…</translation>
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
</context>
<context>
    <name>TrainingPlotsWidget</name>
    <message>
        <source>Loss</source>
        <translation>損失</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>學習率</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>記憶體</translation>
    </message>
    <message>
        <source>Throughput</source>
        <translation>處理量</translation>
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
        <translation>驗證集</translation>
    </message>
    <message>
        <source>learning rate</source>
        <translation>學習率</translation>
    </message>
    <message>
        <source>VRAM allocated</source>
        <translation>GPU 已配置</translation>
    </message>
    <message>
        <source>VRAM reserved</source>
        <translation>GPU 已保留</translation>
    </message>
    <message>
        <source>process RAM</source>
        <translation>行程記憶體</translation>
    </message>
    <message>
        <source>GPU used, all processes (NVML)</source>
        <translation>GPU 已用（所有行程，NVML）</translation>
    </message>
    <message>
        <source>GPU total</source>
        <translation>GPU 總量</translation>
    </message>
    <message>
        <source>samples/s</source>
        <translation>樣本/秒</translation>
    </message>
    <message>
        <source>tokens/s</source>
        <translation>詞元/秒</translation>
    </message>
    <message>
        <source>Reward accuracy</source>
        <translation>獎勵準確率</translation>
    </message>
    <message>
        <source>Rewards</source>
        <translation>獎勵</translation>
    </message>
    <message>
        <source>reward</source>
        <translation>獎勵</translation>
    </message>
    <message>
        <source>log-prob.</source>
        <translation>對數機率</translation>
    </message>
    <message>
        <source>margin</source>
        <translation>差值</translation>
    </message>
    <message>
        <source>chosen</source>
        <translation>選中</translation>
    </message>
    <message>
        <source>rejected</source>
        <translation>被拒</translation>
    </message>
    <message>
        <source>eval margin</source>
        <translation>評估差值</translation>
    </message>
    <message>
        <source>log-prob. chosen</source>
        <translation>選中對數機率</translation>
    </message>
    <message>
        <source>log-prob. rejected</source>
        <translation>被拒對數機率</translation>
    </message>
    <message>
        <source>Reward</source>
        <translation>獎勵</translation>
    </message>
    <message>
        <source>Answers</source>
        <translation>回答</translation>
    </message>
    <message>
        <source>tokens</source>
        <translation>詞元數</translation>
    </message>
    <message>
        <source>mean reward</source>
        <translation>平均獎勵</translation>
    </message>
    <message>
        <source>spread</source>
        <translation>離散度</translation>
    </message>
    <message>
        <source>mean length</source>
        <translation>平均長度</translation>
    </message>
    <message>
        <source>in shared system memory</source>
        <translation>位於共用系統記憶體</translation>
    </message>
    <message>
        <source>GPU {index} used (NVML)</source>
        <translation>GPU {index} 已用（NVML）</translation>
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
        <translation>回覆的最大長度（詞元數）</translation>
    </message>
    <message>
        <source>0 always gives the most likely reply; higher is more varied</source>
        <translation>0 總是給出最可能的回覆；越大越多樣</translation>
    </message>
    <message>
        <source>Compare with the base model</source>
        <translation>與基礎模型比較</translation>
    </message>
    <message>
        <source>Use the chat template</source>
        <translation>使用對話範本</translation>
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
        <source>Fine-tuned</source>
        <translation>微調後</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>詳細資訊</translation>
    </message>
    <message>
        <source>Max new tokens:</source>
        <translation>最大新詞元數：</translation>
    </message>
    <message>
        <source>System prompt</source>
        <translation>系統提示詞</translation>
    </message>
    <message>
        <source>Show or hide the system prompt</source>
        <translation>顯示或隱藏系統提示詞</translation>
    </message>
    <message>
        <source>What the model is told before the conversation, e.g. “You are a helpful assistant.”</source>
        <translation>對話開始前告訴模型的話，例如「你是一個樂於助人的助理。」</translation>
    </message>
    <message>
        <source>Sent first, as the system message, with every request</source>
        <translation>作為系統訊息，在每個請求中最先傳送</translation>
    </message>
    <message>
        <source>Ctrl+Enter in the text box does the same</source>
        <translation>在文字方塊中按 Ctrl+Enter 效果相同</translation>
    </message>
    <message>
        <source>End the answer after the current token; what it said stays</source>
        <translation>在目前詞元之後結束回答；已說的內容會保留</translation>
    </message>
    <message>
        <source>Sample only from the likeliest words that together make up this share (1 = all)</source>
        <translation>只從合計占這個比例的最可能的詞中取樣（1 = 全部）</translation>
    </message>
    <message>
        <source>Send the whole conversation through the chat template, as the model was trained; off: each message is answered on its own</source>
        <translation>按模型訓練時的方式，把整個對話套用對話範本傳送；關閉時：每則訊息單獨回答</translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation>重新產生</translation>
    </message>
    <message>
        <source>Drop the last answer and ask again</source>
        <translation>捨棄最後一個回答並重新提問</translation>
    </message>
    <message>
        <source>Clear</source>
        <translation>清除</translation>
    </message>
    <message>
        <source>Start a new conversation (the system prompt stays)</source>
        <translation>開始新的對話（系統提示詞保留）</translation>
    </message>
    <message>
        <source>Temperature:</source>
        <translation>溫度：</translation>
    </message>
    <message>
        <source>Top-p:</source>
        <translation>Top-p：</translation>
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
        <source>image classification</source>
        <translation>影像分類</translation>
    </message>
    <message>
        <source>pictures and text</source>
        <translation>圖片與文字</translation>
    </message>
    <message>
        <source>Model: {folder}, {kind} (LoRA adapters on {base})</source>
        <translation>模型：{folder}，{kind}（以 {base} 為基礎的 LoRA 轉接器）</translation>
    </message>
    <message>
        <source>Model: {folder}, {kind}</source>
        <translation>模型：{folder}，{kind}</translation>
    </message>
    <message>
        <source>Answer with {model}, the model the run started from, beside the fine-tuned one</source>
        <translation>同時用訓練起點的模型 {model} 回答，與微調後的模型並排顯示</translation>
    </message>
    <message>
        <source>Base model ({model})</source>
        <translation>基礎模型（{model}）</translation>
    </message>
    <message>
        <source>Drop, paste or choose a picture; the model loads on first use.</source>
        <translation>拖入、貼上或選擇一張圖片；模型在首次使用時載入。</translation>
    </message>
    <message>
        <source>Give a picture, ask about it and press Send; the model loads on first use.</source>
        <translation>給出一張圖片，就它提問並按「傳送」；模型在首次使用時載入。</translation>
    </message>
    <message>
        <source>Type a text and press Try it; the model loads on first use.</source>
        <translation>輸入一段文字，然後按「試試看」；模型會在第一次使用時載入。</translation>
    </message>
    <message>
        <source>The conversation is kept: this model answers from the next message on; each answer shows the model that wrote it.</source>
        <translation>對話已保留：從下一則訊息起由這個模型回答；每則回答都標明了寫出它的模型。</translation>
    </message>
    <message>
        <source>A question about the picture (Ctrl+Enter sends)</source>
        <translation>關於這張圖片的問題（Ctrl+Enter 傳送）</translation>
    </message>
    <message>
        <source>Open a model folder</source>
        <translation>開啟模型資料夾</translation>
    </message>
    <message>
        <source>Drop, paste or choose a picture first.</source>
        <translation>請先拖入、貼上或選擇一張圖片。</translation>
    </message>
    <message>
        <source>Ask something about the picture, then press Send.</source>
        <translation>就這張圖片提個問題，然後按「傳送」。</translation>
    </message>
    <message>
        <source>pasted picture</source>
        <translation>貼上的圖片</translation>
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
        <source>Loading the base model…</source>
        <translation>正在載入基礎模型…</translation>
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
        <source>Base model: {label} ({probability:.1%})</source>
        <translation>基礎模型：{label}（{probability:.1%}）</translation>
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
        <source>Type a message and press Send; the model loads on first use.</source>
        <translation>輸入一則訊息並按「傳送」；模型會在第一次使用時載入。</translation>
    </message>
    <message>
        <source>Another kind of model: the conversation was cleared (your message is kept).</source>
        <translation>這是另一類模型：對話已清除（您輸入的訊息保留）。</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>傳送</translation>
    </message>
    <message>
        <source>A message; the whole conversation is sent (Ctrl+Enter sends)</source>
        <translation>一則訊息；會傳送整個對話（Ctrl+Enter 傳送）</translation>
    </message>
    <message>
        <source>A text to classify, e.g. a review (Ctrl+Enter sends)</source>
        <translation>要分類的文字，例如一則評論（Ctrl+Enter 傳送）</translation>
    </message>
    <message>
        <source>An instruction or a question (Ctrl+Enter sends)</source>
        <translation>一則指令或一個問題（Ctrl+Enter 傳送）</translation>
    </message>
    <message>
        <source>A text to transform, e.g. a sentence to translate (Ctrl+Enter sends)</source>
        <translation>要轉換的文字，例如要翻譯的句子（Ctrl+Enter 傳送）</translation>
    </message>
    <message>
        <source>A new conversation.</source>
        <translation>新的對話。</translation>
    </message>
    <message>
        <source>Working…</source>
        <translation>正在處理…</translation>
    </message>
    <message>
        <source>(none)</source>
        <translation>（無）</translation>
    </message>
    <message>
        <source>The answer is on the clipboard.</source>
        <translation>回答已複製到剪貼簿。</translation>
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
        <translation>請清出一些空間，刪除不再需要的模型（瀏覽模型 &gt; 本機已有），或把 HF_HOME / MODELSCOPE_CACHE 設到更大的磁碟上。</translation>
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
        <source>Not enough disk space for the checkpoint at step {step}: it needs about {needed} in {folder}, and {free} are free.</source>
        <translation>磁碟空間不足，無法儲存第 {step} 步的檢查點：{folder} 中約需 {needed}，只剩 {free} 可用。</translation>
    </message>
    <message>
        <source>Free some space (older runs in the runs folder are often large), then resume the run: it continues from its last checkpoint.</source>
        <translation>請先騰出一些空間（訓練任務資料夾中的舊任務通常很大），然後繼續訓練：它會從最後一個檢查點接著訓練。</translation>
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
        <translation>這個模型不認得你文字中的大部分字元：有 {share} 的詞元變成了未知詞元 {unknown}，因此它無法區分這些文字。請選擇針對你文字語言的模型，例如中文可用 bert-base-chinese 或 hfl/chinese-roberta-wwm-ext，也可以用 xlm-roberta-base 這類多語言模型。</translation>
    </message>
    <message>
        <source>Labels written differently but with the same value were merged into one class each: {labels}.</source>
        <translation>寫法不同但值相同的標籤已各自合併為一個類別：{labels}。</translation>
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
        <source>is {length}, but {model} reads at most {positions} tokens at once (its position table), so training would stop at its first step. Set it to {positions} or less.</source>
        <translation>為 {length}，但 {model} 一次最多只能讀取 {positions} 個詞元（由其位置表決定），訓練會在第一步就停止。請設為 {positions} 或更小。</translation>
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
        <translation>{model} 的分詞器只認得 {size} 個詞元：它的詞彙表檔案缺少或是空的，所有文字都會被讀成同樣的幾個詞元。</translation>
    </message>
    <message>
        <source>Pick a model folder with its complete tokenizer files (tokenizer.json or vocab.txt).</source>
        <translation>請選擇帶有完整分詞器檔案（tokenizer.json 或 vocab.txt）的模型資料夾。</translation>
    </message>
    <message>
        <source>{source}: the label column &quot;{column}&quot; has {classes} different values in {rows} rows; a classifier learns from many examples of each class.</source>
        <translation>{source}：標籤欄「{column}」在 {rows} 列中有 {classes} 個不同的值；分類器需要每個類別都有許多範例才能學會。</translation>
    </message>
    <message>
        <source>Check that columns.label names the column with the classes (now &quot;{column}&quot;).</source>
        <translation>請確認 columns.label 指向存放類別的欄位（目前為「{column}」）。</translation>
    </message>
    <message>
        <source>Train all {steps} steps</source>
        <translation>訓練全部 {steps} 步</translation>
    </message>
    <message>
        <source>is {accumulation}, but one pass over the {rows} training rows is only {batches} batches of {batch}; lower it to at most {batches} (or lower the batch size).</source>
        <translation>為 {accumulation}，但 {rows} 列訓練資料跑一遍只有 {batches} 個批次（每批 {batch} 筆）；請把它降到 {batches} 以下（或減小批次大小）。</translation>
    </message>
    <message>
        <source>Add training examples of those labels, or leave their rows out.</source>
        <translation>請為這些標籤新增訓練範例，或去掉這些列。</translation>
    </message>
    <message>
        <source>Add training examples of those labels, or use a random hold-out (validation.fraction).</source>
        <translation>請為這些標籤新增訓練範例，或改用隨機切分驗證集（validation.fraction）。</translation>
    </message>
    <message>
        <source>makes {steps} optimizer steps ({epochs} epochs of {rows} rows): at 10 steps a second that is {days} days. Lower the epochs; or, if you mean it, set training.max_steps to {count} (on the command line: --set training.max_steps={count}).</source>
        <translation>會產生 {steps} 個最佳化步（{epochs} 輪，每輪 {rows} 列）：按每秒 10 步算需要 {days} 天。請減少輪數；如果確實需要，請把 training.max_steps 設為 {count}（命令列：--set training.max_steps={count}）。</translation>
    </message>
    <message>
        <source>is {warmup} steps, but the whole run is {steps} steps: the learning rate would still be rising when it ends. Set it below {steps} steps, or as a fraction of the run (0.1 warms up over the first tenth).</source>
        <translation>為 {warmup} 步，但整個訓練只有 {steps} 步：訓練結束時學習率還在上升。請設為少於 {steps} 步，或設為訓練的比例（0.1 表示在前十分之一的步數內預熱）。</translation>
    </message>
    <message>
        <source>The evaluation rows have labels that never occur in training: {labels} and {more} more.</source>
        <translation>評估資料中有訓練資料裡從未出現的標籤：{labels} 等，另有 {more} 個。</translation>
    </message>
    <message>
        <source>The evaluation rows have labels that never occur in training: {labels}.</source>
        <translation>評估資料中有訓練資料裡從未出現的標籤：{labels}。</translation>
    </message>
    <message>
        <source>{source}: {count} rows have an empty text in column &quot;{column}&quot; ({rows}).</source>
        <translation>{source}：欄位「{column}」中有 {count} 列文字為空（{rows}）。</translation>
    </message>
    <message>
        <source>{source}: {count} rows have no chat conversation with an assistant reply in column &quot;{column}&quot; ({rows}).</source>
        <translation>{source}：欄位「{column}」中有 {count} 列沒有包含助理回覆的對話（{rows}）。</translation>
    </message>
    <message>
        <source>{source}: {count} rows have no label in column &quot;{column}&quot; ({rows}).</source>
        <translation>{source}：欄位「{column}」中有 {count} 列沒有標籤（{rows}）。</translation>
    </message>
    <message>
        <source>{source}: 1 row has an empty text in column &quot;{column}&quot; ({rows}).</source>
        <translation>{source}：欄位「{column}」中有 1 列文字為空（{rows}）。</translation>
    </message>
    <message>
        <source>lists of messages with &quot;role&quot; and &quot;content&quot;</source>
        <translation>由含「role」與「content」的訊息組成的清單</translation>
    </message>
    <message>
        <source>a label</source>
        <translation>一個標籤</translation>
    </message>
    <message>
        <source>text</source>
        <translation>文字</translation>
    </message>
    <message>
        <source>by name</source>
        <translation>依名稱</translation>
    </message>
    <message>
        <source>by content</source>
        <translation>依內容</translation>
    </message>
    <message>
        <source>from the config</source>
        <translation>來自設定</translation>
    </message>
    <message>
        <source>{role} &lt;- {column}  ({how})</source>
        <translation>{role} &lt;- {column}  （{how}）</translation>
    </message>
    <message>
        <source>{source}: no column was found for {roles} (columns: {columns}).</source>
        <translation>{source}：找不到對應 {roles} 的欄位（現有欄位：{columns}）。</translation>
    </message>
    <message>
        <source>Map the columns yourself, e.g. columns.{role} = &quot;&lt;column name&gt;&quot; in the config.</source>
        <translation>請自行指定欄位對應，例如在設定檔中寫 columns.{role} = &quot;&lt;欄位名稱&gt;&quot;。</translation>
    </message>
    <message>
        <source>Left out {bad} of {total} rows of {source} ({rows}).</source>
        <translation>已略過 {source} 的 {total} 列中的 {bad} 列（{rows}）。</translation>
    </message>
    <message>
        <source>{source}: 1 row has no chat conversation with an assistant reply in column &quot;{column}&quot; ({rows}).</source>
        <translation>{source}：欄位「{column}」中有 1 列沒有包含助理回覆的對話（{rows}）。</translation>
    </message>
    <message>
        <source>{source}: 1 row has no label in column &quot;{column}&quot; ({rows}).</source>
        <translation>{source}：欄位「{column}」中有 1 列沒有標籤（{rows}）。</translation>
    </message>
    <message>
        <source>{source}: the column &quot;{column}&quot; (mapped as {role}) is not in the data.</source>
        <translation>{source}：資料中沒有欄位「{column}」（對應為 {role}）。</translation>
    </message>
    <message>
        <source>Its columns are: {columns}. Pick one of them for columns.{role}.</source>
        <translation>現有的欄位：{columns}。請從中選一個作為 columns.{role}。</translation>
    </message>
    <message>
        <source>{source}: the column &quot;{column}&quot; ({role}) is empty in every row.</source>
        <translation>{source}：欄位「{column}」（{role}）在每一列都是空的。</translation>
    </message>
    <message>
        <source>{source}: every row has the label &quot;{label}&quot;; a classifier needs at least two classes.</source>
        <translation>{source}：每一列的標籤都是「{label}」；分類器至少需要兩個類別。</translation>
    </message>
    <message>
        <source>Add examples of the other classes, or check that columns.label is the right column.</source>
        <translation>請新增其他類別的範例，或檢查 columns.label 是否指向正確的欄位。</translation>
    </message>
    <message>
        <source>Map {role} to the column that holds the labels.</source>
        <translation>請把 {role} 對應到存放標籤的欄位。</translation>
    </message>
    <message>
        <source>Map {role} to the column that holds the texts.</source>
        <translation>請把 {role} 對應到存放文字的欄位。</translation>
    </message>
    <message>
        <source>{file} is UTF-8 except at {count} lines ({lines}), which hold text in another encoding (pasted from another file, perhaps).</source>
        <translation>{file} 是 UTF-8 編碼，但有 {count} 行（{lines}）是其他編碼的文字（可能是從別的檔案貼上過來的）。</translation>
    </message>
    <message>
        <source>Fix those lines (type them again, or copy them from a UTF-8 copy of their source), then retry.</source>
        <translation>請修正這些行（重新輸入，或從其來源的 UTF-8 副本中複製），然後重試。</translation>
    </message>
    <message>
        <source>{file} holds no data: none of its sheets ({sheets}) has a row of column names with rows below it.</source>
        <translation>{file} 中沒有資料：它的工作表（{sheets}）都沒有「欄名列加資料列」。</translation>
    </message>
    <message>
        <source>Put the data on one sheet, with the column names in its first row.</source>
        <translation>請把資料放在一個工作表中，第一列為欄名。</translation>
    </message>
    <message>
        <source>Save it from Excel as .xlsx (the first sheet with data is used, with a header row).</source>
        <translation>請在 Excel 中另存為 .xlsx（使用第一個有資料的工作表，需有標題列）。</translation>
    </message>
    <message>
        <source>{file} (sheet {sheet})</source>
        <translation>{file}（工作表 {sheet}）</translation>
    </message>
    <message>
        <source>Batches are padded: {model} would let each example of a padding-free batch see the one before it.</source>
        <translation>批次改為填充：{model} 在無填充批次中會讓每個範例看到它前面的範例。</translation>
    </message>
    <message>
        <source>{gpus} is too old for current PyTorch: no build has code for its architecture (compute capability {capability}), so training runs on the CPU.</source>
        <translation>{gpus} 對目前的 PyTorch 來說太舊了：沒有任何版本包含支援它的架構（計算能力 {capability}）的程式碼，因此訓練會在 CPU 上執行。</translation>
    </message>
    <message>
        <source>The CPU build is right for this machine. PyTorch&apos;s GPU builds start at Maxwell (GeForce GTX 900, compute capability 5.0); a newer GPU trains much faster.</source>
        <translation>這台電腦用 CPU 版本是正確的。PyTorch 的 GPU 版本從 Maxwell 架構（GeForce GTX 900，計算能力 5.0）起支援；換一張較新的 GPU 訓練會快得多。</translation>
    </message>
    <message>
        <source>{source} rejected the access token (it is wrong, expired or revoked).</source>
        <translation>{source} 拒絕了存取權杖（權杖錯誤、已過期或已被撤銷）。</translation>
    </message>
    <message>
        <source>Enter a new token in Settings &gt; Model sources, or remove it there to download public models without one; on the command line the token comes from {variable}.</source>
        <translation>請在「設定 &gt; 模型下載來源」中輸入新的權杖，或移除它以不帶權杖下載公開模型；在命令列中，權杖來自環境變數 {variable}。</translation>
    </message>
    <message>
        <source>{file} of {name} in the download cache does not match the hub&apos;s checksum.</source>
        <translation>下載快取中 {name} 的 {file} 與模型庫的檢查碼不一致。</translation>
    </message>
    <message>
        <source>It was not written by this download, so it was left where it is: delete {path} and download again.</source>
        <translation>它不是這次下載寫入的，因此保留原樣：請刪除 {path} 後重新下載。</translation>
    </message>
    <message>
        <source>Try again later, or switch the source (a mirror, or ModelScope); a proxy or an antivirus that changes downloads causes this too.</source>
        <translation>請稍後重試，或換一個下載來源（鏡像站或 ModelScope）；會修改下載內容的代理伺服器或防毒軟體也會導致這種情況。</translation>
    </message>
    <message>
        <source>{name} on {source} has no file {file}.</source>
        <translation>{source} 上的 {name} 沒有檔案 {file}。</translation>
    </message>
    <message>
        <source>The repository exists but lacks that file: check the revision, or pick another model.</source>
        <translation>該儲存庫存在，但缺少這個檔案：請檢查版本，或選擇其他模型。</translation>
    </message>
    <message>
        <source>Choose an empty or new folder, or replace it (on the command line: add --force).</source>
        <translation>請選擇一個空資料夾或新資料夾，或者取代它（命令列中加上 --force）。</translation>
    </message>
    <message>
        <source>GGUF export does not know the {architecture} architecture yet.</source>
        <translation>GGUF 匯出暫不支援 {architecture} 架構。</translation>
    </message>
    <message>
        <source>GGUF export does not carry this model&apos;s rope scaling ({kind}) yet.</source>
        <translation>GGUF 匯出暫不支援這個模型的 RoPE 縮放（{kind}）。</translation>
    </message>
    <message>
        <source>Export it as a folder: llama.cpp&apos;s own converter can turn that into GGUF.</source>
        <translation>請匯出為資料夾：llama.cpp 內建的轉換器可以把它轉成 GGUF。</translation>
    </message>
    <message>
        <source>GGUF export needs the model&apos;s tokenizer.json (a fast tokenizer).</source>
        <translation>GGUF 匯出需要模型的 tokenizer.json（快速分詞器）。</translation>
    </message>
    <message>
        <source>Unknown GGUF quantization {quant}; use f16 or q8_0.</source>
        <translation>未知的 GGUF 量化方式 {quant}；請使用 f16 或 q8_0。</translation>
    </message>
    <message>
        <source>Export it as a folder: transformers, and the app&apos;s Try it, load that.</source>
        <translation>請匯出為資料夾：transformers 和應用程式裡的「試一試」都能載入它。</translation>
    </message>
    <message>
        <source>Finish or resume the run first.</source>
        <translation>請先完成或繼續這次訓練。</translation>
    </message>
    <message>
        <source>{file} already exists.</source>
        <translation>{file} 已存在。</translation>
    </message>
    <message>
        <source>Choose another folder, or replace it (the app asks; on the command line: --force).</source>
        <translation>請選擇另一個資料夾，或取代它（應用程式會先詢問；命令列用 --force）。</translation>
    </message>
    <message>
        <source>The GGUF file needs about {needed}; {free} are free at {folder}.</source>
        <translation>GGUF 檔案約需 {needed}；{folder} 處只剩 {free}。</translation>
    </message>
    <message>
        <source>Free some space or choose a folder on another drive.</source>
        <translation>請清出一些空間，或選擇另一個磁碟上的資料夾。</translation>
    </message>
    <message>
        <source>Export it as a folder.</source>
        <translation>請匯出為資料夾。</translation>
    </message>
    <message>
        <source>{file} is in the way of the export.</source>
        <translation>{file} 擋住了這次匯出。</translation>
    </message>
    <message>
        <source>Delete it, or export to another folder.</source>
        <translation>請刪除它，或匯出到另一個資料夾。</translation>
    </message>
    <message>
        <source>SentencePiece-only tokenizers are not written as GGUF yet: export this one as a folder.</source>
        <translation>只有 SentencePiece 檔案的分詞器還不能寫成 GGUF：請把這個模型匯出為資料夾。</translation>
    </message>
    <message>
        <source>{model} cannot be used for reasoning with rewards: it is not a decoder model that writes text ({kind}), and GRPO teaches a chat model from the answers it writes.</source>
        <translation>{model} 不能用於獎勵推理訓練：它不是能產生文字的解碼器模型（{kind}），而 GRPO 是讓對話模型從自己寫出的回答中學習。</translation>
    </message>
    <message>
        <source>Fix that text, or save the whole file again as UTF-8 CSV, then try again.</source>
        <translation>請修正那些文字，或把整個檔案另存為 UTF-8 CSV，然後重試。</translation>
    </message>
    <message>
        <source>{file} is {encoding} except at {count} lines ({lines}), which hold text in another encoding (pasted from another file, perhaps).</source>
        <translation>{file} 除 {count} 行（{lines}）外都是 {encoding} 編碼；這些行是另一種編碼的文字（可能是從別的檔案貼上來的）。</translation>
    </message>
    <message>
        <source>{file} is {encoding} except at line {line}, which holds text in another encoding (pasted from another file, perhaps).</source>
        <translation>{file} 除第 {line} 行外都是 {encoding} 編碼；該行是另一種編碼的文字（可能是從別的檔案貼上來的）。</translation>
    </message>
    <message>
        <source>sample at step {step} ({scores}): {answer}</source>
        <translation>第 {step} 步的範例（{scores}）：{answer}</translation>
    </message>
    <message>
        <source>Fix the reward file, or turn the custom reward off.</source>
        <translation>請修正獎勵檔案，或關閉自訂獎勵。</translation>
    </message>
    <message>
        <source>answer</source>
        <translation>答案</translation>
    </message>
    <message>
        <source>format</source>
        <translation>格式</translation>
    </message>
    <message>
        <source>length</source>
        <translation>長度</translation>
    </message>
    <message>
        <source>language</source>
        <translation>語言</translation>
    </message>
    <message>
        <source>your reward</source>
        <translation>你的獎勵</translation>
    </message>
    <message>
        <source>{reward} {value}</source>
        <translation>{reward} {value}</translation>
    </message>
    <message>
        <source>The reward file {file} does not exist.</source>
        <translation>獎勵檔案 {file} 不存在。</translation>
    </message>
    <message>
        <source>{file} has no function reward(prompts, completions, **columns).</source>
        <translation>{file} 中沒有函式 reward(prompts, completions, **columns)。</translation>
    </message>
    <message>
        <source>Define it: it returns one number (or None) per completion.</source>
        <translation>請定義它：它為每個回答回傳一個數（或 None）。</translation>
    </message>
    <message>
        <source>{file}: reward() returned {got} instead of a list of {count} numbers.</source>
        <translation>{file}：reward() 回傳了 {got}，而不是包含 {count} 個數的清單。</translation>
    </message>
    <message>
        <source>{first}, {then}</source>
        <translation>{first}，{then}</translation>
    </message>
    <message>
        <source>{file}, line {line}: {reason}.</source>
        <translation>{file} 第 {line} 行：{reason}。</translation>
    </message>
    <message>
        <source>rows {rows}</source>
        <translation>第 {rows} 列</translation>
    </message>
    <message>
        <source>{source}: {count} pictures are missing ({rows}).</source>
        <translation>{source}：{count} 張圖片不存在（{rows}）。</translation>
    </message>
    <message>
        <source>{source}: {count} files are not pictures that can be read ({rows}).</source>
        <translation>{source}：{count} 個檔案不是可讀取的圖片（{rows}）。</translation>
    </message>
    <message>
        <source>{source}: {count} pictures are cut short (truncated) ({rows}).</source>
        <translation>{source}：{count} 張圖片不完整（被截斷）（{rows}）。</translation>
    </message>
    <message>
        <source>{source}: {count} pictures have CMYK or 16-bit pixels, which models read wrongly ({rows}).</source>
        <translation>{source}：{count} 張圖片是 CMYK 或 16 位元像素，模型會讀錯（{rows}）。</translation>
    </message>
    <message>
        <source>{source}: {count} pictures are very large (over 40 megapixels) ({rows}).</source>
        <translation>{source}：{count} 張圖片非常大（超過 4000 萬像素）（{rows}）。</translation>
    </message>
    <message>
        <source>Pick an image model such as ViT (google/vit-base-patch16-224-in21k), ConvNeXt (facebook/convnext-tiny-224) or ResNet (microsoft/resnet-50).</source>
        <translation>請選擇影像模型，例如 ViT（google/vit-base-patch16-224-in21k）、ConvNeXt（facebook/convnext-tiny-224）或 ResNet（microsoft/resnet-50）。</translation>
    </message>
    <message>
        <source>Fix the file; the rewards preview checks it again.</source>
        <translation>請修正該檔案；獎勵預覽會重新檢查它。</translation>
    </message>
    <message>
        <source>{file}: reward() returned {value!r}, which is not a number.</source>
        <translation>{file}：reward() 回傳了 {value!r}，它不是數。</translation>
    </message>
    <message>
        <source>has no group to take the answer from: write (?P&lt;answer&gt;...) around the answer.</source>
        <translation>沒有可取出答案的群組：請用 (?P&lt;answer&gt;...) 括住答案。</translation>
    </message>
    <message>
        <source>is not a valid regular expression: {reason}.</source>
        <translation>不是有效的正規表示式：{reason}。</translation>
    </message>
    <message>
        <source>With max length {length}, {dropped} of the first {measured} rows ({share}) will be left out: their prompt alone fills it, so no response is left to learn. A max length of {keep} keeps 95% of them.</source>
        <translation>最大長度為 {length} 時，前 {measured} 列中有 {dropped} 列（{share}）會被略去：僅提示就已占滿長度，沒有可學習的回答。最大長度 {keep} 可保留其中 95% 的列。</translation>
    </message>
    <message>
        <source>With max length {length}, {dropped} of {total} rows ({share}) will be left out: their prompt alone fills it, so no response is left to learn. A max length of {keep} keeps 95% of the rows.</source>
        <translation>最大長度為 {length} 時，{total} 列中有 {dropped} 列（{share}）會被略去：僅提示就已占滿長度，沒有可學習的回答。最大長度 {keep} 可保留 95% 的列。</translation>
    </message>
    <message>
        <source>Left out {count} rows of {source} without a readable prompt ({rows}).</source>
        <translation>已略過 {source} 中 {count} 列沒有可讀提示詞的資料（{rows}）。</translation>
    </message>
    <message>
        <source>No row of {source} holds a prompt.</source>
        <translation>{source} 中沒有一列含有提示詞。</translation>
    </message>
    <message>
        <source>Map columns.prompt to the column of questions (text, or lists of chat messages).</source>
        <translation>請把 columns.prompt 對應到問題所在的欄（文字，或對話訊息清單）。</translation>
    </message>
    <message>
        <source>Pick an image model such as ViT, ConvNeXt or ResNet.</source>
        <translation>請選擇影像模型，例如 ViT、ConvNeXt 或 ResNet。</translation>
    </message>
    <message>
        <source>{source} could not be reached: {problem}.</source>
        <translation>無法連線{source}：{problem}。</translation>
    </message>
    <message>
        <source>Check the network, then publish again; nothing was sent.</source>
        <translation>請檢查網路後再次發布；尚未上傳任何內容。</translation>
    </message>
    <message>
        <source>ModelScope could not be reached: {problem}.</source>
        <translation>無法連線 ModelScope：{problem}。</translation>
    </message>
    <message>
        <source>Check the network, then publish again; the client resumes what it had sent.</source>
        <translation>請檢查網路後再次發布；用戶端會從已上傳處繼續。</translation>
    </message>
    <message>
        <source>The run&apos;s adapter is damaged: {problem}.</source>
        <translation>這個訓練任務的適配器已損壞：{problem}。</translation>
    </message>
    <message>
        <source>Train the run again (a lower learning rate), or resume it from an earlier checkpoint.</source>
        <translation>請重新訓練（降低學習率），或從較早的檢查點繼續。</translation>
    </message>
    <message>
        <source>In fp16 the weight {tensor} of this model overflows (fp16 holds values up to 65504).</source>
        <translation>在 fp16 下，這個模型的權重 {tensor} 會溢位（fp16 最大只能表示 65504）。</translation>
    </message>
    <message>
        <source>Export in bf16 or fp32 instead.</source>
        <translation>請改用 bf16 或 fp32 匯出。</translation>
    </message>
    <message>
        <source>The run&apos;s model in {folder} is damaged: {problem}.</source>
        <translation>{folder} 中這個訓練任務的模型已損壞：{problem}。</translation>
    </message>
    <message>
        <source>GGUF export cannot place the tensor {key}.</source>
        <translation>GGUF 匯出無法安放張量 {key}。</translation>
    </message>
    <message>
        <source>{count} of {rows} rows could not be answered (no conversation with a question, or a picture missing, not a picture, cut short or too large); they have no answer: {where}.</source>
        <translation>{rows} 列中有 {count} 列無法作答（沒有含提問的對話，或圖片遺失、不是圖片、不完整或過大）；這些列沒有回答：{where}。</translation>
    </message>
    <message>
        <source>{count} of {rows} pictures could not be read (missing, not a picture, cut short or too large); their rows have no prediction: {where}.</source>
        <translation>{rows} 張圖片中有 {count} 張無法讀取（遺失、不是圖片、不完整或過大）；這些列沒有預測：{where}。</translation>
    </message>
    <message>
        <source>{file} has no rows to predict.</source>
        <translation>{file} 中沒有可預測的資料列。</translation>
    </message>
    <message>
        <source>Choose the file with the rows to predict: a header line, then one row per text.</source>
        <translation>請選擇包含待預測列的檔案：第一列是標題，之後每列一筆文字。</translation>
    </message>
    <message>
        <source>Check that the pictures are there (a file&apos;s paths are read from its own folder) and open in a picture viewer.</source>
        <translation>請檢查圖片是否存在（檔案中的路徑相對於該檔案所在的資料夾），並能在看圖軟體中開啟。</translation>
    </message>
    <message>
        <source>{file} is inside the run folder {run}, which holds the run&apos;s own record.</source>
        <translation>{file} 位於訓練記錄資料夾 {run} 內，該資料夾保存的是這次訓練自己的記錄。</translation>
    </message>
    <message>
        <source>Write the predictions outside it, e.g. {suggestion}.</source>
        <translation>請把預測結果寫到該資料夾之外，例如 {suggestion}。</translation>
    </message>
    <message>
        <source>Predictions cannot be written to {folder}: {error}</source>
        <translation>無法把預測結果寫入 {folder}：{error}</translation>
    </message>
    <message>
        <source>Choose an output file in a folder you can write to.</source>
        <translation>請把輸出檔案放在你有寫入權限的資料夾中。</translation>
    </message>
    <message>
        <source>{files} files in one commit, {sent} sent; {kept} of them ({kept_size}) were on the hub already and were not sent again.</source>
        <translation>一次提交 {files} 個檔案，上傳了 {sent}；其中 {kept} 個（{kept_size}）已在模型中心上，未重新上傳。</translation>
    </message>
    <message>
        <source>{files} files in one commit, {sent} sent.</source>
        <translation>一次提交 {files} 個檔案，上傳了 {sent}。</translation>
    </message>
    <message>
        <source>{before} classes -&gt; {now}: {what}</source>
        <translation>{before} 個類別 -&gt; {now} 個：{what}</translation>
    </message>
    <message>
        <source>{first}; {then}</source>
        <translation>{first}；{then}</translation>
    </message>
    <message>
        <source>The data&apos;s classes changed since this run started: {change}. Its checkpoints were trained for the old classes and cannot go on with these.</source>
        <translation>自本次執行開始以來，資料的類別變了：{change}。它的檢查點是按原來的類別訓練的，無法在這些類別上繼續。</translation>
    </message>
    <message>
        <source>Put the data the run started with back to resume it (nothing was changed in the run), or start a new run on this data.</source>
        <translation>把執行開始時的資料放回去即可繼續訓練（執行本身沒有任何變動），或用這份資料開始新的執行。</translation>
    </message>
    <message>
        <source>The data changed since this run started: {changes}.</source>
        <translation>自本次執行開始以來，資料變了：{changes}。</translation>
    </message>
    <message>
        <source>Resume on the new data (in the app: the button below; on the command line: add --new-data), or start a new run on it. The run&apos;s checkpoints are kept either way.</source>
        <translation>在新資料上繼續訓練（應用程式中：按下面的按鈕；命令列：加上 --new-data），或用它開始新的執行。兩種方式都會保留本次執行的檢查點。</translation>
    </message>
    <message>
        <source>{labels} was added</source>
        <translation>新增了 {labels}</translation>
    </message>
    <message>
        <source>{labels} was removed</source>
        <translation>刪除了 {labels}</translation>
    </message>
    <message>
        <source>the dataset is {now}, was {before}</source>
        <translation>資料集現在是 {now}，原來是 {before}</translation>
    </message>
    <message>
        <source>training rows</source>
        <translation>訓練列數</translation>
    </message>
    <message>
        <source>evaluation rows</source>
        <translation>評估列數</translation>
    </message>
    <message>
        <source>{file} was added</source>
        <translation>新增了 {file}</translation>
    </message>
    <message>
        <source>{what}: {before} -&gt; {now}</source>
        <translation>{what}：{before} -&gt; {now}</translation>
    </message>
    <message>
        <source>{file} is no longer used</source>
        <translation>不再使用 {file}</translation>
    </message>
    <message>
        <source>{file} was edited</source>
        <translation>{file} 被修改過</translation>
    </message>
    <message>
        <source>Hub id (&quot;bert-base-uncased&quot;), a local folder, or &quot;bundled:all-minilm-l6-v2&quot;.</source>
        <translation>Hub 上的 ID（如「bert-base-uncased」）、本機資料夾，或「bundled:all-minilm-l6-v2」。</translation>
    </message>
    <message>
        <source>Hub branch, tag or commit; empty for the default branch.</source>
        <translation>Hub 上的分支、標記或提交；留空表示預設分支。</translation>
    </message>
    <message>
        <source>Run Python code shipped with the model. Only for models you trust.</source>
        <translation>執行模型附帶的 Python 程式碼。只對你信任的模型開啟。</translation>
    </message>
    <message>
        <source>A dataset on the hub, e.g. &quot;imdb&quot; (instead of files).</source>
        <translation>Hub 上的資料集，例如「imdb」（取代本機檔案）。</translation>
    </message>
    <message>
        <source>The hub dataset&apos;s configuration (subset), if it has several.</source>
        <translation>Hub 資料集的組態（子集），如果有多個的話。</translation>
    </message>
    <message>
        <source>The hub dataset&apos;s split to train on.</source>
        <translation>用於訓練的 Hub 資料集分割（split）。</translation>
    </message>
    <message>
        <source>Classification: labels that differ only in case (&quot;Positive&quot;, &quot;positive&quot;) are one class, named as most rows write it.</source>
        <translation>分類：只有大小寫不同的標籤（&quot;Positive&quot;、&quot;positive&quot;）視為同一類，名稱取多數列的寫法。</translation>
    </message>
    <message>
        <source>Text to classify, or plain text for causal-LM training.</source>
        <translation>要分類的文字，或用於因果語言模型訓練的純文字。</translation>
    </message>
    <message>
        <source>Optional second text for sentence-pair classification.</source>
        <translation>句對分類的第二段文字（選填）。</translation>
    </message>
    <message>
        <source>Class label (text or integer).</source>
        <translation>類別標籤（文字或整數）。</translation>
    </message>
    <message>
        <source>Alpaca-style instruction.</source>
        <translation>Alpaca 格式的指令。</translation>
    </message>
    <message>
        <source>Alpaca-style optional input.</source>
        <translation>Alpaca 格式的選填輸入。</translation>
    </message>
    <message>
        <source>Alpaca-style answer.</source>
        <translation>Alpaca 格式的回答。</translation>
    </message>
    <message>
        <source>Chat conversations: lists of messages with &quot;role&quot; and &quot;content&quot;.</source>
        <translation>對話：由含「role」與「content」的訊息組成的清單。</translation>
    </message>
    <message>
        <source>Completion for the prompt.</source>
        <translation>提示詞的接續內容。</translation>
    </message>
    <message>
        <source>Sequence-to-sequence input.</source>
        <translation>序列到序列的輸入。</translation>
    </message>
    <message>
        <source>Sequence-to-sequence output.</source>
        <translation>序列到序列的輸出。</translation>
    </message>
    <message>
        <source>Reasoning (GRPO): the reference answer the rewards check the model&apos;s final answer against.</source>
        <translation>推理（GRPO）：獎勵用來核對模型最終答案的參考答案。</translation>
    </message>
    <message>
        <source>An existing split of the hub dataset, e.g. &quot;validation&quot;.</source>
        <translation>Hub 資料集中已有的分割，例如「validation」。</translation>
    </message>
    <message>
        <source>Separate local validation file(s).</source>
        <translation>獨立的本機驗證集檔案。</translation>
    </message>
    <message>
        <source>Otherwise hold out this fraction of the training data (0 = no evaluation).</source>
        <translation>否則從訓練資料中保留這個比例作為驗證集（0 = 不評估）。</translation>
    </message>
    <message>
        <source>Seed for the random hold-out.</source>
        <translation>隨機切分驗證集的種子。</translation>
    </message>
    <message>
        <source>Passes over the training data.</source>
        <translation>訓練資料要跑幾遍。</translation>
    </message>
    <message>
        <source>Stop after this many optimizer steps; 0 = use epochs.</source>
        <translation>最佳化器跑完這麼多步後停止；0 = 依輪數。</translation>
    </message>
    <message>
        <source>Peak learning rate.</source>
        <translation>學習率峰值。</translation>
    </message>
    <message>
        <source>Warm-up: a fraction of all steps (&lt; 1) or a number of steps.</source>
        <translation>暖機：佔總步數的比例（&lt; 1）或步數。</translation>
    </message>
    <message>
        <source>AdamW weight decay.</source>
        <translation>AdamW 權重衰減。</translation>
    </message>
    <message>
        <source>Examples per device and step.</source>
        <translation>每個裝置每步的範例數。</translation>
    </message>
    <message>
        <source>Steps whose gradients add up before one update.</source>
        <translation>累積多少步的梯度再更新一次參數。</translation>
    </message>
    <message>
        <source>Longest sequence in tokens; longer examples are truncated.</source>
        <translation>最長序列（詞元數）；更長的範例會被截斷。</translation>
    </message>
    <message>
        <source>Evaluate every N steps; 0 = once per epoch.</source>
        <translation>每 N 步評估一次；0 = 每輪一次。</translation>
    </message>
    <message>
        <source>Save a checkpoint every N steps; 0 = once per epoch.</source>
        <translation>每 N 步儲存一個檢查點；0 = 每輪一次。</translation>
    </message>
    <message>
        <source>Log loss and learning rate every N steps.</source>
        <translation>每 N 步記錄一次損失與學習率。</translation>
    </message>
    <message>
        <source>Random seed for model initialisation and data order.</source>
        <translation>模型初始化與資料順序的隨機種子。</translation>
    </message>
    <message>
        <source>auto (bf16 where the GPU has it, fp16 on older GPUs, fp32 on CPU), fp32, fp16 or bf16.</source>
        <translation>auto（GPU 支援時用 bf16，較舊的 GPU 用 fp16，CPU 上用 fp32）、fp32、fp16 或 bf16。</translation>
    </message>
    <message>
        <source>Recompute activations in the backward pass: much less memory, about 20% slower.</source>
        <translation>在反向傳播時重新計算激活值：省下大量顯示記憶體，約慢 20%。</translation>
    </message>
    <message>
        <source>Pin batches in page-locked RAM for faster copies to the GPU.</source>
        <translation>把批次固定在鎖頁記憶體中，更快地複製到 GPU。</translation>
    </message>
    <message>
        <source>Processes preparing batches; 0 = in the training process (safest, and right on Windows).</source>
        <translation>準備批次的行程數；0 = 在訓練行程內準備（最穩妥，Windows 上應選它）。</translation>
    </message>
    <message>
        <source>Return cached GPU memory every N steps (lower peak, slower); 0 = never.</source>
        <translation>每 N 步釋放一次快取的顯示記憶體（峰值更低，但更慢）；0 = 從不。</translation>
    </message>
    <message>
        <source>Compile the model with torch.compile (faster steps after a slow start).</source>
        <translation>用 torch.compile 編譯模型（開頭較慢，之後每步更快）。</translation>
    </message>
    <message>
        <source>Attention kernel: auto, sdpa, eager or flash_attention_2.</source>
        <translation>注意力實作：auto、sdpa、eager 或 flash_attention_2。</translation>
    </message>
    <message>
        <source>Fused GPU kernels from liger-kernel (cross-entropy fused with the output layer, RMSNorm, RoPE, SwiGLU) for Llama, Qwen, Mistral, Gemma and Phi-3 models: faster steps, and the output layer&apos;s logits are never held whole (far less memory for large vocabularies). NVIDIA GPU with Triton.</source>
        <translation>liger-kernel 提供的融合 GPU 核心（與輸出層融合的交叉熵、RMSNorm、RoPE、SwiGLU），適用於 Llama、Qwen、Mistral、Gemma 和 Phi-3 模型：每步更快，輸出層的 logits 從不完整保存（詞表大時省下大量顯示記憶體）。需要帶 Triton 的 NVIDIA GPU。</translation>
    </message>
    <message>
        <source>Causal LM: put a batch&apos;s examples one after another in one row instead of padding each to the longest, so no compute goes to padding; position ids restart at each example, so none sees another. The run pads instead where the model cannot keep them apart.</source>
        <translation>因果語言模型：把一個批次的範例首尾相接放在一列裡，而不是都填充到最長的那筆，運算不浪費在填充上；位置編號在每個範例處重新開始，範例之間互不可見。模型做不到這一點時，訓練改用填充。</translation>
    </message>
    <message>
        <source>Train LoRA adapters instead of every weight.</source>
        <translation>只訓練 LoRA 轉接器，而不是全部權重。</translation>
    </message>
    <message>
        <source>Adapter rank r: more is more capacity and memory.</source>
        <translation>轉接器的秩 r：越大容量越大，也越佔記憶體。</translation>
    </message>
    <message>
        <source>Adapter scaling alpha (often 2 x rank).</source>
        <translation>轉接器縮放係數 alpha（通常為秩的 2 倍）。</translation>
    </message>
    <message>
        <source>Dropout on the adapters.</source>
        <translation>轉接器上的 dropout。</translation>
    </message>
    <message>
        <source>Linear layers to adapt; empty = all linear layers.</source>
        <translation>要加轉接器的線性層；留空 = 所有線性層。</translation>
    </message>
    <message>
        <source>QLoRA: keep the frozen base model in 4 bits (bitsandbytes, CUDA GPU): about 1/8 of its memory.</source>
        <translation>QLoRA：以 4 位元精度保存凍結的基礎模型（需要 bitsandbytes 與 CUDA GPU）：只佔約 1/8 的顯示記憶體。</translation>
    </message>
    <message>
        <source>The system prompt each prompt is asked with; it should state the format the rewards check.</source>
        <translation>每個提示詞附帶的系統提示詞；應說明獎勵所檢查的格式。</translation>
    </message>
    <message>
        <source>How the final answer is compared with the answer column: text (normalised), number (within the tolerance), label (one of labels) or none.</source>
        <translation>最終答案與答案欄的比較方式：text（正規化後的文字）、number（容差內的數值）、label（labels 之一）或 none。</translation>
    </message>
    <message>
        <source>Weight of the answer reward (0 = off).</source>
        <translation>答案獎勵的權重（0 = 關閉）。</translation>
    </message>
    <message>
        <source>Numbers: the relative difference still counted equal.</source>
        <translation>數值：仍視為相等的相對差異。</translation>
    </message>
    <message>
        <source>Labels: the answers allowed (empty = any).</source>
        <translation>標籤：允許的答案（留空 = 任意）。</translation>
    </message>
    <message>
        <source>Where the final answer is: &quot;answer-line&quot; (a last line &quot;Answer: X&quot;), &quot;think&quot; (&lt;think&gt;...&lt;/think&gt; then the answer), &quot;boxed&quot; (a LaTeX box around the answer), or a regular expression with a group (?P&lt;answer&gt;...).</source>
        <translation>最終答案的位置：&quot;answer-line&quot;（最後一行「Answer: X」）、&quot;think&quot;（&lt;think&gt;...&lt;/think&gt; 之後的答案）、&quot;boxed&quot;（LaTeX 方框中的答案），或含群組 (?P&lt;answer&gt;...) 的正規表示式。</translation>
    </message>
    <message>
        <source>Weight of the format reward (0 = off).</source>
        <translation>格式獎勵的權重（0 = 關閉）。</translation>
    </message>
    <message>
        <source>Length reward: the fewest characters (0 = no lower bound).</source>
        <translation>長度獎勵：最少字元數（0 = 無下限）。</translation>
    </message>
    <message>
        <source>Length reward: the most characters (0 = no upper bound).</source>
        <translation>長度獎勵：最多字元數（0 = 無上限）。</translation>
    </message>
    <message>
        <source>Weight of the length reward (0 = off).</source>
        <translation>長度獎勵的權重（0 = 關閉）。</translation>
    </message>
    <message>
        <source>Weight of the reward for answering in the prompt&apos;s language (0 = off).</source>
        <translation>用提示詞的語言回答的獎勵權重（0 = 關閉）。</translation>
    </message>
    <message>
        <source>A Python file with reward(prompts, completions, **columns): your own reward, run in the training process (it is your code: use only files you trust).</source>
        <translation>含有 reward(prompts, completions, **columns) 的 Python 檔案：你自己的獎勵，在訓練程序中執行（這是你的程式碼：只使用你信任的檔案）。</translation>
    </message>
    <message>
        <source>Weight of your reward.</source>
        <translation>你的獎勵的權重。</translation>
    </message>
    <message>
        <source>Answers written per prompt and compared with each other (batch size x gradient accumulation must be a multiple of it).</source>
        <translation>每個提示詞產生並相互比較的回答數（批次大小 × 梯度累積必須是它的倍數）。</translation>
    </message>
    <message>
        <source>The longest answer, in tokens.</source>
        <translation>最長回答的詞元數。</translation>
    </message>
    <message>
        <source>Sampling temperature of the answers (higher: more varied).</source>
        <translation>回答的取樣溫度（越高越多樣）。</translation>
    </message>
    <message>
        <source>KL penalty: how strongly the model is held near where it started (0 = not held, no reference model in memory; 0.04 is the paper&apos;s).</source>
        <translation>KL 懲罰：把模型約束在起點附近的強度（0 = 不約束，記憶體中不保留參考模型；論文用 0.04）。</translation>
    </message>
    <message>
        <source>Folder for run folders; empty = the app&apos;s data folder.</source>
        <translation>存放訓練任務資料夾的位置；留空 = 應用程式的資料資料夾。</translation>
    </message>
    <message>
        <source>Name for this run&apos;s folder; empty = task and model.</source>
        <translation>本次訓練任務資料夾的名稱；留空 = 任務類型加模型名稱。</translation>
    </message>
    <message>
        <source>Also log to &quot;tensorboard&quot; and/or &quot;mlflow&quot; (when that package is installed).</source>
        <translation>同時記錄到「tensorboard」和/或「mlflow」（需已安裝對應的套件）。</translation>
    </message>
    <message>
        <source>must be a list of texts, not {value}.</source>
        <translation>必須是文字清單，而不是 {value}。</translation>
    </message>
    <message>
        <source>Learning-rate schedule: {choices}.</source>
        <translation>學習率排程：{choices}。</translation>
    </message>
    <message>
        <source>Optimizer: {choices}.</source>
        <translation>最佳化器：{choices}。</translation>
    </message>
    <message>
        <source>torch.compile backend: {choices}.</source>
        <translation>torch.compile 後端：{choices}。</translation>
    </message>
    <message>
        <source>must be true or false, not {value}.</source>
        <translation>必須是 true 或 false，而不是 {value}。</translation>
    </message>
    <message>
        <source>must be a whole number, not {value}.</source>
        <translation>必須是整數，而不是 {value}。</translation>
    </message>
    <message>
        <source>must be a number, not {value}.</source>
        <translation>必須是數字，而不是 {value}。</translation>
    </message>
    <message>
        <source>must be text, not {value}.</source>
        <translation>必須是文字，而不是 {value}。</translation>
    </message>
    <message>
        <source>must be one of {choices}.</source>
        <translation>必須是以下其中之一：{choices}。</translation>
    </message>
    <message>
        <source>must be above 0 (or set training.max_steps).</source>
        <translation>必須大於 0（或者設定 training.max_steps）。</translation>
    </message>
    <message>
        <source>must be 0 (use epochs) or a positive number of steps.</source>
        <translation>必須是 0（依輪數）或正整數步數。</translation>
    </message>
    <message>
        <source>must be between 0 and 1; 2e-5 to 5e-4 is usual.</source>
        <translation>必須介於 0 和 1 之間；常用 2e-5 到 5e-4。</translation>
    </message>
    <message>
        <source>must be 0 or more.</source>
        <translation>必須大於或等於 0。</translation>
    </message>
    <message>
        <source>must be between 8 and 1048576 tokens.</source>
        <translation>必須介於 8 到 1048576 個詞元之間。</translation>
    </message>
    <message>
        <source>must be 0 (never) or a number of steps.</source>
        <translation>必須是 0（從不）或步數。</translation>
    </message>
    <message>
        <source>must be 1 or more; 8 or 16 is usual.</source>
        <translation>必須大於或等於 1；常用 8 或 16。</translation>
    </message>
    <message>
        <source>must be 1 or more; often twice the rank.</source>
        <translation>必須大於或等於 1；通常是秩的兩倍。</translation>
    </message>
    <message>
        <source>must be at least 0 and below 1.</source>
        <translation>必須大於或等於 0 且小於 1。</translation>
    </message>
    <message>
        <source>is empty; give a hub id such as &quot;bert-base-uncased&quot; or a local model folder.</source>
        <translation>為空；請填寫 Hub ID（如「bert-base-uncased」）或本機模型資料夾。</translation>
    </message>
    <message>
        <source>set either data.files (local files) or data.hub_id (a hub dataset), not both.</source>
        <translation>data.files（本機檔案）和 data.hub_id（Hub 資料集）只能設定其中一個。</translation>
    </message>
    <message>
        <source>&quot;{name}&quot; is not a hub dataset id like &quot;owner/name&quot;.</source>
        <translation>「{name}」不是「owner/name」這樣的 Hub 資料集 ID。</translation>
    </message>
    <message>
        <source>must be at least 0 and below 1; 0.1 is usual.</source>
        <translation>必須大於或等於 0 且小於 1；常用 0.1。</translation>
    </message>
    <message>
        <source>only applies to hub datasets; use validation.files for local data.</source>
        <translation>只適用於 Hub 資料集；本機資料請用 validation.files。</translation>
    </message>
    <message>
        <source>this file is version {version}, this app reads {supported}; create a new config with `finetune-studio-cli init`.</source>
        <translation>這個檔案的版本是 {version}，本應用程式讀取的是 {supported}；請用 `finetune-studio-cli init` 建立新的設定檔。</translation>
    </message>
    <message>
        <source>must be a table ([section]).</source>
        <translation>必須是一個表格（[section]）。</translation>
    </message>
    <message>
        <source>must be 1 or more.</source>
        <translation>必須大於或等於 1。</translation>
    </message>
    <message>
        <source>must be 0 (once per epoch) or a positive number of steps.</source>
        <translation>必須是 0（每輪一次）或正整數步數。</translation>
    </message>
    <message>
        <source>write overrides as key=value, e.g. training.epochs=2.</source>
        <translation>覆寫值請寫成 key=value，例如 training.epochs=2。</translation>
    </message>
    <message>
        <source>must be a finite number, not {value}.</source>
        <translation>必須是有限的數字，而不是 {value}。</translation>
    </message>
    <message>
        <source>unknown bundled model; known: {choices}.</source>
        <translation>未知的內建模型；可用的有：{choices}。</translation>
    </message>
    <message>
        <source>{file}: unsupported type; use one of {types}.</source>
        <translation>{file}：不支援的檔案類型；請使用以下其中之一：{types}。</translation>
    </message>
    <message>
        <source>unknown field; did you mean &quot;{near}&quot;?</source>
        <translation>未知欄位；你是不是想寫「{near}」？</translation>
    </message>
    <message>
        <source>unknown field.</source>
        <translation>未知欄位。</translation>
    </message>
    <message>
        <source>file not found; check the path.</source>
        <translation>找不到檔案；請檢查路徑。</translation>
    </message>
    <message>
        <source>cannot be read ({error}).</source>
        <translation>無法讀取（{error}）。</translation>
    </message>
    <message>
        <source>is not valid TOML: {error}.</source>
        <translation>不是有效的 TOML：{error}。</translation>
    </message>
    <message>
        <source>is not a section.</source>
        <translation>不是一個設定區段。</translation>
    </message>
    <message>
        <source>the folder {folder} has no config.json; pick the folder that holds the model.</source>
        <translation>資料夾 {folder} 中沒有 config.json；請選擇存放模型的那個資料夾。</translation>
    </message>
    <message>
        <source>the folder {folder} does not exist.</source>
        <translation>資料夾 {folder} 不存在。</translation>
    </message>
    <message>
        <source>{file} does not exist.</source>
        <translation>{file} 不存在。</translation>
    </message>
    <message>
        <source>&quot;{name}&quot; is neither a local folder nor a hub id like &quot;owner/model&quot; (or &quot;modelscope:owner/model&quot;).</source>
        <translation>「{name}」既不是本機資料夾，也不是「owner/model」（或「modelscope:owner/model」）這樣的 Hub ID。</translation>
    </message>
    <message>
        <source>{file} row {number}</source>
        <translation>{file} 第 {number} 列</translation>
    </message>
    <message>
        <source>{file} is empty.</source>
        <translation>{file} 是空的。</translation>
    </message>
    <message>
        <source>Choose a file that holds your training examples.</source>
        <translation>請選擇包含訓練範例的檔案。</translation>
    </message>
    <message>
        <source>{file} line {number}</source>
        <translation>{file} 第 {number} 行</translation>
    </message>
    <message>
        <source>{items} and {more} more</source>
        <translation>{items} 等，另有 {more} 處</translation>
    </message>
    <message>
        <source>{file} is not readable text in any common encoding (UTF-8, GBK, Big5, ...).</source>
        <translation>{file} 無法以任何常見編碼（UTF-8、GBK、Big5……）讀成文字。</translation>
    </message>
    <message>
        <source>Checking {rows} rows</source>
        <translation>正在檢查 {rows} 列</translation>
    </message>
    <message>
        <source>Classification: evaluate the base model on the evaluation rows before training, so that every figure reads base -&gt; fine-tuned (skipped when it would take over a minute).</source>
        <translation>分類：訓練前先用評估資料評估基礎模型，讓每個指標都顯示為「基礎 -&gt; 微調後」（預計超過一分鐘時略過）。</translation>
    </message>
    <message>
        <source>Examples per device and evaluation step; 0 = the batch size.</source>
        <translation>每個裝置每個評估步的樣本數；0 = 與批次大小相同。</translation>
    </message>
    <message>
        <source>When the GPU runs out of memory: go back to the last checkpoint and go on with less memory (half the batch and twice the accumulation, so the same effective batch; then gradient checkpointing; then a smaller optimizer or LoRA). Every change is logged and saved in the run&apos;s config.</source>
        <translation>顯示記憶體不足時：回到最近的檢查點，改用更少顯示記憶體繼續（先將批次大小減半、梯度累積加倍，等效批次大小不變；然後開啟梯度檢查點；再換用更省顯示記憶體的最佳化器或 LoRA）。每項變更都會記入日誌，並儲存在這次訓練的設定中。</translation>
    </message>
    <message>
        <source>Train in a child process: Stop can end it at once, a crash cannot close the app, and every byte of GPU memory goes back to the system when the run ends.</source>
        <translation>在子行程中訓練：「停止」可以立即結束它，當機不會讓應用程式關閉，訓練結束後所有顯示記憶體都會還給系統。</translation>
    </message>
    <message>
        <source>Processes to train with, one per GPU; 2 or more run through accelerate launch.</source>
        <translation>訓練用的行程數，每張 GPU 一個；2 個或以上透過 accelerate launch 執行。</translation>
    </message>
    <message>
        <source>The GPUs to use, e.g. &quot;0,1&quot;; empty = the first num_processes GPUs.</source>
        <translation>要使用的 GPU，例如 &quot;0,1&quot;；留空 = 前 num_processes 張 GPU。</translation>
    </message>
    <message>
        <source>With several GPUs: ddp (a whole copy of the model on each GPU), fsdp (the model split across the GPUs), deepspeed-zero2 or deepspeed-zero3 (need the deepspeed package).</source>
        <translation>多張 GPU 時：ddp（每張 GPU 上一份完整模型）、fsdp（模型拆分到各張 GPU）、deepspeed-zero2 或 deepspeed-zero3（需要 deepspeed 套件）。</translation>
    </message>
    <message>
        <source>must be 0 (the batch size) or more.</source>
        <translation>必須為 0（與批次大小相同）或更大。</translation>
    </message>
    <message>
        <source>must be GPU numbers separated by commas, e.g. &quot;0,1&quot;.</source>
        <translation>必須是用逗號分隔的 GPU 編號，例如 &quot;0,1&quot;。</translation>
    </message>
    <message>
        <source>names {count} GPUs for {processes} processes; name one GPU per process, or leave it empty.</source>
        <translation>為 {processes} 個行程指定了 {count} 張 GPU；請每個行程指定一張 GPU，或留空。</translation>
    </message>
    <message>
        <source>Open it in a spreadsheet or editor and save it again as UTF-8 CSV.</source>
        <translation>請用試算表或編輯器開啟它，另存為 UTF-8 編碼的 CSV。</translation>
    </message>
    <message>
        <source>{file} is UTF-8 except at line {line}, which holds text in another encoding (pasted from another file, perhaps).</source>
        <translation>{file} 是 UTF-8 編碼，但第 {line} 行是其他編碼的文字（也許是從別的檔案貼上過來的）。</translation>
    </message>
    <message>
        <source>Fix that line (type it again, or copy it from a UTF-8 copy of its source), then try again.</source>
        <translation>請修正這一行（重新輸入，或從它的 UTF-8 版本重新複製），然後再試一次。</translation>
    </message>
    <message>
        <source>The data file {path} does not exist.</source>
        <translation>資料檔案 {path} 不存在。</translation>
    </message>
    <message>
        <source>Check the path, or pick the file again.</source>
        <translation>請檢查路徑，或重新選擇檔案。</translation>
    </message>
    <message>
        <source>Use CSV, TSV, JSON, JSONL, Parquet, TXT or Excel (.xlsx).</source>
        <translation>請使用 CSV、TSV、JSON、JSONL、Parquet、TXT 或 Excel（.xlsx）。</translation>
    </message>
    <message>
        <source>{file} has no data rows.</source>
        <translation>{file} 沒有資料列。</translation>
    </message>
    <message>
        <source>Add examples below the header row.</source>
        <translation>請在標題列下方新增範例。</translation>
    </message>
    <message>
        <source>{file} does not hold a list of records.</source>
        <translation>{file} 裡不是一個記錄清單。</translation>
    </message>
    <message>
        <source>The hub dataset {name} is not on this computer yet.</source>
        <translation>Hub 資料集 {name} 還沒有下載到這台電腦上。</translation>
    </message>
    <message>
        <source>Download it first: Download on the Model &amp; data step, or finetune-studio-cli datasets download {name}</source>
        <translation>請先下載：在「模型與資料」步驟中按「下載」，或執行 finetune-studio-cli datasets download {name}</translation>
    </message>
    <message>
        <source>The split {split} of {name} has no rows.</source>
        <translation>{name} 的分割 {split} 中沒有資料。</translation>
    </message>
    <message>
        <source>Choose another split.</source>
        <translation>請選擇其他分割。</translation>
    </message>
    <message>
        <source>{items}, {item}</source>
        <translation>{items}、{item}</translation>
    </message>
    <message>
        <source>{file}: files of type {suffix} are not supported.</source>
        <translation>{file}：不支援 {suffix} 類型的檔案。</translation>
    </message>
    <message>
        <source>{file}: files without a type (.csv, .jsonl...) are not supported.</source>
        <translation>{file}：不支援沒有副檔名（.csv、.jsonl……）的檔案。</translation>
    </message>
    <message>
        <source>{file} is not a well-formed {kind} file: {error}</source>
        <translation>{file} 不是格式正確的 {kind} 檔案：{error}</translation>
    </message>
    <message>
        <source>Every row needs as many fields as the header; quote texts that contain the separator.</source>
        <translation>每一列的欄位數都要與標題列一致；包含分隔符號的文字請加上引號。</translation>
    </message>
    <message>
        <source>{file} line {line} is not a JSON object.</source>
        <translation>{file} 第 {line} 行不是 JSON 物件。</translation>
    </message>
    <message>
        <source>Each line must look like {example}.</source>
        <translation>每一行都應該像這樣：{example}。</translation>
    </message>
    <message>
        <source>{file} is not valid JSON: {error} at line {line}, column {column}.</source>
        <translation>{file} 不是有效的 JSON：第 {line} 行第 {column} 欄 {error}。</translation>
    </message>
    <message>
        <source>Fix the file there. For one example per line, name the file .jsonl.</source>
        <translation>請修正該處。如果每行一個範例，請把副檔名改為 .jsonl。</translation>
    </message>
    <message>
        <source>{file} is not a readable Parquet file ({error}).</source>
        <translation>{file} 不是可讀取的 Parquet 檔案（{error}）。</translation>
    </message>
    <message>
        <source>Export it again.</source>
        <translation>請重新匯出。</translation>
    </message>
    <message>
        <source>{file} is not a readable Excel workbook ({error}).</source>
        <translation>{file} 不是可讀取的 Excel 活頁簿（{error}）。</translation>
    </message>
    <message>
        <source>The hub dataset {name} ({split}) could not be loaded: {error}</source>
        <translation>無法載入 Hub 資料集 {name}（{split}）：{error}</translation>
    </message>
    <message>
        <source>Check the configuration and split names (the dataset&apos;s page lists them).</source>
        <translation>請檢查組態名稱與分割名稱（資料集頁面上有列出）。</translation>
    </message>
    <message>
        <source>Reading {file}</source>
        <translation>正在讀取 {file}</translation>
    </message>
    <message>
        <source>{file} line {line} is not valid JSON ({error} at column {column}).</source>
        <translation>{file} 第 {line} 行不是有效的 JSON（第 {column} 欄 {error}）。</translation>
    </message>
    <message>
        <source>Each line must hold one JSON object; fix or remove that line.</source>
        <translation>每行必須是一個 JSON 物件；請修正或刪除該行。</translation>
    </message>
    <message>
        <source>It needs about {needed}; {free} are free there.</source>
        <translation>約需 {needed}，那裡只剩 {free} 可用。</translation>
    </message>
    <message>
        <source>It needs about {needed}.</source>
        <translation>約需 {needed}。</translation>
    </message>
    <message>
        <source>{free} are free there.</source>
        <translation>那裡還剩 {free} 可用。</translation>
    </message>
    <message>
        <source>  - {field}: {problem}</source>
        <translation>  - {field}：{problem}</translation>
    </message>
    <message>
        <source>The GPU ran out of memory in the forward pass.</source>
        <translation>前向計算時顯示記憶體不足。</translation>
    </message>
    <message>
        <source>Training stopped with an unexpected error: {error}</source>
        <translation>訓練因非預期的錯誤而停止：{error}</translation>
    </message>
    <message>
        <source>Open the details for the full traceback. Resume from the last checkpoint, or report the problem with the details attached.</source>
        <translation>開啟詳細資訊可查看完整的錯誤追蹤。可以從最後一個檢查點繼續訓練，或附上詳細資訊回報這個問題。</translation>
    </message>
    <message>
        <source>Fix the fields above and try again.</source>
        <translation>請修正上面的欄位後再試一次。</translation>
    </message>
    <message>
        <source>Apply one of the changes below and retry; each keeps what the run learns comparable. Training resumes from the last checkpoint when there is one.</source>
        <translation>請套用下面任一項修改後重試；每項修改都不會改變訓練的學習效果。如果有檢查點，訓練會從最後一個檢查點繼續。</translation>
    </message>
    <message>
        <source>This PyTorch build has no GPU support, so GPU-only settings (fp16, bf16) cannot run.</source>
        <translation>這個 PyTorch 版本不支援 GPU，因此只能在 GPU 上使用的設定（fp16、bf16）無法執行。</translation>
    </message>
    <message>
        <source>Open the Environment step and install the matching PyTorch, or train in fp32 on the CPU.</source>
        <translation>請開啟「環境」步驟安裝相符的 PyTorch，或者在 CPU 上用 fp32 訓練。</translation>
    </message>
    <message>
        <source>This GPU cannot train in bf16.</source>
        <translation>這張 GPU 不能用 bf16 訓練。</translation>
    </message>
    <message>
        <source>Use fp16 or let the app choose.</source>
        <translation>請改用 fp16，或讓應用程式自動選擇。</translation>
    </message>
    <message>
        <source>bitsandbytes, needed by 8-bit optimizers, is missing or broken: {error}</source>
        <translation>8 位元最佳化器所需的 bitsandbytes 缺少或已損壞：{error}</translation>
    </message>
    <message>
        <source>Use a standard optimizer, or reinstall bitsandbytes for this GPU.</source>
        <translation>請改用標準最佳化器，或為這張 GPU 重新安裝 bitsandbytes。</translation>
    </message>
    <message>
        <source>A CUDA kernel rejected its input (device-side assert). Most often a label is out of range.</source>
        <translation>CUDA 核心拒絕了輸入（device-side assert）。最常見的原因是標籤超出範圍。</translation>
    </message>
    <message>
        <source>Check the label column (classification) and that the model fits the tokenizer. For the exact spot, set the environment variable CUDA_LAUNCH_BLOCKING=1 and restart the app; the GPU needs a restart of the app after this error anyway.</source>
        <translation>請檢查標籤欄位（分類任務），以及模型與分詞器是否相符。要找出確切出錯的位置，請設定環境變數 CUDA_LAUNCH_BLOCKING=1 後重新啟動應用程式；出現這個錯誤後，無論如何都需要重新啟動應用程式才能再使用 GPU。</translation>
    </message>
    <message>
        <source>The data loader&apos;s worker processes failed: {error}</source>
        <translation>資料載入的工作行程出錯：{error}</translation>
    </message>
    <message>
        <source>Load batches in the training process (0 workers), which always works on Windows.</source>
        <translation>請在訓練行程內載入批次（0 個工作行程），這在 Windows 上一定可行。</translation>
    </message>
    <message>
        <source>A CUDA error stopped training: {error}</source>
        <translation>CUDA 錯誤導致訓練停止：{error}</translation>
    </message>
    <message>
        <source>Restart the app and resume from the last checkpoint. If it happens again, update the NVIDIA driver or reinstall PyTorch from the Environment step.</source>
        <translation>請重新啟動應用程式，從最後一個檢查點繼續訓練。如果再次出現，請更新 NVIDIA 驅動程式，或在「環境」步驟中重新安裝 PyTorch。</translation>
    </message>
    <message>
        <source>The computer ran out of memory (RAM).</source>
        <translation>電腦記憶體不足。</translation>
    </message>
    <message>
        <source>Close other programs, lower the batch size or max length, then resume.</source>
        <translation>請關閉其他程式，減小批次大小或最大長度，然後繼續訓練。</translation>
    </message>
    <message>
        <source>Free some space (old runs and checkpoints in the runs folder are often large) or choose a folder on another drive, then try again.</source>
        <translation>請騰出一些空間（訓練任務資料夾中的舊任務與檢查點通常很大），或選擇其他磁碟上的資料夾，然後再試一次。</translation>
    </message>
    <message>
        <source>Choose a folder you can write to (for example in your home folder) and try again.</source>
        <translation>請選擇一個你有寫入權限的資料夾（例如你的使用者資料夾下），然後再試一次。</translation>
    </message>
    <message>
        <source>{lines}
{line}</source>
        <translation>{lines}
{line}</translation>
    </message>
    <message>
        <source>The run config has a problem:
{lines}</source>
        <translation>訓練設定有 1 個問題：
{lines}</translation>
    </message>
    <message>
        <source>The run config has {count} problems:
{lines}</source>
        <translation>訓練設定有 {count} 個問題：
{lines}</translation>
    </message>
    <message>
        <source>Halve the batch ({batch} -&gt; {half}) and raise accumulation to {accumulation} (same effective batch)</source>
        <translation>批次大小減半（{batch} -&gt; {half}），梯度累積提高到 {accumulation}（等效批次大小不變）</translation>
    </message>
    <message>
        <source>Turn on gradient checkpointing (far less activation memory, ~20% slower)</source>
        <translation>開啟梯度檢查點（激活值佔用的顯示記憶體大幅減少，約慢 20%）</translation>
    </message>
    <message>
        <source>Use the Adafactor optimizer (a fraction of AdamW&apos;s state memory)</source>
        <translation>改用 Adafactor 最佳化器（狀態只佔 AdamW 的一小部分記憶體）</translation>
    </message>
    <message>
        <source>Train LoRA adapters instead of every weight</source>
        <translation>只訓練 LoRA 轉接器，不訓練全部權重</translation>
    </message>
    <message>
        <source>Shorten sequences ({length} -&gt; {half} tokens)</source>
        <translation>縮短序列（{length} -&gt; {half} 個詞元）</translation>
    </message>
    <message>
        <source>Finetune Studio may not write in {folder}: the folder is read-only or belongs to another user.</source>
        <translation>Finetune Studio 無法寫入 {folder}：該資料夾是唯讀的，或屬於其他使用者。</translation>
    </message>
    <message>
        <source>Finetune Studio may not write there: the folder is read-only or belongs to another user.</source>
        <translation>Finetune Studio 無法寫入那裡：該資料夾是唯讀的，或屬於其他使用者。</translation>
    </message>
    <message>
        <source>The folder {folder} cannot be used: {error}.</source>
        <translation>無法使用資料夾 {folder}：{error}。</translation>
    </message>
    <message>
        <source>Choose another folder and try again.</source>
        <translation>請選擇其他資料夾後再試一次。</translation>
    </message>
    <message>
        <source>The GPU ran out of memory while loading the model.</source>
        <translation>載入模型時顯示記憶體不足。</translation>
    </message>
    <message>
        <source>The GPU ran out of memory during evaluation.</source>
        <translation>評估時顯示記憶體不足。</translation>
    </message>
    <message>
        <source>The GPU ran out of memory in the backward pass.</source>
        <translation>反向傳播時顯示記憶體不足。</translation>
    </message>
    <message>
        <source>The GPU ran out of memory in the optimizer step.</source>
        <translation>最佳化器更新參數時顯示記憶體不足。</translation>
    </message>
    <message>
        <source>Train in fp32 (CPU)</source>
        <translation>用 fp32 訓練（CPU）</translation>
    </message>
    <message>
        <source>Let the app choose the precision</source>
        <translation>讓應用程式自動選擇精度</translation>
    </message>
    <message>
        <source>Use AdamW</source>
        <translation>改用 AdamW</translation>
    </message>
    <message>
        <source>Use 0 data loader workers</source>
        <translation>資料載入工作行程設為 0</translation>
    </message>
    <message>
        <source>The disk is full: a file could not be written in {folder}.</source>
        <translation>磁碟已滿：無法在 {folder} 中寫入檔案。</translation>
    </message>
    <message>
        <source>The disk is full: a file could not be written.</source>
        <translation>磁碟已滿：無法寫入檔案。</translation>
    </message>
    <message>
        <source>Loading the model</source>
        <translation>正在載入模型</translation>
    </message>
    <message>
        <source>Copying the adapters</source>
        <translation>正在複製轉接器</translation>
    </message>
    <message>
        <source>Writing the weights (safetensors)</source>
        <translation>正在寫入權重（safetensors）</translation>
    </message>
    <message>
        <source>Copying the tokenizer</source>
        <translation>正在複製分詞器</translation>
    </message>
    <message>
        <source>Writing the model card</source>
        <translation>正在寫入模型卡</translation>
    </message>
    <message>
        <source>Putting the folder in place</source>
        <translation>正在把資料夾放到目標位置</translation>
    </message>
    <message>
        <source>Making the zip archive</source>
        <translation>正在產生 zip 壓縮檔</translation>
    </message>
    <message>
        <source>Verifying: reloading the folder in a fresh process</source>
        <translation>正在驗證：在新的行程中重新載入該資料夾</translation>
    </message>
    <message>
        <source>Logging the model to MLflow</source>
        <translation>正在把模型記錄到 MLflow</translation>
    </message>
    <message>
        <source>Done</source>
        <translation>完成</translation>
    </message>
    <message>
        <source>Unknown weight type {dtype}.</source>
        <translation>未知的權重類型 {dtype}。</translation>
    </message>
    <message>
        <source>Use one of {choices}.</source>
        <translation>請使用以下其中之一：{choices}。</translation>
    </message>
    <message>
        <source>{run} has no finished model to export.</source>
        <translation>{run} 沒有訓練完成的模型可以匯出。</translation>
    </message>
    <message>
        <source>Finish (or resume) the run first.</source>
        <translation>請先完成（或繼續）這次訓練。</translation>
    </message>
    <message>
        <source>This run trained no LoRA adapters.</source>
        <translation>這次訓練沒有訓練 LoRA 轉接器。</translation>
    </message>
    <message>
        <source>Export the merged model instead.</source>
        <translation>請改為匯出合併後的模型。</translation>
    </message>
    <message>
        <source>{folder} is a file, not a folder.</source>
        <translation>{folder} 是一個檔案，不是資料夾。</translation>
    </message>
    <message>
        <source>Give the name of a new or empty folder to export to.</source>
        <translation>請指定一個新的或空的資料夾作為匯出位置。</translation>
    </message>
    <message>
        <source>the run folder</source>
        <translation>訓練任務資料夾</translation>
    </message>
    <message>
        <source>the runs folder</source>
        <translation>存放訓練任務的資料夾</translation>
    </message>
    <message>
        <source>Finetune Studio&apos;s data folder</source>
        <translation>Finetune Studio 的資料資料夾</translation>
    </message>
    <message>
        <source>Cannot write in {folder}: {error}.</source>
        <translation>無法寫入 {folder}：{error}。</translation>
    </message>
    <message>
        <source>Choose another folder.</source>
        <translation>請選擇其他資料夾。</translation>
    </message>
    <message>
        <source>About this model</source>
        <translation>關於這個模型</translation>
    </message>
    <message>
        <source>Fine-tuned with Finetune Studio from {model} for {task} on {data}.</source>
        <translation>使用 Finetune Studio 以 {model} 為基礎、在 {data} 上針對 {task} 任務微調而成。</translation>
    </message>
    <message>
        <source>Load it as the section How to load shows; the run&apos;s config reproduces it.</source>
        <translation>載入方法請見上方「How to load」一節；用這次訓練的設定檔可以重現它。</translation>
    </message>
    <message>
        <source>MLflow is not installed.</source>
        <translation>沒有安裝 MLflow。</translation>
    </message>
    <message>
        <source>Export cancelled; nothing was written.</source>
        <translation>已取消匯出；沒有寫入任何內容。</translation>
    </message>
    <message>
        <source>{folder} is not empty.</source>
        <translation>{folder} 不是空的。</translation>
    </message>
    <message>
        <source>Not enough disk space: the export needs about {needed} in {folder}, {free} are free on that drive.</source>
        <translation>磁碟空間不足：匯出需要在 {folder} 中佔用約 {needed}，該磁碟只剩 {free} 可用。</translation>
    </message>
    <message>
        <source>Free some space or choose another folder.</source>
        <translation>請騰出一些空間，或選擇其他資料夾。</translation>
    </message>
    <message>
        <source>the model this run started from</source>
        <translation>這次訓練所依據的模型</translation>
    </message>
    <message>
        <source>{folder} is {what} ({other}); exporting there could overwrite it.</source>
        <translation>{folder} 就是{what}（{other}）；匯出到那裡可能會覆寫它。</translation>
    </message>
    <message>
        <source>Export to a new folder elsewhere, for example in your Documents folder.</source>
        <translation>請匯出到別處的新資料夾，例如「文件」資料夾裡。</translation>
    </message>
    <message>
        <source>{folder} holds run folders; exporting there could overwrite them.</source>
        <translation>{folder} 裡有訓練任務資料夾；匯出到那裡可能會覆寫它們。</translation>
    </message>
    <message>
        <source>Export to a new folder elsewhere.</source>
        <translation>請匯出到別處的新資料夾。</translation>
    </message>
    <message>
        <source>{folder} is not empty and was not written by an export, so it will not be replaced.</source>
        <translation>{folder} 不是空的，也不是之前匯出時寫入的，所以不會取代它。</translation>
    </message>
    <message>
        <source>Choose a new or empty folder, or a folder an earlier export wrote.</source>
        <translation>請選擇一個新的或空的資料夾，或者之前匯出時寫入的資料夾。</translation>
    </message>
    <message>
        <source>Another export to {folder} is running right now.</source>
        <translation>另一個匯出到 {folder} 的作業正在進行。</translation>
    </message>
    <message>
        <source>Wait for it to finish, or export to another folder.</source>
        <translation>請等它完成，或匯出到其他資料夾。</translation>
    </message>
    <message>
        <source>Results: {results}.</source>
        <translation>結果：{results}。</translation>
    </message>
    <message>
        <source>{folder} lies inside {what} ({other}); exporting there could overwrite it.</source>
        <translation>{folder} 位於{what}（{other}）之內；匯出到那裡可能會覆寫它。</translation>
    </message>
    <message>
        <source>{folder} holds {what} ({other}); exporting there could overwrite it.</source>
        <translation>{folder} 包含{what}（{other}）；匯出到那裡可能會覆寫它。</translation>
    </message>
    <message>
        <source>Found {gpus}.</source>
        <translation>找到 {gpus}。</translation>
    </message>
    <message>
        <source>No GPU found: training runs on the CPU.</source>
        <translation>沒有找到 GPU：訓練將在 CPU 上執行。</translation>
    </message>
    <message>
        <source>Found {gpus} (NVIDIA driver {driver}).</source>
        <translation>找到 {gpus}（NVIDIA 驅動程式 {driver}）。</translation>
    </message>
    <message>
        <source>The helper process that reads models ended unexpectedly (exit code {code}).</source>
        <translation>讀取模型的輔助行程意外結束（結束代碼 {code}）。</translation>
    </message>
    <message>
        <source>Try again. If it happens again, its log is {path}.</source>
        <translation>請再試一次。如果再次發生，它的記錄檔在 {path}。</translation>
    </message>
    <message>
        <source>Only models in a hub cache can be deleted here.</source>
        <translation>這裡只能刪除 Hub 快取中的模型。</translation>
    </message>
    <message>
        <source>{folder} is not a model folder in the ModelScope cache ({cache}).</source>
        <translation>{folder} 不是魔搭快取（{cache}）中的模型資料夾。</translation>
    </message>
    <message>
        <source>The number of machines must be 1 or more.</source>
        <translation>機器數必須至少為 1。</translation>
    </message>
    <message>
        <source>Pass --nodes 1 or more.</source>
        <translation>請傳入 --nodes 1 或更大的值。</translation>
    </message>
    <message>
        <source>The number of processes must be 1 or more.</source>
        <translation>行程數必須至少為 1。</translation>
    </message>
    <message>
        <source>Pass --num-processes 1 or more.</source>
        <translation>請傳入 --num-processes 1 或更大的值。</translation>
    </message>
    <message>
        <source>{folder} exists and is not empty.</source>
        <translation>{folder} 已存在且不是空的。</translation>
    </message>
    <message>
        <source>Choose a new folder for the job.</source>
        <translation>請為作業選擇一個新資料夾。</translation>
    </message>
    <message>
        <source>The data file {file} was not found.</source>
        <translation>找不到資料檔案 {file}。</translation>
    </message>
    <message>
        <source>Check the data on the Model and data page, then export the job again.</source>
        <translation>請在「模型與資料」頁面檢查資料，然後重新匯出作業。</translation>
    </message>
    <message>
        <source>Training on several processes needs the accelerate package, which is not installed.</source>
        <translation>多行程訓練需要 accelerate 套件，但它沒有安裝。</translation>
    </message>
    <message>
        <source>Install it (pip install accelerate), or train with one process.</source>
        <translation>請安裝它（pip install accelerate），或者只用一個行程訓練。</translation>
    </message>
    <message>
        <source>{strategy} needs the deepspeed package, which is not installed.</source>
        <translation>{strategy} 需要 deepspeed 套件，但它沒有安裝。</translation>
    </message>
    <message>
        <source>Install it (pip install deepspeed; Linux only), or choose ddp or fsdp.</source>
        <translation>請安裝它（pip install deepspeed；僅限 Linux），或者選擇 ddp 或 fsdp。</translation>
    </message>
    <message>
        <source>DeepSpeed does not train on several GPUs on Windows.</source>
        <translation>DeepSpeed 在 Windows 上不能用多張 GPU 訓練。</translation>
    </message>
    <message>
        <source>Choose ddp or fsdp, or train on Linux (WSL2 works).</source>
        <translation>請選擇 ddp 或 fsdp，或者在 Linux 上訓練（WSL2 也可以）。</translation>
    </message>
    <message>
        <source>The run asks for {processes} processes, one per GPU, and this computer has {gpus}.</source>
        <translation>這個訓練任務要 {processes} 個行程（每張 GPU 一個），而這台電腦只有 {gpus} 張 GPU。</translation>
    </message>
    <message>
        <source>Lower the number of GPUs to {gpus}.</source>
        <translation>請把 GPU 數降到 {gpus}。</translation>
    </message>
    <message>
        <source>GPU {ids} does not exist here (GPUs 0 to {last}).</source>
        <translation>這裡沒有 GPU {ids}（只有 GPU 0 到 {last}）。</translation>
    </message>
    <message>
        <source>Choose GPUs this computer has, or leave the choice empty.</source>
        <translation>請選擇這台電腦上有的 GPU，或者留空。</translation>
    </message>
    <message>
        <source>weights</source>
        <translation>權重</translation>
    </message>
    <message>
        <source>gradients</source>
        <translation>梯度</translation>
    </message>
    <message>
        <source>optimizer states</source>
        <translation>最佳化器狀態</translation>
    </message>
    <message>
        <source>activations</source>
        <translation>激活值</translation>
    </message>
    <message>
        <source>logits</source>
        <translation>logits</translation>
    </message>
    <message>
        <source>CUDA context and overhead</source>
        <translation>CUDA 環境與其他開銷</translation>
    </message>
    <message>
        <source>libraries and overhead</source>
        <translation>函式庫與其他開銷</translation>
    </message>
    <message>
        <source>{first} {then}</source>
        <translation>{first}{then}</translation>
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
        <translation>{model} 的分詞器既沒有填充詞元，也沒有文字結束詞元。</translation>
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
        <source>precision auto -&gt; {precision}</source>
        <translation>精度 auto -&gt; {precision}</translation>
    </message>
    <message>
        <source>QLoRA: the base model is loaded in 4 bits (NF4)</source>
        <translation>QLoRA：基礎模型以 4 位元精度（NF4）載入</translation>
    </message>
    <message>
        <source>{precision} needs a CUDA GPU, and PyTorch sees none here; use auto or fp32 (or fix PyTorch on the Environment page).</source>
        <translation>{precision} 需要 CUDA GPU，但 PyTorch 在這裡看不到 GPU；請使用 auto 或 fp32（或在「環境」頁修復 PyTorch）。</translation>
    </message>
    <message>
        <source>8-bit optimizers need bitsandbytes, which is missing or broken here; use adamw_torch or adafactor.</source>
        <translation>8 位元最佳化器需要 bitsandbytes，但這裡缺少或已損壞；請使用 adamw_torch 或 adafactor。</translation>
    </message>
    <message>
        <source>paged optimizers need a CUDA GPU.</source>
        <translation>分頁最佳化器需要 CUDA GPU。</translation>
    </message>
    <message>
        <source>flash_attention_2 needs the flash-attn package and a CUDA GPU; use sdpa.</source>
        <translation>flash_attention_2 需要 flash-attn 套件與 CUDA GPU；請使用 sdpa。</translation>
    </message>
    <message>
        <source>QLoRA needs a CUDA GPU and a working bitsandbytes; use plain LoRA (lora.enabled) instead.</source>
        <translation>QLoRA 需要 CUDA GPU 與可用的 bitsandbytes；請改用一般 LoRA（lora.enabled）。</translation>
    </message>
    <message>
        <source>this GPU cannot compute in bf16; use fp16 or auto.</source>
        <translation>這張 GPU 不支援 bf16 運算；請使用 fp16 或 auto。</translation>
    </message>
    <message>
        <source>inductor needs Triton on the GPU, which has no Windows builds; use aot_eager or eager, or turn torch_compile off.</source>
        <translation>inductor 在 GPU 上需要 Triton，而 Triton 沒有 Windows 版本；請使用 aot_eager 或 eager，或關閉 torch_compile。</translation>
    </message>
    <message>
        <source>inductor needs Triton on the GPU, which is not installed; use aot_eager or eager, or turn torch_compile off.</source>
        <translation>inductor 在 GPU 上需要 Triton，但沒有安裝；請使用 aot_eager 或 eager，或關閉 torch_compile。</translation>
    </message>
    <message>
        <source>inductor compiles CPU training with a C++ compiler, and Visual Studio&apos;s cl.exe was not found; use aot_eager, or turn torch_compile off.</source>
        <translation>inductor 在 CPU 上訓練需要用 C++ 編譯器編譯，但找不到 Visual Studio 的 cl.exe；請使用 aot_eager，或關閉 torch_compile。</translation>
    </message>
    <message>
        <source>inductor compiles CPU training with a C++ compiler, and none was found; use aot_eager, or turn torch_compile off.</source>
        <translation>inductor 在 CPU 上訓練需要用 C++ 編譯器編譯，但找不到編譯器；請使用 aot_eager，或關閉 torch_compile。</translation>
    </message>
    <message>
        <source>{tracker} is not supported; use {choices}.</source>
        <translation>不支援 {tracker}；請使用 {choices}。</translation>
    </message>
    <message>
        <source>{tracker} is not installed: pip install {tracker}, or remove it from output.report_to.</source>
        <translation>沒有安裝 {tracker}：請執行 pip install {tracker}，或把它從 output.report_to 中移除。</translation>
    </message>
    <message>
        <source>Which column should the model read? The file&apos;s columns are: {columns}.</source>
        <translation>模型應該讀取哪個欄位？檔案中的欄位有：{columns}。</translation>
    </message>
    <message>
        <source>Name the column (in the app: Column to read; in the CLI: --column).</source>
        <translation>請指定欄位（應用程式中：要讀取的欄位；命令列中：--column）。</translation>
    </message>
    <message>
        <source>Writing {file}</source>
        <translation>正在寫入 {file}</translation>
    </message>
    <message>
        <source>{file}: predictions are written as CSV, TSV, JSONL or Excel (.xlsx).</source>
        <translation>{file}：預測結果只能寫成 CSV、TSV、JSONL 或 Excel（.xlsx）。</translation>
    </message>
    <message>
        <source>Give the output file one of those types.</source>
        <translation>請把輸出檔案設為其中一種類型。</translation>
    </message>
    <message>
        <source>The output would replace the input file {file}.</source>
        <translation>輸出會覆寫輸入檔案 {file}。</translation>
    </message>
    <message>
        <source>Choose another name for the output.</source>
        <translation>請為輸出檔案換一個名稱。</translation>
    </message>
    <message>
        <source>Predicting: {done} of {rows} rows</source>
        <translation>正在預測：{done} / {rows} 列</translation>
    </message>
    <message>
        <source>The file has no column &quot;{column}&quot;; its columns are: {columns}.</source>
        <translation>檔案中沒有「{column}」欄位；它的欄位有：{columns}。</translation>
    </message>
    <message>
        <source>Give one of those columns.</source>
        <translation>請指定其中一個欄位。</translation>
    </message>
    <message>
        <source>{file} cannot be replaced: another program (Excel?) has it open.</source>
        <translation>無法取代 {file}：另一個程式（Excel？）正開啟著它。</translation>
    </message>
    <message>
        <source>Close it there, or choose another name for the output.</source>
        <translation>請先在那個程式中關閉它，或為輸出檔案換一個名稱。</translation>
    </message>
    <message>
        <source>Some predictions do not fit the input&apos;s encoding ({encoding}): the file is written in UTF-8 with a BOM, which Excel also opens.</source>
        <translation>有些預測結果無法用輸入檔案的編碼（{encoding}）表示：檔案改用帶 BOM 的 UTF-8 寫入，Excel 同樣可以開啟。</translation>
    </message>
    <message>
        <source>Even the smallest setting needs {needed} GB of the {free} GB free: choose a smaller model, a shorter max length, or a GPU with more memory.</source>
        <translation>即使用最省記憶體的設定也需要 {needed} GB，而可用的只有 {free} GB：請選擇更小的模型、更短的最大長度，或顯示記憶體更大的 GPU。</translation>
    </message>
    <message>
        <source>batch size {batch} -&gt; {new_batch}, gradient accumulation {accumulation} -&gt; {new_accumulation} (the same {effective} examples per update)</source>
        <translation>批次大小 {batch} -&gt; {new_batch}，梯度累積 {accumulation} -&gt; {new_accumulation}（每次更新仍是 {effective} 個範例）</translation>
    </message>
    <message>
        <source>the standard optimizer</source>
        <translation>標準最佳化器</translation>
    </message>
    <message>
        <source>optimizer {old} -&gt; {new} ({why})</source>
        <translation>最佳化器 {old} -&gt; {new}（{why}）</translation>
    </message>
    <message>
        <source>precision {old} -&gt; {new}</source>
        <translation>精度 {old} -&gt; {new}</translation>
    </message>
    <message>
        <source>gradient checkpointing on: far less activation memory, about 20% slower</source>
        <translation>開啟梯度檢查點：激活值佔用的記憶體大幅減少，約慢 20%</translation>
    </message>
    <message>
        <source>gradient checkpointing off: faster steps</source>
        <translation>關閉梯度檢查點：每步更快</translation>
    </message>
    <message>
        <source>torch.compile on: a slow first step, then faster ones</source>
        <translation>開啟 torch.compile：第一步較慢，之後更快</translation>
    </message>
    <message>
        <source>torch.compile off: no compile wait</source>
        <translation>關閉 torch.compile：不必等待編譯</translation>
    </message>
    <message>
        <source>LoRA on (rank {rank}): only small adapters are trained</source>
        <translation>開啟 LoRA（秩 {rank}）：只訓練小型轉接器</translation>
    </message>
    <message>
        <source>LoRA off: every weight is trained</source>
        <translation>關閉 LoRA：訓練全部權重</translation>
    </message>
    <message>
        <source>factored states, a fraction of AdamW&apos;s memory</source>
        <translation>分解儲存的狀態，只佔 AdamW 的一小部分記憶體</translation>
    </message>
    <message>
        <source>8-bit states, a quarter of AdamW&apos;s memory</source>
        <translation>8 位元狀態，只佔 AdamW 的四分之一記憶體</translation>
    </message>
    <message>
        <source>one fused kernel, faster on GPU</source>
        <translation>單一融合核心，在 GPU 上更快</translation>
    </message>
    <message>
        <source>Cancelled.</source>
        <translation>已取消。</translation>
    </message>
    <message>
        <source>Nothing was changed.</source>
        <translation>沒有做任何變更。</translation>
    </message>
    <message>
        <source>evaluation batch {old} -&gt; {new} (evaluation only: training is unchanged)</source>
        <translation>評估批次大小 {old} -&gt; {new}（僅影響評估，訓練不變）</translation>
    </message>
    <message>
        <source>The installation was cancelled.</source>
        <translation>安裝已取消。</translation>
    </message>
    <message>
        <source>The installation failed (see the log).</source>
        <translation>安裝失敗（請查看記錄）。</translation>
    </message>
    <message>
        <source>PyTorch no longer loads. Run the repair again, or reinstall the app&apos;s environment.</source>
        <translation>PyTorch 已無法載入。請再執行一次修復，或重新安裝應用程式的執行環境。</translation>
    </message>
    <message>
        <source>PyTorch {version} is still installed and works as before.</source>
        <translation>PyTorch {version} 仍然安裝著，和之前一樣可以使用。</translation>
    </message>
    <message>
        <source>PyTorch no longer loads. To put back what was there, run: {command}</source>
        <translation>PyTorch 已無法載入。要還原原本的版本，請執行：{command}</translation>
    </message>
    <message>
        <source>Installed {requirements}.</source>
        <translation>已安裝 {requirements}。</translation>
    </message>
    <message>
        <source>The installer could not be started: {error}</source>
        <translation>無法啟動安裝程式：{error}</translation>
    </message>
    <message>
        <source>Resuming from {checkpoint}: the newer {damaged} is damaged and was set aside</source>
        <translation>從 {checkpoint} 繼續訓練：較新的 {damaged} 已損壞，已移到一旁</translation>
    </message>
    <message>
        <source>Resuming from the start: {damaged} is damaged and was set aside</source>
        <translation>從頭開始訓練：{damaged} 已損壞，已移到一旁</translation>
    </message>
    <message>
        <source>Resuming from {checkpoint}</source>
        <translation>從 {checkpoint} 繼續訓練</translation>
    </message>
    <message>
        <source>No checkpoint of {run} can be loaded (the last, {checkpoint}: {error}).</source>
        <translation>{run} 的檢查點都無法載入（最後一個是 {checkpoint}：{error}）。</translation>
    </message>
    <message>
        <source>Start the run again without resuming.</source>
        <translation>請不使用繼續訓練，重新開始這次訓練。</translation>
    </message>
    <message>
        <source>Resuming from {checkpoint}: {failed} could not be loaded ({error})</source>
        <translation>從 {checkpoint} 繼續訓練：{failed} 無法載入（{error}）</translation>
    </message>
    <message>
        <source>The run {run} is being trained right now by another process.</source>
        <translation>訓練任務 {run} 正在被另一個行程訓練。</translation>
    </message>
    <message>
        <source>Wait for it to finish or stop it there; a run folder takes one training at a time.</source>
        <translation>請等它結束，或在那邊停止它；一個訓練任務資料夾同一時間只能進行一次訓練。</translation>
    </message>
    <message>
        <source>{run} is still running.</source>
        <translation>{run} 仍在執行。</translation>
    </message>
    <message>
        <source>Stop it first, then delete it.</source>
        <translation>請先停止它，再刪除。</translation>
    </message>
    <message>
        <source>{folder} is not a run folder (it has no config.toml and events.jsonl).</source>
        <translation>{folder} 不是訓練任務資料夾（裡面沒有 config.toml 和 events.jsonl）。</translation>
    </message>
    <message>
        <source>Choose a folder inside the job&apos;s runs folder, named like 20260101-120000-...</source>
        <translation>請選擇作業 runs 資料夾裡的一個資料夾，名稱類似 20260101-120000-...</translation>
    </message>
    <message>
        <source>{run} is in the runs folder already.</source>
        <translation>{run} 已經在訓練任務資料夾中了。</translation>
    </message>
    <message>
        <source>It is listed in Run history as it is.</source>
        <translation>它已經列在訓練紀錄裡。</translation>
    </message>
    <message>
        <source>The last run of {config} ({run}) was trained with other settings ({changed}), so it cannot continue with this config.</source>
        <translation>{config} 的上一次訓練（{run}）用的是其他設定（{changed}），因此不能用這份設定繼續訓練。</translation>
    </message>
    <message>
        <source>Resume it as it was with: finetune-studio-cli train {config} --resume, or start a new run without --resume.</source>
        <translation>要依原設定繼續，請執行：finetune-studio-cli train {config} --resume；或者不加 --resume 開始新的訓練。</translation>
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
    <message>
        <source>Resuming on {now} processes instead of {before}: the model and optimizer carry over; the order of the remaining batches differs from an uninterrupted run.</source>
        <translation>用 {now} 個行程（而不是 {before} 個）繼續訓練：模型和最佳化器狀態會沿用；剩餘批次的順序與不中斷的訓練不同。</translation>
    </message>
    <message>
        <source>Resume the run: it continues from its last checkpoint.</source>
        <translation>請繼續訓練：它會從最後一個檢查點接著訓練。</translation>
    </message>
    <message>
        <source>Start the run again.</source>
        <translation>請重新開始訓練。</translation>
    </message>
    <message>
        <source>The training process was killed by the system (SIGKILL). On Linux that is most often the out-of-memory killer: the computer ran out of RAM.</source>
        <translation>訓練行程被系統強制結束了（SIGKILL）。在 Linux 上這通常是記憶體不足時的 OOM killer：電腦的記憶體用完了。</translation>
    </message>
    <message>
        <source>The process wrote nothing to its error output.</source>
        <translation>該行程沒有輸出任何錯誤訊息。</translation>
    </message>
    <message>
        <source>Close other programs, or lower the batch size or the maximum length.</source>
        <translation>請關閉其他程式，或者調小批次大小或最大長度。</translation>
    </message>
    <message>
        <source>The training process crashed inside native code (a segmentation fault). That comes from a driver, CUDA or a compiled library, not from your data.</source>
        <translation>訓練行程在原生程式碼中當機了（區段錯誤）。這來自驅動程式、CUDA 或某個編譯好的函式庫，而不是你的資料。</translation>
    </message>
    <message>
        <source>This run was trained on {before} processes with {strategy}; its checkpoint is split in that many parts and cannot resume on {now}.</source>
        <translation>這個訓練任務用 {strategy} 在 {before} 個行程上訓練；它的檢查點被拆成了同樣多份，不能在 {now} 個行程上繼續訓練。</translation>
    </message>
    <message>
        <source>Resume it on {before} GPUs, or start a new run.</source>
        <translation>請在 {before} 張 GPU 上繼續訓練，或者開始新的訓練任務。</translation>
    </message>
    <message>
        <source>If it happens again, update the NVIDIA driver or repair PyTorch on the Environment page.</source>
        <translation>如果再次發生，請更新 NVIDIA 驅動程式，或在「環境」頁面修復 PyTorch。</translation>
    </message>
    <message>
        <source>The training process was aborted by a library&apos;s fatal error (SIGABRT): a failed internal check in PyTorch, CUDA or a compiled extension.</source>
        <translation>訓練行程因某個函式庫的嚴重錯誤而中止（SIGABRT）：PyTorch、CUDA 或某個編譯擴充的內部檢查失敗。</translation>
    </message>
    <message>
        <source>The end of its error output is in the details.</source>
        <translation>它最後的錯誤輸出在詳細資訊裡。</translation>
    </message>
    <message>
        <source>The training process ended on signal {signal}.</source>
        <translation>訓練行程因訊號 {signal} 而結束。</translation>
    </message>
    <message>
        <source>The training process ended unexpectedly (exit code {code}).</source>
        <translation>訓練行程意外結束（結束代碼 {code}）。</translation>
    </message>
    <message>
        <source>{dropped} of {total} rows of {source} were left out: their prompt alone fills {length} tokens, so no response is left to learn. Raise training.max_length to keep them.</source>
        <translation>{source} 的 {total} 列中有 {dropped} 列被略過：光是提示詞就佔滿了 {length} 個詞元，沒有留下可學習的回覆。要保留它們，請增大 training.max_length。</translation>
    </message>
    <message>
        <source>No row of {source} has a response within {length} tokens.</source>
        <translation>{source} 中沒有任何一列的回覆落在 {length} 個詞元之內。</translation>
    </message>
    <message>
        <source>Raise training.max_length, or shorten the prompts.</source>
        <translation>請增大 training.max_length，或縮短提示詞。</translation>
    </message>
    <message>
        <source>Training runs on the CPU: PyTorch {version} ({build}) finds no usable GPU.</source>
        <translation>訓練將在 CPU 上執行：PyTorch {version}（{build}）找不到可用的 GPU。</translation>
    </message>
    <message>
        <source>PyTorch could not be checked: {error}</source>
        <translation>無法檢查 PyTorch：{error}</translation>
    </message>
    <message>
        <source>PyTorch is not installed.</source>
        <translation>沒有安裝 PyTorch。</translation>
    </message>
    <message>
        <source>Training runs on the GPU: {gpus} (PyTorch {version}).</source>
        <translation>訓練將在 GPU 上執行：{gpus}（PyTorch {version}）。</translation>
    </message>
    <message>
        <source>Training runs on the CPU: PyTorch {version} is a CPU-only build.</source>
        <translation>訓練將在 CPU 上執行：PyTorch {version} 是僅支援 CPU 的版本。</translation>
    </message>
    <message>
        <source>Reading the data</source>
        <translation>正在讀取資料</translation>
    </message>
    <message>
        <source>Loading PyTorch and Transformers</source>
        <translation>正在載入 PyTorch 與 Transformers</translation>
    </message>
    <message>
        <source>Loading the tokenizer and the model</source>
        <translation>正在載入分詞器與模型</translation>
    </message>
    <message>
        <source>Evaluating the base model, for the figures before and after</source>
        <translation>正在評估基礎模型，用於比較訓練前後的指標</translation>
    </message>
    <message>
        <source>Warning: {warning}</source>
        <translation>警告：{warning}</translation>
    </message>
    <message>
        <source>Tokenizing {rows} training rows: {percent}%</source>
        <translation>正在對 {rows} 列訓練資料進行分詞：{percent}%</translation>
    </message>
    <message>
        <source>Tokenizing {rows} evaluation rows: {percent}%</source>
        <translation>正在對 {rows} 列評估資料進行分詞：{percent}%</translation>
    </message>
    <message>
        <source>The GPU ran out of memory saving the model: saving it from the CPU instead</source>
        <translation>儲存模型時顯示記憶體不足：改為在 CPU 上儲存</translation>
    </message>
    <message>
        <source>Trying the longest batch first: a lack of memory shows now</source>
        <translation>先試跑最長的一批資料：顯示記憶體不夠的話現在就能發現</translation>
    </message>
    <message>
        <source>The base model&apos;s evaluation would take over a minute: skipped</source>
        <translation>評估基礎模型預計要超過一分鐘：已略過</translation>
    </message>
    <message>
        <source>{folder} holds no model (no config.json or adapter_config.json).</source>
        <translation>{folder} 中沒有模型（沒有 config.json 或 adapter_config.json）。</translation>
    </message>
    <message>
        <source>Open the folder that an export or a finished run wrote.</source>
        <translation>請開啟匯出或訓練完成時寫入的資料夾。</translation>
    </message>
    <message>
        <source>Export the model again.</source>
        <translation>請重新匯出模型。</translation>
    </message>
    <message>
        <source>Check that the folder is complete (export it again), and that an adapter&apos;s base model is still where it was.</source>
        <translation>請確認資料夾完整（可重新匯出），以及轉接器的基礎模型仍在原本的位置。</translation>
    </message>
    <message>
        <source>PyTorch {version} uses {gpus}.</source>
        <translation>PyTorch {version} 正在使用 {gpus}。</translation>
    </message>
    <message>
        <source>Nothing to fix.</source>
        <translation>不需要修復。</translation>
    </message>
    <message>
        <source>No NVIDIA GPU: training runs on the CPU, and the CPU build is right.</source>
        <translation>沒有 NVIDIA GPU：訓練將在 CPU 上執行，CPU 版本正合適。</translation>
    </message>
    <message>
        <source>Nothing to fix. Training on the CPU is fine for small models and data.</source>
        <translation>不需要修復。小模型和小資料在 CPU 上訓練就可以。</translation>
    </message>
    <message>
        <source>No single PyTorch build supports all of {gpus}.</source>
        <translation>沒有任何一個 PyTorch 版本能同時支援 {gpus}。</translation>
    </message>
    <message>
        <source>Older GPUs (Maxwell to Volta) need cu126 builds, the newest (Blackwell) cu128 or newer. Train on one kind of GPU: set CUDA_VISIBLE_DEVICES to hide the others.</source>
        <translation>較舊的 GPU（Maxwell 到 Volta）需要 cu126 版本，最新的（Blackwell）需要 cu128 或更新版本。請只用一種 GPU 訓練：設定 CUDA_VISIBLE_DEVICES 隱藏其他 GPU。</translation>
    </message>
    <message>
        <source>The NVIDIA driver {driver} is too old for any PyTorch build for {gpus}.</source>
        <translation>NVIDIA 驅動程式 {driver} 太舊，任何支援 {gpus} 的 PyTorch 版本都無法執行。</translation>
    </message>
    <message>
        <source>Install {requirement}: {reason}.</source>
        <translation>請安裝 {requirement}：{reason}。</translation>
    </message>
    <message>
        <source>PyTorch is installed but does not load: {error}</source>
        <translation>PyTorch 已安裝，但無法載入：{error}</translation>
    </message>
    <message>
        <source>Reinstalling {requirement} replaces the damaged installation.</source>
        <translation>重新安裝 {requirement} 會取代已損壞的安裝。</translation>
    </message>
    <message>
        <source>CPU-only PyTorch on a machine with {gpus}: training would run on the CPU.</source>
        <translation>這台電腦有 {gpus}，但裝的是僅支援 CPU 的 PyTorch：訓練會在 CPU 上執行。</translation>
    </message>
    <message>
        <source>Installing {requirement} lets PyTorch use the GPU ({reason}).</source>
        <translation>安裝 {requirement} 後 PyTorch 就能使用 GPU（{reason}）。</translation>
    </message>
    <message>
        <source>PyTorch {version} needs a newer NVIDIA driver than {driver}.</source>
        <translation>PyTorch {version} 需要比 {driver} 更新的 NVIDIA 驅動程式。</translation>
    </message>
    <message>
        <source>Update the driver to {floor} or newer, or install {requirement} ({reason}).</source>
        <translation>請把驅動程式更新到 {floor} 或更新版本，或者安裝 {requirement}（{reason}）。</translation>
    </message>
    <message>
        <source>PyTorch {version} has no code for {gpu} (compute capability {capability}).</source>
        <translation>PyTorch {version} 不包含 {gpu}（運算能力 {capability}）的程式碼。</translation>
    </message>
    <message>
        <source>Installing {requirement} adds it ({reason}).</source>
        <translation>安裝 {requirement} 即可支援（{reason}）。</translation>
    </message>
    <message>
        <source>PyTorch {version} is a CUDA build but cannot use {gpus}.</source>
        <translation>PyTorch {version} 是 CUDA 版本，但無法使用 {gpus}。</translation>
    </message>
    <message>
        <source>Reinstalling {requirement} usually fixes this; if not, reinstall the NVIDIA driver.</source>
        <translation>重新安裝 {requirement} 通常能解決；如果不行，請重新安裝 NVIDIA 驅動程式。</translation>
    </message>
    <message>
        <source>the newest build for {gpus} that driver {driver} fully supports</source>
        <translation>驅動程式 {driver} 完全支援的、適用於 {gpus} 的最新版本</translation>
    </message>
    <message>
        <source>a build that driver {driver} can run</source>
        <translation>驅動程式 {driver} 能執行的版本</translation>
    </message>
    <message>
        <source>the newest PyTorch ({version}) with a build for {gpus} that driver {driver} runs</source>
        <translation>有適用於 {gpus} 且驅動程式 {driver} 能執行之版本的最新 PyTorch（{version}）</translation>
    </message>
    <message>
        <source>An AMD GPU was found; this app trains on NVIDIA GPUs or the CPU.</source>
        <translation>找到了 AMD GPU；本應用程式只在 NVIDIA GPU 或 CPU 上訓練。</translation>
    </message>
    <message>
        <source>ROCm builds of PyTorch exist for Linux but are not managed here yet.</source>
        <translation>Linux 上有 ROCm 版的 PyTorch，但本應用程式暫不管理它。</translation>
    </message>
    <message>
        <source>Reinstalling the CPU build fixes a damaged installation.</source>
        <translation>重新安裝 CPU 版本可以修復損壞的安裝。</translation>
    </message>
    <message>
        <source>Install the CPU build of PyTorch.</source>
        <translation>請安裝 CPU 版本的 PyTorch。</translation>
    </message>
    <message>
        <source>Install NVIDIA driver {floor} or newer ({newest} or newer for the newest builds), then check again.</source>
        <translation>請安裝 {floor} 或更新版本的 NVIDIA 驅動程式（要用最新的版本則需 {newest} 或更新），然後重新檢查。</translation>
    </message>
    <message>
        <source>Install NVIDIA driver {floor} or newer, then check again.</source>
        <translation>請安裝 {floor} 或更新版本的 NVIDIA 驅動程式，然後重新檢查。</translation>
    </message>
    <message>
        <source>Driver {driver} runs {tag} with a limited feature set; a newer driver is better.</source>
        <translation>驅動程式 {driver} 執行 {tag} 時只能使用部分功能；最好更新驅動程式。</translation>
    </message>
    <message>
        <source>step {step} | {metrics}</source>
        <translation>第 {step} 步 | {metrics}</translation>
    </message>
    <message>
        <source>Stopping after this step and saving a checkpoint (Ctrl-C again to quit at once)...</source>
        <translation>這一步結束後停止並儲存檢查點（再按一次 Ctrl-C 立即結束）……</translation>
    </message>
    <message>
        <source>error: {message}</source>
        <translation>錯誤：{message}</translation>
    </message>
    <message>
        <source>Wrote {file}. Column mapping:</source>
        <translation>已寫入 {file}。欄位對應：</translation>
    </message>
    <message>
        <source>Next: finetune-studio-cli preview {file}   then   finetune-studio-cli train {file}</source>
        <translation>下一步：finetune-studio-cli preview {file}   然後   finetune-studio-cli train {file}</translation>
    </message>
    <message>
        <source>Asked to end (SIGTERM): stopping after this step and saving a checkpoint...</source>
        <translation>收到結束要求（SIGTERM）：這一步結束後停止並儲存檢查點……</translation>
    </message>
    <message>
        <source>Ctrl-Break: stopping after this step and saving a checkpoint...</source>
        <translation>Ctrl-Break：這一步結束後停止並儲存檢查點……</translation>
    </message>
    <message>
        <source>The console is closing: stopping after this step and saving a checkpoint...</source>
        <translation>主控台正在關閉：這一步結束後停止並儲存檢查點……</translation>
    </message>
    <message>
        <source>{config}: OK. {train} training rows, {eval} for evaluation.</source>
        <translation>{config}：沒有問題。訓練資料 {train} 列，評估資料 {eval} 列。</translation>
    </message>
    <message>
        <source>{train} training rows, {eval} for evaluation. Columns: {columns}</source>
        <translation>訓練資料 {train} 列，評估資料 {eval} 列。欄位：{columns}</translation>
    </message>
    <message>
        <source>Column mapping:</source>
        <translation>欄位對應：</translation>
    </message>
    <message>
        <source>First rows ({count}):</source>
        <translation>前 {count} 列：</translation>
    </message>
    <message>
        <source>error: the exported folder does not reproduce the run&apos;s outputs (max difference {diff}) {error}</source>
        <translation>錯誤：匯出的資料夾無法重現訓練時的輸出（最大差異 {diff}）{error}</translation>
    </message>
    <message>
        <source>{rows} rows predicted from column {column}; written to {file} with {added} added.</source>
        <translation>已根據 {column} 欄位預測 {rows} 列；已寫入 {file}，新增 {added}。</translation>
    </message>
    <message>
        <source>{rows} evaluation rows</source>
        <translation>{rows} 列評估資料</translation>
    </message>
    <message>
        <source>accuracy  {value}</source>
        <translation>準確率    {value}</translation>
    </message>
    <message>
        <source>macro-F1  {value}</source>
        <translation>宏平均 F1 {value}</translation>
    </message>
    <message>
        <source>Confusion matrix (rows: true label; columns: predicted):</source>
        <translation>混淆矩陣（列：真實標籤；欄：預測標籤）：</translation>
    </message>
    <message>
        <source>error: PyTorch {version} is installed, but the GPU test failed: {error}</source>
        <translation>錯誤：PyTorch {version} 已安裝，但 GPU 測試失敗：{error}</translation>
    </message>
    <message>
        <source>Job written to {folder}.</source>
        <translation>作業已寫入 {folder}。</translation>
    </message>
    <message>
        <source>finished</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失敗</translation>
    </message>
    <message>
        <source>running</source>
        <translation>執行中</translation>
    </message>
    <message>
        <source>crashed</source>
        <translation>已當機</translation>
    </message>
    <message>
        <source>damaged</source>
        <translation>已損壞</translation>
    </message>
    <message>
        <source>Fine-tune Hugging Face models from a run config.</source>
        <translation>依訓練設定微調 Hugging Face 模型。</translation>
    </message>
    <message>
        <source>the language of messages (default: the system&apos;s)</source>
        <translation>訊息使用的語言（預設：跟隨系統）</translation>
    </message>
    <message>
        <source>write a commented run config with the column mapping guessed</source>
        <translation>產生附註解的訓練設定檔，並自動推測欄位對應</translation>
    </message>
    <message>
        <source>hub id, local model folder, or bundled:all-minilm-l6-v2</source>
        <translation>Hub ID、本機模型資料夾，或 bundled:all-minilm-l6-v2</translation>
    </message>
    <message>
        <source>local data files or a hub dataset id</source>
        <translation>本機資料檔案，或 Hub 資料集 ID</translation>
    </message>
    <message>
        <source>config file to write (default: run.toml)</source>
        <translation>要寫入的設定檔（預設：run.toml）</translation>
    </message>
    <message>
        <source>overwrite an existing config file</source>
        <translation>覆寫既有的設定檔</translation>
    </message>
    <message>
        <source>train as the config says</source>
        <translation>依設定進行訓練</translation>
    </message>
    <message>
        <source>a run folder, a run&apos;s name, or a model folder</source>
        <translation>訓練資料夾、訓練名稱或模型資料夾</translation>
    </message>
    <message>
        <source>the file to write (default: FILE.predicted.csv)</source>
        <translation>要寫入的檔案（預設：FILE.predicted.csv）</translation>
    </message>
    <message>
        <source>the column the model reads (default: as trained)</source>
        <translation>模型讀取的欄位（預設：與訓練時相同）</translation>
    </message>
    <message>
        <source>the longest generated answer</source>
        <translation>產生回答的最大長度</translation>
    </message>
    <message>
        <source>replace OUTPUT if it exists</source>
        <translation>如果 OUTPUT 已存在則覆寫</translation>
    </message>
    <message>
        <source>show a finished run&apos;s evaluation: per class, confusions, mistakes</source>
        <translation>顯示已完成訓練的評估：各類別指標、混淆情況和錯誤</translation>
    </message>
    <message>
        <source>wrong rows to show (the most confident first)</source>
        <translation>要顯示的錯誤列數（最有把握的在前）</translation>
    </message>
    <message>
        <source>override a config value, e.g. --set training.epochs=1 (repeatable)</source>
        <translation>覆寫設定中的某個值，例如 --set training.epochs=1（可重複使用）</translation>
    </message>
    <message>
        <source>Evaluations are kept by finished runs with evaluation rows.</source>
        <translation>只有帶評估資料、已完成的訓練才會儲存評估結果。</translation>
    </message>
    <message>
        <source>folder for run folders</source>
        <translation>存放訓練任務資料夾的位置</translation>
    </message>
    <message>
        <source>continue the latest stopped run of this config</source>
        <translation>繼續這份設定最近一次停止的訓練</translation>
    </message>
    <message>
        <source>train in a child process: a second Ctrl-C ends it at once, keeping the last checkpoint</source>
        <translation>在子行程中訓練：第二次按 Ctrl-C 會立即結束它，並保留最後一個檢查點</translation>
    </message>
    <message>
        <source>train with N processes, one per GPU, through accelerate launch (2 CPU processes without a GPU)</source>
        <translation>用 N 個行程訓練，每張 GPU 一個，透過 accelerate launch 啟動（沒有 GPU 時為 CPU 行程）</translation>
    </message>
    <message>
        <source>the GPUs to use, e.g. &quot;0,1&quot;</source>
        <translation>要使用的 GPU，例如 &quot;0,1&quot;</translation>
    </message>
    <message>
        <source>let the computer go to sleep during the run (by default it is kept awake)</source>
        <translation>允許電腦在訓練期間睡眠（預設保持喚醒）</translation>
    </message>
    <message>
        <source>how several GPUs share the work (default: the config&apos;s, else ddp)</source>
        <translation>多張 GPU 如何分擔工作（預設：設定檔中的設定，否則為 ddp）</translation>
    </message>
    <message>
        <source>check a config and its data without training</source>
        <translation>檢查設定及其資料，不進行訓練</translation>
    </message>
    <message>
        <source>show rows, column mapping and token-length statistics</source>
        <translation>顯示資料列、欄位對應與詞元長度統計</translation>
    </message>
    <message>
        <source>skip token statistics (no model download)</source>
        <translation>略過詞元統計（不下載模型）</translation>
    </message>
    <message>
        <source>write a finished run&apos;s model as a complete, verified folder</source>
        <translation>把訓練完成的模型匯出為完整、經過驗證的資料夾</translation>
    </message>
    <message>
        <source>a run folder, or a run&apos;s name in the runs folder</source>
        <translation>訓練任務資料夾，或訓練任務資料夾中某個任務的名稱</translation>
    </message>
    <message>
        <source>the folder to create</source>
        <translation>要建立的資料夾</translation>
    </message>
    <message>
        <source>LoRA runs: export the adapters alone, not merged</source>
        <translation>LoRA 訓練：只匯出轉接器，不合併</translation>
    </message>
    <message>
        <source>also write DEST.zip</source>
        <translation>同時產生 DEST.zip</translation>
    </message>
    <message>
        <source>replace DEST if it is not empty</source>
        <translation>DEST 不是空的時取代它</translation>
    </message>
    <message>
        <source>check the GPUs, the driver and the installed PyTorch</source>
        <translation>檢查 GPU、驅動程式與已安裝的 PyTorch</translation>
    </message>
    <message>
        <source>print the findings as JSON</source>
        <translation>以 JSON 格式輸出檢查結果</translation>
    </message>
    <message>
        <source>install the PyTorch build that fits</source>
        <translation>安裝相符的 PyTorch 版本</translation>
    </message>
    <message>
        <source>with --fix: show the install command, run nothing</source>
        <translation>與 --fix 一起用：只顯示安裝指令，不執行</translation>
    </message>
    <message>
        <source>a mirror or custom index instead of download.pytorch.org</source>
        <translation>用鏡像站或自訂索引取代 download.pytorch.org</translation>
    </message>
    <message>
        <source>list run folders</source>
        <translation>列出訓練任務資料夾</translation>
    </message>
    <message>
        <source>copy a run folder from elsewhere (a cluster job&apos;s runs/...) into the runs folder</source>
        <translation>把別處的訓練任務資料夾（叢集作業的 runs/...）複製到訓練任務資料夾</translation>
    </message>
    <message>
        <source>write a run as a job for another machine or a Slurm cluster</source>
        <translation>把訓練任務寫成作業，在另一台機器或 Slurm 叢集上執行</translation>
    </message>
    <message>
        <source>a self-contained folder: config, data, Accelerate config, launch.sh, job.sbatch</source>
        <translation>一個自給自足的資料夾：設定、資料、Accelerate 設定、launch.sh、job.sbatch</translation>
    </message>
    <message>
        <source>a new folder for the job</source>
        <translation>作業用的新資料夾</translation>
    </message>
    <message>
        <source>GPUs per machine (default: the config&apos;s)</source>
        <translation>每台機器的 GPU 數（預設：設定檔中的值）</translation>
    </message>
    <message>
        <source>machines for the Slurm script (default: 1)</source>
        <translation>Slurm 指令碼使用的機器數（預設：1）</translation>
    </message>
    <message>
        <source>{file} exists already.</source>
        <translation>{file} 已經存在。</translation>
    </message>
    <message>
        <source>Choose another name with -o, or add --force to overwrite it.</source>
        <translation>請用 -o 換一個名稱，或加上 --force 覆寫它。</translation>
    </message>
    <message>
        <source>mean train loss {loss}</source>
        <translation>平均訓練損失 {loss}</translation>
    </message>
    <message>
        <source>note: this computer could not be kept awake; if it sleeps, the run stops there.</source>
        <translation>注意：無法阻止這台電腦進入睡眠；如果它睡眠了，訓練會就此中斷。</translation>
    </message>
    <message>
        <source>note: {note}</source>
        <translation>提示：{note}</translation>
    </message>
    <message>
        <source>Finished. Model saved in {folder}</source>
        <translation>訓練完成。模型已儲存到 {folder}</translation>
    </message>
    <message>
        <source>Checking every row…</source>
        <translation>正在檢查每一列……</translation>
    </message>
    <message>
        <source>Tokens ({name}): min {min}, median {median}, p95 {p95}, max {max}; {over} of {count} longer than max_length {limit}</source>
        <translation>詞元數（{name}）：最少 {min}，中位數 {median}，p95 {p95}，最多 {max}；{count} 筆中有 {over} 筆超過 max_length {limit}</translation>
    </message>
    <message>
        <source>No run folder {run} was found.</source>
        <translation>找不到訓練任務資料夾 {run}。</translation>
    </message>
    <message>
        <source>List runs with: finetune-studio-cli runs</source>
        <translation>用這個指令列出訓練任務：finetune-studio-cli runs</translation>
    </message>
    <message>
        <source>Exported to {folder} and {archive}</source>
        <translation>已匯出到 {folder} 與 {archive}</translation>
    </message>
    <message>
        <source>Exported to {folder}</source>
        <translation>已匯出到 {folder}</translation>
    </message>
    <message>
        <source>Logged to MLflow as {uri}</source>
        <translation>已記錄到 MLflow：{uri}</translation>
    </message>
    <message>
        <source>Verified: reloaded in a fresh process, outputs on {count} examples differ by at most {diff}.</source>
        <translation>驗證通過：在新的行程中重新載入後，{count} 個範例的輸出最多相差 {diff}。</translation>
    </message>
    <message>
        <source>No run or model folder {model} was found.</source>
        <translation>找不到訓練或模型資料夾 {model}。</translation>
    </message>
    <message>
        <source>{file} exists.</source>
        <translation>{file} 已存在。</translation>
    </message>
    <message>
        <source>Choose another output name, or add --force to replace it.</source>
        <translation>請換一個輸出檔名，或加上 --force 覆寫它。</translation>
    </message>
    <message>
        <source>loss</source>
        <translation>損失</translation>
    </message>
    <message>
        <source>perplexity</source>
        <translation>困惑度</translation>
    </message>
    <message>
        <source>(BLEU and chrF over the first {count} rows)</source>
        <translation>（BLEU 和 chrF 基於前 {count} 列）</translation>
    </message>
    <message>
        <source>prompt:     {text}</source>
        <translation>提示：     {text}</translation>
    </message>
    <message>
        <source>reference:  {text}</source>
        <translation>參考答案： {text}</translation>
    </message>
    <message>
        <source>fine-tuned: {text}</source>
        <translation>微調後：   {text}</translation>
    </message>
    <message>
        <source>{run} has no evaluation.</source>
        <translation>{run} 沒有評估結果。</translation>
    </message>
    <message>
        <source>Wrong, the most confident first ({count} in all):</source>
        <translation>判斷錯誤的資料，最有把握的在前（共 {count} 列）：</translation>
    </message>
    <message>
        <source>Finetune Studio is running ({what}), and PyTorch cannot be replaced while it is in use.</source>
        <translation>Finetune Studio 正在執行（{what}），PyTorch 正在使用中，無法取代。</translation>
    </message>
    <message>
        <source>Close the app and stop command-line runs, then run doctor --fix again.</source>
        <translation>請關閉應用程式並停止命令列中的訓練，然後再執行 doctor --fix。</translation>
    </message>
    <message>
        <source>Installing PyTorch</source>
        <translation>正在安裝 PyTorch</translation>
    </message>
    <message>
        <source>Proved: a matrix multiplication ran on {device} in {seconds} s.</source>
        <translation>驗證成功：在 {device} 上完成一次矩陣乘法，耗時 {seconds} 秒。</translation>
    </message>
    <message>
        <source>One machine: {command}</source>
        <translation>單台機器：{command}</translation>
    </message>
    <message>
        <source>Slurm: cd {folder} &amp;&amp; sbatch job.sbatch</source>
        <translation>Slurm：cd {folder} &amp;&amp; sbatch job.sbatch</translation>
    </message>
    <message>
        <source>The run folder ends up in {folder}; import it with: finetune-studio-cli runs --import FOLDER</source>
        <translation>訓練任務資料夾會出現在 {folder} 中；用這條指令匯入：finetune-studio-cli runs --import FOLDER</translation>
    </message>
    <message>
        <source>Imported as {folder}.</source>
        <translation>已匯入為 {folder}。</translation>
    </message>
    <message>
        <source>No runs in {folder}.</source>
        <translation>{folder} 中沒有訓練任務。</translation>
    </message>
    <message>
        <source>The data file {file} does not exist.</source>
        <translation>資料檔案 {file} 不存在。</translation>
    </message>
    <message>
        <source>Check the path.</source>
        <translation>請檢查路徑。</translation>
    </message>
    <message>
        <source>warning: {field}: {problem}</source>
        <translation>警告：{field}：{problem}</translation>
    </message>
    <message>
        <source>No stopped or interrupted run of {config} with a checkpoint was found in {folder}.</source>
        <translation>在 {folder} 中找不到 {config} 已停止或中斷、且有檢查點的訓練任務。</translation>
    </message>
    <message>
        <source>Start it without --resume, or pass the config.toml inside the run folder to resume.</source>
        <translation>請去掉 --resume 重新開始，或者傳入訓練任務資料夾裡的 config.toml 來繼續訓練。</translation>
    </message>
    <message>
        <source>Ending the training process now; the run keeps its last checkpoint.</source>
        <translation>正在立即結束訓練行程；訓練任務保留最後一個檢查點。</translation>
    </message>
    <message>
        <source>Details: {file}</source>
        <translation>詳細資訊：{file}</translation>
    </message>
    <message>
        <source>base model: {text}</source>
        <translation>基礎模型： {text}</translation>
    </message>
    <message>
        <source>OK: {headline}</source>
        <translation>正常：{headline}</translation>
    </message>
    <message>
        <source>Needs attention: {headline}</source>
        <translation>需要處理：{headline}</translation>
    </message>
    <message>
        <source>(resumable)</source>
        <translation>（可繼續）</translation>
    </message>
    <message>
        <source>Stopped at once. A run can resume from its last checkpoint with --resume.</source>
        <translation>已立即停止。可以用 --resume 從最後一個檢查點繼續訓練。</translation>
    </message>
    <message>
        <source>Check that the path exists and that you may write there, then try again.</source>
        <translation>請確認路徑存在且你有寫入權限，然後再試一次。</translation>
    </message>
    <message>
        <source>Finetune Studio stopped with an unexpected error: {error}</source>
        <translation>Finetune Studio 因非預期的錯誤而停止：{error}</translation>
    </message>
    <message>
        <source>The details are in {file}; please attach that file when you report the problem.</source>
        <translation>詳細資訊在 {file} 中；回報問題時請附上這個檔案。</translation>
    </message>
    <message>
        <source>{step}...</source>
        <translation>{step}……</translation>
    </message>
    <message>
        <source>Run folder: {folder}</source>
        <translation>訓練任務資料夾：{folder}</translation>
    </message>
    <message>
        <source>Start a new run from this config without --resume.</source>
        <translation>請不加 --resume，用這份設定開始新的訓練。</translation>
    </message>
    <message>
        <source>Stopped. The run folder is {folder}.</source>
        <translation>已停止。訓練任務資料夾是 {folder}。</translation>
    </message>
    <message>
        <source>Stopped before training began; no run folder was kept.</source>
        <translation>在訓練開始前就已停止；沒有保留訓練任務資料夾。</translation>
    </message>
    <message>
        <source>{label} called {predicted} ({confidence:.0%}): {text}</source>
        <translation>{label} 被判為 {predicted}（{confidence:.0%}）：{text}</translation>
    </message>
    <message>
        <source>Fix it with: finetune-studio-cli doctor --fix   (runs: {command})</source>
        <translation>修復方法：finetune-studio-cli doctor --fix   （會執行：{command}）</translation>
    </message>
    <message>
        <source>A file could not be read or written: {error} ({file}).</source>
        <translation>無法讀寫檔案：{error}（{file}）。</translation>
    </message>
    <message>
        <source>A file could not be read or written: {error}.</source>
        <translation>無法讀寫檔案：{error}。</translation>
    </message>
    <message>
        <source>Training on {device}: {train} examples, {eval} for evaluation, {steps} steps, resuming at step {step}.</source>
        <translation>在 {device} 上訓練：訓練範例 {train} 個，評估範例 {eval} 個，共 {steps} 步，從第 {step} 步繼續。</translation>
    </message>
    <message>
        <source>Training on {device}: {train} examples, {eval} for evaluation, {steps} steps.</source>
        <translation>在 {device} 上訓練：訓練範例 {train} 個，評估範例 {eval} 個，共 {steps} 步。</translation>
    </message>
    <message>
        <source>The run {run} cannot be resumed: it is {status} and has no checkpoint.</source>
        <translation>訓練任務 {run} 無法繼續：它的狀態是 {status}，而且沒有檢查點。</translation>
    </message>
    <message>
        <source>The run {run} cannot be resumed: it is {status} and not stopped.</source>
        <translation>訓練任務 {run} 無法繼續：它的狀態是 {status}，不是已停止。</translation>
    </message>
    <message>
        <source>Continue with: {command}</source>
        <translation>繼續訓練：{command}</translation>
    </message>
    <message>
        <source>precision</source>
        <translation>精確率</translation>
    </message>
    <message>
        <source>recall</source>
        <translation>召回率</translation>
    </message>
    <message>
        <source>rows</source>
        <translation>列數</translation>
    </message>
    <message>
        <source>Checkpoint saved at step {step}.</source>
        <translation>已在第 {step} 步儲存檢查點。</translation>
    </message>
    <message>
        <source>Starting with: {changes}.</source>
        <translation>開始時改為：{changes}。</translation>
    </message>
    <message>
        <source>Going on at step {step} with: {changes}.</source>
        <translation>在第 {step} 步繼續，改為：{changes}。</translation>
    </message>
    <message>
        <source>Going back to the checkpoint at step {step} with: {changes}.</source>
        <translation>回到第 {step} 步的檢查點，改為：{changes}。</translation>
    </message>
    <message>
        <source>Starting again from the beginning with: {changes}.</source>
        <translation>從頭重新開始，改為：{changes}。</translation>
    </message>
    <message>
        <source>where to download from: hf (Hugging Face), mirror, modelscope or auto (default: the setting)</source>
        <translation>從哪裡下載：hf（Hugging Face）、mirror（鏡像站）、modelscope 或 auto（預設：依設定）</translation>
    </message>
    <message>
        <source>Labels that differ only in case were merged into one class each: {labels}.</source>
        <translation>只有大小寫不同的標籤已各自合併為一類：{labels}。</translation>
    </message>
    <message>
        <source>Labels that differ only in case are separate classes (rows of each): {labels}. If they are one class, tick &quot;Labels that differ only in case are one class&quot; under Columns (data.merge_label_case in a config).</source>
        <translation>只有大小寫不同的標籤被當作不同的類（各自的列數）：{labels}。如果它們是同一類，請在「欄位」下勾選「只有大小寫不同的標籤視為同一類」（設定檔中為 data.merge_label_case）。</translation>
    </message>
    <message>
        <source>Give those rows {fix}, or leave them out: tick &quot;Leave out rows with a blank text or no label&quot; under Columns (data.drop_bad_rows = true in a config).</source>
        <translation>請為這些列補上{fix}，或略過它們：在「欄位」下勾選「略過文字為空或沒有標籤的列」（設定檔中為 data.drop_bad_rows = true）。</translation>
    </message>
    <message>
        <source>Rows with no readable prompt, chosen and rejected answer ({count}): {rows}.</source>
        <translation>讀不出提示詞、選中回答和被拒回答的列（{count} 列）：{rows}。</translation>
    </message>
    <message>
        <source>Rows whose chosen answer is the rejected one ({count}): {rows}. Such a pair teaches nothing.</source>
        <translation>選中回答與被拒回答相同的列（{count} 列）：{rows}。這樣的偏好對什麼也學不到。</translation>
    </message>
    <message>
        <source>Rows with an empty answer ({count}): {rows}.</source>
        <translation>有空回答的列（{count} 列）：{rows}。</translation>
    </message>
    <message>
        <source>Rows whose prompt alone fills the max length of {max} tokens, so that both answers would be cut to nothing ({count}): {rows}.</source>
        <translation>僅提示詞就佔滿了 {max} 個詞元的最大長度、兩個回答都會被截成空的列（{count} 列）：{rows}。</translation>
    </message>
    <message>
        <source>The max length of {max} tokens cuts the answers of {count} of {total} pairs ({share:.0%}): {rows}.</source>
        <translation>{max} 個詞元的最大長度會截斷 {total} 個偏好對中 {count} 個的回答（{share:.0%}）：{rows}。</translation>
    </message>
    <message>
        <source>llama.cpp could not be installed (pip exit code {code}). Check the connection (or the pip mirror), then try again; on Linux, pip can also build it with a C++ compiler.</source>
        <translation>無法安裝 llama.cpp（pip 結束代碼 {code}）。請檢查網路連線（或 pip 鏡像）後重試；在 Linux 上，pip 也可以用 C++ 編譯器自行編譯它。</translation>
    </message>
    <message>
        <source>llama.cpp is installed: GGUF files can be checked now.</source>
        <translation>llama.cpp 已安裝：現在可以驗證 GGUF 檔案了。</translation>
    </message>
    <message>
        <source>The install of llama.cpp was cancelled; nothing else changed.</source>
        <translation>已取消安裝 llama.cpp，其他內容沒有改變。</translation>
    </message>
    <message>
        <source>Check the network, or switch the source: --source mirror (https://hf-mirror.com) or --source modelscope, or HF_ENDPOINT; or give a local model folder.</source>
        <translation>請檢查網路，或換一個來源：--source mirror（https://hf-mirror.com）或 --source modelscope，或設定 HF_ENDPOINT；也可以給出本機模型資料夾。</translation>
    </message>
    <message>
        <source>{source} ({host})</source>
        <translation>{source}（{host}）</translation>
    </message>
    <message>
        <source>Check the network, or switch the source (a mirror such as https://hf-mirror.com, or ModelScope) in Settings &gt; Model sources, or pick a local model folder.</source>
        <translation>請檢查網路，或在「設定 &gt; 模型下載來源」中換一個來源（鏡像站如 https://hf-mirror.com，或 ModelScope），也可以選擇本機模型資料夾。</translation>
    </message>
    <message>
        <source>no answer</source>
        <translation>沒有回應</translation>
    </message>
    <message>
        <source>the name {host} could not be looked up: no network, or no DNS</source>
        <translation>無法解析網域 {host}：沒有網路或沒有 DNS</translation>
    </message>
    <message>
        <source>the connection was refused</source>
        <translation>連線被拒絕</translation>
    </message>
    <message>
        <source>its certificate is not trusted on this computer</source>
        <translation>它的憑證在這台電腦上不受信任</translation>
    </message>
    <message>
        <source>no network</source>
        <translation>沒有網路</translation>
    </message>
    <message>
        <source>The search for {query} could not run: {source} did not answer within {seconds} s ({problem}).</source>
        <translation>無法搜尋 {query}：{source} 在 {seconds} 秒內沒有回應（{problem}）。</translation>
    </message>
    <message>
        <source>{name} is not on this computer, and {source} did not answer within {seconds} s ({problem}).</source>
        <translation>{name} 不在這台電腦上，而 {source} 在 {seconds} 秒內沒有回應（{problem}）。</translation>
    </message>
    <message>
        <source>{file} of {name} arrived damaged from {source} each time it was fetched: its bytes do not match the hub&apos;s checksum, so it was deleted.</source>
        <translation>{name} 的 {file} 每次從 {source} 下載都已損壞：其內容與模型庫公布的校驗和不符，因此已刪除。</translation>
    </message>
    <message>
        <source>Unverified: only {agree} of {total} answers agree with transformers on the first {tokens} tokens ({needed} needed).</source>
        <translation>未通過驗證：{total} 個回答中只有 {agree} 個在前 {tokens} 個詞元上與 transformers 一致（需要 {needed} 個）。</translation>
    </message>
    <message>
        <source>For &quot;{prompt}&quot; the answers part at token {index}: transformers wrote &quot;{expected}&quot;, llama.cpp wrote &quot;{got}&quot;.</source>
        <translation>對於「{prompt}」，兩邊的回答從第 {index} 個詞元開始不同：transformers 寫的是「{expected}」，llama.cpp 寫的是「{got}」。</translation>
    </message>
    <message>
        <source>llama.cpp (the llama-cpp-python package) is not installed.</source>
        <translation>未安裝 llama.cpp（llama-cpp-python 套件）。</translation>
    </message>
    <message>
        <source>the checking process ended without an answer (exit code {code}): {error}</source>
        <translation>驗證行程沒有給出結果就結束了（結束代碼 {code}）：{error}</translation>
    </message>
    <message>
        <source>Not verified: {reason}</source>
        <translation>未驗證：{reason}</translation>
    </message>
    <message>
        <source>Unverified: {reason}</source>
        <translation>未通過驗證：{reason}</translation>
    </message>
    <message>
        <source>Verified by llama.cpp: {agree} of {total} answers agree with transformers on the first {tokens} tokens (at least {needed} needed).</source>
        <translation>已由 llama.cpp 驗證：{total} 個回答中有 {agree} 個在前 {tokens} 個詞元上與 transformers 一致（至少需要 {needed} 個）。</translation>
    </message>
    <message>
        <source>llama.cpp reads the prompt &quot;{prompt}&quot; as other tokens than transformers: the tokenizer in the file differs. transformers wrote &quot;{expected}&quot;, llama.cpp wrote &quot;{got}&quot;.</source>
        <translation>llama.cpp 把提示詞「{prompt}」切分成了與 transformers 不同的詞元：檔案裡的分詞器不一樣。transformers 寫的是「{expected}」，llama.cpp 寫的是「{got}」。</translation>
    </message>
    <message>
        <source>llama.cpp could not load or run the file: {error}</source>
        <translation>llama.cpp 無法載入或執行這個檔案：{error}</translation>
    </message>
    <message>
        <source>the model could not be run by transformers to compare with: {error}</source>
        <translation>無法用 transformers 執行模型來比對：{error}</translation>
    </message>
    <message>
        <source>the check by llama.cpp was skipped.</source>
        <translation>略過了 llama.cpp 的驗證。</translation>
    </message>
    <message>
        <source>Unknown GGUF quantization {quant}; use f16, q8_0 or q4_k_m.</source>
        <translation>未知的 GGUF 量化方式 {quant}；請使用 f16、q8_0 或 q4_k_m。</translation>
    </message>
    <message>
        <source>Pick a chat model such as Qwen (Qwen/Qwen2.5-0.5B-Instruct), or one of your finished chat runs.</source>
        <translation>請選擇對話模型，例如 Qwen（Qwen/Qwen2.5-0.5B-Instruct），或您自己訓練完成的對話模型。</translation>
    </message>
    <message>
        <source>{model} cannot be used for preference tuning: it is not a decoder model that writes text ({kind}), and preference tuning teaches a chat model which of its answers is better.</source>
        <translation>{model} 不能用於偏好微調：它不是能生成文字的解碼器模型（{kind}），而偏好微調是教對話模型分辨自己的哪個回答更好。</translation>
    </message>
    <message>
        <source>Left out {bad} of {total} rows of {source}: {problems}</source>
        <translation>已略過 {source} 的 {total} 列中的 {bad} 列：{problems}</translation>
    </message>
    <message>
        <source>A max length of {keep} keeps 95% of the pairs whole.</source>
        <translation>最大長度設為 {keep} 可讓 95% 的樣本對保持完整。</translation>
    </message>
    <message>
        <source>{source}: {problems}</source>
        <translation>{source}：{problems}</translation>
    </message>
    <message>
        <source>Correct those rows, or leave them out: tick &quot;Leave out rows with a blank text or no label&quot; under Columns (data.drop_bad_rows = true in a config).</source>
        <translation>請修正這些列，或者略過它們：在「欄位」下勾選「略過文字為空或沒有標籤的列」（設定檔中為 data.drop_bad_rows = true）。</translation>
    </message>
    <message>
        <source>Map chosen and rejected to the columns that hold the two answers (and prompt to the prompt&apos;s, when the answers do not hold the whole conversation).</source>
        <translation>把 chosen 和 rejected 對應到存放兩個回答的欄（如果回答裡沒有整段對話，再把 prompt 對應到提示詞所在的欄）。</translation>
    </message>
    <message>
        <source>Left out {count} pairs of {source} whose prompt fills the max length.</source>
        <translation>已略過 {source} 中提示詞佔滿最大長度的 {count} 個偏好對。</translation>
    </message>
    <message>
        <source>No pair of {source} has room for its answers within {length} tokens.</source>
        <translation>{source} 中沒有一個偏好對能在 {length} 個詞元內放下回答。</translation>
    </message>
    <message>
        <source>Publish again: large files the hub already received are not sent again.</source>
        <translation>請再次發布：模型中心已收到的大型檔案不會重新上傳。</translation>
    </message>
    <message>
        <source>{source} does not take uploads: it only mirrors downloads.</source>
        <translation>{source} 不接受上傳：它只鏡像下載。</translation>
    </message>
    <message>
        <source>Publish to Hugging Face itself: choose Hugging Face in Settings &gt; Model sources (command line: --endpoint {url}).</source>
        <translation>請直接發布到 Hugging Face：在「設定 &gt; 模型來源」中選擇 Hugging Face（命令列：--endpoint {url}）。</translation>
    </message>
    <message>
        <source>{names} and {count} more</source>
        <translation>{names} 等另外 {count} 個</translation>
    </message>
    <message>
        <source>{source}: {count} rows name no picture in column &quot;{column}&quot; ({rows}).</source>
        <translation>{source}：{count} 列在欄「{column}」中沒有指明圖片（{rows}）。</translation>
    </message>
    <message>
        <source>a picture</source>
        <translation>一張圖片</translation>
    </message>
    <message>
        <source>{source}: 1 row names no picture in column &quot;{column}&quot; ({rows}).</source>
        <translation>{source}：1 列在欄「{column}」中沒有指明圖片（{rows}）。</translation>
    </message>
    <message>
        <source>Map {role} to the column that holds the pictures.</source>
        <translation>請把 {role} 對應到存放圖片的欄。</translation>
    </message>
    <message>
        <source>Left out: {problem}</source>
        <translation>已略過：{problem}</translation>
    </message>
    <message>
        <source>{folder} holds no pictures.</source>
        <translation>{folder} 中沒有圖片。</translation>
    </message>
    <message>
        <source>Choose the folder with the pictures (.jpg, .png, .webp ...).</source>
        <translation>請選擇存放圖片（.jpg、.png、.webp 等）的資料夾。</translation>
    </message>
    <message>
        <source>{folder} holds no class folders with pictures in them.</source>
        <translation>{folder} 中沒有裝著圖片的類別資料夾。</translation>
    </message>
    <message>
        <source>Put the pictures of each class in a folder of its own named after the class, e.g. {folder}/cat/1.jpg and {folder}/dog/2.jpg.</source>
        <translation>請把每個類別的圖片放進以該類別命名的資料夾，例如 {folder}/cat/1.jpg 和 {folder}/dog/2.jpg。</translation>
    </message>
    <message>
        <source>Checking {count} pictures</source>
        <translation>正在檢查 {count} 張圖片</translation>
    </message>
    <message>
        <source>Replace or remove those pictures, or leave them out: tick &quot;Leave out rows with a missing or unreadable picture, or no label&quot; under Columns (data.drop_bad_rows = true in a config).</source>
        <translation>請替換或刪除這些圖片，或略過它們：在「欄位」下勾選「略過缺少圖片、圖片無法讀取或沒有標籤的列」（設定中為 data.drop_bad_rows = true）。</translation>
    </message>
    <message>
        <source>The folder {folder} could not be read: {error}</source>
        <translation>無法讀取資料夾 {folder}：{error}</translation>
    </message>
    <message>
        <source>Check that the folder exists and that you may read it.</source>
        <translation>請確認該資料夾存在，並且你有權讀取它。</translation>
    </message>
    <message>
        <source>Check that the column {column} names the pictures, and that they are there.</source>
        <translation>請確認欄 {column} 指明了圖片，並且這些圖片確實存在。</translation>
    </message>
    <message>
        <source>{source}: {count} rows have no conversation that can be read in column &quot;{column}&quot; ({rows}): each needs an assistant reply, and as many pictures as image parts.</source>
        <translation>{source}：欄位「{column}」中有 {count} 列沒有可讀取的對話（{rows}）：每列都需要一則助理回覆，且圖片數量要與圖片預留位置數量相同。</translation>
    </message>
    <message>
        <source>{source}: 1 row has no conversation that can be read in column &quot;{column}&quot; ({rows}): it needs an assistant reply, and as many pictures as image parts.</source>
        <translation>{source}：欄位「{column}」中有 1 列沒有可讀取的對話（{rows}）：它需要一則助理回覆，且圖片數量要與圖片預留位置數量相同。</translation>
    </message>
    <message>
        <source>{source}: 1 picture is very large (over 40 megapixels) ({rows}).</source>
        <translation>{source}：1 張圖片非常大（超過 4000 萬像素）（{rows}）。</translation>
    </message>
    <message>
        <source>row {row}</source>
        <translation>第 {row} 列</translation>
    </message>
    <message>
        <source>The first was looked for at {path} (a relative path in a table is read from the table&apos;s own folder).</source>
        <translation>第一張是在 {path} 尋找的（表格中的相對路徑相對於表格本身所在的資料夾）。</translation>
    </message>
    <message>
        <source>{source}: 1 picture is missing ({rows}).</source>
        <translation>{source}：1 張圖片不存在（{rows}）。</translation>
    </message>
    <message>
        <source>{source}: 1 file is not a picture that can be read ({rows}).</source>
        <translation>{source}：1 個檔案不是可讀取的圖片（{rows}）。</translation>
    </message>
    <message>
        <source>{source}: 1 picture is cut short (truncated) ({rows}).</source>
        <translation>{source}：1 張圖片不完整（被截斷）（{rows}）。</translation>
    </message>
    <message>
        <source>{source}: 1 picture has CMYK or 16-bit pixels, which models read wrongly ({rows}).</source>
        <translation>{source}：1 張圖片是 CMYK 或 16 位元像素，模型會讀錯（{rows}）。</translation>
    </message>
    <message>
        <source>Check that the conversations name their pictures, and that they are there.</source>
        <translation>請確認對話指明了其中的圖片，並且這些圖片確實存在。</translation>
    </message>
    <message>
        <source>{folder} holds the data&apos;s parts ({parts}), each with its class folders, not one folder per class.</source>
        <translation>{folder} 中是資料的各個部分（{parts}），每部分各有類別資料夾，而不是每個類別一個資料夾。</translation>
    </message>
    <message>
        <source>Choose {folder}/{train} as the data, and the other part as the evaluation files (validation.files in a config).</source>
        <translation>請選擇 {folder}/{train} 作為資料，另一部分作為評估檔案（設定中為 validation.files）。</translation>
    </message>
    <message>
        <source>Pick a vision-language model such as SmolVLM (HuggingFaceTB/SmolVLM-256M-Instruct) or Qwen2-VL (Qwen/Qwen2-VL-2B-Instruct).</source>
        <translation>請選擇視覺語言模型，例如 SmolVLM（HuggingFaceTB/SmolVLM-256M-Instruct）或 Qwen2-VL（Qwen/Qwen2-VL-2B-Instruct）。</translation>
    </message>
    <message>
        <source>{model} cannot be used for vision-language fine-tuning: it does not read pictures beside text ({kind}).</source>
        <translation>{model} 不能用於視覺語言微調：它不能在文字之外讀取圖片（{kind}）。</translation>
    </message>
    <message>
        <source>{model} cannot be used for image classification: it does not see pictures ({kind}).</source>
        <translation>{model} 不能用於影像分類：它不讀取圖片（{kind}）。</translation>
    </message>
    <message>
        <source>The model folder {folder} has no preprocessor_config.json; without it the pictures cannot be resized and scaled the way the model was trained to see them.</source>
        <translation>模型資料夾 {folder} 中沒有 preprocessor_config.json；沒有它，就無法按模型訓練時的方式縮放和歸一化圖片。</translation>
    </message>
    <message>
        <source>Copy preprocessor_config.json from where the model came from into the folder, or pick the model&apos;s complete folder.</source>
        <translation>請從模型的來源處把 preprocessor_config.json 複製到該資料夾，或選擇模型的完整資料夾。</translation>
    </message>
    <message>
        <source>Left out {count} rows of {source} whose prompt is longer than the max length ({length} tokens) ({rows}).</source>
        <translation>已略過 {source} 中 {count} 列提示詞長度超過最大長度（{length} 個詞元）的資料（{rows}）。</translation>
    </message>
    <message>
        <source>No prompt of {source} fits within the max length ({length} tokens), the system prompt included.</source>
        <translation>{source} 中沒有一個提示詞（含系統提示詞）在最大長度（{length} 個詞元）以內。</translation>
    </message>
    <message>
        <source>Raise training.max_length (Memory &amp; speed), or shorten the prompts.</source>
        <translation>請調高 training.max_length（「記憶體與速度」），或縮短提示。</translation>
    </message>
    <message>
        <source>This model reads pictures at one size of its own; images.resolution ({pixels} pixels) is not used.</source>
        <translation>該模型以自己固定的尺寸讀取圖片；不使用 images.resolution（{pixels} 像素）。</translation>
    </message>
    <message>
        <source>Every training row is longer than the max length of {limit} tokens with its picture ({tokens} tokens a picture).</source>
        <translation>加上圖片後，每個訓練列都超過最大長度 {limit} 個詞元（每張圖片 {tokens} 個詞元）。</translation>
    </message>
    <message>
        <source>Raise the max length on Memory &amp; speed, or lower images.resolution.</source>
        <translation>請在「記憶體與速度」中提高最大長度，或降低 images.resolution。</translation>
    </message>
    <message>
        <source>Left out {count} of {total} {part} rows longer than the max length of {limit} tokens with their picture ({where}).</source>
        <translation>已略過 {total} 列 {part} 資料中的 {count} 列：加上圖片後超過最大長度 {limit} 個詞元（{where}）。</translation>
    </message>
    <message>
        <source>picture {number}</source>
        <translation>圖片 {number}</translation>
    </message>
    <message>
        <source>{model} cannot be used for image classification: its architecture has no such head.</source>
        <translation>{model} 不能用於影像分類：它的架構沒有這種輸出頭。</translation>
    </message>
    <message>
        <source>{model} cannot be used for vision-language fine-tuning: its architecture does not read pictures and text.</source>
        <translation>{model} 不能用於視覺語言微調：它的架構不能同時讀取圖片和文字。</translation>
    </message>
    <message>
        <source>Pick a vision-language model such as SmolVLM, Qwen2-VL or Gemma 3.</source>
        <translation>請選擇視覺語言模型，例如 SmolVLM、Qwen2-VL 或 Gemma 3。</translation>
    </message>
    <message>
        <source>The image processor of {model} could not be loaded: {error}</source>
        <translation>無法載入 {model} 的影像處理器：{error}</translation>
    </message>
    <message>
        <source>{repo} already holds files ({names}); nothing was sent.</source>
        <translation>{repo} 中已有檔案（{names}）；未上傳任何內容。</translation>
    </message>
    <message>
        <source>Publish to a new repository, or let this one be replaced (files of the same names are overwritten, the others deleted; command line: --replace).</source>
        <translation>請發布到新儲存庫，或允許取代此儲存庫的內容（同名檔案被覆寫，其餘被刪除；命令列：--replace）。</translation>
    </message>
    <message>
        <source>The upload to {source} stopped: {problem}.</source>
        <translation>上傳到{source}中斷：{problem}。</translation>
    </message>
    <message>
        <source>Publishing needs a Hugging Face token, and none is saved.</source>
        <translation>發布需要 Hugging Face 權杖，但尚未儲存。</translation>
    </message>
    <message>
        <source>Make one with the Write role at {page} and add it in Settings &gt; Model sources (or set HF_TOKEN).</source>
        <translation>請在 {page} 建立一個具有 Write 權限的權杖，並在「設定 &gt; 模型來源」中加入（或設定 HF_TOKEN）。</translation>
    </message>
    <message>
        <source>The saved Hugging Face token of {user} may only read; publishing needs one that may write.</source>
        <translation>已儲存的 {user} 的 Hugging Face 權杖只能讀取；發布需要可寫入的權杖。</translation>
    </message>
    <message>
        <source>Make a token with the Write role at {page} and save it in Settings &gt; Model sources.</source>
        <translation>請在 {page} 建立一個具有 Write 權限的權杖，並儲存到「設定 &gt; 模型來源」。</translation>
    </message>
    <message>
        <source>Hugging Face did not answer the question of who the token is.</source>
        <translation>Hugging Face 沒有回答該權杖屬於誰。</translation>
    </message>
    <message>
        <source>Try again in a while.</source>
        <translation>請稍後再試。</translation>
    </message>
    <message>
        <source>{source} does not let this token write to {repo}.</source>
        <translation>{source} 不允許此權杖寫入 {repo}。</translation>
    </message>
    <message>
        <source>Publish under your own account or an organization you may write to, or use a token that may write there.</source>
        <translation>請發布到你自己的帳號或你有寫入權限的組織下，或使用可寫入該處的權杖。</translation>
    </message>
    <message>
        <source>{source} refused the upload to {repo}: {reason}</source>
        <translation>{source} 拒絕了上傳到 {repo}：{reason}</translation>
    </message>
    <message>
        <source>Publishing cancelled; the repository was not changed.</source>
        <translation>已取消發布；儲存庫未被變更。</translation>
    </message>
    <message>
        <source>Publish again to go on: large files the hub already received are not sent again.</source>
        <translation>再次發布即可繼續：模型中心已收到的大型檔案不會重新上傳。</translation>
    </message>
    <message>
        <source>{source} refused the saved Hugging Face token (it may be mistyped or deleted).</source>
        <translation>{source} 拒絕了已儲存的 Hugging Face 權杖（可能輸入錯誤或已刪除）。</translation>
    </message>
    <message>
        <source>Make a new one with the Write role at {page} and save it in Settings &gt; Model sources.</source>
        <translation>請在 {page} 新建一個具有 Write 權限的權杖，並儲存到「設定 &gt; 模型來源」。</translation>
    </message>
    <message>
        <source>ModelScope refused the upload: {reason}</source>
        <translation>ModelScope 拒絕了上傳：{reason}</translation>
    </message>
    <message>
        <source>Publish again later: the client resumes what it had sent.</source>
        <translation>請稍後再次發布：用戶端會從已上傳處繼續。</translation>
    </message>
    <message>
        <source>Publishing to ModelScope needs a ModelScope token, and none is saved.</source>
        <translation>發布到 ModelScope 需要 ModelScope 權杖，但尚未儲存。</translation>
    </message>
    <message>
        <source>Make one at {page} and add it in Settings &gt; Model sources (or set MODELSCOPE_API_TOKEN).</source>
        <translation>請在 {page} 建立權杖，並在「設定 &gt; 模型來源」中加入（或設定 MODELSCOPE_API_TOKEN）。</translation>
    </message>
    <message>
        <source>ModelScope did not say whose the token is.</source>
        <translation>ModelScope 沒有說明該權杖屬於誰。</translation>
    </message>
    <message>
        <source>The files to publish must be in one folder, under their own names.</source>
        <translation>要發布的檔案必須位於同一資料夾中，並保持各自的名稱。</translation>
    </message>
    <message>
        <source>ModelScope does not let this token write there: {reason}</source>
        <translation>ModelScope 不允許此權杖寫入該處：{reason}</translation>
    </message>
    <message>
        <source>Publish under your own account, or use a token that may write there.</source>
        <translation>請發布到你自己的帳號下，或使用可寫入該處的權杖。</translation>
    </message>
    <message>
        <source>ModelScope refused the saved ModelScope token (it may be mistyped or expired).</source>
        <translation>ModelScope 拒絕了已儲存的 ModelScope 權杖（可能輸入錯誤或已過期）。</translation>
    </message>
    <message>
        <source>Make a new one at {page} and save it in Settings &gt; Model sources.</source>
        <translation>請在 {page} 新建權杖，並儲存到「設定 &gt; 模型來源」。</translation>
    </message>
    <message>
        <source>An image classifier&apos;s adapters cannot be loaded on their own: their new head does not fit the base model&apos;s.</source>
        <translation>影像分類器的轉接器無法單獨載入：它們的新輸出頭與基礎模型的不相符。</translation>
    </message>
    <message>
        <source>Export the merged model: it holds the adapters and the head, and loads anywhere.</source>
        <translation>請匯出合併後的模型：它包含轉接器和輸出頭，在任何地方都能載入。</translation>
    </message>
    <message>
        <source>The model was not logged to MLflow: {reason}. The exported folder is complete.</source>
        <translation>模型沒有記錄到 MLflow：{reason}。匯出的資料夾是完整的。</translation>
    </message>
    <message>
        <source>Its final save was cut short (a full disk or a crash). Free some disk space if it is full, then resume the run: it goes on from its last good checkpoint and saves again.</source>
        <translation>它最後一次儲存被中斷了（磁碟已滿或程式當機）。如果磁碟已滿，請先釋放一些空間，然後繼續此訓練：它會從最後一個完好的檢查點接著訓練並重新儲存。</translation>
    </message>
    <message>
        <source>Ollama will not apply this model&apos;s chat format: its chat template could not be written in Ollama&apos;s template language so that it renders the same. llama.cpp (llama-cli -cnv) and LM Studio read the template in the file itself; for Ollama, add a TEMPLATE to the Modelfile by hand.</source>
        <translation>Ollama 不會套用這個模型的對話格式：它的對話範本無法寫成渲染結果完全相同的 Ollama 範本語言。llama.cpp（llama-cli -cnv）和 LM Studio 會讀取檔案內的範本；要在 Ollama 中使用，請手動在 Modelfile 中加上 TEMPLATE。</translation>
    </message>
    <message>
        <source>Ollama: the Modelfile&apos;s template renders only {agree} of {total} prompts as the model&apos;s chat template does; Ollama&apos;s answers may differ. llama.cpp (llama-cli -cnv) and LM Studio use the model&apos;s own template.</source>
        <translation>Ollama：Modelfile 的範本在 {total} 個提示詞中只有 {agree} 個渲染得與模型的對話範本完全相同；Ollama 的回答可能不同。llama.cpp（llama-cli -cnv）和 LM Studio 使用模型自帶的範本。</translation>
    </message>
    <message>
        <source>Ollama: the Modelfile&apos;s template renders {agree} of {total} prompts as the model&apos;s chat template does, so Ollama asks the model what llama.cpp was asked.</source>
        <translation>Ollama：Modelfile 的範本把 {total} 個提示詞中的 {agree} 個渲染得與模型的對話範本完全相同，所以 Ollama 向模型提的問題與 llama.cpp 驗證時相同。</translation>
    </message>
    <message>
        <source>{quant} is made by llama.cpp&apos;s quantizer, and llama.cpp is not installed.</source>
        <translation>{quant} 需要由 llama.cpp 的量化器產生，但未安裝 llama.cpp。</translation>
    </message>
    <message>
        <source>Install llama.cpp from the Export step (or: pip install llama-cpp-python), or choose q8_0.</source>
        <translation>請在「匯出」步驟中安裝 llama.cpp（或執行：pip install llama-cpp-python），或者選擇 q8_0。</translation>
    </message>
    <message>
        <source>GGUF export of vision-language models is not supported yet: {run} would need its picture projector (mmproj) written and checked beside the language model.</source>
        <translation>暫不支援把視覺語言模型匯出為 GGUF：{run} 需要在語言模型之外寫出並校驗其圖片投影器（mmproj）。</translation>
    </message>
    <message>
        <source>exit code {code}</source>
        <translation>結束代碼 {code}</translation>
    </message>
    <message>
        <source>llama.cpp could not quantize the model: {error}</source>
        <translation>llama.cpp 無法量化這個模型：{error}</translation>
    </message>
    <message>
        <source>Export it as f16 or q8_0, which need no llama.cpp.</source>
        <translation>請匯出為 f16 或 q8_0，它們不需要 llama.cpp。</translation>
    </message>
    <message>
        <source>GGUF export writes BPE tokenizers (byte-level or SentencePiece); this model&apos;s is {kind}.</source>
        <translation>GGUF 匯出支援 BPE 分詞器（位元組級或 SentencePiece）；這個模型的是 {kind}。</translation>
    </message>
    <message>
        <source>This model&apos;s tokenizer falls back to bytes but lacks some of the 256 byte tokens.</source>
        <translation>這個模型的分詞器會回退到位元組，但缺少部分 256 個位元組詞元。</translation>
    </message>
    <message>
        <source>Export it as a folder: llama.cpp needs every byte token.</source>
        <translation>請把它匯出為資料夾：llama.cpp 需要全部位元組詞元。</translation>
    </message>
    <message>
        <source>GGUF is written for Llama, Mistral, Qwen2, Qwen3, Gemma 2, Gemma 3, Phi-3 and GPT-2 models; export this one as a folder.</source>
        <translation>GGUF 匯出支援 Llama、Mistral、Qwen2、Qwen3、Gemma 2、Gemma 3、Phi-3 和 GPT-2 模型；請把這個模型匯出為資料夾。</translation>
    </message>
    <message>
        <source>GGUF export reads 16- and 32-bit weights; this model was saved quantized ({method}).</source>
        <translation>GGUF 匯出讀取 16 位元和 32 位元權重；這個模型儲存時已被量化（{method}）。</translation>
    </message>
    <message>
        <source>Train with LoRA rather than QLoRA to export GGUF, or export this run as a folder.</source>
        <translation>要匯出 GGUF，請用 LoRA 而不是 QLoRA 訓練，或者把這次訓練匯出為資料夾。</translation>
    </message>
    <message>
        <source>GGUF export writes {architecture} models with a SentencePiece tokenizer; this one&apos;s is byte-level BPE.</source>
        <translation>GGUF 匯出只支援使用 SentencePiece 分詞器的 {architecture} 模型；這個模型的是位元組級 BPE。</translation>
    </message>
    <message>
        <source>llama.cpp scales this Gemma model&apos;s attention by 1/sqrt({used}), transformers by 1/sqrt({scalar}) (query_pre_attn_scalar).</source>
        <translation>llama.cpp 對這個 Gemma 模型的注意力按 1/sqrt({used}) 縮放，transformers 按 1/sqrt({scalar})（query_pre_attn_scalar）。</translation>
    </message>
    <message>
        <source>llama.cpp runs Gemma 2 with its output layer tied to the embeddings; this model&apos;s is not.</source>
        <translation>llama.cpp 執行 Gemma 2 時輸出層與嵌入層共用權重；這個模型的沒有共用。</translation>
    </message>
    <message>
        <source>The model is the last step&apos;s, step {last_step}: {metric} {last:.4g} (the best checkpoint, step {step}, scored {value:.4g}).</source>
        <translation>模型是最後一步的，第 {last_step} 步：{metric} {last:.4g}（最佳檢查點為第 {step} 步，得分 {value:.4g}）。</translation>
    </message>
    <message>
        <source>The last step&apos;s checkpoint of {run} was not kept.</source>
        <translation>{run} 沒有保留最後一步的檢查點。</translation>
    </message>
    <message>
        <source>Export the run&apos;s model, its best checkpoint.</source>
        <translation>請匯出執行的模型，即它的最佳檢查點。</translation>
    </message>
    <message>
        <source>{folder} is in the way and was not made by Finetune Studio, so it is left alone.</source>
        <translation>{folder} 擋住了去路，但它不是 Finetune Studio 建立的，因此不會動它。</translation>
    </message>
    <message>
        <source>Move it out of the run folder, then choose the last step again.</source>
        <translation>請把它移出執行資料夾，然後重新選擇最後一步。</translation>
    </message>
    <message>
        <source>Cancelled; nothing was written.</source>
        <translation>已取消；沒有寫入任何內容。</translation>
    </message>
    <message>
        <source>The last step&apos;s model is damaged: {problem}.</source>
        <translation>最後一步的模型已損壞：{problem}。</translation>
    </message>
    <message>
        <source>Export the best checkpoint instead.</source>
        <translation>請改為匯出最佳檢查點。</translation>
    </message>
    <message>
        <source>The base model {model} is needed to merge the last step&apos;s adapters: {problem}</source>
        <translation>合併最後一步的配接器需要基礎模型 {model}：{problem}</translation>
    </message>
    <message>
        <source>Install it (pip install mlflow-skinny, or mlflow for its UI too) or export without it.</source>
        <translation>請安裝它（pip install mlflow-skinny；要介面則安裝 mlflow），或不記錄到 MLflow 直接匯出。</translation>
    </message>
    <message>
        <source>Ollama is not installed: get it from {url}, then check again.</source>
        <translation>未安裝 Ollama：請從 {url} 取得，然後重新檢查。</translation>
    </message>
    <message>
        <source>Ollama is installed but not running: open the Ollama app (or run: ollama serve).</source>
        <translation>Ollama 已安裝但沒有執行：請開啟 Ollama 應用程式（或執行：ollama serve）。</translation>
    </message>
    <message>
        <source>Ollama is not installed.</source>
        <translation>未安裝 Ollama。</translation>
    </message>
    <message>
        <source>Get it from {url}.</source>
        <translation>請從 {url} 取得。</translation>
    </message>
    <message>
        <source>Adding the model to Ollama was cancelled.</source>
        <translation>已取消把模型加入 Ollama。</translation>
    </message>
    <message>
        <source>Add it again when you like.</source>
        <translation>需要時可以再次加入。</translation>
    </message>
    <message>
        <source>Ollama did not take the model: {error}</source>
        <translation>Ollama 沒有接受這個模型：{error}</translation>
    </message>
    <message>
        <source>Check that Ollama is running and up to date, then try again.</source>
        <translation>請確認 Ollama 正在執行且是最新版本，然後重試。</translation>
    </message>
    <message>
        <source>No column of the file names pictures; its columns are: {columns}.</source>
        <translation>檔案中沒有指明圖片的欄；它的欄為：{columns}。</translation>
    </message>
    <message>
        <source>Name the column with the pictures&apos; paths (in the CLI: --column), or choose a folder of pictures.</source>
        <translation>請指明存放圖片路徑的欄（命令欄中用 --column），或選擇一個圖片資料夾。</translation>
    </message>
    <message>
        <source>{folder} is a folder; this model reads a file of rows.</source>
        <translation>{folder} 是一個資料夾；該模型讀取的是按列排列的檔案。</translation>
    </message>
    <message>
        <source>Choose a CSV, TSV, JSONL or Excel file (for a vision-language model: a picture and a question in each row).</source>
        <translation>請選擇 CSV、TSV、JSONL 或 Excel 檔案（視覺語言模型：每列一張圖片和一個問題）。</translation>
    </message>
    <message>
        <source>No picture of the class {name} is left to train on: the model will not learn it.</source>
        <translation>類別 {name} 已沒有可用於訓練的圖片：模型不會學到這個類別。</translation>
    </message>
    <message>
        <source>No picture of the classes {names} is left to train on: the model will not learn them.</source>
        <translation>類別 {names} 已沒有可用於訓練的圖片：模型不會學到這些類別。</translation>
    </message>
    <message>
        <source>{source}: no row of the column &quot;{column}&quot; is a conversation this task reads.</source>
        <translation>{source}：「{column}」欄中沒有一列是本任務能讀取的對話。</translation>
    </message>
    <message>
        <source>Each row needs a list of messages with &quot;role&quot; and &quot;content&quot; (or ShareGPT&apos;s &quot;from&quot; and &quot;value&quot;) and an assistant reply; for pictures, a picture for each image part or &lt;image&gt; in the text (an images column lists them).</source>
        <translation>每列需要一個訊息清單，每則訊息有 &quot;role&quot; 和 &quot;content&quot;（或 ShareGPT 的 &quot;from&quot; 和 &quot;value&quot;），並且有助理的回覆；圖片方面，每個圖片部分或文字中的每個 &lt;image&gt; 都要對應一張圖片（由 images 欄列出）。</translation>
    </message>
    <message>
        <source>Each row needs a list of messages with &quot;role&quot; and &quot;content&quot; texts, and an assistant reply.</source>
        <translation>每列需要一個訊息清單，每則訊息有文字的 &quot;role&quot; 和 &quot;content&quot;，並且有助理的回覆。</translation>
    </message>
    <message>
        <source>Give those rows {fix}, or leave them out: tick &quot;Leave out rows with a missing or unreadable picture, or no label&quot; under Columns (data.drop_bad_rows = true in a config).</source>
        <translation>請為這些列補上{fix}，或略過它們：在「欄位」下勾選「略過缺少圖片、圖片無法讀取或沒有標籤的列」（設定檔中為 data.drop_bad_rows = true）。</translation>
    </message>
    <message>
        <source>{source}: {count} pictures are in HEIC (as iPhones save them), which cannot be read here: convert them to JPEG ({rows}).</source>
        <translation>{source}：{count} 張圖片是 HEIC 格式（iPhone 的儲存格式），這裡無法讀取：請轉換為 JPEG（{rows}）。</translation>
    </message>
    <message>
        <source>Check that the folder holds pictures that open in a picture viewer.</source>
        <translation>請檢查資料夾中的圖片能否在看圖軟體中開啟。</translation>
    </message>
    <message>
        <source>{source}: 1 picture is in HEIC (as iPhones save them), which cannot be read here: convert it to JPEG ({rows}).</source>
        <translation>{source}：1 張圖片是 HEIC 格式（iPhone 的儲存格式），這裡無法讀取：請轉換為 JPEG（{rows}）。</translation>
    </message>
    <message>
        <source>{where}: {picture}</source>
        <translation>{where}：{picture}</translation>
    </message>
    <message>
        <source>{folder} is in the Hugging Face imagefolder layout: its labels are in {table}, not in the names of its folders.</source>
        <translation>{folder} 是 Hugging Face imagefolder 配置：標籤在 {table} 中，而不是資料夾的名稱。</translation>
    </message>
    <message>
        <source>Choose {table} as the data: its file_name column names the pictures, relative to its folder.</source>
        <translation>請選擇 {table} 作為資料：其中的 file_name 欄位指出圖片，路徑相對於該檔案所在的資料夾。</translation>
    </message>
    <message>
        <source>{model}&apos;s processor needs torchvision, which is not installed.</source>
        <translation>{model} 的處理器需要 torchvision，但尚未安裝。</translation>
    </message>
    <message>
        <source>Install the torchvision built for your PyTorch, then start again: {command}</source>
        <translation>請安裝與你的 PyTorch 相符的 torchvision，然後重新開始：{command}</translation>
    </message>
    <message>
        <source>Install PyTorch and torchvision on the Environment step, then start again.</source>
        <translation>請在「執行環境」步驟安裝 PyTorch 和 torchvision，然後重新開始。</translation>
    </message>
    <message>
        <source>Copying the processor (how pictures and text are read)</source>
        <translation>正在複製處理器（圖片和文字的讀取方式）</translation>
    </message>
    <message>
        <source>GGUF is for decoder chat models (causal LM); {run} was trained for {task}.</source>
        <translation>GGUF 用於解碼器對話模型（因果語言模型）；{run} 訓練的是 {task}。</translation>
    </message>
    <message>
        <source>{file} is a picture; this model reads a file of rows.</source>
        <translation>{file} 是一張圖片；這個模型讀取的是按列組織的資料檔案。</translation>
    </message>
    <message>
        <source>Check that each row holds a conversation ending in a question, and that its pictures are there (a file&apos;s paths are read from its own folder) and open in a picture viewer.</source>
        <translation>請檢查每列是否包含以提問結尾的對話，以及其中的圖片是否存在（檔案中的路徑相對於該檔案所在的資料夾）並能在看圖軟體中開啟。</translation>
    </message>
    <message>
        <source>Reading the files to publish</source>
        <translation>正在讀取要發布的檔案</translation>
    </message>
    <message>
        <source>Uploading</source>
        <translation>正在上傳</translation>
    </message>
    <message>
        <source>Making the commit</source>
        <translation>正在提交</translation>
    </message>
    <message>
        <source>{files} files in one commit, {sent} sent. The repository is public.</source>
        <translation>一次提交 {files} 個檔案，上傳了 {sent}。儲存庫是公開的。</translation>
    </message>
    <message>
        <source>{files} files in one commit, {sent} sent. The repository is private.</source>
        <translation>一次提交 {files} 個檔案，上傳了 {sent}。儲存庫是私人的。</translation>
    </message>
    <message>
        <source>{folder} holds no files to publish.</source>
        <translation>{folder} 中沒有可發布的檔案。</translation>
    </message>
    <message>
        <source>{file} was not verified: llama.cpp&apos;s answers differed from the model&apos;s.</source>
        <translation>{file} 未通過驗證：llama.cpp 的回答與模型的不同。</translation>
    </message>
    <message>
        <source>Publish the model folder instead, or export the GGUF again once the check passes.</source>
        <translation>請改為發布模型資料夾，或在檢查通過後重新匯出 GGUF。</translation>
    </message>
    <message>
        <source>{folder} holds no LoRA adapters.</source>
        <translation>{folder} 中沒有 LoRA 配接器。</translation>
    </message>
    <message>
        <source>Export the run with its adapters alone (command line: export --adapter), or publish the folder.</source>
        <translation>請只匯出該訓練任務的配接器（命令列：export --adapter），或發布整個資料夾。</translation>
    </message>
    <message>
        <source>Unknown format {fmt}; use folder, gguf or adapter.</source>
        <translation>未知格式 {fmt}；請使用 folder、gguf 或 adapter。</translation>
    </message>
    <message>
        <source>The exported folder does not reproduce the run&apos;s outputs (largest difference {diff}); nothing was published.</source>
        <translation>匯出的資料夾無法重現訓練任務的輸出（最大差異 {diff}）；未發布任何內容。</translation>
    </message>
    <message>
        <source>Export it from the Export step to see the details.</source>
        <translation>請在「匯出」步驟中匯出以查看詳情。</translation>
    </message>
    <message>
        <source>Exporting</source>
        <translation>正在匯出</translation>
    </message>
    <message>
        <source>The model in {folder} is not of a kind this app trains.</source>
        <translation>{folder} 中的模型不是本應用程式能訓練的類型。</translation>
    </message>
    <message>
        <source>Open a text or image classifier, a causal language model, a sequence-to-sequence model or a vision-language model.</source>
        <translation>請開啟文字或影像分類模型、因果語言模型、序列到序列模型或視覺語言模型。</translation>
    </message>
    <message>
        <source>{file} cannot be read: it is damaged or not a JSON file.</source>
        <translation>無法讀取 {file}：檔案已損毀，或不是 JSON 檔案。</translation>
    </message>
    <message>
        <source>The model in {folder} could not be loaded: a file is missing or damaged.</source>
        <translation>無法載入 {folder} 中的模型：有檔案遺失或已損毀。</translation>
    </message>
    <message>
        <source>{port} is not a port number.</source>
        <translation>{port} 不是有效的連接埠號碼。</translation>
    </message>
    <message>
        <source>Choose a port from 1024 to 65535, e.g. 8000.</source>
        <translation>請選擇 1024 到 65535 之間的連接埠，例如 8000。</translation>
    </message>
    <message>
        <source>A server other computers can reach needs an API key.</source>
        <translation>其他電腦能存取的服務需要 API 金鑰。</translation>
    </message>
    <message>
        <source>Serve on 127.0.0.1, or let the app make a key.</source>
        <translation>請只在 127.0.0.1 上提供服務，或讓本應用程式產生一個金鑰。</translation>
    </message>
    <message>
        <source>The server answers text models; {folder} is an image classifier.</source>
        <translation>伺服器只為文字模型作答；{folder} 是影像分類器。</translation>
    </message>
    <message>
        <source>Label pictures with predict (a folder of pictures: finetune-studio-cli predict RUN FOLDER), or try them on the Export step.</source>
        <translation>請用 predict 給圖片加上標籤（圖片資料夾：finetune-studio-cli predict RUN FOLDER），或在「匯出」步驟中試用。</translation>
    </message>
    <message>
        <source>Choose another port with --port, e.g. --port {port}.</source>
        <translation>請用 --port 換一個連接埠，例如 --port {port}。</translation>
    </message>
    <message>
        <source>The server cannot listen on {host}:{port}: {error}</source>
        <translation>服務無法在 {host}:{port} 上監聽：{error}</translation>
    </message>
    <message>
        <source>Check the address: 127.0.0.1 is this computer only, 0.0.0.0 every network.</source>
        <translation>請檢查位址：127.0.0.1 僅限本機，0.0.0.0 表示所有網路。</translation>
    </message>
    <message>
        <source>Port {port} on {host} is already in use by another program.</source>
        <translation>{host} 上的連接埠 {port} 已被其他程式占用。</translation>
    </message>
    <message>
        <source>Choose another port in the Port box, or stop the program that uses it.</source>
        <translation>請在「連接埠」欄中換一個連接埠，或關閉占用它的程式。</translation>
    </message>
    <message>
        <source>classification, causal-lm, seq2seq, preference, grpo (reasoning with rewards), image-classification or vision-chat (pictures and text).</source>
        <translation>classification、causal-lm、seq2seq、preference、grpo（基於獎勵的推理訓練）、image-classification 或 vision-chat（圖片與文字）。</translation>
    </message>
    <message>
        <source>must be 0 (never) or a number of evaluations.</source>
        <translation>必須為 0（從不）或評估次數。</translation>
    </message>
    <message>
        <source>must be above 0; 0.1 is usual.</source>
        <translation>必須大於 0；常用 0.1。</translation>
    </message>
    <message>
        <source>must be 0 (the model&apos;s own) or at least 28 pixels.</source>
        <translation>必須為 0（使用模型自己的尺寸）或至少 28 像素。</translation>
    </message>
    <message>
        <source>must be loss for this task: {metric} is a classification figure.</source>
        <translation>此任務只能用 loss：{metric} 是分類指標。</translation>
    </message>
    <message>
        <source>{file} is a folder; a folder of pictures is data for image classification, other tasks read files.</source>
        <translation>{file} 是一個資料夾；圖片資料夾是影像分類的資料，其他任務讀取檔案。</translation>
    </message>
    <message>
        <source>Local data files: .csv .tsv .json .jsonl .parquet .txt .xlsx (relative to this file); for image classification also a folder with one folder of pictures per class.</source>
        <translation>本地資料檔案：.csv .tsv .json .jsonl .parquet .txt .xlsx（相對於本檔案）；影像分類還可以是每個類別一個圖片資料夾的資料夾。</translation>
    </message>
    <message>
        <source>Drop rows with blank texts, missing labels or missing or unreadable pictures instead of stopping with an error.</source>
        <translation>略過文字為空、沒有標籤或圖片遺失、無法讀取的列，而不是報錯停止。</translation>
    </message>
    <message>
        <source>Prompt whose completion is learned; for preference pairs, the prompt both answers reply to.</source>
        <translation>要學習其續寫的提示詞；對偏好對而言，是兩個回答所回應的提示詞。</translation>
    </message>
    <message>
        <source>Preference pairs: the better answer (text, or a whole conversation as a list of messages).</source>
        <translation>偏好對：較好的回答（文字，或以訊息清單表示的整段對話）。</translation>
    </message>
    <message>
        <source>Preference pairs: the worse answer to the same prompt.</source>
        <translation>偏好對：同一提示詞下較差的回答。</translation>
    </message>
    <message>
        <source>Pictures: paths (relative to the data file) or the hub dataset&apos;s image column.</source>
        <translation>圖片：路徑（相對於資料檔案）或模型中心資料集的圖片欄。</translation>
    </message>
    <message>
        <source>With evaluation rows: the run&apos;s model is its best checkpoint by best_metric, not the last step&apos;s (checkpoints are then saved on evaluations).</source>
        <translation>有評估資料時：執行的模型是按 best_metric 評出的最佳檢查點，而不是最後一步的模型（檢查點隨評估保存）。</translation>
    </message>
    <message>
        <source>With evaluation rows: stop when best_metric has not improved for this many evaluations in a row; 0 = never stop early.</source>
        <translation>有評估資料時：best_metric 连續這麼多次評估沒有改進就停止；0 = 從不提前停止。</translation>
    </message>
    <message>
        <source>Make batches of examples of about the same length, so that little of each batch is padding (the examples are shuffled, sorted within groups of 50 batches, and the batches shuffled again). For padded batches: classification, sequence-to-sequence, and causal LM without padding-free batches.</source>
        <translation>把長度相近的範例放進同一批，每批裡的填充就很少（先打亂範例，在每 50 批一組內依長度排序，再打亂各批的順序）。適用於需要填充的批次：文字分類、序列到序列，以及未使用無填充批次的因果語言模型。</translation>
    </message>
    <message>
        <source>dpo (Direct Preference Optimization: the model moves away from a frozen copy of where it started toward the chosen answers) or orpo (Odds Ratio Preference Optimization: learns the chosen answers and prefers them in one loss, without a reference model: less memory).</source>
        <translation>dpo（直接偏好最佳化：以訓練開始時的模型的凍結副本為參照，讓模型向選中回答靠攏）或 orpo（勝算比偏好最佳化：在一個損失裡同時學習選中回答並偏向它，不需要參照模型：佔用較少顯示記憶體）。</translation>
    </message>
    <message>
        <source>How strongly the preference counts: DPO&apos;s beta (higher keeps the model closer to where it started; 0.1 is usual), ORPO&apos;s weight of the preference against learning the chosen answers (0.1 is usual).</source>
        <translation>偏好的權重：DPO 的 beta（越大，模型越接近訓練開始時的樣子；常用 0.1），ORPO 中偏好相對於學習選中回答的權重（常用 0.1）。</translation>
    </message>
    <message>
        <source>Image classification: show each training picture slightly changed each epoch (mirrored, cropped by up to a tenth, brightness varied), which helps with few pictures per class. Leave it off for pictures whose sides matter (text, documents, left and right).</source>
        <translation>影像分類：每一輪都把訓練圖片稍作變化後再給模型看（鏡像、裁掉至多十分之一、調整亮度），每個類別圖片不多時有幫助。若圖片的左右方向有意義（文字、檔案、左右之分），請關閉。</translation>
    </message>
    <message>
        <source>Vision-language: the longest side a picture is scaled to before the model reads it, in pixels (fewer pixels: fewer image tokens, less memory); 0 = the model&apos;s own. Models that read pictures at one fixed size (LLaVA, Gemma 3) keep theirs.</source>
        <translation>視覺語言：模型讀取前把圖片最長邊縮放到的像素數（像素越少，影像詞元越少，記憶體越省）；0 = 使用模型自己的尺寸。以固定尺寸讀取圖片的模型（LLaVA、Gemma 3）保持其尺寸。</translation>
    </message>
    <message>
        <source>Vision-language: also train the vision tower (more memory; usually left frozen).</source>
        <translation>視覺語言：同時訓練視覺編碼器（佔用更多記憶體；通常保持凍結）。</translation>
    </message>
    <message>
        <source>The validation figure that picks the best checkpoint: {choices} (loss: lower is better; the others, for classification: higher is better).</source>
        <translation>選出最佳檢查點的驗證指標：{choices}（loss 越低越好；其餘用於分類，越高越好）。</translation>
    </message>
    <message>
        <source>turns every reward off; give at least one a weight above 0.</source>
        <translation>關閉了所有獎勵；請至少給一個獎勵大於 0 的權重。</translation>
    </message>
    <message>
        <source>must be 2 or more: the answers to a prompt are compared.</source>
        <translation>必須為 2 或以上：同一提示詞的回答要相互比較。</translation>
    </message>
    <message>
        <source>must be 1 or more tokens.</source>
        <translation>必須至少為 1 個詞元。</translation>
    </message>
    <message>
        <source>must be above 0: the answers must differ to be compared; 0.7 to 1 is usual.</source>
        <translation>必須大於 0：回答要有差異才能比較；通常為 0.7 到 1。</translation>
    </message>
    <message>
        <source>must be 0 (no reference model) or more; 0.04 is the paper&apos;s.</source>
        <translation>必須為 0（無參考模型）或以上；論文用 0.04。</translation>
    </message>
    <message>
        <source>must be 0 (off) or more.</source>
        <translation>必須為 0（關閉）或以上。</translation>
    </message>
    <message>
        <source>must not be above grpo.length_max.</source>
        <translation>不能大於 grpo.length_max。</translation>
    </message>
    <message>
        <source>must divide batch size x gradient accumulation ({size}): each prompt&apos;s answers go in the same batch. Use {fits}, or change the batch size.</source>
        <translation>必須能整除批次大小 × 梯度累積（{size}）：同一提示詞的回答要在同一批次中。請改用 {fits}，或調整批次大小。</translation>
    </message>
    <message>
        <source>reference model (DPO)</source>
        <translation>參照模型（DPO）</translation>
    </message>
    <message>
        <source>Liger kernels need the liger-kernel package: pip install liger-kernel.</source>
        <translation>Liger 核心需要 liger-kernel 套件：pip install liger-kernel。</translation>
    </message>
    <message>
        <source>Liger kernels run on an NVIDIA GPU only; turn them off on this computer.</source>
        <translation>Liger 核心只能在 NVIDIA GPU 上執行；請在這台電腦上關閉它。</translation>
    </message>
    <message>
        <source>Liger kernels need Triton, which has no official Windows builds: pip install triton-windows.</source>
        <translation>Liger 核心需要 Triton，而 Triton 沒有官方的 Windows 版本：pip install triton-windows。</translation>
    </message>
    <message>
        <source>Liger kernels need Triton, which is not installed: pip install triton.</source>
        <translation>Liger 核心需要 Triton，但尚未安裝：pip install triton。</translation>
    </message>
    <message>
        <source>LoRA adapts linear layers, and this model is a convolutional network with none outside its head: train it whole (LoRA off), or pick a vision transformer (ViT).</source>
        <translation>LoRA 只作用於線性層，而該模型是卷積網路，輸出頭之外沒有線性層：請訓練整個模型（關閉 LoRA），或選擇視覺 Transformer（ViT）。</translation>
    </message>
    <message>
        <source>On this computer&apos;s CPU this saves RAM but makes every step slower (one example at a time, activations computed twice): use it only when RAM runs out.</source>
        <translation>在這台電腦的 CPU 上，這樣能省記憶體，但每一步都會變慢（一次只處理一個範例，激活值要算兩遍）：只在記憶體不夠時使用。</translation>
    </message>
    <message>
        <source>The data folder is already {folder}.</source>
        <translation>資料資料夾已經是 {folder}。</translation>
    </message>
    <message>
        <source>{target} is inside the data folder, or holds it.</source>
        <translation>{target} 位於資料資料夾內，或包含資料資料夾。</translation>
    </message>
    <message>
        <source>Choose a folder beside it, for example on another drive.</source>
        <translation>請選擇它之外的資料夾，例如另一個磁碟上的。</translation>
    </message>
    <message>
        <source>{target} is not empty.</source>
        <translation>{target} 不是空的。</translation>
    </message>
    <message>
        <source>Choose an empty or new folder: the data is moved into it, not merged.</source>
        <translation>請選擇空資料夾或新資料夾：資料會移入其中，不會與既有內容合併。</translation>
    </message>
    <message>
        <source>The data needs {needed} GB and the drive of {target} has {free} GB free.</source>
        <translation>資料需要 {needed} GB，而 {target} 所在磁碟只剩 {free} GB。</translation>
    </message>
    <message>
        <source>Free some space there, or choose another drive.</source>
        <translation>請在那裡騰出空間，或選擇另一個磁碟。</translation>
    </message>
    <message>
        <source>{target} cannot be written: {error}</source>
        <translation>無法寫入 {target}：{error}</translation>
    </message>
    <message>
        <source>Choose a folder you can write to.</source>
        <translation>請選擇你有寫入權限的資料夾。</translation>
    </message>
    <message>
        <source>The move was cancelled.</source>
        <translation>已取消移動。</translation>
    </message>
    <message>
        <source>Everything is where it was.</source>
        <translation>一切都保持原樣。</translation>
    </message>
    <message>
        <source>Check that it still exists (a drive unplugged, a folder moved or renamed) and try again.</source>
        <translation>請確認它還在（磁碟機是否已拔除、資料夾是否被移動或改名），然後重試。</translation>
    </message>
    <message>
        <source>Windows ran out of virtual memory while loading PyTorch&apos;s libraries: the paging file is too small (error 1455).</source>
        <translation>Windows 在載入 PyTorch 的程式庫時虛擬記憶體不足：分頁檔太小（錯誤 1455）。</translation>
    </message>
    <message>
        <source>Let Windows manage the paging file size (Advanced system settings &gt; Performance &gt; Settings &gt; Advanced &gt; Virtual memory), keep a few GB free on the system drive, restart Windows, then resume. Fewer data loader workers load PyTorch fewer times.</source>
        <translation>讓 Windows 自動管理分頁檔大小（進階系統設定 &gt; 效能 &gt; 設定 &gt; 進階 &gt; 虛擬記憶體），在系統磁碟上保留幾 GB 可用空間，重新啟動 Windows 後繼續訓練。資料載入行程越少，載入 PyTorch 的次數也越少。</translation>
    </message>
    <message>
        <source>{file} was not found.</source>
        <translation>找不到 {file}。</translation>
    </message>
    <message>
        <source>A file was not found.</source>
        <translation>找不到一個檔案。</translation>
    </message>
    <message>
        <source>Close the program that has it open (an editor, Excel, a file preview) and try again.</source>
        <translation>請關閉正在開啟它的程式（編輯器、Excel、檔案預覽），然後重試。</translation>
    </message>
    <message>
        <source>{file} is in use by another program.</source>
        <translation>{file} 正被另一個程式使用。</translation>
    </message>
    <message>
        <source>A file is in use.</source>
        <translation>有一個檔案正被使用。</translation>
    </message>
    <message>
        <source>Checkpoints are saved every {steps} steps, on evaluations, so that the best one can be kept.</source>
        <translation>檢查點改為每 {steps} 步隨評估保存，以便保留最佳檢查點。</translation>
    </message>
    <message>
        <source>validation loss</source>
        <translation>驗證損失</translation>
    </message>
    <message>
        <source>validation accuracy</source>
        <translation>驗證準確率</translation>
    </message>
    <message>
        <source>validation macro-F1</source>
        <translation>驗證宏平均 F1</translation>
    </message>
    <message>
        <source>Stopped early at step {step}: the {metric} had not improved since step {best}.</source>
        <translation>已在第 {step} 步提前停止：{metric}自第 {best} 步以來沒有改進。</translation>
    </message>
    <message>
        <source>The model is the best checkpoint, step {step} of {last_step}: {metric} {value:.4g} (the last step scored {last:.4g}).</source>
        <translation>模型是最佳檢查點，第 {step} 步（共 {last_step} 步）：{metric} {value:.4g}（最後一步為 {last:.4g}）。</translation>
    </message>
    <message>
        <source>The model is the last step&apos;s, step {step}, which scored best: {metric} {value:.4g}.</source>
        <translation>模型是最後一步的，第 {step} 步，也是得分最好的：{metric} {value:.4g}。</translation>
    </message>
    <message>
        <source>The model is the last step&apos;s, step {last_step}; the best checkpoint was step {step} ({metric} {value:.4g}).</source>
        <translation>模型是最後一步的，第 {last_step} 步；最佳檢查點是第 {step} 步（{metric} {value:.4g}）。</translation>
    </message>
    <message>
        <source>The model is the best checkpoint, step {step} of {last_step}: {metric} {value:.4g}.</source>
        <translation>模型是最佳檢查點，第 {step} 步（共 {last_step} 步）：{metric} {value:.4g}。</translation>
    </message>
    <message>
        <source>On the held-out pairs the tuned model prefers the chosen answer in {after:.0%} of them, the base model in {before:.0%}: no better. {parted}The preference accuracy asks which answer the model finds likelier outright; the reward accuracy only whether it moved toward the chosen answer more than toward the rejected one, from where it started. {fix}</source>
        <translation>在保留的偏好對上，微調後的模型在 {after:.0%} 的情況下偏向選中回答，基礎模型為 {before:.0%}：沒有變好。{parted}偏好準確率看的是模型直接認為哪個回答可能性較高；獎勵準確率只看模型相對起點，是否更多地移向選中回答而非被拒回答。{fix}</translation>
    </message>
    <message>
        <source>The learning rate is {rate:g}, {times} the {task} default of {default:g}: a rate kept from another task or run? {effect}</source>
        <translation>學習率為 {rate:g}，是 {task} 預設值 {default:g} 的 {times}：是從其他任務或訓練沿用下來的嗎？{effect}</translation>
    </message>
    <message>
        <source>The validation loss has risen at {n} evaluations in a row ({best:.3g} at step {best_step}, {now:.3g} now) while the training loss fell ({train_then:.3g} to {train_now:.3g}): the model is learning the training rows by heart. The best evaluation so far is step {best_step}.</source>
        <translation>驗證損失已連續 {n} 次評估上升（第 {best_step} 步為 {best:.3g}，現在為 {now:.3g}），而訓練損失在下降（{train_then:.3g} 到 {train_now:.3g}）：模型正在死記訓練資料。目前最好的評估是第 {best_step} 步。</translation>
    </message>
    <message>
        <source>The training loss is growing: {now:.3g} now, {times:.1f} times its lowest ({lowest:.3g}). The learning rate ({rate:g}) is likely too high for this model.</source>
        <translation>訓練損失在上升：現在為 {now:.3g}，是其最低值（{lowest:.3g}）的 {times:.1f} 倍。學習率（{rate:g}）對這個模型可能太高了。</translation>
    </message>
    <message>
        <source>After {share:.0%} of the steps the training loss is higher than where it began ({first:.3g} to {now:.3g}).</source>
        <translation>已完成 {share:.0%} 的步數，訓練損失反而比開始時更高（{first:.3g} 到 {now:.3g}）。</translation>
    </message>
    <message>
        <source>After {share:.0%} of the steps the training loss has barely moved ({first:.3g} to {now:.3g}).</source>
        <translation>已完成 {share:.0%} 的步數，訓練損失幾乎沒有變化（{first:.3g} 到 {now:.3g}）。</translation>
    </message>
    <message>
        <source>After {share:.0%} of the steps the accuracy is {accuracy:.3g}, what guessing among {labels} classes scores ({chance:.3g}).</source>
        <translation>已完成 {share:.0%} 的步數，準確率為 {accuracy:.3g}，與在 {labels} 個類別中隨機猜測的得分（{chance:.3g}）相當。</translation>
    </message>
    <message>
        <source>{seen} The model is not learning: check the learning rate ({rate:g}; {task} usually trains at {default:g}), {language}, and {labels}.</source>
        <translation>{seen}模型沒有在學習：請檢查學習率（{rate:g}；{task} 通常用 {default:g}），{language}，以及{labels}。</translation>
    </message>
    <message>
        <source>learning rate {rate:g}</source>
        <translation>學習率 {rate:g}</translation>
    </message>
    <message>
        <source>{seen} The model is not learning: check the learning rate ({rate:g}; {default:g} is usual for this task), and that each picture&apos;s label or answer is the right one.</source>
        <translation>{seen}模型沒有在學習：請檢查學習率（{rate:g}；此任務通常為 {default:g}），以及每張圖片的標籤或答案是否正確。</translation>
    </message>
    <message>
        <source>stop at step {step}</source>
        <translation>在第 {step} 步停止</translation>
    </message>
    <message>
        <source>{n:.0f} times</source>
        <translation>{n:.0f} 倍</translation>
    </message>
    <message>
        <source>1/{n:.0f} of</source>
        <translation>{n:.0f} 分之一的</translation>
    </message>
    <message>
        <source>So high a rate tends to wreck what the model knew.</source>
        <translation>這麼高的學習率往往會破壞模型原有的知識。</translation>
    </message>
    <message>
        <source>So low a rate changes the model very little.</source>
        <translation>這麼低的學習率幾乎不會改變模型。</translation>
    </message>
    <message>
        <source>that the model reads the data&apos;s language ({share:.0%} of the data&apos;s tokens are unknown to it{verdict})</source>
        <translation>模型是否讀得懂資料的語言（資料中有 {share:.0%} 的詞元它不認識{verdict}）</translation>
    </message>
    <message>
        <source>that the model reads the data&apos;s language (many unknown tokens in the data check say it does not)</source>
        <translation>模型是否讀得懂資料的語言（資料檢查中大量未知詞元表示讀不懂）</translation>
    </message>
    <message>
        <source>: it does not</source>
        <translation>：它讀不懂</translation>
    </message>
    <message>
        <source>Answers are written by vLLM.</source>
        <translation>回答由 vLLM 產生。</translation>
    </message>
    <message>
        <source>Answers are written by transformers.</source>
        <translation>回答由 transformers 產生。</translation>
    </message>
    <message>
        <source>reasoning with rewards needs TRL: pip install trl.</source>
        <translation>獎勵推理訓練需要 TRL：pip install trl。</translation>
    </message>
    <message>
        <source>The mean reward has stayed near {first:.2f} (now {now:.2f}) for {steps} steps; in {alike:.0%} of the prompts every answer scored the same, which leaves GRPO nothing to compare. More varied answers (a higher temperature, more answers per prompt) or a reward that gives partial credit (the format) help; so does data the model can sometimes already solve.</source>
        <translation>平均獎勵在 {steps} 步內一直接近 {first:.2f}（現在 {now:.2f}）；{alike:.0%} 的提示詞中所有回答得分相同，GRPO 無從比較。更多樣的回答（更高的溫度、每個提示詞更多回答）或能給部分分數的獎勵（格式）會有幫助；模型有時已能答對的資料也會有幫助。</translation>
    </message>
    <message>
        <source>The answers shrank from {first:.0f} to {now:.0f} tokens on average: the model may be earning its rewards by saying less (an empty answer can pass a length or language check). Read the sampled answers in the log; a length reward with a minimum, or a lower learning rate, holds it.</source>
        <translation>回答的平均長度從 {first:.0f} 個詞元縮短到 {now:.0f} 個：模型可能在靠少說話拿獎勵（空回答也可能通過長度或語言檢查）。請查看日誌中的範例回答；設有下限的長度獎勵或更低的學習率可以防止這種情況。</translation>
    </message>
    <message>
        <source>temperature 1.0</source>
        <translation>溫度 1.0</translation>
    </message>
    <message>
        <source>a format reward</source>
        <translation>格式獎勵</translation>
    </message>
    <message>
        <source>preference tuning needs TRL: pip install trl.</source>
        <translation>偏好微調需要 TRL：pip install trl。</translation>
    </message>
    <message>
        <source>Loading the processor and the model</source>
        <translation>正在載入處理器和模型</translation>
    </message>
    <message>
        <source>{model} cannot recompute its activations (gradient checkpointing): it trains without.</source>
        <translation>{model} 不支援重算激活（梯度檢查點）：訓練時不使用它。</translation>
    </message>
    <message>
        <source>Liger kernels: {model_type} is not an architecture they know; it trains without them.</source>
        <translation>Liger 核心：不支援 {model_type} 架構，本次訓練不使用它們。</translation>
    </message>
    <message>
        <source>Tokenizing {rows} preference pairs</source>
        <translation>正在對 {rows} 個偏好對分詞</translation>
    </message>
    <message>
        <source>{checkpoint} does not fit the model this data makes (its shapes differ: {error}).</source>
        <translation>{checkpoint} 與這份資料產生的模型不相符（形狀不同：{error}）。</translation>
    </message>
    <message>
        <source>Resume with the data and model the run started with, or start a new run. The checkpoint was not changed.</source>
        <translation>請用執行開始時的資料和模型繼續訓練，或開始新的執行。檢查點沒有被變動。</translation>
    </message>
    <message>
        <source>In process {number} of {count}: {reason}</source>
        <translation>第 {number} 個行程（共 {count} 個）：{reason}</translation>
    </message>
    <message>
        <source>Resume on the new data</source>
        <translation>在新資料上繼續訓練</translation>
    </message>
    <message>
        <source>A run to resume is found by its config file, and none was given.</source>
        <translation>要繼續的訓練依其設定檔尋找，但沒有提供設定檔。</translation>
    </message>
    <message>
        <source>MLflow: this run is logged as {run} in the experiment {experiment} at {uri}. To look: {command}</source>
        <translation>MLflow：本次訓練以 {run} 記錄在 {uri} 的實驗 {experiment} 中。檢視方法：{command}</translation>
    </message>
    <message>
        <source>TensorBoard: logs in {folder}. To look: tensorboard --logdir {folder}</source>
        <translation>TensorBoard：日誌在 {folder}。檢視方法：tensorboard --logdir {folder}</translation>
    </message>
    <message>
        <source>{tracker} stopped logging at step {step}: {reason}. Training goes on; its figures after this step are not in {tracker}, and the run&apos;s own are in its folder.</source>
        <translation>{tracker} 在第 {step} 步停止記錄：{reason}。訓練照常進行；這一步之後的數值不會出現在 {tracker} 中，訓練任務自己的紀錄仍在其資料夾裡。</translation>
    </message>
    <message>
        <source>Rewards on the first rows (the reference answer, then a wrong one):</source>
        <translation>前幾列的獎勵（先是參考答案，再是一個錯誤答案）：</translation>
    </message>
    <message>
        <source>Rewards: no row has a reference answer to try them on.</source>
        <translation>獎勵：沒有一列有參考答案可供試算。</translation>
    </message>
    <message>
        <source>The data folder is now {folder}.</source>
        <translation>資料資料夾現在是 {folder}。</translation>
    </message>
    <message>
        <source>an empty or new folder, for example on another drive</source>
        <translation>一個空資料夾或新資料夾，例如在另一個磁碟上</translation>
    </message>
    <message>
        <source>Finetune Studio is running ({others}): its data folder cannot move now.</source>
        <translation>Finetune Studio 正在執行（{others}）：現在無法移動它的資料資料夾。</translation>
    </message>
    <message>
        <source>Close every Finetune Studio window and command-line run, then run this again.</source>
        <translation>請關閉所有 Finetune Studio 視窗和命令列訓練，然後再執行一次。</translation>
    </message>
    <message>
        <source>The data folder could not be moved: {error}</source>
        <translation>無法移動資料資料夾：{error}</translation>
    </message>
    <message>
        <source>Everything is where it was. Free some space or choose another folder, then try again.</source>
        <translation>一切都保持原樣。請騰出空間或選擇另一個資料夾，然後重試。</translation>
    </message>
    <message>
        <source>Moving</source>
        <translation>正在移動</translation>
    </message>
    <message>
        <source>a mirror or private hub (Hugging Face API; with --source modelscope, ModelScope&apos;s)</source>
        <translation>鏡像站或私有 Hub（Hugging Face API；與 --source modelscope 一起用時為 ModelScope 的）</translation>
    </message>
    <message>
        <source>find, download and list models (Hugging Face, a mirror, ModelScope)</source>
        <translation>搜尋、下載與列出模型（Hugging Face、鏡像站、ModelScope）</translation>
    </message>
    <message>
        <source>search the hub</source>
        <translation>在 Hub 上搜尋</translation>
    </message>
    <message>
        <source>print the results as JSON</source>
        <translation>以 JSON 格式輸出結果</translation>
    </message>
    <message>
        <source>download a model (only the files training needs)</source>
        <translation>下載模型（只下載訓練需要的檔案）</translation>
    </message>
    <message>
        <source>owner/name, or modelscope:owner/name</source>
        <translation>owner/name，或 modelscope:owner/name</translation>
    </message>
    <message>
        <source>branch, tag or commit</source>
        <translation>分支、標記或提交</translation>
    </message>
    <message>
        <source>models on this computer (hub caches and folders used before)</source>
        <translation>這台電腦上的模型（Hub 快取與用過的資料夾）</translation>
    </message>
    <message>
        <source>which source answers, and how fast</source>
        <translation>哪個下載來源有回應，速度如何</translation>
    </message>
    <message>
        <source>download hub datasets</source>
        <translation>下載 Hub 資料集</translation>
    </message>
    <message>
        <source>download a dataset&apos;s data files</source>
        <translation>下載資料集的資料檔案</translation>
    </message>
    <message>
        <source>No models match {query} on {source}.</source>
        <translation>在{source}上沒有符合 {query} 的模型。</translation>
    </message>
    <message>
        <source>license  updated</source>
        <translation>授權條款  更新時間</translation>
    </message>
    <message>
        <source>Downloading the dataset {name} from {source} ({endpoint})...</source>
        <translation>正在從{source}（{endpoint}）下載資料集 {name}……</translation>
    </message>
    <message>
        <source>Downloading the model {name} from {source} ({endpoint})...</source>
        <translation>正在從{source}（{endpoint}）下載模型 {name}……</translation>
    </message>
    <message>
        <source>No models on this computer yet. Find one with: finetune-studio-cli models search QUERY</source>
        <translation>這台電腦上還沒有模型。可以這樣搜尋：finetune-studio-cli models search 關鍵字</translation>
    </message>
    <message>
        <source>answered in {ms} ms</source>
        <translation>{ms} 毫秒內回應</translation>
    </message>
    <message>
        <source>no answer ({problem})</source>
        <translation>無回應（{problem}）</translation>
    </message>
    <message>
        <source>in use: {source}; Auto would pick {chosen}</source>
        <translation>使用中：{source}；自動模式會選擇 {chosen}</translation>
    </message>
    <message>
        <source>in use: {source}; none answers</source>
        <translation>使用中：{source}；沒有任何下載來源回應</translation>
    </message>
    <message>
        <source>The picture is labelled; written to {file} with {added} added.</source>
        <translation>圖片已標註；已寫入 {file}，新增 {added}。</translation>
    </message>
    <message>
        <source>Verified: reloaded in a fresh process, the outputs on {count} examples are the same.</source>
        <translation>驗證通過：已在新的行程中重新載入，{count} 個範例的輸出完全相同。</translation>
    </message>
    <message>
        <source>{done} of {rows} pictures labelled; written to {file} with {added} added.</source>
        <translation>{rows} 張圖片中已標註 {done} 張；已寫入 {file}，新增 {added}。</translation>
    </message>
    <message>
        <source>run a trained model over a CSV, TSV, JSONL or Excel file (an image classifier: also a folder of pictures, or one picture) and write its predictions</source>
        <translation>用訓練好的模型處理 CSV、TSV、JSONL 或 Excel 檔案（影像分類模型還可以處理圖片資料夾或單張圖片），並寫出預測結果</translation>
    </message>
    <message>
        <source>the rows to predict (or the pictures)</source>
        <translation>要預測的列（或圖片）</translation>
    </message>
    <message>
        <source>{done} of {rows} rows predicted from column {column}; written to {file} with {added} added.</source>
        <translation>已根據 {column} 欄位預測 {rows} 列中的 {done} 列；已寫入 {file}，新增 {added}。</translation>
    </message>
    <message>
        <source>Small, fast convolutional network trained on ImageNet; a sound start for photos.</source>
        <translation>在 ImageNet 上訓練的小而快的卷積網路；適合作為照片分類的起點。</translation>
    </message>
    <message>
        <source>Modern convolutional network trained on ImageNet; more accurate than ResNet at about its size.</source>
        <translation>在 ImageNet 上訓練的現代卷積網路；與 ResNet 大小相近而更準確。</translation>
    </message>
    <message>
        <source>Vision transformer pretrained on ImageNet-21k (no head yet): strong with enough pictures per class.</source>
        <translation>在 ImageNet-21k 上預訓練的視覺 Transformer（尚無分類頭）：每個類別圖片足夠多時效果很好。</translation>
    </message>
    <message>
        <source>{name} is not on this computer yet: downloading it first.</source>
        <translation>{name} 還不在這台電腦上：先下載它。</translation>
    </message>
    <message>
        <source>The dataset {name} is not on this computer yet: downloading it first.</source>
        <translation>資料集 {name} 還不在這台電腦上：先下載它。</translation>
    </message>
    <message>
        <source>gated</source>
        <translation>受限</translation>
    </message>
    <message>
        <source>model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>downloads</source>
        <translation>下載次數</translation>
    </message>
    <message>
        <source>likes</source>
        <translation>按讚</translation>
    </message>
    <message>
        <source>params</source>
        <translation>參數量</translation>
    </message>
    <message>
        <source>size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Download stopped. Run the same command again to resume where it stopped.</source>
        <translation>下載已停止。再次執行同一指令即可從中斷處繼續。</translation>
    </message>
    <message>
        <source>Stopped. Nothing was changed.</source>
        <translation>已停止。沒有做任何變動。</translation>
    </message>
    <message>
        <source>Stopped.</source>
        <translation>已停止。</translation>
    </message>
    <message>
        <source>with --resume: go on although the data changed since the run started (same classes)</source>
        <translation>與 --resume 一起用：即使資料自執行開始以來變了（類別相同），也繼續訓練</translation>
    </message>
    <message>
        <source>This copy of Finetune Studio is incomplete (the app package or uv is missing).</source>
        <translation>這份 Finetune Studio 不完整（缺少應用程式套件或 uv）。</translation>
    </message>
    <message>
        <source>Reinstall Finetune Studio.</source>
        <translation>請重新安裝 Finetune Studio。</translation>
    </message>
    <message>
        <source>Finetune Studio is already being set up by another window.</source>
        <translation>另一個視窗正在安裝 Finetune Studio。</translation>
    </message>
    <message>
        <source>Wait for it to finish; the app starts by itself.</source>
        <translation>請等它完成；應用程式會自動啟動。</translation>
    </message>
    <message>
        <source>Finetune Studio is running, so its runtime cannot be set up again or updated now.</source>
        <translation>Finetune Studio 正在執行，現在無法重新安裝或更新它的執行環境。</translation>
    </message>
    <message>
        <source>Close every Finetune Studio window (and stop command-line runs), then start it again.</source>
        <translation>請關閉所有 Finetune Studio 視窗（並停止命令列中的訓練），然後再啟動。</translation>
    </message>
    <message>
        <source>Finetune Studio could not be started: {error}</source>
        <translation>無法啟動 Finetune Studio：{error}</translation>
    </message>
    <message>
        <source>Finetune Studio stopped unexpectedly (exit code {code}).</source>
        <translation>Finetune Studio 意外結束（結束代碼 {code}）。</translation>
    </message>
    <message>
        <source>Your runs are kept: a run that was training resumes from its last checkpoint (Resume in the app). Start it again; if it happens again, send the log.</source>
        <translation>你的訓練記錄都還在：正在訓練的任務可以從最近的檢查點繼續（在應用程式中按「繼續訓練」）。請再次啟動它；如果再次發生，請傳送記錄檔。</translation>
    </message>
    <message>
        <source>The data folder was not moved: Finetune Studio is still running ({what}).</source>
        <translation>資料資料夾沒有移動：Finetune Studio 仍在執行（{what}）。</translation>
    </message>
    <message>
        <source>Close every Finetune Studio window and command-line run, then try again.</source>
        <translation>請關閉所有 Finetune Studio 視窗和命令列訓練，然後重試。</translation>
    </message>
    <message>
        <source>no NVIDIA GPU was found, so the CPU build</source>
        <translation>沒有找到 NVIDIA GPU，因此安裝 CPU 版本</translation>
    </message>
    <message>
        <source>this GPU is too old for current PyTorch, so the CPU build</source>
        <translation>這張 GPU 對目前的 PyTorch 來說太舊了，因此安裝 CPU 版本</translation>
    </message>
    <message>
        <source>the NVIDIA driver is too old for PyTorch&apos;s GPU builds, so the CPU build</source>
        <translation>NVIDIA 驅動程式太舊，無法使用 PyTorch 的 GPU 版本，因此安裝 CPU 版本</translation>
    </message>
    <message>
        <source>no PyTorch build runs on all of these GPUs, so the CPU build</source>
        <translation>沒有一個 PyTorch 版本能在所有這些 GPU 上執行，因此安裝 CPU 版本</translation>
    </message>
    <message>
        <source>Setting up the runtime failed.</source>
        <translation>執行環境安裝失敗。</translation>
    </message>
    <message>
        <source>The log has the details. Try again; if it fails again, start with --repair.</source>
        <translation>詳細資訊請見記錄。請重試；如果再次失敗，請加上 --repair 啟動。</translation>
    </message>
    <message>
        <source>Not enough disk space: setting up needs about {needed} GB, {free} GB are free on the drive of {folder}.</source>
        <translation>磁碟空間不足：安裝約需 {needed} GB，{folder} 所在的磁碟只剩 {free} GB 可用。</translation>
    </message>
    <message>
        <source>Free some space, then start Finetune Studio again.</source>
        <translation>請騰出一些空間，然後重新啟動 Finetune Studio。</translation>
    </message>
    <message>
        <source>Setup cancelled.</source>
        <translation>安裝已取消。</translation>
    </message>
    <message>
        <source>Start Finetune Studio again to finish the setup.</source>
        <translation>再次啟動 Finetune Studio 即可完成安裝。</translation>
    </message>
    <message>
        <source>The disk became full while installing.</source>
        <translation>安裝過程中磁碟已滿。</translation>
    </message>
    <message>
        <source>move the data folder (runs, runtime, caches) to another place</source>
        <translation>把資料資料夾（訓練記錄、執行環境、快取）移到別處</translation>
    </message>
    <message>
        <source>Exported to {file} ({size})</source>
        <translation>已匯出到 {file}（{size}）</translation>
    </message>
    <message>
        <source>For Ollama: {command}</source>
        <translation>用於 Ollama：{command}</translation>
    </message>
    <message>
        <source>folder: a transformers model folder; gguf: one file for llama.cpp, Ollama and LM Studio</source>
        <translation>folder：transformers 模型資料夾；gguf：供 llama.cpp、Ollama 和 LM Studio 使用的單一檔案</translation>
    </message>
    <message>
        <source>The best checkpoint is named but the model stays the last step&apos;s: keeping the best needs checkpoints on evaluations (evaluate every N steps, with checkpoints every N steps or a multiple of N).</source>
        <translation>會指出最佳檢查點，但模型仍是最後一步的：保留最佳檢查點需要檢查點與評估同步（每 N 步評估一次，檢查點每 N 步或 N 的倍數步儲存一次）。</translation>
    </message>
    <message>
        <source>The best checkpoint was step {step} ({metric} {value:.4g}); the model is the last step&apos;s.</source>
        <translation>最佳檢查點是第 {step} 步（{metric} {value:.4g}）；模型是最後一步的。</translation>
    </message>
    <message>
        <source>On the training pairs the reward accuracy is {training:.2f}, on the held-out pairs {now:.2f}, no better than at step {first_step} ({first:.2f}). The first counts the pairs the model learns from, the second pairs it never saw: when they part, the model is learning those pairs by heart rather than what makes an answer better. More pairs, fewer steps or a lower learning rate ({rate:g} now) help.</source>
        <translation>訓練偏好對上的獎勵準確率是 {training:.2f}，保留偏好對上是 {now:.2f}，不比第 {first_step} 步（{first:.2f}）好。前者統計模型正在學習的偏好對，後者統計它從未見過的偏好對：兩者分開時，表示模型在死記這些偏好對，而不是學到什麼樣的回答更好。更多偏好對、更少步數或更低的學習率（現在是 {rate:g}）會有幫助。</translation>
    </message>
    <message>
        <source>The rewards of the chosen answers ({chosen_then:.3g} to {chosen_now:.3g}) and of the rejected ones ({rejected_then:.3g} to {rejected_now:.3g}) both fell at {n} logs in a row: the model tells the answers apart by making both less likely, which tends to make its own answers worse. {fix}</source>
        <translation>選中回答的獎勵（{chosen_then:.3g} 到 {chosen_now:.3g}）和被拒回答的獎勵（{rejected_then:.3g} 到 {rejected_now:.3g}）在連續 {n} 次記錄中都在下降：模型是靠讓兩個回答都變得不太可能來區分它們，這往往會讓它自己的回答變差。{fix}</translation>
    </message>
    <message>
        <source>Check that the chosen and rejected columns are not swapped, and try more pairs or more steps.</source>
        <translation>請檢查選中回答和被拒回答兩欄是否弄反了，並嘗試更多偏好對或更多步數。</translation>
    </message>
    <message>
        <source>beta {beta:g}</source>
        <translation>beta {beta:g}</translation>
    </message>
    <message>
        <source>Yet the reward accuracy reads {reward:.2f}. </source>
        <translation>但獎勵準確率顯示為 {reward:.2f}。</translation>
    </message>
    <message>
        <source>A lower learning rate, or a higher beta, keeps it nearer where it started.</source>
        <translation>更低的學習率或更高的 beta 能讓它離起點更近。</translation>
    </message>
    <message>
        <source>A lower learning rate keeps it nearer where it started.</source>
        <translation>更低的學習率能讓它離起點更近。</translation>
    </message>
    <message>
        <source>that the chosen answers are the better ones</source>
        <translation>選中回答是否確實是較好的回答</translation>
    </message>
    <message>
        <source>that the labels match the texts</source>
        <translation>標籤是否與文字相符</translation>
    </message>
    <message>
        <source>Lower the learning rate to {rate}</source>
        <translation>將學習率降到 {rate}</translation>
    </message>
    <message>
        <source>The training stopped: the {what} became {value} at step {step}. The learning rate ({rate}) is most likely too high for this model: its weights diverged.</source>
        <translation>訓練已停止：{what}在第 {step} 步變成了 {value}。學習率（{rate}）對這個模型很可能太高：它的權重發散了。</translation>
    </message>
    <message>
        <source>Lower the learning rate (a tenth is a good first try) and train again from the start.</source>
        <translation>請降低學習率（先試原來的十分之一），然後從頭重新訓練。</translation>
    </message>
    <message>
        <source>{count} training steps had a loss that was not a number (NaN or infinity, usually an fp16 overflow); the loss scaler left their updates out and training went on.</source>
        <translation>有 {count} 個訓練步驟的損失不是數值（NaN 或無窮大，通常是 fp16 溢位）；損失縮放器略去了它們的更新，訓練繼續進行。</translation>
    </message>
    <message>
        <source>The training stopped: the {what} became {value} at step {step}. In fp16 the numbers overflowed (fp16 holds values up to 65504).</source>
        <translation>訓練已停止：{what}在第 {step} 步變成了 {value}。在 fp16 下數值溢位了（fp16 最大只能表示 65504）。</translation>
    </message>
    <message>
        <source>Train in bf16 where the GPU has it (RTX 30 and newer), else in fp32, or lower the rate.</source>
        <translation>GPU 支援時（RTX 30 及更新）請用 bf16 訓練，否則用 fp32，或降低學習率。</translation>
    </message>
    <message>
        <source>The model in {where} is damaged: its tensor {tensor} holds values that are not numbers (NaN or infinity), so nothing trained from it can work.</source>
        <translation>{where} 中的模型已損壞：其張量 {tensor} 含有非數值（NaN 或無窮大），用它訓練不會有任何結果。</translation>
    </message>
    <message>
        <source>Download the model again or choose another one; a model a diverged run saved cannot be repaired: train it again from its base model.</source>
        <translation>請重新下載該模型或換一個模型；發散的訓練任務儲存的模型無法修復：請從其基礎模型重新訓練。</translation>
    </message>
    <message>
        <source>training loss</source>
        <translation>訓練損失</translation>
    </message>
    <message>
        <source>evaluation loss</source>
        <translation>評估損失</translation>
    </message>
    <message>
        <source>gradient norm</source>
        <translation>梯度範數</translation>
    </message>
    <message>
        <source>Train in bf16</source>
        <translation>用 bf16 訓練</translation>
    </message>
    <message>
        <source>Train in fp32</source>
        <translation>用 fp32 訓練</translation>
    </message>
    <message>
        <source>The checkpoint is at the last step: the evaluation and the save are left</source>
        <translation>檢查點已在最後一步：只剩評估和儲存</translation>
    </message>
    <message>
        <source>preference tuning: dpo (default) or orpo (no reference model: less memory)</source>
        <translation>偏好微調：dpo（預設）或 orpo（不需要參照模型：佔用較少顯示記憶體）</translation>
    </message>
    <message>
        <source>--method is for preference tuning; {task} runs have no method.</source>
        <translation>--method 只用於偏好微調；{task} 任務沒有方法可選。</translation>
    </message>
    <message>
        <source>Leave --method out, or use --task preference.</source>
        <translation>請去掉 --method，或使用 --task preference。</translation>
    </message>
    <message>
        <source>Writing GGUF tensors</source>
        <translation>正在寫入 GGUF 張量</translation>
    </message>
    <message>
        <source>Quantizing with llama.cpp</source>
        <translation>正在用 llama.cpp 量化</translation>
    </message>
    <message>
        <source>Checking the file with llama.cpp</source>
        <translation>正在用 llama.cpp 驗證檔案</translation>
    </message>
    <message>
        <source>Published to {url}</source>
        <translation>已發布到 {url}</translation>
    </message>
    <message>
        <source>publish a finished run to the Hugging Face hub or ModelScope, with its model card</source>
        <translation>將完成的訓練任務連同模型卡片發布到 Hugging Face 或 ModelScope</translation>
    </message>
    <message>
        <source>a run folder or a run&apos;s name (exported first), or a folder or GGUF file already exported</source>
        <translation>訓練任務資料夾或其名稱（先匯出），或已匯出的資料夾或 GGUF 檔案</translation>
    </message>
    <message>
        <source>the repository: owner/name, or name for your own account</source>
        <translation>儲存庫：擁有者/名稱，或僅名稱（你自己的帳號）</translation>
    </message>
    <message>
        <source>a new repository is private (the default)</source>
        <translation>新儲存庫為私人（預設）</translation>
    </message>
    <message>
        <source>make a new repository public</source>
        <translation>新儲存庫設為公開</translation>
    </message>
    <message>
        <source>hf: Hugging Face (the endpoint in the settings; a mirror must take uploads); modelscope: ModelScope</source>
        <translation>hf：Hugging Face（設定中的位址；鏡像須支援上傳）；modelscope：ModelScope</translation>
    </message>
    <message>
        <source>folder: the model folder; gguf: the GGUF file with its Modelfile; adapter: the LoRA adapters alone</source>
        <translation>folder：模型資料夾；gguf：GGUF 檔案及其 Modelfile；adapter：僅 LoRA 配接器</translation>
    </message>
    <message>
        <source>the repository already holds files: replace them (ours are written, the others deleted)</source>
        <translation>儲存庫中已有檔案：取代它們（寫入我們的檔案，刪除其餘檔案）</translation>
    </message>
    <message>
        <source>the weights&apos; type</source>
        <translation>權重類型</translation>
    </message>
    <message>
        <source>GGUF: the weights&apos; type</source>
        <translation>GGUF：權重類型</translation>
    </message>
    <message>
        <source>skip the export&apos;s check</source>
        <translation>跳過匯出的檢查</translation>
    </message>
    <message>
        <source>Hugging Face&apos;s address (default: from the settings)</source>
        <translation>Hugging Face 的位址（預設：取自設定）</translation>
    </message>
    <message>
        <source>No run folder {run} was found, nor an exported folder or GGUF file.</source>
        <translation>找不到訓練任務資料夾 {run}，也不是已匯出的資料夾或 GGUF 檔案。</translation>
    </message>
    <message>
        <source>Added to Ollama: {command}</source>
        <translation>已加入 Ollama：{command}</translation>
    </message>
    <message>
        <source>{rows} held-out preference pairs</source>
        <translation>{rows} 個保留的偏好對</translation>
    </message>
    <message>
        <source>{rows} held-out prompts: the share whose greedy answer earns each reward</source>
        <translation>{rows} 個預留提示詞：貪婪解碼的回答獲得各項獎勵的比例</translation>
    </message>
    <message>
        <source>GGUF: the weights&apos; type (q4_k_m needs llama.cpp: pip install llama-cpp-python)</source>
        <translation>GGUF：權重類型（q4_k_m 需要 llama.cpp：pip install llama-cpp-python）</translation>
    </message>
    <message>
        <source>GGUF: also add the model to Ollama (ollama create); with --quant q4_k_m and no llama.cpp, Ollama makes the 4-bit model from an f16 file</source>
        <translation>GGUF：同時把模型加入 Ollama（ollama create）；使用 --quant q4_k_m 且未安裝 llama.cpp 時，由 Ollama 從 f16 檔案產生 4 位元模型</translation>
    </message>
    <message>
        <source>GGUF: lmstudio puts the file in DEST/finetune-studio/RUN/, as LM Studio lists models</source>
        <translation>GGUF：lmstudio 會把檔案放在 DEST/finetune-studio/RUN/，與 LM Studio 列出模型的方式一致</translation>
    </message>
    <message>
        <source>a run whose model is its best checkpoint: export the last step&apos;s model instead (made from its checkpoint)</source>
        <translation>模型為最佳檢查點的執行：改為匯出最後一步的模型（由其檢查點產生）</translation>
    </message>
    <message>
        <source>skip the check (folder: reloading it; gguf: llama.cpp&apos;s answers)</source>
        <translation>略過驗證（資料夾：重新載入；gguf：llama.cpp 的回答）</translation>
    </message>
    <message>
        <source>also log the model to MLflow (MLFLOW_TRACKING_URI, else a store in the app&apos;s data folder)</source>
        <translation>同時把模型記錄到 MLflow（MLFLOW_TRACKING_URI，未設定時記錄到應用程式資料夾中的儲存區）</translation>
    </message>
    <message>
        <source>To look: {command}</source>
        <translation>檢視方法：{command}</translation>
    </message>
    <message>
        <source>llama.cpp is not installed: Ollama will make q4_K_M from the f16 file.</source>
        <translation>未安裝 llama.cpp：將由 Ollama 從 f16 檔案產生 q4_K_M。</translation>
    </message>
    <message>
        <source>LM Studio reads its models from {folder}.</source>
        <translation>LM Studio 從 {folder} 讀取模型。</translation>
    </message>
    <message>
        <source>The GGUF file is written; add it to Ollama later.</source>
        <translation>GGUF 檔案已寫出，可以稍後再加入 Ollama。</translation>
    </message>
    <message>
        <source>preference accuracy</source>
        <translation>偏好準確率</translation>
    </message>
    <message>
        <source>mean margin (nats per token)</source>
        <translation>平均差值（每詞元，nat）</translation>
    </message>
    <message>
        <source>reward accuracy ({method})</source>
        <translation>獎勵準確率（{method}）</translation>
    </message>
    <message>
        <source>reward margin ({method})</source>
        <translation>獎勵差值（{method}）</translation>
    </message>
    <message>
        <source>Now preferring the chosen answer:</source>
        <translation>現在偏向選中回答：</translation>
    </message>
    <message>
        <source>Still preferring the rejected answer:</source>
        <translation>仍然偏向被拒回答：</translation>
    </message>
    <message>
        <source>prompt:   {text}</source>
        <translation>提示詞：  {text}</translation>
    </message>
    <message>
        <source>chosen:   {text}</source>
        <translation>選中：    {text}</translation>
    </message>
    <message>
        <source>rejected: {text}</source>
        <translation>被拒：    {text}</translation>
    </message>
    <message>
        <source>margin:   {value}</source>
        <translation>差值：    {value}</translation>
    </message>
    <message>
        <source>advice: {message}</source>
        <translation>建議：{message}</translation>
    </message>
    <message>
        <source>to try it: {change} ({flags})</source>
        <translation>試試：{change}（{flags}）</translation>
    </message>
    <message>
        <source>{problem}: it has no checkpoint to resume from; train it again.</source>
        <translation>{problem}：它沒有可繼續的檢查點，請重新訓練。</translation>
    </message>
    <message>
        <source>{problem}: resume it from its last good checkpoint with: finetune-studio-cli train {config} --resume</source>
        <translation>{problem}：可用以下指令從最後一個完好的檢查點繼續：finetune-studio-cli train {config} --resume</translation>
    </message>
    <message>
        <source>Ollama serves {model} at {url} (the same API; it keeps running after this command).</source>
        <translation>Ollama 在 {url} 提供 {model}（同樣的 API；本指令結束後它仍在執行）。</translation>
    </message>
    <message>
        <source>Serving {model} ({task}) at {url}</source>
        <translation>正在 {url} 提供 {model}（{task}）</translation>
    </message>
    <message>
        <source>Press Ctrl+C to stop.</source>
        <translation>按 Ctrl+C 停止。</translation>
    </message>
    <message>
        <source>Try it with curl:</source>
        <translation>用 curl 試一試：</translation>
    </message>
    <message>
        <source>or from Python (pip install openai):</source>
        <translation>或者在 Python 中（pip install openai）：</translation>
    </message>
    <message>
        <source>answer requests to a trained model over an OpenAI-compatible HTTP API</source>
        <translation>透過相容 OpenAI 的 HTTP API 讓訓練好的模型回答請求</translation>
    </message>
    <message>
        <source>Serve a finished run or an exported model folder at http://HOST:PORT/v1: chat and text completions (OpenAI&apos;s API) for language models, /v1/classify for classifiers. Only this computer can reach it unless --host says otherwise; then every request needs the API key this command makes and keeps in the OS keyring.</source>
        <translation>在 http://HOST:PORT/v1 提供已完成的訓練任務或匯出的模型資料夾：語言模型提供對話和文字補全（OpenAI 的 API），分類模型提供 /v1/classify。除非用 --host 另行指定，只有本機能存取；指定後每個請求都需要本指令產生並保存在系統金鑰圈中的 API 金鑰。</translation>
    </message>
    <message>
        <source>a run&apos;s name or folder, or a model folder</source>
        <translation>訓練任務的名稱或資料夾，或一個模型資料夾</translation>
    </message>
    <message>
        <source>the port (default: {port})</source>
        <translation>連接埠（預設：{port}）</translation>
    </message>
    <message>
        <source>the address to listen on (default: 127.0.0.1, this computer only; 0.0.0.0: every network)</source>
        <translation>監聽的位址（預設：127.0.0.1，僅限本機；0.0.0.0：所有網路）</translation>
    </message>
    <message>
        <source>the model&apos;s name in requests (default: the run&apos;s or folder&apos;s)</source>
        <translation>請求中使用的模型名稱（預設：訓練任務或資料夾的名稱）</translation>
    </message>
    <message>
        <source>the longest answer a request may ask for (default: 4096)</source>
        <translation>一個請求最多可要求的回答長度（預設：4096）</translation>
    </message>
    <message>
        <source>requests that may wait while one is answered; the next are told the server is busy (default: 32)</source>
        <translation>回答一個請求時最多可排隊等待的請求數；再多的會被告知服務忙碌（預設：32）</translation>
    </message>
    <message>
        <source>another name requests may be addressed to (this computer&apos;s name in your network, a proxy&apos;s); requests addressed to other names are refused (a web page may use one to reach the server)</source>
        <translation>請求可以使用的另一個名稱（本機在你網路中的名稱、代理的名稱）；發往其他名稱的請求會被拒絕（網頁可能藉此存取伺服器）</translation>
    </message>
    <message>
        <source>a web page that may use the server from a browser, as scheme://host:port (e.g. http://localhost:3000); requests from other pages are refused</source>
        <translation>允許在瀏覽器中使用本伺服器的網頁，寫成 scheme://host:port（例如 http://localhost:3000）；來自其他網頁的請求會被拒絕</translation>
    </message>
    <message>
        <source>a vision-language model: fetch the pictures requests name by web address (off: pictures come as data URLs, or as files when serving on this computer only)</source>
        <translation>視覺語言模型：按請求中的網址下載圖片（關閉時：圖片以 data URL 傳送，或僅在本機服務時以檔案路徑傳送）</translation>
    </message>
    <message>
        <source>require the API key on this computer too</source>
        <translation>在本機上也要求 API 金鑰</translation>
    </message>
    <message>
        <source>replace the kept API key with a new one</source>
        <translation>用新的 API 金鑰取代已保存的金鑰</translation>
    </message>
    <message>
        <source>Or serve the run itself (with transformers): finetune-studio-cli serve RUN</source>
        <translation>或者直接提供這個訓練任務（用 transformers）：finetune-studio-cli serve RUN</translation>
    </message>
    <message>
        <source>--max-tokens must be at least 1.</source>
        <translation>--max-tokens 至少為 1。</translation>
    </message>
    <message>
        <source>For example: --max-tokens 1024</source>
        <translation>例如：--max-tokens 1024</translation>
    </message>
    <message>
        <source>Loading {folder}…</source>
        <translation>正在載入 {folder}…</translation>
    </message>
    <message>
        <source>Stopped; the model&apos;s memory is free again.</source>
        <translation>已停止；模型占用的記憶體已釋放。</translation>
    </message>
    <message>
        <source>API key (shown this once): {key}</source>
        <translation>API 金鑰（僅顯示這一次）：{key}</translation>
    </message>
    <message>
        <source>Requests need the key: set {env} to it, as the examples below read it.</source>
        <translation>請求需要這個金鑰：請把 {env} 設為它，下面的範例會讀取它。</translation>
    </message>
    <message>
        <source>{env} is set: the server uses that key, so --new-key would change nothing.</source>
        <translation>{env} 已設定：服務使用這個金鑰，所以 --new-key 不會改變任何東西。</translation>
    </message>
    <message>
        <source>Unset {env} to use the key in the OS keyring, or leave out --new-key.</source>
        <translation>取消設定 {env} 以使用系統金鑰圈中的金鑰，或去掉 --new-key。</translation>
    </message>
    <message>
        <source>From other computers: {urls}</source>
        <translation>從其他電腦存取：{urls}</translation>
    </message>
    <message>
        <source>It is kept in your OS keyring; --new-key replaces it.</source>
        <translation>它保存在系統金鑰圈中；--new-key 可換一個新的。</translation>
    </message>
    <message>
        <source>No OS keyring is available: a new key is made at each start.</source>
        <translation>沒有可用的系統金鑰圈：每次啟動都會產生新的金鑰。</translation>
    </message>
    <message>
        <source>The run {run} has no saved model yet.</source>
        <translation>訓練任務 {run} 還沒有儲存的模型。</translation>
    </message>
    <message>
        <source>Serve a finished run, or resume this one to its end first.</source>
        <translation>請提供一個已完成的訓練任務，或先把這個訓練任務續訓到結束。</translation>
    </message>
    <message>
        <source>Free a few gigabytes on that drive, then start Finetune Studio again; it finishes the setup.</source>
        <translation>請在那個磁碟上騰出幾 GB 空間，然後重新啟動 Finetune Studio；它會完成安裝。</translation>
    </message>
    <message>
        <source>A package is missing from the offline package.</source>
        <translation>離線安裝包中缺少一個套件。</translation>
    </message>
    <message>
        <source>Use the complete offline installer, or start while connected to the internet.</source>
        <translation>請使用完整的離線安裝程式，或在連網狀態下啟動。</translation>
    </message>
    <message>
        <source>The PyTorch download was damaged: it does not match its checksum.</source>
        <translation>下載的 PyTorch 已損毀：與其檢查碼不一致。</translation>
    </message>
    <message>
        <source>Start Finetune Studio again: it downloads the file again. If this repeats, a proxy or an antivirus is changing downloads: set a PyTorch mirror, or ask your IT department.</source>
        <translation>請重新啟動 Finetune Studio，它會重新下載該檔案。如果反覆出現，表示代理伺服器或防毒軟體在修改下載內容：請設定 PyTorch 鏡像，或聯絡 IT 部門。</translation>
    </message>
    <message>
        <source>The download was refused: the server&apos;s certificate is not trusted on this computer.</source>
        <translation>下載被拒絕：這台電腦不信任伺服器的憑證。</translation>
    </message>
    <message>
        <source>A company network or an antivirus that inspects secure connections uses its own certificate: install it in the system&apos;s certificate store (your IT department has it), or set a mirror or proxy you are given; then try again.</source>
        <translation>檢查加密連線的公司網路或防毒軟體會使用自己的憑證：請把它安裝到系統的憑證存放區（可向 IT 部門索取），或填寫提供給你的鏡像或代理伺服器，然後重試。</translation>
    </message>
    <message>
        <source>Could not download the packages: the network or the package server is not reachable.</source>
        <translation>無法下載套件：網路或套件伺服器無法連線。</translation>
    </message>
    <message>
        <source>Check the internet connection (or the proxy), or set a mirror, then try again.</source>
        <translation>請檢查網路連線（或代理伺服器），或者設定鏡像站，然後重試。</translation>
    </message>
    <message>
        <source>Python {version} could not be set up.</source>
        <translation>無法安裝 Python {version}。</translation>
    </message>
    <message>
        <source>Check the internet connection, then try again; uv downloads Python the first time.</source>
        <translation>請檢查網路連線後重試；第一次執行時 uv 需要下載 Python。</translation>
    </message>
    <message>
        <source>Windows ran out of virtual memory loading PyTorch: the paging file is too small (error 1455).</source>
        <translation>Windows 在載入 PyTorch 時虛擬記憶體不足：分頁檔太小（錯誤 1455）。</translation>
    </message>
    <message>
        <source>Let Windows manage the paging file size (Advanced system settings &gt; Performance &gt; Settings &gt; Advanced &gt; Virtual memory), keep a few GB free on the system drive, restart Windows, then start Finetune Studio again.</source>
        <translation>讓 Windows 自動管理分頁檔大小（進階系統設定 &gt; 效能 &gt; 設定 &gt; 進階 &gt; 虛擬記憶體），在系統磁碟上保留幾 GB 可用空間，重新啟動 Windows，然後再次啟動 Finetune Studio。</translation>
    </message>
    <message>
        <source>PyTorch cannot load: the Microsoft Visual C++ runtime is missing on this PC.</source>
        <translation>PyTorch 無法載入：這台電腦缺少 Microsoft Visual C++ 執行階段。</translation>
    </message>
    <message>
        <source>Install the Microsoft Visual C++ 2015-2022 Redistributable (x64) from https://aka.ms/vs/17/release/vc_redist.x64.exe, then start Finetune Studio again.</source>
        <translation>請從 https://aka.ms/vs/17/release/vc_redist.x64.exe 安裝 Microsoft Visual C++ 2015-2022 可轉散發套件（x64），然後重新啟動 Finetune Studio。</translation>
    </message>
    <message>
        <source>A file could not be written: access was denied.</source>
        <translation>無法寫入檔案：存取被拒。</translation>
    </message>
    <message>
        <source>Close other Finetune Studio windows (and antivirus scans of its folder), then try again.</source>
        <translation>請關閉其他 Finetune Studio 視窗（以及正在掃描其資料夾的防毒軟體），然後重試。</translation>
    </message>
    <message>
        <source>The proxy asks for a user name and password (HTTP 407: proxy authentication required).</source>
        <translation>代理伺服器要求輸入使用者名稱和密碼（HTTP 407：需要 Proxy 驗證）。</translation>
    </message>
    <message>
        <source>Set the proxy with them: in the setup window&apos;s Proxy field, or start FinetuneStudio --proxy http://USER:PASSWORD@HOST:PORT (the password is not written into any file). A proxy that signs in with your Windows account alone (NTLM, Kerberos) needs a user name and password from your IT department.</source>
        <translation>請在代理伺服器設定中帶上它們：填寫在安裝視窗的「代理伺服器」欄中，或用 FinetuneStudio --proxy http://USER:PASSWORD@HOST:PORT 啟動（密碼不會寫入任何檔案）。只用 Windows 帳戶登入的代理伺服器（NTLM、Kerberos）需要向 IT 部門申請使用者名稱和密碼。</translation>
    </message>
    <message>
        <source>A file of the runtime is in use by another program, so it cannot be replaced (error 32).</source>
        <translation>執行環境中的一個檔案正被另一個程式使用，無法取代（錯誤 32）。</translation>
    </message>
    <message>
        <source>Close every Finetune Studio window and command-line run; wait until an antivirus scan, a backup or OneDrive has finished with the data folder (or restart Windows); then try again.</source>
        <translation>請關閉所有 Finetune Studio 視窗和命令列訓練；等防毒掃描、備份或 OneDrive 處理完資料夾（或重新啟動 Windows），然後重試。</translation>
    </message>
    <message>
        <source>The antivirus blocked a file of the setup as a threat (error 225).</source>
        <translation>防毒軟體把安裝中的一個檔案當作威脅封鎖了（錯誤 225）。</translation>
    </message>
    <message>
        <source>It is usually a false alarm on a Python or PyTorch file. Open Windows Security &gt; Virus &amp; threat protection &gt; Protection history, allow the item when it is a file of Finetune Studio&apos;s data folder, then try again; or ask your IT department.</source>
        <translation>這通常是對 Python 或 PyTorch 檔案的誤判。開啟 Windows 安全性 &gt; 病毒與威脅防護 &gt; 保護歷程記錄，如果被封鎖的是 Finetune Studio 資料夾中的檔案，就允許它，然後重試；也可以聯絡 IT 部門。</translation>
    </message>
    <message>
        <source>Windows blocked a file of the runtime: Smart App Control or a company&apos;s application control policy does not allow it (error 4551).</source>
        <translation>Windows 封鎖了執行環境中的一個檔案：智慧型應用程式控制或公司的應用程式控制原則不允許它（錯誤 4551）。</translation>
    </message>
    <message>
        <source>Smart App Control judges each Python and PyTorch file by its maker&apos;s signature and reputation (the README explains the choice): turn it off in Windows Security &gt; App &amp; browser control, or on a company PC ask your IT department to allow the data folder; then start Finetune Studio again.</source>
        <translation>智慧型應用程式控制依製作者的簽章和信譽逐一判斷 Python 和 PyTorch 檔案（README 中說明了如何取捨）：請在 Windows 安全性 &gt; 應用程式與瀏覽器控制中關閉它；如果是公司電腦，請讓 IT 部門允許資料夾；然後再次啟動 Finetune Studio。</translation>
    </message>
    <message>
        <source>A file path in the runtime is too long for Windows (260 characters at most).</source>
        <translation>執行環境中的一個檔案路徑超出了 Windows 的長度限制（最多 260 個字元）。</translation>
    </message>
    <message>
        <source>Enable long paths (as administrator: reg add HKLM\SYSTEM\CurrentControlSet\Control\FileSystem /v LongPathsEnabled /t REG_DWORD /d 1 /f, then restart Windows), or move the data folder to a short path (FinetuneStudio --data-folder D:\FinetuneStudio); then try again.</source>
        <translation>請啟用長路徑（以系統管理員身分執行：reg add HKLM\SYSTEM\CurrentControlSet\Control\FileSystem /v LongPathsEnabled /t REG_DWORD /d 1 /f，然後重新啟動 Windows），或把資料夾移到較短的路徑（FinetuneStudio --data-folder D:\FinetuneStudio），然後重試。</translation>
    </message>
    <message>
        <source>A file is too large for the data drive: it is formatted FAT32, which holds files of at most 4 GB.</source>
        <translation>檔案對資料所在的磁碟機來說太大：它是 FAT32 格式，單一檔案最大只能 4 GB。</translation>
    </message>
    <message>
        <source>Move the data folder to a drive formatted NTFS or ext4 (FinetuneStudio --data-folder FOLDER), or convert that drive to NTFS; then try again.</source>
        <translation>請把資料夾移到 NTFS 或 ext4 格式的磁碟機（FinetuneStudio --data-folder FOLDER），或把該磁碟機轉換為 NTFS，然後重試。</translation>
    </message>
    <message>
        <source>The offline package holds no PyTorch.</source>
        <translation>離線安裝包裡沒有 PyTorch。</translation>
    </message>
    <message>
        <source>Use the full offline installer, or start without --offline while connected.</source>
        <translation>請使用完整的離線安裝程式，或在連網時不加 --offline 啟動。</translation>
    </message>
    <message>
        <source>Could not run {program}: {error}</source>
        <translation>無法執行 {program}：{error}</translation>
    </message>
    <message>
        <source>The run {run} cannot be resumed: none of its checkpoints can be loaded: {damaged}.</source>
        <translation>訓練 {run} 無法繼續：它的檢查點都無法載入：{damaged}。</translation>
    </message>
    <message>
        <source>Start a new run from this config without --resume. The damaged checkpoints are kept in {folder} for a look; delete them to free the space.</source>
        <translation>請不加 --resume，用此設定開始新的訓練。損壞的檢查點保留在 {folder} 中以便查看；刪除它們即可釋放空間。</translation>
    </message>
    <message>
        <source>{value} is not a web page&apos;s origin.</source>
        <translation>{value} 不是網頁的來源（origin）。</translation>
    </message>
    <message>
        <source>Write it as scheme://host:port, e.g. http://localhost:3000 (no path).</source>
        <translation>請寫成 scheme://host:port，例如 http://localhost:3000（不含路徑）。</translation>
    </message>
    <message>
        <source>Stopping the download; what arrived is kept (Ctrl-C again to quit at once)...</source>
        <translation>正在停止下載；已下載的部分會保留（再按一次 Ctrl-C 立即結束）...</translation>
    </message>
    <message>
        <source>No window can open: DISPLAY is set to {display}, but no X server answers there.</source>
        <translation>無法開啟視窗：DISPLAY 設為 {display}，但那裡沒有 X 伺服器回應。</translation>
    </message>
    <message>
        <source>Start Finetune Studio from your desktop session, or unset DISPLAY to set it up without a window (FinetuneStudio --headless).</source>
        <translation>請在桌面工作階段中啟動 Finetune Studio，或取消設定 DISPLAY，以便不開啟視窗完成設定（FinetuneStudio --headless）。</translation>
    </message>
    <message>
        <source>No window can open: Qt needs system libraries that are missing ({libraries}).</source>
        <translation>無法開啟視窗：Qt 需要的系統程式庫缺失（{libraries}）。</translation>
    </message>
    <message>
        <source>Install them ({command}), then start Finetune Studio again.</source>
        <translation>請安裝它們（{command}），然後重新啟動 Finetune Studio。</translation>
    </message>
    <message>
        <source>The download stalled: nothing came from {host} for a minute.</source>
        <translation>下載停滯：一分鐘內沒有從 {host} 收到任何資料。</translation>
    </message>
    <message>
        <source>Set a PyTorch mirror (the &quot;PyTorch mirror&quot; field below, or --torch-index-url) or check the network, then try again: the part downloaded so far is kept.</source>
        <translation>請設定 PyTorch 鏡像（下方的「PyTorch 鏡像站」欄位，或 --torch-index-url）或檢查網路，然後重試：已下載的部分會保留。</translation>
    </message>
    <message>
        <source>To repair it: FinetuneStudio --repair. The log: {log}</source>
        <translation>修復方法：FinetuneStudio --repair。日誌：{log}</translation>
    </message>
    <message>
        <source>Repair the runtime (FinetuneStudio --repair); it keeps your PyTorch build and your runs.</source>
        <translation>請修復執行環境（FinetuneStudio --repair）；它會保留你的 PyTorch 版本和訓練任務。</translation>
    </message>
    <message>
        <source>Finetune Studio stopped right after starting (exit code {code}).</source>
        <translation>Finetune Studio 啟動後立即停止了（結束代碼 {code}）。</translation>
    </message>
    <message>
        <source>Try again. If it stops again, repair the runtime (it keeps your PyTorch build and your runs), or send the log ({log}).</source>
        <translation>請重試。如果再次停止，請修復執行環境（會保留你的 PyTorch 版本和訓練任務），或傳送日誌（{log}）。</translation>
    </message>
    <message>
        <source>Try again</source>
        <translation>重試</translation>
    </message>
    <message>
        <source>Repair</source>
        <translation>修復</translation>
    </message>
    <message>
        <source>Open the log</source>
        <translation>開啟日誌</translation>
    </message>
    <message>
        <source>asked for on the Environment page</source>
        <translation>在「環境」頁面中選擇的</translation>
    </message>
    <message>
        <source>The new PyTorch is ready, but Finetune Studio is still running ({what}), so it was not swapped in.</source>
        <translation>新的 PyTorch 已準備好，但 Finetune Studio 仍在執行（{what}），所以沒有換上。</translation>
    </message>
    <message>
        <source>Close every Finetune Studio window and command-line run, then start Finetune Studio: the new PyTorch goes in at once.</source>
        <translation>請關閉所有 Finetune Studio 視窗和命令列訓練，然後啟動 Finetune Studio：新的 PyTorch 會立即換上。</translation>
    </message>
    <message>
        <source>The PyTorch you had is unchanged.</source>
        <translation>原有的 PyTorch 沒有變動。</translation>
    </message>
    <message>
        <source>the build this runtime had</source>
        <translation>這個執行環境原有的版本</translation>
    </message>
    <message>
        <source>This version of Finetune Studio needs PyTorch {floor}, and no release of that kind of build ({tag}) does.</source>
        <translation>這個版本的 Finetune Studio 需要 PyTorch {floor}，而這類版本（{tag}）沒有一個滿足。</translation>
    </message>
    <message>
        <source>Open the Environment step and install the PyTorch build it recommends, then update again.</source>
        <translation>請開啟「環境」步驟，安裝它推薦的 PyTorch 版本，然後再次更新。</translation>
    </message>
    <message>
        <source>the build installed now, kept</source>
        <translation>保留目前安裝的版本</translation>
    </message>
    <message>
        <source>PyTorch {installed} is older than this version of Finetune Studio needs ({floor}); the same kind of build ({tag}) from the same place</source>
        <translation>PyTorch {installed} 比這個版本的 Finetune Studio 所需的舊（{floor}）；改用來自同一來源的同類版本（{tag}）</translation>
    </message>
    <message>
        <source>Setup failed: {error}</source>
        <translation>安裝失敗：{error}</translation>
    </message>
    <message>
        <source>Try again, or start with --repair.</source>
        <translation>請重試，或加上 --repair 啟動。</translation>
    </message>
    <message>
        <source>Install the latest Microsoft Visual C++ 2015-2022 Redistributable (x64) from {url} (the Finetune Studio installer does it too), then start Finetune Studio again.</source>
        <translation>請從 {url} 安裝最新的 Microsoft Visual C++ 2015-2022 可轉散發套件（x64）（Finetune Studio 安裝程式也會安裝它），然後再次啟動 Finetune Studio。</translation>
    </message>
    <message>
        <source>The Microsoft Visual C++ runtime {found} is older than PyTorch needs ({minimum} or newer).</source>
        <translation>Microsoft Visual C++ 執行階段 {found} 版本太舊，PyTorch 需要 {minimum} 或更新版本。</translation>
    </message>
    <message>
        <source>Smart App Control is on: it blocks the Python and PyTorch files the setup installs, because they are not signed the way it requires.</source>
        <translation>智慧型應用程式控制已開啟：它會封鎖安裝過程中安裝的 Python 和 PyTorch 檔案，因為這些檔案沒有依它要求的方式簽署。</translation>
    </message>
    <message>
        <source>Turn Smart App Control off (Windows Security &gt; App &amp; browser control &gt; Smart App Control), then start Finetune Studio again. Windows cannot turn it back on without reinstalling; the README explains the choice.</source>
        <translation>請關閉智慧型應用程式控制（Windows 安全性 &gt; 應用程式與瀏覽器控制 &gt; 智慧型應用程式控制），然後再次啟動 Finetune Studio。關閉後必須重新安裝 Windows 才能再次開啟；README 中說明了如何取捨。</translation>
    </message>
    <message>
        <source>The Microsoft Visual C++ runtime that PyTorch needs is not installed.</source>
        <translation>未安裝 PyTorch 需要的 Microsoft Visual C++ 執行階段。</translation>
    </message>
    <message>
        <source>The repair stopped with an error: {error}</source>
        <translation>修復因錯誤而中止：{error}</translation>
    </message>
    <message>
        <source>Downloading {name}: {share} of {total}, {speed}/s</source>
        <translation>正在下載 {name}：{total} 中的 {share}，{speed}/s</translation>
    </message>
    <message>
        <source>Comes with the app: works offline; English only.</source>
        <translation>應用程式內建：可離線使用；僅支援英文。</translation>
    </message>
    <message>
        <source>Small, fast English encoder.</source>
        <translation>小巧、快速的英文編碼器。</translation>
    </message>
    <message>
        <source>The classic Chinese BERT.</source>
        <translation>經典的中文 BERT。</translation>
    </message>
    <message>
        <source>Chinese RoBERTa with whole-word masking; usually better than bert-base-chinese.</source>
        <translation>採用全詞遮罩的中文 RoBERTa；通常比 bert-base-chinese 更好。</translation>
    </message>
    <message>
        <source>94 languages, Chinese and English among them.</source>
        <translation>支援 94 種語言，包括中文與英文。</translation>
    </message>
    <message>
        <source>Small instruct model: a first chat fine-tune on a laptop GPU.</source>
        <translation>小型指令模型：適合在筆電 GPU 上做第一次對話微調。</translation>
    </message>
    <message>
        <source>Gated: accept Meta&apos;s license on its page, then add a token in Settings.</source>
        <translation>受限模型：請先在它的頁面上同意 Meta 的授權條款，再在「設定」中新增存取權杖。</translation>
    </message>
    <message>
        <source>A good size for 8-12 GB GPUs with LoRA.</source>
        <translation>搭配 LoRA，適合 8-12 GB 顯示記憶體的 GPU。</translation>
    </message>
    <message>
        <source>Research license: not for commercial use without Qwen&apos;s permission.</source>
        <translation>研究授權：未經 Qwen 許可不得商業使用。</translation>
    </message>
    <message>
        <source>Strong 7B instruct model; QLoRA on a 16-24 GB GPU.</source>
        <translation>強大的 7B 指令模型；在 16-24 GB 顯示記憶體的 GPU 上用 QLoRA。</translation>
    </message>
    <message>
        <source>Chinese to English translation (Marian).</source>
        <translation>中翻英（Marian）。</translation>
    </message>
    <message>
        <source>English to Chinese translation (Marian).</source>
        <translation>英翻中（Marian）。</translation>
    </message>
    <message>
        <source>Multilingual T5 (101 languages): a base for Chinese summarisation or translation.</source>
        <translation>多語言 T5（101 種語言）：可作為中文摘要或翻譯的基礎模型。</translation>
    </message>
    <message>
        <source>English news summarisation.</source>
        <translation>英文新聞摘要。</translation>
    </message>
</context>
<context>
    <name>moving</name>
    <message>
        <source>Moving the data folder to {target}…</source>
        <translation>正在把資料資料夾移到 {target}…</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
</context>
</TS>
