"""A trained model behind a local, OpenAI-compatible HTTP endpoint (``finetune-studio-cli serve``).

:mod:`engine` runs the model, :mod:`api` is the FastAPI app over it, :mod:`server` binds the port and
runs it with uvicorn; :mod:`keys` keeps the API key in the OS keyring and :mod:`snippets` writes the
code a user copies to call it.
"""
