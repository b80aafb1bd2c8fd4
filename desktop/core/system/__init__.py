"""The bottom of core: what every other part uses and that knows nothing of models or data.

Owns the app's folders and crash-safe writes (``paths``), messages and errors a user reads
(``messages``, ``errors``), the typed events of a run (``events``), languages and translations
(``language``, ``translations``), child processes, their priority and the GIL switch interval
(``processes``), progress and Cancel (``progress``), graceful stops (``stopping``), keeping the
computer awake (``awake``), one process per folder (``instance``), credentials kept out of sight
(``secrets``), and heavy imports made safely and early (``lazy``, ``heap``, ``readahead``).

May use: the standard library and light third-party packages only; no other package of core.
"""
