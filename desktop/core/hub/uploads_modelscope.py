"""Publishing to ModelScope, through its own client (``modelscope_hub``): the token checked, the
repository made or checked, and the files uploaded by the client's resumable folder upload.

The client keeps what it has sent in a tracker file (in the app's data folder, one per repository), so
a push that stops is resumed by the next one. Its upload cannot be stopped in the middle: Cancel is
honoured before the upload starts, and the upload in flight runs to its end.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop.core.hub.downloads import Progress
from desktop.core.hub.sources import MODELSCOPE, Source
from desktop.core.hub.sources import token as saved_token
from desktop.core.system.errors import InputError, ModelError, StudioError
from desktop.core.system.messages import msg

MS_TOKENS_PAGE = "https://modelscope.cn/my/myaccesstoken"


def _api(source: Source, token: str | None) -> Any:
    from modelscope_hub import HubApi

    token = token or saved_token(MODELSCOPE)
    if not token:
        raise InputError(
            msg("Publishing to ModelScope needs a ModelScope token, and none is saved."),
            msg(
                "Make one at {page} and add it in Settings > Model sources (or set MODELSCOPE_API_TOKEN).",
                page=MS_TOKENS_PAGE,
            ),
        )
    return HubApi(endpoint=source.endpoint, token=token)


def modelscope_user(source: Source, token: str | None = None) -> str:
    """The account the ModelScope token belongs to.

    Raises:
        InputError: No token, or one ModelScope refuses.
        ModelError: ModelScope could not be reached.
    """
    return _user(_api(source, token))


def _user(api: Any) -> str:
    from modelscope_hub.errors import AuthenticationError

    try:
        who = api.whoami()
    except AuthenticationError:
        raise InputError(
            msg("ModelScope refused the saved ModelScope token (it may be mistyped or expired)."),
            msg("Make a new one at {page} and save it in Settings > Model sources.", page=MS_TOKENS_PAGE),
        ) from None
    except Exception as exc:  # HubError, or the network under it
        raise _words(exc) from exc
    name = getattr(who, "username", "") or ""
    if not name:
        raise ModelError(msg("ModelScope did not say whose the token is."), msg("Try again in a while."))
    return str(name)


def push_to_modelscope(
    source: Source,
    repo_id: str,
    files: dict[str, Path],
    message: str,
    description: str,
    private: bool,
    replace: bool,
    token: str | None,
    on_progress: Callable[[str, Progress], None] | None,
    cancel: threading.Event | None,
) -> Any:
    """:func:`desktop.core.hub.uploads.push_files` for ModelScope (same arguments, same result)."""

    from desktop.core.hub.pushed import KEPT_FILES, Pushed, UploadCancelled, holds_other_files

    api = _api(source, token)
    user = _user(api)
    repo_id = repo_id if "/" in repo_id else f"{user}/{repo_id}"
    roots = {path.parents[len(Path(name).parts) - 1] for name, path in files.items()}
    if len(roots) != 1:  # the client uploads a folder: ours are always one
        raise InputError(msg("The files to publish must be in one folder, under their own names."))
    root = roots.pop()
    total = sum(path.stat().st_size for path in files.values())
    try:
        created = not api.repo_exists(repo_id, "model")
        # A repository made anew gets a tracker of its own: what was sent to an earlier one of that name is
        # gone with it (the old tracker stays, unread; nothing is deleted).
        tracker = _tracker(repo_id, anew=created)
        if created:
            api.create_repo(repo_id, "model", visibility="private" if private else "public")
        else:
            held = [f.path for f in api.list_repo_files(repo_id, "model") if f.path not in KEPT_FILES]
            held = [p for p in held if p not in (".gitignore", "configuration.json")]
            # A push of ours that stopped half-way committed some files: the next one goes on.
            if held and not replace and not (tracker.exists() and set(held) <= set(files)):
                raise holds_other_files(repo_id, held)
        if cancel is not None and cancel.is_set():
            raise UploadCancelled(msg("Publishing cancelled; the repository was not changed."))
        started = time.monotonic()

        def told(event: dict) -> None:
            if on_progress is not None:
                done = int(event.get("committed_bytes") or 0)
                seconds = time.monotonic() - started
                on_progress("send", Progress(done, total, done / seconds if seconds >= 1 else 0.0, ""))

        with contextlib.redirect_stdout(io.StringIO()):  # the client prints a report of its own
            result = api.upload_folder(
                repo_id,
                "model",
                root,
                commit_message=message,
                commit_description=description,
                allow_patterns=sorted(files),
                disable_tqdm=True,
                sync_remote_repo=replace,
                use_cache=True,
                tracker_path=tracker,
                progress_callback=told,
            )
    except StudioError:
        raise
    except Exception as exc:  # HubError, or the network under it (requests' own errors)
        raise _words(exc) from exc
    commit = result[-1] if isinstance(result, list) and result else result
    commit_url = str((commit or {}).get("commit_url") or (commit or {}).get("CommitUrl") or "")
    return Pushed(
        url=source.model_page(repo_id),
        commit_url=commit_url,
        files=len(files),
        sent=total if result is not None else 0,
        kept=0 if result is not None else len(files),
        kept_bytes=0 if result is not None else total,
        created=created,
        private=private if created else None,  # an existing repository keeps its own, unknown here
    )


def _tracker(repo_id: str, anew: bool = False) -> Path:
    """Where the client remembers what it sent to ``repo_id`` (outside the folder, which is temporary):
    the latest of its trackers (``name.1``, ``name.2`` ...), or the next one for a repository made
    ``anew``."""
    from desktop.core.system.paths import data_dir

    folder = data_dir() / "uploads" / "modelscope"
    folder.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha1(repo_id.encode()).hexdigest()[:16]
    # name.N is the client's; name.N.made says generation N was begun (before the client wrote anything).
    made = [int(p.name.split(".")[1]) for p in folder.glob(f"{name}.*") if p.name.split(".")[1].isdigit()]
    latest = max(made, default=0)
    if anew or not latest:
        latest += 1
        (folder / f"{name}.{latest}.made").touch()
    return folder / f"{name}.{latest}"


def _words(exc: BaseException) -> StudioError:
    from modelscope_hub.errors import HubError, NetworkError, PermissionDeniedError

    from desktop.core.hub.access import network_words

    reason = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
    network = isinstance(exc, NetworkError) or (not isinstance(exc, HubError) and isinstance(exc, OSError))
    if network:  # the connection (the client's, or requests' own error under it), in our words
        return ModelError(
            msg(
                "ModelScope could not be reached: {problem}.", problem=network_words(reason, "modelscope.cn")
            ),
            msg("Check the network, then publish again; the client resumes what it had sent."),
        )
    if isinstance(exc, PermissionDeniedError):
        return InputError(
            msg("ModelScope does not let this token write there: {reason}", reason=reason),
            msg("Publish under your own account, or use a token that may write there."),
        )
    return ModelError(
        msg("ModelScope refused the upload: {reason}", reason=reason),
        msg("Publish again later: the client resumes what it had sent."),
    )
