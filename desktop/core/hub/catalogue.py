"""The recommended models: a catalogue kept as data in ``resources/catalogue.json``.

Each entry names the page it was checked against; ``tools/check_catalogue.py`` re-checks the ids,
licenses and sizes against the live hubs.
"""

from __future__ import annotations

import json
from functools import lru_cache

from desktop.core.hub.search import ModelHit
from desktop.core.system.messages import collected
from desktop.core.system.paths import resources_dir


@lru_cache(maxsize=1)
def _entries() -> tuple[dict, ...]:
    data = json.loads((resources_dir() / "catalogue.json").read_text(encoding="utf-8"))
    return tuple(data["models"])


def recommended(task: str = "", source_kind: str = "huggingface") -> list[ModelHit]:
    """The catalogue's models for ``task`` (all when empty), small to large, as browser rows.

    With ModelScope as the source, entries that have a ModelScope id are offered by that id.
    """
    from desktop.core.settings.config_sections import model_task

    hits = []
    for e in _entries():
        if task and e["task"] != model_task(task):  # preference tuning starts from a chat model
            continue
        ref = e["id"]
        if source_kind == "modelscope" and e.get("modelscope_id"):
            ref = f"modelscope:{e['modelscope_id']}"
        hits.append(
            ModelHit(
                ref=ref,
                repo_id=e["id"],
                source="catalogue",
                parameters=e.get("parameters"),
                size_bytes=e.get("size_bytes"),
                license=e.get("license") or "",
                gated=bool(e.get("gated")),
                task=e["task"],
                languages=", ".join(e.get("languages", [])),
                note=collected(e["note"]) if e.get("note") else "",
            )
        )
    return sorted(hits, key=lambda h: h.parameters or 0)


def model_config(ref: str) -> dict | None:
    """The catalogue's copy of the ``config.json`` fields that a model's shapes need (``model_type``,
    sizes, layers), by hub id or ``modelscope:`` id; ``None`` for a model not in the catalogue.

    With it the fit badge and the memory estimate of a recommended model are known offline.
    """
    repo_id = ref.removeprefix("modelscope:")
    for e in _entries():
        if repo_id in (e["id"], e.get("modelscope_id")) and e.get("config"):
            return dict(e["config"])
    return None


def note(repo_id: str) -> str:
    """The catalogue's one-line note on a model ("" when it is not in the catalogue)."""
    found = next((e.get("note", "") for e in _entries() if e["id"] == repo_id), "")
    return collected(found) if found else ""
