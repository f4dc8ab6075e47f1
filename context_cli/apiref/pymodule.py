"""One Python module read with `ast`: what it defines, imports and exports (nothing is run).

The summary is small and plain (`ModuleInfo`), so a whole release's modules can be held
while re-exports are resolved across them (python.py), and the parse tree is dropped at once.
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass, field

from . import signature as sig

MAX_NESTING = 4  # blocks (if/try/with) and nested classes looked into
DEPRECATION_WARNINGS = ("DeprecationWarning", "PendingDeprecationWarning", "FutureWarning")
_PROPERTIES = ("property", "cached_property", "abstractproperty")
_OVERLOADS = ("overload",)
ENUM_BASES = frozenset({"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag", "ReprEnum", "Choices", "IntegerChoices",
                        "TextChoices"})  # a class with one of these bases: its plain attributes are its members


@dataclass
class Def:
    """A definition in a module or class; `name` is local (`Signer.sign`)."""

    name: str
    kind: str
    signature: str
    doc: str
    line: int
    deprecated: str | None = None
    members: dict[str, Def] = field(default_factory=dict)
    overloads: int = 0  # signatures joined in `signature` (0: not overloaded)
    plain: bool = False  # a bare `NAME = value` at module level: public only if `__all__` names it


@dataclass
class ModuleInfo:
    """What `extract_api` needs of a module."""

    name: str  # dotted
    source: str  # file relative to the release root
    doc: str = ""
    defs: dict[str, Def] = field(default_factory=dict)
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # local -> (module, attr | None)
    stars: list[str] = field(default_factory=list)  # modules imported with `*`
    all: list[str] | None = None  # `__all__` when it is a literal list of strings
    is_package: bool = False


def read_module(tree: ast.Module, name: str, source: str, *, is_package: bool) -> ModuleInfo:
    """Summarise a parsed module."""
    info = ModuleInfo(name=name, source=source, doc=ast.get_docstring(tree) or "", is_package=is_package)
    _statements(tree.body, info, 0)
    return info


def _statements(body: list[ast.stmt], info: ModuleInfo, depth: int) -> None:
    for i, node in enumerate(body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name == "__getattr__":
                _module_getattr(node, info)
            _add(info.defs, _function(node, node.name, method=False))
        elif isinstance(node, ast.ClassDef):
            _add(info.defs, _class(node, node.name, 0))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            _import(node, info)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            _assign(node, info, _attribute_doc(body[i + 1] if i + 1 < len(body) else None))
        elif depth < MAX_NESTING and isinstance(node, ast.If):
            _statements(node.body, info, depth + 1)
            _statements(node.orelse, info, depth + 1)
        elif depth < MAX_NESTING and isinstance(node, ast.Try):
            for part in (node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody):
                _statements(part, info, depth + 1)
        elif depth < MAX_NESTING and isinstance(node, (ast.With, ast.AsyncWith)):
            _statements(node.body, info, depth + 1)


def _add(defs: dict[str, Def], new: Def) -> None:
    """First definition wins (if/else branches), except that overloads gather and an
    implementation after its overloads only lends them its docstring."""
    old = defs.get(new.name.rsplit(".", 1)[-1])
    key = new.name.rsplit(".", 1)[-1]
    if old is None:
        defs[key] = new
    elif old.overloads and new.overloads:
        old.signature += "\n" + new.signature
        old.overloads += 1
        old.doc = old.doc or new.doc
    elif old.overloads:
        old.doc = old.doc or new.doc
        old.deprecated = old.deprecated or new.deprecated


def _function(node: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str, *, method: bool) -> Def:
    decorators = [sig.decorator_name(d) for d in node.decorator_list]
    last = {d.rsplit(".", 1)[-1] for d in decorators}
    doc = ast.get_docstring(node) or ""
    deprecated = _deprecated_decorator(node.decorator_list)
    if deprecated is None:
        deprecated = _warns(node.body)
    if method and last & set(_PROPERTIES):
        ret = f": {sig.expr(node.returns)}" if node.returns is not None else ""
        return Def(qualname, "property", f"{qualname}{ret}", doc, node.lineno, deprecated)
    static = "staticmethod" in last
    text = sig.function(qualname, node, drop_first=method and not static)
    prefix = "@classmethod " if "classmethod" in last else "@staticmethod " if static else ""
    return Def(qualname, "method" if method else "function", prefix + text, doc, node.lineno, deprecated,
               overloads=1 if last & set(_OVERLOADS) else 0)


def _class(node: ast.ClassDef, qualname: str, depth: int) -> Def:
    bases = [sig.expr(b) for b in node.bases] + [f"{k.arg}={sig.expr(k.value)}" if k.arg else f"**{sig.expr(k.value)}"
                                                 for k in node.keywords]
    out = Def(qualname, "class", "", ast.get_docstring(node) or "", node.lineno,
              _deprecated_decorator(node.decorator_list))
    init: ast.FunctionDef | ast.AsyncFunctionDef | None = None
    enum = any(b.rsplit(".", 1)[-1] in ENUM_BASES for b in bases)
    for i, item in enumerate(node.body):
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if item.name == "__init__":
                init = item
            if _public(item.name):
                _add(out.members, _function(item, f"{qualname}.{item.name}", method=True))
        elif isinstance(item, ast.ClassDef) and depth < MAX_NESTING and _public(item.name):
            _add(out.members, _class(item, f"{qualname}.{item.name}", depth + 1))
        elif isinstance(item, (ast.AnnAssign, ast.Assign)):
            target = item.target if isinstance(item, ast.AnnAssign) else item.targets[0]
            doc = _attribute_doc(node.body[i + 1] if i + 1 < len(node.body) else None)
            # A bare `x = value` is a class setting, not API, unless documented or an enum member.
            if isinstance(target, ast.Name) and _public(target.id) and (
                    isinstance(item, ast.AnnAssign) or (len(item.targets) == 1 and (doc or enum))):
                _add(out.members, _attribute(target.id, item, qualname, doc))
    params = sig.parameters(init.args, drop_first=True) if init is not None else ""
    out.signature = f"class {qualname}({', '.join(bases)})" if bases else f"class {qualname}"
    if init is not None:
        out.signature += f"\n{qualname}({params})"
        if out.deprecated is None:
            out.deprecated = _warns(init.body)
    return out


def _attribute(name: str, node: ast.Assign | ast.AnnAssign, owner: str | None, doc: str = "") -> Def:
    qualname = f"{owner}.{name}" if owner else name
    text = qualname
    if isinstance(node, ast.AnnAssign):
        text += f": {sig.expr(node.annotation)}"
    if node.value is not None:
        text += f" = {sig.expr(node.value)}"
    return Def(qualname, "attribute", text, doc, node.lineno, plain=isinstance(node, ast.Assign))


def _attribute_doc(node: ast.stmt | None) -> str:
    """The string literal after an attribute: its docstring, as Sphinx autodoc reads it."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
        return inspect.cleandoc(node.value.value)
    return ""


def _assign(node: ast.Assign | ast.AnnAssign | ast.AugAssign, info: ModuleInfo, doc: str) -> None:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    for target in targets:
        if not isinstance(target, ast.Name):
            continue
        if target.id == "__all__":
            names = _strings(node.value)
            if isinstance(node, ast.AugAssign) and names is not None:
                info.all = [*(info.all or []), *names]
            elif names is not None:
                info.all = names
        elif not isinstance(node, ast.AugAssign) and target.id not in info.defs:
            info.defs[target.id] = _attribute(target.id, node, None, doc)


def _strings(node: ast.expr | None) -> list[str] | None:
    if isinstance(node, (ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return None


def _import(node: ast.Import | ast.ImportFrom, info: ModuleInfo) -> None:
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                info.imports[alias.asname] = (alias.name, None)
        return
    base = _absolute(node, info)
    for alias in node.names:
        if alias.name == "*":
            info.stars.append(base)
        else:
            info.imports[alias.asname or alias.name] = (base, alias.name)


def _absolute(node: ast.ImportFrom, info: ModuleInfo) -> str:
    if not node.level:
        return node.module or ""
    parts = info.name.split(".")
    package = parts if info.is_package else parts[:-1]
    keep = len(package) - (node.level - 1)
    base = package[:max(keep, 0)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _public(name: str) -> bool:
    return not name.startswith("_")


# ---- deprecation --------------------------------------------------------------------------


def _deprecated_decorator(decorators: list[ast.expr]) -> str | None:
    """`@deprecated("use y")` (typing_extensions, warnings, the deprecation packages)."""
    for d in decorators:
        if sig.decorator_name(d).rsplit(".", 1)[-1] != "deprecated":
            continue
        if isinstance(d, ast.Call):
            for value in [*d.args, *(k.value for k in d.keywords if k.arg in ("reason", "details", "message"))]:
                text = _text(value)
                if text:
                    return text
        return ""
    return None


def _warns(body: list[ast.stmt]) -> str | None:
    """The message of a `warnings.warn(..., DeprecationWarning)` among the first statements."""
    start = 1 if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else 0
    for stmt in body[start:start + 3]:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if isinstance(call, ast.Call) and sig.decorator_name(call.func).rsplit(".", 1)[-1] == "warn":
            category = call.args[1] if len(call.args) > 1 else next(
                (k.value for k in call.keywords if k.arg == "category"), None)
            if category is not None and sig.decorator_name(category).rsplit(".", 1)[-1] in DEPRECATION_WARNINGS:
                return _text(call.args[0]) if call.args else ""
    return None


def _text(node: ast.expr) -> str:
    """A message's text: a string, an f-string with its fields as `{...}`, a concatenation."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "{...}"
                       for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _text(node.left) + _text(node.right)
    return ""


def _module_getattr(node: ast.FunctionDef | ast.AsyncFunctionDef, info: ModuleInfo) -> None:
    """Names a module's `__getattr__` still serves with a DeprecationWarning (`if name == "x":`)."""
    for stmt in ast.walk(node):
        if not (isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Compare)
                and len(stmt.test.comparators) == 1 and isinstance(stmt.test.ops[0], ast.Eq)):
            continue
        value = stmt.test.comparators[0]
        message = _warns(stmt.body)
        if isinstance(value, ast.Constant) and isinstance(value.value, str) and message is not None \
                and value.value not in info.defs:
            info.defs[value.value] = Def(value.value, "attribute", value.value, "", stmt.lineno, message)
