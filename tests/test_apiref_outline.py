"""Function bodies cut before parsing: what the API reads of a module is the same as from the
whole source, every line number stays, and the bodies' bytes are gone."""

from __future__ import annotations

import ast
import textwrap

from context_cli.apiref.outline import outline
from context_cli.apiref.pymodule import read_module

SOURCE = textwrap.dedent('''\
    """A module."""
    import warnings


    def plain(a, b=1, *args, c: int = 2, **kw) -> int:
        """Adds."""
        total = a + b
        for x in args:
            total += x
        return total


    @decorator(
        "x")
    def old(x):
        """Gone soon."""
        setup()
        warnings.warn("use new()", DeprecationWarning)
        return x * 2


    class Thing(Base):
        """A thing."""

        size: int = 3
        """How big."""

        def __init__(self, x):
            if x:
                self.x = x
            else:
                self.x = 0
            self.y = [
        1, 2,
            ]

        @property
        def double(self):
            return self.x * 2

        async def run(self):
            """Runs."""
            @wraps(self)
            def inner():
                return 1
            return inner


    def __getattr__(name):
        if name == "legacy":
            warnings.warn("legacy is gone", DeprecationWarning)
            return 1
        raise AttributeError(name)
    ''')


def summary(source: bytes | str):
    return read_module(ast.parse(source), "m", "m.py", is_package=False)


def test_bodies_are_cut_and_the_api_read_is_the_same() -> None:
    data = SOURCE.encode()
    cut = outline(data)
    assert cut is not None and len(cut) < len(data)
    assert cut.count(b"\n") == data.count(b"\n")  # every line number stays
    assert summary(cut) == summary(data)
    text = cut.decode()
    assert "total += x" not in text and "return total" not in text  # a body's rest is gone
    assert "self.y = [" not in text and "return inner" not in text
    assert 'warnings.warn("use new()", DeprecationWarning)' in text  # a warning among the first statements stays
    assert 'warnings.warn("legacy is gone"' in text and "raise AttributeError" in text  # a module's __getattr__ whole
    assert '"""How big."""' in text  # class bodies are not cut
    assert "return self.x * 2" not in text and "def double(self):\n        ...\n" in text  # no docstring: `...`


def test_a_body_without_a_docstring_becomes_an_ellipsis() -> None:
    source = b"@register\ndef f(x):\n    @wraps(x)\n    def g():\n        return x\n    return g\n\ndef h(s):\n    (\"Doc.\")\n    return s\n"
    cut = outline(source)
    assert cut == b"@register\ndef f(x):\n    ...\n\n\n\n\ndef h(s):\n    (\"Doc.\")\n\n"
    assert summary(cut) == summary(source) and summary(cut).defs["h"].doc == "Doc."


def test_the_summary_keeps_deprecations_and_lines() -> None:
    info = summary(outline(SOURCE.encode()) or b"")
    assert info.defs["old"].deprecated == "use new()" and info.defs["old"].line == 15
    assert info.defs["legacy"].deprecated == "legacy is gone"
    assert info.defs["Thing"].members["run"].line == 41


def test_a_warning_after_three_statements_is_not_read_and_may_go() -> None:
    source = b"def f():\n    a()\n    b()\n    c()\n    d()\n    warnings.warn('x', DeprecationWarning)\n"
    cut = outline(source)
    assert cut is not None and b"warn" not in cut and summary(cut) == summary(source)


def test_nothing_to_cut_gives_the_same_bytes() -> None:
    source = b"x = 1\n\ndef f(): return 1\n\nclass A:\n    def g(self):\n        \"\"\"Doc.\"\"\"\n"
    assert outline(source) is source


def test_what_a_modules_getattr_defines_is_kept_whole() -> None:
    """pymodule walks all of `__getattr__`, so a function (or class) it defines is not cut."""
    source = textwrap.dedent('''\
        import warnings
        def __getattr__(name):
            def inner():
                a = 1
                b = 2
                c = 3
                d = 4
                if name == "old":
                    warnings.warn("old is gone", DeprecationWarning)
                    return 1
            return inner()
        ''').encode()
    assert outline(source) == source
    assert summary(source).defs["old"].deprecated == "old is gone"


def test_a_triple_quoted_fstring_is_in_doubt_for_a_newer_python() -> None:
    """3.12 may read a field of `f\"\"\"...\"\"\"` across lines with the same quotes in it (PEP 701)."""
    from context_cli.apiref.outline import _pep701_doubt

    assert _pep701_doubt(b'A = f"""{"""\ndef g():\n    x\n"""}"""\n')
    assert _pep701_doubt(b"x = Rf'''a'''\n") and _pep701_doubt(b'f"""x"""')
    assert not _pep701_doubt(b'x = """a"""\nself"""\n') and not _pep701_doubt(b'x = f"a"\n')
