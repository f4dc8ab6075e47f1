"""The API as released: symbols read from a release's code (never imported or run).

`python.extract_api` reads an unpacked sdist or wheel with `ast`; `pages` turns the entries
into searchable reference pages; `table` stores and reads them as a package's `symbols`
table; `lookup` answers `context api`, `changes` compares two versions. See
docs/api-reference.md.
"""
