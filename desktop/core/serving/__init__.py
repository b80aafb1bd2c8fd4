"""A trained model behind a local, OpenAI-compatible HTTP endpoint (``finetune-studio-cli serve``).

Owns the model's thread and the queue in front of it (``engine``), the request shapes and errors
(``protocol``), the routes with the key and the limits (``api``, FastAPI), binding the port and running
uvicorn (``server``), what a request must be to reach the routes (``guard``), this computer's
addresses (``addresses``), connections a client cannot hold (``connections``), OpenAI's presence and
frequency penalties (``penalties``), answers held to a JSON schema (``structured``), requests answered
together (``batching``), the API key in the OS keyring (``keys``) and the code a user copies to call it
(``snippets``); answers as server-sent events (``streaming``).

May use: every other package of core (the model is loaded as ``results.tryit`` loads it).
"""

# The package's public face: the modules other packages may import (tests/test_house_rules.py holds
# it). The others are this package's own; what another package needs of them goes through these.
__all__ = [
    "addresses",
    "engine",
    "guard",
    "keys",
    "server",
    "snippets",
]
