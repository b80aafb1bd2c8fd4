"""The wizard's five pages in a stack, each in its own scroll area, made when first needed."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QCoreApplication, QTimer, Signal
from PySide6.QtWidgets import QFrame, QScrollArea, QStackedWidget

from desktop.gui.pages.base import WizardPage

ENVIRONMENT, DATA, OPTIONS, TRAIN, EXPORT = range(5)
PAGES = (
    ("desktop.gui.pages.environment_page", "EnvironmentPage", "Environment"),
    ("desktop.gui.pages.data_page", "DataPage", "Model & data"),
    ("desktop.gui.pages.options_page", "OptionsPage", "Memory & speed"),
    ("desktop.gui.pages.train_page", "TrainPage", "Train"),
    ("desktop.gui.pages.export_page", "ExportPage", "Export"),
)
"""Each step's module, class and title. The window makes the Environment and Train pages before it
shows; the others' modules (Model & data alone imports 34 modules, 0.07-0.1 s) and widgets are made
one per turn of the event loop after it (:meth:`PageStack.make_the_rest`), or at once when something
needs one."""


def step_title(index: int) -> str:
    """Step ``index``'s title, translated in its page's context (as the page itself does)."""
    _module, page_class, title = PAGES[index]
    return QCoreApplication.translate(page_class, title)


class PageStack(QStackedWidget):
    """The pages, made on first need.

    Args:
        first: The first page, already made.
        make: Makes page ``index`` from its class (the window knows what each page is given).
    """

    page_made = Signal(int, object)
    """A page was made and placed (its index, the page); not emitted for the first."""

    def __init__(self, first: WizardPage, make: Callable[[int, type], WizardPage]) -> None:
        super().__init__()
        self._make = make
        self._pages: list[Any] = [first] + [None] * (len(PAGES) - 1)
        for _page in PAGES:
            # On a small screen (1024 x 576) a page scrolls instead of squeezing its fields.
            scroll = QScrollArea()
            scroll.setWidgetResizable(True)
            scroll.setFrameShape(QFrame.Shape.NoFrame)
            self.addWidget(scroll)
        self.widget(0).setWidget(first)

    def made(self, index: int) -> Any:
        """Page ``index`` if it is made, else ``None`` (never makes it)."""
        return self._pages[index]

    def made_pages(self) -> list[WizardPage]:
        """The pages made so far."""
        return [page for page in self._pages if page is not None]

    def page(self, index: int) -> Any:
        """Page ``index``, made now if it is not yet."""
        page = self._pages[index]
        if page is None:
            module, name, _title = PAGES[index]
            page = self._make(index, getattr(importlib.import_module(module), name))
            self._pages[index] = page
            self.widget(index).setWidget(page)
            self.page_made.emit(index, page)
        return page

    def make_the_rest(self) -> None:
        """Make the next page not made yet, and the one after at the next turn of the event loop."""
        missing = [i for i, page in enumerate(self._pages) if page is None]
        if missing:
            self.page(missing[0])
            if len(missing) > 1:
                QTimer.singleShot(0, self, self.make_the_rest)
