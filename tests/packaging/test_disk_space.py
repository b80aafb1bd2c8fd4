"""The free-space check counts a second copy of the installed files on a drive without hard links."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from desktop.launcher import disk_space
from desktop.launcher.disk_space import INSTALLED_SHARE, needed_bytes, supports_hard_links

GB = 2**30


def test_a_drive_with_hard_links_needs_what_the_setup_counts(tmp_path: Path) -> None:
    assert needed_bytes(10 * GB, tmp_path, links=lambda folder: True) == 10 * GB


def test_a_drive_without_them_holds_the_installed_files_twice(tmp_path: Path) -> None:
    asked: list[Path] = []
    needed = needed_bytes(10 * GB, tmp_path / "data", links=lambda folder: asked.append(folder) or False)
    assert needed == 10 * GB + round(10 * GB * INSTALLED_SHARE) == 16 * GB
    assert asked == [tmp_path / "data"]


def test_the_probe_links_a_file_of_its_own_and_leaves_nothing_behind(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("kept", encoding="utf-8")
    assert supports_hard_links(tmp_path)  # the test machine's temporary folder has hard links
    assert [p.name for p in tmp_path.iterdir()] == ["mine.txt"]


def test_a_folder_not_made_yet_is_probed_in_the_folder_above(tmp_path: Path) -> None:
    assert supports_hard_links(tmp_path / "not" / "yet")
    assert not (tmp_path / "not").exists() and list(tmp_path.iterdir()) == []


def test_a_drive_that_refuses_links_is_found_and_cleaned_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(source, link):  # what FAT32 and exFAT answer
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(disk_space.os, "link", refuse)
    assert not supports_hard_links(tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(os.name == "nt", reason="a read-only folder is a POSIX permission here")
def test_a_folder_that_cannot_be_written_does_not_double_the_need(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("running as root: every folder can be written")
        assert supports_hard_links(locked)
    finally:
        locked.chmod(0o700)
