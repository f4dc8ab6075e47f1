"""Every `CONTEXT_*` environment variable that context reads, with its default: the one module
that reads them (`Variable.value`).

docs/configuration.md lists the same table; tests/test_environment.py holds the two together,
and holds every other module to naming a variable only through here. Each variable is read
when it is needed, never at import, so that a test or a shell can change it.
"""

from __future__ import annotations

import os


class Variable:
    """One `CONTEXT_*` variable: its name, its `default` (what applies when it is unset, as
    docs/configuration.md says it) and what it `means`."""

    __slots__ = ("name", "default", "means")

    def __init__(self, name: str, default: str, means: str) -> None:
        self.name, self.default, self.means = name, default, means

    def value(self) -> str | None:
        """Its value as set; None when it is unset or empty."""
        return os.environ.get(self.name) or None


# Where things live, and how the client talks.
HOME = Variable("CONTEXT_HOME", "~/.context", "the folder for installed packages, models, caches and config.json")
DEBUG = Variable("CONTEXT_DEBUG", "unset", "any value: an unexpected error prints its traceback")
EMBED_MODEL = Variable("CONTEXT_EMBED_MODEL", "the shipped model",
                       "the embedding model for building and searching: a folder, a name under models/, or a hub id")
QUALITY_MODEL = Variable("CONTEXT_QUALITY_MODEL", "$CONTEXT_HOME/models/, then the installed model wheel",
                         "the folder of the optional quality model (`--quality`)")
QUALITY_KEY = Variable("CONTEXT_QUALITY_KEY", "unset", "the API key of the embeddings endpoint config.json names")
REGISTRY_URL = Variable("CONTEXT_REGISTRY_URL", "unset", "replaces the default registry server's URL")
MAX_DOWNLOAD_BYTES = Variable("CONTEXT_MAX_DOWNLOAD_BYTES", "536870912 (512 MiB)",
                              "the largest package file downloaded from a registry server")
MCP_TOKEN = Variable("CONTEXT_MCP_TOKEN", "unset", "`serve --http`: the bearer token every request must send")
MCP_SEARCH_SECONDS = Variable("CONTEXT_MCP_SEARCH_SECONDS", "30",
                              "`serve`: a get_docs call that takes longer answers with an error")
# Fetching documentation.
HTTP_TIMEOUT = Variable("CONTEXT_HTTP_TIMEOUT", "10 s to connect, 30 s to read",
                        "seconds to connect and to wait for data, for web pages, artefacts and registry servers")
HTTP_RETRIES = Variable("CONTEXT_HTTP_RETRIES", "2", "retries of a failed request")
HTTP_BACKOFF = Variable("CONTEXT_HTTP_BACKOFF", "0.5", "seconds before the first retry; doubles each time")
DOWNLOAD_DEADLINE = Variable("CONTEXT_DOWNLOAD_DEADLINE", "900", "seconds one whole download may take")
DOWNLOAD_MIN_RATE = Variable("CONTEXT_DOWNLOAD_MIN_RATE", "1024",
                             "bytes a second below which a download stalls (0: any rate)")
DOWNLOAD_SLOW_SECONDS = Variable("CONTEXT_DOWNLOAD_SLOW_SECONDS", "30", "seconds a download may stay below that rate")
GIT_ALLOW_PROTOCOL = Variable("CONTEXT_GIT_ALLOW_PROTOCOL", "unset (https and git only)",
                              "more git protocols, joined by `:` (tests use `file`)")
DEFINITIONS = Variable("CONTEXT_DEFINITIONS", "the catalogue of this install (packages.yaml)",
                       "documentation definitions: files or folders joined by the OS path separator")
WEB_CACHE_MB = Variable("CONTEXT_WEB_CACHE_MB", "256", "megabytes the web page cache may hold; oldest used go first")
BROWSER = Variable("CONTEXT_BROWSER", "the installed Chromium",
                   "the browser that renders script-built sites (a binary, or `none`)")
NPM_REGISTRY_URL = Variable("CONTEXT_NPM_REGISTRY_URL", "https://registry.npmjs.org", "the npm registry")
PYPI_URL = Variable("CONTEXT_PYPI_URL", "https://pypi.org", "PyPI")
MAVEN_URL = Variable("CONTEXT_MAVEN_URL", "https://repo1.maven.org/maven2", "the Maven repository")
MAVEN_SEARCH_URL = Variable("CONTEXT_MAVEN_SEARCH_URL", "https://search.maven.org", "Maven's search")
HEX_URL = Variable("CONTEXT_HEX_URL", "https://hex.pm", "Hex")
# The registry: its command line and its server.
REGISTRY_DEFINITIONS = Variable("CONTEXT_REGISTRY_DEFINITIONS", "./packages.yaml, else the shipped catalogue",
                                "`context-registry`: the definitions file or folder")
MIRRORS = Variable("CONTEXT_MIRRORS", "/work/.mirror",
                   "`python -m registry.generate --propose`: the folder of fetched repository snapshots")
REGISTRY_KEY = Variable("CONTEXT_REGISTRY_KEY", "unset",
                        "the publish key: the server's (`--publish-key`; unset, publishing is refused), and "
                        "`context-registry publish`'s after REGISTRY_PUBLISH_KEY")
REGISTRY_DATA = Variable("CONTEXT_REGISTRY_DATA", "unset", "`context-registry-server --data`")
REGISTRY_DATABASE = Variable("CONTEXT_REGISTRY_DATABASE", "SQLite in --data", "`context-registry-server --database`")
REGISTRY_BLOBS = Variable("CONTEXT_REGISTRY_BLOBS", "files in --data", "`context-registry-server --blobs`")
REGISTRY_S3_ENDPOINT = Variable("CONTEXT_REGISTRY_S3_ENDPOINT", "AWS", "`context-registry-server --s3-endpoint`")
REGISTRY_SERVER_OPTIONS = Variable("CONTEXT_REGISTRY_SERVER_OPTIONS", "set by the server",
                                   "the server's options, handed to its worker processes")
REGISTRY_HEADER_TIMEOUT = Variable("CONTEXT_REGISTRY_HEADER_TIMEOUT", "set by the server",
                                   "the server's header timeout, handed to its worker processes")

VARIABLES = (HOME, DEBUG, EMBED_MODEL, QUALITY_MODEL, QUALITY_KEY, REGISTRY_URL, MAX_DOWNLOAD_BYTES, MCP_TOKEN,
             MCP_SEARCH_SECONDS, HTTP_TIMEOUT, HTTP_RETRIES, HTTP_BACKOFF, DOWNLOAD_DEADLINE, DOWNLOAD_MIN_RATE,
             DOWNLOAD_SLOW_SECONDS, GIT_ALLOW_PROTOCOL, DEFINITIONS, WEB_CACHE_MB, BROWSER, NPM_REGISTRY_URL, PYPI_URL, MAVEN_URL,
             MAVEN_SEARCH_URL, HEX_URL, REGISTRY_DEFINITIONS, MIRRORS, REGISTRY_KEY, REGISTRY_DATA, REGISTRY_DATABASE,
             REGISTRY_BLOBS, REGISTRY_S3_ENDPOINT, REGISTRY_SERVER_OPTIONS, REGISTRY_HEADER_TIMEOUT)
