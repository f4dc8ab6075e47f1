"""Python roles with a short module prefix shown as zzzeeksphinx renders them.

SQLAlchemy, Alembic, Mako and dogpile write `:class:`_orm.Session`` and `:meth:`_orm.Session.execute``;
their conf.py maps each prefix to a module (`zzzeeksphinx_module_prefixes = {"_orm":
"sqlalchemy.orm", ...}`) and the zzzeeksphinx extension shows the role as `Session` and
`Session.execute()`. Our parsers read no conf.py and would show `_orm.Session`, a name the reader
never sees. The builder reads the prefixes from the tree's conf.py (`ModulePrefixes.of`: a literal
dict, read with `ast`, never executed) and writes each prefixed role as its titled form,
`:class:`Session <_orm.Session>``, which every parser shows as its title (`titled`).

zzzeeksphinx's rule (render_pydomains.py): meth, attr and paramref show the last two dotted parts
(a paramref the last three when the third from last is capitalised, a method's parameter), func,
obj, data, mod and class the last one; meth and func add "()". A role with a `~` or `!`, an
explicit title, an unmapped prefix or no name after its prefix is left as it is; a leading `.`
(`:class:`._orm.Session``, Sphinx's "search from here") is not, as Sphinx drops it before
zzzeeksphinx reads the target.
"""

from __future__ import annotations

import re

from .ref_titles import sub_within_growth
from .sphinx_conf import SphinxConf

# `:meth:`_orm.Session.execute`` (reST, `py:` domain optional) and {meth}`...` (MyST).
_ROLE = re.compile(rb"(:(?:py:)?(meth|attr|paramref|func|obj|data|mod|class):|\{(?:py:)?(meth|attr|paramref|func|obj"
                   rb"|data|mod|class)\})`\.?([A-Za-z_]\w*)\.([\w.]*\w)(\(\))?`")
_MODULE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_SETTING = "zzzeeksphinx_module_prefixes"
_MAX_NAME = 200  # a prefix or module name longer than this is not one


class ModulePrefixes:
    """The tree's module prefixes (`_orm`) and the modules they stand for (`sqlalchemy.orm`)."""

    def __init__(self, prefixes: dict[str, str]) -> None:
        self.prefixes = prefixes

    @classmethod
    def of(cls, conf: SphinxConf) -> ModulePrefixes:
        """The prefixes conf.py sets: a literal dict of names to modules, else none."""
        value = conf.setting(_SETTING)
        if not isinstance(value, dict):
            return cls({})
        return cls({k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)
                    and len(k) <= _MAX_NAME and len(v) <= _MAX_NAME and k.isidentifier() and _MODULE.fullmatch(v)})

    def titled(self, rel: str, data: bytes) -> bytes:
        """`data`, page `rel`, with each role whose target starts with a known prefix written with the title
        zzzeeksphinx shows."""
        if not self.prefixes:
            return data

        def title(m: re.Match[bytes]) -> bytes | None:
            module, role = self.prefixes.get(m.group(4).decode()), (m.group(2) or m.group(3)).decode()
            if module is None or (m.group(6) and role not in ("meth", "func")):  # Sphinx drops "()" from these
                return None
            shown = _shown(role, [module, *m.group(5).decode().split(".")]).encode()
            return m.group(1) + b"`" + shown + b" <" + m.group(0)[len(m.group(1)) + 1:-1] + b">`"

        return sub_within_growth(_ROLE, title, data, rel)  # (a title may name the module)


def _shown(role: str, tokens: list[str]) -> str:
    """What zzzeeksphinx shows for a mapped target split at its dots (the module first)."""
    if role in ("meth", "attr", "paramref"):
        need = 3 if role == "paramref" and len(tokens) >= 3 and tokens[-3][:1].isupper() else 2
        name = ".".join(tokens[-need:])
    else:
        name = tokens[-1]
    return name + "()" if role in ("meth", "func") else name
