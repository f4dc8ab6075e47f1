"""Write the hand-checked catalogue additions of issue 28 into packages.yaml (run once; the
output is committed). Each row: registry, name, repository, docs repository (when the docs
live apart), docs path, tag pattern (None: the docs repository is unversioned, built as
`latest` and labelled so), description. Rows come from the download ranks in the env
package lists (PyPI top 200 by rank, npm top 200 by monthly downloads), kept where the
project has documentation beyond its README, with paths read from the repositories.
"""

from __future__ import annotations

import sys
from pathlib import Path

GH = "https://github.com/"
# (name, repository, docs repository or None, docs_path, tag pattern or None, description)
PIP = [
    ("requests", "psf/requests", None, "docs", "v{version}", "Python HTTP for Humans"),
    ("boto3", "boto/boto3", None, "docs/source", "{version}", "The AWS SDK for Python"),
    ("typing-extensions", "python/typing_extensions", None, "doc", "{version}", "Backported and experimental type hints"),
    ("python-dateutil", "dateutil/dateutil", None, "docs", "{version}", "Extensions to the standard datetime module"),
    ("six", "benjaminp/six", None, "documentation", "{version}", "Python 2 and 3 compatibility utilities"),
    ("cffi", "python-cffi/cffi", None, "doc/source", "v{version}", "Foreign Function Interface for Python calling C code"),
    ("pluggy", "pytest-dev/pluggy", None, "docs", "{version}", "Plugin and hook calling mechanisms for Python"),
    ("h11", "python-hyper/h11", None, "docs/source", "v{version}", "A pure-Python HTTP/1.1 protocol library"),
    ("fsspec", "fsspec/filesystem_spec", None, "docs/source", "{version}", "File-system specification"),
    ("httpcore", "encode/httpcore", None, "docs", "{version}", "A minimal low-level HTTP client"),
    ("pandas", "pandas-dev/pandas", None, "doc/source", "v{version}", "Powerful data structures for data analysis"),
    ("markupsafe", "pallets/markupsafe", None, "docs", "{version}", "Safely add untrusted strings to HTML/XML markup"),
    ("platformdirs", "tox-dev/platformdirs", None, "docs", "{version}", "Platform-specific system directories"),
    ("python-dotenv", "theskumar/python-dotenv", None, "docs", "v{version}", "Read key-value pairs from a .env file"),
    ("pyjwt", "jpadilla/pyjwt", None, "docs", "{version}", "JSON Web Token implementation in Python"),
    ("rich", "Textualize/rich", None, "docs/source", "v{version}", "Rich text and beautiful formatting in the terminal"),
    ("markdown-it-py", "executablebooks/markdown-it-py", None, "docs", "v{version}", "Python port of markdown-it"),
    ("filelock", "tox-dev/filelock", None, "docs", "{version}", "A platform independent file lock"),
    ("scipy", "scipy/scipy", None, "doc/source", "v{version}", "Fundamental algorithms for scientific computing"),
    ("matplotlib", "matplotlib/matplotlib", None, "doc", "v{version}", "Python plotting package"),
    ("scikit-learn", "scikit-learn/scikit-learn", None, "doc", "{version}", "Machine learning in Python"),
    ("redis", "redis/redis-py", None, "docs", "v{version}", "Python client for Redis"),
    ("psycopg", "psycopg/psycopg", None, "docs", "{version}", "PostgreSQL database adapter for Python"),
    ("tenacity", "jd/tenacity", None, "doc/source", "{version}", "Retry code until it succeeds"),
    ("websockets", "python-websockets/websockets", None, "docs", "{version}", "WebSocket servers and clients"),
    ("uvicorn", "encode/uvicorn", None, "docs", "{version}", "The lightning-fast ASGI server"),
    ("pydantic-settings", "pydantic/pydantic-settings", None, "docs", "v{version}", "Settings management using Pydantic"),
    ("typer", "fastapi/typer", None, "docs", "{version}", "Build great CLIs, based on Python type hints"),
    ("sqlmodel", "fastapi/sqlmodel", None, "docs", "{version}", "SQL databases in Python, designed for simplicity"),
    ("pyopenssl", "pyca/pyopenssl", None, "doc", "{version}", "Python wrapper module around the OpenSSL library"),
    ("networkx", "networkx/networkx", None, "doc", "networkx-{version}", "Creation and study of complex networks"),
    ("pytest-asyncio", "pytest-dev/pytest-asyncio", None, "docs", "v{version}", "Pytest support for asyncio"),
    ("pytest-cov", "pytest-dev/pytest-cov", None, "docs", "v{version}", "Pytest plugin for measuring coverage"),
    ("isort", "PyCQA/isort", None, "docs", "{version}", "A Python utility to sort imports"),
    ("ruff", "astral-sh/ruff", None, "docs", "{version}", "An extremely fast Python linter and code formatter"),
    ("poetry", "python-poetry/poetry", None, "docs", "{version}", "Python dependency management and packaging"),
    ("virtualenv", "pypa/virtualenv", None, "docs", "{version}", "Virtual Python environment builder"),
    ("tox", "tox-dev/tox", None, "docs", "{version}", "tox is a generic virtualenv management and test command line tool"),
    ("arrow", "arrow-py/arrow", None, "docs", "{version}", "Better dates and times for Python"),
    ("pymongo", "mongodb/mongo-python-driver", None, "doc", "{version}", "Python driver for MongoDB"),
    ("djangorestframework", "encode/django-rest-framework", None, "docs", "{version}", "Web APIs for Django"),
    ("kombu", "celery/kombu", None, "docs", "v{version}", "Messaging library for Python"),
    ("keyring", "jaraco/keyring", None, "docs", "v{version}", "Store and access your passwords safely"),
    ("prompt-toolkit", "prompt-toolkit/python-prompt-toolkit", None, "docs", "{version}", "Library for building powerful interactive command lines"),
    ("mkdocs", "mkdocs/mkdocs", None, "docs", "{version}", "Project documentation with Markdown"),
    ("mkdocs-material", "squidfunk/mkdocs-material", None, "docs", "{version}", "Documentation that simply works"),
    ("polars", "pola-rs/polars", None, "docs/source", "py-{version}", "Blazingly fast DataFrame library"),
    ("pyarrow", "apache/arrow", None, "docs/source", "apache-arrow-{version}", "Python library for Apache Arrow"),
    ("lxml", "lxml/lxml", None, "doc", "lxml-{version}", "Powerful and Pythonic XML processing library"),
    ("sympy", "sympy/sympy", None, "doc/src", "sympy-{version}", "Computer algebra system written in pure Python"),
]
NPM = [
    ("react-dom", "facebook/react", "reactjs/react.dev", "src/content", None, "React package for working with the DOM"),
    ("tailwindcss", "tailwindlabs/tailwindcss", "tailwindlabs/tailwindcss.com", "src/docs", None, "A utility-first CSS framework"),
    ("prisma", "prisma/prisma", "prisma/docs", "content", None, "Next-generation ORM for Node.js and TypeScript"),
    ("@prisma/client", "prisma/prisma", "prisma/docs", "content", None, "Prisma Client: an auto-generated query builder"),
    ("eslint", "eslint/eslint", None, "docs/src", "v{version}", "An AST-based pattern checker for JavaScript"),
    ("prettier", "prettier/prettier", None, "docs", "{version}", "Prettier is an opinionated code formatter"),
    ("webpack", "webpack/webpack", "webpack/webpack.js.org", "src/content", None, "Packs ECMAScript/CommonJs/AMD modules for the browser"),
    ("jest", "jestjs/jest", None, "docs", "v{version}", "Delightful JavaScript Testing"),
    ("vitest", "vitest-dev/vitest", None, "docs", "v{version}", "Next generation testing framework powered by Vite"),
    ("@babel/core", "babel/babel", "babel/website", "docs", None, "Babel compiler core"),
    ("mongoose", "Automattic/mongoose", None, "docs", "{version}", "Mongoose MongoDB ODM"),
    ("@angular/core", "angular/angular", None, "adev/src/content", "{version}", "Angular - the core framework"),
    ("nuxt", "nuxt/nuxt", None, "docs", "v{version}", "The Intuitive Vue Framework"),
    ("astro", "withastro/astro", "withastro/docs", "src/content/docs/en", None, "The web framework for content-driven websites"),
    ("@sveltejs/kit", "sveltejs/kit", None, "documentation/docs", "@sveltejs/kit@{version}", "SvelteKit is the fastest way to build Svelte apps"),
    ("redux", "reduxjs/redux", None, "docs", "v{version}", "Predictable state container for JavaScript apps"),
    ("@reduxjs/toolkit", "reduxjs/redux-toolkit", None, "docs", "v{version}", "The official, opinionated toolset for Redux"),
    ("react-router", "remix-run/react-router", None, "docs", "react-router@{version}", "Declarative routing for React"),
    ("@apollo/client", "apollographql/apollo-client", None, "docs/source", "v{version}", "A fully-featured caching GraphQL client"),
    ("@playwright/test", "microsoft/playwright", None, "docs/src", "v{version}", "A high-level API to automate web browsers"),
    ("playwright", "microsoft/playwright", None, "docs/src", "v{version}", "A high-level API to automate web browsers"),
    ("puppeteer", "puppeteer/puppeteer", None, "docs", "puppeteer-v{version}", "A high-level API to control headless Chrome"),
    ("rollup", "rollup/rollup", None, "docs", "v{version}", "Next-generation ES module bundler"),
    ("@nestjs/core", "nestjs/nest", "nestjs/docs.nestjs.com", "content", None, "Nest - modern, fast, powerful node.js web framework"),
    ("hono", "honojs/hono", "honojs/website", "docs", None, "Web framework built on Web Standards"),
    ("drizzle-orm", "drizzle-team/drizzle-orm", "drizzle-team/drizzle-orm-docs", "src/content/docs", None, "TypeScript ORM"),
    ("@trpc/server", "trpc/trpc", None, "www/docs", "v{version}", "End-to-end typesafe APIs"),
    ("mocha", "mochajs/mocha", None, "docs", "v{version}", "Simple, flexible, fun test framework"),
    ("electron", "electron/electron", None, "docs", "v{version}", "Build cross platform desktop apps with web technologies"),
    ("yargs", "yargs/yargs", None, "docs", "v{version}", "Command-line parsing for node.js"),
    ("immer", "immerjs/immer", None, "website/docs", "v{version}", "Create the next immutable state by mutating the current one"),
    ("@mui/material", "mui/material-ui", None, "docs/data", "v{version}", "Material UI: React components implementing Material Design"),
    ("bootstrap", "twbs/bootstrap", None, "site/content/docs", "v{version}", "The most popular front-end framework"),
    ("chart.js", "chartjs/Chart.js", None, "docs", "v{version}", "Simple HTML5 charts using the canvas element"),
    ("preact", "preactjs/preact", "preactjs/preact-www", "content/en", None, "Fast 3kb React-compatible Virtual DOM library"),
    ("lit", "lit/lit", "lit/lit.dev", "packages/lit-dev-content/site/docs", None, "Simple, fast Web Components"),
    ("sass", "sass/dart-sass", "sass/sass-site", "source/documentation", None, "A pure JavaScript implementation of Sass"),
    ("@tanstack/react-query", "TanStack/query", None, "docs", "v{version}", "Hooks for managing, caching and syncing asynchronous data"),
]


def entry(name: str, repo: str, docs_repo: str | None, path: str, tag: str | None, desc: str) -> str:
    lines = [f"  - name: {name if not name.startswith('@') else repr(name)}",
             f"    description: {desc!r}".replace("'", '"'), f"    repository: {GH}{repo}"]
    if tag is None:
        lines += ["    source:", "      type: git", f"      url: {GH}{docs_repo}", f"      docs_path: {path}"]
    else:
        lines += ["    versions:", '      - min_version: "0.0.1"', f'        tag_pattern: "{tag}"',
                  "        source:", "          type: git", f"          url: {GH}{docs_repo or repo}",
                  f"          docs_path: {path}"]
    return "\n".join(lines) + "\n"


def main(path: Path) -> None:
    text = path.read_text()
    have = {line.split(":", 1)[1].strip().strip("'\"") for line in text.splitlines() if line.startswith("  - name:")}
    header = "\n  # ---- issue 28: the most-used packages with docs beyond a README (repository at the tag) --\n"
    pip = header + "".join(entry(*row) for row in PIP if row[0] not in have)
    npm = header + "".join(entry(*row) for row in NPM if row[0] not in have)
    text = text.replace("\nnpm:\n", pip + "\nnpm:\n", 1).replace("\npython:\n", npm + "\npython:\n", 1)
    path.write_text(text)


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "packages.yaml"))
