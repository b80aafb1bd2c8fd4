"""The recommended models: complete entries, every task and language the browser promises."""

from __future__ import annotations

import json

from desktop.core.hub.catalogue import recommended
from desktop.core.settings.config import HUB_ID
from desktop.core.system.paths import resources_dir


def test_every_entry_is_complete_and_names_where_it_was_checked() -> None:
    entries = json.loads((resources_dir() / "catalogue.json").read_text(encoding="utf-8"))["models"]
    for e in entries:
        assert e["id"].startswith("bundled:") or HUB_ID.match(e["id"]), e["id"]
        assert e["checked"].startswith("https://"), e["id"]
        assert e["task"] in ("classification", "causal-lm", "seq2seq", "image-classification"), e["id"]
        assert e["languages"] or e["task"] == "image-classification", e["id"]  # pictures have no language
        assert isinstance(e["gated"], bool) and "license" in e and e["note"], e["id"]
    assert len({e["id"] for e in entries}) == len(entries)


def test_each_task_has_chinese_models_from_small_to_large() -> None:
    for task in ("classification", "causal-lm", "seq2seq", "preference"):
        hits = recommended(task)
        assert any("zh" in h.languages for h in hits), task
        sizes = [h.parameters or 0 for h in hits]
        assert sizes == sorted(sizes)  # small to large
    chat = [h.parameters for h in recommended("causal-lm")]
    assert min(chat) < 1e9 and max(chat) > 7e9  # ~0.5B to ~8B
    assert any(h.gated for h in recommended("causal-lm"))  # a gated one says so
    assert recommended("preference") == recommended("causal-lm")  # preference tuning tunes a chat model


def test_the_fit_of_every_recommended_model_is_known_offline(monkeypatch) -> None:
    """Each entry's stored config fields rebuild the model it names: the parameter count from the
    shapes matches the hub's count within 1%. Without them the browser's "Fit here" said "unknown"
    for every recommended model on a computer that cannot reach the hub."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from desktop.core.hub.fit import config_for_fit, fit
    from desktop.core.settings.config import RunConfig

    for hit in recommended():
        config = RunConfig(task=hit.task)
        config.model.name = hit.ref
        found = fit(config_for_fit(hit.ref), config, gpu_free=None, ram_available=64 * 2**30)
        if hit.repo_id == "google/mt5-small":  # transformers 5 ties mT5's head to its embedding
            assert found.parameters < hit.parameters
            continue
        assert abs(found.parameters / hit.parameters - 1) < 0.01, hit.ref
        assert found.badge in ("fits", "tight", "fits with LoRA", "does not fit"), hit.ref
