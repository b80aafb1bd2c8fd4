"""Run folders on disk, the record every front end reads: config, events, checkpoints, model, log.

Owns a run folder and the list of runs (``folders``), the compact summaries that make a list of a
thousand runs quick (``summaries``), which checkpoints would load, judged from their files'
structure (``checkpoints``), and the models finished runs saved, to start another run from
(``run_models``).

May use: ``desktop.core.system``, ``desktop.core.settings``.
"""
