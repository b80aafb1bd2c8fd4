"""The first rows of the data, as a read-only table."""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QHeaderView, QTableWidget, QTableWidgetItem

from desktop.core.data.preview import Preview
from desktop.gui.widgets.pictures import THUMBNAIL, picture_words, thumbnail_pixmap


class PreviewTableWidget(QTableWidget):
    """The preview's rows under its columns; a long cell is cut, and whole in its tooltip."""

    def __init__(self) -> None:
        super().__init__()
        self._shown: tuple | None = None  # the columns and rows in the table
        self.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.horizontalHeader().setStretchLastSection(True)
        self.verticalHeader().setDefaultSectionSize(22)

    def show_preview(self, result: Preview, pictures: str = "") -> None:
        """Show the rows of ``result`` (kept as they are when they are the ones shown already);
        ``pictures``: the column whose cells name pictures, shown as thumbnails with the file's name."""
        cells = [
            [
                picture_words(row.get(column)) if column == pictures else _cell_text(row.get(column))
                for column in result.columns
            ]
            for row in result.rows
        ]
        shown_now = (list(result.columns), cells, pictures)  # texts: a cell may hold lists or arrays
        if shown_now == self._shown:  # the full check's first rows are the ones shown already
            return
        self._shown = shown_now
        self.clear()
        self.setColumnCount(len(result.columns))
        self.setRowCount(len(cells))
        self.setHorizontalHeaderLabels(result.columns)
        has_pictures = pictures in result.columns
        self.setIconSize(QSize(THUMBNAIL, THUMBNAIL) if has_pictures else QSize(16, 16))
        self.verticalHeader().setDefaultSectionSize(THUMBNAIL + 6 if has_pictures else 22)
        for r, row in enumerate(cells):
            for c, text in enumerate(row):
                item = QTableWidgetItem(text if len(text) < 300 else text[:299] + "…")
                item.setToolTip(text[:2000])
                if result.columns[c] == pictures:
                    value = result.rows[r].get(pictures)
                    pixmap = thumbnail_pixmap(value)
                    if pixmap is not None:
                        item.setIcon(QIcon(pixmap))
                    item.setToolTip(_cell_text(value)[:2000] if isinstance(value, str) else text)
                self.setItem(r, c, item)
        self.resizeColumnsToContents()
        for c in range(len(result.columns)):
            self.setColumnWidth(c, min(420, max(120, self.columnWidth(c))))

    def clear_preview(self) -> None:
        """No rows and no columns."""
        self._shown = None
        self.clear()
        self.setRowCount(0)
        self.setColumnCount(0)


def _cell_text(value: object) -> str:
    """A cell as the table shows it: nothing for a missing value; a chat (a list of messages) as its
    turns, ``user: ... | assistant: ...``; other nested values as JSON, never as Python's repr."""
    if value is None:
        return ""
    if hasattr(value, "tolist"):  # a numpy array from an Arrow list column
        value = value.tolist()
    if isinstance(value, list) and value and all(isinstance(m, dict) and "content" in m for m in value):
        return " | ".join(f"{m.get('role', '?')}: {m.get('content', '')}" for m in value)
    if isinstance(value, (list, dict)):
        import json

        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)
