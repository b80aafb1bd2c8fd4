"""Heavy libraries imported safely from several threads at once.

``transformers`` loads its classes lazily on first attribute access; two threads doing that at the
same time can fail with "cannot import name 'AutoTokenizer' from 'transformers'" (the app's data page
reads token statistics while the fit badge builds a model config). The first access goes through
one lock; after it the names are plain module attributes.
"""

from __future__ import annotations

import threading
from typing import Any

_lock = threading.Lock()


def transformers_names(*names: str) -> tuple[Any, ...]:
    """``transformers.<name>`` for each of ``names``, imported under one process-wide lock."""
    with _lock:
        import transformers

        return tuple(getattr(transformers, name) for name in names)
