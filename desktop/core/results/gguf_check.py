"""A GGUF file loaded by llama.cpp, its greedy answers compared with the transformers model it came from.

Each of the run's own example prompts is rendered with the model's chat template (as Ollama and LM
Studio render it), tokenized the same way on both sides, and answered greedily for
:data:`ANSWER_TOKENS` tokens; a prompt agrees when every token does. A quantization passes when
enough prompts agree (:data:`REQUIRED`): a file that does not is kept under a name that says
"unverified", and the screen shows the first token where the answers part, with both texts.
Needs ``llama-cpp-python`` (llama.cpp's Python binding); without it nothing is called verified.

The export runs the check in a child process of the app's Python (:func:`verify_in_child`, which is
``python -m desktop.core.results.gguf_check``): llama.cpp aborts the whole process on some malformed
files (``GGML_ASSERT``), which then ends the child and not the window; Cancel stops it; and the memory
of both models goes back to the system when it ends.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.core.system.messages import from_wire, msg, to_wire

ANSWER_TOKENS = 16
PROMPTS = 5
REQUIRED = {"f16": 4, "q8_0": 3, "q4_k_m": 2}
"""Prompts out of :data:`PROMPTS` whose first 16 answer tokens must agree, by quantization. A 4-bit
file answers differently more often; its figure is shown all the same."""

FALLBACK_PROMPTS = (
    "Hello! Who are you?",
    "What is the capital of France?",
    "用一句话介绍你自己。",
    "Write a haiku about autumn.",
    "1 + 1 = ?",
)
"""Prompts for a run whose data gives too few (plain text, or data that can no longer be read)."""


@dataclass(frozen=True)
class PromptCheck:
    """One prompt's greedy answers: transformers' and llama.cpp's token ids and texts, and where they part."""

    prompt: str
    expected: list[int]
    got: list[int]
    expected_text: str = ""
    got_text: str = ""
    same_prompt: bool = True
    """Whether llama.cpp read the rendered prompt as the same tokens as transformers."""

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


@dataclass(frozen=True)
class GgufVerification:
    """How a GGUF file fared against the transformers model.

    Attributes:
        quant: The file's quantization.
        checked: Whether llama.cpp loaded and answered (``False``: see ``reason``; nothing verified).
        checks: One per prompt.
        required: Prompts that must agree for the file to pass.
        reason: Why it was not checked, or why llama.cpp could not load it.
    """

    quant: str
    checked: bool
    checks: list[PromptCheck] = field(default_factory=list)
    required: int = 0
    reason: str = ""

    @property
    def agreeing(self) -> int:
        return sum(check.agrees for check in self.checks)

    @property
    def verified(self) -> bool:
        return self.checked and bool(self.checks) and self.agreeing >= self.required

    def first_disagreement(self) -> PromptCheck | None:
        return next((check for check in self.checks if not check.agrees), None)

    def summary(self) -> Any:
        """One sentence for the screen, the card and the command line (a :class:`Message`)."""
        if not self.checked:
            return msg("Not verified: {reason}", reason=self.reason)
        if not self.checks:
            return msg("Unverified: {reason}", reason=self.reason)
        figures = {
            "agree": self.agreeing,
            "total": len(self.checks),
            "tokens": ANSWER_TOKENS,
            "needed": self.required,
        }
        if self.verified:
            return msg(
                "Verified by llama.cpp: {agree} of {total} answers agree with transformers on the first "
                "{tokens} tokens (at least {needed} needed).",
                **figures,
            )
        return msg(
            "Unverified: only {agree} of {total} answers agree with transformers on the first {tokens} "
            "tokens ({needed} needed).",
            **figures,
        )

    def difference(self) -> Any:
        """Where the first disagreeing answer parts from transformers' (``None`` when all agree)."""
        check = self.first_disagreement()
        if check is None:
            return None
        if not check.same_prompt:
            return msg(
                'llama.cpp reads the prompt "{prompt}" as other tokens than transformers: the tokenizer in '
                'the file differs. transformers wrote "{expected}", llama.cpp wrote "{got}".',
                prompt=_short(check.prompt),
                expected=_short(check.expected_text),
                got=_short(check.got_text),
            )
        return msg(
            'For "{prompt}" the answers part at token {index}: transformers wrote "{expected}", '
            'llama.cpp wrote "{got}".',
            prompt=_short(check.prompt),
            index=(check.first_difference or 0) + 1,
            expected=_short(check.expected_text),
            got=_short(check.got_text),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "quant": self.quant,
            "checked": self.checked,
            "verified": self.verified,
            "agreeing": self.agreeing,
            "prompts": len(self.checks),
            "required": self.required,
            "tokens": ANSWER_TOKENS,
            "reason": self.reason,
        }


def _short(text: str, most: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= most else text[: most - 1] + "…"


def llama_cpp_available() -> bool:
    """Whether llama.cpp's Python binding can be imported here."""
    import importlib.util

    return importlib.util.find_spec("llama_cpp") is not None


def example_prompts(run: Any, count: int = PROMPTS) -> tuple[list[str], str]:
    """The run's own example prompts (the user turns its evaluation answered, else its data's first rows,
    topped up with :data:`FALLBACK_PROMPTS`) and the system prompt its chats were trained with ("" when
    none)."""
    from desktop.core.training import evaluation

    prompts: list[str] = []
    reports = evaluation.load(run.path) or {}
    report = reports.get("fine_tuned")
    for sample in getattr(report, "samples", None) or []:
        if sample.get("prompt"):
            prompts.append(str(sample["prompt"]))
    system = ""
    try:
        from_data, system = _from_data(run, count)
    except Exception:  # data moved or unreadable: the evaluation's prompts and ours serve
        from_data = []
    prompts += [p for p in from_data if p not in prompts]
    prompts += [p for p in FALLBACK_PROMPTS if p not in prompts]
    return prompts[:count], system


def _from_data(run: Any, count: int) -> tuple[list[str], str]:
    from desktop.core.data.chats import parse_messages
    from desktop.core.data.columns import causal_format, guess_columns
    from desktop.core.data.tasks.causal_lm import pairs
    from desktop.core.data.train_eval import load_train_eval

    config = run.config()
    train, eval_ = load_train_eval(config)
    table = eval_ if eval_ is not None else train
    if config.task == "preference":  # the pairs' prompts, and the system prompt most of them begin with
        from desktop.core.data.tasks.preference import read_pairs

        asked = [pair.prompt for pair in read_pairs(table.head(50), config.columns) if pair is not None]
        said = [chat[0]["content"] for chat in asked if chat[0]["role"] == "system"]
        shared = said[0] if said and len(set(said)) == 1 and 2 * len(said) >= len(asked) else ""
        return [chat[-1]["content"] for chat in asked[:count]], shared
    if config.task == "grpo":  # the prompts, under the run's system prompt
        from desktop.core.data.tasks.grpo import rows

        prompts, _, _ = rows(table.head(50), guess_columns(table, "grpo", config.columns).columns, "")
        return [chat[-1]["content"] for chat in prompts[:count]], config.grpo.system_prompt
    columns = guess_columns(table, "causal-lm", config.columns).columns
    found, _ = pairs(table, columns, count)
    system = ""
    if causal_format(columns) == "chat":  # one system prompt that most chats begin with: the run's own
        firsts = [(parse_messages(row[columns.messages]) or [{}])[0] for row in table.records(50)]
        said = [str(m.get("content", "")) for m in firsts if m.get("role") == "system"]
        if said and len(set(said)) == 1 and 2 * len(said) >= len(firsts):
            system = said[0]
    return [prompt for prompt, _ in found], system


class LlamaCppFailed(Exception):
    """llama.cpp could not load or run the file: the finding itself (the file is unverified)."""


def compare(
    gguf_path: Path,
    model_dir: Path,
    prompts: list[str],
    tokens: int = ANSWER_TOKENS,
    system: str = "",
    progress: Callable[[int, int], None] | None = None,
) -> list[PromptCheck]:
    """Greedy answers of llama.cpp (``gguf_path``) and transformers (``model_dir``) to each prompt.

    llama.cpp answers first and lets go of its model before transformers loads: a 7B model is 14 GB on
    each side. Both stop at the model's end tokens (``generation_config.json``'s, Llama 3 has three).

    Raises:
        LlamaCppFailed: llama.cpp could not load or run the file.
    """
    from transformers import AutoTokenizer

    from desktop.core.data.tasks.causal_lm import ensure_chat_template

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    ensure_chat_template(tokenizer)
    rendered = []
    for prompt in prompts:
        chat = ([{"role": "system", "content": system}] if system else []) + [
            {"role": "user", "content": prompt}
        ]
        text = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
        rendered.append((prompt, text, tokenizer(text, add_special_tokens=False)["input_ids"]))
    ends = _end_tokens(model_dir, tokenizer)
    answers = _llama_answers(gguf_path, rendered, tokens, ends)
    expected_all = _transformers_answers(model_dir, rendered, tokens, ends)
    checks = []
    for done, ((prompt, _, ids), (read, got), expected) in enumerate(
        zip(rendered, answers, expected_all, strict=True), 1
    ):
        checks.append(
            PromptCheck(
                prompt,
                expected,
                got,
                tokenizer.decode(expected, skip_special_tokens=False),
                tokenizer.decode(got, skip_special_tokens=False),
                read == ids,
            )
        )
        if progress is not None:
            progress(done, len(prompts))
    return checks


def _end_tokens(model_dir: Path, tokenizer: Any) -> list[int]:
    from transformers import GenerationConfig

    ends = {tokenizer.eos_token_id} if tokenizer.eos_token_id is not None else set()
    try:
        saved = GenerationConfig.from_pretrained(model_dir).eos_token_id
    except OSError:  # no generation_config.json
        saved = None
    ends |= set(saved if isinstance(saved, list) else [saved] if saved is not None else [])
    return sorted(ends)


def _llama_answers(
    gguf_path: Path, rendered: list[tuple[str, str, list[int]]], tokens: int, ends: list[int]
) -> list[tuple[list[int], list[int]]]:
    """llama.cpp's (prompt tokens, answer tokens) for each rendered prompt."""
    try:
        from llama_cpp import Llama

        longest = max((len(ids) for _, _, ids in rendered), default=0)
        # A context just long enough: the model's own (32k for many) would allocate gigabytes of cache.
        llama = Llama(model_path=str(gguf_path), n_ctx=2 * longest + tokens + 16, verbose=False, seed=0)
    except Exception as exc:
        raise LlamaCppFailed(str(exc) or type(exc).__name__) from exc
    answers = []
    try:
        for _, text, ids in rendered:
            llama.reset()
            # llama.cpp reads the rendered text itself, as Ollama and LM Studio give it: a tokenizer
            # written wrong shows as a different answer, not only wrong weights.
            read = _llama_tokens(llama, text, ids)
            got: list[int] = []
            for token in llama.generate(read, temp=0.0, top_k=1, top_p=1.0, repeat_penalty=1.0):
                got.append(int(token))
                if len(got) >= tokens or token in ends or token == llama.token_eos():
                    break
            answers.append((read, got))
    except Exception as exc:
        raise LlamaCppFailed(str(exc) or type(exc).__name__) from exc
    finally:
        close = getattr(llama, "close", None)
        if callable(close):
            close()
    return answers


def _transformers_answers(
    model_dir: Path, rendered: list[tuple[str, str, list[int]]], tokens: int, ends: list[int]
) -> list[list[int]]:
    """transformers' greedy answer tokens, with none of the model's own generation settings: a
    ``repetition_penalty`` in its ``generation_config.json`` (Qwen2.5's 1.05) would change them."""
    import torch
    from transformers import AutoModelForCausalLM, GenerationConfig

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=_reference_dtype(model_dir)).eval()
    greedy = GenerationConfig(
        max_new_tokens=tokens,
        do_sample=False,
        eos_token_id=ends or None,
        pad_token_id=ends[0] if ends else 0,
    )
    model.generation_config = greedy  # passed to generate() alone, it is merged with the saved one
    answers = []
    with torch.no_grad():
        for _, _, ids in rendered:
            out = model.generate(
                torch.tensor([ids]),
                attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                repetition_penalty=1.0,
            )
            answers.append(out[0, len(ids) :].tolist())
    return answers


def _llama_tokens(llama: Any, text: str, ids: list[int]) -> list[int]:
    """The prompt as llama.cpp tokenizes ``text`` (special tokens parsed, no BOS added: the rendered text
    carries it when the template does); ``ids`` where the binding cannot tokenize (a stand-in)."""
    tokenize = getattr(llama, "tokenize", None)
    if tokenize is None:
        return ids
    return [int(t) for t in tokenize(text.encode("utf-8"), add_bos=False, special=True)]


def _reference_dtype(model_dir: Path) -> Any:
    """float32 for the transformers side (the answers as trained) when it fits in half the free memory;
    else the type the weights were saved in (a 7B model in float32 is 28 GB)."""
    import torch

    from desktop.core.hub.search import local_weights

    weights = local_weights(model_dir)[0] or 0
    try:
        import psutil

        free = psutil.virtual_memory().available
    except ImportError:
        return torch.float32
    return torch.float32 if 4 * weights < free / 2 else "auto"


def verify(
    gguf_path: Path,
    model_dir: Path,
    quant: str,
    prompts: list[str],
    system: str = "",
    progress: Callable[[int, int], None] | None = None,
) -> GgufVerification:
    """Load ``gguf_path`` with llama.cpp and compare its answers with transformers' (never raises: a
    file llama.cpp cannot load is unverified, with llama.cpp's words as the reason)."""
    required = REQUIRED.get(quant, len(prompts))
    if not llama_cpp_available():
        reason = msg("llama.cpp (the llama-cpp-python package) is not installed.")
        return GgufVerification(quant, False, required=required, reason=reason)
    try:
        checks = compare(gguf_path, model_dir, prompts, system=system, progress=progress)
    except LlamaCppFailed as exc:  # llama.cpp refused the file: that is the finding
        reason = msg("llama.cpp could not load or run the file: {error}", error=str(exc))
        return GgufVerification(quant, True, [], required, reason)
    except Exception as exc:  # the transformers side (memory, a missing library): nothing was compared
        error = str(exc) or type(exc).__name__
        reason = msg("the model could not be run by transformers to compare with: {error}", error=error)
        return GgufVerification(quant, False, required=required, reason=reason)
    return GgufVerification(quant, True, checks, required)


WIRE = "@@gguf-check "
"""What starts the child's lines meant for the app; llama.cpp and the libraries may print others."""


def verify_in_child(
    gguf_path: Path,
    model_dir: Path,
    quant: str,
    prompts: list[str],
    system: str = "",
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> GgufVerification:
    """:func:`verify` in a child process (see the module's docstring); a child that ends without an
    answer leaves the file unverified, with its last words as the reason.

    Raises:
        GgufCancelled: ``cancelled()`` said so; the child was stopped.
    """
    import json
    import subprocess
    import sys

    from desktop.core.results.gguf_writer import GgufCancelled
    from desktop.core.system import processes

    required = REQUIRED.get(quant, len(prompts))
    if not llama_cpp_available():
        reason = msg("llama.cpp (the llama-cpp-python package) is not installed.")
        return GgufVerification(quant, False, required=required, reason=reason)
    request = {"gguf": str(gguf_path), "model": str(model_dir), "quant": quant, "prompts": prompts}
    child = processes.popen(
        [sys.executable, "-m", "desktop.core.results.gguf_check"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # one pipe, read to the end: llama.cpp's log never fills it
        text=True,
        encoding="utf-8",
        errors="replace",
        env=processes.child_env(PYTHONPATH=processes.package_path()),
    )
    ended, stopped = processes.kill_when(child, cancelled)
    answer, last = None, ""
    try:
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write(json.dumps({**request, "system": system}))
        child.stdin.close()
        for line in child.stdout:
            if not line.startswith(WIRE):
                last = line.strip() or last
                continue
            data = json.loads(line[len(WIRE) :])
            if "progress" in data and progress is not None:
                progress(*data["progress"])
            answer = data.get("result", answer)
        child.wait()
    except BaseException:
        processes.kill_tree(child.pid)
        raise
    finally:
        ended.set()
    if stopped.is_set():
        raise GgufCancelled
    if answer is None:
        reason = msg(
            "the checking process ended without an answer (exit code {code}): {error}",
            code=child.returncode,
            error=last or "-",
        )
        return GgufVerification(quant, True, [], required, reason)
    return GgufVerification(
        answer["quant"],
        answer["checked"],
        [PromptCheck(**check) for check in answer["checks"]],
        answer["required"],
        from_wire(answer["reason"]),
    )


def _answer(verification: GgufVerification) -> dict[str, Any]:
    from dataclasses import asdict

    return {
        "quant": verification.quant,
        "checked": verification.checked,
        "checks": [asdict(check) for check in verification.checks],
        "required": verification.required,
        "reason": to_wire(verification.reason),
    }


def _child() -> None:
    """The child's side: the request on stdin, progress and the answer on stdout."""
    import json
    import sys

    request = json.loads(sys.stdin.read())

    def progress(done: int, total: int) -> None:
        print(WIRE + json.dumps({"progress": [done, total]}), flush=True)

    verification = verify(
        Path(request["gguf"]),
        Path(request["model"]),
        request["quant"],
        request["prompts"],
        request["system"],
        progress,
    )
    print(WIRE + json.dumps({"result": _answer(verification)}, ensure_ascii=True), flush=True)


if __name__ == "__main__":
    _child()
