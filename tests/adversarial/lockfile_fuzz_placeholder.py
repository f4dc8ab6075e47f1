"""PLACEHOLDER (issue 11, standing suite): fuzzing of the lockfile and manifest parsers.

`context sync` (DESIGN §5) reads a project's lockfiles and manifests (Python, JS/TS,
Elixir). Those parsers are not on this branch yet, so nothing here is a test and pytest
collects nothing from this module. When they land, add `test_lockfiles.py` beside it that
feeds each parser (uv.lock, poetry.lock, requirements*.txt, package-lock.json,
pnpm-lock.yaml, yarn.lock, mix.lock, ...) with hypothesis-generated and hostile files
(deep nesting, YAML aliases, huge files, NUL bytes, `\\u00b2` versions, `../` names) and
asserts the promise used everywhere in this folder: a result or one of our own errors,
bounded in time and memory; then delete this file.
"""
