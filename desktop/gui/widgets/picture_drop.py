"""A picture to try a model on: dropped, pasted (Ctrl+V) or chosen, shown as it will be read."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt, Signal
from PySide6.QtGui import (
    QDragEnterEvent,
    QDropEvent,
    QGuiApplication,
    QImage,
    QKeySequence,
    QPixmap,
    QShortcut,
)
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from desktop.core.data.images import SUFFIXES
from desktop.gui.widgets.pictures import thumbnail_pixmap

SHOWN = 160
"""The side of the picture shown, in pixels."""


class PictureDrop(QWidget):
    """Holds one picture: a file dropped on it or chosen, or a picture pasted from the clipboard (kept
    as PNG bytes). ``picture`` is a path, bytes, or ``None``."""

    picture_changed = Signal()
    """A new picture was dropped, pasted or chosen (``picture`` has it)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.picture: Path | bytes | None = None
        self.setAcceptDrops(True)
        self.view = QLabel(self.tr("Drop a picture here, paste one (Ctrl+V), or choose one"))
        self.view.setObjectName("hint")
        self.view.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.view.setWordWrap(True)
        self.view.setMinimumSize(SHOWN, SHOWN)
        self.view.setStyleSheet("border: 1px dashed palette(mid);")
        self.choose_button = QPushButton(self.tr("Choose picture…"))
        self.choose_button.clicked.connect(self._choose)
        self.paste_button = QPushButton(self.tr("Paste"))
        self.paste_button.setToolTip(self.tr("Use the picture on the clipboard (Ctrl+V)"))
        self.paste_button.clicked.connect(self.paste)
        QShortcut(QKeySequence.StandardKey.Paste, self, activated=self.paste)
        buttons = QVBoxLayout()
        buttons.addWidget(self.choose_button)
        buttons.addWidget(self.paste_button)
        buttons.addStretch(1)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view, 1)
        layout.addLayout(buttons)

    def clear(self) -> None:
        """Hold no picture (and say what to do)."""
        self.picture = None
        self.view.setPixmap(QPixmap())
        self.view.setText(self.tr("Drop a picture here, paste one (Ctrl+V), or choose one"))
        self.view.setToolTip("")

    def set_picture(self, picture: Path | bytes) -> bool:
        """Hold ``picture`` and show it; ``False`` (and nothing changed) when it cannot be read."""
        pixmap = thumbnail_pixmap(picture, SHOWN)
        if pixmap is None:
            self.view.setText(self.tr("That file is not a picture that can be read."))
            return False
        self.picture = picture
        self.view.setPixmap(pixmap)
        self.view.setToolTip(str(picture) if isinstance(picture, Path) else "")
        self.picture_changed.emit()
        return True

    def paste(self) -> None:
        """Use the clipboard's picture (a copied picture, or a copied picture file)."""
        data = QGuiApplication.clipboard().mimeData()
        if data is not None and data.hasUrls():
            for url in data.urls():
                if url.isLocalFile() and self.set_picture(Path(url.toLocalFile())):
                    return
        image = QGuiApplication.clipboard().image()
        if image.isNull():
            self.view.setText(self.tr("The clipboard holds no picture."))
            return
        self.set_picture(_png_bytes(image))

    def _choose(self) -> None:
        patterns = " ".join(f"*{s}" for s in SUFFIXES)
        path, _ = QFileDialog.getOpenFileName(
            self, self.tr("Choose a picture"), "", self.tr("Pictures ({patterns})").format(patterns=patterns)
        )
        if path:
            self.set_picture(Path(path))

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        """Accept a dragged file or picture."""
        if event.mimeData().hasUrls() or event.mimeData().hasImage():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        """Hold the dropped file or picture."""
        data = event.mimeData()
        for url in data.urls():
            if url.isLocalFile() and self.set_picture(Path(url.toLocalFile())):
                event.acceptProposedAction()
                return
        if data.hasImage():
            self.set_picture(_png_bytes(QImage(data.imageData())))
            event.acceptProposedAction()


def _png_bytes(image: QImage) -> bytes:
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(QByteArray(buffer.data()).data())
