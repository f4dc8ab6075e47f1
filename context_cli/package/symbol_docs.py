"""A `symbols` row's docstring, stored deflated when that pays (docs/package-format.md).

The `doc` column repeats, for `context api`, docstrings that the package's sections also
hold: SQLAlchemy's 2,950 documented entries are 1.59 MB of its 3.1 MB `symbols` table. A
docstring of DEFLATE_FROM bytes or more is stored zlib-deflated in `doc_zlib`, `doc` left
empty (0.80 MB there); a client that predates the column reads an empty docstring, never a
garbled one.
"""

from __future__ import annotations

import zlib

from ..errors import InvalidPackage

DEFLATE_FROM = 128  # bytes of UTF-8: shorter docstrings gain little (the whole table: 0.801 vs 0.802 MB)
MAX_DOC_BYTES = 256 * 1024  # a docstring is clipped at 20,000 characters when read: more is a damaged row
MAX_PACKAGE_DOC_BYTES = 64 << 20  # all of a package's docstrings, inflated (SQLAlchemy's: 1.6 MB)


def packed(doc: str) -> tuple[str, bytes | None]:
    """(`doc`, `doc_zlib`) column values of one docstring."""
    raw = doc.encode("utf-8")
    if len(raw) < DEFLATE_FROM:
        return doc, None
    deflated = zlib.compress(raw, 9)
    return ("", deflated) if len(deflated) < len(raw) else (doc, None)


class Inflated:
    """One reading of a package's docstrings: each `doc_zlib` inflated to at most
    MAX_DOC_BYTES, and all of them together to at most MAX_PACKAGE_DOC_BYTES. A few hundred
    stored bytes can inflate a thousandfold: without the sum, a small hostile package could
    make one read hold gigabytes."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.left = MAX_PACKAGE_DOC_BYTES

    def text(self, doc: str, deflated: bytes | None) -> str:
        """The docstring of a row: `doc`, or `doc_zlib` inflated (InvalidPackage when it is
        not a deflated UTF-8 text, or past either limit)."""
        if deflated is None:
            return doc
        limit = min(MAX_DOC_BYTES, self.left)
        try:
            inflate = zlib.decompressobj()
            raw = inflate.decompress(deflated, limit)
            if not inflate.eof or inflate.unconsumed_tail:
                raise InvalidPackage(f"{self.label}: a symbol's docstring is damaged (over {limit} bytes, or cut "
                                     f"short; a package's docstrings may hold {MAX_PACKAGE_DOC_BYTES >> 20} MiB)")
            self.left -= len(raw)
            return raw.decode("utf-8")
        except (zlib.error, UnicodeDecodeError, TypeError) as e:
            raise InvalidPackage(f"{self.label}: a symbol's docstring is damaged ({e})") from None
