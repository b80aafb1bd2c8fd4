"""Models and datasets from a hub or this computer: finding, downloading, loading, and the fit badge.

Owns the sources (Hugging Face, a mirror, ModelScope, Auto) and credentials (``sources``), the two
official clients behind one interface (``clients``), reaching a hub offline-first with one clear
sentence for every failure (``access``), search (``search``), downloads with progress and Cancel
(``downloads``), the catalogue of suggested models (``catalogue``), loading a model and its tokenizer
(``models``), publishing to a hub (``uploads``, ``uploads_modelscope``; what a push gives back:
``pushed``), a model's parameter shapes on the ``meta`` device (``shapes``) and the fit badge
(``fit``).

May use: ``desktop.core.system``, ``desktop.core.settings``.
"""

# The package's public face: the modules other packages may import (tests/test_house_rules.py holds
# it). The others are this package's own; what another package needs of them goes through these.
__all__ = [
    "access",
    "catalogue",
    "clients",
    "downloads",
    "fit",
    "models",
    "pushed",
    "search",
    "sources",
    "uploads",
]
