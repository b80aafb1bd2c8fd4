"""A finished chat run exported as GGUF: the file, checked by llama.cpp, with a Modelfile and a card.

In the export folder::

    RUN-Q8_0.gguf          the model (RUN-Q8_0-unverified.gguf when llama.cpp's answers differ)
    Modelfile              for Ollama: ollama create NAME -f Modelfile
    README.md              the card: how to run it, and each file's verification figure
    gguf-checks.json       those figures, for tools

With the LM Studio layout the files go to ``DEST/finetune-studio/RUN/``, the ``publisher/model``
folders LM Studio lists its models by. ``f16`` and ``q8_0`` are written by :mod:`gguf_writer`; the
K-quant ``q4_k_m`` is made from the f16 file by llama.cpp's quantizer (:mod:`gguf_quantize`).
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.core.results.gguf_check import GgufVerification
from desktop.core.results.gguf_quantize import K_QUANTS
from desktop.core.system.errors import InputError
from desktop.core.system.messages import Msg, msg

QUANTS = ("f16", "q8_0", "q4_k_m")
LAYOUTS = ("folder", "lmstudio")
PUBLISHER = "finetune-studio"
BYTES_PER_WEIGHT = {"f16": 2.0, "q8_0": 34 / 32, "q4_k_m": 0.6}
CHECKS_NAME = "gguf-checks.json"
log = logging.getLogger(__name__)

CARD_NAME = "README.md"
OLLAMA_NO_TEMPLATE = msg(
    "Ollama will not apply this model's chat format: its chat template could not be written in Ollama's "
    "template language so that it renders the same. llama.cpp (llama-cli -cnv) and LM Studio read the "
    "template in the file itself; for Ollama, add a TEMPLATE to the Modelfile by hand."
)
CARD_MARK = "<!-- Finetune Studio: GGUF export card -->"
UNVERIFIED = "-unverified"


@dataclass(frozen=True)
class GgufExport:
    """What :func:`export_run_gguf` made: the file (renamed when unverified), its size and quantization,
    llama.cpp's verdict, and the Modelfile and card beside it."""

    path: Path
    size: int
    quant: str
    verification: GgufVerification
    modelfile: Path
    card: Path
    chat_format: str = "written"  # the Modelfile's TEMPLATE: "written" (a family's), "derived" or "none"
    ollama_agreement: tuple[int, int] = (0, 0)
    """Of the check's prompts, how many the Modelfile's TEMPLATE renders as the chat template does, and
    of how many."""

    def ollama_note(self) -> Msg | None:
        """What to tell a user whose Modelfile has no TEMPLATE (``None`` when it has one)."""
        return OLLAMA_NO_TEMPLATE if self.chat_format == "none" else None

    def ollama_summary(self) -> Msg | None:
        """How the Modelfile's TEMPLATE reads the check's prompts (``None`` without one, or without
        prompts)."""
        agreeing, total = self.ollama_agreement
        if self.chat_format == "none" or not total:
            return None
        if agreeing == total:
            return msg(
                "Ollama: the Modelfile's template renders {agree} of {total} prompts as the model's chat "
                "template does, so Ollama asks the model what llama.cpp was asked.",
                agree=agreeing,
                total=total,
            )
        return msg(
            "Ollama: the Modelfile's template renders only {agree} of {total} prompts as the model's chat "
            "template does; Ollama's answers may differ. llama.cpp (llama-cli -cnv) and LM Studio use the "
            "model's own template.",
            agree=agreeing,
            total=total,
        )

    @property
    def ollama_name(self) -> str:
        """The name ``ollama create`` is given: the file's, lower case, without ``-unverified``."""
        return ollama_name(self.path)


def ollama_name(path: Path) -> str:
    """A name Ollama takes for the file at ``path``: ASCII letters, digits, ``.``, ``_`` and ``-`` only
    (a run named in Chinese would be refused), else ``finetune-studio-`` and the run's time stamp."""
    import re

    stem = path.stem.lower().removesuffix(UNVERIFIED)
    name = re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9._-]+", "-", stem)).strip("-._")
    if not re.search(r"[a-z]", name.rsplit("-", 1)[0]):  # nothing left before the weights' type but digits
        name = f"{PUBLISHER}-{name}"
    return name


def folder_for(run: Any, dest: Path, layout: str = "folder") -> Path:
    """The folder the files go in: ``dest``, or ``dest/finetune-studio/RUN`` for LM Studio."""
    return dest / PUBLISHER / run.path.name if layout == "lmstudio" else dest


def gguf_path(run: Any, dest: Path, quant: str, layout: str = "folder") -> Path:
    """Where :func:`export_run_gguf` writes ``run``'s GGUF: ``RUN-QUANT.gguf`` in :func:`folder_for`."""
    return folder_for(run, dest, layout) / f"{run.path.name}-{quant.upper()}.gguf"


def unverified_path(path: Path) -> Path:
    return path.with_name(f"{path.stem}{UNVERIFIED}{path.suffix}")


def already_there(run: Any, dest: Path, quant: str, layout: str = "folder") -> list[Path]:
    """The files an export would replace: the GGUF (under either name), and a Modelfile or README.md
    that this app did not write (ours are rewritten for each export to the folder)."""
    from desktop.core.results.modelfile import is_ours

    path = gguf_path(run, dest, quant, layout)
    found = [p for p in (path, unverified_path(path)) if p.exists()]
    modelfile, card = path.parent / "Modelfile", path.parent / CARD_NAME
    if modelfile.exists() and not (is_ours(modelfile) and _for_run(modelfile, run.path.name)):
        found.append(modelfile)  # the user's, or another run's: replaced only when agreed
    if card.exists() and not _is_our_card(card):
        found.append(card)
    return found


def _for_run(modelfile: Path, run_name: str) -> bool:
    """Whether our Modelfile names one of this run's GGUF files."""
    try:
        text = modelfile.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return f"FROM ./{run_name}-" in text


def lm_studio_folder() -> Path:
    """LM Studio's models folder: ``~/.lmstudio/models`` (LM Studio 0.3 and later), or the older
    ``~/.cache/lm-studio/models`` when only that one is there."""
    home = Path.home()
    newer, older = home / ".lmstudio" / "models", home / ".cache" / "lm-studio" / "models"
    return older if older.is_dir() and not newer.is_dir() else newer


def export_run_gguf(
    run: Any,
    dest: Path,
    quant: str = "f16",
    progress: Callable[[str, float], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    overwrite: bool = False,
    layout: str = "folder",
    verify: bool = True,
) -> GgufExport:
    """A finished causal-LM run's model (LoRA already merged into it) as one GGUF file, verified by
    llama.cpp when it is installed, with an Ollama ``Modelfile`` and a card beside it.

    Args:
        progress: Called with a stage (``gguf``, ``quantize``, ``check``) and the share done (0 to 1).
        cancelled: Asked between steps; a cancelled export leaves nothing behind.
        verify: Check the file with llama.cpp (when ``False`` it is written, and called not verified).

    Raises:
        InputError: The run is not a causal LM, has no model, its architecture cannot be written, a
            file is in the way (and ``overwrite`` is not set), a K-quant is asked for without
            llama.cpp, or the disk has too little space; nothing is written then.
        GgufCancelled: Cancelled; nothing was left behind.
    """
    from desktop.core.results import gguf_check
    from desktop.core.results.gguf_writer import architecture_of, own_partial, write_gguf

    report = progress or (lambda stage, fraction: None)
    model_dir = _model_dir(run)
    architecture_of(model_dir)  # refused before anything is written
    if quant not in QUANTS:
        raise InputError(msg("Unknown GGUF quantization {quant}; use f16, q8_0 or q4_k_m.", quant=quant))
    if quant in K_QUANTS and not gguf_check.llama_cpp_available():
        raise InputError(
            msg("{quant} is made by llama.cpp's quantizer, and llama.cpp is not installed.", quant=quant),
            msg("Install llama.cpp from the Export step (or: pip install llama-cpp-python), or choose q8_0."),
        )
    in_the_way = already_there(run, dest, quant, layout)
    if in_the_way and not overwrite:
        raise InputError(
            msg("{file} already exists.", file=str(in_the_way[0])),
            msg("Choose another folder, or replace it (the app asks; on the command line: --force)."),
        )
    folder = folder_for(run, dest, layout)
    _check_space(model_dir, dest, quant)
    out = gguf_path(run, dest, quant, layout)
    made = [p for p in (folder, *folder.parents) if not p.exists()]
    folder.mkdir(parents=True, exist_ok=True)
    writing = 0.5 if quant in K_QUANTS else 0.8
    checking: Path | None = None
    # Written and checked under this process's own name, then renamed once, to the name the verdict
    # gives: a failure or a cancel at any point deletes that file of ours and nothing else.
    try:
        checking = own_partial(out, "checking")
        if quant in K_QUANTS:
            _write_k_quant(model_dir, checking, quant, report, cancelled)
        else:
            write_gguf(model_dir, checking, quant, lambda i, n: report("gguf", writing * i / n), cancelled)
        report("check", 0.8)
        prompts, system = gguf_check.example_prompts(run)
        if verify:
            verification = gguf_check.verify_in_child(
                checking,
                model_dir,
                quant,
                prompts,
                system,
                lambda i, n: report("check", 0.8 + 0.2 * i / n),
                cancelled,
            )
        else:
            skipped = msg("the check by llama.cpp was skipped.")
            verification = GgufVerification(quant, False, reason=skipped)
        failed = verification.checked and not verification.verified
        final = unverified_path(out) if failed else out  # kept, under a name that says so
        checking.replace(final)
    except BaseException:
        if checking is not None:
            checking.unlink(missing_ok=True)
        for path in made:  # cancelled or failed: not even an empty folder left behind
            if path.is_dir() and not any(path.iterdir()):
                path.rmdir()
        raise
    other = out if final != out else unverified_path(out)
    if overwrite and _written_here(other, _read_checks(folder)):
        # The same export under its other name: written by this app (on record, and not changed since)
        # and agreed to be replaced. A file of that name the app has no record of stays.
        other.unlink(missing_ok=True)
    modelfile, card, chat_format, agreement = _write_beside(run, final, verification, system, prompts)
    out = final
    report("done", 1.0)
    return GgufExport(out, out.stat().st_size, quant, verification, modelfile, card, chat_format, agreement)


def _model_dir(run: Any) -> Path:
    config = run.config()
    if config.task == "vision-chat":  # llama.cpp's own converter would write the projector (mmproj)
        raise InputError(
            msg(
                "GGUF export of vision-language models is not supported yet: {run} would need its picture "
                "projector (mmproj) written and checked beside the language model.",
                run=run.path.name,
            ),
            msg("Export it as a folder: transformers, and the app's Try it, load that."),
        )
    if config.task not in ("causal-lm", "preference", "grpo"):
        raise InputError(
            msg(
                "GGUF is for decoder chat models (causal LM); {run} was trained for {task}.",
                run=run.path.name,
                task=config.task,
            ),
            msg("Export it as a folder: transformers, and the app's Try it, load that."),
        )
    if not (run.model_dir / "config.json").is_file():
        raise InputError(
            msg("{run} has no finished model to export.", run=run.path.name),
            msg("Finish or resume the run first."),
        )
    return run.model_dir


def _check_space(model_dir: Path, dest: Path, quant: str) -> None:
    from desktop.core.hub.search import local_weights
    from desktop.core.system.errors import free_mb, human_size

    weights = local_weights(model_dir)[0] or 0
    needed = int(weights * BYTES_PER_WEIGHT[quant]) + 2**20
    if quant in K_QUANTS:
        needed += int(weights * BYTES_PER_WEIGHT["f16"])  # the f16 file it is made from, while it is
    probe = next((p for p in (dest, *dest.parents) if p.exists()), dest)
    free = free_mb(probe)
    if free is not None and free * 2**20 < needed:
        raise InputError(
            msg(
                "The GGUF file needs about {needed}; {free} are free at {folder}.",
                needed=human_size(needed),
                free=human_size(free * 2**20),
                folder=str(dest),
            ),
            msg("Free some space or choose a folder on another drive."),
        )


def _write_k_quant(
    model_dir: Path,
    out: Path,
    quant: str,
    report: Callable[[str, float], None],
    cancelled: Callable[[], bool] | None,
) -> None:
    """The f16 file first, then llama.cpp's quantizer into ``out``. Both work files are this process's
    own (:func:`own_partial`: made here, exclusively), so they are the only files deleted here."""
    from desktop.core.results.gguf_quantize import quantize
    from desktop.core.results.gguf_writer import own_partial, write_gguf

    f16 = own_partial(out, "f16")
    try:
        partial = own_partial(out)
    except BaseException:
        f16.unlink()
        raise
    placed = False
    try:
        write_gguf(model_dir, f16, "f16", lambda i, n: report("gguf", 0.5 * i / n), cancelled)
        report("quantize", 0.5)
        quantize(str(f16), str(partial), quant, cancelled, lambda i, n: report("quantize", 0.5 + 0.3 * i / n))
        partial.replace(out)
        placed = True
        report("quantize", 0.8)
    finally:
        f16.unlink(missing_ok=True)
        if not placed:  # renamed into place, its name is free: whatever has it since is not ours
            partial.unlink(missing_ok=True)


def _write_beside(
    run: Any, out: Path, verification: GgufVerification, run_system: str, prompts: list[str]
) -> tuple[Path, Path, str, tuple[int, int]]:
    """The Modelfile (for this file) and the card (for every GGUF this app wrote in the folder); how the
    Modelfile's TEMPLATE came (``written``, ``derived`` or ``none``), and how many of the check's
    ``prompts`` it renders as the chat template does (of how many)."""
    from desktop.core.results.modelfile import family, go_template, modelfile, template_agreement
    from desktop.core.system.paths import atomic_write_text
    from desktop.core.system.translations import localized

    chat_template, eos_token = _chat_template(run.model_dir)
    system = run_system or _template_system(run.model_dir, chat_template)
    folder = out.parent
    derived = None if family(chat_template) else _derived(run.model_dir, chat_template)
    chat_format = "written" if family(chat_template) else "derived" if derived is not None else "none"
    atomic_write_text(folder / "Modelfile", modelfile(out.name, chat_template, eos_token, system, derived))
    template = go_template(chat_template, eos_token)[0] or (derived.go() if derived is not None else "")
    render, bos = _jinja(run.model_dir, chat_template)
    agreement = template_agreement(template, prompts, render, run_system, system, bos) if render else (0, 0)
    checks = _read_checks(folder)
    for name in (out.name, unverified_path(out).name, out.name.replace(UNVERIFIED, "")):
        checks.pop(name, None)
    entry = verification.to_dict()
    written = out.stat()
    entry["bytes"], entry["mtime_ns"] = written.st_size, written.st_mtime_ns  # which file the app wrote
    entry["summary"] = localized(verification.summary(), "en")
    difference = verification.difference()
    entry["difference"] = localized(difference, "en") if difference else ""
    checks[out.name] = entry
    atomic_write_text(folder / CHECKS_NAME, json.dumps(checks, ensure_ascii=False, indent=1))
    entry["chat_format"] = chat_format
    entry["ollama_agreeing"], entry["ollama_prompts"] = agreement
    atomic_write_text(folder / CARD_NAME, _card(run, out, checks))
    return folder / "Modelfile", folder / CARD_NAME, chat_format, agreement


def _jinja(model_dir: Path, chat_template: str) -> tuple[Any, str]:
    """The chat template applied to a conversation, as transformers applies it (``None`` when the
    tokenizer cannot be read), and the BOS token."""
    try:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        tokenizer.chat_template = chat_template
    except Exception:
        log.warning("the tokenizer of %s could not be read for its chat template", model_dir, exc_info=True)
        return None, ""

    def render(messages: list[dict[str, str]]) -> str:
        return str(tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True))

    return render, tokenizer.bos_token or ""


def _derived(model_dir: Path, chat_template: str) -> Any:
    """The Go template's pieces derived from a template of no family here (``None`` where none renders
    as the Jinja template does, or the tokenizer cannot be read)."""
    from desktop.core.results.template_derive import derive

    render, bos = _jinja(model_dir, chat_template)
    return derive(render, bos) if render is not None else None


def _template_system(model_dir: Path, chat_template: str) -> str:
    """The system prompt the chat template adds to a chat that has none (what training saw too)."""
    from desktop.core.results.modelfile import template_system

    try:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        tokenizer.chat_template = chat_template
        chat = [{"role": "user", "content": "Hello"}]
        rendered = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
    except Exception:  # a template that needs more than a user turn: no SYSTEM line, as before
        return ""
    return template_system(chat_template, rendered)


def _read_checks(folder: Path) -> dict[str, dict[str, Any]]:
    """The record of the GGUF files this app wrote in ``folder`` and their checks, by file name (those
    still there)."""
    try:
        checks = json.loads((folder / CHECKS_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(checks, dict):  # edited by hand into something else: start again
        return {}
    return {
        name: value for name, value in checks.items() if isinstance(value, dict) and (folder / name).is_file()
    }


def _written_here(path: Path, checks: dict[str, dict[str, Any]]) -> bool:
    """Whether ``path`` is the file this app wrote under that name: on record, with the size and time
    it had when written (a file put there since under the same name is someone else's)."""
    entry = checks.get(path.name)
    try:
        stat = path.stat()
    except OSError:
        return False
    return entry is not None and (entry.get("bytes"), entry.get("mtime_ns")) == (
        stat.st_size,
        stat.st_mtime_ns,
    )


def _chat_template(model_dir: Path) -> tuple[str, str]:
    """The chat template and end token the GGUF carries (as the tokenizer's files give them)."""
    from desktop.core.data.tasks.causal_lm import FALLBACK_CHAT_TEMPLATE

    config: dict[str, Any] = {}
    for name in ("tokenizer_config.json", "chat_template.json"):
        with contextlib.suppress(OSError, ValueError):
            config.update(json.loads((model_dir / name).read_text(encoding="utf-8")))
    template = config.get("chat_template") or ""
    if not template and (model_dir / "chat_template.jinja").is_file():
        template = (model_dir / "chat_template.jinja").read_text(encoding="utf-8")
    eos = config.get("eos_token") or ""
    if isinstance(eos, dict):
        eos = eos.get("content", "")
    return template or FALLBACK_CHAT_TEMPLATE, str(eos)


def _is_our_card(card: Path) -> bool:
    try:
        return card.read_text(encoding="utf-8").startswith(CARD_MARK)
    except (OSError, UnicodeDecodeError):
        return False


def _card(run: Any, out: Path, checks: dict[str, dict[str, Any]]) -> str:
    """The card: what the files are, how to run them, and each one's verification figure (in English,
    the language of model hubs)."""
    from desktop.core.results.gguf_check import ANSWER_TOKENS

    name = ollama_name(out)
    checked = any(entry.get("checked") for entry in checks.values())
    rows = []
    for file, entry in sorted(checks.items()):
        if entry.get("checked") and entry.get("prompts"):
            figure = f"{entry['agreeing']} of {entry['prompts']} (needs {entry['required']})"
        else:
            figure = "not checked"
        verdict = "verified" if entry.get("verified") else "**unverified**"
        rows.append(f"| `{file}` | {entry.get('quant', '')} | {figure} | {verdict} |")
    notes = [
        f"- `{file}`: {entry['difference']}" for file, entry in checks.items() if entry.get("difference")
    ]
    notes += [
        f"- `{file}`: {entry['summary']}"
        for file, entry in checks.items()
        if not entry.get("checked") or not entry.get("prompts")
    ]
    entry = checks.get(out.name, {})
    if entry.get("chat_format") == "none":  # the Modelfile beside it has no TEMPLATE
        from desktop.core.system.translations import localized

        notes.append(f"- Modelfile: {localized(OLLAMA_NO_TEMPLATE, 'en')}")
    elif entry.get("ollama_prompts"):
        notes.append(
            f"- Modelfile: its TEMPLATE renders {entry['ollama_agreeing']} of {entry['ollama_prompts']} "
            "of the check's prompts exactly as the model's chat template does (Ollama's prompts are "
            "then llama.cpp's)."
        )
    return "\n".join(
        [
            CARD_MARK,
            f"# {run.path.name} (GGUF)",
            "",
            f"Fine-tuned with Finetune Studio from `{run.config().model.name}` (run `{run.path.name}`), "
            "written as GGUF for llama.cpp, Ollama and LM Studio.",
            "",
            "## Verification",
            "",
            (
                "Each checked file was loaded by llama.cpp; its greedy answers to the run's own example "
                "prompts, rendered with the chat template, were compared with the transformers model's on "
                f"the first {ANSWER_TOKENS} tokens."
            )
            if checked
            else "No file here was checked by llama.cpp: nothing in this folder is verified.",
            "",
            "| File | Weights | Answers that agree | |",
            "|---|---|---|---|",
            *rows,
            "",
            *([*notes, ""] if notes else []),
            "## Run it",
            "",
            f"- Ollama: `ollama create {name} -f Modelfile`, then `ollama run {name}`",
            f"- llama.cpp: `llama-cli -m {out.name} -cnv`",
            "- LM Studio: put this folder in LM Studio's models folder, under a publisher folder.",
            "",
        ]
    )
