"""Re-check resources/catalogue.json against the live hubs (run where Hugging Face and ModelScope answer).

For each entry: the id exists; its license, gated flag, parameter count and safetensors size from the
hub's metadata; the ``config`` fields the fit badge reads against the hub's ``config.json``; and
whether the same model answers on ModelScope (then its ``modelscope_id`` is set).
Prints every difference; ``--write`` saves them. Usage: python tools/check_catalogue.py [--write]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

CATALOGUE = Path(__file__).resolve().parents[1] / "resources" / "catalogue.json"
DTYPE_BYTES = {"F32": 4, "BF16": 2, "F16": 2, "I8": 1, "U8": 1}


def main() -> int:
    from huggingface_hub import HfApi
    from modelscope_hub import HubApi

    data = json.loads(CATALOGUE.read_text(encoding="utf-8"))
    hf, ms, changed = HfApi(), HubApi(), 0
    for entry in data["models"]:
        if entry["id"].startswith("bundled:"):
            continue
        info = hf.model_info(entry["id"], expand=["safetensors", "cardData", "gated"])
        found: dict = {
            "license": (info.card_data or {}).get("license", "") if info.card_data else "",
            "gated": bool(info.gated),
        }
        if info.safetensors:
            found["parameters"] = info.safetensors.total
            found["size_bytes"] = sum(
                n * DTYPE_BYTES.get(d, 4) for d, n in info.safetensors.parameters.items()
            )
        if entry.get("config"):
            from huggingface_hub import hf_hub_download

            live = json.loads(Path(hf_hub_download(entry["id"], "config.json")).read_text(encoding="utf-8"))
            found["config"] = {key: live.get(key) for key in entry["config"]}
        try:
            ms.get_repo(entry["id"], "model")
            found["modelscope_id"] = entry["id"]
        except Exception:  # not on ModelScope under the same id: keep what was there
            pass
        for key, value in found.items():
            if value != entry.get(key):
                print(f"{entry['id']}: {key} {entry.get(key)!r} -> {value!r}")
                entry[key], changed = value, changed + 1
        entry["checked"] = f"https://huggingface.co/{entry['id']}"
    print(f"{changed} difference(s).")
    if "--write" in sys.argv and changed:
        CATALOGUE.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
