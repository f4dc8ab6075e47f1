"""The publisher: registry definitions, version discovery, build and publish.

Kept empty so that `context-registry --help` imports only the command it runs.
"""
