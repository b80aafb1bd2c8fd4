"""What the launcher's tests share: a bundle of a fake uv and a small app wheel."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.launcher.runtime import Bundle


@pytest.fixture
def bundle(tmp_path: Path) -> Bundle:
    wheel = tmp_path / "finetune_studio-0.3.0-py3-none-any.whl"
    wheel.write_bytes(b"app")
    uv = tmp_path / "uv"
    uv.write_bytes(b"")
    return Bundle(uv, wheel)
