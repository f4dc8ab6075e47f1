"""A WordPiece vocabulary kept as the text of its tokens, one a line, each one's id its line.

It is the vocabulary remembered in the home (`embed.model.VOCABS`). A cold query looks up
about a dozen tokens (its question's words, the unknown and added tokens): finding each in
the text costs about 0.25 M instructions, where splitting the lines and hashing the 30,522
tokens into a dict costs 38 M, 5 % of the whole query. A build or a server looks up every
new word it meets, so after `FIND_BEFORE_DICT` lookups the dict is built and used.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

FIND_BEFORE_DICT = 64


class LineVocab(Mapping[str, int]):
    """Token -> id over `lines` (the tokens joined by newlines, none of them holding one).
    `count` is how many lines there are. A token on two lines (a file damaged by hand: ours
    are written from a dict) has the first one's id, found or from the dict."""

    def __init__(self, lines: str, count: int) -> None:
        self._text = f"\n{lines}\n"  # each token is "\n" + token + "\n" in it
        self._count = count
        self._finds = 0
        self._dict: dict[str, int] | None = None

    def get(self, token: str, default: Any = None) -> Any:
        """The token's id, or `default`: the hot call of the tokenizer (embed/wordpiece.py)."""
        found = self._dict.get(token) if self._dict is not None else self._find(token)
        return default if found is None else found

    def _find(self, token: str) -> int | None:
        self._finds += 1
        if self._finds > FIND_BEFORE_DICT:
            return self._built().get(token)
        if not isinstance(token, str) or "\n" in token:
            return None
        at = self._text.find(f"\n{token}\n")  # find: rfind is 2.7x the instructions
        return None if at < 0 else self._text.count("\n", 0, at)

    def _built(self) -> dict[str, int]:
        if self._dict is None:
            tokens = self._text[1:-1].split("\n")
            built = dict(zip(tokens, range(len(tokens)), strict=True))
            if len(built) != len(tokens):  # a token repeated: its first line counts
                built = {}
                for i, token in enumerate(tokens):
                    built.setdefault(token, i)
            self._dict = built  # the text stays: another thread may be finding a token in it
        return self._dict

    def __getitem__(self, token: str) -> int:
        found = self.get(token)
        if found is None:
            raise KeyError(token)
        return int(found)

    def __contains__(self, token: object) -> bool:
        return isinstance(token, str) and self.get(token) is not None

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[str]:
        return iter(self._built())
