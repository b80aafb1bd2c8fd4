<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>ChatView</name>
    <message>
        <source>You</source>
        <translation>你</translation>
    </message>
    <message>
        <source>Base model</source>
        <translation>基础模型</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>The conversation appears here.</source>
        <translation>对话会显示在这里。</translation>
    </message>
    <message>
        <source>not asked</source>
        <translation>未提问</translation>
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
        <translation>（没有文字：模型立即结束了回答）</translation>
    </message>
</context>
<context>
    <name>CheckpointChoice</name>
    <message>
        <source>The run&apos;s model is the checkpoint that scored best on the validation rows. The last step&apos;s model is made from its checkpoint when you choose it (a LoRA run&apos;s is merged).</source>
        <translation>训练任务的模型是在验证数据上得分最好的检查点。选择最后一步时，会从它的检查点生成最后一步的模型（LoRA 训练会先合并）。</translation>
    </message>
    <message>
        <source>Best checkpoint: step {step}, {metric} {value:.4g}</source>
        <translation>最佳检查点：第 {step} 步，{metric} {value:.4g}</translation>
    </message>
    <message>
        <source>Last step: step {step}, {metric} {value}</source>
        <translation>最后一步：第 {step} 步，{metric} {value}</translation>
    </message>
    <message>
        <source>Making the last step&apos;s model from checkpoint-{step}…</source>
        <translation>正在从 checkpoint-{step} 生成最后一步的模型…</translation>
    </message>
    <message>
        <source>The last step&apos;s model could not be made: {error}</source>
        <translation>无法生成最后一步的模型：{error}</translation>
    </message>
</context>
<context>
    <name>ChoiceCombo</name>
    <message>
        <source>chosen for this computer</source>
        <translation>按这台电脑自动选择</translation>
    </message>
    <message>
        <source>full precision: most memory, slowest</source>
        <translation>全精度：占用最多、最慢</translation>
    </message>
    <message>
        <source>half precision, for older NVIDIA GPUs</source>
        <translation>半精度，适合较老的 NVIDIA GPU</translation>
    </message>
    <message>
        <source>half precision, steadier (RTX 30 series and newer)</source>
        <translation>半精度，更稳定（RTX 30 系列及更新）</translation>
    </message>
    <message>
        <source>AdamW, the usual choice</source>
        <translation>AdamW，常用选择</translation>
    </message>
    <message>
        <source>fused AdamW, faster on a GPU</source>
        <translation>融合版 AdamW，GPU 上更快</translation>
    </message>
    <message>
        <source>least memory; learns a little differently</source>
        <translation>最省内存；学习方式略有不同</translation>
    </message>
    <message>
        <source>AdamW in 8 bits: a quarter of its memory</source>
        <translation>8 位 AdamW：只占四分之一内存</translation>
    </message>
    <message>
        <source>8-bit AdamW that can spill to RAM</source>
        <translation>可溢出到内存的 8 位 AdamW</translation>
    </message>
    <message>
        <source>PyTorch&apos;s fast attention</source>
        <translation>PyTorch 的快速注意力</translation>
    </message>
    <message>
        <source>plain, slowest: for debugging</source>
        <translation>普通实现，最慢：用于调试</translation>
    </message>
    <message>
        <source>FlashAttention 2 (needs the flash-attn package)</source>
        <translation>FlashAttention 2（需要 flash-attn 包）</translation>
    </message>
    <message>
        <source>fastest code, slow first step</source>
        <translation>生成最快的代码，第一步较慢</translation>
    </message>
    <message>
        <source>checks compilation without speeding up</source>
        <translation>只检查编译，不提速</translation>
    </message>
    <message>
        <source>16 bits: the largest file, the closest answers</source>
        <translation>16 位：文件最大，回答最接近原模型</translation>
    </message>
    <message>
        <source>8 bits: half the size, nearly the same answers</source>
        <translation>8 位：体积减半，回答几乎不变</translation>
    </message>
    <message>
        <source>4 bits: a third of the size, made by llama.cpp</source>
        <translation>4 位：约三分之一大小，由 llama.cpp 生成</translation>
    </message>
    <message>
        <source>falls in a straight line to 0</source>
        <translation>直线下降到 0</translation>
    </message>
    <message>
        <source>falls along a cosine curve to 0</source>
        <translation>沿余弦曲线下降到 0</translation>
    </message>
    <message>
        <source>stays the same</source>
        <translation>保持不变</translation>
    </message>
    <message>
        <source>rises during warm-up, then stays</source>
        <translation>预热时上升，之后不变</translation>
    </message>
    <message>
        <source>cosine curves, starting again</source>
        <translation>余弦曲线，周期性重启</translation>
    </message>
    <message>
        <source>falls along a polynomial curve</source>
        <translation>沿多项式曲线下降</translation>
    </message>
    <message>
        <source>the validation loss, lowest (every task)</source>
        <translation>验证损失，越低越好（所有任务）</translation>
    </message>
    <message>
        <source>the share classified right, highest (classification)</source>
        <translation>分类正确的比例，越高越好（分类）</translation>
    </message>
    <message>
        <source>F1 averaged over the classes, highest (classification)</source>
        <translation>各类 F1 的平均值，越高越好（分类）</translation>
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
        <translation>应用并重试：{change}</translation>
    </message>
    <message>
        <source>Stop the run first; the change applies to a new run.</source>
        <translation>请先停止训练；此更改用于新的训练。</translation>
    </message>
</context>
<context>
    <name>CodeView</name>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
</context>
<context>
    <name>ColumnMappingWidget</name>
    <message>
        <source>Columns</source>
        <translation>列</translation>
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
        <source>Chosen: the better answer; rejected: the worse one. Each is a text or a whole conversation. Prompt: only when the answers do not include it.</source>
        <translation>选中回答：较好的回答；被拒回答：较差的回答。两者都可以是一段文本或一整段对话。提示词：只在回答不包含它时才需要。</translation>
    </message>
    <message>
        <source>Leave out rows with a blank text or no label</source>
        <translation>跳过文本为空或没有标签的行</translation>
    </message>
    <message>
        <source>Labels that differ only in case are one class</source>
        <translation>只有大小写不同的标签视为同一类</translation>
    </message>
    <message>
        <source>Format:</source>
        <translation>格式：</translation>
    </message>
    <message>
        <source>Leave out rows with a missing or unreadable picture, or no label</source>
        <translation>跳过缺少图片、图片无法读取或没有标签的行</translation>
    </message>
    <message>
        <source>The columns are guessed again for {task}; check them below.</source>
        <translation>已按“{task}”重新猜测各列，请在下方核对。</translation>
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
        <source>{role}:</source>
        <translation>{role}：</translation>
    </message>
    <message>
        <source>{role} (optional):</source>
        <translation>{role}（可选）：</translation>
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
        <source>Choose a column for: {roles}.</source>
        <translation>请为以下用途选择列：{roles}。</translation>
    </message>
    <message>
        <source>Text</source>
        <translation>文本</translation>
    </message>
    <message>
        <source>Text pair</source>
        <translation>第二段文本</translation>
    </message>
    <message>
        <source>Label</source>
        <translation>标签</translation>
    </message>
    <message>
        <source>Instruction</source>
        <translation>指令</translation>
    </message>
    <message>
        <source>Input</source>
        <translation>输入</translation>
    </message>
    <message>
        <source>Output</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>Messages</source>
        <translation>对话消息</translation>
    </message>
    <message>
        <source>Prompt</source>
        <translation>提示词</translation>
    </message>
    <message>
        <source>Completion</source>
        <translation>续写</translation>
    </message>
    <message>
        <source>Source text</source>
        <translation>源文本</translation>
    </message>
    <message>
        <source>Target text</source>
        <translation>目标文本</translation>
    </message>
    <message>
        <source>Chosen answer</source>
        <translation>选中回答</translation>
    </message>
    <message>
        <source>Rejected answer</source>
        <translation>被拒回答</translation>
    </message>
    <message>
        <source>Reference answer</source>
        <translation>参考答案</translation>
    </message>
    <message>
        <source>Picture</source>
        <translation>图片</translation>
    </message>
    <message>
        <source>The better answer: a text, or the whole conversation as a list of messages.</source>
        <translation>较好的回答：一段文本，或以消息列表表示的整段对话。</translation>
    </message>
    <message>
        <source>The worse answer to the same prompt, written as the chosen one is.</source>
        <translation>同一提示词下较差的回答，写法与选中回答相同。</translation>
    </message>
    <message>
        <source>The prompt both answers reply to; none when the answers hold the conversation.</source>
        <translation>两个回答所回应的提示词；如果回答里已包含整段对话，则不需要。</translation>
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
        <translation>所有线性层</translation>
    </message>
    <message>
        <source>Only with an NVIDIA GPU: this computer trains on its processor.</source>
        <translation>仅在有 NVIDIA GPU 时有效：这台电脑用处理器训练。</translation>
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
        <source>Liger fused kernels</source>
        <translation>Liger 融合内核</translation>
    </message>
    <message>
        <source>Padding-free batches (causal LM)</source>
        <translation>无填充批次（因果语言模型）</translation>
    </message>
    <message>
        <source>Group batches by length</source>
        <translation>按长度分组成批</translation>
    </message>
    <message>
        <source>Recover from out of memory</source>
        <translation>显存不足时自动恢复</translation>
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
        <translation>Alpha（缩放系数）</translation>
    </message>
    <message>
        <source>Dropout</source>
        <translation>Dropout（丢弃率）</translation>
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
        <source>Vary the training pictures (augmentation)</source>
        <translation>变换训练图片（数据增强）</translation>
    </message>
    <message>
        <source>Picture size (longest side, pixels)</source>
        <translation>图片尺寸（最长边，像素）</translation>
    </message>
    <message>
        <source>Also train the vision tower</source>
        <translation>同时训练视觉编码器</translation>
    </message>
</context>
<context>
    <name>CopyRow</name>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
</context>
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
        <source>Rows</source>
        <translation>行</translation>
    </message>
    <message>
        <source>Pairs</source>
        <translation>偏好对</translation>
    </message>
    <message>
        <source>Rewards</source>
        <translation>奖励</translation>
    </message>
</context>
<context>
    <name>DatasetPickerWidget</name>
    <message>
        <source>Data</source>
        <translation>数据</translation>
    </message>
    <message>
        <source>Choose a data file or a hub dataset.</source>
        <translation>请选择数据文件或 Hub 数据集。</translation>
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
        <source>Folder…</source>
        <translation>文件夹…</translation>
    </message>
    <message>
        <source>A folder with one folder of pictures per class, named after the class</source>
        <translation>一个文件夹，其中每个类别一个以类别命名的图片文件夹</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>下载</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Stop checking every row; training checks them all before it starts</source>
        <translation>停止逐行检查；训练开始前会检查所有行</translation>
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
        <source>Dataset:</source>
        <translation>数据集：</translation>
    </message>
    <message>
        <source>seed</source>
        <translation>随机种子</translation>
    </message>
    <message>
        <source>Evaluation:</source>
        <translation>验证集：</translation>
    </message>
    <message>
        <source>A folder of class folders, a table of picture paths and labels, or a hub dataset id</source>
        <translation>类别文件夹所在的文件夹、含图片路径和标签的表格，或模型中心的数据集 ID</translation>
    </message>
    <message>
        <source>A table of picture paths, questions and answers, or a hub dataset id</source>
        <translation>含图片路径、问题和答案的表格，或模型中心的数据集 ID</translation>
    </message>
    <message>
        <source>Download {dataset}</source>
        <translation>下载 {dataset}</translation>
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
        <source>Choose the folder of class folders</source>
        <translation>选择类别文件夹所在的文件夹</translation>
    </message>
    <message>
        <source>Reading the data…</source>
        <translation>正在读取数据…</translation>
    </message>
    <message>
        <source>Checking every row…</source>
        <translation>正在检查每一行……</translation>
    </message>
    <message>
        <source>Checking every row: {what}, {percent}%…</source>
        <translation>正在检查每一行：{what}，{percent}%…</translation>
    </message>
    <message>
        <source>Not every row was checked (cancelled): training checks them all before it starts.</source>
        <translation>没有检查完所有行（已取消）：训练开始前会检查所有行。</translation>
    </message>
    <message numerus="yes">
        <source>%n row(s) for training, {eval} for evaluation</source>
        <translation>
            <numerusform>%n 行用于训练，{eval} 行用于评估</numerusform>
        </translation>
    </message>
    <message>
        <source>Labels (training/evaluation): {labels}</source>
        <translation>标签（训练/评估）：{labels}</translation>
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
        <source>Cancelling…</source>
        <translation>正在取消…</translation>
    </message>
    <message>
        <source>{minutes}:{seconds:02d} left</source>
        <translation>剩余 {minutes}:{seconds:02d}</translation>
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
        <translation>{name} 已在本机：{folder}</translation>
    </message>
    <message>
        <source>Download cancelled. What was downloaded is kept: Download again resumes it.</source>
        <translation>下载已取消。已下载的部分会保留：再次点“下载”即可从断点继续。</translation>
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
        <source>{plan} {warning}</source>
        <translation>{plan}{warning}</translation>
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
        <translation>Finetune Studio 仍在其他地方运行（{others}）。请关闭那些窗口和命令行任务，然后再点“安装”。</translation>
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
    <name>ErrorLabel</name>
    <message>
        <source>Details</source>
        <translation>详细信息</translation>
    </message>
</context>
<context>
    <name>EvaluationView</name>
    <message>
        <source>Label</source>
        <translation>标签</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精确率</translation>
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
        <translation>行数</translation>
    </message>
    <message>
        <source>Training rows</source>
        <translation>训练行数</translation>
    </message>
    <message>
        <source>Evaluation rows</source>
        <translation>评估行数</translation>
    </message>
    <message>
        <source>Rows: the true label. Columns: the predicted label. Click a cell for its rows.</source>
        <translation>行：真实标签。列：预测标签。点击单元格可查看其中的行。</translation>
    </message>
    <message>
        <source>Text</source>
        <translation>文本</translation>
    </message>
    <message>
        <source>Predicted</source>
        <translation>预测</translation>
    </message>
    <message>
        <source>Confidence</source>
        <translation>置信度</translation>
    </message>
    <message>
        <source>Each class</source>
        <translation>各个类别</translation>
    </message>
    <message>
        <source>Labels in the training and evaluation sets</source>
        <translation>训练集和评估集中的标签</translation>
    </message>
    <message>
        <source>Confusion matrix (rows: true label, columns: predicted)</source>
        <translation>混淆矩阵（行：真实标签，列：预测标签）</translation>
    </message>
    <message>
        <source>Prompt</source>
        <translation>提示词</translation>
    </message>
    <message>
        <source>Reference</source>
        <translation>参考答案</translation>
    </message>
    <message>
        <source>Base model</source>
        <translation>基础模型</translation>
    </message>
    <message>
        <source>Fine-tuned</source>
        <translation>微调后</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>Perplexity</source>
        <translation>困惑度</translation>
    </message>
    <message>
        <source>on {rows} evaluation rows</source>
        <translation>基于 {rows} 行评估数据</translation>
    </message>
    <message>
        <source>BLEU and chrF over the answers to the first {count} rows (tokenization {tokenize}).</source>
        <translation>BLEU 和 chrF 基于前 {count} 行的回答（分词方式 {tokenize}）。</translation>
    </message>
    <message>
        <source>The fine-tuned model fits the evaluation rows worse than the base model: train longer, with a lower learning rate, or with more examples.</source>
        <translation>微调后的模型在评估数据上比基础模型还差：请训练更久、降低学习率，或补充更多样本。</translation>
    </message>
    <message>
        <source>(no text: the model ended its answer at once)</source>
        <translation>（没有文字：模型立即结束了回答）</translation>
    </message>
    <message>
        <source>share of {rows} held-out prompts whose greedy answer earns each reward</source>
        <translation>{rows} 个预留提示词中，贪心解码的回答获得各项奖励的比例</translation>
    </message>
    <message>
        <source>Chosen</source>
        <translation>选中</translation>
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
        <translation>之后的差值</translation>
    </message>
    <message>
        <source>Now preferring the chosen answer</source>
        <translation>现在偏向选中回答</translation>
    </message>
    <message>
        <source>Still preferring the rejected answer</source>
        <translation>仍然偏向被拒回答</translation>
    </message>
    <message>
        <source>Margin: how much likelier the chosen answer is than the rejected one (per token).</source>
        <translation>差值：选中回答比被拒回答的可能性高多少（按每个词元计）。</translation>
    </message>
    <message>
        <source>Preference accuracy</source>
        <translation>偏好准确率</translation>
    </message>
    <message>
        <source>Mean margin</source>
        <translation>平均差值</translation>
    </message>
    <message>
        <source>on {rows} held-out pairs</source>
        <translation>基于 {rows} 个留出的偏好对</translation>
    </message>
    <message>
        <source>{method} reward accuracy {accuracy:.3f} at the last evaluation</source>
        <translation>最后一次评估时 {method} 奖励准确率为 {accuracy:.3f}</translation>
    </message>
    <message>
        <source>reward margin {margin:.3f}</source>
        <translation>奖励差值 {margin:.3f}</translation>
    </message>
    <message>
        <source>A model prefers the answer it finds likelier (mean log-probability per token). The margin is chosen minus rejected.</source>
        <translation>模型偏向它认为可能性更高的回答（每个词元的平均对数概率）。差值＝选中回答减去被拒回答。</translation>
    </message>
    <message>
        <source>The tuned model prefers the chosen answers less often than the base model: check that chosen and rejected are not swapped, or lower the learning rate.</source>
        <translation>微调后的模型比基础模型更少偏向选中回答：请检查选中回答和被拒回答是否弄反了，或者降低学习率。</translation>
    </message>
    <message>
        <source>The tuned model prefers the chosen answer in every pair measured.</source>
        <translation>在测量的每一对中，微调后的模型都偏向选中回答。</translation>
    </message>
    <message>
        <source>Wrong: 1 row.</source>
        <translation>判断错误：1 行。</translation>
    </message>
    <message>
        <source>Picture</source>
        <translation>图片</translation>
    </message>
    <message>
        <source>  (base model → fine-tuned)</source>
        <translation>（基础模型 → 微调后）</translation>
    </message>
    <message>
        <source>Validation loss</source>
        <translation>验证损失</translation>
    </message>
    <message>
        <source>Accuracy</source>
        <translation>准确率</translation>
    </message>
    <message>
        <source>macro-F1</source>
        <translation>宏平均 F1</translation>
    </message>
    <message>
        <source>The fine-tuned model does worse than the base model on these rows: train longer, with a lower learning rate, or with more examples of the classes it gets wrong.</source>
        <translation>微调后的模型在这些数据上比基础模型还差：请训练更久、降低学习率，或为它判断错的类别补充更多样本。</translation>
    </message>
    <message>
        <source>The model gives every row the same label: it has learnt the most common label, not the task. Train longer, or balance the labels (see the counts).</source>
        <translation>模型给每一行都打了同一个标签：它学到的只是最常见的标签，而不是任务本身。请训练更久，或让各标签的数量更均衡（见计数）。</translation>
    </message>
    <message>
        <source>{count} rows labelled {label}, predicted {predicted}</source>
        <translation>{count} 行标签为 {label}，预测为 {predicted}</translation>
    </message>
    <message>
        <source>Wrong: {count} rows, the ones the model was surest of first</source>
        <translation>判断错误：{count} 行，模型最有把握的排在前面</translation>
    </message>
    <message>
        <source>Every evaluation row is right.</source>
        <translation>所有评估数据都判断正确。</translation>
    </message>
    <message>
        <source>{count} rows labelled {label} and predicted {predicted}</source>
        <translation>{count} 行标签为 {label}、预测为 {predicted}</translation>
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
        <source>Model folder (transformers)</source>
        <translation>模型文件夹（transformers）</translation>
    </message>
    <message>
        <source>GGUF file (llama.cpp, Ollama, LM Studio)</source>
        <translation>GGUF 文件（llama.cpp、Ollama、LM Studio）</translation>
    </message>
    <message>
        <source>Plain folder (Ollama, llama.cpp)</source>
        <translation>普通文件夹（Ollama、llama.cpp）</translation>
    </message>
    <message>
        <source>LM Studio layout (publisher/model folders)</source>
        <translation>LM Studio 布局（发布者/模型 文件夹）</translation>
    </message>
    <message>
        <source>Install llama.cpp</source>
        <translation>安装 llama.cpp</translation>
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
        <source>Logs to a store in the app&apos;s data folder (MLFLOW_TRACKING_URI chooses another)</source>
        <translation>记录到应用数据文件夹中的存储（MLFLOW_TRACKING_URI 可指定其他位置）</translation>
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
        <translation>权重：</translation>
    </message>
    <message>
        <source>GGUF weights:</source>
        <translation>GGUF 权重：</translation>
    </message>
    <message>
        <source>Layout:</source>
        <translation>布局：</translation>
    </message>
    <message>
        <source>Try it</source>
        <translation>试一试</translation>
    </message>
    <message>
        <source>Serve</source>
        <translation>提供服务</translation>
    </message>
    <message>
        <source>Predict on a file</source>
        <translation>对文件做预测</translation>
    </message>
    <message>
        <source>Evaluation</source>
        <translation>评估</translation>
    </message>
    <message>
        <source>Wait until the last step&apos;s model is made, then export.</source>
        <translation>请等最后一步的模型生成后再导出。</translation>
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
        <source>Verified: reloaded in a fresh process, the outputs are the same.</source>
        <translation>验证通过：已在新进程中重新载入，输出完全相同。</translation>
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
        <source>To look: {command}</source>
        <translation>查看方法：{command}</translation>
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
        <source>GGUF is for decoder chat models (causal LM), which llama.cpp, Ollama and LM Studio run; this run&apos;s model is for {task}: export it as a folder.</source>
        <translation>GGUF 用于 llama.cpp、Ollama 和 LM Studio 运行的解码器对话模型（因果语言模型）；这次训练的模型用于{task}：请导出为文件夹。</translation>
    </message>
    <message>
        <source>llama.cpp is not installed: q4_k_m needs its quantizer.</source>
        <translation>未安装 llama.cpp：q4_k_m 需要用它的量化器生成。</translation>
    </message>
    <message>
        <source>llama.cpp is not installed: the file will be written, but not checked.</source>
        <translation>未安装 llama.cpp：文件会照常写出，但不会被校验。</translation>
    </message>
    <message>
        <source>Replace the file?</source>
        <translation>替换文件吗？</translation>
    </message>
    <message>
        <source>{files} already in {folder}. Replace?</source>
        <translation>{folder} 中已有 {files}。要替换吗？</translation>
    </message>
    <message>
        <source>Writing the GGUF file…</source>
        <translation>正在写入 GGUF 文件…</translation>
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
        <source>Quantizing with llama.cpp…</source>
        <translation>正在用 llama.cpp 量化…</translation>
    </message>
    <message>
        <source>Checking the file with llama.cpp: its answers against transformers&apos;…</source>
        <translation>正在用 llama.cpp 校验文件：把它的回答与 transformers 的对比…</translation>
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
    <name>FailureWidget</name>
    <message>
        <source>Details</source>
        <translation>详细信息</translation>
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
    <name>FitBadgeWidget</name>
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
        <translation>本机情况：{badge}。按当前的“内存与速度”设置约需 {need}；{where}有 {have} 可用。</translation>
    </message>
    <message>
        <source>Roughly {minutes:.0f} min per epoch on this CPU.</source>
        <translation>在这台电脑的 CPU 上，每轮（epoch）约需 {minutes:.0f} 分钟。</translation>
    </message>
</context>
<context>
    <name>GgufPanel</name>
    <message>
        <source>Install llama.cpp</source>
        <translation>安装 llama.cpp</translation>
    </message>
    <message>
        <source>Installs llama-cpp-python into the app&apos;s Python: it checks GGUF files and makes q4_k_m</source>
        <translation>把 llama-cpp-python 安装到应用的运行环境中：用于校验 GGUF 文件和生成 q4_k_m</translation>
    </message>
    <message>
        <source>Add to Ollama</source>
        <translation>添加到 Ollama</translation>
    </message>
    <message>
        <source>as q4_K_M (Ollama quantizes it)</source>
        <translation>以 q4_K_M 添加（由 Ollama 量化）</translation>
    </message>
    <message>
        <source>Ollama makes the 4-bit model from this f16 file as it takes it; llama.cpp is not needed</source>
        <translation>Ollama 在接收这个 f16 文件时生成 4 位模型，不需要 llama.cpp</translation>
    </message>
    <message>
        <source>Check again</source>
        <translation>重新检查</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <source>Open folder</source>
        <translation>打开文件夹</translation>
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
        <translation>已导出到 {file}（{size}）。</translation>
    </message>
    <message>
        <source>Added. In a terminal: {command}</source>
        <translation>已添加。在终端中运行：{command}</translation>
    </message>
    <message>
        <source>Ollama {version} is running: add the model as {name}.</source>
        <translation>Ollama {version} 正在运行：以 {name} 为名添加这个模型。</translation>
    </message>
    <message>
        <source>Adding to Ollama…</source>
        <translation>正在添加到 Ollama…</translation>
    </message>
    <message>
        <source>Installing llama.cpp…</source>
        <translation>正在安装 llama.cpp…</translation>
    </message>
    <message>
        <source>In LM Studio&apos;s models folder: it lists the model as {name}.</source>
        <translation>已在 LM Studio 的模型文件夹中：它会把模型列为 {name}。</translation>
    </message>
    <message>
        <source>LM Studio loads models from {models}, one folder per publisher and model: choose the LM Studio layout and that folder, or move {folder} there.</source>
        <translation>LM Studio 从 {models} 加载模型，每个发布者和模型各一个文件夹：选择“LM Studio 布局”和那个文件夹，或者把 {folder} 移到那里。</translation>
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
        <translation>词元数</translation>
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
        <source>In use now: {source}.</source>
        <translation>当前使用：{source}。</translation>
    </message>
    <message>
        <source>HF_ENDPOINT is set in the environment, so it is used for Hugging Face whatever is chosen below (except a mirror or ModelScope).</source>
        <translation>环境变量中设置了 HF_ENDPOINT，因此无论下面选择什么，Hugging Face 都使用它（镜像站或魔搭除外）。</translation>
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
        <translation>“自动”将使用 {source}。</translation>
    </message>
    <message>
        <source>There is no usable system keyring, so the token was not saved. Set HF_TOKEN / MODELSCOPE_API_TOKEN in the environment instead.</source>
        <translation>没有可用的系统钥匙串，令牌未保存。请改为在环境变量中设置 HF_TOKEN / MODELSCOPE_API_TOKEN。</translation>
    </message>
</context>
<context>
    <name>JobExportController</name>
    <message>
        <source>Where to write the job folder</source>
        <translation>选择作业文件夹的位置</translation>
    </message>
    <message>
        <source>Writing the job folder (the data and a local model are copied)…</source>
        <translation>正在写入作业文件夹（会复制数据和本地模型）…</translation>
    </message>
    <message>
        <source>Job written</source>
        <translation>作业已写好</translation>
    </message>
    <message>
        <source>The job is in {folder}.

One machine: run launch.sh there. A Slurm cluster: sbatch job.sbatch. Its README says how to install the runtime. The run folder ends up in its runs folder: bring it back with Run history › Import run.</source>
        <translation>作业位于 {folder}。

单台机器：在那里运行 launch.sh。Slurm 集群：sbatch job.sbatch。其中的 README 说明了如何安装运行环境。训练任务文件夹会出现在它的 runs 文件夹里：用“训练记录 › 导入训练任务”把它带回来。</translation>
    </message>
    <message>
        <source>Open folder</source>
        <translation>打开文件夹</translation>
    </message>
    <message>
        <source>The job was not written</source>
        <translation>作业没有写出</translation>
    </message>
</context>
<context>
    <name>JobShapeDialog</name>
    <message>
        <source>Job for another machine or a cluster</source>
        <translation>在另一台机器或集群上训练的作业</translation>
    </message>
    <message>
        <source>GPUs per machine:</source>
        <translation>每台机器的 GPU 数：</translation>
    </message>
    <message>
        <source>Machines (for the Slurm script):</source>
        <translation>机器数（用于 Slurm 脚本）：</translation>
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
        <source>&amp;Move the data folder…</source>
        <translation>移动数据文件夹(&amp;M)…</translation>
    </message>
    <message>
        <source>Runs, the runtime and caches (and, if you choose, the downloaded models) to another drive</source>
        <translation>把训练记录、运行环境和缓存（如果你选择，也包括已下载的模型）移到另一个磁盘</translation>
    </message>
    <message>
        <source>&amp;Keep the computer awake while training</source>
        <translation>训练时保持电脑唤醒(&amp;K)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>Copy &amp;diagnostics for a problem report</source>
        <translation>复制诊断信息用于问题报告(&amp;D)</translation>
    </message>
    <message>
        <source>This computer&apos;s GPUs, drivers and libraries, ready to paste into a report</source>
        <translation>这台电脑的 GPU、驱动和库，可直接粘贴到报告中</translation>
    </message>
    <message>
        <source>Open the &amp;logs folder</source>
        <translation>打开日志文件夹(&amp;L)</translation>
    </message>
    <message>
        <source>The app&apos;s own log; each run keeps its train.log in its folder</source>
        <translation>应用自身的日志；每次训练的 train.log 保存在其训练文件夹中</translation>
    </message>
    <message>
        <source>The environment is still being checked; try again in a moment.</source>
        <translation>仍在检查运行环境，请稍后再试。</translation>
    </message>
    <message>
        <source>Diagnostics copied: paste them into your problem report.</source>
        <translation>诊断信息已复制：请粘贴到你的问题报告中。</translation>
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
        <source>{headline} See the Environment step to fix it.</source>
        <translation>{headline} 请到“运行环境”一步修复。</translation>
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
        <source>Training…</source>
        <translation>正在训练…</translation>
    </message>
    <message>
        <source>Your own settings are back for the next run: {fields}.</source>
        <translation>下次训练将恢复使用你自己的设置：{fields}。</translation>
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
        <source>Training is running</source>
        <translation>正在训练</translation>
    </message>
    <message>
        <source>End training and quit? The training process is ended at once; the run resumes from its last checkpoint.</source>
        <translation>结束训练并退出？训练进程会立即结束；训练任务可以从最后一个检查点继续训练。</translation>
    </message>
    <message>
        <source>Stop training and quit? A checkpoint is saved so you can resume later.</source>
        <translation>停止训练并退出吗？会保存一个检查点，以后可以继续。</translation>
    </message>
    <message>
        <source>Ending the training process…</source>
        <translation>正在结束训练进程…</translation>
    </message>
    <message>
        <source>Stopping training and saving a checkpoint…</source>
        <translation>正在停止训练并保存检查点…</translation>
    </message>
</context>
<context>
    <name>MemoryEstimateWidget</name>
    <message>
        <source>Memory estimate and presets</source>
        <translation>内存估算与预设</translation>
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
        <translation>最省内存</translation>
    </message>
    <message>
        <source>Fit my GPU</source>
        <translation>按我的 GPU 调整</translation>
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
        <translation>本机训练的内存占用——{parts}</translation>
    </message>
    <message>
        <source>No NVIDIA GPU here: training runs on the CPU and needs about {total} of RAM ({free} free). It is much slower than on a GPU: small models and short texts suit it best.</source>
        <translation>这里没有 NVIDIA GPU：训练将在 CPU 上运行，约需 {total} 内存（可用 {free}）。速度比 GPU 慢得多，最适合小模型和短文本。</translation>
    </message>
    <message>
        <source>Needs about {total}: fits in the {free} free on {gpu}.</source>
        <translation>约需 {total}：{gpu} 的 {free} 可用显存放得下。</translation>
    </message>
    <message>
        <source>Needs about {total}: fits, but tightly, in the {free} free on {gpu}.</source>
        <translation>约需 {total}：{gpu} 的 {free} 可用显存勉强放得下。</translation>
    </message>
    <message>
        <source>Needs about {total}: will not fit in the {free} free on {gpu}.</source>
        <translation>约需 {total}：{gpu} 的 {free} 可用显存放不下。</translation>
    </message>
    <message>
        <source>Changed: {changes}.</source>
        <translation>已更改：{changes}。</translation>
    </message>
    <message>
        <source>On Windows it will not fail: the driver moves what does not fit into shared system memory, and each step becomes many times slower. Fit my GPU finds settings that fit.</source>
        <translation>在 Windows 上它不会报错：驱动程序会把放不下的部分移到共享系统内存中，每一步都会慢很多倍。“按我的 GPU 调整”可以找到放得下的设置。</translation>
    </message>
    <message>
        <source>{term}: {size}</source>
        <translation>{term}：{size}</translation>
    </message>
    <message>
        <source>Nothing changed: the current settings already match.</source>
        <translation>没有改动：当前设置已经符合。</translation>
    </message>
</context>
<context>
    <name>MessageBubble</name>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <source>Copy this answer to the clipboard</source>
        <translation>把这个回答复制到剪贴板</translation>
    </message>
</context>
<context>
    <name>MetricText</name>
    <message>
        <source>loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>accuracy</source>
        <translation>准确率</translation>
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
        <translation>精确率</translation>
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
        <translation>梯度范数</translation>
    </message>
    <message>
        <source>learning rate</source>
        <translation>学习率</translation>
    </message>
    <message>
        <source>epoch</source>
        <translation>轮数</translation>
    </message>
    <message>
        <source>time (s)</source>
        <translation>用时（秒）</translation>
    </message>
    <message>
        <source>samples/s</source>
        <translation>样本/秒</translation>
    </message>
    <message>
        <source>steps/s</source>
        <translation>步/秒</translation>
    </message>
    <message>
        <source>tokens/s</source>
        <translation>词元/秒</translation>
    </message>
    <message>
        <source>reward accuracy</source>
        <translation>奖励准确率</translation>
    </message>
    <message>
        <source>reward margin</source>
        <translation>奖励差值</translation>
    </message>
    <message>
        <source>chosen reward</source>
        <translation>选中回答奖励</translation>
    </message>
    <message>
        <source>rejected reward</source>
        <translation>被拒回答奖励</translation>
    </message>
    <message>
        <source>chosen log-probability</source>
        <translation>选中回答对数概率</translation>
    </message>
    <message>
        <source>rejected log-probability</source>
        <translation>被拒回答对数概率</translation>
    </message>
    <message>
        <source>mean reward</source>
        <translation>平均奖励</translation>
    </message>
    <message>
        <source>answer length</source>
        <translation>回答长度</translation>
    </message>
    <message>
        <source>KL</source>
        <translation>KL</translation>
    </message>
    <message>
        <source>reward: {name}</source>
        <translation>奖励：{name}</translation>
    </message>
    <message>
        <source>validation {metric}</source>
        <translation>验证集{metric}</translation>
    </message>
    <message>
        <source>training {metric}</source>
        <translation>训练{metric}</translation>
    </message>
    <message>
        <source>test {metric}</source>
        <translation>测试集{metric}</translation>
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
        <source>Preference (DPO / ORPO)</source>
        <translation>偏好微调（DPO / ORPO）</translation>
    </message>
    <message>
        <source>Reasoning (GRPO)</source>
        <translation>推理（GRPO）</translation>
    </message>
    <message>
        <source>Image classification</source>
        <translation>图像分类</translation>
    </message>
    <message>
        <source>Vision-language (pictures and text)</source>
        <translation>视觉语言（图片与文本）</translation>
    </message>
    <message>
        <source>prediction</source>
        <translation>预测</translation>
    </message>
    <message>
        <source>probability</source>
        <translation>概率</translation>
    </message>
    <message>
        <source>generated text</source>
        <translation>生成的文本</translation>
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
        <source>Weights</source>
        <translation>权重</translation>
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
        <source>run: {name} (finished chat run)</source>
        <translation>训练：{name}（已完成的对话训练）</translation>
    </message>
    <message>
        <source>{license} · gated</source>
        <translation>{license} · 受限</translation>
    </message>
    <message>
        <source>{weights} of weights, as on the hub; {disk} on disk with every file.</source>
        <translation>权重 {weights}，与模型库上一致；连同所有文件在磁盘上占 {disk}。</translation>
    </message>
    <message>
        <source>Gated: accept the license on the model&apos;s page, then add a token in Settings &gt; Model sources.</source>
        <translation>受限模型：请先在模型页面同意许可协议，然后在“设置 &gt; 模型下载源”中添加令牌。</translation>
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
        <translation>多语言</translation>
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
        <translation>{verdict} · 需 {need} 内存 · 每轮约 {minutes:.0f} 分钟</translation>
    </message>
    <message>
        <source>{verdict} · {need} of RAM</source>
        <translation>{verdict} · 需 {need} 内存</translation>
    </message>
    <message>
        <source>Needs about {need} with the current Memory &amp; speed options; {have} available.</source>
        <translation>按当前的“内存与速度”设置约需 {need}；可用 {have}。</translation>
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
        <source>{model} was not deleted: {error}</source>
        <translation>{model} 没有删除：{error}</translation>
    </message>
    <message>
        <source>Deleted {model}: {size} freed.</source>
        <translation>已删除 {model}：释放了 {size}。</translation>
    </message>
</context>
<context>
    <name>ModelPickerWidget</name>
    <message>
        <source>Task and model</source>
        <translation>任务和模型</translation>
    </message>
    <message>
        <source>Keeps a frozen reference copy of the model: more memory.</source>
        <translation>保留一份冻结的模型副本作参照：占用更多显存。</translation>
    </message>
    <message>
        <source>Needs no reference model: less memory.</source>
        <translation>不需要参照模型：占用更少显存。</translation>
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
        <source>Task:</source>
        <translation>任务：</translation>
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
        <translation>选择模型文件夹</translation>
    </message>
    <message>
        <source>Choose a model: a hub id such as &quot;bert-base-uncased&quot;, or a local model folder.</source>
        <translation>请选择模型：模型库 ID（如 &quot;bert-base-uncased&quot;）或本地模型文件夹。</translation>
    </message>
    <message>
        <source>Model: {problem}</source>
        <translation>模型：{problem}</translation>
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
</context>
<context>
    <name>OptionsPage</name>
    <message>
        <source>Memory &amp; speed</source>
        <translation>内存与速度</translation>
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
        <source>The run&apos;s model is its best checkpoint</source>
        <translation>运行的模型取最佳检查点</translation>
    </message>
    <message>
        <source>never</source>
        <translation>从不</translation>
    </message>
    <message>
        <source> evaluations without improvement</source>
        <translation> 次评估无改进</translation>
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
        <source>Best checkpoint</source>
        <translation>最佳检查点</translation>
    </message>
    <message>
        <source>Best by</source>
        <translation>最佳依据</translation>
    </message>
    <message>
        <source>Stop early after</source>
        <translation>提前停止于</translation>
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
        <translation>速度与内存</translation>
    </message>
    <message>
        <source>LoRA adapters</source>
        <translation>LoRA 适配器</translation>
    </message>
    <message>
        <source>Pictures</source>
        <translation>图片</translation>
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
            <numerusform>有效批大小：每次更新 %n 个样本</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Effective batch: %n example(s) per update, across the GPUs</source>
        <translation>
            <numerusform>有效批大小：每次更新 %n 个样本（所有 GPU 合计）</numerusform>
        </translation>
    </message>
    <message>
        <source>Folder for run folders</source>
        <translation>存放训练任务的文件夹</translation>
    </message>
</context>
<context>
    <name>PairPreviewWidget</name>
    <message>
        <source>Choose the chosen and rejected columns to see the pairs.</source>
        <translation>请先选好“选中回答”和“被拒回答”两列，才能查看偏好对。</translation>
    </message>
    <message>
        <source>No rows to show.</source>
        <translation>没有可显示的行。</translation>
    </message>
    <message>
        <source>Pair {number}</source>
        <translation>第 {number} 对</translation>
    </message>
    <message>
        <source>This row holds no readable pair: check the chosen, rejected and prompt columns.</source>
        <translation>这一行读不出偏好对：请检查选中回答、被拒回答和提示词三列。</translation>
    </message>
    <message>
        <source>Chosen</source>
        <translation>选中</translation>
    </message>
    <message>
        <source>Rejected</source>
        <translation>被拒</translation>
    </message>
    <message>
        <source>Prompt: {text}</source>
        <translation>提示词：{text}</translation>
    </message>
    <message>
        <source>User</source>
        <translation>用户</translation>
    </message>
    <message>
        <source>Assistant</source>
        <translation>助手</translation>
    </message>
    <message>
        <source>System</source>
        <translation>系统</translation>
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
        <translation>把图片拖到这里、粘贴（Ctrl+V）或选择一张</translation>
    </message>
    <message>
        <source>Choose picture…</source>
        <translation>选择图片…</translation>
    </message>
    <message>
        <source>Paste</source>
        <translation>粘贴</translation>
    </message>
    <message>
        <source>Use the picture on the clipboard (Ctrl+V)</source>
        <translation>使用剪贴板中的图片（Ctrl+V）</translation>
    </message>
    <message>
        <source>That file is not a picture that can be read.</source>
        <translation>该文件不是可读取的图片。</translation>
    </message>
    <message>
        <source>The clipboard holds no picture.</source>
        <translation>剪贴板中没有图片。</translation>
    </message>
    <message>
        <source>Choose a picture</source>
        <translation>选择一张图片</translation>
    </message>
    <message>
        <source>Pictures ({patterns})</source>
        <translation>图片（{patterns}）</translation>
    </message>
</context>
<context>
    <name>PredictPanel</name>
    <message>
        <source>A CSV, TSV, JSONL or Excel file with the rows to predict</source>
        <translation>包含待预测数据的 CSV、TSV、JSONL 或 Excel 文件</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>Folder…</source>
        <translation>文件夹…</translation>
    </message>
    <message>
        <source>A folder of pictures, for an image classifier: every picture in it</source>
        <translation>图片文件夹，供图像分类器使用：其中的每一张图片</translation>
    </message>
    <message>
        <source>The column the model reads</source>
        <translation>模型读取的列</translation>
    </message>
    <message>
        <source>Save as…</source>
        <translation>另存为…</translation>
    </message>
    <message>
        <source>Predict</source>
        <translation>预测</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Open folder</source>
        <translation>打开文件夹</translation>
    </message>
    <message>
        <source>File:</source>
        <translation>文件：</translation>
    </message>
    <message>
        <source>Column to read:</source>
        <translation>要读取的列：</translation>
    </message>
    <message>
        <source>Write to:</source>
        <translation>写入到：</translation>
    </message>
    <message>
        <source>The file comes back with the prediction added to each row: the label and its probability, or the generated text. A CSV keeps its encoding (GBK stays GBK).</source>
        <translation>文件的每一行都会加上预测结果：标签及其概率，或生成的文本。CSV 保持原有编码（GBK 仍是 GBK）。</translation>
    </message>
    <message>
        <source>File to predict</source>
        <translation>要预测的文件</translation>
    </message>
    <message>
        <source>Data ({files})</source>
        <translation>数据（{files}）</translation>
    </message>
    <message>
        <source>Folder of pictures to label</source>
        <translation>要打标签的图片文件夹</translation>
    </message>
    <message>
        <source>Write the predictions to</source>
        <translation>预测结果写入到</translation>
    </message>
    <message>
        <source>(as trained)</source>
        <translation>（与训练时相同）</translation>
    </message>
    <message>
        <source>Replace the file?</source>
        <translation>替换文件？</translation>
    </message>
    <message>
        <source>{file} exists. Replace it?</source>
        <translation>{file} 已存在。要替换它吗？</translation>
    </message>
    <message>
        <source>Loading the model…</source>
        <translation>正在加载模型…</translation>
    </message>
    <message>
        <source>The picture is labelled; written to {file} with {added}.</source>
        <translation>图片已标注；已写入 {file}，新增列：{added}。</translation>
    </message>
    <message>
        <source>{done} of {rows} pictures labelled; written to {file} with {added}.</source>
        <translation>{rows} 张图片中已标注 {done} 张；已写入 {file}，新增列：{added}。</translation>
    </message>
    <message>
        <source>{done} of {rows} rows predicted from column {column}; written to {file} with {added}.</source>
        <translation>已根据 {column} 列预测 {rows} 行中的 {done} 行；已写入 {file}，新增列：{added}。</translation>
    </message>
    <message>
        <source>{rows} rows predicted from column {column}; written to {file} with {added}.</source>
        <translation>已根据 {column} 列预测 {rows} 行；已写入 {file}，新增列：{added}。</translation>
    </message>
    <message>
        <source>, </source>
        <translation>、</translation>
    </message>
    <message>
        <source>Predicting failed: {error}</source>
        <translation>预测失败：{error}</translation>
    </message>
</context>
<context>
    <name>ProcessesWidget</name>
    <message>
        <source>Processes and GPUs</source>
        <translation>进程与 GPU</translation>
    </message>
    <message>
        <source>Run in a separate process</source>
        <translation>在单独的进程中训练</translation>
    </message>
    <message>
        <source>Stop can then end the run at once, a crash cannot close the app, and every byte of GPU memory goes back to the system when the run ends. It costs a few seconds at the start.</source>
        <translation>这样“停止”可以立即结束训练，崩溃不会让应用关闭，训练结束后所有显存都会还给系统。开始时多花几秒钟。</translation>
    </message>
    <message>
        <source>DDP: a whole copy of the model on each GPU (fastest)</source>
        <translation>DDP：每块 GPU 上一份完整的模型（最快）</translation>
    </message>
    <message>
        <source>FSDP: the model split across the GPUs (for a model too big for one)</source>
        <translation>FSDP：模型拆分到各块 GPU 上（适合一块 GPU 放不下的模型）</translation>
    </message>
    <message>
        <source>DeepSpeed ZeRO-2: gradients and optimizer split</source>
        <translation>DeepSpeed ZeRO-2：拆分梯度和优化器状态</translation>
    </message>
    <message>
        <source>DeepSpeed ZeRO-3: everything split</source>
        <translation>DeepSpeed ZeRO-3：全部拆分</translation>
    </message>
    <message>
        <source>GPUs to use</source>
        <translation>使用的 GPU 数</translation>
    </message>
    <message>
        <source>Strategy</source>
        <translation>策略</translation>
    </message>
    <message>
        <source>Export as a job for another machine or a cluster…</source>
        <translation>导出为作业，在另一台机器或集群上训练…</translation>
    </message>
    <message>
        <source>Writes a folder with the config, the data, launch.sh (one machine) and a Slurm script (several); bring the run folder back with Run history › Import run</source>
        <translation>写出一个文件夹，包含配置、数据、launch.sh（单台机器）和 Slurm 脚本（多台机器）；用“训练记录 › 导入训练任务”把训练任务文件夹带回来</translation>
    </message>
    <message>
        <source>Needs the deepspeed package (pip install deepspeed; Linux only)</source>
        <translation>需要 deepspeed 包（pip install deepspeed；仅限 Linux）</translation>
    </message>
    <message>
        <source>One GPU. With more, the run is split into one process per GPU (accelerate launch).</source>
        <translation>一块 GPU。有多块时，训练会拆成每块 GPU 一个进程（accelerate launch）。</translation>
    </message>
    <message>
        <source>{count} processes through accelerate launch; progress comes from the first. On Windows the GPUs exchange gradients with gloo, through system memory (PyTorch has no NCCL for Windows): each step waits longer for that exchange than on Linux, so {count} GPUs gain less than {count} times the speed. For the most speed, train on Linux or WSL2.</source>
        <translation>通过 accelerate launch 启动 {count} 个进程；进度来自第一个进程。在 Windows 上，GPU 之间用 gloo 经由系统内存交换梯度（PyTorch 在 Windows 上没有 NCCL）：每一步等待交换的时间比在 Linux 上长，所以 {count} 块 GPU 的速度提升不到 {count} 倍。要最快，请在 Linux 或 WSL2 上训练。</translation>
    </message>
    <message>
        <source>{count} processes through accelerate launch (NCCL); progress, plots and checkpoints come from the first. The memory estimate is per GPU.</source>
        <translation>通过 accelerate launch 启动 {count} 个进程（NCCL）；进度、曲线和检查点来自第一个进程。显存估算是每块 GPU 的。</translation>
    </message>
</context>
<context>
    <name>PublishPanel</name>
    <message>
        <source>Publish to a model hub</source>
        <translation>发布到模型中心</translation>
    </message>
    <message>
        <source>name, or owner/name</source>
        <translation>名称，或 所有者/名称</translation>
    </message>
    <message>
        <source>Hugging Face</source>
        <translation>Hugging Face</translation>
    </message>
    <message>
        <source>ModelScope</source>
        <translation>魔搭（ModelScope）</translation>
    </message>
    <message>
        <source>Hugging Face goes where Settings &gt; Model sources points (a mirror must take uploads)</source>
        <translation>Hugging Face 使用“设置 &gt; 模型来源”中的地址（镜像须支持上传）</translation>
    </message>
    <message>
        <source>Private: only you (and your organization) can see it</source>
        <translation>私有：只有你（和你的组织）能看到</translation>
    </message>
    <message>
        <source>Publish</source>
        <translation>发布</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Repository:</source>
        <translation>仓库：</translation>
    </message>
    <message>
        <source>Hub:</source>
        <translation>模型中心：</translation>
    </message>
    <message>
        <source>The model folder {name} with its model card.</source>
        <translation>模型文件夹 {name}，附模型卡片。</translation>
    </message>
    <message>
        <source>The LoRA adapters in {name} with their model card.</source>
        <translation>{name} 中的 LoRA 适配器，附模型卡片。</translation>
    </message>
    <message>
        <source>{name} with its Modelfile and card.</source>
        <translation>{name}，附 Modelfile 和模型卡片。</translation>
    </message>
    <message>
        <source>Give the repository as name, or owner/name (letters, digits, - _ .).</source>
        <translation>请按“名称”或“所有者/名称”填写仓库（字母、数字、- _ .）。</translation>
    </message>
    <message>
        <source>Checking the token…</source>
        <translation>正在检查令牌…</translation>
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
        <translation>已发布到 {url}。</translation>
    </message>
    <message>
        <source>Replace the repository&apos;s files?</source>
        <translation>替换仓库中的文件？</translation>
    </message>
    <message>
        <source>{problem}

Replace them? Files of the same names are overwritten and the others deleted (the hub keeps the old ones in the repository&apos;s history).</source>
        <translation>{problem}

要替换吗？同名文件会被覆盖，其余文件会被删除（旧文件仍保留在仓库的历史记录中）。</translation>
    </message>
</context>
<context>
    <name>RecoveryBarWidget</name>
    <message>
        <source>Undo for the next run</source>
        <translation>下次训练撤销这些更改</translation>
    </message>
    <message>
        <source>Use your own settings again in the next run</source>
        <translation>下次训练重新使用你自己的设置</translation>
    </message>
    <message>
        <source>The run starts with:</source>
        <translation>训练开始时改为：</translation>
    </message>
    <message>
        <source>The run goes on at step {step} with:</source>
        <translation>训练在第 {step} 步继续，改为：</translation>
    </message>
    <message>
        <source>The run goes back to its checkpoint at step {step} and goes on with:</source>
        <translation>训练回到第 {step} 步的检查点继续，改为：</translation>
    </message>
    <message>
        <source>The run starts again from the beginning with:</source>
        <translation>训练从头重新开始，改为：</translation>
    </message>
    <message>
        <source>These settings are now on Memory &amp; speed for your next run; Undo restores yours.</source>
        <translation>这些设置已填入“内存与速度”，供下次训练使用；点“撤销”可恢复你自己的设置。</translation>
    </message>
    <message>
        <source>Undone: the next run uses your own settings again.</source>
        <translation>已撤销：下次训练将重新使用你自己的设置。</translation>
    </message>
</context>
<context>
    <name>RestartController</name>
    <message>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <source>The new language is used from the next start. Restart Finetune Studio now?</source>
        <translation>新语言将在下次启动时生效。现在重新启动 Finetune Studio 吗？</translation>
    </message>
    <message>
        <source>Move the data folder into</source>
        <translation>把数据文件夹移到</translation>
    </message>
    <message>
        <source>Cannot move the data folder</source>
        <translation>无法移动数据文件夹</translation>
    </message>
    <message>
        <source>Move the data folder</source>
        <translation>移动数据文件夹</translation>
    </message>
    <message>
        <source>Close Finetune Studio, then run: {command}</source>
        <translation>请关闭 Finetune Studio，然后运行：{command}</translation>
    </message>
    <message>
        <source>{size:.1f} GB to copy</source>
        <translation>需复制 {size:.1f} GB</translation>
    </message>
    <message>
        <source>a rename on the same drive</source>
        <translation>同一磁盘上重命名即可</translation>
    </message>
    <message>
        <source>Finetune Studio closes, moves its data folder ({size}) from {source} to {target}, and starts again. Command-line runs must end first. Continue?</source>
        <translation>Finetune Studio 将关闭，把数据文件夹（{size}）从 {source} 移到 {target}，然后重新启动。命令行中的训练必须先结束。继续吗？</translation>
    </message>
    <message>
        <source>Also move the downloaded models ({folder}). Other programs that use this Hugging Face cache will then download their models again.</source>
        <translation>同时移动已下载的模型（{folder}）。使用这个 Hugging Face 缓存的其他程序之后会重新下载它们的模型。</translation>
    </message>
    <message>
        <source>Restart to install PyTorch</source>
        <translation>重新启动以安装 PyTorch</translation>
    </message>
    <message>
        <source>Finetune Studio closes, installs PyTorch {version} beside the one you have, and starts again with it. The PyTorch you have keeps working until the new one is complete; if anything fails, it stays. Runs started from the command line are waited for. Continue?</source>
        <translation>Finetune Studio 将关闭，在现有 PyTorch 旁边安装 PyTorch {version}，然后用它重新启动。新的装好之前，现有的 PyTorch 照常可用；任何一步失败，都保留现有的。会等待命令行启动的训练结束。继续吗？</translation>
    </message>
    <message>
        <source>The request could not be written ({error}). Check that the data folder is writable.</source>
        <translation>无法写入请求（{error}）。请检查数据文件夹是否可写。</translation>
    </message>
    <message>
        <source>Close Finetune Studio and start it again: PyTorch is installed at that start.</source>
        <translation>请关闭 Finetune Studio 再重新启动：启动时会安装 PyTorch。</translation>
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
</context>
<context>
    <name>ResumeOfferWidget</name>
    <message>
        <source>Resume</source>
        <translation>继续训练</translation>
    </message>
    <message>
        <source>Not now</source>
        <translation>以后再说</translation>
    </message>
    <message>
        <source>The run {run} was interrupted at step {step} of {total} (the app or the computer stopped). Resume it from its last checkpoint?</source>
        <translation>训练任务 {run} 在第 {step} 步（共 {total} 步）时中断了（应用或电脑停止了运行）。要从最近的检查点继续吗？</translation>
    </message>
</context>
<context>
    <name>RewardsWidget</name>
    <message>
        <source>The reward&apos;s weight; 0 turns it off</source>
        <translation>该奖励的权重；0 表示关闭</translation>
    </message>
    <message>
        <source>Asked before every prompt; it should say where the final answer goes.</source>
        <translation>放在每个提示词之前；应说明最终答案写在哪里。</translation>
    </message>
    <message>
        <source>equals the reference (as text)</source>
        <translation>与参考答案相同（按文本）</translation>
    </message>
    <message>
        <source>equals the reference (as a number)</source>
        <translation>与参考答案相同（按数值）</translation>
    </message>
    <message>
        <source>is the reference label</source>
        <translation>是参考标签</translation>
    </message>
    <message>
        <source>not checked</source>
        <translation>不检查</translation>
    </message>
    <message>
        <source>Numbers closer than this share of the reference count as equal</source>
        <translation>与参考答案相差不超过该比例的数值视为相等</translation>
    </message>
    <message>
        <source>positive, negative (empty: any)</source>
        <translation>positive, negative（留空：任意）</translation>
    </message>
    <message>
        <source>Reasoning, then a last line &quot;Answer: X&quot;</source>
        <translation>先推理，最后一行写“Answer: X”</translation>
    </message>
    <message>
        <source>&lt;think&gt;reasoning&lt;/think&gt;, then the answer</source>
        <translation>&lt;think&gt;推理&lt;/think&gt;，然后写答案</translation>
    </message>
    <message>
        <source>The answer in \boxed{X}</source>
        <translation>答案写在 \boxed{X} 中</translation>
    </message>
    <message>
        <source>My own regular expression…</source>
        <translation>自定义正则表达式…</translation>
    </message>
    <message>
        <source>Chinese prompts answered in Chinese, English ones in English</source>
        <translation>中文提示词用中文回答，英文提示词用英文回答</translation>
    </message>
    <message>
        <source>My own reward (Python)</source>
        <translation>自定义奖励（Python）</translation>
    </message>
    <message>
        <source>a .py file with reward(prompts, completions, **columns)</source>
        <translation>含有 reward(prompts, completions, **columns) 的 .py 文件</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>Your own code runs in the training process, with your rights: use only files you trust.</source>
        <translation>你自己的代码会以你的权限在训练进程中运行：只使用你信任的文件。</translation>
    </message>
    <message>
        <source>Answers written per prompt and compared with each other</source>
        <translation>每个提示词生成并相互比较的回答数</translation>
    </message>
    <message>
        <source>0: the model is not held near where it started, and no reference copy is kept</source>
        <translation>0：不把模型约束在起点附近，也不保留参考副本</translation>
    </message>
    <message>
        <source>Prompt</source>
        <translation>提示词</translation>
    </message>
    <message>
        <source>Reference answer</source>
        <translation>参考答案</translation>
    </message>
    <message>
        <source>A wrong answer</source>
        <translation>一个错误答案</translation>
    </message>
    <message>
        <source>weight</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>Final answer:</source>
        <translation>最终答案：</translation>
    </message>
    <message>
        <source>Tolerance:</source>
        <translation>容差：</translation>
    </message>
    <message>
        <source>Labels:</source>
        <translation>标签：</translation>
    </message>
    <message>
        <source>Format:</source>
        <translation>格式：</translation>
    </message>
    <message>
        <source>characters, weight</source>
        <translation>个字符，权重</translation>
    </message>
    <message>
        <source>Length:</source>
        <translation>长度：</translation>
    </message>
    <message>
        <source>Prompt&apos;s language, weight:</source>
        <translation>提示词的语言，权重：</translation>
    </message>
    <message>
        <source>System prompt:</source>
        <translation>系统提示词：</translation>
    </message>
    <message>
        <source>Answers per prompt:</source>
        <translation>每个提示词的回答数：</translation>
    </message>
    <message>
        <source>Longest answer (tokens):</source>
        <translation>最长回答（词元）：</translation>
    </message>
    <message>
        <source>Temperature:</source>
        <translation>温度：</translation>
    </message>
    <message>
        <source>Beta (KL):</source>
        <translation>Beta（KL）：</translation>
    </message>
    <message>
        <source>What the rewards give the first rows:</source>
        <translation>各奖励对前几行给出的分数：</translation>
    </message>
    <message>
        <source>Your reward</source>
        <translation>你的奖励</translation>
    </message>
    <message>
        <source>Python files (*.py)</source>
        <translation>Python 文件 (*.py)</translation>
    </message>
    <message>
        <source>Answers per prompt</source>
        <translation>每个提示词的回答数</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>温度</translation>
    </message>
    <message>
        <source>Beta (KL)</source>
        <translation>Beta（KL）</translation>
    </message>
    <message>
        <source>Longest answer</source>
        <translation>最长回答</translation>
    </message>
    <message>
        <source>Length</source>
        <translation>长度</translation>
    </message>
    <message>
        <source>The rewards</source>
        <translation>奖励设置</translation>
    </message>
    <message>
        <source>{field} {problem}</source>
        <translation>{field}{problem}</translation>
    </message>
    <message>
        <source>This expression {problem}</source>
        <translation>该表达式{problem}</translation>
    </message>
    <message>
        <source>The preview waits until the rewards can be used.</source>
        <translation>奖励设置可用后才会显示预览。</translation>
    </message>
    <message>
        <source>No row has a reference answer (map the answer column): only the format, length, language and your own rewards can score the answers.</source>
        <translation>没有一行有参考答案（请映射答案列）：只有格式、长度、语言和自定义奖励能为回答打分。</translation>
    </message>
    <message>
        <source>The reference answer should earn every reward it is checked by, and the wrong one less: if not, the format or the answer check does not fit the data.</source>
        <translation>参考答案应得到所有检查它的奖励，错误答案应得分更低；否则说明格式或答案检查方式与数据不符。</translation>
    </message>
</context>
<context>
    <name>RunHistory</name>
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
        <source>Preference tuning of the model {run} trained: choose pairs of answers (prompt, chosen, rejected) as the data.</source>
        <translation>对 {run} 训练出的模型做偏好微调：请选择成对的回答（提示词、选中回答、被拒回答）作为数据。</translation>
    </message>
    <message>
        <source>Training the model {run} trained with rewards: choose prompts (with their reference answers) as the data, then the rewards.</source>
        <translation>用奖励训练 {run} 训练出的模型：先选择提示词（及其参考答案）作为数据，再选择奖励。</translation>
    </message>
</context>
<context>
    <name>RunsDialog</name>
    <message>
        <source>Runs</source>
        <translation>训练记录</translation>
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
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Evaluation…</source>
        <translation>评估…</translation>
    </message>
    <message>
        <source>Per class, the confusion matrix and the mistakes of a finished classification run</source>
        <translation>已完成的分类训练：各类别指标、混淆矩阵和判断错误的数据</translation>
    </message>
    <message>
        <source>Tune preferences…</source>
        <translation>偏好微调…</translation>
    </message>
    <message>
        <source>Teach this chat model which answers are better: a preference run (DPO or ORPO) that starts from the model this run saved</source>
        <translation>教这个对话模型哪些回答更好：从这次训练保存的模型开始做偏好微调（DPO 或 ORPO）</translation>
    </message>
    <message>
        <source>Train with rewards…</source>
        <translation>用奖励训练…</translation>
    </message>
    <message>
        <source>Teach this chat model to reach answers you can check: a reasoning run (GRPO) that starts from the model this run saved</source>
        <translation>教这个对话模型得出可以核对的答案：从该训练任务保存的模型开始一次推理训练（GRPO）</translation>
    </message>
    <message>
        <source>Import run…</source>
        <translation>导入训练任务…</translation>
    </message>
    <message>
        <source>Copy a run folder made elsewhere (a job&apos;s runs folder) into this list</source>
        <translation>把在别处生成的训练任务文件夹（作业的 runs 文件夹中）复制到这个列表</translation>
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
        <source>Rows</source>
        <translation>行数</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>学习率</translation>
    </message>
    <message>
        <source>Batch</source>
        <translation>批大小</translation>
    </message>
    <message>
        <source>Epochs</source>
        <translation>轮数</translation>
    </message>
    <message>
        <source>LoRA</source>
        <translation>LoRA</translation>
    </message>
    <message>
        <source>Best score</source>
        <translation>最佳评分</translation>
    </message>
    <message>
        <source>Tokens/s</source>
        <translation>词元/秒</translation>
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
        <translation>失败</translation>
    </message>
    <message>
        <source>Running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>Crashed</source>
        <translation>已崩溃</translation>
    </message>
    <message>
        <source>Damaged</source>
        <translation>已损坏</translation>
    </message>
    <message>
        <source>{problem}. Resume the run: it goes on from its last good checkpoint.</source>
        <translation>{problem}。请继续此训练：它会从最后一个完好的检查点接着训练。</translation>
    </message>
    <message>
        <source>{problem}. It has no checkpoint to resume from: train it again.</source>
        <translation>{problem}。它没有可继续的检查点：请重新训练。</translation>
    </message>
    <message>
        <source>{status} ({step}/{total})</source>
        <translation>{status}（{step}/{total}）</translation>
    </message>
    <message>
        <source>Reading the runs in {folder}…</source>
        <translation>正在读取 {folder} 中的训练任务……</translation>
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
        <source>The runs in {folder} could not be read: {error}</source>
        <translation>无法读取 {folder} 中的训练任务：{error}</translation>
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
        <source>{field}: {values}</source>
        <translation>{field}：{values}</translation>
    </message>
    <message>
        <source>The selected runs have the same settings.</source>
        <translation>所选训练任务的设置相同。</translation>
    </message>
    <message>
        <source>Differences: {differences}</source>
        <translation>不同之处：{differences}</translation>
    </message>
    <message>
        <source>Evaluation: {run}</source>
        <translation>评估：{run}</translation>
    </message>
    <message>
        <source>Run folder to import</source>
        <translation>要导入的训练任务文件夹</translation>
    </message>
    <message>
        <source>Copying {folder}…</source>
        <translation>正在复制 {folder}…</translation>
    </message>
    <message>
        <source>Imported {run}.</source>
        <translation>已导入 {run}。</translation>
    </message>
    <message>
        <source>The run was not imported</source>
        <translation>训练任务没有导入</translation>
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
    <name>SampleDialog</name>
    <message>
        <source>Replace your choices with the sample?</source>
        <translation>用示例替换你的选择吗？</translation>
    </message>
    <message>
        <source>The sample sets its own model and data (short English reviews, the bundled English model) on every page. Your choices now: {mine}.

Save them first with File &gt; Save run config… to come back to them.</source>
        <translation>示例会在每一页换上它自己的模型和数据（英文短评论、自带的英文模型）。你现在的选择：{mine}。

想以后再用它们，请先用“文件 &gt; 保存训练配置…”保存。</translation>
    </message>
    <message>
        <source>Load the sample</source>
        <translation>载入示例</translation>
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
        <translation>服务意外结束（退出码 {code}）。</translation>
    </message>
    <message>
        <source>Start it again; if it ends again, Details shows what it printed.</source>
        <translation>请再启动一次；如果它又结束了，“详细信息”里有它输出的内容。</translation>
    </message>
    <message>
        <source>The server could not be started: {error}.</source>
        <translation>无法启动服务：{error}。</translation>
    </message>
    <message>
        <source>Check that the app&apos;s Python ({python}) runs, then try again.</source>
        <translation>请检查本应用的 Python（{python}）能否运行，然后重试。</translation>
    </message>
</context>
<context>
    <name>ServePanel</name>
    <message>
        <source>No model yet: train one, or open a model folder.</source>
        <translation>还没有模型：请先训练一个，或打开一个模型文件夹。</translation>
    </message>
    <message>
        <source>This computer only</source>
        <translation>仅限本机</translation>
    </message>
    <message>
        <source>Other computers on my network (needs an API key)</source>
        <translation>我网络中的其他电脑（需要 API 密钥）</translation>
    </message>
    <message>
        <source>Anyone on your network who has the key can use the model; your firewall may ask whether to let them connect.</source>
        <translation>网络中任何拥有密钥的人都能使用这个模型；防火墙可能会询问是否允许他们连接。</translation>
    </message>
    <message>
        <source>New key</source>
        <translation>新密钥</translation>
    </message>
    <message>
        <source>Replace the API key; the new one is used from the next start</source>
        <translation>更换 API 密钥；新密钥从下次启动起生效</translation>
    </message>
    <message>
        <source>none (e.g. http://localhost:3000)</source>
        <translation>无（例如 http://localhost:3000）</translation>
    </message>
    <message>
        <source>Only for a front end that runs in your browser and calls the server from the page itself. Any other web page you visit is refused, so that it cannot use your model. Separate several with spaces.</source>
        <translation>仅用于在浏览器中运行、由网页本身调用服务器的前端。您访问的其他任何网页都会被拒绝，因此无法使用您的模型。多个之间用空格分隔。</translation>
    </message>
    <message>
        <source>none (e.g. my-pc.local)</source>
        <translation>无（例如 my-pc.local）</translation>
    </message>
    <message>
        <source>Requests must be addressed to this computer by a name it knows (localhost, its addresses). Add a name you use for it, such as a proxy&apos;s. Separate several with spaces.</source>
        <translation>请求必须用这台电脑认得的名称发送（localhost、它的地址）。可在此添加您用来称呼它的名称，例如代理的名称。多个之间用空格分隔。</translation>
    </message>
    <message>
        <source>Fetch pictures that requests give by web address</source>
        <translation>下载请求中以网址给出的图片</translation>
    </message>
    <message>
        <source>Off: requests send their pictures as data URLs, or as files on this computer when it serves this computer only. On: the server downloads any http(s) address a request names, so a request can make it connect anywhere.</source>
        <translation>关闭时：请求以 data URL 发送图片；只为本机提供服务时也可用本机文件。开启时：服务器会下载请求给出的任何 http(s) 地址，因此一个请求可以让它连接到任何地方。</translation>
    </message>
    <message>
        <source>any free port</source>
        <translation>任意空闲端口</translation>
    </message>
    <message>
        <source>0 takes any free port</source>
        <translation>0 表示使用任意空闲端口</translation>
    </message>
    <message>
        <source>Start</source>
        <translation>启动</translation>
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
        <source>Model:</source>
        <translation>模型：</translation>
    </message>
    <message>
        <source>Who can connect:</source>
        <translation>谁可以连接：</translation>
    </message>
    <message>
        <source>Port:</source>
        <translation>端口：</translation>
    </message>
    <message>
        <source>Web pages that may use it:</source>
        <translation>允许使用它的网页：</translation>
    </message>
    <message>
        <source>Other names for this computer:</source>
        <translation>这台电脑的其他名称：</translation>
    </message>
    <message>
        <source>Connect</source>
        <translation>连接</translation>
    </message>
    <message>
        <source>Base URL:</source>
        <translation>基础 URL：</translation>
    </message>
    <message>
        <source>Model name:</source>
        <translation>模型名称：</translation>
    </message>
    <message>
        <source>API key:</source>
        <translation>API 密钥：</translation>
    </message>
    <message>
        <source>Requests appear here as they are answered.</source>
        <translation>请求被回答后会显示在这里。</translation>
    </message>
    <message>
        <source>Requests:</source>
        <translation>请求：</translation>
    </message>
    <message>
        <source>{value} is not a web page&apos;s origin: write it as scheme://host:port, e.g. http://localhost:3000 (no path).</source>
        <translation>{value} 不是网页的来源（origin）：请写成 scheme://host:port，例如 http://localhost:3000（不带路径）。</translation>
    </message>
    <message>
        <source>Starting the server…</source>
        <translation>正在启动服务…</translation>
    </message>
    <message>
        <source>Stopping…</source>
        <translation>正在停止…</translation>
    </message>
    <message>
        <source>A new API key was made: it is shown when the server starts.</source>
        <translation>已生成新的 API 密钥：服务启动时会显示它。</translation>
    </message>
    <message>
        <source>Shown this once; it is kept in your OS keyring.</source>
        <translation>仅显示这一次；它保存在系统密钥环中。</translation>
    </message>
    <message>
        <source>Shown this once; it is not kept (no OS keyring): a new key is made at each start.</source>
        <translation>仅显示这一次；它不会被保存（没有系统密钥环）：每次启动都会生成新的密钥。</translation>
    </message>
    <message>
        <source>It is used from the next start.</source>
        <translation>它从下次启动起生效。</translation>
    </message>
    <message>
        <source>Loading the model…</source>
        <translation>正在载入模型…</translation>
    </message>
    <message>
        <source>Serving at {url}</source>
        <translation>正在 {url} 提供服务</translation>
    </message>
    <message>
        <source>Requests need the API key shown when it was made; if it is lost, New key makes another for the next start.</source>
        <translation>请求需要生成时显示的那个 API 密钥；如果丢失了，用“新密钥”为下次启动再生成一个。</translation>
    </message>
    <message>
        <source>The examples read the key from the environment variable {env}: set it first.</source>
        <translation>示例从环境变量 {env} 读取密钥：请先设置它。</translation>
    </message>
    <message>
        <source>From other computers: {urls}</source>
        <translation>从其他电脑访问：{urls}</translation>
    </message>
    <message>
        <source>Other computers use this computer&apos;s address in place of 127.0.0.1.</source>
        <translation>其他电脑请用本机的地址代替 127.0.0.1。</translation>
    </message>
    <message>
        <source>{method} {path} {status} {seconds:.2f} s</source>
        <translation>{method} {path} {status} {seconds:.2f} 秒</translation>
    </message>
    <message>
        <source>Stopped: the page now shows another model. Start to serve it.</source>
        <translation>已停止：页面现在显示的是另一个模型。点“启动”来提供它。</translation>
    </message>
    <message>
        <source>Stopped — the GPU memory is free again.</source>
        <translation>已停止——GPU 显存已释放。</translation>
    </message>
    <message>
        <source>Stopped — the model&apos;s memory is free again.</source>
        <translation>已停止——模型占用的内存已释放。</translation>
    </message>
</context>
<context>
    <name>SetupWindow</name>
    <message>
        <source>Finetune Studio: setting up</source>
        <translation>Finetune Studio：正在安装</translation>
    </message>
    <message>
        <source>Installing PyTorch {requirement}. The PyTorch you have keeps working until the new one is complete.</source>
        <translation>正在安装 PyTorch {requirement}。新的装好之前，现有的 PyTorch 照常可用。</translation>
    </message>
    <message>
        <source>Setting up Finetune Studio. This happens once and takes a few minutes.</source>
        <translation>正在安装 Finetune Studio 的运行环境。只需安装一次，需要几分钟。</translation>
    </message>
    <message>
        <source>Repairing Finetune Studio&apos;s runtime.</source>
        <translation>正在修复 Finetune Studio 的运行环境。</translation>
    </message>
    <message>
        <source>Updating Finetune Studio to version {version}.</source>
        <translation>正在把 Finetune Studio 更新到 {version} 版。</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>详细信息</translation>
    </message>
    <message>
        <source>https://pypi.tuna.tsinghua.edu.cn/simple (optional)</source>
        <translation>https://pypi.tuna.tsinghua.edu.cn/simple（可选）</translation>
    </message>
    <message>
        <source>https://download.pytorch.org/whl/cu126 or a mirror of it (optional)</source>
        <translation>https://download.pytorch.org/whl/cu126 或其镜像（可选）</translation>
    </message>
    <message>
        <source>https://registry.npmmirror.com/-/binary/python-build-standalone (optional)</source>
        <translation>https://registry.npmmirror.com/-/binary/python-build-standalone（可选）</translation>
    </message>
    <message>
        <source>http://proxy.example.com:8080 (optional)</source>
        <translation>http://proxy.example.com:8080（可选）</translation>
    </message>
    <message>
        <source>Package mirror:</source>
        <translation>软件包镜像站：</translation>
    </message>
    <message>
        <source>PyTorch mirror:</source>
        <translation>PyTorch 镜像站：</translation>
    </message>
    <message>
        <source>Python mirror:</source>
        <translation>Python 镜像站：</translation>
    </message>
    <message>
        <source>Proxy:</source>
        <translation>代理：</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Try again</source>
        <translation>重试</translation>
    </message>
    <message>
        <source>Copy log</source>
        <translation>复制日志</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Change…</source>
        <translation>更改…</translation>
    </message>
    <message>
        <source>Another drive, if this one is small: the runtime, runs and downloaded models go there</source>
        <translation>如果这个磁盘空间小，可以换一个：运行环境、训练记录和下载的模型都会放在那里</translation>
    </message>
    <message>
        <source>Data folder:</source>
        <translation>数据文件夹：</translation>
    </message>
    <message>
        <source>Install</source>
        <translation>安装</translation>
    </message>
    <message>
        <source>It needs about 3 GB of space (about 10 GB with an NVIDIA GPU) in the data folder below.</source>
        <translation>需要在下面的数据文件夹中占用约 3 GB 空间（有 NVIDIA GPU 时约 10 GB）。</translation>
    </message>
    <message>
        <source>Put the data folder in</source>
        <translation>把数据文件夹放在</translation>
    </message>
    <message>
        <source>The data folder could not be moved: {error}</source>
        <translation>无法移动数据文件夹：{error}</translation>
    </message>
    <message>
        <source>Setting up Python…</source>
        <translation>正在准备 Python……</translation>
    </message>
    <message>
        <source>Installing PyTorch (the largest part)…</source>
        <translation>正在安装 PyTorch（最大的一部分）……</translation>
    </message>
    <message>
        <source>Installing torchvision / torchaudio for this PyTorch…</source>
        <translation>正在安装与此 PyTorch 配套的 torchvision / torchaudio…</translation>
    </message>
    <message>
        <source>Putting the new PyTorch in place (once every Finetune Studio window has closed)…</source>
        <translation>正在换上新的 PyTorch（等所有 Finetune Studio 窗口关闭后）…</translation>
    </message>
    <message>
        <source>Installing Finetune Studio and its libraries…</source>
        <translation>正在安装 Finetune Studio 及其依赖库……</translation>
    </message>
    <message>
        <source>Installing the sample model…</source>
        <translation>正在安装示例模型……</translation>
    </message>
    <message>
        <source>Checking PyTorch…</source>
        <translation>正在检查 PyTorch……</translation>
    </message>
    <message>
        <source>Checking the installation…</source>
        <translation>正在检查安装……</translation>
    </message>
    <message>
        <source>Tidying the download cache…</source>
        <translation>正在清理下载缓存…</translation>
    </message>
    <message>
        <source>Ready. Starting Finetune Studio…</source>
        <translation>准备就绪，正在启动 Finetune Studio……</translation>
    </message>
    <message>
        <source>PyTorch was not replaced</source>
        <translation>PyTorch 未被替换</translation>
    </message>
    <message>
        <source>The PyTorch you had is unchanged: Finetune Studio starts with it when you close this.</source>
        <translation>原有的 PyTorch 没有改动：关闭此窗口后，Finetune Studio 用它启动。</translation>
    </message>
    <message>
        <source>Setup did not finish</source>
        <translation>安装没有完成</translation>
    </message>
    <message>
        <source>Nothing half-made will be used: the next start repairs it, or try again now.</source>
        <translation>未装完的内容不会被使用：下次启动时会自动修复，你也可以现在重试。</translation>
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
        <translation>停止并按我的 GPU 调整</translation>
    </message>
    <message>
        <source>Turn the fallback off…</source>
        <translation>关闭内存回退…</translation>
    </message>
    <message>
        <source>Windows is moving this run&apos;s GPU memory into shared system memory: the card is full, and the steps are now {slowdown:.0f} times slower than at the start. Use less memory, or turn the fallback off so that the run stops with a clear out-of-memory error instead.</source>
        <translation>Windows 正在把这次训练的显存挪到共享系统内存中：显卡已满，现在每一步比开始时慢 {slowdown:.0f} 倍。请减少显存用量，或者关闭内存回退，让训练在显存不足时明确报错停止。</translation>
    </message>
    <message>
        <source>Windows is moving this run&apos;s GPU memory into shared system memory: PyTorch holds more than the card&apos;s {total:.1f} GB, so every step waits for system RAM. Use less memory, or turn the fallback off so that the run stops with a clear out-of-memory error instead.</source>
        <translation>Windows 正在把这次训练的显存挪到共享系统内存中：PyTorch 占用的显存超过了显卡的 {total:.1f} GB，每一步都要等待系统内存。请减少显存用量，或者关闭内存回退，让训练在显存不足时明确报错停止。</translation>
    </message>
    <message>
        <source>Turn the fallback off</source>
        <translation>关闭内存回退</translation>
    </message>
    <message>
        <source>1. Open the NVIDIA Control Panel (right-click the desktop).
2. 3D Settings › Manage 3D settings › Program Settings › Add, and choose:
{programs}
3. Set &quot;CUDA - Sysmem Fallback Policy&quot; to &quot;Prefer No Sysmem Fallback&quot; and Apply.

A run that needs more memory than the card has then stops with an out-of-memory error, which the app explains and offers to fix, instead of slowing down.</source>
        <translation>1. 打开 NVIDIA 控制面板（在桌面上单击右键）。
2. 3D 设置 › 管理 3D 设置 › 程序设置 › 添加，选择：
{programs}
3. 将“CUDA - 系统内存回退策略”（CUDA - Sysmem Fallback Policy）设为“首选无系统内存回退”（Prefer No Sysmem Fallback），然后点击应用。

之后，需要的显存超过显卡容量的训练会以显存不足的错误停止（应用会解释原因并提供修复办法），而不是变慢。</translation>
    </message>
    <message>
        <source>Open the NVIDIA Control Panel</source>
        <translation>打开 NVIDIA 控制面板</translation>
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
        <translation>词元/秒</translation>
    </message>
</context>
<context>
    <name>TokenStatsWidget</name>
    <message>
        <source>Token lengths</source>
        <translation>词元长度</translation>
    </message>
    <message>
        <source>Token lengths appear once the model and data are loaded.</source>
        <translation>载入模型和数据后，这里显示各条数据的词元长度。</translation>
    </message>
    <message>
        <source>Loading the tokenizer…</source>
        <translation>正在载入分词器…</translation>
    </message>
    <message>
        <source>{name}: min {min}, median {median}, 95% {p95}, max {max} tokens; {over} of {count} longer than the limit ({limit}) and cut</source>
        <translation>{name}：最短 {min}，中位数 {median}，95% 为 {p95}，最长 {max} 个词元；{count} 条中有 {over} 条超过上限（{limit}）并被截断</translation>
    </message>
    <message>
        <source>Padding at batch size {batch}: a few tokens a row, as batches are padding-free ({shuffled:.0%} of the tokens if they were padded).</source>
        <translation>批大小为 {batch} 时的填充：批次无填充，每行只有几个填充词元（若按填充方式组批，将占 {shuffled:.0%} 的词元）。</translation>
    </message>
    <message>
        <source>Padding at batch size {batch}: {shuffled:.0%} of the tokens (too few rows for batches grouped by length to differ).</source>
        <translation>批大小为 {batch} 时的填充：占 {shuffled:.0%} 的词元（行数太少，按长度分组也不会更少）。</translation>
    </message>
    <message>
        <source>Padding at batch size {batch}: {grouped:.0%} of the tokens, as batches are grouped by length ({shuffled:.0%} in shuffled batches).</source>
        <translation>批大小为 {batch} 时的填充：占 {grouped:.0%} 的词元，因为批次按长度分组（随机组批时为 {shuffled:.0%}）。</translation>
    </message>
    <message>
        <source>Padding at batch size {batch}: {shuffled:.0%} of the tokens in shuffled batches ({grouped:.0%} grouped by length: Memory &amp; speed).</source>
        <translation>批大小为 {batch} 时的填充：随机组批时占 {shuffled:.0%} 的词元（按长度分组时为 {grouped:.0%}：见“内存与速度”）。</translation>
    </message>
    <message>
        <source>Token lengths unavailable: {error}</source>
        <translation>无法得到词元长度：{error}</translation>
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
        <translation>准备就绪。点“开始训练”即可训练。</translation>
    </message>
    <message>
        <source>If the GPU runs out of memory, the run goes on by itself with less memory (a smaller batch with the same effective batch first); every change is shown here.</source>
        <translation>如果显存不足，训练会自动改用更少显存继续（首先是更小的批大小，等效批大小不变）；每项更改都会显示在这里。</translation>
    </message>
    <message>
        <source>Advice: {advice}</source>
        <translation>建议：{advice}</translation>
    </message>
    <message>
        <source>step %v of %m</source>
        <translation>第 %v 步，共 %m 步</translation>
    </message>
    <message>
        <source>Resuming {run}.</source>
        <translation>正在继续 {run}。</translation>
    </message>
    <message>
        <source>Ending the training process; the run keeps its last checkpoint…</source>
        <translation>正在结束训练进程；训练任务保留最后一个检查点…</translation>
    </message>
    <message>
        <source>Stop now</source>
        <translation>立即停止</translation>
    </message>
    <message>
        <source>End the training process at once; the run resumes from its last checkpoint</source>
        <translation>立即结束训练进程；训练任务可以从最后一个检查点继续训练</translation>
    </message>
    <message>
        <source>Stopping after this step and saving a checkpoint… Stop now ends it at once.</source>
        <translation>这一步结束后停止并保存检查点……“立即停止”会马上结束。</translation>
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
        <source>Kept awake</source>
        <translation>保持唤醒</translation>
    </message>
    <message>
        <source>The computer stays awake while this run trains (the display may still turn off). Settings › Keep the computer awake while training.</source>
        <translation>训练期间电脑不会进入睡眠（显示器仍可能关闭）。设置 › 训练时保持电脑唤醒。</translation>
    </message>
    <message>
        <source>Sleep would stop this run</source>
        <translation>睡眠会中断本次训练</translation>
    </message>
    <message>
        <source>This computer could not be kept awake: if it goes to sleep, the run stops there. For a long run, set its power settings not to sleep.</source>
        <translation>无法阻止这台电脑进入睡眠：如果它睡眠了，训练会就此中断。长时间训练时，请在电源设置中关闭睡眠。</translation>
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
        <source>Training on {count} processes ({device}); progress from the first</source>
        <translation>在 {count} 个进程上训练（{device}）；进度来自第一个进程</translation>
    </message>
    <message>
        <source>Run folder: {folder}. {train} training and {eval} evaluation examples, {steps} steps.</source>
        <translation>训练任务文件夹：{folder}。{train} 个训练样本，{eval} 个评估样本，共 {steps} 步。</translation>
    </message>
    <message>
        <source>Elapsed {elapsed}   ·   remaining about {eta}   ·   {speed} samples/s   ·   epoch {epoch:.2f}</source>
        <translation>已用时 {elapsed}   ·   约剩 {eta}   ·   {speed} 样本/秒   ·   {epoch:.2f} 轮</translation>
    </message>
    <message>
        <source>{tokens} tokens/s ({padding:.0%} of the compute on padding, {padded:.0%} if padded)</source>
        <translation>{tokens} 词元/秒（{padding:.0%} 的算力花在填充上，若用填充方式则为 {padded:.0%}）</translation>
    </message>
    <message>
        <source>{tokens} tokens/s ({padding:.0%} of the compute on padding)</source>
        <translation>{tokens} 词元/秒（{padding:.0%} 的算力花在填充上）</translation>
    </message>
    <message>
        <source>step {step}: {metrics}</source>
        <translation>第 {step} 步：{metrics}</translation>
    </message>
    <message>
        <source>reward accuracy {accuracy:.2f}, margin {margin:.3g}</source>
        <translation>奖励准确率 {accuracy:.2f}，差值 {margin:.3g}</translation>
    </message>
    <message>
        <source>validation reward accuracy {accuracy:.2f}, margin {margin:.3g}</source>
        <translation>验证集奖励准确率 {accuracy:.2f}，差值 {margin:.3g}</translation>
    </message>
    <message>
        <source>Out of memory: going on with less memory…</source>
        <translation>显存不足：正在改用更少显存继续…</translation>
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
        <translation>已停止。检查点已保留：点“继续训练”即可接着训练。</translation>
    </message>
    <message>
        <source>Stopped before training began.</source>
        <translation>在训练开始前已停止。</translation>
    </message>
    <message>
        <source>Training did not finish.</source>
        <translation>训练没有完成。</translation>
    </message>
</context>
<context>
    <name>TrainingPlotsWidget</name>
    <message>
        <source>Loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>学习率</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>内存</translation>
    </message>
    <message>
        <source>Throughput</source>
        <translation>吞吐量</translation>
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
        <translation>验证集</translation>
    </message>
    <message>
        <source>learning rate</source>
        <translation>学习率</translation>
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
        <source>samples/s</source>
        <translation>样本/秒</translation>
    </message>
    <message>
        <source>tokens/s</source>
        <translation>词元/秒</translation>
    </message>
    <message>
        <source>Reward accuracy</source>
        <translation>奖励准确率</translation>
    </message>
    <message>
        <source>Rewards</source>
        <translation>奖励</translation>
    </message>
    <message>
        <source>reward</source>
        <translation>奖励</translation>
    </message>
    <message>
        <source>log-prob.</source>
        <translation>对数概率</translation>
    </message>
    <message>
        <source>margin</source>
        <translation>差值</translation>
    </message>
    <message>
        <source>chosen</source>
        <translation>选中</translation>
    </message>
    <message>
        <source>rejected</source>
        <translation>被拒</translation>
    </message>
    <message>
        <source>eval margin</source>
        <translation>评估差值</translation>
    </message>
    <message>
        <source>log-prob. chosen</source>
        <translation>选中对数概率</translation>
    </message>
    <message>
        <source>log-prob. rejected</source>
        <translation>被拒对数概率</translation>
    </message>
    <message>
        <source>Reward</source>
        <translation>奖励</translation>
    </message>
    <message>
        <source>Answers</source>
        <translation>回答</translation>
    </message>
    <message>
        <source>tokens</source>
        <translation>词元数</translation>
    </message>
    <message>
        <source>mean reward</source>
        <translation>平均奖励</translation>
    </message>
    <message>
        <source>spread</source>
        <translation>离散度</translation>
    </message>
    <message>
        <source>mean length</source>
        <translation>平均长度</translation>
    </message>
    <message>
        <source>in shared system memory</source>
        <translation>位于共享系统内存</translation>
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
        <translation>还没有模型：完成一次训练，或打开一个模型文件夹。</translation>
    </message>
    <message>
        <source>Open model folder…</source>
        <translation>打开模型文件夹…</translation>
    </message>
    <message>
        <source>The longest reply, in tokens</source>
        <translation>回复的最大长度（词元数）</translation>
    </message>
    <message>
        <source>0 always gives the most likely reply; higher is more varied</source>
        <translation>0 总是给出最可能的回复；越大越多样</translation>
    </message>
    <message>
        <source>Compare with the base model</source>
        <translation>与基础模型对比</translation>
    </message>
    <message>
        <source>Use the chat template</source>
        <translation>使用对话模板</translation>
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
        <source>Fine-tuned</source>
        <translation>微调后</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>详细信息</translation>
    </message>
    <message>
        <source>Max new tokens:</source>
        <translation>最大新词元数：</translation>
    </message>
    <message>
        <source>System prompt</source>
        <translation>系统提示词</translation>
    </message>
    <message>
        <source>Show or hide the system prompt</source>
        <translation>显示或隐藏系统提示词</translation>
    </message>
    <message>
        <source>What the model is told before the conversation, e.g. “You are a helpful assistant.”</source>
        <translation>对话开始前告诉模型的话，例如“你是一个乐于助人的助手。”</translation>
    </message>
    <message>
        <source>Sent first, as the system message, with every request</source>
        <translation>作为系统消息，在每个请求中最先发送</translation>
    </message>
    <message>
        <source>Ctrl+Enter in the text box does the same</source>
        <translation>在文本框中按 Ctrl+Enter 效果相同</translation>
    </message>
    <message>
        <source>End the answer after the current token; what it said stays</source>
        <translation>在当前词元之后结束回答；已说的内容会保留</translation>
    </message>
    <message>
        <source>Sample only from the likeliest words that together make up this share (1 = all)</source>
        <translation>只从合计占这个比例的最可能的词中采样（1 = 全部）</translation>
    </message>
    <message>
        <source>Send the whole conversation through the chat template, as the model was trained; off: each message is answered on its own</source>
        <translation>按模型训练时的方式，把整个对话套用对话模板发送；关闭时：每条消息单独回答</translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation>重新生成</translation>
    </message>
    <message>
        <source>Drop the last answer and ask again</source>
        <translation>丢弃最后一个回答并重新提问</translation>
    </message>
    <message>
        <source>Clear</source>
        <translation>清空</translation>
    </message>
    <message>
        <source>Start a new conversation (the system prompt stays)</source>
        <translation>开始新的对话（系统提示词保留）</translation>
    </message>
    <message>
        <source>Temperature:</source>
        <translation>温度：</translation>
    </message>
    <message>
        <source>Top-p:</source>
        <translation>Top-p：</translation>
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
        <source>image classification</source>
        <translation>图像分类</translation>
    </message>
    <message>
        <source>pictures and text</source>
        <translation>图片与文本</translation>
    </message>
    <message>
        <source>Model: {folder}, {kind} (LoRA adapters on {base})</source>
        <translation>模型：{folder}，{kind}（基于 {base} 的 LoRA 适配器）</translation>
    </message>
    <message>
        <source>Model: {folder}, {kind}</source>
        <translation>模型：{folder}，{kind}</translation>
    </message>
    <message>
        <source>Answer with {model}, the model the run started from, beside the fine-tuned one</source>
        <translation>同时用训练起点的模型 {model} 回答，与微调后的模型并排显示</translation>
    </message>
    <message>
        <source>Base model ({model})</source>
        <translation>基础模型（{model}）</translation>
    </message>
    <message>
        <source>Drop, paste or choose a picture; the model loads on first use.</source>
        <translation>拖入、粘贴或选择一张图片；模型在首次使用时加载。</translation>
    </message>
    <message>
        <source>Give a picture, ask about it and press Send; the model loads on first use.</source>
        <translation>给出一张图片，就它提问并按“发送”；模型在首次使用时加载。</translation>
    </message>
    <message>
        <source>Type a text and press Try it; the model loads on first use.</source>
        <translation>输入一段文本，然后点“试一试”；模型在第一次使用时载入。</translation>
    </message>
    <message>
        <source>The conversation is kept: this model answers from the next message on; each answer shows the model that wrote it.</source>
        <translation>对话已保留：从下一条消息起由这个模型回答；每条回答都标明了写出它的模型。</translation>
    </message>
    <message>
        <source>A question about the picture (Ctrl+Enter sends)</source>
        <translation>关于这张图片的问题（Ctrl+Enter 发送）</translation>
    </message>
    <message>
        <source>Open a model folder</source>
        <translation>打开模型文件夹</translation>
    </message>
    <message>
        <source>Drop, paste or choose a picture first.</source>
        <translation>请先拖入、粘贴或选择一张图片。</translation>
    </message>
    <message>
        <source>Ask something about the picture, then press Send.</source>
        <translation>就这张图片提个问题，然后按“发送”。</translation>
    </message>
    <message>
        <source>pasted picture</source>
        <translation>粘贴的图片</translation>
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
        <source>Loading the base model…</source>
        <translation>正在加载基础模型…</translation>
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
        <source>Base model: {label} ({probability:.1%})</source>
        <translation>基础模型：{label}（{probability:.1%}）</translation>
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
        <source>Type a message and press Send; the model loads on first use.</source>
        <translation>输入一条消息并按“发送”；模型会在第一次使用时载入。</translation>
    </message>
    <message>
        <source>Another kind of model: the conversation was cleared (your message is kept).</source>
        <translation>这是另一类模型：对话已清空（你输入的消息保留）。</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>发送</translation>
    </message>
    <message>
        <source>A message; the whole conversation is sent (Ctrl+Enter sends)</source>
        <translation>一条消息；会发送整个对话（Ctrl+Enter 发送）</translation>
    </message>
    <message>
        <source>A text to classify, e.g. a review (Ctrl+Enter sends)</source>
        <translation>要分类的文本，例如一条评论（Ctrl+Enter 发送）</translation>
    </message>
    <message>
        <source>An instruction or a question (Ctrl+Enter sends)</source>
        <translation>一条指令或一个问题（Ctrl+Enter 发送）</translation>
    </message>
    <message>
        <source>A text to transform, e.g. a sentence to translate (Ctrl+Enter sends)</source>
        <translation>要转换的文本，例如要翻译的句子（Ctrl+Enter 发送）</translation>
    </message>
    <message>
        <source>A new conversation.</source>
        <translation>新的对话。</translation>
    </message>
    <message>
        <source>Working…</source>
        <translation>正在处理…</translation>
    </message>
    <message>
        <source>(none)</source>
        <translation>（无）</translation>
    </message>
    <message>
        <source>The answer is on the clipboard.</source>
        <translation>回答已复制到剪贴板。</translation>
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
        <source>{name} is not on this computer yet.</source>
        <translation>本机上还没有 {name}。</translation>
    </message>
    <message>
        <source>Download it first: Browse &gt; Download on the Model &amp; data step, or finetune-studio-cli models download {ref}</source>
        <translation>请先下载：在“模型与数据”一步点“浏览模型 &gt; 下载”，或运行 finetune-studio-cli models download {ref}</translation>
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
        <translation>请登录后在 {page} 同意许可协议，然后在“设置 &gt; 模型下载源”中填写访问令牌（{source}）。</translation>
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
        <translation>请检查 ID（所有者/名称，与模型页面上一致），或用“浏览模型”查找；有些模型在魔搭上的 ID 与 Hugging Face 上不同。</translation>
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
        <source>Not enough disk space for the checkpoint at step {step}: it needs about {needed} in {folder}, and {free} are free.</source>
        <translation>磁盘空间不足，无法保存第 {step} 步的检查点：{folder} 中约需 {needed}，只剩 {free} 可用。</translation>
    </message>
    <message>
        <source>Free some space (older runs in the runs folder are often large), then resume the run: it continues from its last checkpoint.</source>
        <translation>请先腾出一些空间（训练任务文件夹中的旧任务往往很大），然后继续训练：它会从最后一个检查点接着训练。</translation>
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
        <translation>这个模型不认识你文本中的大部分字符：有 {share} 的词元变成了未知词元 {unknown}，因此它无法区分这些文本。请选择针对你文本语言的模型，例如中文可用 bert-base-chinese 或 hfl/chinese-roberta-wwm-ext，也可以用 xlm-roberta-base 这样的多语言模型。</translation>
    </message>
    <message>
        <source>Labels written differently but with the same value were merged into one class each: {labels}.</source>
        <translation>写法不同但值相同的标签已各自合并为一个类别：{labels}。</translation>
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
        <source>is {length}, but {model} reads at most {positions} tokens at once (its position table), so training would stop at its first step. Set it to {positions} or less.</source>
        <translation>为 {length}，但 {model} 一次最多只能读取 {positions} 个词元（由其位置表决定），训练会在第一步就停止。请设为 {positions} 或更小。</translation>
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
        <translation>{model} 的分词器只认识 {size} 个词元：它的词表文件缺失或为空，所有文本都会被读成同样的几个词元。</translation>
    </message>
    <message>
        <source>Pick a model folder with its complete tokenizer files (tokenizer.json or vocab.txt).</source>
        <translation>请选择带有完整分词器文件（tokenizer.json 或 vocab.txt）的模型文件夹。</translation>
    </message>
    <message>
        <source>{source}: the label column &quot;{column}&quot; has {classes} different values in {rows} rows; a classifier learns from many examples of each class.</source>
        <translation>{source}：标签列“{column}”在 {rows} 行中有 {classes} 个不同的值；分类器需要每个类别都有许多样本才能学会。</translation>
    </message>
    <message>
        <source>Check that columns.label names the column with the classes (now &quot;{column}&quot;).</source>
        <translation>请确认 columns.label 指向存放类别的列（当前为“{column}”）。</translation>
    </message>
    <message>
        <source>Train all {steps} steps</source>
        <translation>训练全部 {steps} 步</translation>
    </message>
    <message>
        <source>is {accumulation}, but one pass over the {rows} training rows is only {batches} batches of {batch}; lower it to at most {batches} (or lower the batch size).</source>
        <translation>为 {accumulation}，但 {rows} 行训练数据跑一遍只有 {batches} 个批次（每批 {batch} 条）；请把它降到 {batches} 以下（或减小批大小）。</translation>
    </message>
    <message>
        <source>Add training examples of those labels, or leave their rows out.</source>
        <translation>请为这些标签添加训练样本，或去掉这些行。</translation>
    </message>
    <message>
        <source>Add training examples of those labels, or use a random hold-out (validation.fraction).</source>
        <translation>请为这些标签添加训练样本，或改用随机划分验证集（validation.fraction）。</translation>
    </message>
    <message>
        <source>makes {steps} optimizer steps ({epochs} epochs of {rows} rows): at 10 steps a second that is {days} days. Lower the epochs; or, if you mean it, set training.max_steps to {count} (on the command line: --set training.max_steps={count}).</source>
        <translation>会产生 {steps} 个优化步（{epochs} 轮，每轮 {rows} 行）：按每秒 10 步算需要 {days} 天。请减少轮数；如果确实需要，请把 training.max_steps 设为 {count}（命令行：--set training.max_steps={count}）。</translation>
    </message>
    <message>
        <source>is {warmup} steps, but the whole run is {steps} steps: the learning rate would still be rising when it ends. Set it below {steps} steps, or as a fraction of the run (0.1 warms up over the first tenth).</source>
        <translation>为 {warmup} 步，但整个训练只有 {steps} 步：训练结束时学习率还在上升。请设为少于 {steps} 步，或设为训练的比例（0.1 表示在前十分之一的步数内预热）。</translation>
    </message>
    <message>
        <source>The evaluation rows have labels that never occur in training: {labels} and {more} more.</source>
        <translation>评估数据中有训练数据里从未出现的标签：{labels} 等，另有 {more} 个。</translation>
    </message>
    <message>
        <source>The evaluation rows have labels that never occur in training: {labels}.</source>
        <translation>评估数据中有训练数据里从未出现的标签：{labels}。</translation>
    </message>
    <message>
        <source>{source}: {count} rows have an empty text in column &quot;{column}&quot; ({rows}).</source>
        <translation>{source}：列“{column}”中有 {count} 行文本为空（{rows}）。</translation>
    </message>
    <message>
        <source>{source}: {count} rows have no chat conversation with an assistant reply in column &quot;{column}&quot; ({rows}).</source>
        <translation>{source}：列“{column}”中有 {count} 行没有包含助手回复的对话（{rows}）。</translation>
    </message>
    <message>
        <source>{source}: {count} rows have no label in column &quot;{column}&quot; ({rows}).</source>
        <translation>{source}：列“{column}”中有 {count} 行没有标签（{rows}）。</translation>
    </message>
    <message>
        <source>{source}: 1 row has an empty text in column &quot;{column}&quot; ({rows}).</source>
        <translation>{source}：列“{column}”中有 1 行文本为空（{rows}）。</translation>
    </message>
    <message>
        <source>lists of messages with &quot;role&quot; and &quot;content&quot;</source>
        <translation>由带“role”和“content”的消息组成的列表</translation>
    </message>
    <message>
        <source>a label</source>
        <translation>一个标签</translation>
    </message>
    <message>
        <source>text</source>
        <translation>文本</translation>
    </message>
    <message>
        <source>by name</source>
        <translation>按名称</translation>
    </message>
    <message>
        <source>by content</source>
        <translation>按内容</translation>
    </message>
    <message>
        <source>from the config</source>
        <translation>来自配置</translation>
    </message>
    <message>
        <source>{role} &lt;- {column}  ({how})</source>
        <translation>{role} &lt;- {column}  （{how}）</translation>
    </message>
    <message>
        <source>{source}: no column was found for {roles} (columns: {columns}).</source>
        <translation>{source}：没有找到对应 {roles} 的列（现有列：{columns}）。</translation>
    </message>
    <message>
        <source>Map the columns yourself, e.g. columns.{role} = &quot;&lt;column name&gt;&quot; in the config.</source>
        <translation>请自己指定列映射，例如在配置中写 columns.{role} = &quot;&lt;列名&gt;&quot;。</translation>
    </message>
    <message>
        <source>Left out {bad} of {total} rows of {source} ({rows}).</source>
        <translation>已跳过 {source} 的 {total} 行中的 {bad} 行（{rows}）。</translation>
    </message>
    <message>
        <source>{source}: 1 row has no chat conversation with an assistant reply in column &quot;{column}&quot; ({rows}).</source>
        <translation>{source}：列“{column}”中有 1 行没有包含助手回复的对话（{rows}）。</translation>
    </message>
    <message>
        <source>{source}: 1 row has no label in column &quot;{column}&quot; ({rows}).</source>
        <translation>{source}：列“{column}”中有 1 行没有标签（{rows}）。</translation>
    </message>
    <message>
        <source>{source}: the column &quot;{column}&quot; (mapped as {role}) is not in the data.</source>
        <translation>{source}：数据中没有列“{column}”（映射为 {role}）。</translation>
    </message>
    <message>
        <source>Its columns are: {columns}. Pick one of them for columns.{role}.</source>
        <translation>现有的列：{columns}。请从中选一列作为 columns.{role}。</translation>
    </message>
    <message>
        <source>{source}: the column &quot;{column}&quot; ({role}) is empty in every row.</source>
        <translation>{source}：列“{column}”（{role}）在每一行都是空的。</translation>
    </message>
    <message>
        <source>{source}: every row has the label &quot;{label}&quot;; a classifier needs at least two classes.</source>
        <translation>{source}：每一行的标签都是“{label}”；分类器至少需要两个类别。</translation>
    </message>
    <message>
        <source>Add examples of the other classes, or check that columns.label is the right column.</source>
        <translation>请添加其他类别的样本，或检查 columns.label 是否指向了正确的列。</translation>
    </message>
    <message>
        <source>Map {role} to the column that holds the labels.</source>
        <translation>请把 {role} 映射到存放标签的列。</translation>
    </message>
    <message>
        <source>Map {role} to the column that holds the texts.</source>
        <translation>请把 {role} 映射到存放文本的列。</translation>
    </message>
    <message>
        <source>{file} is UTF-8 except at {count} lines ({lines}), which hold text in another encoding (pasted from another file, perhaps).</source>
        <translation>{file} 是 UTF-8 编码，但有 {count} 行（{lines}）是其他编码的文本（可能是从别的文件粘贴过来的）。</translation>
    </message>
    <message>
        <source>Fix those lines (type them again, or copy them from a UTF-8 copy of their source), then retry.</source>
        <translation>请修正这些行（重新输入，或从其来源的 UTF-8 副本中复制），然后重试。</translation>
    </message>
    <message>
        <source>{file} holds no data: none of its sheets ({sheets}) has a row of column names with rows below it.</source>
        <translation>{file} 中没有数据：它的工作表（{sheets}）都没有“列名行加数据行”。</translation>
    </message>
    <message>
        <source>Put the data on one sheet, with the column names in its first row.</source>
        <translation>请把数据放在一个工作表中，第一行为列名。</translation>
    </message>
    <message>
        <source>Save it from Excel as .xlsx (the first sheet with data is used, with a header row).</source>
        <translation>请在 Excel 中另存为 .xlsx（使用第一个有数据的工作表，需有表头行）。</translation>
    </message>
    <message>
        <source>{file} (sheet {sheet})</source>
        <translation>{file}（工作表 {sheet}）</translation>
    </message>
    <message>
        <source>Batches are padded: {model} would let each example of a padding-free batch see the one before it.</source>
        <translation>批次改为填充：{model} 在无填充批次中会让每个样本看到它前面的样本。</translation>
    </message>
    <message>
        <source>{gpus} is too old for current PyTorch: no build has code for its architecture (compute capability {capability}), so training runs on the CPU.</source>
        <translation>{gpus} 对当前的 PyTorch 来说太旧了：没有任何版本包含支持它的架构（计算能力 {capability}）的代码，因此训练会在 CPU 上运行。</translation>
    </message>
    <message>
        <source>The CPU build is right for this machine. PyTorch&apos;s GPU builds start at Maxwell (GeForce GTX 900, compute capability 5.0); a newer GPU trains much faster.</source>
        <translation>这台电脑用 CPU 版本是正确的。PyTorch 的 GPU 版本从 Maxwell 架构（GeForce GTX 900，计算能力 5.0）起支持；换一块较新的 GPU 训练会快得多。</translation>
    </message>
    <message>
        <source>{source} rejected the access token (it is wrong, expired or revoked).</source>
        <translation>{source} 拒绝了访问令牌（令牌错误、已过期或已被撤销）。</translation>
    </message>
    <message>
        <source>Enter a new token in Settings &gt; Model sources, or remove it there to download public models without one; on the command line the token comes from {variable}.</source>
        <translation>请在“设置 &gt; 模型下载源”中输入新的令牌，或删除它以不带令牌下载公开模型；在命令行中，令牌来自环境变量 {variable}。</translation>
    </message>
    <message>
        <source>{file} of {name} in the download cache does not match the hub&apos;s checksum.</source>
        <translation>下载缓存中 {name} 的 {file} 与模型库的校验和不一致。</translation>
    </message>
    <message>
        <source>It was not written by this download, so it was left where it is: delete {path} and download again.</source>
        <translation>它不是这次下载写入的，因此保留原样：请删除 {path} 后重新下载。</translation>
    </message>
    <message>
        <source>Try again later, or switch the source (a mirror, or ModelScope); a proxy or an antivirus that changes downloads causes this too.</source>
        <translation>请稍后重试，或换一个下载源（镜像站或魔搭）；会修改下载内容的代理或杀毒软件也会导致这种情况。</translation>
    </message>
    <message>
        <source>{name} on {source} has no file {file}.</source>
        <translation>{source} 上的 {name} 没有文件 {file}。</translation>
    </message>
    <message>
        <source>The repository exists but lacks that file: check the revision, or pick another model.</source>
        <translation>该仓库存在，但缺少这个文件：请检查版本，或选择其他模型。</translation>
    </message>
    <message>
        <source>Choose an empty or new folder, or replace it (on the command line: add --force).</source>
        <translation>请选择一个空文件夹或新文件夹，或者替换它（命令行中加上 --force）。</translation>
    </message>
    <message>
        <source>GGUF export does not know the {architecture} architecture yet.</source>
        <translation>GGUF 导出暂不支持 {architecture} 架构。</translation>
    </message>
    <message>
        <source>GGUF export does not carry this model&apos;s rope scaling ({kind}) yet.</source>
        <translation>GGUF 导出暂不支持这个模型的 RoPE 缩放（{kind}）。</translation>
    </message>
    <message>
        <source>Export it as a folder: llama.cpp&apos;s own converter can turn that into GGUF.</source>
        <translation>请导出为文件夹：llama.cpp 自带的转换器可以把它转成 GGUF。</translation>
    </message>
    <message>
        <source>GGUF export needs the model&apos;s tokenizer.json (a fast tokenizer).</source>
        <translation>GGUF 导出需要模型的 tokenizer.json（快速分词器）。</translation>
    </message>
    <message>
        <source>Unknown GGUF quantization {quant}; use f16 or q8_0.</source>
        <translation>未知的 GGUF 量化方式 {quant}；请使用 f16 或 q8_0。</translation>
    </message>
    <message>
        <source>Export it as a folder: transformers, and the app&apos;s Try it, load that.</source>
        <translation>请导出为文件夹：transformers 和应用里的“试一试”都能载入它。</translation>
    </message>
    <message>
        <source>Finish or resume the run first.</source>
        <translation>请先完成或继续这次训练。</translation>
    </message>
    <message>
        <source>{file} already exists.</source>
        <translation>{file} 已存在。</translation>
    </message>
    <message>
        <source>Choose another folder, or replace it (the app asks; on the command line: --force).</source>
        <translation>请选择另一个文件夹，或替换它（应用会先询问；命令行用 --force）。</translation>
    </message>
    <message>
        <source>The GGUF file needs about {needed}; {free} are free at {folder}.</source>
        <translation>GGUF 文件约需 {needed}；{folder} 处只剩 {free}。</translation>
    </message>
    <message>
        <source>Free some space or choose a folder on another drive.</source>
        <translation>请清出一些空间，或选择另一个磁盘上的文件夹。</translation>
    </message>
    <message>
        <source>Export it as a folder.</source>
        <translation>请导出为文件夹。</translation>
    </message>
    <message>
        <source>{file} is in the way of the export.</source>
        <translation>{file} 挡住了这次导出。</translation>
    </message>
    <message>
        <source>Delete it, or export to another folder.</source>
        <translation>请删除它，或导出到另一个文件夹。</translation>
    </message>
    <message>
        <source>SentencePiece-only tokenizers are not written as GGUF yet: export this one as a folder.</source>
        <translation>只有 SentencePiece 文件的分词器还不能写成 GGUF：请把这个模型导出为文件夹。</translation>
    </message>
    <message>
        <source>{model} cannot be used for reasoning with rewards: it is not a decoder model that writes text ({kind}), and GRPO teaches a chat model from the answers it writes.</source>
        <translation>{model} 不能用于奖励推理训练：它不是能生成文本的解码器模型（{kind}），而 GRPO 是让对话模型从自己写出的回答中学习。</translation>
    </message>
    <message>
        <source>Fix that text, or save the whole file again as UTF-8 CSV, then try again.</source>
        <translation>请修正那些文字，或把整个文件另存为 UTF-8 CSV，然后重试。</translation>
    </message>
    <message>
        <source>{file} is {encoding} except at {count} lines ({lines}), which hold text in another encoding (pasted from another file, perhaps).</source>
        <translation>{file} 除 {count} 行（{lines}）外都是 {encoding} 编码；这些行是另一种编码的文字（可能是从别的文件粘贴来的）。</translation>
    </message>
    <message>
        <source>{file} is {encoding} except at line {line}, which holds text in another encoding (pasted from another file, perhaps).</source>
        <translation>{file} 除第 {line} 行外都是 {encoding} 编码；该行是另一种编码的文字（可能是从别的文件粘贴来的）。</translation>
    </message>
    <message>
        <source>sample at step {step} ({scores}): {answer}</source>
        <translation>第 {step} 步的样例（{scores}）：{answer}</translation>
    </message>
    <message>
        <source>Fix the reward file, or turn the custom reward off.</source>
        <translation>请修正奖励文件，或关闭自定义奖励。</translation>
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
        <translation>长度</translation>
    </message>
    <message>
        <source>language</source>
        <translation>语言</translation>
    </message>
    <message>
        <source>your reward</source>
        <translation>你的奖励</translation>
    </message>
    <message>
        <source>{reward} {value}</source>
        <translation>{reward} {value}</translation>
    </message>
    <message>
        <source>The reward file {file} does not exist.</source>
        <translation>奖励文件 {file} 不存在。</translation>
    </message>
    <message>
        <source>{file} has no function reward(prompts, completions, **columns).</source>
        <translation>{file} 中没有函数 reward(prompts, completions, **columns)。</translation>
    </message>
    <message>
        <source>Define it: it returns one number (or None) per completion.</source>
        <translation>请定义它：它为每个回答返回一个数（或 None）。</translation>
    </message>
    <message>
        <source>{file}: reward() returned {got} instead of a list of {count} numbers.</source>
        <translation>{file}：reward() 返回了 {got}，而不是包含 {count} 个数的列表。</translation>
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
        <translation>第 {rows} 行</translation>
    </message>
    <message>
        <source>{source}: {count} pictures are missing ({rows}).</source>
        <translation>{source}：{count} 张图片不存在（{rows}）。</translation>
    </message>
    <message>
        <source>{source}: {count} files are not pictures that can be read ({rows}).</source>
        <translation>{source}：{count} 个文件不是可读取的图片（{rows}）。</translation>
    </message>
    <message>
        <source>{source}: {count} pictures are cut short (truncated) ({rows}).</source>
        <translation>{source}：{count} 张图片不完整（被截断）（{rows}）。</translation>
    </message>
    <message>
        <source>{source}: {count} pictures have CMYK or 16-bit pixels, which models read wrongly ({rows}).</source>
        <translation>{source}：{count} 张图片是 CMYK 或 16 位像素，模型会读错（{rows}）。</translation>
    </message>
    <message>
        <source>{source}: {count} pictures are very large (over 40 megapixels) ({rows}).</source>
        <translation>{source}：{count} 张图片非常大（超过 4000 万像素）（{rows}）。</translation>
    </message>
    <message>
        <source>Pick an image model such as ViT (google/vit-base-patch16-224-in21k), ConvNeXt (facebook/convnext-tiny-224) or ResNet (microsoft/resnet-50).</source>
        <translation>请选择图像模型，例如 ViT（google/vit-base-patch16-224-in21k）、ConvNeXt（facebook/convnext-tiny-224）或 ResNet（microsoft/resnet-50）。</translation>
    </message>
    <message>
        <source>Fix the file; the rewards preview checks it again.</source>
        <translation>请修正该文件；奖励预览会重新检查它。</translation>
    </message>
    <message>
        <source>{file}: reward() returned {value!r}, which is not a number.</source>
        <translation>{file}：reward() 返回了 {value!r}，它不是数。</translation>
    </message>
    <message>
        <source>has no group to take the answer from: write (?P&lt;answer&gt;...) around the answer.</source>
        <translation>没有可取出答案的分组：请用 (?P&lt;answer&gt;...) 括住答案。</translation>
    </message>
    <message>
        <source>is not a valid regular expression: {reason}.</source>
        <translation>不是有效的正则表达式：{reason}。</translation>
    </message>
    <message>
        <source>With max length {length}, {dropped} of the first {measured} rows ({share}) will be left out: their prompt alone fills it, so no response is left to learn. A max length of {keep} keeps 95% of them.</source>
        <translation>最大长度为 {length} 时，前 {measured} 行中有 {dropped} 行（{share}）会被略去：仅提示就已占满长度，没有可学习的回答。最大长度 {keep} 可保留其中 95% 的行。</translation>
    </message>
    <message>
        <source>With max length {length}, {dropped} of {total} rows ({share}) will be left out: their prompt alone fills it, so no response is left to learn. A max length of {keep} keeps 95% of the rows.</source>
        <translation>最大长度为 {length} 时，{total} 行中有 {dropped} 行（{share}）会被略去：仅提示就已占满长度，没有可学习的回答。最大长度 {keep} 可保留 95% 的行。</translation>
    </message>
    <message>
        <source>Left out {count} rows of {source} without a readable prompt ({rows}).</source>
        <translation>已略去 {source} 中 {count} 行没有可读提示词的数据（{rows}）。</translation>
    </message>
    <message>
        <source>No row of {source} holds a prompt.</source>
        <translation>{source} 中没有一行含有提示词。</translation>
    </message>
    <message>
        <source>Map columns.prompt to the column of questions (text, or lists of chat messages).</source>
        <translation>请把 columns.prompt 映射到问题所在的列（文本，或对话消息列表）。</translation>
    </message>
    <message>
        <source>Pick an image model such as ViT, ConvNeXt or ResNet.</source>
        <translation>请选择图像模型，例如 ViT、ConvNeXt 或 ResNet。</translation>
    </message>
    <message>
        <source>{source} could not be reached: {problem}.</source>
        <translation>无法连接{source}：{problem}。</translation>
    </message>
    <message>
        <source>Check the network, then publish again; nothing was sent.</source>
        <translation>请检查网络后再次发布；尚未上传任何内容。</translation>
    </message>
    <message>
        <source>ModelScope could not be reached: {problem}.</source>
        <translation>无法连接魔搭（ModelScope）：{problem}。</translation>
    </message>
    <message>
        <source>Check the network, then publish again; the client resumes what it had sent.</source>
        <translation>请检查网络后再次发布；客户端会从已上传处继续。</translation>
    </message>
    <message>
        <source>The run&apos;s adapter is damaged: {problem}.</source>
        <translation>这个训练任务的适配器已损坏：{problem}。</translation>
    </message>
    <message>
        <source>Train the run again (a lower learning rate), or resume it from an earlier checkpoint.</source>
        <translation>请重新训练（降低学习率），或从较早的检查点继续。</translation>
    </message>
    <message>
        <source>In fp16 the weight {tensor} of this model overflows (fp16 holds values up to 65504).</source>
        <translation>在 fp16 下，这个模型的权重 {tensor} 会溢出（fp16 最大只能表示 65504）。</translation>
    </message>
    <message>
        <source>Export in bf16 or fp32 instead.</source>
        <translation>请改用 bf16 或 fp32 导出。</translation>
    </message>
    <message>
        <source>The run&apos;s model in {folder} is damaged: {problem}.</source>
        <translation>{folder} 中这个训练任务的模型已损坏：{problem}。</translation>
    </message>
    <message>
        <source>GGUF export cannot place the tensor {key}.</source>
        <translation>GGUF 导出无法安放张量 {key}。</translation>
    </message>
    <message>
        <source>{count} of {rows} rows could not be answered (no conversation with a question, or a picture missing, not a picture, cut short or too large); they have no answer: {where}.</source>
        <translation>{rows} 行中有 {count} 行无法作答（没有含提问的对话，或图片缺失、不是图片、不完整或过大）；这些行没有回答：{where}。</translation>
    </message>
    <message>
        <source>{count} of {rows} pictures could not be read (missing, not a picture, cut short or too large); their rows have no prediction: {where}.</source>
        <translation>{rows} 张图片中有 {count} 张无法读取（缺失、不是图片、不完整或过大）；这些行没有预测：{where}。</translation>
    </message>
    <message>
        <source>{file} has no rows to predict.</source>
        <translation>{file} 中没有可预测的行。</translation>
    </message>
    <message>
        <source>Choose the file with the rows to predict: a header line, then one row per text.</source>
        <translation>请选择包含待预测行的文件：第一行是表头，之后每行一条文本。</translation>
    </message>
    <message>
        <source>Check that the pictures are there (a file&apos;s paths are read from its own folder) and open in a picture viewer.</source>
        <translation>请检查图片是否存在（文件中的路径相对于该文件所在的文件夹），并能在看图软件中打开。</translation>
    </message>
    <message>
        <source>{file} is inside the run folder {run}, which holds the run&apos;s own record.</source>
        <translation>{file} 位于训练记录文件夹 {run} 内，该文件夹保存的是这次训练自己的记录。</translation>
    </message>
    <message>
        <source>Write the predictions outside it, e.g. {suggestion}.</source>
        <translation>请把预测结果写到该文件夹之外，例如 {suggestion}。</translation>
    </message>
    <message>
        <source>Predictions cannot be written to {folder}: {error}</source>
        <translation>无法把预测结果写入 {folder}：{error}</translation>
    </message>
    <message>
        <source>Choose an output file in a folder you can write to.</source>
        <translation>请把输出文件放在你有写入权限的文件夹中。</translation>
    </message>
    <message>
        <source>{files} files in one commit, {sent} sent; {kept} of them ({kept_size}) were on the hub already and were not sent again.</source>
        <translation>一次提交 {files} 个文件，上传了 {sent}；其中 {kept} 个（{kept_size}）已在模型中心上，未重新上传。</translation>
    </message>
    <message>
        <source>{files} files in one commit, {sent} sent.</source>
        <translation>一次提交 {files} 个文件，上传了 {sent}。</translation>
    </message>
    <message>
        <source>{before} classes -&gt; {now}: {what}</source>
        <translation>{before} 个类别 -&gt; {now} 个：{what}</translation>
    </message>
    <message>
        <source>{first}; {then}</source>
        <translation>{first}；{then}</translation>
    </message>
    <message>
        <source>The data&apos;s classes changed since this run started: {change}. Its checkpoints were trained for the old classes and cannot go on with these.</source>
        <translation>自本次运行开始以来，数据的类别变了：{change}。它的检查点是按原来的类别训练的，无法在这些类别上继续。</translation>
    </message>
    <message>
        <source>Put the data the run started with back to resume it (nothing was changed in the run), or start a new run on this data.</source>
        <translation>把运行开始时的数据放回去即可继续训练（运行本身没有任何改动），或用这份数据开始新的运行。</translation>
    </message>
    <message>
        <source>The data changed since this run started: {changes}.</source>
        <translation>自本次运行开始以来，数据变了：{changes}。</translation>
    </message>
    <message>
        <source>Resume on the new data (in the app: the button below; on the command line: add --new-data), or start a new run on it. The run&apos;s checkpoints are kept either way.</source>
        <translation>在新数据上继续训练（应用中：点下面的按钮；命令行：加上 --new-data），或用它开始新的运行。两种方式都会保留本次运行的检查点。</translation>
    </message>
    <message>
        <source>{labels} was added</source>
        <translation>新增了 {labels}</translation>
    </message>
    <message>
        <source>{labels} was removed</source>
        <translation>删除了 {labels}</translation>
    </message>
    <message>
        <source>the dataset is {now}, was {before}</source>
        <translation>数据集现在是 {now}，原来是 {before}</translation>
    </message>
    <message>
        <source>training rows</source>
        <translation>训练行数</translation>
    </message>
    <message>
        <source>evaluation rows</source>
        <translation>评估行数</translation>
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
        <translation>{file} 被修改过</translation>
    </message>
    <message>
        <source>Hub id (&quot;bert-base-uncased&quot;), a local folder, or &quot;bundled:all-minilm-l6-v2&quot;.</source>
        <translation>Hub 上的 ID（如“bert-base-uncased”）、本地文件夹，或“bundled:all-minilm-l6-v2”。</translation>
    </message>
    <message>
        <source>Hub branch, tag or commit; empty for the default branch.</source>
        <translation>Hub 上的分支、标签或提交；留空表示默认分支。</translation>
    </message>
    <message>
        <source>Run Python code shipped with the model. Only for models you trust.</source>
        <translation>运行模型自带的 Python 代码。只对你信任的模型开启。</translation>
    </message>
    <message>
        <source>A dataset on the hub, e.g. &quot;imdb&quot; (instead of files).</source>
        <translation>Hub 上的数据集，例如“imdb”（代替本地文件）。</translation>
    </message>
    <message>
        <source>The hub dataset&apos;s configuration (subset), if it has several.</source>
        <translation>Hub 数据集的配置（子集），如果有多个的话。</translation>
    </message>
    <message>
        <source>The hub dataset&apos;s split to train on.</source>
        <translation>用于训练的 Hub 数据集划分（split）。</translation>
    </message>
    <message>
        <source>Classification: labels that differ only in case (&quot;Positive&quot;, &quot;positive&quot;) are one class, named as most rows write it.</source>
        <translation>分类：只有大小写不同的标签（&quot;Positive&quot;、&quot;positive&quot;）视为同一类，名称取多数行的写法。</translation>
    </message>
    <message>
        <source>Text to classify, or plain text for causal-LM training.</source>
        <translation>要分类的文本，或用于因果语言模型训练的纯文本。</translation>
    </message>
    <message>
        <source>Optional second text for sentence-pair classification.</source>
        <translation>句对分类的第二段文本（可选）。</translation>
    </message>
    <message>
        <source>Class label (text or integer).</source>
        <translation>类别标签（文本或整数）。</translation>
    </message>
    <message>
        <source>Alpaca-style instruction.</source>
        <translation>Alpaca 格式的指令。</translation>
    </message>
    <message>
        <source>Alpaca-style optional input.</source>
        <translation>Alpaca 格式的可选输入。</translation>
    </message>
    <message>
        <source>Alpaca-style answer.</source>
        <translation>Alpaca 格式的回答。</translation>
    </message>
    <message>
        <source>Chat conversations: lists of messages with &quot;role&quot; and &quot;content&quot;.</source>
        <translation>对话：由带“role”和“content”的消息组成的列表。</translation>
    </message>
    <message>
        <source>Completion for the prompt.</source>
        <translation>提示词的续写。</translation>
    </message>
    <message>
        <source>Sequence-to-sequence input.</source>
        <translation>序列到序列的输入。</translation>
    </message>
    <message>
        <source>Sequence-to-sequence output.</source>
        <translation>序列到序列的输出。</translation>
    </message>
    <message>
        <source>Reasoning (GRPO): the reference answer the rewards check the model&apos;s final answer against.</source>
        <translation>推理（GRPO）：奖励用来核对模型最终答案的参考答案。</translation>
    </message>
    <message>
        <source>An existing split of the hub dataset, e.g. &quot;validation&quot;.</source>
        <translation>Hub 数据集中已有的划分，例如“validation”。</translation>
    </message>
    <message>
        <source>Separate local validation file(s).</source>
        <translation>单独的本地验证集文件。</translation>
    </message>
    <message>
        <source>Otherwise hold out this fraction of the training data (0 = no evaluation).</source>
        <translation>否则从训练数据中留出这个比例作为验证集（0 = 不评估）。</translation>
    </message>
    <message>
        <source>Seed for the random hold-out.</source>
        <translation>随机划分验证集的种子。</translation>
    </message>
    <message>
        <source>Passes over the training data.</source>
        <translation>训练数据要过几遍。</translation>
    </message>
    <message>
        <source>Stop after this many optimizer steps; 0 = use epochs.</source>
        <translation>优化器走完这么多步后停止；0 = 按轮数。</translation>
    </message>
    <message>
        <source>Peak learning rate.</source>
        <translation>学习率峰值。</translation>
    </message>
    <message>
        <source>Warm-up: a fraction of all steps (&lt; 1) or a number of steps.</source>
        <translation>预热：占总步数的比例（&lt; 1）或步数。</translation>
    </message>
    <message>
        <source>AdamW weight decay.</source>
        <translation>AdamW 权重衰减。</translation>
    </message>
    <message>
        <source>Examples per device and step.</source>
        <translation>每个设备每步的样本数。</translation>
    </message>
    <message>
        <source>Steps whose gradients add up before one update.</source>
        <translation>累积多少步的梯度再更新一次参数。</translation>
    </message>
    <message>
        <source>Longest sequence in tokens; longer examples are truncated.</source>
        <translation>最长序列（词元数）；更长的样本会被截断。</translation>
    </message>
    <message>
        <source>Evaluate every N steps; 0 = once per epoch.</source>
        <translation>每 N 步评估一次；0 = 每轮一次。</translation>
    </message>
    <message>
        <source>Save a checkpoint every N steps; 0 = once per epoch.</source>
        <translation>每 N 步保存一个检查点；0 = 每轮一次。</translation>
    </message>
    <message>
        <source>Log loss and learning rate every N steps.</source>
        <translation>每 N 步记录一次损失和学习率。</translation>
    </message>
    <message>
        <source>Random seed for model initialisation and data order.</source>
        <translation>模型初始化和数据顺序的随机种子。</translation>
    </message>
    <message>
        <source>auto (bf16 where the GPU has it, fp16 on older GPUs, fp32 on CPU), fp32, fp16 or bf16.</source>
        <translation>auto（GPU 支持时用 bf16，较旧的 GPU 用 fp16，CPU 上用 fp32）、fp32、fp16 或 bf16。</translation>
    </message>
    <message>
        <source>Recompute activations in the backward pass: much less memory, about 20% slower.</source>
        <translation>在反向传播时重新计算激活值：省下大量内存，约慢 20%。</translation>
    </message>
    <message>
        <source>Pin batches in page-locked RAM for faster copies to the GPU.</source>
        <translation>把批次固定在锁页内存中，更快地复制到 GPU。</translation>
    </message>
    <message>
        <source>Processes preparing batches; 0 = in the training process (safest, and right on Windows).</source>
        <translation>准备批次的进程数；0 = 在训练进程内准备（最稳妥，Windows 上应选它）。</translation>
    </message>
    <message>
        <source>Return cached GPU memory every N steps (lower peak, slower); 0 = never.</source>
        <translation>每 N 步释放一次缓存的显存（峰值更低，但更慢）；0 = 从不。</translation>
    </message>
    <message>
        <source>Compile the model with torch.compile (faster steps after a slow start).</source>
        <translation>用 torch.compile 编译模型（开头较慢，之后每步更快）。</translation>
    </message>
    <message>
        <source>Attention kernel: auto, sdpa, eager or flash_attention_2.</source>
        <translation>注意力实现：auto、sdpa、eager 或 flash_attention_2。</translation>
    </message>
    <message>
        <source>Fused GPU kernels from liger-kernel (cross-entropy fused with the output layer, RMSNorm, RoPE, SwiGLU) for Llama, Qwen, Mistral, Gemma and Phi-3 models: faster steps, and the output layer&apos;s logits are never held whole (far less memory for large vocabularies). NVIDIA GPU with Triton.</source>
        <translation>liger-kernel 提供的融合 GPU 内核（与输出层融合的交叉熵、RMSNorm、RoPE、SwiGLU），适用于 Llama、Qwen、Mistral、Gemma 和 Phi-3 模型：每步更快，输出层的 logits 从不完整保存（词表大时省下大量显存）。需要带 Triton 的 NVIDIA GPU。</translation>
    </message>
    <message>
        <source>Causal LM: put a batch&apos;s examples one after another in one row instead of padding each to the longest, so no compute goes to padding; position ids restart at each example, so none sees another. The run pads instead where the model cannot keep them apart.</source>
        <translation>因果语言模型：把一个批次的样本首尾相接放在一行里，而不是都填充到最长的那条，算力不浪费在填充上；位置编号在每个样本处重新开始，样本之间互不可见。模型做不到这一点时，训练改用填充。</translation>
    </message>
    <message>
        <source>Train LoRA adapters instead of every weight.</source>
        <translation>只训练 LoRA 适配器，而不是全部权重。</translation>
    </message>
    <message>
        <source>Adapter rank r: more is more capacity and memory.</source>
        <translation>适配器的秩 r：越大容量越大，也越占内存。</translation>
    </message>
    <message>
        <source>Adapter scaling alpha (often 2 x rank).</source>
        <translation>适配器缩放系数 alpha（通常为秩的 2 倍）。</translation>
    </message>
    <message>
        <source>Dropout on the adapters.</source>
        <translation>适配器上的 dropout。</translation>
    </message>
    <message>
        <source>Linear layers to adapt; empty = all linear layers.</source>
        <translation>要加适配器的线性层；留空 = 所有线性层。</translation>
    </message>
    <message>
        <source>QLoRA: keep the frozen base model in 4 bits (bitsandbytes, CUDA GPU): about 1/8 of its memory.</source>
        <translation>QLoRA：以 4 位精度保存冻结的基础模型（需要 bitsandbytes 和 CUDA GPU）：只占约 1/8 的显存。</translation>
    </message>
    <message>
        <source>The system prompt each prompt is asked with; it should state the format the rewards check.</source>
        <translation>每个提示词附带的系统提示词；应说明奖励所检查的格式。</translation>
    </message>
    <message>
        <source>How the final answer is compared with the answer column: text (normalised), number (within the tolerance), label (one of labels) or none.</source>
        <translation>最终答案与答案列的比较方式：text（规范化后的文本）、number（容差内的数值）、label（labels 之一）或 none。</translation>
    </message>
    <message>
        <source>Weight of the answer reward (0 = off).</source>
        <translation>答案奖励的权重（0 = 关闭）。</translation>
    </message>
    <message>
        <source>Numbers: the relative difference still counted equal.</source>
        <translation>数值：仍视为相等的相对差异。</translation>
    </message>
    <message>
        <source>Labels: the answers allowed (empty = any).</source>
        <translation>标签：允许的答案（留空 = 任意）。</translation>
    </message>
    <message>
        <source>Where the final answer is: &quot;answer-line&quot; (a last line &quot;Answer: X&quot;), &quot;think&quot; (&lt;think&gt;...&lt;/think&gt; then the answer), &quot;boxed&quot; (a LaTeX box around the answer), or a regular expression with a group (?P&lt;answer&gt;...).</source>
        <translation>最终答案的位置：&quot;answer-line&quot;（最后一行“Answer: X”）、&quot;think&quot;（&lt;think&gt;...&lt;/think&gt; 之后的答案）、&quot;boxed&quot;（LaTeX 方框中的答案），或含分组 (?P&lt;answer&gt;...) 的正则表达式。</translation>
    </message>
    <message>
        <source>Weight of the format reward (0 = off).</source>
        <translation>格式奖励的权重（0 = 关闭）。</translation>
    </message>
    <message>
        <source>Length reward: the fewest characters (0 = no lower bound).</source>
        <translation>长度奖励：最少字符数（0 = 无下限）。</translation>
    </message>
    <message>
        <source>Length reward: the most characters (0 = no upper bound).</source>
        <translation>长度奖励：最多字符数（0 = 无上限）。</translation>
    </message>
    <message>
        <source>Weight of the length reward (0 = off).</source>
        <translation>长度奖励的权重（0 = 关闭）。</translation>
    </message>
    <message>
        <source>Weight of the reward for answering in the prompt&apos;s language (0 = off).</source>
        <translation>用提示词的语言回答的奖励权重（0 = 关闭）。</translation>
    </message>
    <message>
        <source>A Python file with reward(prompts, completions, **columns): your own reward, run in the training process (it is your code: use only files you trust).</source>
        <translation>含有 reward(prompts, completions, **columns) 的 Python 文件：你自己的奖励，在训练进程中运行（这是你的代码：只使用你信任的文件）。</translation>
    </message>
    <message>
        <source>Weight of your reward.</source>
        <translation>你的奖励的权重。</translation>
    </message>
    <message>
        <source>Answers written per prompt and compared with each other (batch size x gradient accumulation must be a multiple of it).</source>
        <translation>每个提示词生成并相互比较的回答数（批大小 × 梯度累积必须是它的倍数）。</translation>
    </message>
    <message>
        <source>The longest answer, in tokens.</source>
        <translation>最长回答的词元数。</translation>
    </message>
    <message>
        <source>Sampling temperature of the answers (higher: more varied).</source>
        <translation>回答的采样温度（越高越多样）。</translation>
    </message>
    <message>
        <source>KL penalty: how strongly the model is held near where it started (0 = not held, no reference model in memory; 0.04 is the paper&apos;s).</source>
        <translation>KL 惩罚：把模型约束在起点附近的强度（0 = 不约束，内存中不保留参考模型；论文用 0.04）。</translation>
    </message>
    <message>
        <source>Folder for run folders; empty = the app&apos;s data folder.</source>
        <translation>存放训练任务文件夹的位置；留空 = 应用的数据文件夹。</translation>
    </message>
    <message>
        <source>Name for this run&apos;s folder; empty = task and model.</source>
        <translation>本次训练任务文件夹的名称；留空 = 任务类型加模型名。</translation>
    </message>
    <message>
        <source>Also log to &quot;tensorboard&quot; and/or &quot;mlflow&quot; (when that package is installed).</source>
        <translation>同时记录到“tensorboard”和/或“mlflow”（需已安装对应的包）。</translation>
    </message>
    <message>
        <source>must be a list of texts, not {value}.</source>
        <translation>必须是文本列表，而不是 {value}。</translation>
    </message>
    <message>
        <source>Learning-rate schedule: {choices}.</source>
        <translation>学习率调度：{choices}。</translation>
    </message>
    <message>
        <source>Optimizer: {choices}.</source>
        <translation>优化器：{choices}。</translation>
    </message>
    <message>
        <source>torch.compile backend: {choices}.</source>
        <translation>torch.compile 后端：{choices}。</translation>
    </message>
    <message>
        <source>must be true or false, not {value}.</source>
        <translation>必须是 true 或 false，而不是 {value}。</translation>
    </message>
    <message>
        <source>must be a whole number, not {value}.</source>
        <translation>必须是整数，而不是 {value}。</translation>
    </message>
    <message>
        <source>must be a number, not {value}.</source>
        <translation>必须是数字，而不是 {value}。</translation>
    </message>
    <message>
        <source>must be text, not {value}.</source>
        <translation>必须是文本，而不是 {value}。</translation>
    </message>
    <message>
        <source>must be one of {choices}.</source>
        <translation>必须是以下之一：{choices}。</translation>
    </message>
    <message>
        <source>must be above 0 (or set training.max_steps).</source>
        <translation>必须大于 0（或者设置 training.max_steps）。</translation>
    </message>
    <message>
        <source>must be 0 (use epochs) or a positive number of steps.</source>
        <translation>必须是 0（按轮数）或正整数步数。</translation>
    </message>
    <message>
        <source>must be between 0 and 1; 2e-5 to 5e-4 is usual.</source>
        <translation>必须在 0 和 1 之间；常用 2e-5 到 5e-4。</translation>
    </message>
    <message>
        <source>must be 0 or more.</source>
        <translation>必须大于或等于 0。</translation>
    </message>
    <message>
        <source>must be between 8 and 1048576 tokens.</source>
        <translation>必须在 8 到 1048576 个词元之间。</translation>
    </message>
    <message>
        <source>must be 0 (never) or a number of steps.</source>
        <translation>必须是 0（从不）或步数。</translation>
    </message>
    <message>
        <source>must be 1 or more; 8 or 16 is usual.</source>
        <translation>必须大于或等于 1；常用 8 或 16。</translation>
    </message>
    <message>
        <source>must be 1 or more; often twice the rank.</source>
        <translation>必须大于或等于 1；通常是秩的两倍。</translation>
    </message>
    <message>
        <source>must be at least 0 and below 1.</source>
        <translation>必须大于或等于 0 且小于 1。</translation>
    </message>
    <message>
        <source>is empty; give a hub id such as &quot;bert-base-uncased&quot; or a local model folder.</source>
        <translation>为空；请填写 Hub ID（如“bert-base-uncased”）或本地模型文件夹。</translation>
    </message>
    <message>
        <source>set either data.files (local files) or data.hub_id (a hub dataset), not both.</source>
        <translation>data.files（本地文件）和 data.hub_id（Hub 数据集）只能设置其中一个。</translation>
    </message>
    <message>
        <source>&quot;{name}&quot; is not a hub dataset id like &quot;owner/name&quot;.</source>
        <translation>“{name}”不是“owner/name”这样的 Hub 数据集 ID。</translation>
    </message>
    <message>
        <source>must be at least 0 and below 1; 0.1 is usual.</source>
        <translation>必须大于或等于 0 且小于 1；常用 0.1。</translation>
    </message>
    <message>
        <source>only applies to hub datasets; use validation.files for local data.</source>
        <translation>只适用于 Hub 数据集；本地数据请用 validation.files。</translation>
    </message>
    <message>
        <source>this file is version {version}, this app reads {supported}; create a new config with `finetune-studio-cli init`.</source>
        <translation>这个文件的版本是 {version}，本应用读取的是 {supported}；请用 `finetune-studio-cli init` 新建一个配置。</translation>
    </message>
    <message>
        <source>must be a table ([section]).</source>
        <translation>必须是一个表（[section]）。</translation>
    </message>
    <message>
        <source>must be 1 or more.</source>
        <translation>必须大于或等于 1。</translation>
    </message>
    <message>
        <source>must be 0 (once per epoch) or a positive number of steps.</source>
        <translation>必须是 0（每轮一次）或正整数步数。</translation>
    </message>
    <message>
        <source>write overrides as key=value, e.g. training.epochs=2.</source>
        <translation>覆盖值请写成 key=value，例如 training.epochs=2。</translation>
    </message>
    <message>
        <source>must be a finite number, not {value}.</source>
        <translation>必须是有限的数字，而不是 {value}。</translation>
    </message>
    <message>
        <source>unknown bundled model; known: {choices}.</source>
        <translation>未知的内置模型；可用的有：{choices}。</translation>
    </message>
    <message>
        <source>{file}: unsupported type; use one of {types}.</source>
        <translation>{file}：不支持的文件类型；请使用以下之一：{types}。</translation>
    </message>
    <message>
        <source>unknown field; did you mean &quot;{near}&quot;?</source>
        <translation>未知字段；你是不是想写“{near}”？</translation>
    </message>
    <message>
        <source>unknown field.</source>
        <translation>未知字段。</translation>
    </message>
    <message>
        <source>file not found; check the path.</source>
        <translation>找不到文件；请检查路径。</translation>
    </message>
    <message>
        <source>cannot be read ({error}).</source>
        <translation>无法读取（{error}）。</translation>
    </message>
    <message>
        <source>is not valid TOML: {error}.</source>
        <translation>不是有效的 TOML：{error}。</translation>
    </message>
    <message>
        <source>is not a section.</source>
        <translation>不是一个配置段。</translation>
    </message>
    <message>
        <source>the folder {folder} has no config.json; pick the folder that holds the model.</source>
        <translation>文件夹 {folder} 中没有 config.json；请选择存放模型的那个文件夹。</translation>
    </message>
    <message>
        <source>the folder {folder} does not exist.</source>
        <translation>文件夹 {folder} 不存在。</translation>
    </message>
    <message>
        <source>{file} does not exist.</source>
        <translation>{file} 不存在。</translation>
    </message>
    <message>
        <source>&quot;{name}&quot; is neither a local folder nor a hub id like &quot;owner/model&quot; (or &quot;modelscope:owner/model&quot;).</source>
        <translation>“{name}”既不是本地文件夹，也不是“owner/model”（或“modelscope:owner/model”）这样的 Hub ID。</translation>
    </message>
    <message>
        <source>{file} row {number}</source>
        <translation>{file} 第 {number} 行</translation>
    </message>
    <message>
        <source>{file} is empty.</source>
        <translation>{file} 是空的。</translation>
    </message>
    <message>
        <source>Choose a file that holds your training examples.</source>
        <translation>请选择包含训练样本的文件。</translation>
    </message>
    <message>
        <source>{file} line {number}</source>
        <translation>{file} 第 {number} 行</translation>
    </message>
    <message>
        <source>{items} and {more} more</source>
        <translation>{items} 等，另有 {more} 处</translation>
    </message>
    <message>
        <source>{file} is not readable text in any common encoding (UTF-8, GBK, Big5, ...).</source>
        <translation>{file} 无法按任何常见编码（UTF-8、GBK、Big5……）读成文本。</translation>
    </message>
    <message>
        <source>Checking {rows} rows</source>
        <translation>正在检查 {rows} 行</translation>
    </message>
    <message>
        <source>Classification: evaluate the base model on the evaluation rows before training, so that every figure reads base -&gt; fine-tuned (skipped when it would take over a minute).</source>
        <translation>分类：训练前先用评估数据评估基础模型，让每个指标都显示为“基础 -&gt; 微调后”（预计超过一分钟时跳过）。</translation>
    </message>
    <message>
        <source>Examples per device and evaluation step; 0 = the batch size.</source>
        <translation>每个设备每个评估步的样本数；0 = 与批大小相同。</translation>
    </message>
    <message>
        <source>When the GPU runs out of memory: go back to the last checkpoint and go on with less memory (half the batch and twice the accumulation, so the same effective batch; then gradient checkpointing; then a smaller optimizer or LoRA). Every change is logged and saved in the run&apos;s config.</source>
        <translation>显存不足时：回到最近的检查点，改用更少显存继续（先将批大小减半、梯度累积加倍，等效批大小不变；然后开启梯度检查点；再换用更省显存的优化器或 LoRA）。每项更改都会记入日志，并保存在这次训练的配置中。</translation>
    </message>
    <message>
        <source>Train in a child process: Stop can end it at once, a crash cannot close the app, and every byte of GPU memory goes back to the system when the run ends.</source>
        <translation>在子进程中训练：“停止”可以立即结束它，崩溃不会让应用关闭，训练结束后所有显存都会还给系统。</translation>
    </message>
    <message>
        <source>Processes to train with, one per GPU; 2 or more run through accelerate launch.</source>
        <translation>训练用的进程数，每块 GPU 一个；2 个或以上通过 accelerate launch 运行。</translation>
    </message>
    <message>
        <source>The GPUs to use, e.g. &quot;0,1&quot;; empty = the first num_processes GPUs.</source>
        <translation>要使用的 GPU，例如 &quot;0,1&quot;；留空 = 前 num_processes 块 GPU。</translation>
    </message>
    <message>
        <source>With several GPUs: ddp (a whole copy of the model on each GPU), fsdp (the model split across the GPUs), deepspeed-zero2 or deepspeed-zero3 (need the deepspeed package).</source>
        <translation>多块 GPU 时：ddp（每块 GPU 上一份完整模型）、fsdp（模型拆分到各块 GPU）、deepspeed-zero2 或 deepspeed-zero3（需要 deepspeed 包）。</translation>
    </message>
    <message>
        <source>must be 0 (the batch size) or more.</source>
        <translation>必须为 0（与批大小相同）或更大。</translation>
    </message>
    <message>
        <source>must be GPU numbers separated by commas, e.g. &quot;0,1&quot;.</source>
        <translation>必须是用逗号分隔的 GPU 编号，例如 &quot;0,1&quot;。</translation>
    </message>
    <message>
        <source>names {count} GPUs for {processes} processes; name one GPU per process, or leave it empty.</source>
        <translation>为 {processes} 个进程指定了 {count} 块 GPU；请每个进程指定一块 GPU，或留空。</translation>
    </message>
    <message>
        <source>Open it in a spreadsheet or editor and save it again as UTF-8 CSV.</source>
        <translation>请用表格软件或编辑器打开它，另存为 UTF-8 编码的 CSV。</translation>
    </message>
    <message>
        <source>{file} is UTF-8 except at line {line}, which holds text in another encoding (pasted from another file, perhaps).</source>
        <translation>{file} 是 UTF-8 编码，但第 {line} 行是其他编码的文字（也许是从别的文件粘贴过来的）。</translation>
    </message>
    <message>
        <source>Fix that line (type it again, or copy it from a UTF-8 copy of its source), then try again.</source>
        <translation>请修正这一行（重新输入，或从它的 UTF-8 版本重新复制），然后再试。</translation>
    </message>
    <message>
        <source>The data file {path} does not exist.</source>
        <translation>数据文件 {path} 不存在。</translation>
    </message>
    <message>
        <source>Check the path, or pick the file again.</source>
        <translation>请检查路径，或重新选择文件。</translation>
    </message>
    <message>
        <source>Use CSV, TSV, JSON, JSONL, Parquet, TXT or Excel (.xlsx).</source>
        <translation>请使用 CSV、TSV、JSON、JSONL、Parquet、TXT 或 Excel（.xlsx）。</translation>
    </message>
    <message>
        <source>{file} has no data rows.</source>
        <translation>{file} 没有数据行。</translation>
    </message>
    <message>
        <source>Add examples below the header row.</source>
        <translation>请在表头下面添加样本。</translation>
    </message>
    <message>
        <source>{file} does not hold a list of records.</source>
        <translation>{file} 里不是一个记录列表。</translation>
    </message>
    <message>
        <source>The hub dataset {name} is not on this computer yet.</source>
        <translation>Hub 数据集 {name} 还没有下载到这台电脑上。</translation>
    </message>
    <message>
        <source>Download it first: Download on the Model &amp; data step, or finetune-studio-cli datasets download {name}</source>
        <translation>请先下载：在“模型与数据”步骤中点“下载”，或运行 finetune-studio-cli datasets download {name}</translation>
    </message>
    <message>
        <source>The split {split} of {name} has no rows.</source>
        <translation>{name} 的划分 {split} 中没有数据。</translation>
    </message>
    <message>
        <source>Choose another split.</source>
        <translation>请选择其他划分。</translation>
    </message>
    <message>
        <source>{items}, {item}</source>
        <translation>{items}、{item}</translation>
    </message>
    <message>
        <source>{file}: files of type {suffix} are not supported.</source>
        <translation>{file}：不支持 {suffix} 类型的文件。</translation>
    </message>
    <message>
        <source>{file}: files without a type (.csv, .jsonl...) are not supported.</source>
        <translation>{file}：不支持没有扩展名（.csv、.jsonl……）的文件。</translation>
    </message>
    <message>
        <source>{file} is not a well-formed {kind} file: {error}</source>
        <translation>{file} 不是格式正确的 {kind} 文件：{error}</translation>
    </message>
    <message>
        <source>Every row needs as many fields as the header; quote texts that contain the separator.</source>
        <translation>每一行的字段数都要和表头一致；包含分隔符的文本请加引号。</translation>
    </message>
    <message>
        <source>{file} line {line} is not a JSON object.</source>
        <translation>{file} 第 {line} 行不是 JSON 对象。</translation>
    </message>
    <message>
        <source>Each line must look like {example}.</source>
        <translation>每一行都应该像这样：{example}。</translation>
    </message>
    <message>
        <source>{file} is not valid JSON: {error} at line {line}, column {column}.</source>
        <translation>{file} 不是有效的 JSON：第 {line} 行第 {column} 列 {error}。</translation>
    </message>
    <message>
        <source>Fix the file there. For one example per line, name the file .jsonl.</source>
        <translation>请修正该处。如果每行一个样本，请把文件扩展名改为 .jsonl。</translation>
    </message>
    <message>
        <source>{file} is not a readable Parquet file ({error}).</source>
        <translation>{file} 不是可读取的 Parquet 文件（{error}）。</translation>
    </message>
    <message>
        <source>Export it again.</source>
        <translation>请重新导出。</translation>
    </message>
    <message>
        <source>{file} is not a readable Excel workbook ({error}).</source>
        <translation>{file} 不是可读取的 Excel 工作簿（{error}）。</translation>
    </message>
    <message>
        <source>The hub dataset {name} ({split}) could not be loaded: {error}</source>
        <translation>无法加载 Hub 数据集 {name}（{split}）：{error}</translation>
    </message>
    <message>
        <source>Check the configuration and split names (the dataset&apos;s page lists them).</source>
        <translation>请检查配置名和划分名（数据集页面上有列出）。</translation>
    </message>
    <message>
        <source>Reading {file}</source>
        <translation>正在读取 {file}</translation>
    </message>
    <message>
        <source>{file} line {line} is not valid JSON ({error} at column {column}).</source>
        <translation>{file} 第 {line} 行不是有效的 JSON（第 {column} 列 {error}）。</translation>
    </message>
    <message>
        <source>Each line must hold one JSON object; fix or remove that line.</source>
        <translation>每行必须是一个 JSON 对象；请修正或删除该行。</translation>
    </message>
    <message>
        <source>It needs about {needed}; {free} are free there.</source>
        <translation>约需 {needed}，那里只剩 {free} 可用。</translation>
    </message>
    <message>
        <source>It needs about {needed}.</source>
        <translation>约需 {needed}。</translation>
    </message>
    <message>
        <source>{free} are free there.</source>
        <translation>那里还剩 {free} 可用。</translation>
    </message>
    <message>
        <source>  - {field}: {problem}</source>
        <translation>  - {field}：{problem}</translation>
    </message>
    <message>
        <source>The GPU ran out of memory in the forward pass.</source>
        <translation>前向计算时显存不足。</translation>
    </message>
    <message>
        <source>Training stopped with an unexpected error: {error}</source>
        <translation>训练因意外错误而停止：{error}</translation>
    </message>
    <message>
        <source>Open the details for the full traceback. Resume from the last checkpoint, or report the problem with the details attached.</source>
        <translation>打开详细信息可查看完整的错误追踪。可以从最后一个检查点继续训练，或附上详细信息报告这个问题。</translation>
    </message>
    <message>
        <source>Fix the fields above and try again.</source>
        <translation>请修正上面的字段后再试。</translation>
    </message>
    <message>
        <source>Apply one of the changes below and retry; each keeps what the run learns comparable. Training resumes from the last checkpoint when there is one.</source>
        <translation>请应用下面任意一项修改后重试；每项修改都不会改变训练的学习效果。如果有检查点，训练会从最后一个检查点继续。</translation>
    </message>
    <message>
        <source>This PyTorch build has no GPU support, so GPU-only settings (fp16, bf16) cannot run.</source>
        <translation>这个 PyTorch 版本不支持 GPU，因此只能在 GPU 上用的设置（fp16、bf16）无法运行。</translation>
    </message>
    <message>
        <source>Open the Environment step and install the matching PyTorch, or train in fp32 on the CPU.</source>
        <translation>请打开“环境”步骤安装匹配的 PyTorch，或者在 CPU 上用 fp32 训练。</translation>
    </message>
    <message>
        <source>This GPU cannot train in bf16.</source>
        <translation>这块 GPU 不能用 bf16 训练。</translation>
    </message>
    <message>
        <source>Use fp16 or let the app choose.</source>
        <translation>请改用 fp16，或让应用自动选择。</translation>
    </message>
    <message>
        <source>bitsandbytes, needed by 8-bit optimizers, is missing or broken: {error}</source>
        <translation>8 位优化器所需的 bitsandbytes 缺失或已损坏：{error}</translation>
    </message>
    <message>
        <source>Use a standard optimizer, or reinstall bitsandbytes for this GPU.</source>
        <translation>请改用标准优化器，或为这块 GPU 重新安装 bitsandbytes。</translation>
    </message>
    <message>
        <source>A CUDA kernel rejected its input (device-side assert). Most often a label is out of range.</source>
        <translation>CUDA 内核拒绝了输入（device-side assert）。最常见的原因是标签超出范围。</translation>
    </message>
    <message>
        <source>Check the label column (classification) and that the model fits the tokenizer. For the exact spot, set the environment variable CUDA_LAUNCH_BLOCKING=1 and restart the app; the GPU needs a restart of the app after this error anyway.</source>
        <translation>请检查标签列（分类任务），以及模型和分词器是否匹配。要定位具体出错的位置，请设置环境变量 CUDA_LAUNCH_BLOCKING=1 后重启应用；出现这个错误后，无论如何都需要重启应用才能再使用 GPU。</translation>
    </message>
    <message>
        <source>The data loader&apos;s worker processes failed: {error}</source>
        <translation>数据加载的工作进程出错：{error}</translation>
    </message>
    <message>
        <source>Load batches in the training process (0 workers), which always works on Windows.</source>
        <translation>请在训练进程内加载批次（0 个工作进程），这在 Windows 上总是可行。</translation>
    </message>
    <message>
        <source>A CUDA error stopped training: {error}</source>
        <translation>CUDA 错误导致训练停止：{error}</translation>
    </message>
    <message>
        <source>Restart the app and resume from the last checkpoint. If it happens again, update the NVIDIA driver or reinstall PyTorch from the Environment step.</source>
        <translation>请重启应用，从最后一个检查点继续训练。如果再次出现，请更新 NVIDIA 驱动程序，或在“环境”步骤中重新安装 PyTorch。</translation>
    </message>
    <message>
        <source>The computer ran out of memory (RAM).</source>
        <translation>电脑内存不足。</translation>
    </message>
    <message>
        <source>Close other programs, lower the batch size or max length, then resume.</source>
        <translation>请关闭其他程序，减小批大小或最大长度，然后继续训练。</translation>
    </message>
    <message>
        <source>Free some space (old runs and checkpoints in the runs folder are often large) or choose a folder on another drive, then try again.</source>
        <translation>请腾出一些空间（训练任务文件夹中的旧任务和检查点往往很大），或选择其他磁盘上的文件夹，然后再试。</translation>
    </message>
    <message>
        <source>Choose a folder you can write to (for example in your home folder) and try again.</source>
        <translation>请选择一个你有写入权限的文件夹（例如你的用户目录下），然后再试。</translation>
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
        <translation>训练配置有 1 个问题：
{lines}</translation>
    </message>
    <message>
        <source>The run config has {count} problems:
{lines}</source>
        <translation>训练配置有 {count} 个问题：
{lines}</translation>
    </message>
    <message>
        <source>Halve the batch ({batch} -&gt; {half}) and raise accumulation to {accumulation} (same effective batch)</source>
        <translation>批大小减半（{batch} -&gt; {half}），梯度累积提高到 {accumulation}（等效批大小不变）</translation>
    </message>
    <message>
        <source>Turn on gradient checkpointing (far less activation memory, ~20% slower)</source>
        <translation>开启梯度检查点（激活值占用的内存大幅减少，约慢 20%）</translation>
    </message>
    <message>
        <source>Use the Adafactor optimizer (a fraction of AdamW&apos;s state memory)</source>
        <translation>改用 Adafactor 优化器（状态只占 AdamW 的一小部分内存）</translation>
    </message>
    <message>
        <source>Train LoRA adapters instead of every weight</source>
        <translation>只训练 LoRA 适配器，不训练全部权重</translation>
    </message>
    <message>
        <source>Shorten sequences ({length} -&gt; {half} tokens)</source>
        <translation>缩短序列（{length} -&gt; {half} 个词元）</translation>
    </message>
    <message>
        <source>Finetune Studio may not write in {folder}: the folder is read-only or belongs to another user.</source>
        <translation>Finetune Studio 无法写入 {folder}：该文件夹是只读的，或属于其他用户。</translation>
    </message>
    <message>
        <source>Finetune Studio may not write there: the folder is read-only or belongs to another user.</source>
        <translation>Finetune Studio 无法写入那里：该文件夹是只读的，或属于其他用户。</translation>
    </message>
    <message>
        <source>The folder {folder} cannot be used: {error}.</source>
        <translation>无法使用文件夹 {folder}：{error}。</translation>
    </message>
    <message>
        <source>Choose another folder and try again.</source>
        <translation>请选择其他文件夹后再试。</translation>
    </message>
    <message>
        <source>The GPU ran out of memory while loading the model.</source>
        <translation>加载模型时显存不足。</translation>
    </message>
    <message>
        <source>The GPU ran out of memory during evaluation.</source>
        <translation>评估时显存不足。</translation>
    </message>
    <message>
        <source>The GPU ran out of memory in the backward pass.</source>
        <translation>反向传播时显存不足。</translation>
    </message>
    <message>
        <source>The GPU ran out of memory in the optimizer step.</source>
        <translation>优化器更新参数时显存不足。</translation>
    </message>
    <message>
        <source>Train in fp32 (CPU)</source>
        <translation>用 fp32 训练（CPU）</translation>
    </message>
    <message>
        <source>Let the app choose the precision</source>
        <translation>让应用自动选择精度</translation>
    </message>
    <message>
        <source>Use AdamW</source>
        <translation>改用 AdamW</translation>
    </message>
    <message>
        <source>Use 0 data loader workers</source>
        <translation>数据加载工作进程设为 0</translation>
    </message>
    <message>
        <source>The disk is full: a file could not be written in {folder}.</source>
        <translation>磁盘已满：无法在 {folder} 中写入文件。</translation>
    </message>
    <message>
        <source>The disk is full: a file could not be written.</source>
        <translation>磁盘已满：无法写入文件。</translation>
    </message>
    <message>
        <source>Loading the model</source>
        <translation>正在加载模型</translation>
    </message>
    <message>
        <source>Copying the adapters</source>
        <translation>正在复制适配器</translation>
    </message>
    <message>
        <source>Writing the weights (safetensors)</source>
        <translation>正在写入权重（safetensors）</translation>
    </message>
    <message>
        <source>Copying the tokenizer</source>
        <translation>正在复制分词器</translation>
    </message>
    <message>
        <source>Writing the model card</source>
        <translation>正在写入模型卡片</translation>
    </message>
    <message>
        <source>Putting the folder in place</source>
        <translation>正在把文件夹放到目标位置</translation>
    </message>
    <message>
        <source>Making the zip archive</source>
        <translation>正在生成 zip 压缩包</translation>
    </message>
    <message>
        <source>Verifying: reloading the folder in a fresh process</source>
        <translation>正在校验：在新进程中重新加载该文件夹</translation>
    </message>
    <message>
        <source>Logging the model to MLflow</source>
        <translation>正在把模型记录到 MLflow</translation>
    </message>
    <message>
        <source>Done</source>
        <translation>完成</translation>
    </message>
    <message>
        <source>Unknown weight type {dtype}.</source>
        <translation>未知的权重类型 {dtype}。</translation>
    </message>
    <message>
        <source>Use one of {choices}.</source>
        <translation>请使用以下之一：{choices}。</translation>
    </message>
    <message>
        <source>{run} has no finished model to export.</source>
        <translation>{run} 没有训练完成的模型可以导出。</translation>
    </message>
    <message>
        <source>Finish (or resume) the run first.</source>
        <translation>请先完成（或继续）这次训练。</translation>
    </message>
    <message>
        <source>This run trained no LoRA adapters.</source>
        <translation>这次训练没有训练 LoRA 适配器。</translation>
    </message>
    <message>
        <source>Export the merged model instead.</source>
        <translation>请改为导出合并后的模型。</translation>
    </message>
    <message>
        <source>{folder} is a file, not a folder.</source>
        <translation>{folder} 是一个文件，不是文件夹。</translation>
    </message>
    <message>
        <source>Give the name of a new or empty folder to export to.</source>
        <translation>请指定一个新的或空的文件夹作为导出位置。</translation>
    </message>
    <message>
        <source>the run folder</source>
        <translation>训练任务文件夹</translation>
    </message>
    <message>
        <source>the runs folder</source>
        <translation>存放训练任务的文件夹</translation>
    </message>
    <message>
        <source>Finetune Studio&apos;s data folder</source>
        <translation>Finetune Studio 的数据文件夹</translation>
    </message>
    <message>
        <source>Cannot write in {folder}: {error}.</source>
        <translation>无法写入 {folder}：{error}。</translation>
    </message>
    <message>
        <source>Choose another folder.</source>
        <translation>请选择其他文件夹。</translation>
    </message>
    <message>
        <source>About this model</source>
        <translation>关于这个模型</translation>
    </message>
    <message>
        <source>Fine-tuned with Finetune Studio from {model} for {task} on {data}.</source>
        <translation>使用 Finetune Studio 以 {model} 为基础、在 {data} 上针对 {task} 任务微调而成。</translation>
    </message>
    <message>
        <source>Load it as the section How to load shows; the run&apos;s config reproduces it.</source>
        <translation>加载方法见上方“How to load”一节；用这次训练的配置文件可以复现它。</translation>
    </message>
    <message>
        <source>MLflow is not installed.</source>
        <translation>没有安装 MLflow。</translation>
    </message>
    <message>
        <source>Export cancelled; nothing was written.</source>
        <translation>已取消导出；没有写入任何内容。</translation>
    </message>
    <message>
        <source>{folder} is not empty.</source>
        <translation>{folder} 不是空的。</translation>
    </message>
    <message>
        <source>Not enough disk space: the export needs about {needed} in {folder}, {free} are free on that drive.</source>
        <translation>磁盘空间不足：导出需要在 {folder} 中占用约 {needed}，该磁盘只剩 {free} 可用。</translation>
    </message>
    <message>
        <source>Free some space or choose another folder.</source>
        <translation>请腾出一些空间，或选择其他文件夹。</translation>
    </message>
    <message>
        <source>the model this run started from</source>
        <translation>这次训练所基于的模型</translation>
    </message>
    <message>
        <source>{folder} is {what} ({other}); exporting there could overwrite it.</source>
        <translation>{folder} 就是{what}（{other}）；导出到那里可能会覆盖它。</translation>
    </message>
    <message>
        <source>Export to a new folder elsewhere, for example in your Documents folder.</source>
        <translation>请导出到别处的新文件夹，例如“文档”文件夹里。</translation>
    </message>
    <message>
        <source>{folder} holds run folders; exporting there could overwrite them.</source>
        <translation>{folder} 里有训练任务文件夹；导出到那里可能会覆盖它们。</translation>
    </message>
    <message>
        <source>Export to a new folder elsewhere.</source>
        <translation>请导出到别处的新文件夹。</translation>
    </message>
    <message>
        <source>{folder} is not empty and was not written by an export, so it will not be replaced.</source>
        <translation>{folder} 不是空的，也不是之前导出时写入的，所以不会替换它。</translation>
    </message>
    <message>
        <source>Choose a new or empty folder, or a folder an earlier export wrote.</source>
        <translation>请选择一个新的或空的文件夹，或者之前导出时写入的文件夹。</translation>
    </message>
    <message>
        <source>Another export to {folder} is running right now.</source>
        <translation>另一个导出到 {folder} 的操作正在进行。</translation>
    </message>
    <message>
        <source>Wait for it to finish, or export to another folder.</source>
        <translation>请等它完成，或导出到其他文件夹。</translation>
    </message>
    <message>
        <source>Results: {results}.</source>
        <translation>结果：{results}。</translation>
    </message>
    <message>
        <source>{folder} lies inside {what} ({other}); exporting there could overwrite it.</source>
        <translation>{folder} 位于{what}（{other}）之内；导出到那里可能会覆盖它。</translation>
    </message>
    <message>
        <source>{folder} holds {what} ({other}); exporting there could overwrite it.</source>
        <translation>{folder} 包含{what}（{other}）；导出到那里可能会覆盖它。</translation>
    </message>
    <message>
        <source>Found {gpus}.</source>
        <translation>找到 {gpus}。</translation>
    </message>
    <message>
        <source>No GPU found: training runs on the CPU.</source>
        <translation>没有找到 GPU：训练将在 CPU 上运行。</translation>
    </message>
    <message>
        <source>Found {gpus} (NVIDIA driver {driver}).</source>
        <translation>找到 {gpus}（NVIDIA 驱动程序 {driver}）。</translation>
    </message>
    <message>
        <source>The helper process that reads models ended unexpectedly (exit code {code}).</source>
        <translation>读取模型的辅助进程意外结束（退出代码 {code}）。</translation>
    </message>
    <message>
        <source>Try again. If it happens again, its log is {path}.</source>
        <translation>请重试。如果再次出现，它的日志在 {path}。</translation>
    </message>
    <message>
        <source>Only models in a hub cache can be deleted here.</source>
        <translation>这里只能删除 Hub 缓存中的模型。</translation>
    </message>
    <message>
        <source>{folder} is not a model folder in the ModelScope cache ({cache}).</source>
        <translation>{folder} 不是魔搭缓存（{cache}）中的模型文件夹。</translation>
    </message>
    <message>
        <source>The number of machines must be 1 or more.</source>
        <translation>机器数必须至少为 1。</translation>
    </message>
    <message>
        <source>Pass --nodes 1 or more.</source>
        <translation>请传入 --nodes 1 或更大的值。</translation>
    </message>
    <message>
        <source>The number of processes must be 1 or more.</source>
        <translation>进程数必须至少为 1。</translation>
    </message>
    <message>
        <source>Pass --num-processes 1 or more.</source>
        <translation>请传入 --num-processes 1 或更大的值。</translation>
    </message>
    <message>
        <source>{folder} exists and is not empty.</source>
        <translation>{folder} 已存在且不是空的。</translation>
    </message>
    <message>
        <source>Choose a new folder for the job.</source>
        <translation>请为作业选择一个新文件夹。</translation>
    </message>
    <message>
        <source>The data file {file} was not found.</source>
        <translation>找不到数据文件 {file}。</translation>
    </message>
    <message>
        <source>Check the data on the Model and data page, then export the job again.</source>
        <translation>请在“模型与数据”页面检查数据，然后重新导出作业。</translation>
    </message>
    <message>
        <source>Training on several processes needs the accelerate package, which is not installed.</source>
        <translation>多进程训练需要 accelerate 包，但它没有安装。</translation>
    </message>
    <message>
        <source>Install it (pip install accelerate), or train with one process.</source>
        <translation>请安装它（pip install accelerate），或者只用一个进程训练。</translation>
    </message>
    <message>
        <source>{strategy} needs the deepspeed package, which is not installed.</source>
        <translation>{strategy} 需要 deepspeed 包，但它没有安装。</translation>
    </message>
    <message>
        <source>Install it (pip install deepspeed; Linux only), or choose ddp or fsdp.</source>
        <translation>请安装它（pip install deepspeed；仅限 Linux），或者选择 ddp 或 fsdp。</translation>
    </message>
    <message>
        <source>DeepSpeed does not train on several GPUs on Windows.</source>
        <translation>DeepSpeed 在 Windows 上不能用多块 GPU 训练。</translation>
    </message>
    <message>
        <source>Choose ddp or fsdp, or train on Linux (WSL2 works).</source>
        <translation>请选择 ddp 或 fsdp，或者在 Linux 上训练（WSL2 也可以）。</translation>
    </message>
    <message>
        <source>The run asks for {processes} processes, one per GPU, and this computer has {gpus}.</source>
        <translation>这个训练任务要 {processes} 个进程（每块 GPU 一个），而这台电脑只有 {gpus} 块 GPU。</translation>
    </message>
    <message>
        <source>Lower the number of GPUs to {gpus}.</source>
        <translation>请把 GPU 数降到 {gpus}。</translation>
    </message>
    <message>
        <source>GPU {ids} does not exist here (GPUs 0 to {last}).</source>
        <translation>这里没有 GPU {ids}（只有 GPU 0 到 {last}）。</translation>
    </message>
    <message>
        <source>Choose GPUs this computer has, or leave the choice empty.</source>
        <translation>请选择这台电脑上有的 GPU，或者留空。</translation>
    </message>
    <message>
        <source>weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>gradients</source>
        <translation>梯度</translation>
    </message>
    <message>
        <source>optimizer states</source>
        <translation>优化器状态</translation>
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
        <translation>CUDA 上下文及其他开销</translation>
    </message>
    <message>
        <source>libraries and overhead</source>
        <translation>程序库及其他开销</translation>
    </message>
    <message>
        <source>{first} {then}</source>
        <translation>{first}{then}</translation>
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
        <translation>{model} 的分词器既没有填充词元，也没有文本结束词元。</translation>
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
        <source>precision auto -&gt; {precision}</source>
        <translation>精度 auto -&gt; {precision}</translation>
    </message>
    <message>
        <source>QLoRA: the base model is loaded in 4 bits (NF4)</source>
        <translation>QLoRA：基础模型以 4 位精度（NF4）加载</translation>
    </message>
    <message>
        <source>{precision} needs a CUDA GPU, and PyTorch sees none here; use auto or fp32 (or fix PyTorch on the Environment page).</source>
        <translation>{precision} 需要 CUDA GPU，但 PyTorch 在这里看不到 GPU；请使用 auto 或 fp32（或在“环境”页修复 PyTorch）。</translation>
    </message>
    <message>
        <source>8-bit optimizers need bitsandbytes, which is missing or broken here; use adamw_torch or adafactor.</source>
        <translation>8 位优化器需要 bitsandbytes，但这里缺失或已损坏；请使用 adamw_torch 或 adafactor。</translation>
    </message>
    <message>
        <source>paged optimizers need a CUDA GPU.</source>
        <translation>分页优化器需要 CUDA GPU。</translation>
    </message>
    <message>
        <source>flash_attention_2 needs the flash-attn package and a CUDA GPU; use sdpa.</source>
        <translation>flash_attention_2 需要 flash-attn 包和 CUDA GPU；请使用 sdpa。</translation>
    </message>
    <message>
        <source>QLoRA needs a CUDA GPU and a working bitsandbytes; use plain LoRA (lora.enabled) instead.</source>
        <translation>QLoRA 需要 CUDA GPU 和可用的 bitsandbytes；请改用普通 LoRA（lora.enabled）。</translation>
    </message>
    <message>
        <source>this GPU cannot compute in bf16; use fp16 or auto.</source>
        <translation>这块 GPU 不支持 bf16 计算；请使用 fp16 或 auto。</translation>
    </message>
    <message>
        <source>inductor needs Triton on the GPU, which has no Windows builds; use aot_eager or eager, or turn torch_compile off.</source>
        <translation>inductor 在 GPU 上需要 Triton，而 Triton 没有 Windows 版本；请使用 aot_eager 或 eager，或关闭 torch_compile。</translation>
    </message>
    <message>
        <source>inductor needs Triton on the GPU, which is not installed; use aot_eager or eager, or turn torch_compile off.</source>
        <translation>inductor 在 GPU 上需要 Triton，但没有安装；请使用 aot_eager 或 eager，或关闭 torch_compile。</translation>
    </message>
    <message>
        <source>inductor compiles CPU training with a C++ compiler, and Visual Studio&apos;s cl.exe was not found; use aot_eager, or turn torch_compile off.</source>
        <translation>inductor 在 CPU 上训练需要用 C++ 编译器编译，但没有找到 Visual Studio 的 cl.exe；请使用 aot_eager，或关闭 torch_compile。</translation>
    </message>
    <message>
        <source>inductor compiles CPU training with a C++ compiler, and none was found; use aot_eager, or turn torch_compile off.</source>
        <translation>inductor 在 CPU 上训练需要用 C++ 编译器编译，但没有找到编译器；请使用 aot_eager，或关闭 torch_compile。</translation>
    </message>
    <message>
        <source>{tracker} is not supported; use {choices}.</source>
        <translation>不支持 {tracker}；请使用 {choices}。</translation>
    </message>
    <message>
        <source>{tracker} is not installed: pip install {tracker}, or remove it from output.report_to.</source>
        <translation>没有安装 {tracker}：请运行 pip install {tracker}，或把它从 output.report_to 中去掉。</translation>
    </message>
    <message>
        <source>Which column should the model read? The file&apos;s columns are: {columns}.</source>
        <translation>模型应该读取哪一列？文件中的列有：{columns}。</translation>
    </message>
    <message>
        <source>Name the column (in the app: Column to read; in the CLI: --column).</source>
        <translation>请指定列（应用中：要读取的列；命令行中：--column）。</translation>
    </message>
    <message>
        <source>Writing {file}</source>
        <translation>正在写入 {file}</translation>
    </message>
    <message>
        <source>{file}: predictions are written as CSV, TSV, JSONL or Excel (.xlsx).</source>
        <translation>{file}：预测结果只能写成 CSV、TSV、JSONL 或 Excel（.xlsx）。</translation>
    </message>
    <message>
        <source>Give the output file one of those types.</source>
        <translation>请把输出文件设为其中一种类型。</translation>
    </message>
    <message>
        <source>The output would replace the input file {file}.</source>
        <translation>输出会覆盖输入文件 {file}。</translation>
    </message>
    <message>
        <source>Choose another name for the output.</source>
        <translation>请为输出文件换一个名字。</translation>
    </message>
    <message>
        <source>Predicting: {done} of {rows} rows</source>
        <translation>正在预测：{done} / {rows} 行</translation>
    </message>
    <message>
        <source>The file has no column &quot;{column}&quot;; its columns are: {columns}.</source>
        <translation>文件中没有“{column}”列；它的列有：{columns}。</translation>
    </message>
    <message>
        <source>Give one of those columns.</source>
        <translation>请指定其中一列。</translation>
    </message>
    <message>
        <source>{file} cannot be replaced: another program (Excel?) has it open.</source>
        <translation>无法替换 {file}：另一个程序（Excel？）正打开着它。</translation>
    </message>
    <message>
        <source>Close it there, or choose another name for the output.</source>
        <translation>请先在那个程序中关闭它，或为输出文件换一个名字。</translation>
    </message>
    <message>
        <source>Some predictions do not fit the input&apos;s encoding ({encoding}): the file is written in UTF-8 with a BOM, which Excel also opens.</source>
        <translation>有些预测结果无法用输入文件的编码（{encoding}）表示：文件改用带 BOM 的 UTF-8 写入，Excel 同样可以打开。</translation>
    </message>
    <message>
        <source>Even the smallest setting needs {needed} GB of the {free} GB free: choose a smaller model, a shorter max length, or a GPU with more memory.</source>
        <translation>即使用最省显存的设置也需要 {needed} GB，而可用的只有 {free} GB：请选择更小的模型、更短的最大长度，或显存更大的 GPU。</translation>
    </message>
    <message>
        <source>batch size {batch} -&gt; {new_batch}, gradient accumulation {accumulation} -&gt; {new_accumulation} (the same {effective} examples per update)</source>
        <translation>批大小 {batch} -&gt; {new_batch}，梯度累积 {accumulation} -&gt; {new_accumulation}（每次更新仍是 {effective} 个样本）</translation>
    </message>
    <message>
        <source>the standard optimizer</source>
        <translation>标准优化器</translation>
    </message>
    <message>
        <source>optimizer {old} -&gt; {new} ({why})</source>
        <translation>优化器 {old} -&gt; {new}（{why}）</translation>
    </message>
    <message>
        <source>precision {old} -&gt; {new}</source>
        <translation>精度 {old} -&gt; {new}</translation>
    </message>
    <message>
        <source>gradient checkpointing on: far less activation memory, about 20% slower</source>
        <translation>开启梯度检查点：激活值占用的内存大幅减少，约慢 20%</translation>
    </message>
    <message>
        <source>gradient checkpointing off: faster steps</source>
        <translation>关闭梯度检查点：每步更快</translation>
    </message>
    <message>
        <source>torch.compile on: a slow first step, then faster ones</source>
        <translation>开启 torch.compile：第一步较慢，之后更快</translation>
    </message>
    <message>
        <source>torch.compile off: no compile wait</source>
        <translation>关闭 torch.compile：无需等待编译</translation>
    </message>
    <message>
        <source>LoRA on (rank {rank}): only small adapters are trained</source>
        <translation>开启 LoRA（秩 {rank}）：只训练小型适配器</translation>
    </message>
    <message>
        <source>LoRA off: every weight is trained</source>
        <translation>关闭 LoRA：训练全部权重</translation>
    </message>
    <message>
        <source>factored states, a fraction of AdamW&apos;s memory</source>
        <translation>分解存储的状态，只占 AdamW 的一小部分内存</translation>
    </message>
    <message>
        <source>8-bit states, a quarter of AdamW&apos;s memory</source>
        <translation>8 位状态，只占 AdamW 的四分之一内存</translation>
    </message>
    <message>
        <source>one fused kernel, faster on GPU</source>
        <translation>单个融合内核，在 GPU 上更快</translation>
    </message>
    <message>
        <source>Cancelled.</source>
        <translation>已取消。</translation>
    </message>
    <message>
        <source>Nothing was changed.</source>
        <translation>没有做任何更改。</translation>
    </message>
    <message>
        <source>evaluation batch {old} -&gt; {new} (evaluation only: training is unchanged)</source>
        <translation>评估批大小 {old} -&gt; {new}（仅影响评估，训练不变）</translation>
    </message>
    <message>
        <source>The installation was cancelled.</source>
        <translation>安装已取消。</translation>
    </message>
    <message>
        <source>The installation failed (see the log).</source>
        <translation>安装失败（请查看日志）。</translation>
    </message>
    <message>
        <source>PyTorch no longer loads. Run the repair again, or reinstall the app&apos;s environment.</source>
        <translation>PyTorch 已无法加载。请再运行一次修复，或重新安装应用的运行环境。</translation>
    </message>
    <message>
        <source>PyTorch {version} is still installed and works as before.</source>
        <translation>PyTorch {version} 仍然安装着，和之前一样可以使用。</translation>
    </message>
    <message>
        <source>PyTorch no longer loads. To put back what was there, run: {command}</source>
        <translation>PyTorch 已无法加载。要恢复原来的版本，请运行：{command}</translation>
    </message>
    <message>
        <source>Installed {requirements}.</source>
        <translation>已安装 {requirements}。</translation>
    </message>
    <message>
        <source>The installer could not be started: {error}</source>
        <translation>无法启动安装程序：{error}</translation>
    </message>
    <message>
        <source>Resuming from {checkpoint}: the newer {damaged} is damaged and was set aside</source>
        <translation>从 {checkpoint} 继续训练：更新的 {damaged} 已损坏，已移到一旁</translation>
    </message>
    <message>
        <source>Resuming from the start: {damaged} is damaged and was set aside</source>
        <translation>从头开始训练：{damaged} 已损坏，已移到一旁</translation>
    </message>
    <message>
        <source>Resuming from {checkpoint}</source>
        <translation>从 {checkpoint} 继续训练</translation>
    </message>
    <message>
        <source>No checkpoint of {run} can be loaded (the last, {checkpoint}: {error}).</source>
        <translation>{run} 的检查点都无法加载（最后一个是 {checkpoint}：{error}）。</translation>
    </message>
    <message>
        <source>Start the run again without resuming.</source>
        <translation>请不使用继续训练，重新开始这次训练。</translation>
    </message>
    <message>
        <source>Resuming from {checkpoint}: {failed} could not be loaded ({error})</source>
        <translation>从 {checkpoint} 继续训练：{failed} 无法加载（{error}）</translation>
    </message>
    <message>
        <source>The run {run} is being trained right now by another process.</source>
        <translation>训练任务 {run} 正在被另一个进程训练。</translation>
    </message>
    <message>
        <source>Wait for it to finish or stop it there; a run folder takes one training at a time.</source>
        <translation>请等它结束，或在那边停止它；一个训练任务文件夹同一时间只能进行一次训练。</translation>
    </message>
    <message>
        <source>{run} is still running.</source>
        <translation>{run} 仍在运行。</translation>
    </message>
    <message>
        <source>Stop it first, then delete it.</source>
        <translation>请先停止它，再删除。</translation>
    </message>
    <message>
        <source>{folder} is not a run folder (it has no config.toml and events.jsonl).</source>
        <translation>{folder} 不是训练任务文件夹（里面没有 config.toml 和 events.jsonl）。</translation>
    </message>
    <message>
        <source>Choose a folder inside the job&apos;s runs folder, named like 20260101-120000-...</source>
        <translation>请选择作业 runs 文件夹里的一个文件夹，名字类似 20260101-120000-...</translation>
    </message>
    <message>
        <source>{run} is in the runs folder already.</source>
        <translation>{run} 已经在训练任务文件夹中了。</translation>
    </message>
    <message>
        <source>It is listed in Run history as it is.</source>
        <translation>它已经列在训练记录里。</translation>
    </message>
    <message>
        <source>The last run of {config} ({run}) was trained with other settings ({changed}), so it cannot continue with this config.</source>
        <translation>{config} 的上一次训练（{run}）用的是其他设置（{changed}），因此不能用这份配置继续训练。</translation>
    </message>
    <message>
        <source>Resume it as it was with: finetune-studio-cli train {config} --resume, or start a new run without --resume.</source>
        <translation>要按原设置继续，请运行：finetune-studio-cli train {config} --resume；或者不加 --resume 开始新的训练。</translation>
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
    <message>
        <source>Resuming on {now} processes instead of {before}: the model and optimizer carry over; the order of the remaining batches differs from an uninterrupted run.</source>
        <translation>用 {now} 个进程（而不是 {before} 个）继续训练：模型和优化器状态会沿用；剩余批次的顺序与不中断的训练不同。</translation>
    </message>
    <message>
        <source>Resume the run: it continues from its last checkpoint.</source>
        <translation>请继续训练：它会从最后一个检查点接着训练。</translation>
    </message>
    <message>
        <source>Start the run again.</source>
        <translation>请重新开始训练。</translation>
    </message>
    <message>
        <source>The training process was killed by the system (SIGKILL). On Linux that is most often the out-of-memory killer: the computer ran out of RAM.</source>
        <translation>训练进程被系统杀死了（SIGKILL）。在 Linux 上这通常是内存不足时的 OOM killer：电脑的内存用完了。</translation>
    </message>
    <message>
        <source>The process wrote nothing to its error output.</source>
        <translation>该进程没有输出任何错误信息。</translation>
    </message>
    <message>
        <source>Close other programs, or lower the batch size or the maximum length.</source>
        <translation>请关闭其他程序，或者调小批大小或最大长度。</translation>
    </message>
    <message>
        <source>The training process crashed inside native code (a segmentation fault). That comes from a driver, CUDA or a compiled library, not from your data.</source>
        <translation>训练进程在本机代码中崩溃了（段错误）。这来自驱动程序、CUDA 或某个编译好的库，而不是你的数据。</translation>
    </message>
    <message>
        <source>This run was trained on {before} processes with {strategy}; its checkpoint is split in that many parts and cannot resume on {now}.</source>
        <translation>这个训练任务用 {strategy} 在 {before} 个进程上训练；它的检查点被拆成了同样多份，不能在 {now} 个进程上继续训练。</translation>
    </message>
    <message>
        <source>Resume it on {before} GPUs, or start a new run.</source>
        <translation>请在 {before} 块 GPU 上继续训练，或者开始新的训练任务。</translation>
    </message>
    <message>
        <source>If it happens again, update the NVIDIA driver or repair PyTorch on the Environment page.</source>
        <translation>如果再次发生，请更新 NVIDIA 驱动程序，或在“环境”页面修复 PyTorch。</translation>
    </message>
    <message>
        <source>The training process was aborted by a library&apos;s fatal error (SIGABRT): a failed internal check in PyTorch, CUDA or a compiled extension.</source>
        <translation>训练进程因某个库的致命错误而中止（SIGABRT）：PyTorch、CUDA 或某个编译扩展的内部检查失败。</translation>
    </message>
    <message>
        <source>The end of its error output is in the details.</source>
        <translation>它最后的错误输出在详细信息里。</translation>
    </message>
    <message>
        <source>The training process ended on signal {signal}.</source>
        <translation>训练进程因信号 {signal} 而结束。</translation>
    </message>
    <message>
        <source>The training process ended unexpectedly (exit code {code}).</source>
        <translation>训练进程意外结束（退出码 {code}）。</translation>
    </message>
    <message>
        <source>{dropped} of {total} rows of {source} were left out: their prompt alone fills {length} tokens, so no response is left to learn. Raise training.max_length to keep them.</source>
        <translation>{source} 的 {total} 行中有 {dropped} 行被跳过：光是提示词就占满了 {length} 个词元，没有留下可学习的回复。要保留它们，请增大 training.max_length。</translation>
    </message>
    <message>
        <source>No row of {source} has a response within {length} tokens.</source>
        <translation>{source} 中没有任何一行的回复落在 {length} 个词元之内。</translation>
    </message>
    <message>
        <source>Raise training.max_length, or shorten the prompts.</source>
        <translation>请增大 training.max_length，或缩短提示词。</translation>
    </message>
    <message>
        <source>Training runs on the CPU: PyTorch {version} ({build}) finds no usable GPU.</source>
        <translation>训练将在 CPU 上运行：PyTorch {version}（{build}）找不到可用的 GPU。</translation>
    </message>
    <message>
        <source>PyTorch could not be checked: {error}</source>
        <translation>无法检查 PyTorch：{error}</translation>
    </message>
    <message>
        <source>PyTorch is not installed.</source>
        <translation>没有安装 PyTorch。</translation>
    </message>
    <message>
        <source>Training runs on the GPU: {gpus} (PyTorch {version}).</source>
        <translation>训练将在 GPU 上运行：{gpus}（PyTorch {version}）。</translation>
    </message>
    <message>
        <source>Training runs on the CPU: PyTorch {version} is a CPU-only build.</source>
        <translation>训练将在 CPU 上运行：PyTorch {version} 是仅支持 CPU 的版本。</translation>
    </message>
    <message>
        <source>Reading the data</source>
        <translation>正在读取数据</translation>
    </message>
    <message>
        <source>Loading PyTorch and Transformers</source>
        <translation>正在加载 PyTorch 和 Transformers</translation>
    </message>
    <message>
        <source>Loading the tokenizer and the model</source>
        <translation>正在加载分词器和模型</translation>
    </message>
    <message>
        <source>Evaluating the base model, for the figures before and after</source>
        <translation>正在评估基础模型，用于对比训练前后的指标</translation>
    </message>
    <message>
        <source>Warning: {warning}</source>
        <translation>警告：{warning}</translation>
    </message>
    <message>
        <source>Tokenizing {rows} training rows: {percent}%</source>
        <translation>正在对 {rows} 行训练数据做分词：{percent}%</translation>
    </message>
    <message>
        <source>Tokenizing {rows} evaluation rows: {percent}%</source>
        <translation>正在对 {rows} 行评估数据做分词：{percent}%</translation>
    </message>
    <message>
        <source>The GPU ran out of memory saving the model: saving it from the CPU instead</source>
        <translation>保存模型时显存不足：改为在 CPU 上保存</translation>
    </message>
    <message>
        <source>Trying the longest batch first: a lack of memory shows now</source>
        <translation>先试跑最长的一批数据：内存不够的话现在就能发现</translation>
    </message>
    <message>
        <source>The base model&apos;s evaluation would take over a minute: skipped</source>
        <translation>评估基础模型预计要超过一分钟：已跳过</translation>
    </message>
    <message>
        <source>{folder} holds no model (no config.json or adapter_config.json).</source>
        <translation>{folder} 中没有模型（没有 config.json 或 adapter_config.json）。</translation>
    </message>
    <message>
        <source>Open the folder that an export or a finished run wrote.</source>
        <translation>请打开导出或训练完成时写入的文件夹。</translation>
    </message>
    <message>
        <source>Export the model again.</source>
        <translation>请重新导出模型。</translation>
    </message>
    <message>
        <source>Check that the folder is complete (export it again), and that an adapter&apos;s base model is still where it was.</source>
        <translation>请确认文件夹完整（可重新导出），以及适配器的基础模型仍在原来的位置。</translation>
    </message>
    <message>
        <source>PyTorch {version} uses {gpus}.</source>
        <translation>PyTorch {version} 正在使用 {gpus}。</translation>
    </message>
    <message>
        <source>Nothing to fix.</source>
        <translation>无需修复。</translation>
    </message>
    <message>
        <source>No NVIDIA GPU: training runs on the CPU, and the CPU build is right.</source>
        <translation>没有 NVIDIA GPU：训练将在 CPU 上运行，CPU 版本正合适。</translation>
    </message>
    <message>
        <source>Nothing to fix. Training on the CPU is fine for small models and data.</source>
        <translation>无需修复。小模型和小数据在 CPU 上训练就可以。</translation>
    </message>
    <message>
        <source>No single PyTorch build supports all of {gpus}.</source>
        <translation>没有任何一个 PyTorch 版本能同时支持 {gpus}。</translation>
    </message>
    <message>
        <source>Older GPUs (Maxwell to Volta) need cu126 builds, the newest (Blackwell) cu128 or newer. Train on one kind of GPU: set CUDA_VISIBLE_DEVICES to hide the others.</source>
        <translation>较旧的 GPU（Maxwell 到 Volta）需要 cu126 版本，最新的（Blackwell）需要 cu128 或更新版本。请只用一种 GPU 训练：设置 CUDA_VISIBLE_DEVICES 隐藏其他 GPU。</translation>
    </message>
    <message>
        <source>The NVIDIA driver {driver} is too old for any PyTorch build for {gpus}.</source>
        <translation>NVIDIA 驱动程序 {driver} 太旧，任何支持 {gpus} 的 PyTorch 版本都无法运行。</translation>
    </message>
    <message>
        <source>Install {requirement}: {reason}.</source>
        <translation>请安装 {requirement}：{reason}。</translation>
    </message>
    <message>
        <source>PyTorch is installed but does not load: {error}</source>
        <translation>PyTorch 已安装，但无法加载：{error}</translation>
    </message>
    <message>
        <source>Reinstalling {requirement} replaces the damaged installation.</source>
        <translation>重新安装 {requirement} 会替换已损坏的安装。</translation>
    </message>
    <message>
        <source>CPU-only PyTorch on a machine with {gpus}: training would run on the CPU.</source>
        <translation>这台电脑有 {gpus}，但装的是仅支持 CPU 的 PyTorch：训练会在 CPU 上运行。</translation>
    </message>
    <message>
        <source>Installing {requirement} lets PyTorch use the GPU ({reason}).</source>
        <translation>安装 {requirement} 后 PyTorch 就能使用 GPU（{reason}）。</translation>
    </message>
    <message>
        <source>PyTorch {version} needs a newer NVIDIA driver than {driver}.</source>
        <translation>PyTorch {version} 需要比 {driver} 更新的 NVIDIA 驱动程序。</translation>
    </message>
    <message>
        <source>Update the driver to {floor} or newer, or install {requirement} ({reason}).</source>
        <translation>请把驱动程序更新到 {floor} 或更新版本，或者安装 {requirement}（{reason}）。</translation>
    </message>
    <message>
        <source>PyTorch {version} has no code for {gpu} (compute capability {capability}).</source>
        <translation>PyTorch {version} 不包含 {gpu}（计算能力 {capability}）的代码。</translation>
    </message>
    <message>
        <source>Installing {requirement} adds it ({reason}).</source>
        <translation>安装 {requirement} 即可支持（{reason}）。</translation>
    </message>
    <message>
        <source>PyTorch {version} is a CUDA build but cannot use {gpus}.</source>
        <translation>PyTorch {version} 是 CUDA 版本，但无法使用 {gpus}。</translation>
    </message>
    <message>
        <source>Reinstalling {requirement} usually fixes this; if not, reinstall the NVIDIA driver.</source>
        <translation>重新安装 {requirement} 通常能解决；如果不行，请重新安装 NVIDIA 驱动程序。</translation>
    </message>
    <message>
        <source>the newest build for {gpus} that driver {driver} fully supports</source>
        <translation>驱动程序 {driver} 完全支持的、适用于 {gpus} 的最新版本</translation>
    </message>
    <message>
        <source>a build that driver {driver} can run</source>
        <translation>驱动程序 {driver} 能运行的版本</translation>
    </message>
    <message>
        <source>the newest PyTorch ({version}) with a build for {gpus} that driver {driver} runs</source>
        <translation>有适用于 {gpus} 且驱动程序 {driver} 能运行的版本的最新 PyTorch（{version}）</translation>
    </message>
    <message>
        <source>An AMD GPU was found; this app trains on NVIDIA GPUs or the CPU.</source>
        <translation>找到了 AMD GPU；本应用只在 NVIDIA GPU 或 CPU 上训练。</translation>
    </message>
    <message>
        <source>ROCm builds of PyTorch exist for Linux but are not managed here yet.</source>
        <translation>Linux 上有 ROCm 版的 PyTorch，但本应用暂不管理它。</translation>
    </message>
    <message>
        <source>Reinstalling the CPU build fixes a damaged installation.</source>
        <translation>重新安装 CPU 版本可以修复损坏的安装。</translation>
    </message>
    <message>
        <source>Install the CPU build of PyTorch.</source>
        <translation>请安装 CPU 版本的 PyTorch。</translation>
    </message>
    <message>
        <source>Install NVIDIA driver {floor} or newer ({newest} or newer for the newest builds), then check again.</source>
        <translation>请安装 {floor} 或更新版本的 NVIDIA 驱动程序（要用最新的版本则需 {newest} 或更新），然后重新检查。</translation>
    </message>
    <message>
        <source>Install NVIDIA driver {floor} or newer, then check again.</source>
        <translation>请安装 {floor} 或更新版本的 NVIDIA 驱动程序，然后重新检查。</translation>
    </message>
    <message>
        <source>Driver {driver} runs {tag} with a limited feature set; a newer driver is better.</source>
        <translation>驱动程序 {driver} 运行 {tag} 时只能使用部分功能；最好更新驱动程序。</translation>
    </message>
    <message>
        <source>step {step} | {metrics}</source>
        <translation>第 {step} 步 | {metrics}</translation>
    </message>
    <message>
        <source>Stopping after this step and saving a checkpoint (Ctrl-C again to quit at once)...</source>
        <translation>这一步结束后停止并保存检查点（再按一次 Ctrl-C 立即退出）……</translation>
    </message>
    <message>
        <source>error: {message}</source>
        <translation>错误：{message}</translation>
    </message>
    <message>
        <source>Wrote {file}. Column mapping:</source>
        <translation>已写入 {file}。列映射：</translation>
    </message>
    <message>
        <source>Next: finetune-studio-cli preview {file}   then   finetune-studio-cli train {file}</source>
        <translation>下一步：finetune-studio-cli preview {file}   然后   finetune-studio-cli train {file}</translation>
    </message>
    <message>
        <source>Asked to end (SIGTERM): stopping after this step and saving a checkpoint...</source>
        <translation>收到结束请求（SIGTERM）：这一步结束后停止并保存检查点……</translation>
    </message>
    <message>
        <source>Ctrl-Break: stopping after this step and saving a checkpoint...</source>
        <translation>Ctrl-Break：这一步结束后停止并保存检查点……</translation>
    </message>
    <message>
        <source>The console is closing: stopping after this step and saving a checkpoint...</source>
        <translation>控制台正在关闭：这一步结束后停止并保存检查点……</translation>
    </message>
    <message>
        <source>{config}: OK. {train} training rows, {eval} for evaluation.</source>
        <translation>{config}：没有问题。训练数据 {train} 行，评估数据 {eval} 行。</translation>
    </message>
    <message>
        <source>{train} training rows, {eval} for evaluation. Columns: {columns}</source>
        <translation>训练数据 {train} 行，评估数据 {eval} 行。列：{columns}</translation>
    </message>
    <message>
        <source>Column mapping:</source>
        <translation>列映射：</translation>
    </message>
    <message>
        <source>First rows ({count}):</source>
        <translation>前 {count} 行：</translation>
    </message>
    <message>
        <source>error: the exported folder does not reproduce the run&apos;s outputs (max difference {diff}) {error}</source>
        <translation>错误：导出的文件夹无法复现训练时的输出（最大差异 {diff}）{error}</translation>
    </message>
    <message>
        <source>{rows} rows predicted from column {column}; written to {file} with {added} added.</source>
        <translation>已根据 {column} 列预测 {rows} 行；已写入 {file}，新增 {added}。</translation>
    </message>
    <message>
        <source>{rows} evaluation rows</source>
        <translation>{rows} 行评估数据</translation>
    </message>
    <message>
        <source>accuracy  {value}</source>
        <translation>准确率    {value}</translation>
    </message>
    <message>
        <source>macro-F1  {value}</source>
        <translation>宏平均 F1 {value}</translation>
    </message>
    <message>
        <source>Confusion matrix (rows: true label; columns: predicted):</source>
        <translation>混淆矩阵（行：真实标签；列：预测标签）：</translation>
    </message>
    <message>
        <source>error: PyTorch {version} is installed, but the GPU test failed: {error}</source>
        <translation>错误：PyTorch {version} 已安装，但 GPU 测试失败：{error}</translation>
    </message>
    <message>
        <source>Job written to {folder}.</source>
        <translation>作业已写入 {folder}。</translation>
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
        <translation>失败</translation>
    </message>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>crashed</source>
        <translation>已崩溃</translation>
    </message>
    <message>
        <source>damaged</source>
        <translation>已损坏</translation>
    </message>
    <message>
        <source>Fine-tune Hugging Face models from a run config.</source>
        <translation>按训练配置微调 Hugging Face 模型。</translation>
    </message>
    <message>
        <source>the language of messages (default: the system&apos;s)</source>
        <translation>提示信息使用的语言（默认：跟随系统）</translation>
    </message>
    <message>
        <source>write a commented run config with the column mapping guessed</source>
        <translation>生成带注释的训练配置，并自动推测列映射</translation>
    </message>
    <message>
        <source>hub id, local model folder, or bundled:all-minilm-l6-v2</source>
        <translation>Hub ID、本地模型文件夹，或 bundled:all-minilm-l6-v2</translation>
    </message>
    <message>
        <source>local data files or a hub dataset id</source>
        <translation>本地数据文件，或 Hub 数据集 ID</translation>
    </message>
    <message>
        <source>config file to write (default: run.toml)</source>
        <translation>要写入的配置文件（默认：run.toml）</translation>
    </message>
    <message>
        <source>overwrite an existing config file</source>
        <translation>覆盖已有的配置文件</translation>
    </message>
    <message>
        <source>train as the config says</source>
        <translation>按配置进行训练</translation>
    </message>
    <message>
        <source>a run folder, a run&apos;s name, or a model folder</source>
        <translation>训练文件夹、训练名称或模型文件夹</translation>
    </message>
    <message>
        <source>the file to write (default: FILE.predicted.csv)</source>
        <translation>要写入的文件（默认：FILE.predicted.csv）</translation>
    </message>
    <message>
        <source>the column the model reads (default: as trained)</source>
        <translation>模型读取的列（默认：与训练时相同）</translation>
    </message>
    <message>
        <source>the longest generated answer</source>
        <translation>生成回答的最大长度</translation>
    </message>
    <message>
        <source>replace OUTPUT if it exists</source>
        <translation>如果 OUTPUT 已存在则覆盖</translation>
    </message>
    <message>
        <source>show a finished run&apos;s evaluation: per class, confusions, mistakes</source>
        <translation>显示已完成训练的评估：各类别指标、混淆情况和错误</translation>
    </message>
    <message>
        <source>wrong rows to show (the most confident first)</source>
        <translation>要显示的错误行数（最有把握的在前）</translation>
    </message>
    <message>
        <source>override a config value, e.g. --set training.epochs=1 (repeatable)</source>
        <translation>覆盖配置中的某个值，例如 --set training.epochs=1（可重复使用）</translation>
    </message>
    <message>
        <source>Evaluations are kept by finished runs with evaluation rows.</source>
        <translation>只有带评估数据、已完成的训练才会保存评估结果。</translation>
    </message>
    <message>
        <source>folder for run folders</source>
        <translation>存放训练任务文件夹的位置</translation>
    </message>
    <message>
        <source>continue the latest stopped run of this config</source>
        <translation>继续这份配置最近一次停止的训练</translation>
    </message>
    <message>
        <source>train in a child process: a second Ctrl-C ends it at once, keeping the last checkpoint</source>
        <translation>在子进程中训练：第二次按 Ctrl-C 会立即结束它，并保留最后一个检查点</translation>
    </message>
    <message>
        <source>train with N processes, one per GPU, through accelerate launch (2 CPU processes without a GPU)</source>
        <translation>用 N 个进程训练，每块 GPU 一个，通过 accelerate launch 启动（没有 GPU 时为 CPU 进程）</translation>
    </message>
    <message>
        <source>the GPUs to use, e.g. &quot;0,1&quot;</source>
        <translation>要使用的 GPU，例如 &quot;0,1&quot;</translation>
    </message>
    <message>
        <source>let the computer go to sleep during the run (by default it is kept awake)</source>
        <translation>允许电脑在训练期间睡眠（默认保持唤醒）</translation>
    </message>
    <message>
        <source>how several GPUs share the work (default: the config&apos;s, else ddp)</source>
        <translation>多块 GPU 如何分担工作（默认：配置中的设置，否则为 ddp）</translation>
    </message>
    <message>
        <source>check a config and its data without training</source>
        <translation>检查配置及其数据，不进行训练</translation>
    </message>
    <message>
        <source>show rows, column mapping and token-length statistics</source>
        <translation>显示数据行、列映射和词元长度统计</translation>
    </message>
    <message>
        <source>skip token statistics (no model download)</source>
        <translation>跳过词元统计（不下载模型）</translation>
    </message>
    <message>
        <source>write a finished run&apos;s model as a complete, verified folder</source>
        <translation>把训练完成的模型导出为完整、经过校验的文件夹</translation>
    </message>
    <message>
        <source>a run folder, or a run&apos;s name in the runs folder</source>
        <translation>训练任务文件夹，或训练任务文件夹中某个任务的名称</translation>
    </message>
    <message>
        <source>the folder to create</source>
        <translation>要创建的文件夹</translation>
    </message>
    <message>
        <source>LoRA runs: export the adapters alone, not merged</source>
        <translation>LoRA 训练：只导出适配器，不合并</translation>
    </message>
    <message>
        <source>also write DEST.zip</source>
        <translation>同时生成 DEST.zip</translation>
    </message>
    <message>
        <source>replace DEST if it is not empty</source>
        <translation>DEST 不为空时替换它</translation>
    </message>
    <message>
        <source>check the GPUs, the driver and the installed PyTorch</source>
        <translation>检查 GPU、驱动程序和已安装的 PyTorch</translation>
    </message>
    <message>
        <source>print the findings as JSON</source>
        <translation>以 JSON 格式输出检查结果</translation>
    </message>
    <message>
        <source>install the PyTorch build that fits</source>
        <translation>安装匹配的 PyTorch 版本</translation>
    </message>
    <message>
        <source>with --fix: show the install command, run nothing</source>
        <translation>与 --fix 一起用：只显示安装命令，不执行</translation>
    </message>
    <message>
        <source>a mirror or custom index instead of download.pytorch.org</source>
        <translation>用镜像站或自定义索引代替 download.pytorch.org</translation>
    </message>
    <message>
        <source>list run folders</source>
        <translation>列出训练任务文件夹</translation>
    </message>
    <message>
        <source>copy a run folder from elsewhere (a cluster job&apos;s runs/...) into the runs folder</source>
        <translation>把别处的训练任务文件夹（集群作业的 runs/...）复制到训练任务文件夹</translation>
    </message>
    <message>
        <source>write a run as a job for another machine or a Slurm cluster</source>
        <translation>把训练任务写成作业，在另一台机器或 Slurm 集群上运行</translation>
    </message>
    <message>
        <source>a self-contained folder: config, data, Accelerate config, launch.sh, job.sbatch</source>
        <translation>一个自包含的文件夹：配置、数据、Accelerate 配置、launch.sh、job.sbatch</translation>
    </message>
    <message>
        <source>a new folder for the job</source>
        <translation>作业用的新文件夹</translation>
    </message>
    <message>
        <source>GPUs per machine (default: the config&apos;s)</source>
        <translation>每台机器的 GPU 数（默认：配置中的值）</translation>
    </message>
    <message>
        <source>machines for the Slurm script (default: 1)</source>
        <translation>Slurm 脚本使用的机器数（默认：1）</translation>
    </message>
    <message>
        <source>{file} exists already.</source>
        <translation>{file} 已经存在。</translation>
    </message>
    <message>
        <source>Choose another name with -o, or add --force to overwrite it.</source>
        <translation>请用 -o 换一个名字，或加上 --force 覆盖它。</translation>
    </message>
    <message>
        <source>mean train loss {loss}</source>
        <translation>平均训练损失 {loss}</translation>
    </message>
    <message>
        <source>note: this computer could not be kept awake; if it sleeps, the run stops there.</source>
        <translation>注意：无法阻止这台电脑进入睡眠；如果它睡眠了，训练会就此中断。</translation>
    </message>
    <message>
        <source>note: {note}</source>
        <translation>提示：{note}</translation>
    </message>
    <message>
        <source>Finished. Model saved in {folder}</source>
        <translation>训练完成。模型已保存到 {folder}</translation>
    </message>
    <message>
        <source>Checking every row…</source>
        <translation>正在检查每一行……</translation>
    </message>
    <message>
        <source>Tokens ({name}): min {min}, median {median}, p95 {p95}, max {max}; {over} of {count} longer than max_length {limit}</source>
        <translation>词元数（{name}）：最少 {min}，中位数 {median}，p95 {p95}，最多 {max}；{count} 条中有 {over} 条超过 max_length {limit}</translation>
    </message>
    <message>
        <source>No run folder {run} was found.</source>
        <translation>找不到训练任务文件夹 {run}。</translation>
    </message>
    <message>
        <source>List runs with: finetune-studio-cli runs</source>
        <translation>用这个命令列出训练任务：finetune-studio-cli runs</translation>
    </message>
    <message>
        <source>Exported to {folder} and {archive}</source>
        <translation>已导出到 {folder} 和 {archive}</translation>
    </message>
    <message>
        <source>Exported to {folder}</source>
        <translation>已导出到 {folder}</translation>
    </message>
    <message>
        <source>Logged to MLflow as {uri}</source>
        <translation>已记录到 MLflow：{uri}</translation>
    </message>
    <message>
        <source>Verified: reloaded in a fresh process, outputs on {count} examples differ by at most {diff}.</source>
        <translation>校验通过：在新进程中重新加载后，{count} 个样本的输出最多相差 {diff}。</translation>
    </message>
    <message>
        <source>No run or model folder {model} was found.</source>
        <translation>找不到训练或模型文件夹 {model}。</translation>
    </message>
    <message>
        <source>{file} exists.</source>
        <translation>{file} 已存在。</translation>
    </message>
    <message>
        <source>Choose another output name, or add --force to replace it.</source>
        <translation>请换一个输出文件名，或加上 --force 覆盖它。</translation>
    </message>
    <message>
        <source>loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>perplexity</source>
        <translation>困惑度</translation>
    </message>
    <message>
        <source>(BLEU and chrF over the first {count} rows)</source>
        <translation>（BLEU 和 chrF 基于前 {count} 行）</translation>
    </message>
    <message>
        <source>prompt:     {text}</source>
        <translation>提示：     {text}</translation>
    </message>
    <message>
        <source>reference:  {text}</source>
        <translation>参考答案： {text}</translation>
    </message>
    <message>
        <source>fine-tuned: {text}</source>
        <translation>微调后：   {text}</translation>
    </message>
    <message>
        <source>{run} has no evaluation.</source>
        <translation>{run} 没有评估结果。</translation>
    </message>
    <message>
        <source>Wrong, the most confident first ({count} in all):</source>
        <translation>判断错误的数据，最有把握的在前（共 {count} 行）：</translation>
    </message>
    <message>
        <source>Finetune Studio is running ({what}), and PyTorch cannot be replaced while it is in use.</source>
        <translation>Finetune Studio 正在运行（{what}），PyTorch 正在使用中，无法替换。</translation>
    </message>
    <message>
        <source>Close the app and stop command-line runs, then run doctor --fix again.</source>
        <translation>请关闭应用并停止命令行中的训练，然后再运行 doctor --fix。</translation>
    </message>
    <message>
        <source>Installing PyTorch</source>
        <translation>正在安装 PyTorch</translation>
    </message>
    <message>
        <source>Proved: a matrix multiplication ran on {device} in {seconds} s.</source>
        <translation>验证成功：在 {device} 上完成一次矩阵乘法，用时 {seconds} 秒。</translation>
    </message>
    <message>
        <source>One machine: {command}</source>
        <translation>单台机器：{command}</translation>
    </message>
    <message>
        <source>Slurm: cd {folder} &amp;&amp; sbatch job.sbatch</source>
        <translation>Slurm：cd {folder} &amp;&amp; sbatch job.sbatch</translation>
    </message>
    <message>
        <source>The run folder ends up in {folder}; import it with: finetune-studio-cli runs --import FOLDER</source>
        <translation>训练任务文件夹会出现在 {folder} 中；用这条命令导入：finetune-studio-cli runs --import FOLDER</translation>
    </message>
    <message>
        <source>Imported as {folder}.</source>
        <translation>已导入为 {folder}。</translation>
    </message>
    <message>
        <source>No runs in {folder}.</source>
        <translation>{folder} 中没有训练任务。</translation>
    </message>
    <message>
        <source>The data file {file} does not exist.</source>
        <translation>数据文件 {file} 不存在。</translation>
    </message>
    <message>
        <source>Check the path.</source>
        <translation>请检查路径。</translation>
    </message>
    <message>
        <source>warning: {field}: {problem}</source>
        <translation>警告：{field}：{problem}</translation>
    </message>
    <message>
        <source>No stopped or interrupted run of {config} with a checkpoint was found in {folder}.</source>
        <translation>在 {folder} 中没有找到 {config} 已停止或中断、且有检查点的训练任务。</translation>
    </message>
    <message>
        <source>Start it without --resume, or pass the config.toml inside the run folder to resume.</source>
        <translation>请去掉 --resume 重新开始，或者传入训练任务文件夹里的 config.toml 来继续训练。</translation>
    </message>
    <message>
        <source>Ending the training process now; the run keeps its last checkpoint.</source>
        <translation>正在立即结束训练进程；训练任务保留最后一个检查点。</translation>
    </message>
    <message>
        <source>Details: {file}</source>
        <translation>详细信息：{file}</translation>
    </message>
    <message>
        <source>base model: {text}</source>
        <translation>基础模型： {text}</translation>
    </message>
    <message>
        <source>OK: {headline}</source>
        <translation>正常：{headline}</translation>
    </message>
    <message>
        <source>Needs attention: {headline}</source>
        <translation>需要处理：{headline}</translation>
    </message>
    <message>
        <source>(resumable)</source>
        <translation>（可继续）</translation>
    </message>
    <message>
        <source>Stopped at once. A run can resume from its last checkpoint with --resume.</source>
        <translation>已立即停止。可以用 --resume 从最后一个检查点继续训练。</translation>
    </message>
    <message>
        <source>Check that the path exists and that you may write there, then try again.</source>
        <translation>请确认路径存在且你有写入权限，然后再试。</translation>
    </message>
    <message>
        <source>Finetune Studio stopped with an unexpected error: {error}</source>
        <translation>Finetune Studio 因意外错误而停止：{error}</translation>
    </message>
    <message>
        <source>The details are in {file}; please attach that file when you report the problem.</source>
        <translation>详细信息在 {file} 中；报告问题时请附上这个文件。</translation>
    </message>
    <message>
        <source>{step}...</source>
        <translation>{step}……</translation>
    </message>
    <message>
        <source>Run folder: {folder}</source>
        <translation>训练任务文件夹：{folder}</translation>
    </message>
    <message>
        <source>Start a new run from this config without --resume.</source>
        <translation>请不加 --resume，用这份配置开始新的训练。</translation>
    </message>
    <message>
        <source>Stopped. The run folder is {folder}.</source>
        <translation>已停止。训练任务文件夹是 {folder}。</translation>
    </message>
    <message>
        <source>Stopped before training began; no run folder was kept.</source>
        <translation>在训练开始前就已停止；没有保留训练任务文件夹。</translation>
    </message>
    <message>
        <source>{label} called {predicted} ({confidence:.0%}): {text}</source>
        <translation>{label} 被判为 {predicted}（{confidence:.0%}）：{text}</translation>
    </message>
    <message>
        <source>Fix it with: finetune-studio-cli doctor --fix   (runs: {command})</source>
        <translation>修复方法：finetune-studio-cli doctor --fix   （会执行：{command}）</translation>
    </message>
    <message>
        <source>A file could not be read or written: {error} ({file}).</source>
        <translation>无法读写文件：{error}（{file}）。</translation>
    </message>
    <message>
        <source>A file could not be read or written: {error}.</source>
        <translation>无法读写文件：{error}。</translation>
    </message>
    <message>
        <source>Training on {device}: {train} examples, {eval} for evaluation, {steps} steps, resuming at step {step}.</source>
        <translation>在 {device} 上训练：训练样本 {train} 个，评估样本 {eval} 个，共 {steps} 步，从第 {step} 步继续。</translation>
    </message>
    <message>
        <source>Training on {device}: {train} examples, {eval} for evaluation, {steps} steps.</source>
        <translation>在 {device} 上训练：训练样本 {train} 个，评估样本 {eval} 个，共 {steps} 步。</translation>
    </message>
    <message>
        <source>The run {run} cannot be resumed: it is {status} and has no checkpoint.</source>
        <translation>训练任务 {run} 无法继续：它的状态是 {status}，而且没有检查点。</translation>
    </message>
    <message>
        <source>The run {run} cannot be resumed: it is {status} and not stopped.</source>
        <translation>训练任务 {run} 无法继续：它的状态是 {status}，不是已停止。</translation>
    </message>
    <message>
        <source>Continue with: {command}</source>
        <translation>继续训练：{command}</translation>
    </message>
    <message>
        <source>precision</source>
        <translation>精确率</translation>
    </message>
    <message>
        <source>recall</source>
        <translation>召回率</translation>
    </message>
    <message>
        <source>rows</source>
        <translation>行数</translation>
    </message>
    <message>
        <source>Checkpoint saved at step {step}.</source>
        <translation>已在第 {step} 步保存检查点。</translation>
    </message>
    <message>
        <source>Starting with: {changes}.</source>
        <translation>开始时改为：{changes}。</translation>
    </message>
    <message>
        <source>Going on at step {step} with: {changes}.</source>
        <translation>在第 {step} 步继续，改为：{changes}。</translation>
    </message>
    <message>
        <source>Going back to the checkpoint at step {step} with: {changes}.</source>
        <translation>回到第 {step} 步的检查点，改为：{changes}。</translation>
    </message>
    <message>
        <source>Starting again from the beginning with: {changes}.</source>
        <translation>从头重新开始，改为：{changes}。</translation>
    </message>
    <message>
        <source>where to download from: hf (Hugging Face), mirror, modelscope or auto (default: the setting)</source>
        <translation>从哪里下载：hf（Hugging Face）、mirror（镜像站）、modelscope 或 auto（默认：按设置）</translation>
    </message>
    <message>
        <source>Labels that differ only in case were merged into one class each: {labels}.</source>
        <translation>只有大小写不同的标签已各自合并为一类：{labels}。</translation>
    </message>
    <message>
        <source>Labels that differ only in case are separate classes (rows of each): {labels}. If they are one class, tick &quot;Labels that differ only in case are one class&quot; under Columns (data.merge_label_case in a config).</source>
        <translation>只有大小写不同的标签被当作不同的类（各自的行数）：{labels}。如果它们是同一类，请在“列”下勾选“只有大小写不同的标签视为同一类”（配置文件中为 data.merge_label_case）。</translation>
    </message>
    <message>
        <source>Give those rows {fix}, or leave them out: tick &quot;Leave out rows with a blank text or no label&quot; under Columns (data.drop_bad_rows = true in a config).</source>
        <translation>请为这些行补上{fix}，或跳过它们：在“列”下勾选“跳过文本为空或没有标签的行”（配置文件中为 data.drop_bad_rows = true）。</translation>
    </message>
    <message>
        <source>Rows with no readable prompt, chosen and rejected answer ({count}): {rows}.</source>
        <translation>读不出提示词、选中回答和被拒回答的行（{count} 行）：{rows}。</translation>
    </message>
    <message>
        <source>Rows whose chosen answer is the rejected one ({count}): {rows}. Such a pair teaches nothing.</source>
        <translation>选中回答与被拒回答相同的行（{count} 行）：{rows}。这样的偏好对什么也学不到。</translation>
    </message>
    <message>
        <source>Rows with an empty answer ({count}): {rows}.</source>
        <translation>有空回答的行（{count} 行）：{rows}。</translation>
    </message>
    <message>
        <source>Rows whose prompt alone fills the max length of {max} tokens, so that both answers would be cut to nothing ({count}): {rows}.</source>
        <translation>仅提示词就占满了 {max} 个词元的最大长度、两个回答都会被截成空的行（{count} 行）：{rows}。</translation>
    </message>
    <message>
        <source>The max length of {max} tokens cuts the answers of {count} of {total} pairs ({share:.0%}): {rows}.</source>
        <translation>{max} 个词元的最大长度会截断 {total} 个偏好对中 {count} 个的回答（{share:.0%}）：{rows}。</translation>
    </message>
    <message>
        <source>llama.cpp could not be installed (pip exit code {code}). Check the connection (or the pip mirror), then try again; on Linux, pip can also build it with a C++ compiler.</source>
        <translation>无法安装 llama.cpp（pip 退出码 {code}）。请检查网络连接（或 pip 镜像）后重试；在 Linux 上，pip 也可以用 C++ 编译器自行编译它。</translation>
    </message>
    <message>
        <source>llama.cpp is installed: GGUF files can be checked now.</source>
        <translation>llama.cpp 已安装：现在可以校验 GGUF 文件了。</translation>
    </message>
    <message>
        <source>The install of llama.cpp was cancelled; nothing else changed.</source>
        <translation>已取消安装 llama.cpp，其他内容没有改变。</translation>
    </message>
    <message>
        <source>Check the network, or switch the source: --source mirror (https://hf-mirror.com) or --source modelscope, or HF_ENDPOINT; or give a local model folder.</source>
        <translation>请检查网络，或换一个来源：--source mirror（https://hf-mirror.com）或 --source modelscope，或设置 HF_ENDPOINT；也可以给出本地模型文件夹。</translation>
    </message>
    <message>
        <source>{source} ({host})</source>
        <translation>{source}（{host}）</translation>
    </message>
    <message>
        <source>Check the network, or switch the source (a mirror such as https://hf-mirror.com, or ModelScope) in Settings &gt; Model sources, or pick a local model folder.</source>
        <translation>请检查网络，或在“设置 &gt; 模型下载源”中换一个来源（镜像站如 https://hf-mirror.com，或魔搭），也可以选择本地模型文件夹。</translation>
    </message>
    <message>
        <source>no answer</source>
        <translation>没有应答</translation>
    </message>
    <message>
        <source>the name {host} could not be looked up: no network, or no DNS</source>
        <translation>无法解析域名 {host}：没有网络或没有 DNS</translation>
    </message>
    <message>
        <source>the connection was refused</source>
        <translation>连接被拒绝</translation>
    </message>
    <message>
        <source>its certificate is not trusted on this computer</source>
        <translation>它的证书在这台电脑上不受信任</translation>
    </message>
    <message>
        <source>no network</source>
        <translation>没有网络</translation>
    </message>
    <message>
        <source>The search for {query} could not run: {source} did not answer within {seconds} s ({problem}).</source>
        <translation>无法搜索 {query}：{source} 在 {seconds} 秒内没有应答（{problem}）。</translation>
    </message>
    <message>
        <source>{name} is not on this computer, and {source} did not answer within {seconds} s ({problem}).</source>
        <translation>{name} 不在这台电脑上，而 {source} 在 {seconds} 秒内没有应答（{problem}）。</translation>
    </message>
    <message>
        <source>{file} of {name} arrived damaged from {source} each time it was fetched: its bytes do not match the hub&apos;s checksum, so it was deleted.</source>
        <translation>{name} 的 {file} 每次从 {source} 下载都已损坏：其内容与模型库公布的校验和不符，因此已删除。</translation>
    </message>
    <message>
        <source>Unverified: only {agree} of {total} answers agree with transformers on the first {tokens} tokens ({needed} needed).</source>
        <translation>未通过校验：{total} 个回答中只有 {agree} 个在前 {tokens} 个词元上与 transformers 一致（需要 {needed} 个）。</translation>
    </message>
    <message>
        <source>For &quot;{prompt}&quot; the answers part at token {index}: transformers wrote &quot;{expected}&quot;, llama.cpp wrote &quot;{got}&quot;.</source>
        <translation>对于“{prompt}”，两边的回答从第 {index} 个词元开始不同：transformers 写的是“{expected}”，llama.cpp 写的是“{got}”。</translation>
    </message>
    <message>
        <source>llama.cpp (the llama-cpp-python package) is not installed.</source>
        <translation>未安装 llama.cpp（llama-cpp-python 包）。</translation>
    </message>
    <message>
        <source>the checking process ended without an answer (exit code {code}): {error}</source>
        <translation>校验进程没有给出结果就结束了（退出码 {code}）：{error}</translation>
    </message>
    <message>
        <source>Not verified: {reason}</source>
        <translation>未校验：{reason}</translation>
    </message>
    <message>
        <source>Unverified: {reason}</source>
        <translation>未通过校验：{reason}</translation>
    </message>
    <message>
        <source>Verified by llama.cpp: {agree} of {total} answers agree with transformers on the first {tokens} tokens (at least {needed} needed).</source>
        <translation>已由 llama.cpp 校验：{total} 个回答中有 {agree} 个在前 {tokens} 个词元上与 transformers 一致（至少需要 {needed} 个）。</translation>
    </message>
    <message>
        <source>llama.cpp reads the prompt &quot;{prompt}&quot; as other tokens than transformers: the tokenizer in the file differs. transformers wrote &quot;{expected}&quot;, llama.cpp wrote &quot;{got}&quot;.</source>
        <translation>llama.cpp 把提示词“{prompt}”切分成了与 transformers 不同的词元：文件里的分词器不一样。transformers 写的是“{expected}”，llama.cpp 写的是“{got}”。</translation>
    </message>
    <message>
        <source>llama.cpp could not load or run the file: {error}</source>
        <translation>llama.cpp 无法加载或运行这个文件：{error}</translation>
    </message>
    <message>
        <source>the model could not be run by transformers to compare with: {error}</source>
        <translation>无法用 transformers 运行模型来对比：{error}</translation>
    </message>
    <message>
        <source>the check by llama.cpp was skipped.</source>
        <translation>跳过了 llama.cpp 的校验。</translation>
    </message>
    <message>
        <source>Unknown GGUF quantization {quant}; use f16, q8_0 or q4_k_m.</source>
        <translation>未知的 GGUF 量化方式 {quant}；请使用 f16、q8_0 或 q4_k_m。</translation>
    </message>
    <message>
        <source>Pick a chat model such as Qwen (Qwen/Qwen2.5-0.5B-Instruct), or one of your finished chat runs.</source>
        <translation>请选择对话模型，例如 Qwen（Qwen/Qwen2.5-0.5B-Instruct），或你自己训练完成的对话模型。</translation>
    </message>
    <message>
        <source>{model} cannot be used for preference tuning: it is not a decoder model that writes text ({kind}), and preference tuning teaches a chat model which of its answers is better.</source>
        <translation>{model} 不能用于偏好微调：它不是能生成文本的解码器模型（{kind}），而偏好微调是教对话模型分辨自己的哪个回答更好。</translation>
    </message>
    <message>
        <source>Left out {bad} of {total} rows of {source}: {problems}</source>
        <translation>已跳过 {source} 的 {total} 行中的 {bad} 行：{problems}</translation>
    </message>
    <message>
        <source>A max length of {keep} keeps 95% of the pairs whole.</source>
        <translation>最大长度设为 {keep} 可让 95% 的样本对保持完整。</translation>
    </message>
    <message>
        <source>{source}: {problems}</source>
        <translation>{source}：{problems}</translation>
    </message>
    <message>
        <source>Correct those rows, or leave them out: tick &quot;Leave out rows with a blank text or no label&quot; under Columns (data.drop_bad_rows = true in a config).</source>
        <translation>请修正这些行，或者跳过它们：在“列”下勾选“跳过文本为空或没有标签的行”（配置文件中为 data.drop_bad_rows = true）。</translation>
    </message>
    <message>
        <source>Map chosen and rejected to the columns that hold the two answers (and prompt to the prompt&apos;s, when the answers do not hold the whole conversation).</source>
        <translation>把 chosen 和 rejected 映射到存放两个回答的列（如果回答里没有整段对话，再把 prompt 映射到提示词所在的列）。</translation>
    </message>
    <message>
        <source>Left out {count} pairs of {source} whose prompt fills the max length.</source>
        <translation>已跳过 {source} 中提示词占满最大长度的 {count} 个偏好对。</translation>
    </message>
    <message>
        <source>No pair of {source} has room for its answers within {length} tokens.</source>
        <translation>{source} 中没有一个偏好对能在 {length} 个词元内放下回答。</translation>
    </message>
    <message>
        <source>Publish again: large files the hub already received are not sent again.</source>
        <translation>请再次发布：模型中心已收到的大文件不会重新上传。</translation>
    </message>
    <message>
        <source>{source} does not take uploads: it only mirrors downloads.</source>
        <translation>{source} 不接受上传：它只镜像下载。</translation>
    </message>
    <message>
        <source>Publish to Hugging Face itself: choose Hugging Face in Settings &gt; Model sources (command line: --endpoint {url}).</source>
        <translation>请直接发布到 Hugging Face：在“设置 &gt; 模型来源”中选择 Hugging Face（命令行：--endpoint {url}）。</translation>
    </message>
    <message>
        <source>{names} and {count} more</source>
        <translation>{names} 等另外 {count} 个</translation>
    </message>
    <message>
        <source>{source}: {count} rows name no picture in column &quot;{column}&quot; ({rows}).</source>
        <translation>{source}：{count} 行在列“{column}”中没有指明图片（{rows}）。</translation>
    </message>
    <message>
        <source>a picture</source>
        <translation>一张图片</translation>
    </message>
    <message>
        <source>{source}: 1 row names no picture in column &quot;{column}&quot; ({rows}).</source>
        <translation>{source}：1 行在列“{column}”中没有指明图片（{rows}）。</translation>
    </message>
    <message>
        <source>Map {role} to the column that holds the pictures.</source>
        <translation>请把 {role} 对应到存放图片的列。</translation>
    </message>
    <message>
        <source>Left out: {problem}</source>
        <translation>已跳过：{problem}</translation>
    </message>
    <message>
        <source>{folder} holds no pictures.</source>
        <translation>{folder} 中没有图片。</translation>
    </message>
    <message>
        <source>Choose the folder with the pictures (.jpg, .png, .webp ...).</source>
        <translation>请选择存放图片（.jpg、.png、.webp 等）的文件夹。</translation>
    </message>
    <message>
        <source>{folder} holds no class folders with pictures in them.</source>
        <translation>{folder} 中没有装着图片的类别文件夹。</translation>
    </message>
    <message>
        <source>Put the pictures of each class in a folder of its own named after the class, e.g. {folder}/cat/1.jpg and {folder}/dog/2.jpg.</source>
        <translation>请把每个类别的图片放进以该类别命名的文件夹，例如 {folder}/cat/1.jpg 和 {folder}/dog/2.jpg。</translation>
    </message>
    <message>
        <source>Checking {count} pictures</source>
        <translation>正在检查 {count} 张图片</translation>
    </message>
    <message>
        <source>Replace or remove those pictures, or leave them out: tick &quot;Leave out rows with a missing or unreadable picture, or no label&quot; under Columns (data.drop_bad_rows = true in a config).</source>
        <translation>请替换或删除这些图片，或跳过它们：在“列”下勾选“跳过缺少图片、图片无法读取或没有标签的行”（配置中为 data.drop_bad_rows = true）。</translation>
    </message>
    <message>
        <source>The folder {folder} could not be read: {error}</source>
        <translation>无法读取文件夹 {folder}：{error}</translation>
    </message>
    <message>
        <source>Check that the folder exists and that you may read it.</source>
        <translation>请确认该文件夹存在，并且你有权读取它。</translation>
    </message>
    <message>
        <source>Check that the column {column} names the pictures, and that they are there.</source>
        <translation>请确认列 {column} 指明了图片，并且这些图片确实存在。</translation>
    </message>
    <message>
        <source>{source}: {count} rows have no conversation that can be read in column &quot;{column}&quot; ({rows}): each needs an assistant reply, and as many pictures as image parts.</source>
        <translation>{source}：列“{column}”中有 {count} 行没有可读取的对话（{rows}）：每行都需要一条助手回复，且图片数量要与图片占位数量相同。</translation>
    </message>
    <message>
        <source>{source}: 1 row has no conversation that can be read in column &quot;{column}&quot; ({rows}): it needs an assistant reply, and as many pictures as image parts.</source>
        <translation>{source}：列“{column}”中有 1 行没有可读取的对话（{rows}）：它需要一条助手回复，且图片数量要与图片占位数量相同。</translation>
    </message>
    <message>
        <source>{source}: 1 picture is very large (over 40 megapixels) ({rows}).</source>
        <translation>{source}：1 张图片非常大（超过 4000 万像素）（{rows}）。</translation>
    </message>
    <message>
        <source>row {row}</source>
        <translation>第 {row} 行</translation>
    </message>
    <message>
        <source>The first was looked for at {path} (a relative path in a table is read from the table&apos;s own folder).</source>
        <translation>第一张是在 {path} 查找的（表格中的相对路径相对于表格自己所在的文件夹）。</translation>
    </message>
    <message>
        <source>{source}: 1 picture is missing ({rows}).</source>
        <translation>{source}：1 张图片不存在（{rows}）。</translation>
    </message>
    <message>
        <source>{source}: 1 file is not a picture that can be read ({rows}).</source>
        <translation>{source}：1 个文件不是可读取的图片（{rows}）。</translation>
    </message>
    <message>
        <source>{source}: 1 picture is cut short (truncated) ({rows}).</source>
        <translation>{source}：1 张图片不完整（被截断）（{rows}）。</translation>
    </message>
    <message>
        <source>{source}: 1 picture has CMYK or 16-bit pixels, which models read wrongly ({rows}).</source>
        <translation>{source}：1 张图片是 CMYK 或 16 位像素，模型会读错（{rows}）。</translation>
    </message>
    <message>
        <source>Check that the conversations name their pictures, and that they are there.</source>
        <translation>请确认对话指明了其中的图片，并且这些图片确实存在。</translation>
    </message>
    <message>
        <source>{folder} holds the data&apos;s parts ({parts}), each with its class folders, not one folder per class.</source>
        <translation>{folder} 中是数据的各个部分（{parts}），每部分各有类别文件夹，而不是每个类别一个文件夹。</translation>
    </message>
    <message>
        <source>Choose {folder}/{train} as the data, and the other part as the evaluation files (validation.files in a config).</source>
        <translation>请选择 {folder}/{train} 作为数据，另一部分作为评估文件（配置中为 validation.files）。</translation>
    </message>
    <message>
        <source>Pick a vision-language model such as SmolVLM (HuggingFaceTB/SmolVLM-256M-Instruct) or Qwen2-VL (Qwen/Qwen2-VL-2B-Instruct).</source>
        <translation>请选择视觉语言模型，例如 SmolVLM（HuggingFaceTB/SmolVLM-256M-Instruct）或 Qwen2-VL（Qwen/Qwen2-VL-2B-Instruct）。</translation>
    </message>
    <message>
        <source>{model} cannot be used for vision-language fine-tuning: it does not read pictures beside text ({kind}).</source>
        <translation>{model} 不能用于视觉语言微调：它不能在文本之外读取图片（{kind}）。</translation>
    </message>
    <message>
        <source>{model} cannot be used for image classification: it does not see pictures ({kind}).</source>
        <translation>{model} 不能用于图像分类：它不读取图片（{kind}）。</translation>
    </message>
    <message>
        <source>The model folder {folder} has no preprocessor_config.json; without it the pictures cannot be resized and scaled the way the model was trained to see them.</source>
        <translation>模型文件夹 {folder} 中没有 preprocessor_config.json；没有它，就无法按模型训练时的方式缩放和归一化图片。</translation>
    </message>
    <message>
        <source>Copy preprocessor_config.json from where the model came from into the folder, or pick the model&apos;s complete folder.</source>
        <translation>请从模型的来源处把 preprocessor_config.json 复制到该文件夹，或选择模型的完整文件夹。</translation>
    </message>
    <message>
        <source>Left out {count} rows of {source} whose prompt is longer than the max length ({length} tokens) ({rows}).</source>
        <translation>已略去 {source} 中 {count} 行提示词长度超过最大长度（{length} 个词元）的数据（{rows}）。</translation>
    </message>
    <message>
        <source>No prompt of {source} fits within the max length ({length} tokens), the system prompt included.</source>
        <translation>{source} 中没有一个提示词（含系统提示词）在最大长度（{length} 个词元）以内。</translation>
    </message>
    <message>
        <source>Raise training.max_length (Memory &amp; speed), or shorten the prompts.</source>
        <translation>请调高 training.max_length（“内存与速度”），或缩短提示。</translation>
    </message>
    <message>
        <source>This model reads pictures at one size of its own; images.resolution ({pixels} pixels) is not used.</source>
        <translation>该模型以自己固定的尺寸读取图片；不使用 images.resolution（{pixels} 像素）。</translation>
    </message>
    <message>
        <source>Every training row is longer than the max length of {limit} tokens with its picture ({tokens} tokens a picture).</source>
        <translation>加上图片后，每个训练行都超过最大长度 {limit} 个词元（每张图片 {tokens} 个词元）。</translation>
    </message>
    <message>
        <source>Raise the max length on Memory &amp; speed, or lower images.resolution.</source>
        <translation>请在“内存与速度”中提高最大长度，或降低 images.resolution。</translation>
    </message>
    <message>
        <source>Left out {count} of {total} {part} rows longer than the max length of {limit} tokens with their picture ({where}).</source>
        <translation>已跳过 {total} 行 {part} 数据中的 {count} 行：加上图片后超过最大长度 {limit} 个词元（{where}）。</translation>
    </message>
    <message>
        <source>picture {number}</source>
        <translation>图片 {number}</translation>
    </message>
    <message>
        <source>{model} cannot be used for image classification: its architecture has no such head.</source>
        <translation>{model} 不能用于图像分类：它的架构没有这种输出头。</translation>
    </message>
    <message>
        <source>{model} cannot be used for vision-language fine-tuning: its architecture does not read pictures and text.</source>
        <translation>{model} 不能用于视觉语言微调：它的架构不能同时读取图片和文本。</translation>
    </message>
    <message>
        <source>Pick a vision-language model such as SmolVLM, Qwen2-VL or Gemma 3.</source>
        <translation>请选择视觉语言模型，例如 SmolVLM、Qwen2-VL 或 Gemma 3。</translation>
    </message>
    <message>
        <source>The image processor of {model} could not be loaded: {error}</source>
        <translation>无法加载 {model} 的图像处理器：{error}</translation>
    </message>
    <message>
        <source>{repo} already holds files ({names}); nothing was sent.</source>
        <translation>{repo} 中已有文件（{names}）；未上传任何内容。</translation>
    </message>
    <message>
        <source>Publish to a new repository, or let this one be replaced (files of the same names are overwritten, the others deleted; command line: --replace).</source>
        <translation>请发布到新仓库，或允许替换此仓库的内容（同名文件被覆盖，其余被删除；命令行：--replace）。</translation>
    </message>
    <message>
        <source>The upload to {source} stopped: {problem}.</source>
        <translation>上传到{source}中断：{problem}。</translation>
    </message>
    <message>
        <source>Publishing needs a Hugging Face token, and none is saved.</source>
        <translation>发布需要 Hugging Face 令牌，但尚未保存。</translation>
    </message>
    <message>
        <source>Make one with the Write role at {page} and add it in Settings &gt; Model sources (or set HF_TOKEN).</source>
        <translation>请在 {page} 创建一个具有 Write 权限的令牌，并在“设置 &gt; 模型来源”中添加（或设置 HF_TOKEN）。</translation>
    </message>
    <message>
        <source>The saved Hugging Face token of {user} may only read; publishing needs one that may write.</source>
        <translation>已保存的 {user} 的 Hugging Face 令牌只能读取；发布需要可写入的令牌。</translation>
    </message>
    <message>
        <source>Make a token with the Write role at {page} and save it in Settings &gt; Model sources.</source>
        <translation>请在 {page} 创建一个具有 Write 权限的令牌，并保存到“设置 &gt; 模型来源”。</translation>
    </message>
    <message>
        <source>Hugging Face did not answer the question of who the token is.</source>
        <translation>Hugging Face 没有回答该令牌属于谁。</translation>
    </message>
    <message>
        <source>Try again in a while.</source>
        <translation>请稍后再试。</translation>
    </message>
    <message>
        <source>{source} does not let this token write to {repo}.</source>
        <translation>{source} 不允许此令牌写入 {repo}。</translation>
    </message>
    <message>
        <source>Publish under your own account or an organization you may write to, or use a token that may write there.</source>
        <translation>请发布到你自己的账号或你有写入权限的组织下，或使用可写入该处的令牌。</translation>
    </message>
    <message>
        <source>{source} refused the upload to {repo}: {reason}</source>
        <translation>{source} 拒绝了上传到 {repo}：{reason}</translation>
    </message>
    <message>
        <source>Publishing cancelled; the repository was not changed.</source>
        <translation>已取消发布；仓库未被更改。</translation>
    </message>
    <message>
        <source>Publish again to go on: large files the hub already received are not sent again.</source>
        <translation>再次发布即可继续：模型中心已收到的大文件不会重新上传。</translation>
    </message>
    <message>
        <source>{source} refused the saved Hugging Face token (it may be mistyped or deleted).</source>
        <translation>{source} 拒绝了已保存的 Hugging Face 令牌（可能输错或已删除）。</translation>
    </message>
    <message>
        <source>Make a new one with the Write role at {page} and save it in Settings &gt; Model sources.</source>
        <translation>请在 {page} 新建一个具有 Write 权限的令牌，并保存到“设置 &gt; 模型来源”。</translation>
    </message>
    <message>
        <source>ModelScope refused the upload: {reason}</source>
        <translation>魔搭（ModelScope）拒绝了上传：{reason}</translation>
    </message>
    <message>
        <source>Publish again later: the client resumes what it had sent.</source>
        <translation>请稍后再次发布：客户端会从已上传处继续。</translation>
    </message>
    <message>
        <source>Publishing to ModelScope needs a ModelScope token, and none is saved.</source>
        <translation>发布到魔搭（ModelScope）需要 ModelScope 令牌，但尚未保存。</translation>
    </message>
    <message>
        <source>Make one at {page} and add it in Settings &gt; Model sources (or set MODELSCOPE_API_TOKEN).</source>
        <translation>请在 {page} 创建令牌，并在“设置 &gt; 模型来源”中添加（或设置 MODELSCOPE_API_TOKEN）。</translation>
    </message>
    <message>
        <source>ModelScope did not say whose the token is.</source>
        <translation>魔搭（ModelScope）没有说明该令牌属于谁。</translation>
    </message>
    <message>
        <source>The files to publish must be in one folder, under their own names.</source>
        <translation>要发布的文件必须位于同一文件夹中，并保持各自的名称。</translation>
    </message>
    <message>
        <source>ModelScope does not let this token write there: {reason}</source>
        <translation>魔搭（ModelScope）不允许此令牌写入该处：{reason}</translation>
    </message>
    <message>
        <source>Publish under your own account, or use a token that may write there.</source>
        <translation>请发布到你自己的账号下，或使用可写入该处的令牌。</translation>
    </message>
    <message>
        <source>ModelScope refused the saved ModelScope token (it may be mistyped or expired).</source>
        <translation>魔搭（ModelScope）拒绝了已保存的 ModelScope 令牌（可能输错或已过期）。</translation>
    </message>
    <message>
        <source>Make a new one at {page} and save it in Settings &gt; Model sources.</source>
        <translation>请在 {page} 新建令牌，并保存到“设置 &gt; 模型来源”。</translation>
    </message>
    <message>
        <source>An image classifier&apos;s adapters cannot be loaded on their own: their new head does not fit the base model&apos;s.</source>
        <translation>图像分类器的适配器无法单独加载：它们的新输出头与基础模型的不匹配。</translation>
    </message>
    <message>
        <source>Export the merged model: it holds the adapters and the head, and loads anywhere.</source>
        <translation>请导出合并后的模型：它包含适配器和输出头，在任何地方都能加载。</translation>
    </message>
    <message>
        <source>The model was not logged to MLflow: {reason}. The exported folder is complete.</source>
        <translation>模型没有记录到 MLflow：{reason}。导出的文件夹是完整的。</translation>
    </message>
    <message>
        <source>Its final save was cut short (a full disk or a crash). Free some disk space if it is full, then resume the run: it goes on from its last good checkpoint and saves again.</source>
        <translation>它最后一次保存被中断了（磁盘已满或程序崩溃）。如果磁盘已满，请先释放一些空间，然后继续此训练：它会从最后一个完好的检查点接着训练并重新保存。</translation>
    </message>
    <message>
        <source>Ollama will not apply this model&apos;s chat format: its chat template could not be written in Ollama&apos;s template language so that it renders the same. llama.cpp (llama-cli -cnv) and LM Studio read the template in the file itself; for Ollama, add a TEMPLATE to the Modelfile by hand.</source>
        <translation>Ollama 不会套用这个模型的对话格式：它的对话模板无法写成渲染结果完全相同的 Ollama 模板语言。llama.cpp（llama-cli -cnv）和 LM Studio 会读取文件内的模板；要在 Ollama 中使用，请手动在 Modelfile 中加上 TEMPLATE。</translation>
    </message>
    <message>
        <source>Ollama: the Modelfile&apos;s template renders only {agree} of {total} prompts as the model&apos;s chat template does; Ollama&apos;s answers may differ. llama.cpp (llama-cli -cnv) and LM Studio use the model&apos;s own template.</source>
        <translation>Ollama：Modelfile 的模板在 {total} 个提示词中只有 {agree} 个渲染得与模型的对话模板完全相同；Ollama 的回答可能不同。llama.cpp（llama-cli -cnv）和 LM Studio 使用模型自带的模板。</translation>
    </message>
    <message>
        <source>Ollama: the Modelfile&apos;s template renders {agree} of {total} prompts as the model&apos;s chat template does, so Ollama asks the model what llama.cpp was asked.</source>
        <translation>Ollama：Modelfile 的模板把 {total} 个提示词中的 {agree} 个渲染得与模型的对话模板完全相同，所以 Ollama 向模型提的问题与 llama.cpp 验证时相同。</translation>
    </message>
    <message>
        <source>{quant} is made by llama.cpp&apos;s quantizer, and llama.cpp is not installed.</source>
        <translation>{quant} 需要由 llama.cpp 的量化器生成，但未安装 llama.cpp。</translation>
    </message>
    <message>
        <source>Install llama.cpp from the Export step (or: pip install llama-cpp-python), or choose q8_0.</source>
        <translation>请在“导出”步骤中安装 llama.cpp（或运行：pip install llama-cpp-python），或者选择 q8_0。</translation>
    </message>
    <message>
        <source>GGUF export of vision-language models is not supported yet: {run} would need its picture projector (mmproj) written and checked beside the language model.</source>
        <translation>暂不支持把视觉语言模型导出为 GGUF：{run} 需要在语言模型之外写出并校验其图片投影器（mmproj）。</translation>
    </message>
    <message>
        <source>exit code {code}</source>
        <translation>退出码 {code}</translation>
    </message>
    <message>
        <source>llama.cpp could not quantize the model: {error}</source>
        <translation>llama.cpp 无法量化这个模型：{error}</translation>
    </message>
    <message>
        <source>Export it as f16 or q8_0, which need no llama.cpp.</source>
        <translation>请导出为 f16 或 q8_0，它们不需要 llama.cpp。</translation>
    </message>
    <message>
        <source>GGUF export writes BPE tokenizers (byte-level or SentencePiece); this model&apos;s is {kind}.</source>
        <translation>GGUF 导出支持 BPE 分词器（字节级或 SentencePiece）；这个模型的是 {kind}。</translation>
    </message>
    <message>
        <source>This model&apos;s tokenizer falls back to bytes but lacks some of the 256 byte tokens.</source>
        <translation>这个模型的分词器会回退到字节，但缺少部分 256 个字节词元。</translation>
    </message>
    <message>
        <source>Export it as a folder: llama.cpp needs every byte token.</source>
        <translation>请把它导出为文件夹：llama.cpp 需要全部字节词元。</translation>
    </message>
    <message>
        <source>GGUF is written for Llama, Mistral, Qwen2, Qwen3, Gemma 2, Gemma 3, Phi-3 and GPT-2 models; export this one as a folder.</source>
        <translation>GGUF 导出支持 Llama、Mistral、Qwen2、Qwen3、Gemma 2、Gemma 3、Phi-3 和 GPT-2 模型；请把这个模型导出为文件夹。</translation>
    </message>
    <message>
        <source>GGUF export reads 16- and 32-bit weights; this model was saved quantized ({method}).</source>
        <translation>GGUF 导出读取 16 位和 32 位权重；这个模型保存时已被量化（{method}）。</translation>
    </message>
    <message>
        <source>Train with LoRA rather than QLoRA to export GGUF, or export this run as a folder.</source>
        <translation>要导出 GGUF，请用 LoRA 而不是 QLoRA 训练，或者把这次训练导出为文件夹。</translation>
    </message>
    <message>
        <source>GGUF export writes {architecture} models with a SentencePiece tokenizer; this one&apos;s is byte-level BPE.</source>
        <translation>GGUF 导出只支持使用 SentencePiece 分词器的 {architecture} 模型；这个模型的是字节级 BPE。</translation>
    </message>
    <message>
        <source>llama.cpp scales this Gemma model&apos;s attention by 1/sqrt({used}), transformers by 1/sqrt({scalar}) (query_pre_attn_scalar).</source>
        <translation>llama.cpp 对这个 Gemma 模型的注意力按 1/sqrt({used}) 缩放，transformers 按 1/sqrt({scalar})（query_pre_attn_scalar）。</translation>
    </message>
    <message>
        <source>llama.cpp runs Gemma 2 with its output layer tied to the embeddings; this model&apos;s is not.</source>
        <translation>llama.cpp 运行 Gemma 2 时输出层与嵌入层共享权重；这个模型的没有共享。</translation>
    </message>
    <message>
        <source>The model is the last step&apos;s, step {last_step}: {metric} {last:.4g} (the best checkpoint, step {step}, scored {value:.4g}).</source>
        <translation>模型是最后一步的，第 {last_step} 步：{metric} {last:.4g}（最佳检查点为第 {step} 步，得分 {value:.4g}）。</translation>
    </message>
    <message>
        <source>The last step&apos;s checkpoint of {run} was not kept.</source>
        <translation>{run} 没有保留最后一步的检查点。</translation>
    </message>
    <message>
        <source>Export the run&apos;s model, its best checkpoint.</source>
        <translation>请导出训练任务的模型，即它的最佳检查点。</translation>
    </message>
    <message>
        <source>{folder} is in the way and was not made by Finetune Studio, so it is left alone.</source>
        <translation>{folder} 挡住了去路，但它不是 Finetune Studio 创建的，因此不会动它。</translation>
    </message>
    <message>
        <source>Move it out of the run folder, then choose the last step again.</source>
        <translation>请把它移出运行文件夹，然后重新选择最后一步。</translation>
    </message>
    <message>
        <source>Cancelled; nothing was written.</source>
        <translation>已取消；没有写入任何内容。</translation>
    </message>
    <message>
        <source>The last step&apos;s model is damaged: {problem}.</source>
        <translation>最后一步的模型已损坏：{problem}。</translation>
    </message>
    <message>
        <source>Export the best checkpoint instead.</source>
        <translation>请改为导出最佳检查点。</translation>
    </message>
    <message>
        <source>The base model {model} is needed to merge the last step&apos;s adapters: {problem}</source>
        <translation>合并最后一步的适配器需要基础模型 {model}：{problem}</translation>
    </message>
    <message>
        <source>Install it (pip install mlflow-skinny, or mlflow for its UI too) or export without it.</source>
        <translation>请安装它（pip install mlflow-skinny；要界面则安装 mlflow），或不记录到 MLflow 直接导出。</translation>
    </message>
    <message>
        <source>Ollama is not installed: get it from {url}, then check again.</source>
        <translation>未安装 Ollama：请从 {url} 获取，然后重新检查。</translation>
    </message>
    <message>
        <source>Ollama is installed but not running: open the Ollama app (or run: ollama serve).</source>
        <translation>Ollama 已安装但没有运行：请打开 Ollama 应用（或运行：ollama serve）。</translation>
    </message>
    <message>
        <source>Ollama is not installed.</source>
        <translation>未安装 Ollama。</translation>
    </message>
    <message>
        <source>Get it from {url}.</source>
        <translation>请从 {url} 获取。</translation>
    </message>
    <message>
        <source>Adding the model to Ollama was cancelled.</source>
        <translation>已取消把模型添加到 Ollama。</translation>
    </message>
    <message>
        <source>Add it again when you like.</source>
        <translation>需要时可以再次添加。</translation>
    </message>
    <message>
        <source>Ollama did not take the model: {error}</source>
        <translation>Ollama 没有接受这个模型：{error}</translation>
    </message>
    <message>
        <source>Check that Ollama is running and up to date, then try again.</source>
        <translation>请确认 Ollama 正在运行且是最新版本，然后重试。</translation>
    </message>
    <message>
        <source>No column of the file names pictures; its columns are: {columns}.</source>
        <translation>文件中没有指明图片的列；它的列为：{columns}。</translation>
    </message>
    <message>
        <source>Name the column with the pictures&apos; paths (in the CLI: --column), or choose a folder of pictures.</source>
        <translation>请指明存放图片路径的列（命令行中用 --column），或选择一个图片文件夹。</translation>
    </message>
    <message>
        <source>{folder} is a folder; this model reads a file of rows.</source>
        <translation>{folder} 是一个文件夹；该模型读取的是按行排列的文件。</translation>
    </message>
    <message>
        <source>Choose a CSV, TSV, JSONL or Excel file (for a vision-language model: a picture and a question in each row).</source>
        <translation>请选择 CSV、TSV、JSONL 或 Excel 文件（视觉语言模型：每行一张图片和一个问题）。</translation>
    </message>
    <message>
        <source>No picture of the class {name} is left to train on: the model will not learn it.</source>
        <translation>类别 {name} 已没有可用于训练的图片：模型不会学到这个类别。</translation>
    </message>
    <message>
        <source>No picture of the classes {names} is left to train on: the model will not learn them.</source>
        <translation>类别 {names} 已没有可用于训练的图片：模型不会学到这些类别。</translation>
    </message>
    <message>
        <source>{source}: no row of the column &quot;{column}&quot; is a conversation this task reads.</source>
        <translation>{source}：“{column}”列中没有一行是本任务能读取的对话。</translation>
    </message>
    <message>
        <source>Each row needs a list of messages with &quot;role&quot; and &quot;content&quot; (or ShareGPT&apos;s &quot;from&quot; and &quot;value&quot;) and an assistant reply; for pictures, a picture for each image part or &lt;image&gt; in the text (an images column lists them).</source>
        <translation>每行需要一个消息列表，每条消息有 &quot;role&quot; 和 &quot;content&quot;（或 ShareGPT 的 &quot;from&quot; 和 &quot;value&quot;），并且有助手的回复；图片方面，每个图片部分或文本中的每个 &lt;image&gt; 都要对应一张图片（由 images 列列出）。</translation>
    </message>
    <message>
        <source>Each row needs a list of messages with &quot;role&quot; and &quot;content&quot; texts, and an assistant reply.</source>
        <translation>每行需要一个消息列表，每条消息有文本的 &quot;role&quot; 和 &quot;content&quot;，并且有助手的回复。</translation>
    </message>
    <message>
        <source>Give those rows {fix}, or leave them out: tick &quot;Leave out rows with a missing or unreadable picture, or no label&quot; under Columns (data.drop_bad_rows = true in a config).</source>
        <translation>请为这些行补上{fix}，或跳过它们：在“列”下勾选“跳过缺少图片、图片无法读取或没有标签的行”（配置文件中为 data.drop_bad_rows = true）。</translation>
    </message>
    <message>
        <source>{source}: {count} pictures are in HEIC (as iPhones save them), which cannot be read here: convert them to JPEG ({rows}).</source>
        <translation>{source}：{count} 张图片是 HEIC 格式（iPhone 的保存格式），这里无法读取：请转换为 JPEG（{rows}）。</translation>
    </message>
    <message>
        <source>Check that the folder holds pictures that open in a picture viewer.</source>
        <translation>请检查文件夹中的图片能否在看图软件中打开。</translation>
    </message>
    <message>
        <source>{source}: 1 picture is in HEIC (as iPhones save them), which cannot be read here: convert it to JPEG ({rows}).</source>
        <translation>{source}：1 张图片是 HEIC 格式（iPhone 的保存格式），这里无法读取：请转换为 JPEG（{rows}）。</translation>
    </message>
    <message>
        <source>{where}: {picture}</source>
        <translation>{where}：{picture}</translation>
    </message>
    <message>
        <source>{folder} is in the Hugging Face imagefolder layout: its labels are in {table}, not in the names of its folders.</source>
        <translation>{folder} 是 Hugging Face imagefolder 布局：标签在 {table} 中，而不是文件夹的名称。</translation>
    </message>
    <message>
        <source>Choose {table} as the data: its file_name column names the pictures, relative to its folder.</source>
        <translation>请选择 {table} 作为数据：其中的 file_name 列给出图片，路径相对于该文件所在的文件夹。</translation>
    </message>
    <message>
        <source>{model}&apos;s processor needs torchvision, which is not installed.</source>
        <translation>{model} 的处理器需要 torchvision，但尚未安装。</translation>
    </message>
    <message>
        <source>Install the torchvision built for your PyTorch, then start again: {command}</source>
        <translation>请安装与你的 PyTorch 匹配的 torchvision，然后重新开始：{command}</translation>
    </message>
    <message>
        <source>Install PyTorch and torchvision on the Environment step, then start again.</source>
        <translation>请在“运行环境”一步安装 PyTorch 和 torchvision，然后重新开始。</translation>
    </message>
    <message>
        <source>Copying the processor (how pictures and text are read)</source>
        <translation>正在复制处理器（图片和文本的读取方式）</translation>
    </message>
    <message>
        <source>GGUF is for decoder chat models (causal LM); {run} was trained for {task}.</source>
        <translation>GGUF 用于解码器对话模型（因果语言模型）；{run} 训练的是 {task}。</translation>
    </message>
    <message>
        <source>{file} is a picture; this model reads a file of rows.</source>
        <translation>{file} 是一张图片；这个模型读取的是按行组织的数据文件。</translation>
    </message>
    <message>
        <source>Check that each row holds a conversation ending in a question, and that its pictures are there (a file&apos;s paths are read from its own folder) and open in a picture viewer.</source>
        <translation>请检查每行是否包含以提问结尾的对话，以及其中的图片是否存在（文件中的路径相对于该文件所在的文件夹）并能在看图软件中打开。</translation>
    </message>
    <message>
        <source>Reading the files to publish</source>
        <translation>正在读取要发布的文件</translation>
    </message>
    <message>
        <source>Uploading</source>
        <translation>正在上传</translation>
    </message>
    <message>
        <source>Making the commit</source>
        <translation>正在提交</translation>
    </message>
    <message>
        <source>{files} files in one commit, {sent} sent. The repository is public.</source>
        <translation>一次提交 {files} 个文件，上传了 {sent}。仓库是公开的。</translation>
    </message>
    <message>
        <source>{files} files in one commit, {sent} sent. The repository is private.</source>
        <translation>一次提交 {files} 个文件，上传了 {sent}。仓库是私有的。</translation>
    </message>
    <message>
        <source>{folder} holds no files to publish.</source>
        <translation>{folder} 中没有可发布的文件。</translation>
    </message>
    <message>
        <source>{file} was not verified: llama.cpp&apos;s answers differed from the model&apos;s.</source>
        <translation>{file} 未通过验证：llama.cpp 的回答与模型的不同。</translation>
    </message>
    <message>
        <source>Publish the model folder instead, or export the GGUF again once the check passes.</source>
        <translation>请改为发布模型文件夹，或在检查通过后重新导出 GGUF。</translation>
    </message>
    <message>
        <source>{folder} holds no LoRA adapters.</source>
        <translation>{folder} 中没有 LoRA 适配器。</translation>
    </message>
    <message>
        <source>Export the run with its adapters alone (command line: export --adapter), or publish the folder.</source>
        <translation>请只导出该训练任务的适配器（命令行：export --adapter），或发布整个文件夹。</translation>
    </message>
    <message>
        <source>Unknown format {fmt}; use folder, gguf or adapter.</source>
        <translation>未知格式 {fmt}；请使用 folder、gguf 或 adapter。</translation>
    </message>
    <message>
        <source>The exported folder does not reproduce the run&apos;s outputs (largest difference {diff}); nothing was published.</source>
        <translation>导出的文件夹无法复现训练任务的输出（最大差异 {diff}）；未发布任何内容。</translation>
    </message>
    <message>
        <source>Export it from the Export step to see the details.</source>
        <translation>请在“导出”步骤中导出以查看详情。</translation>
    </message>
    <message>
        <source>Exporting</source>
        <translation>正在导出</translation>
    </message>
    <message>
        <source>The model in {folder} is not of a kind this app trains.</source>
        <translation>{folder} 中的模型不是本应用能训练的类型。</translation>
    </message>
    <message>
        <source>Open a text or image classifier, a causal language model, a sequence-to-sequence model or a vision-language model.</source>
        <translation>请打开文本或图像分类模型、因果语言模型、序列到序列模型或视觉语言模型。</translation>
    </message>
    <message>
        <source>{file} cannot be read: it is damaged or not a JSON file.</source>
        <translation>无法读取 {file}：文件已损坏，或不是 JSON 文件。</translation>
    </message>
    <message>
        <source>The model in {folder} could not be loaded: a file is missing or damaged.</source>
        <translation>无法载入 {folder} 中的模型：有文件缺失或已损坏。</translation>
    </message>
    <message>
        <source>{port} is not a port number.</source>
        <translation>{port} 不是有效的端口号。</translation>
    </message>
    <message>
        <source>Choose a port from 1024 to 65535, e.g. 8000.</source>
        <translation>请选择 1024 到 65535 之间的端口，例如 8000。</translation>
    </message>
    <message>
        <source>A server other computers can reach needs an API key.</source>
        <translation>其他电脑能访问的服务需要 API 密钥。</translation>
    </message>
    <message>
        <source>Serve on 127.0.0.1, or let the app make a key.</source>
        <translation>请只在 127.0.0.1 上提供服务，或让本应用生成一个密钥。</translation>
    </message>
    <message>
        <source>The server answers text models; {folder} is an image classifier.</source>
        <translation>服务器只为文本模型作答；{folder} 是图像分类器。</translation>
    </message>
    <message>
        <source>Label pictures with predict (a folder of pictures: finetune-studio-cli predict RUN FOLDER), or try them on the Export step.</source>
        <translation>请用 predict 给图片打标签（图片文件夹：finetune-studio-cli predict RUN FOLDER），或在“导出”步骤中试用。</translation>
    </message>
    <message>
        <source>Choose another port with --port, e.g. --port {port}.</source>
        <translation>请用 --port 换一个端口，例如 --port {port}。</translation>
    </message>
    <message>
        <source>The server cannot listen on {host}:{port}: {error}</source>
        <translation>服务无法在 {host}:{port} 上监听：{error}</translation>
    </message>
    <message>
        <source>Check the address: 127.0.0.1 is this computer only, 0.0.0.0 every network.</source>
        <translation>请检查地址：127.0.0.1 仅限本机，0.0.0.0 表示所有网络。</translation>
    </message>
    <message>
        <source>Port {port} on {host} is already in use by another program.</source>
        <translation>{host} 上的端口 {port} 已被其他程序占用。</translation>
    </message>
    <message>
        <source>Choose another port in the Port box, or stop the program that uses it.</source>
        <translation>请在“端口”框中换一个端口，或关闭占用它的程序。</translation>
    </message>
    <message>
        <source>classification, causal-lm, seq2seq, preference, grpo (reasoning with rewards), image-classification or vision-chat (pictures and text).</source>
        <translation>classification、causal-lm、seq2seq、preference、grpo（基于奖励的推理训练）、image-classification 或 vision-chat（图片与文本）。</translation>
    </message>
    <message>
        <source>must be 0 (never) or a number of evaluations.</source>
        <translation>必须为 0（从不）或评估次数。</translation>
    </message>
    <message>
        <source>must be above 0; 0.1 is usual.</source>
        <translation>必须大于 0；常用 0.1。</translation>
    </message>
    <message>
        <source>must be 0 (the model&apos;s own) or at least 28 pixels.</source>
        <translation>必须为 0（使用模型自己的尺寸）或至少 28 像素。</translation>
    </message>
    <message>
        <source>must be loss for this task: {metric} is a classification figure.</source>
        <translation>此任务只能用 loss：{metric} 是分类指标。</translation>
    </message>
    <message>
        <source>{file} is a folder; a folder of pictures is data for image classification, other tasks read files.</source>
        <translation>{file} 是一个文件夹；图片文件夹是图像分类的数据，其他任务读取文件。</translation>
    </message>
    <message>
        <source>Local data files: .csv .tsv .json .jsonl .parquet .txt .xlsx (relative to this file); for image classification also a folder with one folder of pictures per class.</source>
        <translation>本地数据文件：.csv .tsv .json .jsonl .parquet .txt .xlsx（相对于本文件）；图像分类还可以是每个类别一个图片文件夹的文件夹。</translation>
    </message>
    <message>
        <source>Drop rows with blank texts, missing labels or missing or unreadable pictures instead of stopping with an error.</source>
        <translation>跳过文本为空、没有标签或图片缺失、无法读取的行，而不是报错停止。</translation>
    </message>
    <message>
        <source>Prompt whose completion is learned; for preference pairs, the prompt both answers reply to.</source>
        <translation>要学习其续写的提示词；对偏好对而言，是两个回答所回应的提示词。</translation>
    </message>
    <message>
        <source>Preference pairs: the better answer (text, or a whole conversation as a list of messages).</source>
        <translation>偏好对：较好的回答（文本，或以消息列表表示的整段对话）。</translation>
    </message>
    <message>
        <source>Preference pairs: the worse answer to the same prompt.</source>
        <translation>偏好对：同一提示词下较差的回答。</translation>
    </message>
    <message>
        <source>Pictures: paths (relative to the data file) or the hub dataset&apos;s image column.</source>
        <translation>图片：路径（相对于数据文件）或模型中心数据集的图片列。</translation>
    </message>
    <message>
        <source>With evaluation rows: the run&apos;s model is its best checkpoint by best_metric, not the last step&apos;s (checkpoints are then saved on evaluations).</source>
        <translation>有评估数据时：运行的模型是按 best_metric 评出的最佳检查点，而不是最后一步的模型（检查点随评估保存）。</translation>
    </message>
    <message>
        <source>With evaluation rows: stop when best_metric has not improved for this many evaluations in a row; 0 = never stop early.</source>
        <translation>有评估数据时：best_metric 连续这么多次评估没有改进就停止；0 = 从不提前停止。</translation>
    </message>
    <message>
        <source>Make batches of examples of about the same length, so that little of each batch is padding (the examples are shuffled, sorted within groups of 50 batches, and the batches shuffled again). For padded batches: classification, sequence-to-sequence, and causal LM without padding-free batches.</source>
        <translation>把长度相近的样本放进同一批，每批里的填充就很少（先打乱样本，在每 50 批一组内按长度排序，再打乱各批的顺序）。适用于需要填充的批次：文本分类、序列到序列，以及未使用无填充批次的因果语言模型。</translation>
    </message>
    <message>
        <source>dpo (Direct Preference Optimization: the model moves away from a frozen copy of where it started toward the chosen answers) or orpo (Odds Ratio Preference Optimization: learns the chosen answers and prefers them in one loss, without a reference model: less memory).</source>
        <translation>dpo（直接偏好优化：以训练开始时的模型的冻结副本为参照，让模型向选中回答靠拢）或 orpo（优势比偏好优化：在一个损失里同时学习选中回答并偏向它，不需要参照模型：占用更少显存）。</translation>
    </message>
    <message>
        <source>How strongly the preference counts: DPO&apos;s beta (higher keeps the model closer to where it started; 0.1 is usual), ORPO&apos;s weight of the preference against learning the chosen answers (0.1 is usual).</source>
        <translation>偏好的权重：DPO 的 beta（越大，模型越接近训练开始时的样子；常用 0.1），ORPO 中偏好相对于学习选中回答的权重（常用 0.1）。</translation>
    </message>
    <message>
        <source>Image classification: show each training picture slightly changed each epoch (mirrored, cropped by up to a tenth, brightness varied), which helps with few pictures per class. Leave it off for pictures whose sides matter (text, documents, left and right).</source>
        <translation>图像分类：每一轮都把训练图片稍作变化后再给模型看（镜像、裁掉至多十分之一、调整亮度），每个类别图片不多时有帮助。若图片的左右方向有意义（文字、文档、左右之分），请关闭。</translation>
    </message>
    <message>
        <source>Vision-language: the longest side a picture is scaled to before the model reads it, in pixels (fewer pixels: fewer image tokens, less memory); 0 = the model&apos;s own. Models that read pictures at one fixed size (LLaVA, Gemma 3) keep theirs.</source>
        <translation>视觉语言：模型读取前把图片最长边缩放到的像素数（像素越少，图像词元越少，内存越省）；0 = 使用模型自己的尺寸。以固定尺寸读取图片的模型（LLaVA、Gemma 3）保持其尺寸。</translation>
    </message>
    <message>
        <source>Vision-language: also train the vision tower (more memory; usually left frozen).</source>
        <translation>视觉语言：同时训练视觉编码器（占用更多内存；通常保持冻结）。</translation>
    </message>
    <message>
        <source>The validation figure that picks the best checkpoint: {choices} (loss: lower is better; the others, for classification: higher is better).</source>
        <translation>选出最佳检查点的验证指标：{choices}（loss 越低越好；其余用于分类，越高越好）。</translation>
    </message>
    <message>
        <source>turns every reward off; give at least one a weight above 0.</source>
        <translation>关闭了所有奖励；请至少给一个奖励大于 0 的权重。</translation>
    </message>
    <message>
        <source>must be 2 or more: the answers to a prompt are compared.</source>
        <translation>必须为 2 或以上：同一提示词的回答要相互比较。</translation>
    </message>
    <message>
        <source>must be 1 or more tokens.</source>
        <translation>必须至少为 1 个词元。</translation>
    </message>
    <message>
        <source>must be above 0: the answers must differ to be compared; 0.7 to 1 is usual.</source>
        <translation>必须大于 0：回答要有差异才能比较；通常为 0.7 到 1。</translation>
    </message>
    <message>
        <source>must be 0 (no reference model) or more; 0.04 is the paper&apos;s.</source>
        <translation>必须为 0（无参考模型）或以上；论文用 0.04。</translation>
    </message>
    <message>
        <source>must be 0 (off) or more.</source>
        <translation>必须为 0（关闭）或以上。</translation>
    </message>
    <message>
        <source>must not be above grpo.length_max.</source>
        <translation>不能大于 grpo.length_max。</translation>
    </message>
    <message>
        <source>must divide batch size x gradient accumulation ({size}): each prompt&apos;s answers go in the same batch. Use {fits}, or change the batch size.</source>
        <translation>必须能整除批大小 × 梯度累积（{size}）：同一提示词的回答要在同一批中。请改用 {fits}，或调整批大小。</translation>
    </message>
    <message>
        <source>reference model (DPO)</source>
        <translation>参照模型（DPO）</translation>
    </message>
    <message>
        <source>Liger kernels need the liger-kernel package: pip install liger-kernel.</source>
        <translation>Liger 内核需要 liger-kernel 包：pip install liger-kernel。</translation>
    </message>
    <message>
        <source>Liger kernels run on an NVIDIA GPU only; turn them off on this computer.</source>
        <translation>Liger 内核只能在 NVIDIA GPU 上运行；请在这台电脑上关闭它。</translation>
    </message>
    <message>
        <source>Liger kernels need Triton, which has no official Windows builds: pip install triton-windows.</source>
        <translation>Liger 内核需要 Triton，而 Triton 没有官方的 Windows 版本：pip install triton-windows。</translation>
    </message>
    <message>
        <source>Liger kernels need Triton, which is not installed: pip install triton.</source>
        <translation>Liger 内核需要 Triton，但尚未安装：pip install triton。</translation>
    </message>
    <message>
        <source>LoRA adapts linear layers, and this model is a convolutional network with none outside its head: train it whole (LoRA off), or pick a vision transformer (ViT).</source>
        <translation>LoRA 只作用于线性层，而该模型是卷积网络，输出头之外没有线性层：请训练整个模型（关闭 LoRA），或选择视觉 Transformer（ViT）。</translation>
    </message>
    <message>
        <source>On this computer&apos;s CPU this saves RAM but makes every step slower (one example at a time, activations computed twice): use it only when RAM runs out.</source>
        <translation>在这台电脑的 CPU 上，这样能省内存，但每一步都会变慢（一次只处理一个样本，激活值要算两遍）：只在内存不够时使用。</translation>
    </message>
    <message>
        <source>The data folder is already {folder}.</source>
        <translation>数据文件夹已经是 {folder}。</translation>
    </message>
    <message>
        <source>{target} is inside the data folder, or holds it.</source>
        <translation>{target} 位于数据文件夹内，或包含数据文件夹。</translation>
    </message>
    <message>
        <source>Choose a folder beside it, for example on another drive.</source>
        <translation>请选择它之外的文件夹，例如另一个磁盘上的。</translation>
    </message>
    <message>
        <source>{target} is not empty.</source>
        <translation>{target} 不是空的。</translation>
    </message>
    <message>
        <source>Choose an empty or new folder: the data is moved into it, not merged.</source>
        <translation>请选择空文件夹或新文件夹：数据会移入其中，不会与已有内容合并。</translation>
    </message>
    <message>
        <source>The data needs {needed} GB and the drive of {target} has {free} GB free.</source>
        <translation>数据需要 {needed} GB，而 {target} 所在磁盘只剩 {free} GB。</translation>
    </message>
    <message>
        <source>Free some space there, or choose another drive.</source>
        <translation>请在那里腾出空间，或选择另一个磁盘。</translation>
    </message>
    <message>
        <source>{target} cannot be written: {error}</source>
        <translation>无法写入 {target}：{error}</translation>
    </message>
    <message>
        <source>Choose a folder you can write to.</source>
        <translation>请选择你有写入权限的文件夹。</translation>
    </message>
    <message>
        <source>The move was cancelled.</source>
        <translation>已取消移动。</translation>
    </message>
    <message>
        <source>Everything is where it was.</source>
        <translation>一切都保持原样。</translation>
    </message>
    <message>
        <source>Check that it still exists (a drive unplugged, a folder moved or renamed) and try again.</source>
        <translation>请确认它还在（驱动器是否已拔出、文件夹是否被移动或改名），然后重试。</translation>
    </message>
    <message>
        <source>Windows ran out of virtual memory while loading PyTorch&apos;s libraries: the paging file is too small (error 1455).</source>
        <translation>Windows 在加载 PyTorch 的库时虚拟内存不足：页面文件太小（错误 1455）。</translation>
    </message>
    <message>
        <source>Let Windows manage the paging file size (Advanced system settings &gt; Performance &gt; Settings &gt; Advanced &gt; Virtual memory), keep a few GB free on the system drive, restart Windows, then resume. Fewer data loader workers load PyTorch fewer times.</source>
        <translation>让 Windows 自动管理页面文件大小（高级系统设置 &gt; 性能 &gt; 设置 &gt; 高级 &gt; 虚拟内存），在系统盘上留出几 GB 空闲空间，重启 Windows 后继续训练。数据加载进程越少，加载 PyTorch 的次数也越少。</translation>
    </message>
    <message>
        <source>{file} was not found.</source>
        <translation>找不到 {file}。</translation>
    </message>
    <message>
        <source>A file was not found.</source>
        <translation>找不到一个文件。</translation>
    </message>
    <message>
        <source>Close the program that has it open (an editor, Excel, a file preview) and try again.</source>
        <translation>请关闭正在打开它的程序（编辑器、Excel、文件预览），然后重试。</translation>
    </message>
    <message>
        <source>{file} is in use by another program.</source>
        <translation>{file} 正被另一个程序使用。</translation>
    </message>
    <message>
        <source>A file is in use.</source>
        <translation>有一个文件正被使用。</translation>
    </message>
    <message>
        <source>Checkpoints are saved every {steps} steps, on evaluations, so that the best one can be kept.</source>
        <translation>检查点改为每 {steps} 步随评估保存，以便保留最佳检查点。</translation>
    </message>
    <message>
        <source>validation loss</source>
        <translation>验证损失</translation>
    </message>
    <message>
        <source>validation accuracy</source>
        <translation>验证准确率</translation>
    </message>
    <message>
        <source>validation macro-F1</source>
        <translation>验证宏平均 F1</translation>
    </message>
    <message>
        <source>Stopped early at step {step}: the {metric} had not improved since step {best}.</source>
        <translation>已在第 {step} 步提前停止：{metric}自第 {best} 步以来没有改进。</translation>
    </message>
    <message>
        <source>The model is the best checkpoint, step {step} of {last_step}: {metric} {value:.4g} (the last step scored {last:.4g}).</source>
        <translation>模型是最佳检查点，第 {step} 步（共 {last_step} 步）：{metric} {value:.4g}（最后一步为 {last:.4g}）。</translation>
    </message>
    <message>
        <source>The model is the last step&apos;s, step {step}, which scored best: {metric} {value:.4g}.</source>
        <translation>模型是最后一步的，第 {step} 步，也是得分最好的：{metric} {value:.4g}。</translation>
    </message>
    <message>
        <source>The model is the last step&apos;s, step {last_step}; the best checkpoint was step {step} ({metric} {value:.4g}).</source>
        <translation>模型是最后一步的，第 {last_step} 步；最佳检查点是第 {step} 步（{metric} {value:.4g}）。</translation>
    </message>
    <message>
        <source>The model is the best checkpoint, step {step} of {last_step}: {metric} {value:.4g}.</source>
        <translation>模型是最佳检查点，第 {step} 步（共 {last_step} 步）：{metric} {value:.4g}。</translation>
    </message>
    <message>
        <source>On the held-out pairs the tuned model prefers the chosen answer in {after:.0%} of them, the base model in {before:.0%}: no better. {parted}The preference accuracy asks which answer the model finds likelier outright; the reward accuracy only whether it moved toward the chosen answer more than toward the rejected one, from where it started. {fix}</source>
        <translation>在留出的偏好对上，微调后的模型在 {after:.0%} 的情况下偏向选中回答，基础模型为 {before:.0%}：没有变好。{parted}偏好准确率看的是模型直接认为哪个回答可能性更高；奖励准确率只看模型相对起点，是否更多地移向选中回答而非被拒回答。{fix}</translation>
    </message>
    <message>
        <source>The learning rate is {rate:g}, {times} the {task} default of {default:g}: a rate kept from another task or run? {effect}</source>
        <translation>学习率为 {rate:g}，是 {task} 默认值 {default:g} 的 {times}：是从其他任务或训练沿用下来的吗？{effect}</translation>
    </message>
    <message>
        <source>The validation loss has risen at {n} evaluations in a row ({best:.3g} at step {best_step}, {now:.3g} now) while the training loss fell ({train_then:.3g} to {train_now:.3g}): the model is learning the training rows by heart. The best evaluation so far is step {best_step}.</source>
        <translation>验证损失已连续 {n} 次评估上升（第 {best_step} 步为 {best:.3g}，现在为 {now:.3g}），而训练损失在下降（{train_then:.3g} 到 {train_now:.3g}）：模型正在死记训练数据。目前最好的评估是第 {best_step} 步。</translation>
    </message>
    <message>
        <source>The training loss is growing: {now:.3g} now, {times:.1f} times its lowest ({lowest:.3g}). The learning rate ({rate:g}) is likely too high for this model.</source>
        <translation>训练损失在上升：现在为 {now:.3g}，是其最低值（{lowest:.3g}）的 {times:.1f} 倍。学习率（{rate:g}）对这个模型可能太高了。</translation>
    </message>
    <message>
        <source>After {share:.0%} of the steps the training loss is higher than where it began ({first:.3g} to {now:.3g}).</source>
        <translation>已完成 {share:.0%} 的步数，训练损失反而比开始时更高（{first:.3g} 到 {now:.3g}）。</translation>
    </message>
    <message>
        <source>After {share:.0%} of the steps the training loss has barely moved ({first:.3g} to {now:.3g}).</source>
        <translation>已完成 {share:.0%} 的步数，训练损失几乎没有变化（{first:.3g} 到 {now:.3g}）。</translation>
    </message>
    <message>
        <source>After {share:.0%} of the steps the accuracy is {accuracy:.3g}, what guessing among {labels} classes scores ({chance:.3g}).</source>
        <translation>已完成 {share:.0%} 的步数，准确率为 {accuracy:.3g}，与在 {labels} 个类别中随机猜测的得分（{chance:.3g}）相当。</translation>
    </message>
    <message>
        <source>{seen} The model is not learning: check the learning rate ({rate:g}; {task} usually trains at {default:g}), {language}, and {labels}.</source>
        <translation>{seen}模型没有在学习：请检查学习率（{rate:g}；{task} 通常用 {default:g}），{language}，以及{labels}。</translation>
    </message>
    <message>
        <source>learning rate {rate:g}</source>
        <translation>学习率 {rate:g}</translation>
    </message>
    <message>
        <source>{seen} The model is not learning: check the learning rate ({rate:g}; {default:g} is usual for this task), and that each picture&apos;s label or answer is the right one.</source>
        <translation>{seen}模型没有在学习：请检查学习率（{rate:g}；此任务通常为 {default:g}），以及每张图片的标签或答案是否正确。</translation>
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
        <translation>这么高的学习率往往会破坏模型原有的知识。</translation>
    </message>
    <message>
        <source>So low a rate changes the model very little.</source>
        <translation>这么低的学习率几乎不会改变模型。</translation>
    </message>
    <message>
        <source>that the model reads the data&apos;s language ({share:.0%} of the data&apos;s tokens are unknown to it{verdict})</source>
        <translation>模型是否读得懂数据的语言（数据中有 {share:.0%} 的词元它不认识{verdict}）</translation>
    </message>
    <message>
        <source>that the model reads the data&apos;s language (many unknown tokens in the data check say it does not)</source>
        <translation>模型是否读得懂数据的语言（数据检查中大量未知词元说明读不懂）</translation>
    </message>
    <message>
        <source>: it does not</source>
        <translation>：它读不懂</translation>
    </message>
    <message>
        <source>Answers are written by vLLM.</source>
        <translation>回答由 vLLM 生成。</translation>
    </message>
    <message>
        <source>Answers are written by transformers.</source>
        <translation>回答由 transformers 生成。</translation>
    </message>
    <message>
        <source>reasoning with rewards needs TRL: pip install trl.</source>
        <translation>奖励推理训练需要 TRL：pip install trl。</translation>
    </message>
    <message>
        <source>The mean reward has stayed near {first:.2f} (now {now:.2f}) for {steps} steps; in {alike:.0%} of the prompts every answer scored the same, which leaves GRPO nothing to compare. More varied answers (a higher temperature, more answers per prompt) or a reward that gives partial credit (the format) help; so does data the model can sometimes already solve.</source>
        <translation>平均奖励在 {steps} 步内一直接近 {first:.2f}（现在 {now:.2f}）；{alike:.0%} 的提示词中所有回答得分相同，GRPO 无从比较。更多样的回答（更高的温度、每个提示词更多回答）或能给部分分数的奖励（格式）会有帮助；模型有时已能答对的数据也会有帮助。</translation>
    </message>
    <message>
        <source>The answers shrank from {first:.0f} to {now:.0f} tokens on average: the model may be earning its rewards by saying less (an empty answer can pass a length or language check). Read the sampled answers in the log; a length reward with a minimum, or a lower learning rate, holds it.</source>
        <translation>回答的平均长度从 {first:.0f} 个词元缩短到 {now:.0f} 个：模型可能在靠少说话拿奖励（空回答也可能通过长度或语言检查）。请查看日志中的样例回答；设有下限的长度奖励或更低的学习率可以防止这种情况。</translation>
    </message>
    <message>
        <source>temperature 1.0</source>
        <translation>温度 1.0</translation>
    </message>
    <message>
        <source>a format reward</source>
        <translation>格式奖励</translation>
    </message>
    <message>
        <source>preference tuning needs TRL: pip install trl.</source>
        <translation>偏好微调需要 TRL：pip install trl。</translation>
    </message>
    <message>
        <source>Loading the processor and the model</source>
        <translation>正在加载处理器和模型</translation>
    </message>
    <message>
        <source>{model} cannot recompute its activations (gradient checkpointing): it trains without.</source>
        <translation>{model} 不支持重算激活（梯度检查点）：训练时不使用它。</translation>
    </message>
    <message>
        <source>Liger kernels: {model_type} is not an architecture they know; it trains without them.</source>
        <translation>Liger 内核：不支持 {model_type} 架构，本次训练不使用它们。</translation>
    </message>
    <message>
        <source>Tokenizing {rows} preference pairs</source>
        <translation>正在对 {rows} 个偏好对分词</translation>
    </message>
    <message>
        <source>{checkpoint} does not fit the model this data makes (its shapes differ: {error}).</source>
        <translation>{checkpoint} 与这份数据生成的模型不匹配（形状不同：{error}）。</translation>
    </message>
    <message>
        <source>Resume with the data and model the run started with, or start a new run. The checkpoint was not changed.</source>
        <translation>请用运行开始时的数据和模型继续训练，或开始新的运行。检查点没有被改动。</translation>
    </message>
    <message>
        <source>In process {number} of {count}: {reason}</source>
        <translation>第 {number} 个进程（共 {count} 个）：{reason}</translation>
    </message>
    <message>
        <source>Resume on the new data</source>
        <translation>在新数据上继续训练</translation>
    </message>
    <message>
        <source>A run to resume is found by its config file, and none was given.</source>
        <translation>要继续的训练按其配置文件查找，但没有给出配置文件。</translation>
    </message>
    <message>
        <source>MLflow: this run is logged as {run} in the experiment {experiment} at {uri}. To look: {command}</source>
        <translation>MLflow：本次训练以 {run} 记录在 {uri} 的实验 {experiment} 中。查看方法：{command}</translation>
    </message>
    <message>
        <source>TensorBoard: logs in {folder}. To look: tensorboard --logdir {folder}</source>
        <translation>TensorBoard：日志在 {folder}。查看方法：tensorboard --logdir {folder}</translation>
    </message>
    <message>
        <source>{tracker} stopped logging at step {step}: {reason}. Training goes on; its figures after this step are not in {tracker}, and the run&apos;s own are in its folder.</source>
        <translation>{tracker} 在第 {step} 步停止记录：{reason}。训练照常进行；这一步之后的数值不会出现在 {tracker} 中，训练任务自己的记录仍在其文件夹里。</translation>
    </message>
    <message>
        <source>Rewards on the first rows (the reference answer, then a wrong one):</source>
        <translation>前几行的奖励（先是参考答案，再是一个错误答案）：</translation>
    </message>
    <message>
        <source>Rewards: no row has a reference answer to try them on.</source>
        <translation>奖励：没有一行有参考答案可供试算。</translation>
    </message>
    <message>
        <source>The data folder is now {folder}.</source>
        <translation>数据文件夹现在是 {folder}。</translation>
    </message>
    <message>
        <source>an empty or new folder, for example on another drive</source>
        <translation>一个空文件夹或新文件夹，例如在另一个磁盘上</translation>
    </message>
    <message>
        <source>Finetune Studio is running ({others}): its data folder cannot move now.</source>
        <translation>Finetune Studio 正在运行（{others}）：现在无法移动它的数据文件夹。</translation>
    </message>
    <message>
        <source>Close every Finetune Studio window and command-line run, then run this again.</source>
        <translation>请关闭所有 Finetune Studio 窗口和命令行训练，然后再运行一次。</translation>
    </message>
    <message>
        <source>The data folder could not be moved: {error}</source>
        <translation>无法移动数据文件夹：{error}</translation>
    </message>
    <message>
        <source>Everything is where it was. Free some space or choose another folder, then try again.</source>
        <translation>一切都保持原样。请腾出空间或选择另一个文件夹，然后重试。</translation>
    </message>
    <message>
        <source>Moving</source>
        <translation>正在移动</translation>
    </message>
    <message>
        <source>a mirror or private hub (Hugging Face API; with --source modelscope, ModelScope&apos;s)</source>
        <translation>镜像站或私有 Hub（Hugging Face API；与 --source modelscope 一起用时为 ModelScope 的）</translation>
    </message>
    <message>
        <source>find, download and list models (Hugging Face, a mirror, ModelScope)</source>
        <translation>搜索、下载和列出模型（Hugging Face、镜像站、ModelScope）</translation>
    </message>
    <message>
        <source>search the hub</source>
        <translation>在 Hub 上搜索</translation>
    </message>
    <message>
        <source>print the results as JSON</source>
        <translation>以 JSON 格式输出结果</translation>
    </message>
    <message>
        <source>download a model (only the files training needs)</source>
        <translation>下载模型（只下载训练需要的文件）</translation>
    </message>
    <message>
        <source>owner/name, or modelscope:owner/name</source>
        <translation>owner/name，或 modelscope:owner/name</translation>
    </message>
    <message>
        <source>branch, tag or commit</source>
        <translation>分支、标签或提交</translation>
    </message>
    <message>
        <source>models on this computer (hub caches and folders used before)</source>
        <translation>这台电脑上的模型（Hub 缓存和用过的文件夹）</translation>
    </message>
    <message>
        <source>which source answers, and how fast</source>
        <translation>哪个下载源有响应，速度如何</translation>
    </message>
    <message>
        <source>download hub datasets</source>
        <translation>下载 Hub 数据集</translation>
    </message>
    <message>
        <source>download a dataset&apos;s data files</source>
        <translation>下载数据集的数据文件</translation>
    </message>
    <message>
        <source>No models match {query} on {source}.</source>
        <translation>在{source}上没有与 {query} 匹配的模型。</translation>
    </message>
    <message>
        <source>license  updated</source>
        <translation>许可证  更新时间</translation>
    </message>
    <message>
        <source>Downloading the dataset {name} from {source} ({endpoint})...</source>
        <translation>正在从{source}（{endpoint}）下载数据集 {name}……</translation>
    </message>
    <message>
        <source>Downloading the model {name} from {source} ({endpoint})...</source>
        <translation>正在从{source}（{endpoint}）下载模型 {name}……</translation>
    </message>
    <message>
        <source>No models on this computer yet. Find one with: finetune-studio-cli models search QUERY</source>
        <translation>这台电脑上还没有模型。可以这样查找：finetune-studio-cli models search 关键词</translation>
    </message>
    <message>
        <source>answered in {ms} ms</source>
        <translation>{ms} 毫秒内响应</translation>
    </message>
    <message>
        <source>no answer ({problem})</source>
        <translation>无响应（{problem}）</translation>
    </message>
    <message>
        <source>in use: {source}; Auto would pick {chosen}</source>
        <translation>正在使用：{source}；自动模式会选择 {chosen}</translation>
    </message>
    <message>
        <source>in use: {source}; none answers</source>
        <translation>正在使用：{source}；没有任何下载源响应</translation>
    </message>
    <message>
        <source>The picture is labelled; written to {file} with {added} added.</source>
        <translation>图片已标注；已写入 {file}，新增 {added}。</translation>
    </message>
    <message>
        <source>Verified: reloaded in a fresh process, the outputs on {count} examples are the same.</source>
        <translation>验证通过：已在新进程中重新载入，{count} 个示例的输出完全相同。</translation>
    </message>
    <message>
        <source>{done} of {rows} pictures labelled; written to {file} with {added} added.</source>
        <translation>{rows} 张图片中已标注 {done} 张；已写入 {file}，新增 {added}。</translation>
    </message>
    <message>
        <source>run a trained model over a CSV, TSV, JSONL or Excel file (an image classifier: also a folder of pictures, or one picture) and write its predictions</source>
        <translation>用训练好的模型处理 CSV、TSV、JSONL 或 Excel 文件（图像分类模型还可以处理图片文件夹或单张图片），并写出预测结果</translation>
    </message>
    <message>
        <source>the rows to predict (or the pictures)</source>
        <translation>要预测的行（或图片）</translation>
    </message>
    <message>
        <source>{done} of {rows} rows predicted from column {column}; written to {file} with {added} added.</source>
        <translation>已根据 {column} 列预测 {rows} 行中的 {done} 行；已写入 {file}，新增 {added}。</translation>
    </message>
    <message>
        <source>Small, fast convolutional network trained on ImageNet; a sound start for photos.</source>
        <translation>在 ImageNet 上训练的小而快的卷积网络；适合作为照片分类的起点。</translation>
    </message>
    <message>
        <source>Modern convolutional network trained on ImageNet; more accurate than ResNet at about its size.</source>
        <translation>在 ImageNet 上训练的现代卷积网络；与 ResNet 大小相近而更准确。</translation>
    </message>
    <message>
        <source>Vision transformer pretrained on ImageNet-21k (no head yet): strong with enough pictures per class.</source>
        <translation>在 ImageNet-21k 上预训练的视觉 Transformer（尚无分类头）：每个类别图片足够多时效果很好。</translation>
    </message>
    <message>
        <source>{name} is not on this computer yet: downloading it first.</source>
        <translation>{name} 还不在这台电脑上：先下载它。</translation>
    </message>
    <message>
        <source>The dataset {name} is not on this computer yet: downloading it first.</source>
        <translation>数据集 {name} 还不在这台电脑上：先下载它。</translation>
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
        <translation>下载量</translation>
    </message>
    <message>
        <source>likes</source>
        <translation>点赞</translation>
    </message>
    <message>
        <source>params</source>
        <translation>参数量</translation>
    </message>
    <message>
        <source>size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Download stopped. Run the same command again to resume where it stopped.</source>
        <translation>下载已停止。再次运行同一命令即可从中断处继续。</translation>
    </message>
    <message>
        <source>Stopped. Nothing was changed.</source>
        <translation>已停止。没有做任何改动。</translation>
    </message>
    <message>
        <source>Stopped.</source>
        <translation>已停止。</translation>
    </message>
    <message>
        <source>with --resume: go on although the data changed since the run started (same classes)</source>
        <translation>与 --resume 一起用：即使数据自运行开始以来变了（类别相同），也继续训练</translation>
    </message>
    <message>
        <source>This copy of Finetune Studio is incomplete (the app package or uv is missing).</source>
        <translation>这份 Finetune Studio 不完整（缺少应用程序包或 uv）。</translation>
    </message>
    <message>
        <source>Reinstall Finetune Studio.</source>
        <translation>请重新安装 Finetune Studio。</translation>
    </message>
    <message>
        <source>Finetune Studio is already being set up by another window.</source>
        <translation>另一个窗口正在安装 Finetune Studio。</translation>
    </message>
    <message>
        <source>Wait for it to finish; the app starts by itself.</source>
        <translation>请等它完成；应用会自动启动。</translation>
    </message>
    <message>
        <source>Finetune Studio is running, so its runtime cannot be set up again or updated now.</source>
        <translation>Finetune Studio 正在运行，现在无法重新安装或更新它的运行环境。</translation>
    </message>
    <message>
        <source>Close every Finetune Studio window (and stop command-line runs), then start it again.</source>
        <translation>请关闭所有 Finetune Studio 窗口（并停止命令行中的训练），然后再启动。</translation>
    </message>
    <message>
        <source>Finetune Studio could not be started: {error}</source>
        <translation>无法启动 Finetune Studio：{error}</translation>
    </message>
    <message>
        <source>Finetune Studio stopped unexpectedly (exit code {code}).</source>
        <translation>Finetune Studio 意外退出（退出代码 {code}）。</translation>
    </message>
    <message>
        <source>Your runs are kept: a run that was training resumes from its last checkpoint (Resume in the app). Start it again; if it happens again, send the log.</source>
        <translation>你的训练记录都还在：正在训练的任务可以从最近的检查点继续（在应用中点“继续训练”）。请再次启动它；如果再次出现，请发送日志。</translation>
    </message>
    <message>
        <source>The data folder was not moved: Finetune Studio is still running ({what}).</source>
        <translation>数据文件夹没有移动：Finetune Studio 仍在运行（{what}）。</translation>
    </message>
    <message>
        <source>Close every Finetune Studio window and command-line run, then try again.</source>
        <translation>请关闭所有 Finetune Studio 窗口和命令行训练，然后重试。</translation>
    </message>
    <message>
        <source>no NVIDIA GPU was found, so the CPU build</source>
        <translation>没有找到 NVIDIA GPU，因此安装 CPU 版本</translation>
    </message>
    <message>
        <source>this GPU is too old for current PyTorch, so the CPU build</source>
        <translation>这块 GPU 对当前的 PyTorch 来说太旧了，因此安装 CPU 版本</translation>
    </message>
    <message>
        <source>the NVIDIA driver is too old for PyTorch&apos;s GPU builds, so the CPU build</source>
        <translation>NVIDIA 驱动程序太旧，无法使用 PyTorch 的 GPU 版本，因此安装 CPU 版本</translation>
    </message>
    <message>
        <source>no PyTorch build runs on all of these GPUs, so the CPU build</source>
        <translation>没有一个 PyTorch 版本能在所有这些 GPU 上运行，因此安装 CPU 版本</translation>
    </message>
    <message>
        <source>Setting up the runtime failed.</source>
        <translation>运行环境安装失败。</translation>
    </message>
    <message>
        <source>The log has the details. Try again; if it fails again, start with --repair.</source>
        <translation>详细信息见日志。请重试；如果再次失败，请加上 --repair 启动。</translation>
    </message>
    <message>
        <source>Not enough disk space: setting up needs about {needed} GB, {free} GB are free on the drive of {folder}.</source>
        <translation>磁盘空间不足：安装约需 {needed} GB，{folder} 所在的磁盘只剩 {free} GB 可用。</translation>
    </message>
    <message>
        <source>Free some space, then start Finetune Studio again.</source>
        <translation>请腾出一些空间，然后重新启动 Finetune Studio。</translation>
    </message>
    <message>
        <source>Setup cancelled.</source>
        <translation>安装已取消。</translation>
    </message>
    <message>
        <source>Start Finetune Studio again to finish the setup.</source>
        <translation>再次启动 Finetune Studio 即可完成安装。</translation>
    </message>
    <message>
        <source>The disk became full while installing.</source>
        <translation>安装过程中磁盘已满。</translation>
    </message>
    <message>
        <source>move the data folder (runs, runtime, caches) to another place</source>
        <translation>把数据文件夹（训练记录、运行环境、缓存）移到别处</translation>
    </message>
    <message>
        <source>Exported to {file} ({size})</source>
        <translation>已导出到 {file}（{size}）</translation>
    </message>
    <message>
        <source>For Ollama: {command}</source>
        <translation>用于 Ollama：{command}</translation>
    </message>
    <message>
        <source>folder: a transformers model folder; gguf: one file for llama.cpp, Ollama and LM Studio</source>
        <translation>folder：transformers 模型文件夹；gguf：供 llama.cpp、Ollama 和 LM Studio 使用的单个文件</translation>
    </message>
    <message>
        <source>The best checkpoint is named but the model stays the last step&apos;s: keeping the best needs checkpoints on evaluations (evaluate every N steps, with checkpoints every N steps or a multiple of N).</source>
        <translation>会指出最佳检查点，但模型仍是最后一步的：保留最佳检查点需要检查点与评估同步（每 N 步评估一次，检查点每 N 步或 N 的倍数步保存一次）。</translation>
    </message>
    <message>
        <source>The best checkpoint was step {step} ({metric} {value:.4g}); the model is the last step&apos;s.</source>
        <translation>最佳检查点是第 {step} 步（{metric} {value:.4g}）；模型是最后一步的。</translation>
    </message>
    <message>
        <source>On the training pairs the reward accuracy is {training:.2f}, on the held-out pairs {now:.2f}, no better than at step {first_step} ({first:.2f}). The first counts the pairs the model learns from, the second pairs it never saw: when they part, the model is learning those pairs by heart rather than what makes an answer better. More pairs, fewer steps or a lower learning rate ({rate:g} now) help.</source>
        <translation>训练偏好对上的奖励准确率是 {training:.2f}，留出偏好对上是 {now:.2f}，不比第 {first_step} 步（{first:.2f}）好。前者统计模型正在学习的偏好对，后者统计它从未见过的偏好对：两者分开时，说明模型在死记这些偏好对，而不是学到什么样的回答更好。更多偏好对、更少步数或更低的学习率（现在是 {rate:g}）会有帮助。</translation>
    </message>
    <message>
        <source>The rewards of the chosen answers ({chosen_then:.3g} to {chosen_now:.3g}) and of the rejected ones ({rejected_then:.3g} to {rejected_now:.3g}) both fell at {n} logs in a row: the model tells the answers apart by making both less likely, which tends to make its own answers worse. {fix}</source>
        <translation>选中回答的奖励（{chosen_then:.3g} 到 {chosen_now:.3g}）和被拒回答的奖励（{rejected_then:.3g} 到 {rejected_now:.3g}）在连续 {n} 次记录中都在下降：模型是靠让两个回答都变得不太可能来区分它们的，这往往会让它自己的回答变差。{fix}</translation>
    </message>
    <message>
        <source>Check that the chosen and rejected columns are not swapped, and try more pairs or more steps.</source>
        <translation>请检查选中回答和被拒回答两列是否弄反了，并尝试更多偏好对或更多步数。</translation>
    </message>
    <message>
        <source>beta {beta:g}</source>
        <translation>beta {beta:g}</translation>
    </message>
    <message>
        <source>Yet the reward accuracy reads {reward:.2f}. </source>
        <translation>但奖励准确率显示为 {reward:.2f}。</translation>
    </message>
    <message>
        <source>A lower learning rate, or a higher beta, keeps it nearer where it started.</source>
        <translation>更低的学习率或更高的 beta 能让它离起点更近。</translation>
    </message>
    <message>
        <source>A lower learning rate keeps it nearer where it started.</source>
        <translation>更低的学习率能让它离起点更近。</translation>
    </message>
    <message>
        <source>that the chosen answers are the better ones</source>
        <translation>选中回答是否确实是较好的回答</translation>
    </message>
    <message>
        <source>that the labels match the texts</source>
        <translation>标签是否与文本相符</translation>
    </message>
    <message>
        <source>Lower the learning rate to {rate}</source>
        <translation>将学习率降到 {rate}</translation>
    </message>
    <message>
        <source>The training stopped: the {what} became {value} at step {step}. The learning rate ({rate}) is most likely too high for this model: its weights diverged.</source>
        <translation>训练已停止：{what}在第 {step} 步变成了 {value}。学习率（{rate}）对这个模型很可能太高：它的权重发散了。</translation>
    </message>
    <message>
        <source>Lower the learning rate (a tenth is a good first try) and train again from the start.</source>
        <translation>请降低学习率（先试原来的十分之一），然后从头重新训练。</translation>
    </message>
    <message>
        <source>{count} training steps had a loss that was not a number (NaN or infinity, usually an fp16 overflow); the loss scaler left their updates out and training went on.</source>
        <translation>有 {count} 个训练步骤的损失不是数值（NaN 或无穷大，通常是 fp16 溢出）；损失缩放器略去了它们的更新，训练继续进行。</translation>
    </message>
    <message>
        <source>The training stopped: the {what} became {value} at step {step}. In fp16 the numbers overflowed (fp16 holds values up to 65504).</source>
        <translation>训练已停止：{what}在第 {step} 步变成了 {value}。在 fp16 下数值溢出了（fp16 最大只能表示 65504）。</translation>
    </message>
    <message>
        <source>Train in bf16 where the GPU has it (RTX 30 and newer), else in fp32, or lower the rate.</source>
        <translation>GPU 支持时（RTX 30 及更新）请用 bf16 训练，否则用 fp32，或降低学习率。</translation>
    </message>
    <message>
        <source>The model in {where} is damaged: its tensor {tensor} holds values that are not numbers (NaN or infinity), so nothing trained from it can work.</source>
        <translation>{where} 中的模型已损坏：其张量 {tensor} 含有非数值（NaN 或无穷大），用它训练不会有任何结果。</translation>
    </message>
    <message>
        <source>Download the model again or choose another one; a model a diverged run saved cannot be repaired: train it again from its base model.</source>
        <translation>请重新下载该模型或换一个模型；发散的训练任务保存的模型无法修复：请从其基础模型重新训练。</translation>
    </message>
    <message>
        <source>training loss</source>
        <translation>训练损失</translation>
    </message>
    <message>
        <source>evaluation loss</source>
        <translation>评估损失</translation>
    </message>
    <message>
        <source>gradient norm</source>
        <translation>梯度范数</translation>
    </message>
    <message>
        <source>Train in bf16</source>
        <translation>用 bf16 训练</translation>
    </message>
    <message>
        <source>Train in fp32</source>
        <translation>用 fp32 训练</translation>
    </message>
    <message>
        <source>The checkpoint is at the last step: the evaluation and the save are left</source>
        <translation>检查点已在最后一步：只剩评估和保存</translation>
    </message>
    <message>
        <source>preference tuning: dpo (default) or orpo (no reference model: less memory)</source>
        <translation>偏好微调：dpo（默认）或 orpo（不需要参照模型：占用更少显存）</translation>
    </message>
    <message>
        <source>--method is for preference tuning; {task} runs have no method.</source>
        <translation>--method 只用于偏好微调；{task} 任务没有方法可选。</translation>
    </message>
    <message>
        <source>Leave --method out, or use --task preference.</source>
        <translation>请去掉 --method，或使用 --task preference。</translation>
    </message>
    <message>
        <source>Writing GGUF tensors</source>
        <translation>正在写入 GGUF 张量</translation>
    </message>
    <message>
        <source>Quantizing with llama.cpp</source>
        <translation>正在用 llama.cpp 量化</translation>
    </message>
    <message>
        <source>Checking the file with llama.cpp</source>
        <translation>正在用 llama.cpp 校验文件</translation>
    </message>
    <message>
        <source>Published to {url}</source>
        <translation>已发布到 {url}</translation>
    </message>
    <message>
        <source>publish a finished run to the Hugging Face hub or ModelScope, with its model card</source>
        <translation>将完成的训练任务连同模型卡片发布到 Hugging Face 或魔搭（ModelScope）</translation>
    </message>
    <message>
        <source>a run folder or a run&apos;s name (exported first), or a folder or GGUF file already exported</source>
        <translation>训练任务文件夹或其名称（先导出），或已导出的文件夹或 GGUF 文件</translation>
    </message>
    <message>
        <source>the repository: owner/name, or name for your own account</source>
        <translation>仓库：所有者/名称，或仅名称（你自己的账号）</translation>
    </message>
    <message>
        <source>a new repository is private (the default)</source>
        <translation>新仓库为私有（默认）</translation>
    </message>
    <message>
        <source>make a new repository public</source>
        <translation>新仓库设为公开</translation>
    </message>
    <message>
        <source>hf: Hugging Face (the endpoint in the settings; a mirror must take uploads); modelscope: ModelScope</source>
        <translation>hf：Hugging Face（设置中的地址；镜像须支持上传）；modelscope：魔搭（ModelScope）</translation>
    </message>
    <message>
        <source>folder: the model folder; gguf: the GGUF file with its Modelfile; adapter: the LoRA adapters alone</source>
        <translation>folder：模型文件夹；gguf：GGUF 文件及其 Modelfile；adapter：仅 LoRA 适配器</translation>
    </message>
    <message>
        <source>the repository already holds files: replace them (ours are written, the others deleted)</source>
        <translation>仓库中已有文件：替换它们（写入我们的文件，删除其余文件）</translation>
    </message>
    <message>
        <source>the weights&apos; type</source>
        <translation>权重类型</translation>
    </message>
    <message>
        <source>GGUF: the weights&apos; type</source>
        <translation>GGUF：权重类型</translation>
    </message>
    <message>
        <source>skip the export&apos;s check</source>
        <translation>跳过导出的检查</translation>
    </message>
    <message>
        <source>Hugging Face&apos;s address (default: from the settings)</source>
        <translation>Hugging Face 的地址（默认：取自设置）</translation>
    </message>
    <message>
        <source>No run folder {run} was found, nor an exported folder or GGUF file.</source>
        <translation>找不到训练任务文件夹 {run}，也不是已导出的文件夹或 GGUF 文件。</translation>
    </message>
    <message>
        <source>Added to Ollama: {command}</source>
        <translation>已添加到 Ollama：{command}</translation>
    </message>
    <message>
        <source>{rows} held-out preference pairs</source>
        <translation>{rows} 个留出的偏好对</translation>
    </message>
    <message>
        <source>{rows} held-out prompts: the share whose greedy answer earns each reward</source>
        <translation>{rows} 个预留提示词：贪心解码的回答获得各项奖励的比例</translation>
    </message>
    <message>
        <source>GGUF: the weights&apos; type (q4_k_m needs llama.cpp: pip install llama-cpp-python)</source>
        <translation>GGUF：权重类型（q4_k_m 需要 llama.cpp：pip install llama-cpp-python）</translation>
    </message>
    <message>
        <source>GGUF: also add the model to Ollama (ollama create); with --quant q4_k_m and no llama.cpp, Ollama makes the 4-bit model from an f16 file</source>
        <translation>GGUF：同时把模型添加到 Ollama（ollama create）；使用 --quant q4_k_m 且未安装 llama.cpp 时，由 Ollama 从 f16 文件生成 4 位模型</translation>
    </message>
    <message>
        <source>GGUF: lmstudio puts the file in DEST/finetune-studio/RUN/, as LM Studio lists models</source>
        <translation>GGUF：lmstudio 会把文件放在 DEST/finetune-studio/RUN/，与 LM Studio 列出模型的方式一致</translation>
    </message>
    <message>
        <source>a run whose model is its best checkpoint: export the last step&apos;s model instead (made from its checkpoint)</source>
        <translation>模型为最佳检查点的训练任务：改为导出最后一步的模型（由其检查点生成）</translation>
    </message>
    <message>
        <source>skip the check (folder: reloading it; gguf: llama.cpp&apos;s answers)</source>
        <translation>跳过校验（文件夹：重新加载；gguf：llama.cpp 的回答）</translation>
    </message>
    <message>
        <source>also log the model to MLflow (MLFLOW_TRACKING_URI, else a store in the app&apos;s data folder)</source>
        <translation>同时把模型记录到 MLflow（MLFLOW_TRACKING_URI，未设置时记录到应用数据文件夹中的存储）</translation>
    </message>
    <message>
        <source>To look: {command}</source>
        <translation>查看方法：{command}</translation>
    </message>
    <message>
        <source>llama.cpp is not installed: Ollama will make q4_K_M from the f16 file.</source>
        <translation>未安装 llama.cpp：将由 Ollama 从 f16 文件生成 q4_K_M。</translation>
    </message>
    <message>
        <source>LM Studio reads its models from {folder}.</source>
        <translation>LM Studio 从 {folder} 读取模型。</translation>
    </message>
    <message>
        <source>The GGUF file is written; add it to Ollama later.</source>
        <translation>GGUF 文件已写出，可以稍后再添加到 Ollama。</translation>
    </message>
    <message>
        <source>preference accuracy</source>
        <translation>偏好准确率</translation>
    </message>
    <message>
        <source>mean margin (nats per token)</source>
        <translation>平均差值（每词元，nat）</translation>
    </message>
    <message>
        <source>reward accuracy ({method})</source>
        <translation>奖励准确率（{method}）</translation>
    </message>
    <message>
        <source>reward margin ({method})</source>
        <translation>奖励差值（{method}）</translation>
    </message>
    <message>
        <source>Now preferring the chosen answer:</source>
        <translation>现在偏向选中回答：</translation>
    </message>
    <message>
        <source>Still preferring the rejected answer:</source>
        <translation>仍然偏向被拒回答：</translation>
    </message>
    <message>
        <source>prompt:   {text}</source>
        <translation>提示词：  {text}</translation>
    </message>
    <message>
        <source>chosen:   {text}</source>
        <translation>选中：    {text}</translation>
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
        <translation>建议：{message}</translation>
    </message>
    <message>
        <source>to try it: {change} ({flags})</source>
        <translation>试试：{change}（{flags}）</translation>
    </message>
    <message>
        <source>{problem}: it has no checkpoint to resume from; train it again.</source>
        <translation>{problem}：它没有可继续的检查点，请重新训练。</translation>
    </message>
    <message>
        <source>{problem}: resume it from its last good checkpoint with: finetune-studio-cli train {config} --resume</source>
        <translation>{problem}：可用以下命令从最后一个完好的检查点继续：finetune-studio-cli train {config} --resume</translation>
    </message>
    <message>
        <source>Ollama serves {model} at {url} (the same API; it keeps running after this command).</source>
        <translation>Ollama 在 {url} 提供 {model}（同样的 API；本命令结束后它仍在运行）。</translation>
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
        <translation>用 curl 试一试：</translation>
    </message>
    <message>
        <source>or from Python (pip install openai):</source>
        <translation>或者在 Python 中（pip install openai）：</translation>
    </message>
    <message>
        <source>answer requests to a trained model over an OpenAI-compatible HTTP API</source>
        <translation>通过兼容 OpenAI 的 HTTP API 让训练好的模型回答请求</translation>
    </message>
    <message>
        <source>Serve a finished run or an exported model folder at http://HOST:PORT/v1: chat and text completions (OpenAI&apos;s API) for language models, /v1/classify for classifiers. Only this computer can reach it unless --host says otherwise; then every request needs the API key this command makes and keeps in the OS keyring.</source>
        <translation>在 http://HOST:PORT/v1 提供已完成的训练任务或导出的模型文件夹：语言模型提供对话和文本补全（OpenAI 的 API），分类模型提供 /v1/classify。除非用 --host 另行指定，只有本机能访问；指定后每个请求都需要本命令生成并保存在系统密钥环中的 API 密钥。</translation>
    </message>
    <message>
        <source>a run&apos;s name or folder, or a model folder</source>
        <translation>训练任务的名称或文件夹，或一个模型文件夹</translation>
    </message>
    <message>
        <source>the port (default: {port})</source>
        <translation>端口（默认：{port}）</translation>
    </message>
    <message>
        <source>the address to listen on (default: 127.0.0.1, this computer only; 0.0.0.0: every network)</source>
        <translation>监听的地址（默认：127.0.0.1，仅限本机；0.0.0.0：所有网络）</translation>
    </message>
    <message>
        <source>the model&apos;s name in requests (default: the run&apos;s or folder&apos;s)</source>
        <translation>请求中使用的模型名称（默认：训练任务或文件夹的名称）</translation>
    </message>
    <message>
        <source>the longest answer a request may ask for (default: 4096)</source>
        <translation>一个请求最多可要求的回答长度（默认：4096）</translation>
    </message>
    <message>
        <source>requests that may wait while one is answered; the next are told the server is busy (default: 32)</source>
        <translation>回答一个请求时最多可排队等待的请求数；再多的会被告知服务繁忙（默认：32）</translation>
    </message>
    <message>
        <source>another name requests may be addressed to (this computer&apos;s name in your network, a proxy&apos;s); requests addressed to other names are refused (a web page may use one to reach the server)</source>
        <translation>请求可以使用的另一个名称（本机在你网络中的名称、代理的名称）；发往其他名称的请求会被拒绝（网页可能借此访问服务器）</translation>
    </message>
    <message>
        <source>a web page that may use the server from a browser, as scheme://host:port (e.g. http://localhost:3000); requests from other pages are refused</source>
        <translation>允许在浏览器中使用本服务器的网页，写成 scheme://host:port（例如 http://localhost:3000）；来自其他网页的请求会被拒绝</translation>
    </message>
    <message>
        <source>a vision-language model: fetch the pictures requests name by web address (off: pictures come as data URLs, or as files when serving on this computer only)</source>
        <translation>视觉语言模型：按请求中的网址下载图片（关闭时：图片以 data URL 发送，或仅在本机服务时以文件路径发送）</translation>
    </message>
    <message>
        <source>require the API key on this computer too</source>
        <translation>在本机上也要求 API 密钥</translation>
    </message>
    <message>
        <source>replace the kept API key with a new one</source>
        <translation>用新的 API 密钥替换已保存的密钥</translation>
    </message>
    <message>
        <source>Or serve the run itself (with transformers): finetune-studio-cli serve RUN</source>
        <translation>或者直接提供这个训练任务（用 transformers）：finetune-studio-cli serve RUN</translation>
    </message>
    <message>
        <source>--max-tokens must be at least 1.</source>
        <translation>--max-tokens 至少为 1。</translation>
    </message>
    <message>
        <source>For example: --max-tokens 1024</source>
        <translation>例如：--max-tokens 1024</translation>
    </message>
    <message>
        <source>Loading {folder}…</source>
        <translation>正在载入 {folder}…</translation>
    </message>
    <message>
        <source>Stopped; the model&apos;s memory is free again.</source>
        <translation>已停止；模型占用的内存已释放。</translation>
    </message>
    <message>
        <source>API key (shown this once): {key}</source>
        <translation>API 密钥（仅显示这一次）：{key}</translation>
    </message>
    <message>
        <source>Requests need the key: set {env} to it, as the examples below read it.</source>
        <translation>请求需要这个密钥：请把 {env} 设为它，下面的示例会读取它。</translation>
    </message>
    <message>
        <source>{env} is set: the server uses that key, so --new-key would change nothing.</source>
        <translation>{env} 已设置：服务使用这个密钥，所以 --new-key 不会改变任何东西。</translation>
    </message>
    <message>
        <source>Unset {env} to use the key in the OS keyring, or leave out --new-key.</source>
        <translation>取消设置 {env} 以使用系统密钥环中的密钥，或去掉 --new-key。</translation>
    </message>
    <message>
        <source>From other computers: {urls}</source>
        <translation>从其他电脑访问：{urls}</translation>
    </message>
    <message>
        <source>It is kept in your OS keyring; --new-key replaces it.</source>
        <translation>它保存在系统密钥环中；--new-key 可换一个新的。</translation>
    </message>
    <message>
        <source>No OS keyring is available: a new key is made at each start.</source>
        <translation>没有可用的系统密钥环：每次启动都会生成新的密钥。</translation>
    </message>
    <message>
        <source>The run {run} has no saved model yet.</source>
        <translation>训练任务 {run} 还没有保存的模型。</translation>
    </message>
    <message>
        <source>Serve a finished run, or resume this one to its end first.</source>
        <translation>请提供一个已完成的训练任务，或先把这个训练任务续训到结束。</translation>
    </message>
    <message>
        <source>Free a few gigabytes on that drive, then start Finetune Studio again; it finishes the setup.</source>
        <translation>请在那个磁盘上腾出几 GB 空间，然后重新启动 Finetune Studio；它会完成安装。</translation>
    </message>
    <message>
        <source>A package is missing from the offline package.</source>
        <translation>离线安装包中缺少一个软件包。</translation>
    </message>
    <message>
        <source>Use the complete offline installer, or start while connected to the internet.</source>
        <translation>请使用完整的离线安装程序，或在联网状态下启动。</translation>
    </message>
    <message>
        <source>The PyTorch download was damaged: it does not match its checksum.</source>
        <translation>下载的 PyTorch 已损坏：与其校验和不一致。</translation>
    </message>
    <message>
        <source>Start Finetune Studio again: it downloads the file again. If this repeats, a proxy or an antivirus is changing downloads: set a PyTorch mirror, or ask your IT department.</source>
        <translation>请重新启动 Finetune Studio，它会重新下载该文件。如果反复出现，说明代理或杀毒软件在修改下载内容：请设置 PyTorch 镜像，或联系 IT 部门。</translation>
    </message>
    <message>
        <source>The download was refused: the server&apos;s certificate is not trusted on this computer.</source>
        <translation>下载被拒绝：这台电脑不信任服务器的证书。</translation>
    </message>
    <message>
        <source>A company network or an antivirus that inspects secure connections uses its own certificate: install it in the system&apos;s certificate store (your IT department has it), or set a mirror or proxy you are given; then try again.</source>
        <translation>检查加密连接的公司网络或杀毒软件会使用自己的证书：请把它安装到系统的证书存储中（可向 IT 部门索取），或填写给你的镜像或代理，然后重试。</translation>
    </message>
    <message>
        <source>Could not download the packages: the network or the package server is not reachable.</source>
        <translation>无法下载软件包：网络或软件包服务器无法访问。</translation>
    </message>
    <message>
        <source>Check the internet connection (or the proxy), or set a mirror, then try again.</source>
        <translation>请检查网络连接（或代理），或者设置镜像站，然后重试。</translation>
    </message>
    <message>
        <source>Python {version} could not be set up.</source>
        <translation>无法安装 Python {version}。</translation>
    </message>
    <message>
        <source>Check the internet connection, then try again; uv downloads Python the first time.</source>
        <translation>请检查网络连接后重试；第一次运行时 uv 需要下载 Python。</translation>
    </message>
    <message>
        <source>Windows ran out of virtual memory loading PyTorch: the paging file is too small (error 1455).</source>
        <translation>Windows 在加载 PyTorch 时虚拟内存不足：页面文件太小（错误 1455）。</translation>
    </message>
    <message>
        <source>Let Windows manage the paging file size (Advanced system settings &gt; Performance &gt; Settings &gt; Advanced &gt; Virtual memory), keep a few GB free on the system drive, restart Windows, then start Finetune Studio again.</source>
        <translation>让 Windows 自动管理页面文件大小（高级系统设置 &gt; 性能 &gt; 设置 &gt; 高级 &gt; 虚拟内存），在系统盘上留出几 GB 空闲空间，重启 Windows，然后再次启动 Finetune Studio。</translation>
    </message>
    <message>
        <source>PyTorch cannot load: the Microsoft Visual C++ runtime is missing on this PC.</source>
        <translation>PyTorch 无法加载：这台电脑缺少 Microsoft Visual C++ 运行库。</translation>
    </message>
    <message>
        <source>Install the Microsoft Visual C++ 2015-2022 Redistributable (x64) from https://aka.ms/vs/17/release/vc_redist.x64.exe, then start Finetune Studio again.</source>
        <translation>请从 https://aka.ms/vs/17/release/vc_redist.x64.exe 安装 Microsoft Visual C++ 2015-2022 运行库（x64），然后重新启动 Finetune Studio。</translation>
    </message>
    <message>
        <source>A file could not be written: access was denied.</source>
        <translation>无法写入文件：访问被拒绝。</translation>
    </message>
    <message>
        <source>Close other Finetune Studio windows (and antivirus scans of its folder), then try again.</source>
        <translation>请关闭其他 Finetune Studio 窗口（以及正在扫描其文件夹的杀毒软件），然后重试。</translation>
    </message>
    <message>
        <source>The proxy asks for a user name and password (HTTP 407: proxy authentication required).</source>
        <translation>代理服务器要求输入用户名和密码（HTTP 407：需要代理身份验证）。</translation>
    </message>
    <message>
        <source>Set the proxy with them: in the setup window&apos;s Proxy field, or start FinetuneStudio --proxy http://USER:PASSWORD@HOST:PORT (the password is not written into any file). A proxy that signs in with your Windows account alone (NTLM, Kerberos) needs a user name and password from your IT department.</source>
        <translation>请在代理中带上它们：填写在安装窗口的“代理”栏中，或用 FinetuneStudio --proxy http://USER:PASSWORD@HOST:PORT 启动（密码不会写入任何文件）。只用 Windows 账户登录的代理（NTLM、Kerberos）需要向 IT 部门申请用户名和密码。</translation>
    </message>
    <message>
        <source>A file of the runtime is in use by another program, so it cannot be replaced (error 32).</source>
        <translation>运行环境中的一个文件正被另一个程序使用，无法替换（错误 32）。</translation>
    </message>
    <message>
        <source>Close every Finetune Studio window and command-line run; wait until an antivirus scan, a backup or OneDrive has finished with the data folder (or restart Windows); then try again.</source>
        <translation>请关闭所有 Finetune Studio 窗口和命令行训练；等杀毒扫描、备份或 OneDrive 处理完数据文件夹（或重启 Windows），然后重试。</translation>
    </message>
    <message>
        <source>The antivirus blocked a file of the setup as a threat (error 225).</source>
        <translation>杀毒软件把安装中的一个文件当作威胁拦截了（错误 225）。</translation>
    </message>
    <message>
        <source>It is usually a false alarm on a Python or PyTorch file. Open Windows Security &gt; Virus &amp; threat protection &gt; Protection history, allow the item when it is a file of Finetune Studio&apos;s data folder, then try again; or ask your IT department.</source>
        <translation>这通常是对 Python 或 PyTorch 文件的误报。打开 Windows 安全中心 &gt; 病毒和威胁防护 &gt; 保护历史记录，如果被拦截的是 Finetune Studio 数据文件夹中的文件，就允许它，然后重试；也可以联系 IT 部门。</translation>
    </message>
    <message>
        <source>Windows blocked a file of the runtime: Smart App Control or a company&apos;s application control policy does not allow it (error 4551).</source>
        <translation>Windows 阻止了运行环境中的一个文件：智能应用控制或公司的应用程序控制策略不允许它（错误 4551）。</translation>
    </message>
    <message>
        <source>Smart App Control judges each Python and PyTorch file by its maker&apos;s signature and reputation (the README explains the choice): turn it off in Windows Security &gt; App &amp; browser control, or on a company PC ask your IT department to allow the data folder; then start Finetune Studio again.</source>
        <translation>智能应用控制按制作者的签名和信誉逐个判断 Python 和 PyTorch 文件（README 中说明了如何取舍）：请在 Windows 安全中心 &gt; 应用和浏览器控制中关闭它；如果是公司电脑，请让 IT 部门允许数据文件夹；然后再次启动 Finetune Studio。</translation>
    </message>
    <message>
        <source>A file path in the runtime is too long for Windows (260 characters at most).</source>
        <translation>运行环境中的一个文件路径超出了 Windows 的长度限制（最多 260 个字符）。</translation>
    </message>
    <message>
        <source>Enable long paths (as administrator: reg add HKLM\SYSTEM\CurrentControlSet\Control\FileSystem /v LongPathsEnabled /t REG_DWORD /d 1 /f, then restart Windows), or move the data folder to a short path (FinetuneStudio --data-folder D:\FinetuneStudio); then try again.</source>
        <translation>请启用长路径（以管理员身份运行：reg add HKLM\SYSTEM\CurrentControlSet\Control\FileSystem /v LongPathsEnabled /t REG_DWORD /d 1 /f，然后重启 Windows），或把数据文件夹移到较短的路径（FinetuneStudio --data-folder D:\FinetuneStudio），然后重试。</translation>
    </message>
    <message>
        <source>A file is too large for the data drive: it is formatted FAT32, which holds files of at most 4 GB.</source>
        <translation>文件对数据所在的驱动器来说太大：它是 FAT32 格式，单个文件最大只能 4 GB。</translation>
    </message>
    <message>
        <source>Move the data folder to a drive formatted NTFS or ext4 (FinetuneStudio --data-folder FOLDER), or convert that drive to NTFS; then try again.</source>
        <translation>请把数据文件夹移到 NTFS 或 ext4 格式的驱动器（FinetuneStudio --data-folder FOLDER），或把该驱动器转换为 NTFS，然后重试。</translation>
    </message>
    <message>
        <source>The offline package holds no PyTorch.</source>
        <translation>离线安装包里没有 PyTorch。</translation>
    </message>
    <message>
        <source>Use the full offline installer, or start without --offline while connected.</source>
        <translation>请使用完整的离线安装程序，或在联网时不加 --offline 启动。</translation>
    </message>
    <message>
        <source>Could not run {program}: {error}</source>
        <translation>无法运行 {program}：{error}</translation>
    </message>
    <message>
        <source>The run {run} cannot be resumed: none of its checkpoints can be loaded: {damaged}.</source>
        <translation>训练 {run} 无法继续：它的检查点都无法加载：{damaged}。</translation>
    </message>
    <message>
        <source>Start a new run from this config without --resume. The damaged checkpoints are kept in {folder} for a look; delete them to free the space.</source>
        <translation>请不加 --resume，用此配置开始新的训练。损坏的检查点保留在 {folder} 中以便查看；删除它们即可释放空间。</translation>
    </message>
    <message>
        <source>{value} is not a web page&apos;s origin.</source>
        <translation>{value} 不是网页的来源（origin）。</translation>
    </message>
    <message>
        <source>Write it as scheme://host:port, e.g. http://localhost:3000 (no path).</source>
        <translation>请写成 scheme://host:port，例如 http://localhost:3000（不带路径）。</translation>
    </message>
    <message>
        <source>Stopping the download; what arrived is kept (Ctrl-C again to quit at once)...</source>
        <translation>正在停止下载；已下载的部分会保留（再按一次 Ctrl-C 立即退出）...</translation>
    </message>
    <message>
        <source>No window can open: DISPLAY is set to {display}, but no X server answers there.</source>
        <translation>无法打开窗口：DISPLAY 设置为 {display}，但那里没有 X 服务器响应。</translation>
    </message>
    <message>
        <source>Start Finetune Studio from your desktop session, or unset DISPLAY to set it up without a window (FinetuneStudio --headless).</source>
        <translation>请在桌面会话中启动 Finetune Studio，或取消设置 DISPLAY，以便不打开窗口完成设置（FinetuneStudio --headless）。</translation>
    </message>
    <message>
        <source>No window can open: Qt needs system libraries that are missing ({libraries}).</source>
        <translation>无法打开窗口：Qt 需要的系统库缺失（{libraries}）。</translation>
    </message>
    <message>
        <source>Install them ({command}), then start Finetune Studio again.</source>
        <translation>请安装它们（{command}），然后重新启动 Finetune Studio。</translation>
    </message>
    <message>
        <source>The download stalled: nothing came from {host} for a minute.</source>
        <translation>下载停滞：一分钟内没有从 {host} 收到任何数据。</translation>
    </message>
    <message>
        <source>Set a PyTorch mirror (the &quot;PyTorch mirror&quot; field below, or --torch-index-url) or check the network, then try again: the part downloaded so far is kept.</source>
        <translation>请设置 PyTorch 镜像（下方的“PyTorch 镜像站”字段，或 --torch-index-url）或检查网络，然后重试：已下载的部分会保留。</translation>
    </message>
    <message>
        <source>To repair it: FinetuneStudio --repair. The log: {log}</source>
        <translation>修复方法：FinetuneStudio --repair。日志：{log}</translation>
    </message>
    <message>
        <source>Repair the runtime (FinetuneStudio --repair); it keeps your PyTorch build and your runs.</source>
        <translation>请修复运行环境（FinetuneStudio --repair）；它会保留你的 PyTorch 版本和训练任务。</translation>
    </message>
    <message>
        <source>Finetune Studio stopped right after starting (exit code {code}).</source>
        <translation>Finetune Studio 启动后立即停止了（退出代码 {code}）。</translation>
    </message>
    <message>
        <source>Try again. If it stops again, repair the runtime (it keeps your PyTorch build and your runs), or send the log ({log}).</source>
        <translation>请重试。如果再次停止，请修复运行环境（会保留你的 PyTorch 版本和训练任务），或发送日志（{log}）。</translation>
    </message>
    <message>
        <source>Try again</source>
        <translation>重试</translation>
    </message>
    <message>
        <source>Repair</source>
        <translation>修复</translation>
    </message>
    <message>
        <source>Open the log</source>
        <translation>打开日志</translation>
    </message>
    <message>
        <source>asked for on the Environment page</source>
        <translation>在“环境”页面中选择的</translation>
    </message>
    <message>
        <source>The new PyTorch is ready, but Finetune Studio is still running ({what}), so it was not swapped in.</source>
        <translation>新的 PyTorch 已准备好，但 Finetune Studio 仍在运行（{what}），所以没有换上。</translation>
    </message>
    <message>
        <source>Close every Finetune Studio window and command-line run, then start Finetune Studio: the new PyTorch goes in at once.</source>
        <translation>请关闭所有 Finetune Studio 窗口和命令行训练，然后启动 Finetune Studio：新的 PyTorch 会立即换上。</translation>
    </message>
    <message>
        <source>The PyTorch you had is unchanged.</source>
        <translation>原有的 PyTorch 没有改动。</translation>
    </message>
    <message>
        <source>the build this runtime had</source>
        <translation>这个运行环境原有的版本</translation>
    </message>
    <message>
        <source>This version of Finetune Studio needs PyTorch {floor}, and no release of that kind of build ({tag}) does.</source>
        <translation>这个版本的 Finetune Studio 需要 PyTorch {floor}，而这类版本（{tag}）没有一个满足。</translation>
    </message>
    <message>
        <source>Open the Environment step and install the PyTorch build it recommends, then update again.</source>
        <translation>请打开“环境”步骤，安装它推荐的 PyTorch 版本，然后再次更新。</translation>
    </message>
    <message>
        <source>the build installed now, kept</source>
        <translation>保留当前安装的版本</translation>
    </message>
    <message>
        <source>PyTorch {installed} is older than this version of Finetune Studio needs ({floor}); the same kind of build ({tag}) from the same place</source>
        <translation>PyTorch {installed} 比这个版本的 Finetune Studio 所需的旧（{floor}）；改用来自同一来源的同类版本（{tag}）</translation>
    </message>
    <message>
        <source>Setup failed: {error}</source>
        <translation>安装失败：{error}</translation>
    </message>
    <message>
        <source>Try again, or start with --repair.</source>
        <translation>请重试，或加上 --repair 启动。</translation>
    </message>
    <message>
        <source>Install the latest Microsoft Visual C++ 2015-2022 Redistributable (x64) from {url} (the Finetune Studio installer does it too), then start Finetune Studio again.</source>
        <translation>请从 {url} 安装最新的 Microsoft Visual C++ 2015-2022 可再发行组件（x64）（Finetune Studio 安装程序也会安装它），然后再次启动 Finetune Studio。</translation>
    </message>
    <message>
        <source>The Microsoft Visual C++ runtime {found} is older than PyTorch needs ({minimum} or newer).</source>
        <translation>Microsoft Visual C++ 运行库 {found} 版本太旧，PyTorch 需要 {minimum} 或更新版本。</translation>
    </message>
    <message>
        <source>Smart App Control is on: it blocks the Python and PyTorch files the setup installs, because they are not signed the way it requires.</source>
        <translation>智能应用控制已开启：它会阻止安装过程中安装的 Python 和 PyTorch 文件，因为这些文件没有按它要求的方式签名。</translation>
    </message>
    <message>
        <source>Turn Smart App Control off (Windows Security &gt; App &amp; browser control &gt; Smart App Control), then start Finetune Studio again. Windows cannot turn it back on without reinstalling; the README explains the choice.</source>
        <translation>请关闭智能应用控制（Windows 安全中心 &gt; 应用和浏览器控制 &gt; 智能应用控制），然后再次启动 Finetune Studio。关闭后必须重装 Windows 才能重新开启；README 中说明了如何取舍。</translation>
    </message>
    <message>
        <source>The Microsoft Visual C++ runtime that PyTorch needs is not installed.</source>
        <translation>未安装 PyTorch 需要的 Microsoft Visual C++ 运行库。</translation>
    </message>
    <message>
        <source>The repair stopped with an error: {error}</source>
        <translation>修复因错误而中止：{error}</translation>
    </message>
    <message>
        <source>Downloading {name}: {share} of {total}, {speed}/s</source>
        <translation>正在下载 {name}：{total} 中的 {share}，{speed}/s</translation>
    </message>
    <message>
        <source>Comes with the app: works offline; English only.</source>
        <translation>应用自带：可离线使用；仅支持英文。</translation>
    </message>
    <message>
        <source>Small, fast English encoder.</source>
        <translation>小巧、快速的英文编码器。</translation>
    </message>
    <message>
        <source>The classic Chinese BERT.</source>
        <translation>经典的中文 BERT。</translation>
    </message>
    <message>
        <source>Chinese RoBERTa with whole-word masking; usually better than bert-base-chinese.</source>
        <translation>采用全词掩码的中文 RoBERTa；通常比 bert-base-chinese 更好。</translation>
    </message>
    <message>
        <source>94 languages, Chinese and English among them.</source>
        <translation>支持 94 种语言，包括中文和英文。</translation>
    </message>
    <message>
        <source>Small instruct model: a first chat fine-tune on a laptop GPU.</source>
        <translation>小型指令模型：适合在笔记本 GPU 上做第一次对话微调。</translation>
    </message>
    <message>
        <source>Gated: accept Meta&apos;s license on its page, then add a token in Settings.</source>
        <translation>受限模型：请先在它的页面上同意 Meta 的许可协议，再在“设置”中添加访问令牌。</translation>
    </message>
    <message>
        <source>A good size for 8-12 GB GPUs with LoRA.</source>
        <translation>配合 LoRA，适合 8-12 GB 显存的 GPU。</translation>
    </message>
    <message>
        <source>Research license: not for commercial use without Qwen&apos;s permission.</source>
        <translation>研究许可证：未经 Qwen 许可不得商用。</translation>
    </message>
    <message>
        <source>Strong 7B instruct model; QLoRA on a 16-24 GB GPU.</source>
        <translation>强大的 7B 指令模型；在 16-24 GB 显存的 GPU 上用 QLoRA。</translation>
    </message>
    <message>
        <source>Chinese to English translation (Marian).</source>
        <translation>中译英（Marian）。</translation>
    </message>
    <message>
        <source>English to Chinese translation (Marian).</source>
        <translation>英译中（Marian）。</translation>
    </message>
    <message>
        <source>Multilingual T5 (101 languages): a base for Chinese summarisation or translation.</source>
        <translation>多语言 T5（101 种语言）：可作为中文摘要或翻译的基础模型。</translation>
    </message>
    <message>
        <source>English news summarisation.</source>
        <translation>英文新闻摘要。</translation>
    </message>
</context>
<context>
    <name>moving</name>
    <message>
        <source>Moving the data folder to {target}…</source>
        <translation>正在把数据文件夹移到 {target}…</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
</context>
</TS>
