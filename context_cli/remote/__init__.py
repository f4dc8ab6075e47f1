"""Talking to registry servers: which servers exist (`config`), the wire format (`protocol`,
shared with the publisher in `registry/publish.py`) and what they hold (`client`).

Surface-neutral on purpose: the CLI and the MCP server call the same functions, which
return data and raise `RegistryError` subclasses, never print.
"""
