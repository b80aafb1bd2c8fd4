"""A GGUF file loaded by llama.cpp, its greedy answers compared with the transformers model it came from.

Each prompt is rendered with the model's chat template (as Ollama and LM Studio render it), tokenized
the same way on both sides, and answered greedily for :data:`ANSWER_TOKENS` tokens; the two answers
agree when every token does. Needs ``llama-cpp-python`` (llama.cpp's Python binding).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ANSWER_TOKENS = 16


@dataclass(frozen=True)
class PromptCheck:
    """One prompt's greedy answers: transformers' and llama.cpp's token ids, and where they part."""

    prompt: str
    expected: list[int]
    got: list[int]

    @property
    def agrees(self) -> bool:
        return self.expected == self.got

    @property
    def first_difference(self) -> int | None:
        """The index of the first token that differs (``None`` when they agree)."""
        if self.agrees:
            return None
        return next(
            (i for i, (a, b) in enumerate(zip(self.expected, self.got, strict=False)) if a != b),
            min(len(self.expected), len(self.got)),
        )


def compare(
    gguf_path: Path, model_dir: Path, prompts: list[str], tokens: int = ANSWER_TOKENS
) -> list[PromptCheck]:
    """Greedy answers of llama.cpp (``gguf_path``) and transformers (``model_dir``) to each prompt."""
    import torch
    from llama_cpp import Llama
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    llama = Llama(model_path=str(gguf_path), n_ctx=512, verbose=False, seed=0)
    checks = []
    for prompt in prompts:
        text = tokenizer.apply_chat_template(
            [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
        )
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            out = model.generate(
                torch.tensor([ids]),
                max_new_tokens=tokens,
                do_sample=False,
                pad_token_id=tokenizer.eos_token_id,
            )
        expected = out[0, len(ids) :].tolist()
        llama.reset()
        got = []
        for token in llama.generate(ids, temp=0.0, top_k=1, top_p=1.0, repeat_penalty=1.0):
            got.append(int(token))
            if len(got) == len(expected) or token == llama.token_eos():
                break
        checks.append(PromptCheck(prompt, expected, got))
    return checks
