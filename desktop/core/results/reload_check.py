"""Reload an exported model folder and print its outputs: the export's verification, run as a script.

It imports only torch and transformers (never this app), so it shows that the folder works in a
plain Python environment::

    python -I reload_check.py FOLDER TASK - < texts.json     (or the JSON list as the third argument)

prints one JSON list: for each text, the logits at the last position, computed in fp32. For an image
classifier the "texts" are paths of pictures, read by the folder's image processor.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

AUTO_CLASSES = {
    "classification": "AutoModelForSequenceClassification",
    "causal-lm": "AutoModelForCausalLM",
    "seq2seq": "AutoModelForSeq2SeqLM",
    "preference": "AutoModelForCausalLM",
    "grpo": "AutoModelForCausalLM",
    "image-classification": "AutoModelForImageClassification",
    "vision-chat": "AutoModelForImageTextToText",
}


def output_logits(folder: str | Path, task: str, texts: list[str]) -> list[list[float]]:
    """The model's output logits (last position) for each text, computed in fp32."""
    import torch
    import transformers

    model = getattr(transformers, AUTO_CLASSES[task]).from_pretrained(str(folder)).float().eval()
    if task == "image-classification":
        return _picture_logits(model, transformers.AutoImageProcessor.from_pretrained(str(folder)), texts)
    if task == "vision-chat":
        return _conversation_logits(model, transformers.AutoProcessor.from_pretrained(str(folder)), texts)
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder))
    out = []
    with torch.no_grad():
        for text in texts:
            # Long texts are cut where the model's positions end (training cut them too).
            inputs = tokenizer(text, return_tensors="pt", truncation=True, max_length=_max_positions(model))
            if task == "seq2seq":
                inputs["decoder_input_ids"] = torch.full((1, 1), model.config.decoder_start_token_id)
            logits = model(**inputs).logits[0]
            out.append((logits[-1] if logits.dim() == 2 else logits).tolist())
    return out


def _picture_logits(model: object, processor: object, paths: list[str]) -> list[list[float]]:
    import torch
    from PIL import Image, ImageOps

    out = []
    with torch.no_grad():
        for path in paths:
            with Image.open(path) as image:
                picture = ImageOps.exif_transpose(image).convert("RGB")
            inputs = processor(images=[picture], return_tensors="pt")  # type: ignore[operator]
            out.append(model(pixel_values=inputs["pixel_values"]).logits[0].tolist())  # type: ignore[operator]
    return out


def _conversation_logits(model: object, processor: object, items: list[str]) -> list[list[float]]:
    """Each item is JSON: {"image": a picture's path, "text": a question}; the logits of the answer's
    first token, the question asked about the picture through the folder's chat template."""
    import torch
    from PIL import Image, ImageOps

    out = []
    with torch.no_grad():
        for item in items:
            asked = json.loads(item)
            with Image.open(asked["image"]) as image:
                picture = ImageOps.exif_transpose(image).convert("RGB")
            messages = [
                {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": asked["text"]}]}
            ]
            text = processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)  # type: ignore[attr-defined]
            inputs = processor(text=[text], images=[[picture]], return_tensors="pt")  # type: ignore[operator]
            out.append(model(**inputs).logits[0, -1].tolist())  # type: ignore[operator]
    return out


def _max_positions(model: object) -> int:
    config = model.config  # type: ignore[attr-defined]
    for name in ("max_position_embeddings", "n_positions", "max_length"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return min(value, 4096)
    return 512


if __name__ == "__main__":
    # The texts come as JSON on stdin ("-"), or as the third argument.
    texts = json.loads(sys.stdin.read() if sys.argv[3] == "-" else sys.argv[3])
    print(json.dumps(output_logits(sys.argv[1], sys.argv[2], texts)))
