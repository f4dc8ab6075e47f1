"""Bytes to text: UTF-8 first, a declared or legacy charset second, binary refused.

Documentation trees hold the odd Latin-1 page and the odd binary file with a text suffix;
the first should still be read, the second must fail loudly instead of becoming noise.
"""

from __future__ import annotations

import codecs
import re

from .common import ParseError

_CONTROL = re.compile(r"[\x01-\x08\x0e-\x1a\x1c-\x1f\x7f]")
_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9._:-]+)""", re.I)


def decode(data: bytes, rel_path: str, *, html: bool = False) -> str:
    """Decode a documentation file, raising ParseError when it is not sensible text."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text = _try(data, "utf-16")
    else:
        text = _try(data, "utf-8-sig")
        if text is None and html:
            declared = _CHARSET.search(data[:4096])
            if declared:
                text = _try(data, declared.group(1).decode("ascii", "replace"))
        if text is None:
            text = _try(data, "cp1252")
    if text is None or not _looks_like_text(text):
        raise ParseError(f"{rel_path}: not readable text (binary data or an unknown encoding)")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _try(data: bytes, encoding: str) -> str | None:
    try:
        return data.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        return None


def _looks_like_text(text: str) -> bool:
    """No NUL, and control characters (other than tab, newlines, form feed) are rare."""
    if "\x00" in text:
        return False
    sample = text[:65536]
    controls = len(_CONTROL.findall(sample))
    return controls <= max(2, len(sample) // 200)
