"""What a push gives back, and the refusals both hubs' pushes share (``uploads``,
``uploads_modelscope``)."""

from __future__ import annotations

from dataclasses import dataclass

from desktop.core.system.errors import InputError, StudioError
from desktop.core.system.messages import msg

KEPT_FILES = (".gitattributes",)
"""Files a new repository starts with: a repository holding only these is empty to us."""


class UploadCancelled(StudioError):
    """The user pressed Cancel; the repository is as it was, and the next push resumes."""


@dataclass(frozen=True)
class Pushed:
    """What a push did.

    Attributes:
        url: The repository's web page.
        commit_url: The commit's page (``""`` when nothing changed).
        files: How many files the commit holds.
        sent: Bytes sent by this push.
        kept: Files the hub held already (sent by an earlier, interrupted push): not sent again.
        kept_bytes: Their size.
        created: Whether this push created the repository.
        private: Whether the repository is private (``None``: not known).
    """

    url: str
    commit_url: str
    files: int
    sent: int
    kept: int = 0
    kept_bytes: int = 0
    created: bool = False
    private: bool | None = True


class HoldsOtherFiles(InputError):
    """The repository holds files already: the app asks whether they may be replaced."""


def holds_other_files(repo_id: str, held: list[str]) -> InputError:
    """The repository holds files already, and the user did not say they may be replaced."""
    shown = ", ".join(sorted(held)[:3])
    if len(held) > 3:
        shown = msg("{names} and {count} more", names=shown, count=len(held) - 3)
    return HoldsOtherFiles(
        msg("{repo} already holds files ({names}); nothing was sent.", repo=repo_id, names=shown),
        msg(
            "Publish to a new repository, or let this one be replaced (files of the same names are "
            "overwritten, the others deleted; command line: --replace)."
        ),
    )
