"""Questions the window would need PyTorch for, answered by a helper process.

Token statistics need the model's tokenizer, and the memory estimate and the fit badges need the
model's classes (built on the ``meta`` device); both come from Transformers, which imports PyTorch.
In the window's process that import freezes the window, whatever thread does it: loading ``libtorch``
and initialising PyTorch's extension hold Python's global lock for 80-350 ms at a time (measured on
two cores). The helper is one child process of the app's own interpreter (``python -m
desktop.helper``), started at the first question and kept: it imports the stack once and answers each
question as one JSON line. The window then imports PyTorch only to train in its own process, to try a
model or to export.

The questions are :func:`token_statistics`, :func:`model_shapes` and :func:`model_fit`. Where no
helper can start, they are answered in this process, as before: slower to the eye, never wrong.
Nothing that needs the network or the keyring runs in the helper: a hub model's ``config.json`` is
fetched here first, and the helper reads the local caches. Each question carries this process's
environment, so the helper reads the same app folder and settings; a change to what the hub libraries
read once at import (``HF_*``, ``MODELSCOPE_*``, ...) starts a fresh helper.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import itertools
import json
import logging
import os
import subprocess
import sys
import threading
import traceback
from pathlib import Path
from typing import IO, Any

from desktop.core.settings.config import RunConfig
from desktop.core.system.errors import DataError, InputError, ModelError, StudioError
from desktop.core.system.messages import from_wire, msg, to_wire

log = logging.getLogger(__name__)

IDLE_S = 300.0
"""A helper without a question for this long ends, giving its memory back (PyTorch and Transformers,
300-400 MB); the next question starts a new one (a few seconds)."""

READ_AT_IMPORT = ("HF_", "HUGGINGFACE_", "TRANSFORMERS_", "MODELSCOPE_", "TOKENIZERS_", "PYTORCH_", "CUDA_")
"""Environment variables the libraries read once, when imported: a change needs a fresh helper."""

_ERRORS: dict[str, type[StudioError]] = {
    cls.__name__: cls for cls in (StudioError, InputError, DataError, ModelError)
}
"""Errors rebuilt with their own class (the others become :class:`StudioError`, same message)."""


@dataclasses.dataclass(frozen=True)
class TokenReport:
    """Token-length statistics by kind of text, and what the tokenizer check noticed."""

    token_stats: dict[str, Any]
    """Kind of text -> :class:`~desktop.core.data.preview.TokenStats`."""
    notes: list[str]


class HelperGone(StudioError):
    """The helper process ended in the middle of a question."""


# --------------------------------------------------------------------------- the questions


def token_statistics(config: RunConfig) -> TokenReport:
    """Token lengths of the data (a sample, see :func:`desktop.core.data.preview.preview`) for the model's
    tokenizer.

    Raises:
        ConfigError, DataError, ModelError: As :func:`~desktop.core.data.preview.preview` and
            :func:`~desktop.core.hub.models.load_tokenizer` raise them.
    """
    answer = _helper.ask("token_statistics", config=_config_to_wire(config))
    if answer is None:
        return _token_statistics(config)
    from desktop.core.data.preview import TokenStats

    return TokenReport(
        {name: TokenStats(**values) for name, values in answer["token_stats"].items()}, answer["notes"]
    )


def model_shapes(config: RunConfig) -> tuple[Any, Any]:
    """The model's parameter shapes as it is and with LoRA (``None`` where LoRA cannot adapt it); see
    :func:`desktop.core.hub.fit.shapes_with_and_without_lora`.

    Raises:
        ModelError: The model's config cannot be fetched or read.
    """
    from desktop.core.hub.fit import fetch_model_config

    fetch_model_config(config)  # here: the network and the keyring stay in the app's process
    answer = _helper.ask("model_shapes", config=_config_to_wire(config))
    if answer is None:
        from desktop.core.hub.fit import shapes_with_and_without_lora

        return shapes_with_and_without_lora(config)
    full, with_lora = answer
    return _shapes(full), _shapes(with_lora) if with_lora is not None else None


def model_fit(
    model_config: dict[str, Any],
    config: RunConfig,
    gpu_free: int | None,
    ram_available: int,
    rows: int | None = None,
) -> Any:
    """:func:`desktop.core.hub.fit.fit` for a model's ``config.json`` (already fetched)."""
    from desktop.core.hub.fit import Fit, fit

    answer = _helper.ask(
        "model_fit",
        model_config=model_config,
        config=_config_to_wire(config),
        gpu_free=gpu_free,
        ram_available=ram_available,
        rows=rows,
    )
    if answer is None:
        return fit(model_config, config, gpu_free, ram_available, rows)
    return Fit(**answer)


def _token_statistics(config: RunConfig) -> TokenReport:
    from desktop.core.data.preview import preview
    from desktop.core.hub.models import load_tokenizer
    from desktop.core.settings.config_sections import IMAGE_TASKS

    tokenizer = None if config.task in IMAGE_TASKS else load_tokenizer(config.model)
    result = preview(config, num_rows=0, tokenizer=tokenizer, schedule=False)
    return TokenReport(result.token_stats, result.notes)


def _shapes(values: dict[str, Any]) -> Any:
    from desktop.core.settings.memory import ParamShapes

    def shapes(value: list) -> tuple[tuple[int, ...], ...]:
        return tuple(tuple(shape) for shape in value)

    return ParamShapes(
        **{
            **values,
            "all_shapes": shapes(values["all_shapes"]),
            "trainable_shapes": shapes(values["trainable_shapes"]),
        }
    )


def _config_to_wire(config: RunConfig) -> dict[str, Any]:
    return {"toml": config.to_toml(), "base": str(Path.cwd())}


def _config_from_wire(value: dict[str, Any]) -> RunConfig:
    from desktop.core.settings.config import from_dict, parse_toml

    return from_dict(parse_toml(value["toml"]), base_dir=Path(value["base"]))


# --------------------------------------------------------------------------- the helper's side


def _answer_token_statistics(config: dict[str, Any]) -> dict[str, Any]:
    report = _token_statistics(_config_from_wire(config))
    return {
        "token_stats": {name: dataclasses.asdict(s) for name, s in report.token_stats.items()},
        "notes": report.notes,
    }


def _answer_model_shapes(config: dict[str, Any]) -> list[Any]:
    from desktop.core.hub.fit import shapes_with_and_without_lora

    full, with_lora = shapes_with_and_without_lora(_config_from_wire(config))
    return [dataclasses.asdict(full), dataclasses.asdict(with_lora) if with_lora is not None else None]


def _answer_model_fit(config: dict[str, Any], **args: Any) -> dict[str, Any]:
    from desktop.core.hub.fit import fit

    return dataclasses.asdict(fit(config=_config_from_wire(config), **args))


QUESTIONS = {
    "token_statistics": _answer_token_statistics,
    "model_shapes": _answer_model_shapes,
    "model_fit": _answer_model_fit,
}


def serve(requests: IO[bytes], answers: IO[str]) -> int:
    """Answer each JSON request line of ``requests`` with one line on ``answers``, until ``requests``
    ends (the app closed, or died). See :mod:`desktop.helper`."""
    _warm()
    for line in requests:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        answer = _answer(request)
        answers.write(json.dumps(answer, ensure_ascii=False, default=str) + "\n")
        answers.flush()
    return 0


def _answer(request: dict[str, Any]) -> dict[str, Any]:
    os.environ.clear()
    os.environ.update(request.get("env", {}))
    ident = request.get("id")
    try:
        result = QUESTIONS[request["call"]](**request.get("args", {}))
    except StudioError as exc:
        kind = type(exc).__name__ if type(exc).__name__ in _ERRORS else "StudioError"
        return {
            "id": ident,
            "error": {"kind": kind, "message": to_wire(exc.message), "hint": to_wire(exc.hint)},
        }
    except Exception as exc:
        text = f"{type(exc).__name__}: {exc}"
        return {"id": ident, "error": {"kind": "", "message": text, "detail": traceback.format_exc()}}
    return {"id": ident, "result": to_wire(result)}


def _warm() -> None:
    """Import what every question needs, before the first one arrives (it waits in the pipe)."""
    try:
        from desktop.core.system.lazy import transformers_names

        transformers_names("AutoTokenizer", "AutoConfig", "AutoModelForCausalLM")
    except Exception:  # a broken install: each question then says what is wrong
        log.debug("warming up failed", exc_info=True)


# --------------------------------------------------------------------------- the app's side


class Helper:
    """One helper process, started at the first question and kept; questions from any thread, one at a
    time.

    Args:
        python: The interpreter (this one by default).
        module: The module the helper runs.
    """

    def __init__(self, python: str | None = None, module: str = "desktop.helper") -> None:
        self.python = python or sys.executable
        self.module = module
        self._lock = threading.Lock()
        self._process: subprocess.Popen | None = None
        self._key: tuple[tuple[str, str], ...] = ()
        self._ids = itertools.count(1)
        self._idle: threading.Timer | None = None
        self.unavailable = False
        """The helper could not be started: questions are answered in this process."""

    @property
    def pid(self) -> int | None:
        """The helper's process id while it runs."""
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    def ask(self, call: str, **args: Any) -> Any:
        """The answer to one question (:data:`QUESTIONS`), or ``None`` when no helper can run.

        Raises:
            StudioError: The helper's answer was an error (its class and message kept where known),
                or the helper ended before it answered (:class:`HelperGone`).
            RuntimeError: Any other error in the helper, with its text.
        """
        with self._lock:
            process = self._running()
            if process is None:
                return None
            ident = next(self._ids)
            request = {"id": ident, "call": call, "args": args, "env": dict(os.environ)}
            try:
                assert process.stdin is not None and process.stdout is not None
                process.stdin.write((json.dumps(request, ensure_ascii=False) + "\n").encode("utf-8"))
                process.stdin.flush()
                while True:
                    line = process.stdout.readline()
                    if not line:
                        raise BrokenPipeError
                    with contextlib.suppress(ValueError):
                        answer = json.loads(line)
                        if isinstance(answer, dict) and answer.get("id") == ident:
                            break
            except (OSError, ValueError):
                code = self._end()
                raise HelperGone(
                    msg(
                        "The helper process that reads models ended unexpectedly (exit code {code}).",
                        code=code,
                    ),
                    msg("Try again. If it happens again, its log is {path}.", path=str(_log_path())),
                ) from None
            self._end_when_idle()
        if "error" in answer:
            error = answer["error"]
            if not error.get("kind"):
                log.warning("the helper failed:\n%s", error.get("detail", ""))
                raise RuntimeError(error.get("message", ""))
            cls = _ERRORS.get(error["kind"], StudioError)
            raise cls(from_wire(error["message"]), from_wire(error.get("hint", "")))
        return from_wire(answer["result"])

    def close(self) -> None:
        """End the helper (it ends by itself too when this process ends)."""
        with self._lock:
            self._end()

    def _end_when_idle(self) -> None:
        """(Re)start the countdown to ending the helper after :data:`IDLE_S` without a question."""
        if self._idle is not None:
            self._idle.cancel()
        process = self._process

        def end() -> None:
            with self._lock:
                if self._process is process:  # not one started since, nor one being asked (the lock)
                    self._end()

        self._idle = threading.Timer(IDLE_S, end)
        self._idle.daemon = True
        self._idle.start()

    def _running(self) -> subprocess.Popen | None:
        key = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith(READ_AT_IMPORT)))
        process = self._process
        if process is not None and (process.poll() is not None or key != self._key):
            self._end()
            process = None
        if process is None and not self.unavailable:
            process = self._process = self._start()
            self._key = key
        return process

    def _start(self) -> subprocess.Popen | None:
        from desktop.core.system import processes
        from desktop.core.system.processes import own_session, package_path

        with _log_file() as stderr:
            try:
                return processes.popen(
                    [self.python, "-m", self.module],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=stderr,
                    env=processes.child_env(PYTHONPATH=package_path()),
                    **own_session(),
                )
            except OSError:
                log.warning("the helper process could not start; answering in this process", exc_info=True)
                self.unavailable = True
                return None

    def _end(self) -> int | None:
        process, self._process = self._process, None
        if process is None:
            return None
        for stream in (process.stdin, process.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()
        try:
            return process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            process.kill()
            return process.wait()


@contextlib.contextmanager
def _log_file() -> Any:
    """The helper's stderr: its log file, or nowhere when the log cannot be written (a full disk, a file
    another program holds): the helper does not need it to answer."""
    try:
        path = _log_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        stream = open(path, "wb")  # noqa: SIM115
    except OSError:
        stream = open(os.devnull, "wb")  # noqa: SIM115
    with stream:
        yield stream


def _log_path() -> Path:
    from desktop.core.system.paths import data_dir

    return data_dir() / "logs" / "helper.log"


_helper = Helper()
atexit.register(_helper.close)
