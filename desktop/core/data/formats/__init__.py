"""Reading each file format into rows: one module per format family, over what they share.

``delimited`` (CSV, TSV), ``json_files`` (JSON Lines, JSON arrays), ``text_files`` (TXT, one example
a line), ``parquet`` and ``excel`` (.xlsx) each read a file into rows (``parsing.Read``); ``parsing``
holds what they share: parsing a file once into the table cache, Arrow tables as pandas frames,
progress, blank rows. :mod:`desktop.core.data.local_files` picks the reader by the file's type.
"""
