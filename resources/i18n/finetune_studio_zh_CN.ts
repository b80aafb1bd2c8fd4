<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>DataPage</name>
    <message>
        <source>Model &amp; data</source>
        <translation>模型与数据</translation>
    </message>
    <message>
        <source>What to train, and on which examples.</source>
        <translation>训练什么，用哪些样本。</translation>
    </message>
    <message>
        <source>Choose a data file or a hub dataset.</source>
        <translation>请选择数据文件或 Hub 数据集。</translation>
    </message>
    <message>
        <source>Text classification</source>
        <translation>文本分类</translation>
    </message>
    <message>
        <source>Causal-LM / chat fine-tuning</source>
        <translation>因果语言模型 / 对话微调</translation>
    </message>
    <message>
        <source>Sequence-to-sequence</source>
        <translation>序列到序列</translation>
    </message>
    <message>
        <source>Hub id such as bert-base-chinese, or a local folder</source>
        <translation>Hub 模型 ID（如 bert-base-chinese）或本地文件夹</translation>
    </message>
    <message>
        <source>Folder…</source>
        <translation>文件夹…</translation>
    </message>
    <message>
        <source>Browse models…</source>
        <translation>浏览模型…</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>下载</translation>
    </message>
    <message>
        <source>A CSV, TSV, JSON(L), Parquet, TXT or Excel file, or a hub dataset id</source>
        <translation>CSV、TSV、JSON(L)、Parquet、TXT 或 Excel 文件，或 Hub 数据集 ID</translation>
    </message>
    <message>
        <source>File…</source>
        <translation>文件…</translation>
    </message>
    <message>
        <source>Try the sample</source>
        <translation>试用示例</translation>
    </message>
    <message>
        <source>Load short English reviews and a small offline English model</source>
        <translation>载入简短的英文评论和一个可离线使用的小型英文模型</translation>
    </message>
    <message>
        <source>Share of the rows held out to measure the model; 0 = no evaluation</source>
        <translation>留出一部分数据用来评估模型；0 表示不评估</translation>
    </message>
    <message>
        <source>Chat messages</source>
        <translation>对话消息</translation>
    </message>
    <message>
        <source>Instruction / input / output</source>
        <translation>指令 / 输入 / 输出</translation>
    </message>
    <message>
        <source>Prompt / completion</source>
        <translation>提示 / 补全</translation>
    </message>
    <message>
        <source>Plain text</source>
        <translation>纯文本</translation>
    </message>
    <message>
        <source>Token lengths appear once the model and data are loaded.</source>
        <translation>载入模型和数据后，这里显示各条数据的 token 长度。</translation>
    </message>
    <message>
        <source>Task and model</source>
        <translation>任务和模型</translation>
    </message>
    <message>
        <source>Task:</source>
        <translation>任务：</translation>
    </message>
    <message>
        <source>Model:</source>
        <translation>模型：</translation>
    </message>
    <message>
        <source>Data</source>
        <translation>数据</translation>
    </message>
    <message>
        <source>Dataset:</source>
        <translation>数据集：</translation>
    </message>
    <message>
        <source>seed</source>
        <translation>随机种子</translation>
    </message>
    <message>
        <source>Evaluation:</source>
        <translation>评估：</translation>
    </message>
    <message>
        <source>Columns</source>
        <translation>列</translation>
    </message>
    <message>
        <source>Format:</source>
        <translation>格式：</translation>
    </message>
    <message>
        <source>Token lengths</source>
        <translation>Token 长度</translation>
    </message>
    <message>
        <source>The columns are guessed again for {task}; check them below.</source>
        <translation>已按「{task}」重新猜测各列，请在下方核对。</translation>
    </message>
    <message>
        <source>Download {dataset}</source>
        <translation>下载 {dataset}</translation>
    </message>
    <message>
        <source>Choose a model folder</source>
        <translation>选择模型文件夹</translation>
    </message>
    <message>
        <source>Choose a data file</source>
        <translation>选择数据文件</translation>
    </message>
    <message>
        <source>Data files ({patterns})</source>
        <translation>数据文件（{patterns}）</translation>
    </message>
    <message>
        <source>{arch} ({type}), {params} parameters</source>
        <translation>{arch}（{type}），{params} 个参数</translation>
    </message>
    <message>
        <source>A small pretrained model that ships with the app (works offline).</source>
        <translation>应用自带的小型预训练模型（可离线使用）。</translation>
    </message>
    <message>
        <source>Download the model before training: it is not on this computer yet.</source>
        <translation>训练前请先下载模型：本机上还没有它。</translation>
    </message>
    <message>
        <source>Not on this computer yet. Download it here (with progress and Cancel); training starts from the downloaded copy, without the network.</source>
        <translation>本机上还没有这个模型。请在这里下载（可查看进度、随时取消）；训练将使用下载好的副本，无需联网。</translation>
    </message>
    <message>
        <source>On this computer (downloaded): training needs no network.</source>
        <translation>已在本机（已下载）：训练无需联网。</translation>
    </message>
    <message>
        <source>this GPU</source>
        <translation>这块 GPU</translation>
    </message>
    <message>
        <source>RAM (no NVIDIA GPU)</source>
        <translation>内存（没有 NVIDIA GPU）</translation>
    </message>
    <message>
        <source>Fit here: {badge}. Needs about {need} with the current Memory &amp; speed options; {have} free in {where}.</source>
        <translation>本机情况：{badge}。按当前的「显存与速度」设置约需 {need}；{where}有 {have} 可用。</translation>
    </message>
    <message>
        <source>Roughly {minutes:.0f} min per epoch on this CPU.</source>
        <translation>在这台电脑的 CPU 上，每轮（epoch）约需 {minutes:.0f} 分钟。</translation>
    </message>
    <message>
        <source>Reading the data…</source>
        <translation>正在读取数据…</translation>
    </message>
    <message>
        <source>{train} rows for training, {eval} for evaluation</source>
        <translation>{train} 行用于训练，{eval} 行用于评估</translation>
    </message>
    <message>
        <source>(none)</source>
        <translation>（无）</translation>
    </message>
    <message>
        <source>(choose a column)</source>
        <translation>（选择一列）</translation>
    </message>
    <message>
        <source>guessed from its name</source>
        <translation>根据列名猜测</translation>
    </message>
    <message>
        <source>guessed from the content</source>
        <translation>根据内容猜测</translation>
    </message>
    <message>
        <source> (optional)</source>
        <translation>（可选）</translation>
    </message>
    <message>
        <source>Choose a column for: {roles}.</source>
        <translation>请为以下用途选择列：{roles}。</translation>
    </message>
    <message>
        <source>Loading the tokenizer…</source>
        <translation>正在载入分词器…</translation>
    </message>
    <message>
        <source>{name}: min {min}, median {median}, 95% {p95}, max {max} tokens; {over} of {count} longer than the limit ({limit}) and cut</source>
        <translation>{name}：最短 {min}，中位数 {median}，95% 为 {p95}，最长 {max} 个 token；{count} 条中有 {over} 条超过上限（{limit}）并被截断</translation>
    </message>
    <message>
        <source>Token lengths unavailable: {error}</source>
        <translation>无法得到 token 长度：{error}</translation>
    </message>
</context>
<context>
    <name>DownloadDialog</name>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
</context>
<context>
    <name>DownloadPanel</name>
    <message>
        <source>Cancel download</source>
        <translation>取消下载</translation>
    </message>
    <message>
        <source>Enter an access token…</source>
        <translation>输入访问令牌…</translation>
    </message>
    <message>
        <source>Preparing the download of {name} from {source}…</source>
        <translation>正在准备从 {source} 下载 {name}…</translation>
    </message>
    <message>
        <source>{minutes}:{seconds:02d} left</source>
        <translation>剩余 {minutes}:{seconds:02d}</translation>
    </message>
    <message>
        <source>{done} of {total} · {speed}/s · {left}</source>
        <translation>{done} / {total} · {speed}/s · {left}</translation>
    </message>
    <message>
        <source>{name} is on this computer: {folder}</source>
        <translation>{name} 已在本机：{folder}</translation>
    </message>
    <message>
        <source>Download cancelled. What was downloaded is kept: Download again resumes it.</source>
        <translation>下载已取消。已下载的部分会保留：再次点「下载」即可从断点继续。</translation>
    </message>
</context>
<context>
    <name>EnvironmentPage</name>
    <message>
        <source>Environment</source>
        <translation>运行环境</translation>
    </message>
    <message>
        <source>Your GPU, your PyTorch, and whether they work together.</source>
        <translation>你的 GPU、你的 PyTorch，以及它们能否配合工作。</translation>
    </message>
    <message>
        <source>Checking your GPU and PyTorch…</source>
        <translation>正在检查 GPU 和 PyTorch…</translation>
    </message>
    <message>
        <source>Install the matching PyTorch</source>
        <translation>安装匹配的 PyTorch</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Show log</source>
        <translation>显示日志</translation>
    </message>
    <message>
        <source>https://download.pytorch.org/whl (default)</source>
        <translation>https://download.pytorch.org/whl（默认）</translation>
    </message>
    <message>
        <source>A mirror or private index with PyTorch wheels, for slow or blocked networks</source>
        <translation>提供 PyTorch 安装包的镜像站或私有索引，适用于网络慢或受限时</translation>
    </message>
    <message>
        <source>Check again</source>
        <translation>重新检查</translation>
    </message>
    <message>
        <source>Copy diagnostics</source>
        <translation>复制诊断信息</translation>
    </message>
    <message>
        <source>Copy a report of this machine to paste into a bug report</source>
        <translation>复制一份本机报告，粘贴到问题反馈中</translation>
    </message>
    <message>
        <source>Package index:</source>
        <translation>软件包索引：</translation>
    </message>
    <message>
        <source>Installs {requirements} from {index} with {tool}.</source>
        <translation>将用 {tool} 从 {index} 安装 {requirements}。</translation>
    </message>
    <message>
        <source>CPU only</source>
        <translation>仅 CPU</translation>
    </message>
    <message>
        <source>PyTorch {version} ({build})</source>
        <translation>PyTorch {version}（{build}）</translation>
    </message>
    <message>
        <source>PyTorch is not installed.</source>
        <translation>尚未安装 PyTorch。</translation>
    </message>
    <message>
        <source>The check failed: {error}</source>
        <translation>检查失败：{error}</translation>
    </message>
    <message>
        <source>Finetune Studio is still running elsewhere ({others}). Close those windows and command-line runs, then press Install again.</source>
        <translation>Finetune Studio 仍在其他地方运行（{others}）。请关闭那些窗口和命令行任务，然后再点「安装」。</translation>
    </message>
    <message>
        <source>{message} Proved: a matrix multiplication ran on {device} in {seconds:.2f} s.</source>
        <translation>{message} 已验证：矩阵乘法在 {device} 上运行成功，用时 {seconds:.2f} 秒。</translation>
    </message>
    <message>
        <source>{message} But the GPU test failed: {error}</source>
        <translation>{message} 但 GPU 测试失败：{error}</translation>
    </message>
    <message>
        <source>Diagnostics copied: paste them into your bug report.</source>
        <translation>诊断信息已复制：请粘贴到你的问题反馈中。</translation>
    </message>
</context>
<context>
    <name>ExportPage</name>
    <message>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <source>Your fine-tuned model, ready for from_pretrained().</source>
        <translation>你微调好的模型，可直接用 from_pretrained() 载入。</translation>
    </message>
    <message>
        <source>Train a model first: its folder and scores appear here.</source>
        <translation>请先训练一个模型：它的文件夹和评分会显示在这里。</translation>
    </message>
    <message>
        <source>Open model folder</source>
        <translation>打开模型文件夹</translation>
    </message>
    <message>
        <source>Copy path</source>
        <translation>复制路径</translation>
    </message>
    <message>
        <source>A new, empty folder</source>
        <translation>一个新的空文件夹</translation>
    </message>
    <message>
        <source>Folder…</source>
        <translation>文件夹…</translation>
    </message>
    <message>
        <source>fp16 and bf16 halve the size; fp32 keeps every bit</source>
        <translation>fp16 和 bf16 可使体积减半；fp32 保留全部精度</translation>
    </message>
    <message>
        <source>LoRA adapters only (not merged)</source>
        <translation>只导出 LoRA 适配器（不合并）</translation>
    </message>
    <message>
        <source>Also make a .zip</source>
        <translation>同时生成 .zip</translation>
    </message>
    <message>
        <source>Also log the model to MLflow</source>
        <translation>同时将模型记录到 MLflow</translation>
    </message>
    <message>
        <source>Logs to {uri}</source>
        <translation>记录到 {uri}</translation>
    </message>
    <message>
        <source>Set MLFLOW_TRACKING_URI before starting the app to use this.</source>
        <translation>要使用此功能，请在启动应用前设置 MLFLOW_TRACKING_URI。</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Model folder:</source>
        <translation>模型文件夹：</translation>
    </message>
    <message>
        <source>Run folder:</source>
        <translation>训练任务文件夹：</translation>
    </message>
    <message>
        <source>Scores:</source>
        <translation>评分：</translation>
    </message>
    <message>
        <source>Files:</source>
        <translation>文件：</translation>
    </message>
    <message>
        <source>Export a copy</source>
        <translation>导出副本</translation>
    </message>
    <message>
        <source>To:</source>
        <translation>到：</translation>
    </message>
    <message>
        <source>Weights:</source>
        <translation>权重：</translation>
    </message>
    <message>
        <source>Try it</source>
        <translation>试一试</translation>
    </message>
    <message>
        <source>Choose a folder to export to.</source>
        <translation>请选择要导出到的文件夹。</translation>
    </message>
    <message>
        <source>Folder not empty</source>
        <translation>文件夹不为空</translation>
    </message>
    <message>
        <source>{folder} is not empty. Replace what is in it?</source>
        <translation>{folder} 不为空。要替换其中的内容吗？</translation>
    </message>
    <message>
        <source>Exporting and verifying…</source>
        <translation>正在导出并验证…</translation>
    </message>
    <message>
        <source>Exported to {folder}.</source>
        <translation>已导出到 {folder}。</translation>
    </message>
    <message>
        <source>Verified: reloaded in a fresh process, outputs differ by at most {diff:.2g}.</source>
        <translation>验证通过：已在新进程中重新载入，输出差异不超过 {diff:.2g}。</translation>
    </message>
    <message>
        <source>Warning: the reloaded folder gives different outputs ({diff:.3g}). {error}</source>
        <translation>警告：重新载入的文件夹给出了不同的输出（{diff:.3g}）。{error}</translation>
    </message>
    <message>
        <source>Logged to MLflow as {uri}.</source>
        <translation>已作为 {uri} 记录到 MLflow。</translation>
    </message>
    <message>
        <source>Export cancelled; nothing was written.</source>
        <translation>导出已取消；没有写入任何内容。</translation>
    </message>
    <message>
        <source>Export failed: {error}</source>
        <translation>导出失败：{error}</translation>
    </message>
    <message>
        <source>Loading the model…</source>
        <translation>正在载入模型…</translation>
    </message>
    <message>
        <source>Copying the adapters…</source>
        <translation>正在复制适配器…</translation>
    </message>
    <message>
        <source>Writing the weights…</source>
        <translation>正在写入权重…</translation>
    </message>
    <message>
        <source>Copying the tokenizer…</source>
        <translation>正在复制分词器…</translation>
    </message>
    <message>
        <source>Writing the model card…</source>
        <translation>正在写入模型卡…</translation>
    </message>
    <message>
        <source>Putting the folder in place…</source>
        <translation>正在把文件夹放到位…</translation>
    </message>
    <message>
        <source>Making the zip archive…</source>
        <translation>正在生成 zip 压缩包…</translation>
    </message>
    <message>
        <source>Verifying: reloading the folder in a fresh process…</source>
        <translation>正在验证：在新进程中重新载入文件夹…</translation>
    </message>
    <message>
        <source>Logging the model to MLflow…</source>
        <translation>正在将模型记录到 MLflow…</translation>
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
        <translation>导出到</translation>
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
        <translation>勉强</translation>
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
        <translation>计算能力 {major}.{minor}</translation>
    </message>
    <message>
        <source>driver {driver}</source>
        <translation>驱动程序 {driver}</translation>
    </message>
    <message>
        <source>CUDA up to {major}.{minor}</source>
        <translation>最高支持 CUDA {major}.{minor}</translation>
    </message>
    <message>
        <source>{percent}% busy</source>
        <translation>占用 {percent}%</translation>
    </message>
</context>
<context>
    <name>HistogramWidget</name>
    <message>
        <source>tokens</source>
        <translation>token 数</translation>
    </message>
</context>
<context>
    <name>HubSettingsDialog</name>
    <message>
        <source>Model sources</source>
        <translation>模型下载源</translation>
    </message>
    <message>
        <source>Auto: the fastest that answers</source>
        <translation>自动：选响应最快的</translation>
    </message>
    <message>
        <source>Hugging Face</source>
        <translation>Hugging Face</translation>
    </message>
    <message>
        <source>A mirror of Hugging Face</source>
        <translation>Hugging Face 镜像站</translation>
    </message>
    <message>
        <source>ModelScope (魔搭)</source>
        <translation>魔搭（ModelScope）</translation>
    </message>
    <message>
        <source>saved in the system keyring</source>
        <translation>已保存在系统钥匙串中</translation>
    </message>
    <message>
        <source>for gated models; kept in the system keyring</source>
        <translation>用于受限模型；保存在系统钥匙串中</translation>
    </message>
    <message>
        <source>Check which sources answer</source>
        <translation>检查哪些下载源可用</translation>
    </message>
    <message>
        <source>Download from:</source>
        <translation>下载源：</translation>
    </message>
    <message>
        <source>Mirror address:</source>
        <translation>镜像站地址：</translation>
    </message>
    <message>
        <source>Hugging Face token:</source>
        <translation>Hugging Face 令牌：</translation>
    </message>
    <message>
        <source>ModelScope token:</source>
        <translation>魔搭令牌：</translation>
    </message>
    <message>
        <source>Asking each source (at most 3 s)…</source>
        <translation>正在逐个询问下载源（最多 3 秒）…</translation>
    </message>
    <message>
        <source>{name}: answered in {ms} ms</source>
        <translation>{name}：{ms} 毫秒内响应</translation>
    </message>
    <message>
        <source>{name}: no answer ({why})</source>
        <translation>{name}：无响应（{why}）</translation>
    </message>
    <message>
        <source>Auto uses {source}.</source>
        <translation>「自动」将使用 {source}。</translation>
    </message>
    <message>
        <source>There is no usable system keyring, so the token was not saved. Set HF_TOKEN / MODELSCOPE_API_TOKEN in the environment instead.</source>
        <translation>没有可用的系统钥匙串，令牌未保存。请改为在环境变量中设置 HF_TOKEN / MODELSCOPE_API_TOKEN。</translation>
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
        <translation>继续训练</translation>
    </message>
    <message>
        <source>Not now</source>
        <translation>以后再说</translation>
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
        <translation>训练没有完成。</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>Try the &amp;sample</source>
        <translation>试用示例(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Open run config…</source>
        <translation>打开训练配置(&amp;O)…</translation>
    </message>
    <message>
        <source>&amp;Save run config…</source>
        <translation>保存训练配置(&amp;S)…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Runs</source>
        <translation>训练任务(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Run history…</source>
        <translation>训练记录(&amp;R)…</translation>
    </message>
    <message>
        <source>&amp;Try a model folder…</source>
        <translation>试用模型文件夹(&amp;T)…</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;Settings</source>
        <translation>设置(&amp;S)</translation>
    </message>
    <message>
        <source>Model &amp;sources and tokens…</source>
        <translation>模型下载源和令牌(&amp;S)…</translation>
    </message>
    <message>
        <source>Sample loaded: English reviews with the English all-MiniLM-L6-v2 model.</source>
        <translation>示例已载入：英文评论，搭配英文模型 all-MiniLM-L6-v2。</translation>
    </message>
    <message>
        <source>Open run config</source>
        <translation>打开训练配置</translation>
    </message>
    <message>
        <source>Run configs (*.toml)</source>
        <translation>训练配置（*.toml）</translation>
    </message>
    <message>
        <source>Cannot open this config</source>
        <translation>无法打开这个配置</translation>
    </message>
    <message>
        <source>Save run config</source>
        <translation>保存训练配置</translation>
    </message>
    <message>
        <source>Saved {path}</source>
        <translation>已保存 {path}</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <source>The new language is used from the next start. Restart Finetune Studio now?</source>
        <translation>新语言将在下次启动时生效。现在重新启动 Finetune Studio 吗？</translation>
    </message>
    <message>
        <source>{headline} See the Environment step to fix it.</source>
        <translation>{headline} 请到「运行环境」一步修复。</translation>
    </message>
    <message>
        <source>A training run is in progress: stop it first, then install PyTorch.</source>
        <translation>有训练任务正在进行：请先停止它，再安装 PyTorch。</translation>
    </message>
    <message>
        <source>An export is in progress: wait for it, then install PyTorch.</source>
        <translation>正在导出：请等它完成，再安装 PyTorch。</translation>
    </message>
    <message>
        <source>Restart to install PyTorch</source>
        <translation>重新启动以安装 PyTorch</translation>
    </message>
    <message>
        <source>PyTorch is in use by this window, so it cannot be replaced now. Restart the app and install the matching PyTorch first thing?</source>
        <translation>这个窗口正在使用 PyTorch，现在无法替换。要重新启动应用，并首先安装匹配的 PyTorch 吗？</translation>
    </message>
    <message>
        <source>Could not restart</source>
        <translation>无法重新启动</translation>
    </message>
    <message>
        <source>Close the app, then run: python -m desktop --repair</source>
        <translation>请关闭应用，然后运行：python -m desktop --repair</translation>
    </message>
    <message>
        <source>Training…</source>
        <translation>正在训练…</translation>
    </message>
    <message>
        <source>Cannot apply this change</source>
        <translation>无法应用这项更改</translation>
    </message>
    <message>
        <source>Changed {fields}; training again.</source>
        <translation>已更改 {fields}；重新训练。</translation>
    </message>
    <message>
        <source>Training finished. The model is in {folder}</source>
        <translation>训练完成。模型在 {folder}</translation>
    </message>
    <message>
        <source>A run is in progress</source>
        <translation>有训练任务正在进行</translation>
    </message>
    <message>
        <source>Stop the current run before resuming another.</source>
        <translation>请先停止当前的训练任务，再继续另一个。</translation>
    </message>
    <message>
        <source>Cannot resume this run</source>
        <translation>无法继续这个训练任务</translation>
    </message>
    <message>
        <source>Resuming {run}</source>
        <translation>正在继续 {run}</translation>
    </message>
    <message>
        <source>No model in this run</source>
        <translation>这个训练任务没有模型</translation>
    </message>
    <message>
        <source>This run has no finished model to export.</source>
        <translation>这个训练任务没有已完成的模型可导出。</translation>
    </message>
    <message>
        <source>Open a model folder</source>
        <translation>打开模型文件夹</translation>
    </message>
    <message>
        <source>The run {run} was interrupted at step {step} of {total} (the app or the computer stopped). Resume it from its last checkpoint?</source>
        <translation>训练任务 {run} 在第 {step} 步（共 {total} 步）时中断了（应用或电脑停止了运行）。要从最近的检查点继续吗？</translation>
    </message>
    <message>
        <source>Training is running</source>
        <translation>正在训练</translation>
    </message>
    <message>
        <source>Stop training and quit? A checkpoint is saved so you can resume later.</source>
        <translation>停止训练并退出吗？会保存一个检查点，以后可以继续。</translation>
    </message>
    <message>
        <source>Stopping training and saving a checkpoint…</source>
        <translation>正在停止训练并保存检查点…</translation>
    </message>
</context>
<context>
    <name>ModelBrowser</name>
    <message>
        <source>Choose a model</source>
        <translation>选择模型</translation>
    </message>
    <message>
        <source>Languages</source>
        <translation>语言</translation>
    </message>
    <message>
        <source>About</source>
        <translation>简介</translation>
    </message>
    <message>
        <source>Search models, e.g. qwen, chinese, bert</source>
        <translation>搜索模型，例如 qwen、chinese、bert</translation>
    </message>
    <message>
        <source>Most downloaded</source>
        <translation>下载最多</translation>
    </message>
    <message>
        <source>Most liked</source>
        <translation>点赞最多</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>搜索</translation>
    </message>
    <message>
        <source>Delete from this computer…</source>
        <translation>从本机删除…</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>下载</translation>
    </message>
    <message>
        <source>Use this model</source>
        <translation>使用这个模型</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>参数量</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>License</source>
        <translation>许可证</translation>
    </message>
    <message>
        <source>Downloads</source>
        <translation>下载次数</translation>
    </message>
    <message>
        <source>Likes</source>
        <translation>点赞</translation>
    </message>
    <message>
        <source>Updated</source>
        <translation>更新时间</translation>
    </message>
    <message>
        <source>Fit here</source>
        <translation>本机能否训练</translation>
    </message>
    <message>
        <source>Recommended</source>
        <translation>推荐</translation>
    </message>
    <message>
        <source>On this computer</source>
        <translation>本机已有</translation>
    </message>
    <message>
        <source>{license} · gated</source>
        <translation>{license} · 受限</translation>
    </message>
    <message>
        <source>Gated: accept the license on the model&apos;s page, then add a token in Settings &gt; Model sources.</source>
        <translation>受限模型：请先在模型页面同意许可协议，然后在「设置 &gt; 模型下载源」中添加令牌。</translation>
    </message>
    <message>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <source>{verdict} · {need} of RAM</source>
        <translation>{verdict} · 需 {need} 内存</translation>
    </message>
    <message>
        <source> · ~{minutes:.0f} min/epoch</source>
        <translation> · 每轮约 {minutes:.0f} 分钟</translation>
    </message>
    <message>
        <source>Needs about {need} with the current Memory &amp; speed options; {have} available.</source>
        <translation>按当前的「显存与速度」设置约需 {need}；可用 {have}。</translation>
    </message>
    <message>
        <source>Searching {source}…</source>
        <translation>正在搜索 {source}…</translation>
    </message>
    <message numerus="yes">
        <source>%n model(s) found.</source>
        <translation>
            <numerusform>找到 %n 个模型。</numerusform>
        </translation>
    </message>
    <message>
        <source>Select a model first.</source>
        <translation>请先选择一个模型。</translation>
    </message>
    <message>
        <source>Select a downloaded model (your own folders are never deleted here).</source>
        <translation>请选择一个下载的模型（你自己的文件夹不会在这里被删除）。</translation>
    </message>
    <message>
        <source>Delete from this computer?</source>
        <translation>从本机删除？</translation>
    </message>
    <message>
        <source>Delete {model} ({size}) from the download cache? It can be downloaded again later.</source>
        <translation>要从下载缓存中删除 {model}（{size}）吗？以后可以重新下载。</translation>
    </message>
    <message>
        <source>Deleted {model}: {size} freed.</source>
        <translation>已删除 {model}：释放了 {size}。</translation>
    </message>
</context>
<context>
    <name>OptionsPage</name>
    <message>
        <source>Memory &amp; speed</source>
        <translation>显存与速度</translation>
    </message>
    <message>
        <source>How long and how hard to train.</source>
        <translation>训练多久、多用力。</translation>
    </message>
    <message>
        <source>use epochs</source>
        <translation>按轮数</translation>
    </message>
    <message>
        <source>Below 1: a fraction of all steps. From 1: a number of steps.</source>
        <translation>小于 1：占全部步数的比例。从 1 起：步数。</translation>
    </message>
    <message>
        <source>each epoch</source>
        <translation>每轮</translation>
    </message>
    <message>
        <source>Folder…</source>
        <translation>文件夹…</translation>
    </message>
    <message>
        <source>tensorboard, mlflow (optional)</source>
        <translation>tensorboard、mlflow（可选）</translation>
    </message>
    <message>
        <source>Also log the run to these trackers; each must be installed</source>
        <translation>同时把训练过程记录到这些工具；每个都需要已安装</translation>
    </message>
    <message>
        <source>task and model</source>
        <translation>任务和模型</translation>
    </message>
    <message>
        <source>Schedule</source>
        <translation>训练计划</translation>
    </message>
    <message>
        <source>Epochs</source>
        <translation>轮数（epoch）</translation>
    </message>
    <message>
        <source>Max steps</source>
        <translation>最大步数</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>学习率</translation>
    </message>
    <message>
        <source>Scheduler</source>
        <translation>学习率调度</translation>
    </message>
    <message>
        <source>Warm-up</source>
        <translation>预热</translation>
    </message>
    <message>
        <source>Seed</source>
        <translation>随机种子</translation>
    </message>
    <message>
        <source>Batches and sequences</source>
        <translation>批次与序列</translation>
    </message>
    <message>
        <source>Batch size per device</source>
        <translation>每个设备的批大小</translation>
    </message>
    <message>
        <source>Gradient accumulation</source>
        <translation>梯度累积</translation>
    </message>
    <message>
        <source>Max sequence length</source>
        <translation>最大序列长度</translation>
    </message>
    <message>
        <source>Evaluation, checkpoints and output</source>
        <translation>评估、检查点与输出</translation>
    </message>
    <message>
        <source>Evaluate every (steps)</source>
        <translation>评估间隔（步）</translation>
    </message>
    <message>
        <source>Checkpoint every (steps)</source>
        <translation>检查点间隔（步）</translation>
    </message>
    <message>
        <source>Log every (steps)</source>
        <translation>日志间隔（步）</translation>
    </message>
    <message>
        <source>Runs folder</source>
        <translation>训练任务文件夹</translation>
    </message>
    <message>
        <source>Run name</source>
        <translation>训练任务名称</translation>
    </message>
    <message>
        <source>Also log to</source>
        <translation>同时记录到</translation>
    </message>
    <message>
        <source>Speed and memory</source>
        <translation>速度与显存</translation>
    </message>
    <message>
        <source>LoRA adapters</source>
        <translation>LoRA 适配器</translation>
    </message>
    <message>
        <source>Memory estimate and presets</source>
        <translation>显存估算与预设</translation>
    </message>
    <message>
        <source>Choose a model first.</source>
        <translation>请先选择模型。</translation>
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
        <translation>最省显存</translation>
    </message>
    <message>
        <source>Fit my GPU</source>
        <translation>适配我的 GPU</translation>
    </message>
    <message>
        <source>Undo</source>
        <translation>撤销</translation>
    </message>
    <message>
        <source>No NVIDIA GPU was found to fit the settings to.</source>
        <translation>没有找到可用来适配设置的 NVIDIA GPU。</translation>
    </message>
    <message>
        <source>Reading the model&apos;s size…</source>
        <translation>正在读取模型大小…</translation>
    </message>
    <message>
        <source>The model&apos;s size could not be read: {error}</source>
        <translation>无法读取模型大小：{error}</translation>
    </message>
    <message>
        <source>On this computer the run uses RAM: {parts}</source>
        <translation>在这台电脑上，训练使用内存：{parts}</translation>
    </message>
    <message>
        <source>No NVIDIA GPU here: training runs on the CPU and needs about {total:.1f} GB of RAM ({free:.1f} GB free). It is much slower than on a GPU: small models and short texts suit it best.</source>
        <translation>这里没有 NVIDIA GPU：训练将在 CPU 上运行，约需 {total:.1f} GB 内存（可用 {free:.1f} GB）。速度比 GPU 慢得多，最适合小模型和短文本。</translation>
    </message>
    <message>
        <source>fits</source>
        <translation>放得下</translation>
    </message>
    <message>
        <source>fits, but tightly</source>
        <translation>放得下，但很紧</translation>
    </message>
    <message>
        <source>will not fit</source>
        <translation>放不下</translation>
    </message>
    <message>
        <source>Needs about {total:.1f} GB: {verdict} in the {free:.1f} GB free on {gpu}.</source>
        <translation>约需 {total:.1f} GB：在 {gpu} 可用的 {free:.1f} GB 中{verdict}。</translation>
    </message>
    <message>
        <source>nothing: the current settings already match</source>
        <translation>无需更改：当前设置已经合适</translation>
    </message>
    <message>
        <source>Changed: {changes}</source>
        <translation>已更改：{changes}</translation>
    </message>
    <message>
        <source>all linear layers</source>
        <translation>所有线性层</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>Gradient checkpointing</source>
        <translation>梯度检查点</translation>
    </message>
    <message>
        <source>Pin memory</source>
        <translation>锁页内存（pin memory）</translation>
    </message>
    <message>
        <source>Data loader workers</source>
        <translation>数据加载进程数</translation>
    </message>
    <message>
        <source>Empty the GPU cache every (steps)</source>
        <translation>每隔多少步清空 GPU 缓存</translation>
    </message>
    <message>
        <source>Compile the model (torch.compile)</source>
        <translation>编译模型（torch.compile）</translation>
    </message>
    <message>
        <source>Compile backend</source>
        <translation>编译后端</translation>
    </message>
    <message>
        <source>Attention</source>
        <translation>注意力实现</translation>
    </message>
    <message>
        <source>Train LoRA adapters</source>
        <translation>训练 LoRA 适配器</translation>
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
        <translation>目标模块</translation>
    </message>
    <message>
        <source>QLoRA (4-bit base model)</source>
        <translation>QLoRA（4 位基础模型）</translation>
    </message>
    <message>
        <source>Effective batch: {n} examples per update</source>
        <translation>有效批大小：每次更新 {n} 个样本</translation>
    </message>
    <message>
        <source>Folder for run folders</source>
        <translation>存放训练任务的文件夹</translation>
    </message>
</context>
<context>
    <name>RunsDialog</name>
    <message>
        <source>Runs</source>
        <translation>训练记录</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Task</source>
        <translation>任务</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Dataset</source>
        <translation>数据集</translation>
    </message>
    <message>
        <source>Best score</source>
        <translation>最佳评分</translation>
    </message>
    <message>
        <source>Date</source>
        <translation>日期</translation>
    </message>
    <message>
        <source>Open folder</source>
        <translation>打开文件夹</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>继续训练</translation>
    </message>
    <message>
        <source>Export / try it</source>
        <translation>导出 / 试用</translation>
    </message>
    <message>
        <source>Delete…</source>
        <translation>删除…</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>刷新</translation>
    </message>
    <message>
        <source>Training loss</source>
        <translation>训练损失</translation>
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
        <translation>失败</translation>
    </message>
    <message>
        <source>Running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>Crashed</source>
        <translation>异常中断</translation>
    </message>
    <message>
        <source>Runs in {folder}</source>
        <translation>{folder} 中的训练任务</translation>
    </message>
    <message>
        <source>No runs yet: train a model and it is listed here.</source>
        <translation>还没有训练任务：训练一个模型后，它会列在这里。</translation>
    </message>
    <message>
        <source>This run saved no checkpoint, so it cannot be resumed; train it again.</source>
        <translation>这个训练任务没有保存检查点，无法继续；请重新训练。</translation>
    </message>
    <message>
        <source>Select two or more runs to compare their loss curves.</source>
        <translation>选择两个或更多训练任务，对比它们的损失曲线。</translation>
    </message>
    <message>
        <source>Delete runs</source>
        <translation>删除训练任务</translation>
    </message>
    <message>
        <source>Delete these runs for good, with their checkpoints and models?

{names}</source>
        <translation>要永久删除这些训练任务及其检查点和模型吗？

{names}</translation>
    </message>
    <message>
        <source>Could not delete a run</source>
        <translation>无法删除训练任务</translation>
    </message>
</context>
<context>
    <name>ThroughputPlotWidget</name>
    <message>
        <source>samples/s</source>
        <translation>样本/秒</translation>
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
        <translation>训练</translation>
    </message>
    <message>
        <source>Watch the loss fall. Stop keeps a checkpoint you can resume from.</source>
        <translation>看着损失下降。停止时会保留检查点，之后可以继续。</translation>
    </message>
    <message>
        <source>Start training</source>
        <translation>开始训练</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>继续训练</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Ready. Press Start to train.</source>
        <translation>准备就绪。点「开始训练」即可训练。</translation>
    </message>
    <message>
        <source>step %v of %m</source>
        <translation>第 %v 步，共 %m 步</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>详细信息</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>train</source>
        <translation>训练</translation>
    </message>
    <message>
        <source>train (smoothed)</source>
        <translation>训练（平滑）</translation>
    </message>
    <message>
        <source>eval</source>
        <translation>评估</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>学习率</translation>
    </message>
    <message>
        <source>learning rate</source>
        <translation>学习率</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>内存</translation>
    </message>
    <message>
        <source>VRAM allocated</source>
        <translation>已分配显存</translation>
    </message>
    <message>
        <source>VRAM reserved</source>
        <translation>已预留显存</translation>
    </message>
    <message>
        <source>process RAM</source>
        <translation>进程内存</translation>
    </message>
    <message>
        <source>GPU used, all processes (NVML)</source>
        <translation>GPU 已用（所有进程，NVML）</translation>
    </message>
    <message>
        <source>GPU total</source>
        <translation>GPU 总量</translation>
    </message>
    <message>
        <source>Throughput</source>
        <translation>吞吐量</translation>
    </message>
    <message>
        <source>samples/s</source>
        <translation>样本/秒</translation>
    </message>
    <message>
        <source>tokens/s</source>
        <translation>token/秒</translation>
    </message>
    <message>
        <source>Resuming {run}.</source>
        <translation>正在继续 {run}。</translation>
    </message>
    <message>
        <source>Stopping after this step and saving a checkpoint…</source>
        <translation>将在这一步之后停止并保存检查点…</translation>
    </message>
    <message>
        <source>Preparing…</source>
        <translation>正在准备…</translation>
    </message>
    <message>
        <source>Preparing: {what}…</source>
        <translation>正在准备：{what}…</translation>
    </message>
    <message>
        <source>Training on {device}</source>
        <translation>正在 {device} 上训练</translation>
    </message>
    <message>
        <source>Run folder: {folder}. {train} training and {eval} evaluation examples, {steps} steps.</source>
        <translation>训练任务文件夹：{folder}。{train} 个训练样本，{eval} 个评估样本，共 {steps} 步。</translation>
    </message>
    <message>
        <source>Elapsed {elapsed}   ·   remaining about {eta}   ·   {speed} samples/s   ·   epoch {epoch:.2f}</source>
        <translation>已用时 {elapsed}   ·   约剩 {eta}   ·   {speed} 样本/秒   ·   第 {epoch:.2f} 轮</translation>
    </message>
    <message>
        <source>step {step}: {metrics}</source>
        <translation>第 {step} 步：{metrics}</translation>
    </message>
    <message>
        <source>Checkpoint saved at step {step}.</source>
        <translation>已在第 {step} 步保存检查点。</translation>
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
        <translation>已停止。检查点已保留：点「继续训练」即可接着训练。</translation>
    </message>
    <message>
        <source>Stopped before training began.</source>
        <translation>在训练开始前已停止。</translation>
    </message>
    <message>
        <source>Training did not finish.</source>
        <translation>训练没有完成。</translation>
    </message>
    <message>
        <source>Training failed.</source>
        <translation>训练失败。</translation>
    </message>
    <message>
        <source>Apply and retry: {change}</source>
        <translation>应用并重试：{change}</translation>
    </message>
</context>
<context>
    <name>TryItPanel</name>
    <message>
        <source>No model yet: finish a run, or open a model folder.</source>
        <translation>还没有模型：完成一次训练，或打开一个模型文件夹。</translation>
    </message>
    <message>
        <source>Open model folder…</source>
        <translation>打开模型文件夹…</translation>
    </message>
    <message>
        <source>The longest reply, in tokens</source>
        <translation>回复的最大长度（token 数）</translation>
    </message>
    <message>
        <source>0 always gives the most likely reply; higher is more varied</source>
        <translation>0 总是给出最可能的回复；越大越多样</translation>
    </message>
    <message>
        <source>Use the chat template</source>
        <translation>使用对话模板</translation>
    </message>
    <message>
        <source>Send the text as a user&apos;s message, as the model was trained</source>
        <translation>像训练时一样，把文本作为用户消息发送</translation>
    </message>
    <message>
        <source>Try it</source>
        <translation>试一试</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>详细信息</translation>
    </message>
    <message>
        <source>Max new tokens:</source>
        <translation>最大新 token 数：</translation>
    </message>
    <message>
        <source>Temperature:</source>
        <translation>温度：</translation>
    </message>
    <message>
        <source>text classification</source>
        <translation>文本分类</translation>
    </message>
    <message>
        <source>text generation</source>
        <translation>文本生成</translation>
    </message>
    <message>
        <source>sequence to sequence</source>
        <translation>序列到序列</translation>
    </message>
    <message>
        <source> (LoRA adapters on {base})</source>
        <translation>（基于 {base} 的 LoRA 适配器）</translation>
    </message>
    <message>
        <source>Model: {folder}, {kind}{adapter}</source>
        <translation>模型：{folder}，{kind}{adapter}</translation>
    </message>
    <message>
        <source>Type a text and press Try it; the model loads on first use.</source>
        <translation>输入一段文本，然后点「试一试」；模型在第一次使用时载入。</translation>
    </message>
    <message>
        <source>A text to classify, e.g. a review</source>
        <translation>要分类的文本，例如一条评论</translation>
    </message>
    <message>
        <source>An instruction or a question</source>
        <translation>一条指令或一个问题</translation>
    </message>
    <message>
        <source>A text to transform, e.g. a sentence to translate</source>
        <translation>要转换的文本，例如一句要翻译的话</translation>
    </message>
    <message>
        <source>Open a model folder</source>
        <translation>打开模型文件夹</translation>
    </message>
    <message>
        <source>Type a text first.</source>
        <translation>请先输入文本。</translation>
    </message>
    <message>
        <source>Loading the model and working…</source>
        <translation>正在载入模型并处理…</translation>
    </message>
    <message>
        <source>Model loaded. Working…</source>
        <translation>模型已载入。正在处理…</translation>
    </message>
    <message>
        <source>Generating…</source>
        <translation>正在生成…</translation>
    </message>
    <message>
        <source>Predicted: {label} ({probability:.1%})</source>
        <translation>预测：{label}（{probability:.1%}）</translation>
    </message>
    <message>
        <source>The model ended its reply at once (it produced no text).</source>
        <translation>模型立即结束了回复（没有生成任何文本）。</translation>
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
        <translation>无法运行模型：{error}</translation>
    </message>
</context>
<context>
    <name>core</name>
    <message>
        <source>{name} cannot be downloaded: the network is switched off (HF_HUB_OFFLINE).</source>
        <translation>无法下载 {name}：网络已关闭（HF_HUB_OFFLINE）。</translation>
    </message>
    <message>
        <source>Unset HF_HUB_OFFLINE, or pick a model that is already on this computer.</source>
        <translation>请取消设置 HF_HUB_OFFLINE，或选择本机上已有的模型。</translation>
    </message>
    <message>
        <source>The download needs {needed} and {folder} has {free} free.</source>
        <translation>这次下载需要 {needed}，而 {folder} 只剩 {free} 可用空间。</translation>
    </message>
    <message>
        <source>Free some space there, delete models you no longer need (Browse &gt; On this computer), or set HF_HOME / MODELSCOPE_CACHE to a bigger disk.</source>
        <translation>请清理出一些空间，删除不再需要的模型（浏览模型 &gt; 本机已有），或把 HF_HOME / MODELSCOPE_CACHE 设到更大的磁盘上。</translation>
    </message>
    <message>
        <source>{name} is not on this computer, and {source} ({endpoint}) did not answer within {seconds} s ({problem}).</source>
        <translation>本机上没有 {name}，而 {source}（{endpoint}）在 {seconds} 秒内没有响应（{problem}）。</translation>
    </message>
    <message>
        <source>Check the network, or switch the source (a mirror such as https://hf-mirror.com, or ModelScope) in Settings &gt; Model sources or with --source / HF_ENDPOINT, or pick a local model folder.</source>
        <translation>请检查网络，或在「设置 &gt; 模型下载源」中（或用 --source / HF_ENDPOINT）换一个下载源（如镜像站 https://hf-mirror.com 或魔搭），也可以选择本地模型文件夹。</translation>
    </message>
    <message>
        <source>{name} is not on this computer yet.</source>
        <translation>本机上还没有 {name}。</translation>
    </message>
    <message>
        <source>Download it first: Browse &gt; Download on the Model &amp; data step, or finetune-studio-cli models download {ref}</source>
        <translation>请先下载：在「模型与数据」一步点「浏览模型 &gt; 下载」，或运行 finetune-studio-cli models download {ref}</translation>
    </message>
    <message>
        <source>{name} could not be downloaded from {source}: {error}</source>
        <translation>无法从 {source} 下载 {name}：{error}</translation>
    </message>
    <message>
        <source>Try again, or switch the source.</source>
        <translation>请重试，或换一个下载源。</translation>
    </message>
    <message>
        <source>{name} is not on this computer, and the hub is switched off (HF_HUB_OFFLINE).</source>
        <translation>本机上没有 {name}，而 Hub 已关闭（HF_HUB_OFFLINE）。</translation>
    </message>
    <message>
        <source>Unset HF_HUB_OFFLINE to download it, or pick a local model folder.</source>
        <translation>取消设置 HF_HUB_OFFLINE 即可下载，或选择本地模型文件夹。</translation>
    </message>
    <message>
        <source>{name} is gated: its authors ask you to accept their license before downloading it.</source>
        <translation>{name} 是受限模型：作者要求你先同意许可协议才能下载。</translation>
    </message>
    <message>
        <source>Accept the license at {page} while signed in, then enter an access token in Settings &gt; Model sources ({source}).</source>
        <translation>请登录后在 {page} 同意许可协议，然后在「设置 &gt; 模型下载源」中填写访问令牌（{source}）。</translation>
    </message>
    <message>
        <source>{name} has no revision by that name on {source}.</source>
        <translation>{source} 上的 {name} 没有这个名称的版本。</translation>
    </message>
    <message>
        <source>Check the revision, or leave it empty for the newest.</source>
        <translation>请检查版本名称，或留空以使用最新版本。</translation>
    </message>
    <message>
        <source>There is no dataset named {name} on {source}.</source>
        <translation>{source} 上没有名为 {name} 的数据集。</translation>
    </message>
    <message>
        <source>There is no model named {name} on {source}.</source>
        <translation>{source} 上没有名为 {name} 的模型。</translation>
    </message>
    <message>
        <source>Check the id (owner/name, as on the model&apos;s page), or find it with Browse; on ModelScope some models have other ids than on Hugging Face.</source>
        <translation>请检查 ID（所有者/名称，与模型页面上一致），或用「浏览模型」查找；有些模型在魔搭上的 ID 与 Hugging Face 上不同。</translation>
    </message>
    <message>
        <source>The download of {name} from {source} was interrupted: the connection failed.</source>
        <translation>从 {source} 下载 {name} 时中断了：连接失败。</translation>
    </message>
    <message>
        <source>Try again: the download resumes where it stopped. If it keeps failing, switch the source.</source>
        <translation>请重试：下载会从中断处继续。如果一直失败，请换一个下载源。</translation>
    </message>
    <message>
        <source>{model} cannot be used for this task: its architecture has no such head.</source>
        <translation>{model} 不能用于这个任务：它的架构没有相应的输出头。</translation>
    </message>
    <message>
        <source>Pick another model.</source>
        <translation>请换一个模型。</translation>
    </message>
    <message>
        <source>Check the model id and your network connection, or pick a local model folder.</source>
        <translation>请检查模型 ID 和网络连接，或选择本地模型文件夹。</translation>
    </message>
    <message>
        <source>{model} cannot be used for text classification: its architecture has no such head.</source>
        <translation>{model} 不能用于文本分类：它的架构没有分类头。</translation>
    </message>
    <message>
        <source>Pick an encoder model such as BERT, RoBERTa or MiniLM.</source>
        <translation>请选择编码器模型，如 BERT、RoBERTa 或 MiniLM。</translation>
    </message>
    <message>
        <source>{model} cannot be used for causal-LM fine-tuning: its architecture has no such head.</source>
        <translation>{model} 不能用于因果语言模型微调：它的架构没有语言模型头。</translation>
    </message>
    <message>
        <source>Pick a decoder model such as GPT-2, Qwen or Llama.</source>
        <translation>请选择解码器模型，如 GPT-2、Qwen 或 Llama。</translation>
    </message>
    <message>
        <source>{model} cannot be used for sequence-to-sequence: its architecture has no such head.</source>
        <translation>{model} 不能用于序列到序列任务：它的架构没有相应的输出头。</translation>
    </message>
    <message>
        <source>Pick an encoder-decoder model such as T5, BART or mT5.</source>
        <translation>请选择编码器-解码器模型，如 T5、BART 或 mT5。</translation>
    </message>
    <message>
        <source>{model} needs to run its own Python code to load.</source>
        <translation>{model} 需要运行它自带的 Python 代码才能载入。</translation>
    </message>
    <message>
        <source>Only if you trust its authors, set model.trust_remote_code = true.</source>
        <translation>仅在你信任其作者时，才设置 model.trust_remote_code = true。</translation>
    </message>
    <message>
        <source>Check that the folder holds a complete Hugging Face model: config, weights, tokenizer files.</source>
        <translation>请确认该文件夹包含完整的 Hugging Face 模型：配置、权重和分词器文件。</translation>
    </message>
    <message>
        <source>Pick a decoder model such as Qwen (Qwen/Qwen2.5-0.5B-Instruct), GPT-2 (gpt2) or Llama.</source>
        <translation>请选择解码器模型，如 Qwen（Qwen/Qwen2.5-0.5B-Instruct）、GPT-2（gpt2）或 Llama。</translation>
    </message>
    <message>
        <source>Pick an encoder-decoder model such as T5 (t5-small), mT5 (google/mt5-small) or BART (facebook/bart-base).</source>
        <translation>请选择编码器-解码器模型，如 T5（t5-small）、mT5（google/mt5-small）或 BART（facebook/bart-base）。</translation>
    </message>
    <message>
        <source>{model} cannot be used for sequence-to-sequence: it is not an encoder-decoder model ({kind}), and sequence-to-sequence training needs an encoder-decoder model.</source>
        <translation>{model} 不能用于序列到序列任务：它不是编码器-解码器模型（{kind}），而序列到序列训练需要编码器-解码器模型。</translation>
    </message>
    <message>
        <source>This model does not know most of the characters in your texts: {share} of their tokens become the unknown token {unknown}, so it cannot tell those texts apart. Pick a model made for your texts&apos; language, e.g. bert-base-chinese or hfl/chinese-roberta-wwm-ext for Chinese, or a multilingual one such as xlm-roberta-base.</source>
        <translation>这个模型不认识你文本中的大部分字符：有 {share} 的 token 变成了未知 token {unknown}，因此它无法区分这些文本。请选择针对你文本语言的模型，例如中文可用 bert-base-chinese 或 hfl/chinese-roberta-wwm-ext，也可以用 xlm-roberta-base 这样的多语言模型。</translation>
    </message>
    <message>
        <source>The model folder {folder} has no tokenizer files (tokenizer.json, or vocab.txt, vocab.json with merges.txt, or a SentencePiece .model file); without them the texts cannot be read the way the model was trained to read them.</source>
        <translation>模型文件夹 {folder} 中没有分词器文件（tokenizer.json，或 vocab.txt，或 vocab.json 加 merges.txt，或 SentencePiece 的 .model 文件）；没有它们，就无法按模型训练时的方式读取文本。</translation>
    </message>
    <message>
        <source>Copy the tokenizer files from where the model came from into the folder, or pick the model&apos;s complete folder.</source>
        <translation>请从模型的来源处把分词器文件复制到该文件夹，或选择模型的完整文件夹。</translation>
    </message>
    <message>
        <source>{model} cannot be used for causal-LM fine-tuning: it is an encoder-decoder model ({kind}), and causal-LM fine-tuning needs a decoder model that writes text.</source>
        <translation>{model} 不能用于因果语言模型微调：它是编码器-解码器模型（{kind}），而因果语言模型微调需要能生成文本的解码器模型。</translation>
    </message>
    <message>
        <source>{model} cannot be used for causal-LM fine-tuning: it is an encoder-only model ({kind}) that cannot generate text, and causal-LM fine-tuning needs a decoder model that writes text.</source>
        <translation>{model} 不能用于因果语言模型微调：它是只有编码器的模型（{kind}），不能生成文本，而因果语言模型微调需要能生成文本的解码器模型。</translation>
    </message>
    <message>
        <source>The tokenizer of {model} knows only {size} tokens: its vocabulary files are missing or empty, and every text would read as the same few tokens.</source>
        <translation>{model} 的分词器只认识 {size} 个 token：它的词表文件缺失或为空，所有文本都会被读成同样的几个 token。</translation>
    </message>
    <message>
        <source>Pick a model folder with its complete tokenizer files (tokenizer.json or vocab.txt).</source>
        <translation>请选择带有完整分词器文件（tokenizer.json 或 vocab.txt）的模型文件夹。</translation>
    </message>
    <message>
        <source>The tokenizer {model} could not be loaded: {error}</source>
        <translation>无法载入分词器 {model}：{error}</translation>
    </message>
    <message>
        <source>The model {model} could not be loaded: {error}</source>
        <translation>无法载入模型 {model}：{error}</translation>
    </message>
    <message>
        <source>{folder} holds no model weights.</source>
        <translation>{folder} 中没有模型权重。</translation>
    </message>
    <message>
        <source>Pick a folder with .safetensors or .bin files.</source>
        <translation>请选择包含 .safetensors 或 .bin 文件的文件夹。</translation>
    </message>
    <message>
        <source>The bundled model {name} is not installed.</source>
        <translation>未安装内置模型 {name}。</translation>
    </message>
    <message>
        <source>Install it with: {command}</source>
        <translation>请用以下命令安装：{command}</translation>
    </message>
    <message>
        <source>The tokenizer of {model} has neither a padding nor an end-of-text token.</source>
        <translation>{model} 的分词器既没有填充 token，也没有文本结束 token。</translation>
    </message>
    <message>
        <source>Choose a model whose tokenizer defines one of them.</source>
        <translation>请选择分词器定义了其中之一的模型。</translation>
    </message>
    <message>
        <source>The tokenizer in {folder} could not be loaded: {error}</source>
        <translation>无法载入 {folder} 中的分词器：{error}</translation>
    </message>
    <message>
        <source>The model in {folder} could not be loaded: {error}</source>
        <translation>无法载入 {folder} 中的模型：{error}</translation>
    </message>
    <message>
        <source>{folder} has no readable config.json.</source>
        <translation>{folder} 中没有可读取的 config.json。</translation>
    </message>
    <message>
        <source>Pick the folder that holds config.json and the weights.</source>
        <translation>请选择包含 config.json 和权重的文件夹。</translation>
    </message>
    <message>
        <source>mirror ({host})</source>
        <translation>镜像站（{host}）</translation>
    </message>
    <message>
        <source>ModelScope</source>
        <translation>魔搭（ModelScope）</translation>
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
        <translation>正在 cuda:0（NVIDIA GeForce RTX 4070）上训练</translation>
    </message>
</context>
</TS>
