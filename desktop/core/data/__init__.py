"""Training data: reading every format, mapping columns, checking rows, and turning them into examples.

Owns the rows read, a :class:`~desktop.core.data.tables.Table` (``tables``); decoding text files
(``encodings``); reading each file format (``formats``: ``delimited``, ``json_files``, ``text_files``,
``parquet``, ``excel``, over what they share, ``parsing``); reading local files (``local_files``) and
hub datasets (``hub_datasets``); the training and evaluation rows a config asks for (``train_eval``);
the Arrow cache of parsed files (``arrow_cache``); the column mapping and its guess (``columns``);
chat conversations and the rows that hold no usable one (``chats``); the one load-and-check path
that preview, ``validate`` and training share (``checks``); what the data page shows (``preview``);
tokenized examples kept in Arrow (``examples``); the rewards of reasoning runs, which the data step
previews (``rewards``); pictures as data, checked and read lazily (``images``); and what each task
reads from the data and feeds a model (``tasks``).

May use: ``desktop.core.system``, ``desktop.core.settings``, ``desktop.core.hub``.
"""

# The package's public face: the modules other packages may import (tests/test_house_rules.py holds
# it). The others are this package's own; what another package needs of them goes through these.
__all__ = [
    "chats",
    "checks",
    "columns",
    "digest",
    "encodings",
    "hub_datasets",
    "image_checks",
    "images",
    "local_files",
    "model_checks",
    "picture_chats",
    "preview",
    "rewards",
    "tasks",
    "train_eval",
]
