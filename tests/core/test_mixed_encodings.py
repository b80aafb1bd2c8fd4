"""A GBK file with one line in another encoding names that line, as a UTF-8 one does (issue 59)."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.core.data.local_files import read_file
from desktop.core.system.errors import DataError


def test_a_gbk_file_with_one_western_line_names_that_line(tmp_path: Path) -> None:
    rows = ["text,label"] + [f"这是第{i}条很好的评论,好" for i in range(40)]
    raw = "\n".join(rows).encode("gbk") + b"\n" + "café naïve résumé ,bad".encode("cp1252") + b"\n"
    raw += "\n".join(rows[1:10]).encode("gbk") + b"\n"
    path = tmp_path / "reviews.csv"
    path.write_bytes(raw)

    with pytest.raises(DataError) as refused:
        read_file(path)

    assert "reviews.csv is GBK except at line 42" in refused.value.message
    assert "UTF-8" in refused.value.hint
