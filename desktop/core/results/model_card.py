"""The model card of an exported folder (``README.md``): what it is, how it scored, how to load it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from desktop.core.runs.folders import RunDir
from desktop.core.system.events import FinishedEvent, LogEvent
from desktop.core.system.messages import msg


def write_model_card(
    run: RunDir, config: Any, out: Path, dtype: str, lora: str, language: str = "en"
) -> None:
    """The model card (``README.md``): in English, the language of model hubs, with a section in the
    user's language when the app runs in Chinese."""
    from desktop.core.results.plot_png import line_chart

    events = run.events()
    train = [(e.step, e.metrics["loss"]) for e in events if isinstance(e, LogEvent) and "loss" in e.metrics]
    evals = [
        (e.step, e.metrics["eval_loss"])
        for e in events
        if isinstance(e, LogEvent) and "eval_loss" in e.metrics
    ]
    finished = [e for e in events if isinstance(e, FinishedEvent)]
    metrics = finished[-1].metrics if finished else {}
    from desktop.core.training.best import note

    chosen = note(finished[-1].best) if finished else None  # which checkpoint these weights are
    from desktop.core.results.last_step import LastStepRun, sentence

    last = isinstance(run, LastStepRun) and bool(finished)  # the last step's model, chosen on Export
    if last:
        found = finished[-1].best
        chosen = sentence(found)
        scored = found.get("last_value")
        metrics = {found["metric"]: scored} if scored is not None else {}
    if train:
        line_chart({"train loss": train, "eval loss": evals}, out / "loss.png")
    data = config.data.hub_id or ", ".join(Path(f).name for f in config.data.files)
    from desktop.core.data.tasks import auto_class

    auto = auto_class(config.task).__name__
    load = (
        'from peft import AutoPeftModel\nmodel = AutoPeftModel.from_pretrained("path/to/this/folder")'
        if lora == "adapter"
        else "from transformers import pipeline\n"
        'classify = pipeline("image-classification", model="path/to/this/folder")\n'
        'print(classify("picture.jpg"))'
        if config.task == "image-classification"
        else f"from transformers import {auto}, AutoProcessor\n"
        f'model = {auto}.from_pretrained("path/to/this/folder")\n'
        'processor = AutoProcessor.from_pretrained("path/to/this/folder")'
        if config.task == "vision-chat"
        else f"from transformers import {auto}, AutoTokenizer\n"
        f'model = {auto}.from_pretrained("path/to/this/folder")\n'
        'tokenizer = AutoTokenizer.from_pretrained("path/to/this/folder")'
    )
    rows = "\n".join(f"| {k} | {v:.4g} |" for k, v in metrics.items())
    from desktop.core.training.evaluation import card_section

    evaluation_section = "" if last else card_section(run.path, out)  # that evaluation is the best's
    options = json.dumps(
        {
            "training": vars(config.training),
            "performance": vars(config.performance),
            "lora": vars(config.lora),
        },
        indent=2,
        default=str,
    )
    # Preference runs are found on the hub as TRL's are: by the library and the method.
    tags = f", trl, {config.preference.method}" if config.task == "preference" else ""
    tags = ", trl" if config.task == "grpo" else tags  # the task is the method
    if lora == "adapter":
        tags += ", peft, lora"
    card = f"""---
{front_matter(config, tags, lora)}
---

# {run.path.name}

Fine-tuned with Finetune Studio from **{config.model.name}** for **{config.task}** on **{data}**.
Weights: {dtype}{", LoRA adapters only" if lora == "adapter" else ""}.

## Results

| metric | value |
|---|---|
{rows or "| (none recorded) | |"}

{str(chosen) if chosen is not None else ""}

{"![Loss curve (blue: training, orange: evaluation)](loss.png)" if train else ""}

{evaluation_section}
## How to load

```python
{load}
```

## Reproduce

`finetune-studio-config.toml` is the run's config. With Finetune Studio installed:

```
finetune-studio-cli train finetune-studio-config.toml
```

## Options used

```json
{options}
```
"""
    if language != "en":
        card += _card_section(language, config.model.name, config.task, data, metrics)
    (out / "README.md").write_text(card, encoding="utf-8")


HUB_LICENSES = frozenset(
    [
        "apache-2.0",
        "mit",
        "openrail",
        "bigscience-openrail-m",
        "creativeml-openrail-m",
        "bigscience-bloom-rail-1.0",
        "bigcode-openrail-m",
        "afl-3.0",
        "artistic-2.0",
        "bsl-1.0",
        "bsd",
        "bsd-2-clause",
        "bsd-3-clause",
        "bsd-3-clause-clear",
        "c-uda",
        "cc",
        "cc0-1.0",
        "cc-by-2.0",
        "cc-by-2.5",
        "cc-by-3.0",
        "cc-by-4.0",
        "cc-by-sa-3.0",
        "cc-by-sa-4.0",
        "cc-by-nc-2.0",
        "cc-by-nc-3.0",
        "cc-by-nc-4.0",
        "cc-by-nd-4.0",
        "cc-by-nc-nd-3.0",
        "cc-by-nc-nd-4.0",
        "cc-by-nc-sa-2.0",
        "cc-by-nc-sa-3.0",
        "cc-by-nc-sa-4.0",
        "cdla-sharing-1.0",
        "cdla-permissive-1.0",
        "cdla-permissive-2.0",
        "wtfpl",
        "ecl-2.0",
        "epl-1.0",
        "epl-2.0",
        "etalab-2.0",
        "eupl-1.1",
        "eupl-1.2",
        "agpl-3.0",
        "gfdl",
        "gpl",
        "gpl-2.0",
        "gpl-3.0",
        "lgpl",
        "lgpl-2.1",
        "lgpl-3.0",
        "isc",
        "h-research",
        "intel-research",
        "lppl-1.3c",
        "ms-pl",
        "apple-ascl",
        "apple-amlr",
        "mpl-2.0",
        "odc-by",
        "odbl",
        "openrail++",
        "osl-3.0",
        "postgresql",
        "ofl-1.1",
        "ncsa",
        "unlicense",
        "zlib",
        "pddl",
        "lgpl-lr",
        "deepfloyd-if-license",
        "fair-noncommercial-research-license",
        "llama2",
        "llama3",
        "llama3.1",
        "llama3.2",
        "llama3.3",
        "llama4",
        "gemma",
        "unknown",
        "other",
    ]
)
"""The licence ids the Hugging Face hub accepts in a card's metadata (its "license" field's list)."""


def front_matter(config: Any, tags: str, lora: str = "merged") -> str:
    """The card's metadata, as the hubs read it: the library, the base model and the data when they
    are hub ids (a folder on this computer means nothing there), the tags, and the base model's license
    (from its own card, when the model is on this computer)."""
    lines = ["library_name: peft" if lora == "adapter" else "library_name: transformers"]
    name = config.model.name
    if _hub_id(name):
        lines.append(f"base_model: {name}")
    if getattr(config.data, "hub_id", "") and _hub_id(config.data.hub_id):
        lines.append(f"datasets: [{config.data.hub_id}]")
    lines += license_lines(name)
    lines.append(f"tags: [finetune-studio, {config.task}{tags}]")
    return "\n".join(lines)


def _hub_id(name: str) -> bool:
    return bool(re.fullmatch(r"[\w.-]+/[\w.-]+", name or "")) and not Path(name).expanduser().exists()


def license_lines(name: str) -> list[str]:
    """The ``license`` lines of the base model's own card (its folder, or its copy in a hub's cache),
    kept only when the hub knows the licence; ``other`` with its ``license_name`` and ``license_link``."""
    folder = Path(name).expanduser()
    if not folder.is_dir():
        from desktop.core.hub.access import cached_snapshot

        try:
            folder = cached_snapshot(name) or Path()
        except Exception:  # a name no cache knows
            return []
    try:
        text = (folder / "README.md").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    head = text.split("---", 2)[1] if text.startswith("---") and text.count("---") >= 2 else ""

    def field(key: str) -> str:
        found = re.search(rf"^{key}:[ \t]*['\"]?([^'\"\n]+?)['\"]?[ \t]*$", head, re.MULTILINE)
        return found.group(1).strip() if found else ""

    license_ = field("license").lower()
    if license_ not in HUB_LICENSES:
        return []
    if license_ != "other":
        return [f"license: {license_}"]
    extra = [f"{key}: {value}" for key in ("license_name", "license_link") if (value := field(key))]
    return ["license: other", *extra] if len(extra) == 2 else []


def _card_section(language: str, model: str, task: str, data: str, metrics: dict) -> str:
    """The model card's section in ``language`` (its sentences come from the translation files)."""
    from desktop.core.system.translations import localized

    lines = [
        localized(msg("About this model"), language),
        localized(
            msg(
                "Fine-tuned with Finetune Studio from {model} for {task} on {data}.",
                model=model,
                task=task,
                data=data,
            ),
            language,
        ),
        localized(msg("Load it as the section How to load shows; the run's config reproduces it."), language),
    ]
    if metrics:
        results = ", ".join(f"{key} = {value:.4g}" for key, value in metrics.items())
        lines.append(localized(msg("Results: {results}.", results=results), language))
    return f"\n## {lines[0]}\n\n" + "\n\n".join(lines[1:]) + "\n"
