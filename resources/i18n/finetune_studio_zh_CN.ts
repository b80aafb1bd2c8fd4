<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>DataPage</name>
    <message>
        <source>Model &amp; data</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>What to train, and on which examples.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose a data file or a hub dataset.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Text classification</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Causal-LM / chat fine-tuning</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sequence-to-sequence</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hub id such as bert-base-chinese, or a local folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Folder…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Browse models…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Download</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A CSV, TSV, JSON(L), Parquet, TXT or Excel file, or a hub dataset id</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>File…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Try the sample</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load short English reviews and a small offline English model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Share of the rows held out to measure the model; 0 = no evaluation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Chat messages</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Instruction / input / output</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Prompt / completion</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Plain text</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Token lengths appear once the model and data are loaded.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Task and model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Task:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Data</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dataset:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>seed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Evaluation:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Columns</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Format:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Token lengths</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The columns are guessed again for {task}; check them below.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Download {dataset}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose a model folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose a data file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Data files ({patterns})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{arch} ({type}), {params} parameters</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A small pretrained model that ships with the app (works offline).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Download the model before training: it is not on this computer yet.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not on this computer yet. Download it here (with progress and Cancel); training starts from the downloaded copy, without the network.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>On this computer (downloaded): training needs no network.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>this GPU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>RAM (no NVIDIA GPU)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fit here: {badge}. Needs about {need} with the current Memory &amp; speed options; {have} free in {where}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Roughly {minutes:.0f} min per epoch on this CPU.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reading the data…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{train} rows for training, {eval} for evaluation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(none)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(choose a column)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>guessed from its name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>guessed from the content</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> (optional)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose a column for: {roles}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loading the tokenizer…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{name}: min {min}, median {median}, 95% {p95}, max {max} tokens; {over} of {count} longer than the limit ({limit}) and cut</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Token lengths unavailable: {error}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>DownloadDialog</name>
    <message>
        <source>Close</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>DownloadPanel</name>
    <message>
        <source>Cancel download</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Enter an access token…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Preparing the download of {name} from {source}…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{minutes}:{seconds:02d} left</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{done} of {total} · {speed}/s · {left}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{name} is on this computer: {folder}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Download cancelled. What was downloaded is kept: Download again resumes it.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>EnvironmentPage</name>
    <message>
        <source>Environment</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Your GPU, your PyTorch, and whether they work together.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Checking your GPU and PyTorch…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Install the matching PyTorch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show log</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>https://download.pytorch.org/whl (default)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A mirror or private index with PyTorch wheels, for slow or blocked networks</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Check again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy diagnostics</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy a report of this machine to paste into a bug report</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Package index:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Installs {requirements} from {index} with {tool}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CPU only</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>PyTorch {version} ({build})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>PyTorch is not installed.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The check failed: {error}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Finetune Studio is still running elsewhere ({others}). Close those windows and command-line runs, then press Install again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{message} Proved: a matrix multiplication ran on {device} in {seconds:.2f} s.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{message} But the GPU test failed: {error}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Diagnostics copied: paste them into your bug report.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ExportPage</name>
    <message>
        <source>Export</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Your fine-tuned model, ready for from_pretrained().</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Train a model first: its folder and scores appear here.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open model folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy path</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A new, empty folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Folder…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>fp16 and bf16 halve the size; fp32 keeps every bit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>LoRA adapters only (not merged)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Also make a .zip</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Also log the model to MLflow</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Logs to {uri}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Set MLFLOW_TRACKING_URI before starting the app to use this.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model folder:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run folder:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Scores:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Files:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export a copy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>To:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Weights:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Try it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose a folder to export to.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Folder not empty</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{folder} is not empty. Replace what is in it?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Exporting and verifying…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Exported to {folder}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Verified: reloaded in a fresh process, outputs differ by at most {diff:.2g}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Warning: the reloaded folder gives different outputs ({diff:.3g}). {error}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Logged to MLflow as {uri}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export cancelled; nothing was written.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export failed: {error}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loading the model…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copying the adapters…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Writing the weights…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copying the tokenizer…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Writing the model card…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Putting the folder in place…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Making the zip archive…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Verifying: reloading the folder in a fresh process…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Logging the model to MLflow…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Done.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export to</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>FitBadge</name>
    <message>
        <source>fits</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>tight</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>fits with LoRA</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>fits with QLoRA</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>does not fit</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>GpuInfoWidget</name>
    <message>
        <source>{used:.1f} of {total:.1f} GB in use</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>compute capability {major}.{minor}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>driver {driver}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CUDA up to {major}.{minor}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{percent}% busy</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>HistogramWidget</name>
    <message>
        <source>tokens</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>HubSettingsDialog</name>
    <message>
        <source>Model sources</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Auto: the fastest that answers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hugging Face</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A mirror of Hugging Face</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ModelScope (魔搭)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>saved in the system keyring</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>for gated models; kept in the system keyring</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Check which sources answer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Download from:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Mirror address:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hugging Face token:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ModelScope token:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Asking each source (at most 3 s)…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{name}: answered in {ms} ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{name}: no answer ({why})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Auto uses {source}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>There is no usable system keyring, so the token was not saved. Set HF_TOKEN / MODELSCOPE_API_TOKEN in the environment instead.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>LivePlotWidget</name>
    <message>
        <source>step</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>Finetune Studio</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Resume</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not now</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Back</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Next</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Training did not finish.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Try the &amp;sample</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Open run config…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Save run config…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Runs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Run history…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Try a model folder…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Settings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model &amp;sources and tokens…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sample loaded: English reviews with the English all-MiniLM-L6-v2 model.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open run config</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run configs (*.toml)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot open this config</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save run config</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Saved {path}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Language</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The new language is used from the next start. Restart Finetune Studio now?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{headline} See the Environment step to fix it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A training run is in progress: stop it first, then install PyTorch.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>An export is in progress: wait for it, then install PyTorch.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Restart to install PyTorch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>PyTorch is in use by this window, so it cannot be replaced now. Restart the app and install the matching PyTorch first thing?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not restart</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Close the app, then run: python -m desktop --repair</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Training…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot apply this change</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Changed {fields}; training again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Training finished. The model is in {folder}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A run is in progress</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop the current run before resuming another.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot resume this run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Resuming {run}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No model in this run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This run has no finished model to export.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open a model folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The run {run} was interrupted at step {step} of {total} (the app or the computer stopped). Resume it from its last checkpoint?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Training is running</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop training and quit? A checkpoint is saved so you can resume later.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopping training and saving a checkpoint…</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ModelBrowser</name>
    <message>
        <source>Choose a model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Languages</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>About</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search models, e.g. qwen, chinese, bert</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Most downloaded</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Most liked</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete from this computer…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Download</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Use this model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Close</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Size</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>License</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Downloads</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Likes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Updated</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fit here</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Recommended</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>On this computer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{license} · gated</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Gated: accept the license on the model&apos;s page, then add a token in Settings &gt; Model sources.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unknown</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{verdict} · {need} of RAM</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> · ~{minutes:.0f} min/epoch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Needs about {need} with the current Memory &amp; speed options; {have} available.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Searching {source}…</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n model(s) found.</source>
        <translation type="unfinished">
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Select a model first.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Select a downloaded model (your own folders are never deleted here).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete from this computer?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete {model} ({size}) from the download cache? It can be downloaded again later.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Deleted {model}: {size} freed.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>OptionsPage</name>
    <message>
        <source>Memory &amp; speed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>How long and how hard to train.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>use epochs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Below 1: a fraction of all steps. From 1: a number of steps.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>each epoch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Folder…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>tensorboard, mlflow (optional)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Also log the run to these trackers; each must be installed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>task and model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Schedule</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Epochs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Max steps</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Scheduler</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Warm-up</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Seed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Batches and sequences</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Batch size per device</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Gradient accumulation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Max sequence length</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Evaluation, checkpoints and output</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Evaluate every (steps)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Checkpoint every (steps)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Log every (steps)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Runs folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Also log to</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Speed and memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>LoRA adapters</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Memory estimate and presets</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose a model first.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fastest</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Balanced</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Lowest memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fit my GPU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Undo</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No NVIDIA GPU was found to fit the settings to.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reading the model&apos;s size…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model&apos;s size could not be read: {error}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>On this computer the run uses RAM: {parts}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No NVIDIA GPU here: training runs on the CPU and needs about {total:.1f} GB of RAM ({free:.1f} GB free). It is much slower than on a GPU: small models and short texts suit it best.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>fits</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>fits, but tightly</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>will not fit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Needs about {total:.1f} GB: {verdict} in the {free:.1f} GB free on {gpu}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>nothing: the current settings already match</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Changed: {changes}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>all linear layers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Precision</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Gradient checkpointing</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pin memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Data loader workers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Empty the GPU cache every (steps)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Compile the model (torch.compile)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Compile backend</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attention</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Train LoRA adapters</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rank</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Alpha</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dropout</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Target modules</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>QLoRA (4-bit base model)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Effective batch: {n} examples per update</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Folder for run folders</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>RunsDialog</name>
    <message>
        <source>Runs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Status</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Task</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dataset</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Best score</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Date</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Resume</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export / try it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Training loss</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Finished</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Running</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Crashed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Runs in {folder}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No runs yet: train a model and it is listed here.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This run saved no checkpoint, so it cannot be resumed; train it again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Select two or more runs to compare their loss curves.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete runs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete these runs for good, with their checkpoints and models?

{names}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not delete a run</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ThroughputPlotWidget</name>
    <message>
        <source>samples/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>tokens/s</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>TrainPage</name>
    <message>
        <source>Train</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Watch the loss fall. Stop keeps a checkpoint you can resume from.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Start training</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Resume</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ready. Press Start to train.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>step %v of %m</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Details</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loss</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>train</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>train (smoothed)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>eval</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>learning rate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>VRAM allocated</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>VRAM reserved</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>process RAM</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GPU used, all processes (NVML)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GPU total</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Throughput</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>samples/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>tokens/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Resuming {run}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopping after this step and saving a checkpoint…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Preparing…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Preparing: {what}…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Training on {device}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run folder: {folder}. {train} training and {eval} evaluation examples, {steps} steps.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Elapsed {elapsed}   ·   remaining about {eta}   ·   {speed} samples/s   ·   epoch {epoch:.2f}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>step {step}: {metrics}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Checkpoint saved at step {step}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Finished. The model is in {folder}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Finished: {metrics}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopped. The checkpoint is kept: press Resume to continue.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopped before training began.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Training did not finish.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Training failed.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Apply and retry: {change}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>TryItPanel</name>
    <message>
        <source>No model yet: finish a run, or open a model folder.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open model folder…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The longest reply, in tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>0 always gives the most likely reply; higher is more varied</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Use the chat template</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send the text as a user&apos;s message, as the model was trained</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Try it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Details</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Max new tokens:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Temperature:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>text classification</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>text generation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>sequence to sequence</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> (LoRA adapters on {base})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model: {folder}, {kind}{adapter}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Type a text and press Try it; the model loads on first use.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A text to classify, e.g. a review</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>An instruction or a question</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A text to transform, e.g. a sentence to translate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open a model folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Type a text first.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loading the model and working…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model loaded. Working…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Generating…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Predicted: {label} ({probability:.1%})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model ended its reply at once (it produced no text).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopped.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Done.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not run the model: {error}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>page</name>
    <message>
        <source>Training on cuda:0 (NVIDIA GeForce RTX 4070)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
</TS>
