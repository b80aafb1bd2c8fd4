"""``serve``: a finished run or a model folder behind a local, OpenAI-compatible endpoint.

With ``--events`` (how the app starts it) the server speaks JSON lines on stdout instead of sentences
and stops when its stdin closes, so it never outlives the app, even one that crashed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import threading
from pathlib import Path
from typing import Any

from desktop.cli.common import EXIT_OK, quiet_libraries
from desktop.cli.text import say, text
from desktop.core.runs.folders import find_run
from desktop.core.system.errors import InputError


def add_parsers(sub: Any) -> None:
    """The ``serve`` command."""
    from desktop.core.serving.server import DEFAULT_PORT

    p = sub.add_parser(
        "serve",
        help=say("answer requests to a trained model over an OpenAI-compatible HTTP API"),
        description=say(
            "Serve a finished run or an exported model folder at http://HOST:PORT/v1: chat and text "
            "completions (OpenAI's API) for language models, /v1/classify for classifiers. "
            "Only this computer can reach it unless --host says otherwise; then every request needs "
            "the API key this command makes and keeps in the OS keyring."
        ),
    )
    p.add_argument("model", metavar="RUN_OR_FOLDER", help=say("a run's name or folder, or a model folder"))
    p.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=say("the port (default: {port})", port=DEFAULT_PORT)
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help=say("the address to listen on (default: 127.0.0.1, this computer only; 0.0.0.0: every network)"),
    )
    p.add_argument(
        "--name", default="", help=say("the model's name in requests (default: the run's or folder's)")
    )
    p.add_argument(
        "--max-tokens",
        type=int,
        default=4096,
        metavar="N",
        help=say("the longest answer a request may ask for (default: 4096)"),
    )
    p.add_argument(
        "--queue",
        type=int,
        default=32,
        metavar="N",
        help=say(
            "requests that may wait while one is answered; the next are told the server is busy (default: 32)"
        ),
    )
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help=say(
            "another name requests may be addressed to (this computer's name in your network, a proxy's); "
            "requests addressed to other names are refused (a web page may use one to reach the server)"
        ),
    )
    p.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help=say(
            "a web page that may use the server from a browser, as scheme://host:port (e.g. "
            "http://localhost:3000); requests from other pages are refused"
        ),
    )
    p.add_argument(
        "--allow-remote-images",
        action="store_true",
        help=say(
            "a vision-language model: fetch the pictures requests name by web address (off: pictures come "
            "as data URLs, or as files when serving on this computer only)"
        ),
    )
    p.add_argument("--require-key", action="store_true", help=say("require the API key on this computer too"))
    p.add_argument("--new-key", action="store_true", help=say("replace the kept API key with a new one"))
    p.add_argument("--runs-dir", type=Path)
    p.add_argument("--events", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_serve)


def resolve_model(name: str, runs_dir: Path | None) -> tuple[Path, Path | None, str]:
    """The model folder, the run's config (for a run) and the default name in the API."""
    run = find_run(name, runs_dir)
    if run is not None:
        if not run.model_dir.is_dir():
            raise InputError(
                say("The run {run} has no saved model yet.", run=run.path.name),
                say("Serve a finished run, or resume this one to its end first."),
            )
        return run.model_dir, run.config_path, run.path.name
    folder = Path(name)
    if not folder.is_dir():
        raise InputError(
            say("No run or model folder {model} was found.", model=name),
            say("List runs with: finetune-studio-cli runs"),
        )
    return folder, None, folder.resolve().name


def gguf_export(folder: Path) -> bool:
    """Whether ``folder`` is a GGUF export (a ``.gguf`` file and its Modelfile, no transformers model)."""
    has_model = (folder / "config.json").is_file() or (folder / "adapter_config.json").is_file()
    return not has_model and (folder / "Modelfile").is_file() and any(folder.glob("*.gguf"))


def _serve_with_ollama(folder: Path, name: str) -> int:
    """A GGUF export is served by Ollama, which speaks the same API: add it there and say how to call it."""
    from desktop.core.results import ollama
    from desktop.core.serving.snippets import snippets

    found = ollama.state()
    if found.advice():
        raise InputError(
            text(found.advice()),
            say("Or serve the run itself (with transformers): finetune-studio-cli serve RUN"),
        )
    name = re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-.") or "finetune-studio"  # Ollama's names
    shown = [""]

    def progress(line: str, done: float) -> None:
        if line != shown[0]:
            shown[0] = line
            print(f"[{done:4.0%}] ollama: {line}", file=sys.stderr)

    ollama.create(name, folder / "Modelfile", progress)
    base_url = ollama.host() + "/v1"
    print(say("Ollama serves {model} at {url} (the same API; it keeps running after this command).",
              model=name, url=base_url))  # fmt: skip
    _print_snippets(snippets(base_url, name, "causal-lm", keyed=False, chat=True))
    return EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve until Ctrl+C (or, with ``--events``, until stdin closes or says ``stop``)."""
    from desktop.core.serving.server import PortInUse
    from desktop.core.system.errors import StudioError

    try:
        return _serve(args)
    except StudioError as exc:
        if args.events:
            code = "port_in_use" if isinstance(exc, PortInUse) else type(exc).__name__
            _emit({"event": "failed", "message": text(exc.message), "hint": text(exc.hint), "code": code})
        raise


def _serve(args: argparse.Namespace) -> int:
    from desktop.core.serving.engine import Limits
    from desktop.core.serving.keys import KEY_ENV, api_key, is_local
    from desktop.core.serving.server import LocalServer, ServeOptions
    from desktop.core.serving.snippets import snippets

    events = args.events
    folder, run_config, default_name = resolve_model(args.model, args.runs_dir)
    if gguf_export(folder) and not events:
        return _serve_with_ollama(folder, args.name or default_name)
    if args.max_tokens < 1:
        raise InputError(say("--max-tokens must be at least 1."), say("For example: --max-tokens 1024"))
    keyed = args.require_key or not is_local(args.host)
    key = None
    if keyed:
        given = os.environ.get(KEY_ENV, "")
        if given and args.new_key:
            raise InputError(
                say(
                    "{env} is set: the server uses that key, so --new-key would change nothing.", env=KEY_ENV
                ),
                say("Unset {env} to use the key in the OS keyring, or leave out --new-key.", env=KEY_ENV),
            )
        key = api_key(renew=args.new_key) if not given else None
        value = given or (key.value if key else "")
    else:
        value = ""
    quiet_libraries()
    options = ServeOptions(
        host=args.host,
        port=args.port,
        name=args.name or default_name,
        key=value,
        limits=Limits(max_tokens=args.max_tokens, queue=max(args.queue, 0)),
        hosts=tuple(args.allow_host),
        origins=_origins(args.allow_origin),
        remote_pictures=args.allow_remote_images,
    )
    on_request = _emit_request if events else _print_request
    server = LocalServer(folder, options, run_config, on_request=on_request).bind()
    if events:
        _emit({"event": "loading", "folder": str(folder), "task": server.info.task})
    else:
        print(say("Loading {folder}…", folder=folder), file=sys.stderr, flush=True)
    server.load()
    if events:
        _emit(
            {
                "event": "ready",
                "base_url": server.base_url,
                "port": server.port,
                "model": server.name,
                "task": server.info.task,
                "chat": server.info.chat,
                "keyed": keyed,
                "device": server.engine.playground.device,
            }
        )
        threading.Thread(target=_stop_when_stdin_closes, args=(server,), daemon=True).start()
    else:
        _say_ready(
            server,
            keyed,
            key,
            snippets(server.base_url, server.name, server.info.task, keyed, server.info.chat),
        )
    server.serve()
    if not events:
        print(say("Stopped; the model's memory is free again."), file=sys.stderr)
    return EXIT_OK


def _say_ready(server: Any, keyed: bool, key: Any, code: dict[str, str]) -> None:
    from desktop.core.serving.keys import KEY_ENV

    print(
        say(
            "Serving {model} ({task}) at {url}",
            model=server.name,
            task=server.info.task,
            url=server.base_url,
        )
    )
    if server.options.host in ("0.0.0.0", "::"):
        from desktop.core.serving.addresses import lan_addresses

        urls = [f"http://{address}:{server.port}/v1" for address in lan_addresses()]
        if urls:
            print(say("From other computers: {urls}", urls=", ".join(urls)))
    if keyed and key is not None and key.new:
        print(say("API key (shown this once): {key}", key=key.value))
        print(
            say("It is kept in your OS keyring; --new-key replaces it.")
            if key.kept
            else say("No OS keyring is available: a new key is made at each start.")
        )
    if keyed:
        print(say("Requests need the key: set {env} to it, as the examples below read it.", env=KEY_ENV))
    _print_snippets(code)
    print()
    print(say("Press Ctrl+C to stop."), flush=True)


def _print_snippets(code: dict[str, str]) -> None:
    print()
    print(say("Try it with curl:"))
    print(code["curl"])
    print()
    print(say("or from Python (pip install openai):"))
    print(code["python"])


def _print_request(line: dict[str, Any]) -> None:
    print(
        f"{line['method']} {line['path']} {line['status']} {line['seconds']:.2f}s",
        file=sys.stderr,
        flush=True,
    )


def _emit_request(line: dict[str, Any]) -> None:
    _emit({"event": "request", **line})


_emit_lock = threading.Lock()


def _emit(event: dict[str, Any]) -> None:
    with _emit_lock:
        sys.stdout.write(json.dumps(event, ensure_ascii=False) + "\n")
        sys.stdout.flush()


def _stop_when_stdin_closes(server: Any) -> None:
    for line in sys.stdin:
        if line.strip() == "stop":
            break
    server.stop()


def _origins(typed: list[str]) -> tuple[str, ...]:
    """``--allow-origin`` values as browsers send them; one that is not an origin is refused."""
    from desktop.core.serving.guard import origin_of

    found = []
    for value in typed:
        origin = origin_of(value)
        if origin is None:
            raise InputError(
                say("{value} is not a web page's origin.", value=value),
                say("Write it as scheme://host:port, e.g. http://localhost:3000 (no path)."),
            )
        found.append(origin)
    return tuple(found)
