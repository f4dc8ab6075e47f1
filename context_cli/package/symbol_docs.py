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


def packed(doc: str) -> tuple[str, bytes | None]:
    """(`doc`, `doc_zlib`) column values of one docstring."""
    raw = doc.encode("utf-8")
    if len(raw) < DEFLATE_FROM:
        return doc, None
    deflated = zlib.compress(raw, 9)
    return ("", deflated) if len(deflated) < len(raw) else (doc, None)


def unpacked(doc: str, deflated: bytes | None, label: str) -> str:
    """The docstring of a row: `doc`, or `doc_zlib` inflated (at most MAX_DOC_BYTES;
    InvalidPackage when it is not a deflated UTF-8 text)."""
    if deflated is None:
        return doc
    try:
        inflate = zlib.decompressobj()
        raw = inflate.decompress(deflated, MAX_DOC_BYTES)
        if not inflate.eof or inflate.unconsumed_tail:
            raise InvalidPackage(f"{label}: a symbol's docstring is damaged (over {MAX_DOC_BYTES} bytes or cut short)")
        return raw.decode("utf-8")
    except (zlib.error, UnicodeDecodeError, TypeError) as e:
        raise InvalidPackage(f"{label}: a symbol's docstring is damaged ({e})") from None
