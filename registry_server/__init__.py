"""The registry server: hosts package files over Neuledge Context's HTTP API, plus ours.

`create_app` (in `app.py`) builds the Starlette app; `cli.main` serves it with uvicorn.
Kept import-light so `context-registry-server --help` starts fast.
"""
