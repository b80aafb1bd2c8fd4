"""Reload an exported model folder and print its outputs: the export's verification, run as a script.

It imports only torch and transformers (never this app), so it shows that the folder works in a
plain Python environment::

    python -I reload_check.py FOLDER TASK '["text", ...]'

prints one JSON list: for each text, the logits at the last position, computed in fp32.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

AUTO_CLASSES = {
    "classification": "AutoModelForSequenceClassification",
    "causal-lm": "AutoModelForCausalLM",
    "seq2seq": "AutoModelForSeq2SeqLM",
}


def output_logits(folder: str | Path, task: str, texts: list[str]) -> list[list[float]]:
    """The model's output logits (last position) for each text, computed in fp32."""
    import torch
    import transformers

    model = getattr(transformers, AUTO_CLASSES[task]).from_pretrained(str(folder)).float().eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder))
    out = []
    with torch.no_grad():
        for text in texts:
            inputs = tokenizer(text, return_tensors="pt")
            if task == "seq2seq":
                inputs["decoder_input_ids"] = torch.full((1, 1), model.config.decoder_start_token_id)
            logits = model(**inputs).logits[0]
            out.append((logits[-1] if logits.dim() == 2 else logits).tolist())
    return out


if __name__ == "__main__":
    print(json.dumps(output_logits(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]))))
