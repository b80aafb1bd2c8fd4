"""Run folders on disk, the record every front end reads: config, events, checkpoints, model, log.

Owns a run folder (``folders``), the list of runs as shown (``listing``), the compact summaries that make a
list of a thousand runs quick (``summaries``), which checkpoints would load, judged from their files'
structure (``checkpoints``), and the models finished runs saved, to start another run from
(``run_models``).

May use: ``desktop.core.system``, ``desktop.core.settings``.
"""

# The package's public face: the modules other packages may import (tests/test_house_rules.py holds
# it). The others are this package's own; what another package needs of them goes through these.
__all__ = [
    "checkpoints",
    "data_record",
    "folders",
    "listing",
    "run_models",
]
