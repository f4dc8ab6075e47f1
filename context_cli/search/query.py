"""The question, parsed once: what every later step of a search reads of it.

The user's text never reaches FTS5 as syntax: it is split into terms the way the
`unicode61` tokenizer splits (letters and digits; `_`, `-`, `.` separate), each term is
double-quoted, and terms are OR-ed so a natural-language question still finds the
sections that cover most of it (BM25 ranks by how much they cover). Identifiers that
the tokenizer splits (`ERR_REQUIRE_ESM`, `foo.bar`) also add their quoted phrase, so the
exact sequence ranks first.

A search makes one `Query` (`Query.parse`) and, per package, the question as that package
sees it (`without_library`); every step reads its fields instead of splitting the text again.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from itertools import chain
from types import MappingProxyType

from ..errors import ContextError
from ..package.bm25 import MAX_SPLIT_PARTS
from .options import MAX_QUERY_CHARS

MAX_TERMS = 32
MAX_TERM_CHARS = 64
MAX_PHRASES = 8
MAX_JOINED = 8  # adjacent words searched as one word too (`joined`)
JOINED_WORDS = (2, 3)  # how many adjacent words are joined
JOINED_LETTERS = 3  # the shortest word joined after the head
# Words that start names in code (`useEffect`, `getQueryData`, `setState`, `createApp`,
# `makeQueryClient`, `hasOwnProperty`, `isValid`, `onClick`, `forRoot`, `withRouter`,
# `fromJSON`, `beforeEach`, `afterAll`), stopwords but `set` and `create`; not `to`, `as`,
# `when`, `can`...: over the sets' 1,590 questions `to` alone would join 256 times, for
# `toString` and the like.
JOIN_HEADS = frozenset({"use", "get", "set", "create", "make", "has", "is", "on", "for", "with", "from", "before",
                        "after"})
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_WORD = re.compile(r"\S+")
_IDENTIFIER = re.compile(r"^[A-Za-z_$][\w$.:-]*[\w$]\Z")
_DEFINITION = re.compile(r"^\s*(what\s+(is|are|does)|what's|whats|define)\b|\b(meaning|definition|stands?\s+for)\b",
                         re.IGNORECASE)
# Words of a question about versions or changes, which release notes answer (the words after
# "upgrad" were added on the anthropic set, whose release-note questions ask when a model
# launched or a feature became available). A bare "changes" is not one: "my changes are not
# saved", "when the row changes" ask about the app's own state. Looked up in the question's
# words first; a regex over them only for the phrases (one over the raw text cost 0.1 M
# instructions a question, with IGNORECASE).
_CHANGE_WORDS = frozenset({"changelog", "removed", "version", "versions", "available", "date"})
_CHANGE_STEMS = ("releas", "deprecat", "upgrad", "migrat", "launch", "introduc")
_CHANGE_PHRASES = re.compile(r"\b(?:what (?:s |has |have )?changed|breaking changes?|changes? (?:in|since|between|from) "
                             r"v?\d|changed (?:in|since) v?\d|new in|what s new|when (?:did|was|were|will))\b")
_VERSION = re.compile(r"\d\.\d|\b[vV]\d+\b")  # `2.0`, and `v2` ("from pydantic v1 to v2")
_EDGE = "\"'.,;:?!()[]{}<>"

# A contraction is a function word and a fragment the tokenizer splits apart ("what's" ->
# what, s; "don't" -> don, t): both were searched, the fragments matched every "it's" and
# "isn't" of the docs, and the pair was searched as a phrase. They are read as the words they
# stand for (`uncontracted`); a possessive ("Claude's") is a name's and stays. "e.g." and "i.e."
# are dropped. Spelt without the apostrophe ("whats", "dont") they are stopwords.
_CONTRACTION = re.compile(r"\b(?:(what|that|it|there|here|let|who|where|how|he|she)['’]s|(\w+?)n['’]t|(\w+)['’](?:m|d|ve|ll|re)"
                          r"|(?<!\.)(e\.g|i\.e)\b\.?)(?!\w)", re.IGNORECASE)
_NOT_BASES = {"ca": "can", "wo": "will", "sha": "shall"}
_VS = frozenset({"vs", "versus"})
STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers him his how i if in into is it its itself just me more
most my no nor not now of off on once only or other our ours out over own same she should so
some such than that the their theirs them then there these they this those through to too
under until up very was we were what when where which while who whom why will with would you
your yours yourself use using used want way get gets make need needs example examples
just really also able actually instead kind thing things something anything everything somehow
always still already lot lots bunch stuff please possible proper properly correct correctly
whats dont doesnt didnt isnt arent wasnt werent hasnt havent hadnt cant wont couldnt shouldnt
wouldnt im ive
""".split())


class EmptyQuery(ContextError):
    """A query with nothing to search for."""


def words(text: str) -> list[str]:
    """Every lowercase term of the text, stopwords included, as the tokenizer splits it."""
    return _words(_TOKEN.findall(text))


def _words(tokens: list[str]) -> list[str]:
    return [t.lower() for t in tokens if len(t) <= MAX_TERM_CHARS]


def terms(text: str) -> list[str]:
    """Distinct lowercase search terms, stopwords dropped (unless nothing else is left)."""
    return _terms(words(text), text)


def _terms(words: list[str], text: str = "") -> list[str]:
    """`words` less stopwords (unless nothing else is left), and less "vs" where `text` sets
    sides against each other (`intent.comparison`): as a word it only matches "VS Code"."""
    stop = STOPWORDS | _VS if _VS.intersection(words) and _compares(text) else STOPWORDS
    kept = [t for t in words if t not in stop] or words
    return list(dict.fromkeys(kept))[:MAX_TERMS]


def _compares(text: str) -> bool:
    from .intent import comparison

    return comparison(text) is not None


def uncontracted(text: str) -> str:
    """The text with its contractions as the words they stand for ("what's" -> what, "don't"
    -> do, "can't" -> can, "I'm" -> I) and "e.g."/"i.e." dropped: what is searched of it."""
    if "'" not in text and "’" not in text and ".g" not in text and ".e" not in text:  # (most questions)
        return text
    return _CONTRACTION.sub(_base, text)


def _base(m: re.Match[str]) -> str:
    if m.group(2) is not None:
        return _NOT_BASES.get(m.group(2).lower(), m.group(2))
    return m.group(1) or m.group(3) or ""


def phrases(text: str) -> list[tuple[str, ...]]:
    """Words of the text that the tokenizer would split into several terms."""
    out = []
    for word in text.split():  # (what `\S+` finds: both split at str.isspace)
        if word.isalnum() or (word[:-1].isalnum() and not word[-1].isalnum()):  # one token ("word", "word?")
            continue
        parts = tuple(map(str.lower, _TOKEN.findall(word)))
        if 1 < len(parts) <= MAX_SPLIT_PARTS:
            out.append(parts)
    return out[:MAX_PHRASES]


def joined(words: list[str]) -> list[str]:
    """A word that starts names (JOIN_HEADS: `use`, `get`, `set`, `has`, `for`...) and the one
    or two words after it, written as one word (`use effect` -> useeffect, `use layout
    effect` -> uselayouteffect, `set query data` -> setquerydata): the tokenizer keeps a
    camelCase name as one token, which the words apart never match (and `use`, a stopword,
    is not searched at all). The words after it are not stopwords, of letters and at least JOINED_LETTERS
    ("Claude's" is no `claudes`), and not a word of the question already. Runs of content
    words alone are not joined: `exit code`, `test class`, `react query` then also matched
    `exitcode`, `testclass` and `reactquery`, names in examples rather than what was asked
    (page MRR down up to 0.036 on a set, bench/retrieval.py); nor runs after `the`, `what`...
    (`thetokens`: nearly eight a question, each a look-up in every package, for nothing)."""
    out: list[str] = []
    have = set(words)
    for i, head in enumerate(words):
        if head not in JOIN_HEADS:
            continue
        for n in JOINED_WORDS:
            run = words[i + 1:i + n]
            if len(run) < n - 1 or not all(w.isalpha() and len(w) >= JOINED_LETTERS and w not in STOPWORDS for w in run):
                break
            word = head + "".join(run)
            if word not in have and len(word) <= MAX_TERM_CHARS:
                out.append(word)
    return list(dict.fromkeys(out))[:MAX_JOINED]


def check_text(text: str, what: str) -> None:
    """Refuse text that is not valid Unicode (a lone surrogate from a JSON `\\ud800` escape):
    it cannot be encoded into any answer, so it gets one clear error instead."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ContextError(f"{what} is not valid text (it contains a lone surrogate)") from None


class Stems:
    """A query's words as index tokens (what titles and headings are matched against): each
    term's, every word's (stopwords too), and the terms' together."""

    __slots__ = ("per_term", "every", "terms")

    def __init__(self, per_term: Mapping[str, frozenset[str]], every: frozenset[str], terms: frozenset[str]) -> None:
        self.per_term, self.every, self.terms = per_term, every, terms


@dataclass(frozen=True, eq=False, repr=False)
class Query:
    """A question: its text and what the search reads of it.

    `terms` are what BM25 ranks by, `phrases` the split identifiers it also looks for,
    `joined` adjacent words it also looks for as one word (`useeffect`), and `words` every
    word (stopwords too: a heading may hold nothing else). `identifier` (the
    whole question is one, `max_tokens`), `asks_definition` ("what is X"), `asks_changes`
    (about versions or changes) and `names_symbol` (a word written as code) are what the
    question asks; they stay the whole question's in `without_library` and `with_words`.
    """

    text: str
    words: tuple[str, ...]
    terms: tuple[str, ...]
    phrases: tuple[tuple[str, ...], ...]
    identifier: str | None
    asks_definition: bool
    joined: tuple[str, ...] = ()
    tokens: frozenset[str] = frozenset()  # every token, lower-cased (for library names)
    whole: str | None = None  # the whole question's text, where this is part of it

    @cached_property
    def asks_changes(self) -> bool:
        """Does the whole question ask about versions or changes? (Read only when a page of
        release notes or of reference is a candidate.)"""
        text = self.whole or self.text
        said = words(text) if self.whole else self.words
        return (any(w in _CHANGE_WORDS or w.startswith(_CHANGE_STEMS) for w in said)
                or _VERSION.search(text) is not None or _CHANGE_PHRASES.search(" ".join(said)) is not None)

    @cached_property
    def names_symbol(self) -> bool:
        """Does the whole question write a word as code: `send_file`, `useEffect`, `z.string`,
        `render()`, or anything in backticks?"""
        return any(map(_as_code, (self.whole or self.text).split()))

    @classmethod
    def parse(cls, text: str) -> Query:
        """The question in `text`, cut at MAX_QUERY_CHARS. Raises EmptyQuery for blank text and
        ContextError for text that is not valid Unicode."""
        if not isinstance(text, str) or not text.strip():
            raise EmptyQuery("the query is empty; ask a question or name an API")
        check_text(text, "the query")
        return cls.of(text[:MAX_QUERY_CHARS])

    @classmethod
    def of(cls, text: str) -> Query:
        """The question in `text` as it is (no checks: `parse` is for what a user typed)."""
        stripped, plain = text.strip(), uncontracted(text)
        tokens = _TOKEN.findall(plain)
        every = _words(tokens)
        return cls(text=text, words=tuple(every), terms=tuple(_terms(every, text)), phrases=tuple(phrases(plain)),
                   joined=tuple(joined(every)), identifier=stripped if _IDENTIFIER.match(stripped) else None,
                   asks_definition=_DEFINITION.search(text) is not None, tokens=frozenset(map(str.lower, tokens)))

    def without_library(self, name: str) -> Query:
        """The question without the words that only name the library searched ("dark mode in
        tailwind" over `tailwindcss`): every page of a library's docs is about it, so its name
        only pulls in the pages that repeat it most (installation and framework guides). A word
        counts as the name when it is the whole name or a prefix of at least half of it and 4
        letters that is not an English word (separators ignored: `tailwind`; not `tail`, nor
        `next` for nextjs or `http` for httpx), or two or three
        tokens in a row are together (`tanstack query` for tanstack-query, `next.js`, `styled
        components`); the question is kept whole when nothing else would be left."""
        if not self.names_library(name):  # the common case, once per package searched
            return self
        forms = self._naming_forms(name)
        raw = _WORD.findall(self.text)
        words = [[t.lower() for t in _TOKEN.findall(w)] for w in raw]
        flat = [t for w in words for t in w]
        named = {k for k, t in enumerate(flat) if t in forms}
        named.update(k + i for k, n in _runs(len(flat)) if "".join(flat[k:k + n]) in forms for i in range(n))
        left, at = [], 0
        for word, tokens in zip(raw, words, strict=True):
            if not tokens or not all(k in named for k in range(at, at + len(tokens))):
                left.append(word)
            at += len(tokens)
        kept = " ".join(left)
        if not terms(kept):
            return self
        return replace(Query.of(kept), identifier=self.identifier, asks_definition=self.asks_definition,
                       whole=self.whole or self.text)

    def with_words(self, extra: list[str]) -> Query:
        """The question with these words searched too (spelling corrections beside the words
        they correct); what it asks stays the whole question's."""
        return replace(Query.of(f"{self.text} {' '.join(extra)}"), identifier=self.identifier,
                       asks_definition=self.asks_definition, whole=self.whole or self.text)

    def names_library(self, name: str) -> bool:
        """Does the question name the library `name` (as `without_library` reads a name)?"""
        return bool(self._naming_forms(name))

    def _naming_forms(self, name: str) -> frozenset[str]:
        """The forms of `name` (`_name_forms`) that the question holds as a word or a run of
        words and that name the library there: the whole name, or a shorter form that is not
        an English word (`date` does not name date-fns, `http` not httpx, `fast` not fastapi;
        `tailwind` names tailwindcss). English words are read only when such a form is found."""
        forms = _name_forms(name)
        found = forms & self.tokens
        head = _name_head(name)  # (most questions lack it, and then no run is made)
        if head and head in self._squashed:
            found |= forms & self._joined_tokens
        if not found:
            return found
        from .english import english_words

        whole = max(forms, key=len)
        return frozenset(f for f in found if f == whole or f not in english_words())

    @cached_property
    def _lower_tokens(self) -> list[str]:
        """The lower-cased question's tokens, in order."""
        return _TOKEN.findall(self.text.lower())

    @cached_property
    def _squashed(self) -> str:
        """The question's tokens, lower-cased, joined into one string."""
        return "".join(self._lower_tokens)

    @cached_property
    def _joined_tokens(self) -> frozenset[str]:
        """Each run of two or three of the question's tokens, joined and lower-cased
        (`tanstackquery`): a name written as several words."""
        flat = self._lower_tokens
        return frozenset("".join(flat[k:k + n]) for k, n in _runs(len(flat)))

    def fts_match(self) -> str | None:
        """The FTS5 MATCH expression: every term, phrase and joined word quoted, OR-ed (None:
        no terms)."""
        if not self.terms:
            return None
        return " OR ".join([*map(_quote, self.terms), *(_quote(" ".join(p)) for p in self.phrases),
                            *map(_quote, self.joined)])

    @cached_property
    def unit_tokens(self) -> Mapping[str, tuple[str, ...]]:
        """Each word's (terms among them) and each phrase's (its words joined by a space) index
        tokens, stemmed once per query: BM25's units (a term the index splits into several
        tokens is a phrase), and what titles and headings are matched against (`stems`)."""
        from ..package.bm25 import stemmer

        return MappingProxyType(stemmer().tokens((*self.words, *(" ".join(p) for p in self.phrases), *self.joined)))

    @cached_property
    def stems(self) -> Stems:
        """The query's words as index tokens."""
        tokens = self.unit_tokens
        per_term = {t: frozenset(tokens[t]) for t in self.terms}
        return Stems(per_term=MappingProxyType(per_term), every=frozenset(chain.from_iterable(map(tokens.__getitem__, self.words))),
                     terms=frozenset(chain.from_iterable(per_term.values())))


def _runs(tokens: int) -> list[tuple[int, int]]:
    """(first, count) of each run of two or three of so many tokens."""
    return [(k, n) for n in (2, 3) for k in range(tokens - n + 1)]


def _as_code(word: str) -> bool:
    """Is this whitespace-separated word written as code? Backticks, a call's `()`, or a name
    (starting with a letter) with an underscore inside, a hump (`useEffect`) or a dot between
    letters (`z.string`; not "e.g." or "i.e.")."""
    if "`" in word or "()" in word:
        return True
    name = word.strip(_EDGE)
    if not name[:1].isalpha():
        return False
    if "_" in name.rstrip("_"):
        return True
    if name[0].islower() and not name.islower() and any(c.isupper() for c in name):
        return True
    head, dot, tail = name.partition(".")
    return bool(dot) and tail[:1].isalpha() and name.lower() not in ("e.g", "i.e")


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


@lru_cache(maxsize=1024)  # a package's name, asked of every question
def _name_forms(name: str) -> frozenset[str]:
    """The words that name a library: its name as one word (separators ignored), and each
    prefix of that of at least half of it and 4 letters."""
    whole = "".join(_TOKEN.findall(name.lower()))
    if not whole:
        return frozenset()
    least = max(4, (len(whole) + 1) // 2)
    return frozenset((whole, *(whole[:k] for k in range(least, len(whole)))))


@lru_cache(maxsize=1024)
def _name_head(name: str) -> str:
    """The shortest word that names a library, which every other starts with ("" for none)."""
    return min(_name_forms(name), key=len, default="")
