"""Hostile sources for the body-cutting scanner (apiref/outline.py): whatever it cuts, the API
read is the one the whole source gives, every line number stays, and what it cannot be sure
of it leaves to the whole parse, in time linear in the source."""

from __future__ import annotations

import ast
import sys
import time

import pytest

from context_cli.apiref.outline import outline
from context_cli.apiref.pymodule import ModuleInfo, read_module
from context_cli.apiref.python import _parse

FAKE_DEDENT = '''\
def f():
    """Doc."""
    x = """
def fake():
    pass
class Fake:
"""
    return x
def g():
    \'\'\'G.\'\'\'
    y = 1
    z = \'\'\'
  ) ] } # not code
\'\'\'
    return y
'''

CONTINUATIONS = '''\
def f(a,
      b) \\
        -> int:
    """Doc."""
    y = 1 + \\
2
    s = "a\\
b"
    return y
def g(x): return x
def h():
    \\
"""A docstring after a continuation."""
    return 1
'''

NESTED = '''\
def outer():
    """Outer."""
    @wraps(outer)
    @other
    def inner():
        def deepest():
            return 1
        return deepest
    return inner

class A:
    @staticmethod
    def s(): return 1
    @classmethod
    def c(cls):
        """C."""
        try: x = 1
        except E: x = 2
        return x
    def m(self):
        if self:
            return 1
        elif other:
            warnings.warn("m is old", DeprecationWarning)
        else:
            return 3
        return 4
'''

WARNS_LATE = '''\
def f():
    """Doc."""
    a = 1
    b = 2
    warnings.warn("f is old", DeprecationWarning)
    return a + b
class K:
    def __init__(self, x):
        self.x = x
        warnings.warn("K is old", category=DeprecationWarning)
        self.y = 2
'''

TABS = "def f():\n\t'''Doc.'''\n\tif x:\n\t\treturn 1\n\treturn 2\nclass A:\n\tdef m(self):\n\t\treturn 1\n\t\treturn 2\n"
MIXED_TABS = "class A:\n\tdef f(self):\n        return 1\n"  # a tab, then eight spaces: Python refuses it
FORM_FEED = "def f():\n    x = 1\n\f\n    return x\n"
DECORATED_SECOND = "def f():\n    x = 1\n    @dec\n    def g():\n        pass\n    return g\n"
DEEP_BRACKETS = "def f():\n    x = 1\n    y = " + "[(" * 8 + ")]" * 8 + "\n    return y\n"  # as deep as it follows
DEEPER_BRACKETS = "def f():\n    x = 1\n    y = " + "[" * 40 + "]" * 40 + "\n    return y\n"
UNCLOSED = "def f():\n    x = 1\n    y = (\n    return y\n"
NESTED_QUOTES = 'def f(d):\n    """Doc."""\n    x = 1\n    return f"{d["k"]}"\ndef g(): pass\n'
NEWLINE_IN_FIELD = 'def f(d):\n    """Doc."""\n    x = 1\n    return f"{\nd}"\ndef g(): pass\n'


def full(source: bytes) -> ModuleInfo | None:
    try:
        return read_module(ast.parse(source), "m", "m.py", is_package=False)
    except SyntaxError:
        return None


def cut(source: bytes) -> ModuleInfo | None:
    try:
        return read_module(_parse(source, "m.py"), "m", "m.py", is_package=False)
    except SyntaxError:
        return None


@pytest.mark.parametrize("text", [FAKE_DEDENT, CONTINUATIONS, NESTED, WARNS_LATE, TABS, DECORATED_SECOND,
                                  DEEP_BRACKETS, FAKE_DEDENT.replace("\n", "\r\n"), NESTED.replace("\n", "\r\n")],
                         ids=["fake-dedent", "continuations", "nested", "warns-late", "tabs", "decorated-second",
                              "deep-brackets", "crlf", "crlf-nested"])
def test_what_is_cut_reads_as_the_whole(text: str) -> None:
    source = text.encode()
    short = outline(source)
    assert short is not None and short.count(b"\n") == source.count(b"\n")
    assert full(source) is not None and cut(source) == full(source)


def test_the_bodies_are_really_cut() -> None:
    short = (outline(FAKE_DEDENT.encode()) or b"").decode()
    assert "return x" not in short and "return y" not in short and "not code" not in short
    assert "def fake" not in short
    info = cut(FAKE_DEDENT.encode())
    assert info is not None and set(info.defs) == {"f", "g"}
    nested = cut(NESTED.encode())
    assert nested is not None and nested.defs["A"].members["c"].doc == "C." and "s" in nested.defs["A"].members
    continued = cut(CONTINUATIONS.encode())
    assert continued is not None and continued.defs["h"].doc == "A docstring after a continuation."
    late = cut(WARNS_LATE.encode())
    assert late is not None and late.defs["f"].deprecated == "f is old" and late.defs["K"].deprecated == "K is old"


@pytest.mark.parametrize("text", [MIXED_TABS, FORM_FEED, UNCLOSED, DEEPER_BRACKETS, "def f():\r    x = 1\r    return x\r",
                                  "def f():\n    x = 1\n    return 'a\0'\n", "def f():\n    x = 1\n    y = 2 \\ 3\n",
                                  "# -*- coding: shift_jis -*-\ndef f():\n    x = 1\n    return x\n",
                                  NEWLINE_IN_FIELD],
                         ids=["mixed-tabs", "form-feed", "unclosed", "deeper-brackets", "lone-cr", "nul", "stray-backslash",
                              "shift-jis", "newline-in-field"])
def test_doubt_leaves_the_whole_parse(text: str) -> None:
    assert outline(text.encode()) is None


def test_fstring_nested_quotes_read_as_this_python_reads_them() -> None:
    """3.12 reads `f"{d["k"]}"` (PEP 701), so the scanner leaves the module whole; 3.11 refuses it,
    and with it in a cut body the module's API is read."""
    source = NESTED_QUOTES.encode()
    info = cut(source)
    assert info is not None and set(info.defs) == {"f", "g"}
    if sys.version_info >= (3, 12):
        assert outline(source) is None and info == full(source)
    else:
        assert full(source) is None


def test_a_syntax_error_in_a_kept_line_still_skips_the_module() -> None:
    assert cut(b"def f(:\n    x = 1\n    return x\n") is None
    assert cut(b"print 'hello'\ndef f():\n    x = 1\n    return x\n") is None


def test_a_syntax_error_inside_a_cut_body_is_not_seen() -> None:
    """Python 2 deep in a body, or tabs it refuses there: the API around it is read."""
    for source in (b"def f():\n    x = 1\n    print x\n", b"def f():\n\tx = 1\n        return 2\n"):
        info = cut(source)
        assert full(source) is None and info is not None and set(info.defs) == {"f"}


@pytest.mark.parametrize("body", [
    b"def f%d():\n    '''Doc.'''\n    x = [i for i in range(10)]\n    return {'a': (x, \"b\")}\n\n",
    b"'''" + b"x" * 1000 + b"\n",  # a triple quote never closed
    b"x = (" * 10 + b"'" * 100 + b"\n",  # brackets never closed, quotes on one line
    b"    " * 50 + b"'\\\n",  # deep indentation, a string continued and never closed
], ids=["functions", "open-triple-quote", "open-brackets", "open-string"])
def test_fifty_megabytes_in_bounded_time(body: bytes) -> None:
    source = b"".join(body % i if b"%d" in body else body for i in range(50 * 1024 * 1024 // len(body)))
    start = time.monotonic()
    outline(source)
    assert time.monotonic() - start < 30
