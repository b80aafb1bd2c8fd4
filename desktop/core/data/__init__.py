"""Training data: reading every format, mapping columns, checking rows, and turning them into examples.

Owns reading local files and hub datasets into a :class:`~desktop.core.data.tables.Table`
(``tables``), the Arrow cache of parsed files (``arrow_cache``), the column mapping and its guess
(``columns``), the one load-and-check path that preview, ``validate`` and training share
(``checks``), what the data page shows (``preview``), tokenized examples kept in Arrow
(``examples``), and what each task reads from the data and feeds a model (``tasks``).

May use: ``desktop.core.system``, ``desktop.core.settings``, ``desktop.core.hub``.
"""
