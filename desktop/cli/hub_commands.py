"""The CLI's hub commands: ``models search | download | list | sources`` and ``datasets download``.

They share the core with the app (:mod:`desktop.core.hub.sources`, :mod:`desktop.core.hub.downloads`,
:mod:`desktop.core.hub.search`), so a source, a mirror or a token set in one is used by the other.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from dataclasses import asdict
from pathlib import Path
from typing import Any

from desktop.cli.common import EXIT_STOPPED
from desktop.cli.text import say, text
from desktop.core.settings.config import TASKS, RunConfig
from desktop.core.system.errors import human_count, human_size


def hub_options() -> argparse.ArgumentParser:
    """``--source`` and ``--endpoint``, for every command that may reach a hub."""
    from desktop.core.hub.sources import CHOICES

    options = argparse.ArgumentParser(add_help=False)
    options.add_argument(
        "--source",
        choices=(*CHOICES, "hf"),
        help=say(
            "where to download from: hf (Hugging Face), mirror, modelscope or auto (default: the setting)"
        ),
    )
    options.add_argument(
        "--endpoint",
        metavar="URL",
        help=say("a mirror or private hub (Hugging Face API; with --source modelscope, ModelScope's)"),
    )
    return options


def apply_hub_options(args: argparse.Namespace) -> None:
    """Make ``--source`` / ``--endpoint`` the choice of every core call in this process (and its children)."""
    source, endpoint = getattr(args, "source", None), getattr(args, "endpoint", None)
    if source == "hf":
        source = args.source = "huggingface"
    if source:
        os.environ["FINETUNE_STUDIO_SOURCE"] = source
    if endpoint:
        os.environ["MODELSCOPE_ENDPOINT" if source == "modelscope" else "HF_ENDPOINT"] = endpoint
        if source != "modelscope":
            os.environ["FINETUNE_STUDIO_SOURCE"] = "huggingface"


def add_parsers(sub: Any) -> None:
    options = hub_options()
    models = sub.add_parser(
        "models", help=say("find, download and list models (Hugging Face, a mirror, ModelScope)")
    )
    msub = models.add_subparsers(dest="models_command", required=True)
    p = msub.add_parser("search", parents=[options], help=say("search the hub"))
    p.add_argument("query", nargs="?", default="")
    p.add_argument("--task", choices=TASKS)
    p.add_argument("--sort", choices=("downloads", "likes"), default="downloads")
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--json", action="store_true", help=say("print the results as JSON"))
    p.set_defaults(func=cmd_search)
    p = msub.add_parser(
        "download", parents=[options], help=say("download a model (only the files training needs)")
    )
    p.add_argument("id", help=say("owner/name, or modelscope:owner/name"))
    p.add_argument("--revision", default="", help=say("branch, tag or commit"))
    p.set_defaults(func=cmd_download, dataset=False)
    p = msub.add_parser("list", help=say("models on this computer (hub caches and folders used before)"))
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_list)
    p = msub.add_parser("sources", parents=[options], help=say("which source answers, and how fast"))
    p.set_defaults(func=cmd_sources)
    data = sub.add_parser("datasets", help=say("download hub datasets"))
    dsub = data.add_subparsers(dest="datasets_command", required=True)
    p = dsub.add_parser("download", parents=[options], help=say("download a dataset's data files"))
    p.add_argument("id", help=say("owner/name, or modelscope:owner/name"))
    p.add_argument("--revision", default="")
    p.set_defaults(func=cmd_download, dataset=True)


def cmd_search(args: argparse.Namespace) -> int:
    from desktop.core.hub import search as hub_search
    from desktop.core.hub import sources

    source = sources.resolve(probe_if_stale=True)
    hits = hub_search.search(source, args.query, args.task or "", args.sort, args.limit)
    hits = hub_search.with_weights_info(hits, source)  # ModelScope's search gives no parameter counts
    if args.json:
        print(json.dumps([asdict(h) for h in hits], ensure_ascii=False, indent=1))
        return 0
    if not hits:
        print(
            say("No models match {query} on {source}.", query=repr(args.query), source=text(source.label)),
            file=sys.stderr,
        )
        return 0
    print(
        f"{say('model'):48} {say('downloads'):>10} {say('likes'):>6} {say('params'):>8} {say('size'):>9}  "
        + say("license  updated"),
        file=sys.stdout,
    )
    for h in hits:
        params = human_count(h.parameters) if h.parameters else "?"
        size = human_size(h.size_bytes) if h.size_bytes else "?"
        gated = "  " + say("gated") if h.gated else ""
        print(
            f"{h.ref:48} {h.downloads or 0:>10} {h.likes or 0:>6} {params:>8} {size:>9}  "
            f"{h.license or '?'}  {h.updated}{gated}"
        )
    return 0


def cmd_download(args: argparse.Namespace) -> int:
    from desktop.core.hub import sources
    from desktop.core.hub.clients import DownloadCancelled

    source = sources.resolve(probe_if_stale=True)
    values = {"name": args.id, "source": text(source.label), "endpoint": source.endpoint}
    print(
        say("Downloading the dataset {name} from {source} ({endpoint})...", **values)
        if args.dataset
        else say("Downloading the model {name} from {source} ({endpoint})...", **values),
        file=sys.stderr,
    )
    try:
        folder = download_with_bar(args.id, source, args.revision, args.dataset)
    except (KeyboardInterrupt, DownloadCancelled):
        print("\n" + _stopped(), file=sys.stderr)
        return 130
    print(str(folder))
    return 0


def _stopped() -> str:
    return say("Download stopped. Run the same command again to resume where it stopped.")


def download_with_bar(ref: str, source: Any, revision: str = "", dataset: bool = False) -> Path:
    """Download with a progress bar on stderr (bytes, speed, time left); Ctrl-C cancels, resumably."""
    from tqdm import tqdm

    from desktop.core.hub.downloads import download, forget_empty_partials, partial_files
    from desktop.core.hub.sources import split_ref

    cancel = threading.Event()
    others = partial_files(split_ref(ref)[1], source, dataset)  # another program's: never deleted
    bars: list[Any] = []  # opened at the first progress, once the files and their sizes are known
    done: list[Path] = []
    failed: list[BaseException] = []

    def report(progress: Any) -> None:
        if not bars:
            bars.append(
                tqdm(
                    total=progress.total,
                    unit="B",
                    unit_scale=True,
                    unit_divisor=1024,
                    dynamic_ncols=True,
                    file=sys.stderr,
                )
            )
        bars[0].update(progress.done - bars[0].n)

    def close() -> None:
        for bar in bars:
            bar.close()

    ended = threading.Event()  # not Thread.join: Ctrl-C in a join makes is_alive() False (CPython < 3.13)

    def work() -> None:
        try:
            done.append(
                download(ref, source, revision=revision, dataset=dataset, on_progress=report, cancel=cancel)
            )
        except BaseException as exc:  # handed to the main thread
            failed.append(exc)
        finally:
            ended.set()

    def at_once(*_: object) -> None:
        # A second Ctrl-C, or SIGTERM: ends now, without a traceback; what arrived stays for the next try.
        cancel.set()
        ended.wait(0.3)  # no file starts after this; one that started may hold no byte yet
        forget_empty_partials(split_ref(ref)[1], source, dataset, keep=others)
        sys.stderr.write("\n" + _stopped() + "\n")
        sys.stderr.flush()
        os._exit(EXIT_STOPPED)

    threading.Thread(target=work, daemon=True).start()
    main = threading.current_thread() is threading.main_thread()
    terminate = signal.signal(signal.SIGTERM, at_once) if main else None  # the download's alone
    try:
        while not ended.wait(0.2):  # the main thread stays free for Ctrl-C
            pass
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, at_once)
        cancel.set()
        close()
        ended.wait(3)  # the download returns within two seconds of a cancel, even from a stalled server
        raise
    finally:
        if main:
            signal.signal(signal.SIGTERM, terminate)  # a run after it stops gracefully again
    close()
    if failed:
        raise failed[0]
    return done[0]


def cmd_list(args: argparse.Namespace) -> int:
    from desktop.core.hub.search import on_this_computer

    hits = on_this_computer()
    if args.json:
        print(json.dumps([asdict(h) for h in hits], ensure_ascii=False, indent=1))
        return 0
    if not hits:
        print(
            say("No models on this computer yet. Find one with: finetune-studio-cli models search QUERY"),
            file=sys.stderr,
        )
    for h in hits:
        print(f"{h.ref:48} {human_size(h.disk_bytes or h.size_bytes or 0):>9}  {h.source:11}  {h.path}")
    return 0


def cmd_sources(args: argparse.Namespace) -> int:
    from desktop.core.hub import sources

    chosen, probes = sources.pick()
    for p in probes:
        if p.ok:
            answer = say("answered in {ms} ms", ms=f"{p.seconds * 1000:.0f}")
        else:
            answer = say("no answer ({problem})", problem=text(p.problem))
        print(f"{p.name:12} {p.endpoint:36} {answer}")
    in_use = text(sources.resolve().label)
    print(
        say("in use: {source}; Auto would pick {chosen}", source=in_use, chosen=text(chosen.label))
        if chosen
        else say("in use: {source}; none answers", source=in_use)
    )
    return 0 if chosen else 1


def ensure_downloaded(config: RunConfig, model: bool = True) -> None:
    """Before a run: download the model (unless ``model`` is false: ``init``) and a hub dataset that are not
    on this computer yet, each as its own step with a progress bar (never inside "Preparing")."""
    from desktop.core.hub import sources
    from desktop.core.hub.access import complete_in_cache
    from desktop.core.hub.clients import local_copy

    name = config.model.name.strip()
    local = Path(name).expanduser().is_dir() or name.startswith("bundled:")
    if model and name and not local and not complete_in_cache(name, config.model.revision):
        print(say("{name} is not on this computer yet: downloading it first.", name=name), file=sys.stderr)
        download_with_bar(name, sources.resolve(probe_if_stale=True), config.model.revision)
    hub_id = config.data.hub_id
    if hub_id and local_copy(hub_id, dataset=True) is None:
        print(
            say("The dataset {name} is not on this computer yet: downloading it first.", name=hub_id),
            file=sys.stderr,
        )
        download_with_bar(hub_id, sources.resolve(probe_if_stale=True), dataset=True)
