"""Rewards a person can choose without writing code, for reasoning runs (GRPO): each scores a model's
completions of prompts, and TRL's ``GRPOTrainer`` weighs them.

- **answer**: the final answer (found as the format says) equals the reference: as text (normalised:
  width, case, spaces, final punctuation), as a number (within a tolerance), or as one of a set of
  labels;
- **format**: the completion follows the format: ``answer-line`` (reasoning, then a last line
  ``Answer: X``, or ``答案：X``), ``think`` (``<think>...</think>`` then the answer), ``boxed``
  (``\\boxed{X}``), or the user's regular expression (whose group ``answer``, else its first group, is
  the answer);
- **length**: the completion's length in characters inside a range (less, the further outside);
- **language**: the completion in the language of the prompt (Chinese stays Chinese, English English);
- **custom**: ``reward(prompts, completions, **columns)`` in the user's own Python file (its errors are
  one sentence with the file's line).

Every reward is a plain function of text, without torch: the data step previews them on the data (what
each gives the reference answer, and a wrong one) before any model loads.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from desktop.core.system.errors import ConfigError, InputError, Problem
from desktop.core.system.messages import Msg, msg

FORMATS = {
    "answer-line": (
        r"(?is)(?:.*\n)?[ \t]*[*_]*(?:final[ \t]+)?(?:answer|答案|最终答案|最終答案)[ \t]*[*_]*[ \t]*[:：]"
        r"[*_]*[ \t]*(?P<answer>[^\n]*\S)[ \t]*"
    ),
    # The opening tag may be the prompt's (DeepSeek-R1's templates end the prompt with it).
    "think": r"(?s)\s*(?:<think>)?(?P<reasoning>.*?)</think>\s*(?P<answer>\S.*?)\s*",
    "boxed": r"(?s).*\\boxed\{(?P<answer>[^{}]*(?:\{[^{}]*\}[^{}]*)*)\}.*",
}
"""The format presets: a regular expression the whole completion must match, its answer in ``answer``."""
FORMAT_EXAMPLES = {
    "answer-line": "Reasoning...\nAnswer: {answer}",
    "think": "<think>Reasoning...</think>\n{answer}",
    "boxed": "Reasoning... so the answer is \\boxed{{{answer}}}.",
}
"""How a completion in each preset format reads (the preview writes the reference answer so)."""
ANSWER_CHECKS = ("text", "number", "label", "none")
NUMBER = re.compile(r"[-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:/\d+(?:\.\d+)?)?%?")
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
LETTER = re.compile(r"[^\W\d_]")

Reward = Callable[..., list[float | None]]


@dataclass(frozen=True)
class Scored:
    """One reward's name (shown in plots and logs), its weight, and the function TRL calls."""

    name: str
    weight: float
    function: Reward


# -- reading a completion ---------------------------------------------------------------------------


def text_of(completion: Any) -> str:
    """A completion as text: TRL hands conversational ones as ``[{"role": "assistant", "content": ...}]``."""
    if isinstance(completion, list):
        return "".join(str(m.get("content") or "") for m in completion if isinstance(m, dict))
    return "" if completion is None else str(completion)


def format_pattern(fmt: str) -> re.Pattern[str]:
    """The regular expression of a preset, or the user's own (matched against the whole completion).

    Raises:
        ConfigError: The user's expression does not compile, or has no group to take the answer from.
    """
    if fmt in FORMATS:
        return re.compile(FORMATS[fmt])
    try:
        pattern = re.compile(fmt, re.DOTALL)
    except re.error as exc:
        raise ConfigError(
            [Problem("grpo.format", msg("is not a valid regular expression: {reason}.", reason=str(exc)))]
        ) from None
    if not pattern.groups:
        raise ConfigError(
            [
                Problem(
                    "grpo.format",
                    msg("has no group to take the answer from: write (?P<answer>...) around the answer."),
                )
            ]
        )
    return pattern


def answer_in(completion: str, pattern: re.Pattern[str]) -> str | None:
    """The final answer of a completion that follows the format (``None`` when it does not)."""
    found = pattern.fullmatch(completion.strip())
    if found is None:
        return None
    answer = found.groupdict().get("answer")
    if answer is None:
        answer = found.group(1)
    return None if answer is None else answer.strip()


def normalised(text: str) -> str:
    """Text as an answer compares: full-width to half-width, case folded, spaces and a final full stop
    (or 。) gone, ``**bold**`` and quotes around it dropped."""
    text = unicodedata.normalize("NFKC", text).casefold().strip()
    for _ in range(2):  # "**Paris**." and "Paris." alike
        text = re.sub(r"[.。!！]+$", "", text).strip()
        text = re.sub(r"^[*_`\"'“”‘’]+|[*_`\"'“”‘’]+$", "", text).strip()
    return re.sub(r"\s+", " ", text)


LATEX_FRACTION = re.compile(r"\\d?frac\{\s*(-?[\d.]+)\s*\}\{\s*(-?[\d.]+)\s*\}")
GSM8K_ANSWER = re.compile(r"(?s).*####\s*(\S.*?)\s*")


def written_number(text: str) -> tuple[float, bool] | None:
    """The number an answer gives, and whether it was a percentage: the first number written (``7 apples
    (3 left from 10)``), the last after an ``=`` (``3 + 4 = 7``); ``1,234``, ``-3.5``, ``3/4``,
    ``\\frac{3}{4}``, ``12%`` and full-width digits read."""
    text = LATEX_FRACTION.sub(r"\1/\2", unicodedata.normalize("NFKC", text).replace("−", "-"))
    found = NUMBER.findall(text)
    if not found:
        return None
    written = (found[-1] if "=" in text else found[0]).replace(",", "")
    try:
        return float(Fraction(written.rstrip("%"))), written.endswith("%")
    except (ValueError, ZeroDivisionError):
        return None


def reference_of(value: Any) -> str:
    """A reference answer as the rewards compare it: GSM8K's whole worked solution ``... #### 72`` gives
    ``72``; a whole float its integer; "" for none."""
    if value is None or (isinstance(value, float) and (math.isnan(value))):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    text = str(value).strip()
    found = GSM8K_ANSWER.fullmatch(text)
    return found.group(1) if found else text


def number_in(text: str) -> float | None:
    """The number an answer gives (:func:`written_number`), a percentage as its share (``12%``: 0.12)."""
    found = written_number(text)
    if found is None:
        return None
    value, percent = found
    return value / 100 if percent else value


def chinese_share(text: str) -> float:
    """The share of Chinese characters among the letters of ``text`` (0 without letters)."""
    letters = LETTER.findall(text)
    return sum(1 for c in letters if CJK.match(c)) / len(letters) if letters else 0.0


# -- the rewards ------------------------------------------------------------------------------------


def answer_reward(
    check: str, pattern: re.Pattern[str], tolerance: float = 1e-6, labels: Sequence[str] = ()
) -> Reward:
    """1 when the final answer equals the row's ``answer`` (``check``: text, number or label), else 0;
    ``None`` (no score) for a row without a reference answer."""
    known = {normalised(label) for label in labels}

    def reward(
        prompts: list[Any], completions: list[Any], answer: list[Any] | None = None, **_: Any
    ) -> list[float | None]:
        references = answer if answer is not None else [None] * len(completions)
        scores: list[float | None] = []
        for completion, reference in zip(completions, references, strict=True):
            if (
                reference is None
                or (isinstance(reference, float) and math.isnan(reference))
                or str(reference) == ""
            ):
                scores.append(None)
                continue
            given = answer_in(text_of(completion), pattern)
            scores.append(
                1.0 if given is not None and _same(check, given, str(reference), tolerance, known) else 0.0
            )
        return scores

    reward.__name__ = "answer"
    return reward


def _same(check: str, given: str, reference: str, tolerance: float, labels: set[str]) -> bool:
    if check == "number":
        ours, theirs = written_number(given), written_number(reference)
        if ours is None or theirs is None:
            return False

        def close(a: float, b: float) -> bool:
            return abs(a - b) <= tolerance * max(1.0, abs(b))

        if close(ours[0], theirs[0]):  # "50%" for 50, "75%" for "75%"
            return True
        shares = [value / 100 if percent else value for value, percent in (ours, theirs)]
        return ours[1] != theirs[1] and close(*shares)  # "75%" for 0.75
    if check == "label" and labels and normalised(given) not in labels:
        return False
    return normalised(given) == normalised(reference)


def format_reward(pattern: re.Pattern[str]) -> Reward:
    """1 when the completion follows the format (its answer can be found), else 0."""

    def reward(prompts: list[Any], completions: list[Any], **_: Any) -> list[float | None]:
        return [1.0 if answer_in(text_of(c), pattern) is not None else 0.0 for c in completions]

    reward.__name__ = "format"
    return reward


def length_reward(shortest: int, longest: int) -> Reward:
    """1 when the completion's length in characters is in ``[shortest, longest]``; below, its share of
    ``shortest``; above, 1 less the share it overshoots by (0 at twice ``longest``)."""

    def reward(prompts: list[Any], completions: list[Any], **_: Any) -> list[float | None]:
        scores: list[float | None] = []
        for completion in completions:
            size = len(text_of(completion).strip())
            if size < shortest:
                scores.append(size / shortest)
            elif longest and size > longest:
                scores.append(max(0.0, 1.0 - (size - longest) / longest))
            else:
                scores.append(1.0)
        return scores

    reward.__name__ = "length"
    return reward


def language_reward() -> Reward:
    """1 when the completion is in the prompt's language: mostly Chinese (over 30% of its letters) after
    a Chinese prompt, hardly any (under 10%) after another; else 0."""

    def reward(prompts: list[Any], completions: list[Any], **_: Any) -> list[float | None]:
        scores: list[float | None] = []
        for prompt, completion in zip(prompts, completions, strict=True):
            asked = chinese_share(_prompt_text(prompt)) > 0.3
            share = chinese_share(text_of(completion))
            scores.append(1.0 if (share > 0.3 if asked else share < 0.1) else 0.0)
        return scores

    reward.__name__ = "language"
    return reward


def _prompt_text(prompt: Any) -> str:
    """The user's words of a prompt (a conversation's user turns; the system prompt is ours)."""
    if isinstance(prompt, list):
        return "\n".join(
            str(m.get("content") or "") for m in prompt if isinstance(m, dict) and m.get("role") == "user"
        )
    return str(prompt or "")


# -- the user's own reward --------------------------------------------------------------------------


TRL_KEYWORDS = frozenset({"completion_ids", "trainer_state", "log_extra", "log_metric", "environments"})
"""What TRL passes a reward besides the data's columns."""
_LOADED: dict[tuple[str, int, int], Any] = {}  # (path, mtime, size) -> the user's function: loaded once


class RewardFileError(InputError):
    """The user's reward file cannot be loaded, or its function failed: one sentence with the line."""


def custom_reward(path: str | Path) -> Reward:
    """``reward(prompts, completions, **columns)`` from the user's Python file, run in this process.

    Raises:
        RewardFileError: The file is missing, does not compile (the line is named), raises on import, or
            has no function ``reward``.
    """

    path = Path(path).expanduser()
    if not path.is_file():
        raise RewardFileError(msg("The reward file {file} does not exist.", file=str(path)))
    stat = path.stat()
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if key not in _LOADED:  # run once per version of the file, not at every refresh of the preview
        _LOADED[key] = _load(path)
    function = _LOADED[key]
    return _calling(path, function)


def _load(path: Path) -> Any:
    """The user's ``reward`` function, the file run once."""
    import importlib.util
    import traceback

    source = path.read_text(encoding="utf-8-sig")
    try:
        code = compile(source, str(path), "exec")
    except SyntaxError as exc:
        raise RewardFileError(
            msg("{file}, line {line}: {reason}.", file=path.name, line=exc.lineno or 0, reason=exc.msg),
            msg("Fix the file; the rewards preview checks it again."),
        ) from None
    spec = importlib.util.spec_from_loader(f"finetune_studio_reward_{abs(hash(str(path)))}", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__file__ = str(path)
    try:
        exec(code, module.__dict__)  # the user's own code, which the user turned on with a warning
    except Exception as exc:
        raise _failed(path, exc, traceback.extract_tb(exc.__traceback__)) from None
    function = getattr(module, "reward", None)
    if not callable(function):
        raise RewardFileError(
            msg("{file} has no function reward(prompts, completions, **columns).", file=path.name),
            msg("Define it: it returns one number (or None) per completion."),
        )
    return function


def _calling(path: Path, function: Any) -> Reward:
    """``function`` as a reward TRL calls: the data's columns it takes, its errors one sentence."""
    import inspect
    import traceback

    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):  # a builtin or a C function: given everything
        parameters = []
    takes_all = not parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
    named = {p.name for p in parameters}

    def reward(prompts: list[Any], completions: list[Any], **columns: Any) -> list[float | None]:
        texts = [text_of(c) for c in completions]
        # The data's columns, never TRL's own (trainer_state, completion_ids, log_metric ...), which
        # a function written for the docs' signature would refuse.
        given = {k: v for k, v in columns.items() if k not in TRL_KEYWORDS and (takes_all or k in named)}
        try:
            scores = function(prompts, texts, **given)
        except Exception as exc:
            raise _failed(path, exc, traceback.extract_tb(exc.__traceback__)) from None
        return _checked(path, scores, len(texts))

    reward.__name__ = "custom"
    return reward


def _failed(path: Path, exc: BaseException, frames: Any) -> RewardFileError:
    """The user's exception, at the last line of the user's file it passed through."""
    line = next((f.lineno for f in reversed(frames) if Path(f.filename) == path), 0)
    reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return RewardFileError(
        msg("{file}, line {line}: {reason}.", file=path.name, line=line or 0, reason=reason.rstrip(".")),
        msg("Fix the reward file, or turn the custom reward off."),
    )


def _checked(path: Path, scores: Any, count: int) -> list[float | None]:
    if not isinstance(scores, (list, tuple)) or len(scores) != count:
        raise RewardFileError(
            msg(
                "{file}: reward() returned {got} instead of a list of {count} numbers.",
                file=path.name,
                got=type(scores).__name__
                if not isinstance(scores, (list, tuple))
                else f"{len(scores)} values",
                count=count,
            )
        )
    out: list[float | None] = []
    for value in scores:
        if value is not None and not isinstance(value, (int, float)):
            raise RewardFileError(
                msg(
                    "{file}: reward() returned {value!r}, which is not a number.", file=path.name, value=value
                )
            )
        out.append(None if value is None else float(value))
    return out


# -- what a config asks for -------------------------------------------------------------------------


def rewards_of(settings: Any) -> list[Scored]:
    """The rewards a config's ``[grpo]`` section turns on (a weight of 0 turns one off).

    Raises:
        ConfigError: A format that is not a valid regular expression.
        RewardFileError: The custom reward file cannot be loaded.
    """
    pattern = format_pattern(settings.format)
    chosen: list[Scored] = []
    if settings.answer_check != "none" and settings.answer_weight:
        function = answer_reward(settings.answer_check, pattern, settings.tolerance, settings.labels)
        chosen.append(Scored("answer", settings.answer_weight, function))
    if settings.format_weight:
        chosen.append(Scored("format", settings.format_weight, format_reward(pattern)))
    if settings.length_weight and (settings.length_min or settings.length_max):
        chosen.append(
            Scored("length", settings.length_weight, length_reward(settings.length_min, settings.length_max))
        )
    if settings.language_weight:
        chosen.append(Scored("language", settings.language_weight, language_reward()))
    if settings.custom_file and settings.custom_weight:
        chosen.append(Scored("custom", settings.custom_weight, custom_reward(settings.custom_file)))
    return chosen


@dataclass(frozen=True)
class PreviewRow:
    """What each reward gives one row's reference answer, written in the format, and a wrong one."""

    prompt: str
    reference: str
    right: dict[str, float | None]
    wrong_answer: str
    wrong: dict[str, float | None]


def preview(settings: Any, rows: Sequence[tuple[Any, str]], count: int = 3) -> list[PreviewRow]:
    """The rewards on the first ``count`` rows (prompt, reference answer): the reference written as the
    format asks, and a wrong answer (the next row's reference, or the number plus one)."""
    chosen = rewards_of(settings)
    if settings.format not in FORMATS:  # no answer can be written in the user's format: the bare answer,
        chosen = [  # compared as it is, and no format score
            Scored(
                s.name,
                s.weight,
                answer_reward(
                    settings.answer_check,
                    re.compile(r"(?s)(?P<answer>.*)"),
                    settings.tolerance,
                    settings.labels,
                ),
            )
            if s.name == "answer"
            else s
            for s in chosen
            if s.name != "format"
        ]
    example = FORMAT_EXAMPLES.get(settings.format, "{answer}")
    shown = [(prompt, reference_of(answer)) for prompt, answer in rows]
    shown = [row for row in shown if row[1]][:count]
    out = []
    for i, (prompt, reference) in enumerate(shown):
        reference = str(reference)
        wrong = _wrong(reference, [str(r) for _, r in shown[i + 1 :] + shown[:i]], settings.answer_check)
        right_text, wrong_text = example.format(answer=reference), example.format(answer=wrong)
        scores = {}
        for text in (right_text, wrong_text):
            scores[text] = {s.name: s.function([prompt], [text], answer=[reference])[0] for s in chosen}
        out.append(PreviewRow(_prompt_text(prompt), reference, scores[right_text], wrong, scores[wrong_text]))
    return out


def _wrong(reference: str, others: list[str], check: str) -> str:
    if check == "number" and (value := number_in(reference)) is not None:
        return f"{value + 1:g}"
    return next((o for o in others if normalised(o) != normalised(reference)), reference + "?")


def guess_check(answers: Sequence[Any]) -> tuple[str, list[str]]:
    """How the answers of a data set are best compared: ``number`` when every one is a number, ``label``
    (with the labels) when a few values repeat (at most 20, each seen twice on average), else ``text``;
    ``none`` without answers."""
    given = [reference_of(a) for a in answers]
    given = [a for a in given if a]
    if not given:
        return "none", []
    if all(NUMBER.fullmatch(unicodedata.normalize("NFKC", a).replace("−", "-")) for a in given):
        return "number", []
    distinct = sorted({normalised(a) for a in given})
    if len(distinct) <= 20 and len(given) >= 2 * len(distinct):
        return "label", distinct
    return "text", []


def describe(name: str) -> Msg | str:
    """A reward's name in words, for the plots' legend and the log."""
    words = {
        "answer": msg("answer"),
        "format": msg("format"),
        "length": msg("length"),
        "language": msg("language"),
        "custom": msg("your reward"),
    }
    return words.get(name, name)


def scores_words(rewards: dict[str, float | None]) -> Any:
    """``answer 1, format 0.5``: each reward's name and score, joined as the reader's language joins."""
    scores: Any = ""
    for name, value in rewards.items():
        if value is None:
            continue
        part = msg("{reward} {value}", reward=describe(name), value=f"{value:g}")
        scores = msg("{first}, {then}", first=scores, then=part) if scores else part
    return scores


def sample_message(step: int, rewards: dict[str, float | None], completion: str) -> Msg:
    """``sample at step 20 (answer 1, format 0.5): Answer: 7``: an answer the model wrote during a run,
    with what each reward gave it (the log's line)."""
    answer = " ".join(completion.split())[:200]
    return msg(
        "sample at step {step} ({scores}): {answer}", step=step, scores=scores_words(rewards), answer=answer
    )
