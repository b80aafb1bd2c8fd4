"""Screenshots of the model browser, against the fake hub of the tests (tiny models, on 127.0.0.1).

Usage: QT_QPA_PLATFORM=offscreen python tools/hub_screenshots.py docs/screenshots
Writes 7-browser-recommended.png, 7-browser-search.png and 7-browser-download.png.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(out: Path) -> int:
    home = Path(tempfile.mkdtemp())
    os.environ.update(
        {
            "FINETUNE_STUDIO_HOME": str(home / "app"),
            "MODELSCOPE_CACHE": str(home / "ms"),
            "HF_HUB_CACHE": str(home / "hf"),
        }
    )
    os.environ.pop("HF_HUB_OFFLINE", None)
    from PySide6.QtWidgets import QApplication

    from tests import tiny_models
    from tests.fakehub import FakeHub

    hub = FakeHub().start()
    gpt2 = tiny_models.gpt2(home / "gpt2")
    for name, downloads, likes in (
        ("tiny/gpt2-chat", 1200, 31),
        ("tiny/gpt2-base", 5400, 88),
        ("tiny/gpt2-zh", 310, 9),
    ):
        repo = hub.add_folder(name, gpt2, meta={"downloads": downloads, "likes": likes, "parameters": 61_000})
        repo.files["model.safetensors"] = repo.files["model.safetensors"] * 40  # a download worth watching
    os.environ["HF_ENDPOINT"] = hub.url
    import huggingface_hub.constants as constants

    constants.HF_HUB_OFFLINE, constants.HF_HUB_CACHE = False, str(home / "hf")
    constants.DOWNLOAD_CHUNK_SIZE = 256 * 1024  # progress within a small file
    app = QApplication.instance() or QApplication(sys.argv)
    from desktop.core.settings.config import RunConfig
    from desktop.gui.dialogs.model_browser_dialog import FIT_COLUMN, ModelBrowser

    browser = ModelBrowser(RunConfig(task="causal-lm"), gpu_free=8 * 2**30, ram=16 * 2**30)
    browser.resize(1000, 520)
    browser.show()

    def until(condition, ms: int = 30_000) -> None:
        from PySide6.QtCore import QDeadlineTimer

        deadline = QDeadlineTimer(ms)
        while not condition() and not deadline.hasExpired():
            app.processEvents()
            threading.Event().wait(0.01)

    out.mkdir(parents=True, exist_ok=True)
    app.processEvents()
    browser.recommended.setColumnWidth(0, 250)
    browser.grab().save(str(out / "7-browser-recommended.png"))
    browser.tabs.setCurrentIndex(1)
    browser.query.setText("tiny")
    browser.search()
    until(
        lambda: (
            browser.results.rowCount() == 3
            and all(browser.results.item(r, FIT_COLUMN).text() not in ("…", "") for r in range(3))
        )
    )
    browser.results.selectRow(0)
    browser.grab().save(str(out / "7-browser-search.png"))
    hub.stall["model.safetensors"] = threading.Event()
    browser.download_selected()
    until(lambda: browser.progress.value() > 400)
    browser.grab().save(str(out / "7-browser-download.png"))
    browser.cancel_download()
    hub.stall["model.safetensors"].set()
    until(lambda: not browser.panel.is_running())
    hub.stop()
    print("\n".join(str(p) for p in sorted(out.glob("7-browser-*.png"))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots")))
