"""Which words are English: read by spelling correction (a word meant as typed) and by the
question's library names (a shortened name that is an everyday word names nothing)."""

from __future__ import annotations

import functools
from collections.abc import Container


@functools.cache
def english_words() -> Container[str]:
    """Words meant as typed: the shipped embedding model's WordPiece vocabulary (BERT's
    uncased: 22,501 whole alphabetic words, which are all a corrected word can be), read on
    first need (a word no package holds) as the model reads it (`read_tokenizer_json`: 7 ms
    from the list it remembers, where parsing tokenizer.json took 25-40 ms here). Of the ten
    corrections the tuning sets' 1,163 questions drew without it, it keeps five: the two real
    typos ("recomended", "paramter"), numeric -> number, and two wrong ones (prefilled ->
    prefix, intranet -> internet); it drops readers -> render, compared -> compat, bounce ->
    bound, broke -> broken and weigh -> weight."""
    from ..embed.model import DEFAULT_MODEL_DIR, read_tokenizer_json

    try:
        found = read_tokenizer_json(DEFAULT_MODEL_DIR / "tokenizer.json")
    except (OSError, ValueError):
        return frozenset()
    return found.vocab if found is not None else frozenset()

