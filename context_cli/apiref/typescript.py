"""`extract_declarations` for npm: the declaration files a package publishes, read with
tree-sitter's TypeScript grammar (the optional `typescript` extra), never run.

Entry points come from package.json (`types`/`typings`, the `types` conditions of `exports`,
else the `.d.ts` beside `main`, else `index.d.ts`), one module per entry (`zod`,
`next/server`). Each file is summarised once (declarations, what it exports and re-exports),
then every public name is followed to its declaration, as for Python: an entry is recorded
once, named by the module it is reached from, with its other public names as aliases.
Files over the size limit, too many files and cycles are skipped with a note.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ContextError
from ..symbol import Symbol
from .jsdoc import render_jsdoc
from .model import ApiReference

MAX_FILE_BYTES = 10 * 1024 * 1024
MAX_FILES = 3000
MAX_SECONDS = 120.0
MAX_SIGNATURE = 1000
MAX_DEPTH = 8  # namespaces within namespaces
MAX_MANIFEST_BYTES = 1024 * 1024  # a package.json larger than this is no manifest we read
MAX_SUBPATHS = 200  # subpath modules of a package without `exports`
MAX_SUBPATH_DEPTH = 3  # path parts of such a subpath's declaration file (`font/google/index.d.ts`)
INTERNAL_DIRS = frozenset({"dist", "build", "lib", "cjs", "esm", "es", "src", "compiled", "node_modules", "types",
                           "typings"})  # build output and private typings, not import paths
INSTALL_HINT = "reading TypeScript declarations needs the typescript extra: pip install 'context-docs[typescript]'"

_REFERENCE = re.compile(r'///\s*<reference\s+path\s*=\s*["\']([^"\']+)["\']')
_TYPED = re.compile(r":\s*(?:[\w$]+\.)*([\w$]+)\s*;?$")  # a variable's declared type's last name

_DECLARATIONS = {"function_signature": "function", "function_declaration": "function", "class_declaration": "class",
                 "abstract_class_declaration": "class", "interface_declaration": "interface",
                 "type_alias_declaration": "type", "enum_declaration": "enum", "internal_module": "namespace",
                 "module": "namespace"}
_MEMBERS = {"method_signature": "method", "method_definition": "method", "abstract_method_signature": "method",
            "public_field_definition": "property", "property_signature": "property"}


@dataclass
class Decl:
    name: str
    kind: str
    signature: str
    doc: str
    line: int
    members: dict[str, Decl] = field(default_factory=dict)


@dataclass
class FileInfo:
    path: str  # relative to the package root
    decls: dict[str, Decl] = field(default_factory=dict)
    exports: dict[str, tuple[str | None, str]] = field(default_factory=dict)  # name -> (file or None: local, name)
    namespaces: dict[str, str] = field(default_factory=dict)  # exported name -> file (`export * as ns`)
    stars: list[str] = field(default_factory=list)
    imports: dict[str, tuple[str, str]] = field(default_factory=dict)  # local -> (file, name or "*")
    references: list[str] = field(default_factory=list)  # `/// <reference path="..." />` files
    augments: dict[str, list[tuple[Decl, bool]]] = field(default_factory=dict)  # file -> (decl, exported)


def extract_declarations(root: Path, *, registry: str, name: str, version: str,
                         max_seconds: float = MAX_SECONDS, origin: str = "",
                         dependencies: Callable[[str, str], Path | None] | None = None) -> ApiReference:
    """Every public declaration of the npm package unpacked at `root` (its `package/` folder);
    what it re-exports from other packages too, when `dependencies` gets them (by name and
    the version range asked for: `npm_dependencies.NpmDependencies`)."""
    ref = ApiReference(registry=registry, name=name, version=version, language="typescript", origin=origin)
    entries = entry_points(Path(root), name)
    if not entries:
        ref.notes.append("API: the package ships no TypeScript declarations")
        return ref
    parser = _parser()
    reader = _Reader(Path(root), parser, ref.notes, time.monotonic() + max_seconds,
                     str(_manifest(Path(root)).get("name") or name), entries, dependencies)
    ref.symbols = reader.symbols()
    return ref


def entry_points(root: Path, name: str) -> dict[str, str]:
    """Module name -> declaration file (relative), from package.json: the subpaths of
    `exports`, else the main types file and, as Node resolves a package without `exports`,
    the declaration files of its public subpaths (`next/server` from `server.d.ts`)."""
    manifest = _manifest(root)
    found: dict[str, str] = {}
    exports = manifest.get("exports")
    if isinstance(exports, (str, list)) or (isinstance(exports, dict) and not any(k.startswith(".") for k in exports)):
        exports = {".": exports}
    if isinstance(exports, dict):
        for subpath, target in exports.items():
            if isinstance(subpath, str) and "*" not in subpath and subpath.startswith("."):
                dts = _types_of(root, target)
                if dts:
                    found[name if subpath == "." else posixpath.join(name, subpath[2:])] = dts
    main = manifest.get("types") or manifest.get("typings")
    if name not in found:
        for candidate in (main, _dts_beside(manifest.get("main")), "index.d.ts"):
            if isinstance(candidate, str) and (root / _clean(candidate)).is_file():
                found[name] = _clean(candidate)
                break
    if exports is None and found:
        types_only = str(manifest.get("name", "")).startswith("@types/")
        for subpath, dts in _subpaths(root, types_only):
            found.setdefault(posixpath.join(name, subpath), dts)
    return found


def _manifest(root: Path) -> dict[str, Any]:
    return read_manifest(root / "package.json")


def _dependencies_of(root: Path) -> dict[str, str]:
    """Package -> version range, of the packages `root`'s package.json depends on (not its peer
    or optional ones: the user picks those, and a re-export of one is theirs to look up)."""
    found = _manifest(root).get("dependencies")
    return {k: v for k, v in found.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(found, dict) else {}


def _prefix(rel: str) -> str:
    """"node_modules/NAME/" for a path in a fetched package (`@scope/name` too), else ""."""
    if not rel.startswith("node_modules/"):
        return ""
    parts = rel.split("/")
    return "/".join(parts[:3 if parts[1].startswith("@") else 2]) + "/"


def read_manifest(path: Path) -> dict[str, Any]:
    """A package.json as a dict ({} when missing, too big, a link or not an object)."""
    try:
        if path.is_symlink() or path.stat().st_size > MAX_MANIFEST_BYTES:
            return {}
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _subpaths(root: Path, types_only: bool) -> Iterator[tuple[str, str]]:
    """(subpath, declaration file) for each `X.d.ts` or `X/index.d.ts` a package without
    `exports` can be imported by, up to MAX_SUBPATH_DEPTH folders down and outside build
    output: beside the runtime file (`server.js`), or any in an `@types` package."""
    count = 0
    for folder, dirs, files in os.walk(root):
        here = Path(folder).relative_to(root)
        dirs[:] = sorted(d for d in dirs if len(here.parts) + 1 < MAX_SUBPATH_DEPTH and not _internal(d)
                         and not (Path(folder) / d).is_symlink())
        for file in sorted(f for f in files if f.endswith(".d.ts")):
            stem = (here / file[:-len(".d.ts")]).as_posix()
            if not (types_only or any((root / f"{stem}{ext}").is_file() for ext in (".js", ".mjs", ".cjs"))):
                continue
            subpath = stem[:-len("/index")] if stem.endswith("/index") else stem
            if subpath != "index":
                yield subpath, f"{stem}.d.ts"
                count += 1
                if count >= MAX_SUBPATHS:
                    return


def _internal(folder: str) -> bool:
    """Build output, private typings, hidden folders and `typesVersions` copies (`ts5.0`)."""
    return folder in INTERNAL_DIRS or folder.startswith(".") or bool(re.match(r"ts\d", folder))


def _clean(path: str) -> str:
    return posixpath.normpath(path.lstrip("./") if path.startswith("./") else path)


def _dts_beside(main: Any) -> str | None:
    if not isinstance(main, str):
        return None
    stem = main[:-3] if main.endswith((".js", ".cjs", ".mjs")) else main
    return stem + (".d.ts" if not main.endswith(".mjs") else ".d.mts")


def _types_of(root: Path, target: Any, depth: int = 0) -> str | None:
    """The declaration file an `exports` target gives: its `types` condition first."""
    if depth > 6:
        return None
    if isinstance(target, str):
        if target.endswith((".d.ts", ".d.mts", ".d.cts")) and (root / _clean(target)).is_file():
            return _clean(target)
        beside = _dts_beside(target)
        return _clean(beside) if beside and (root / _clean(beside)).is_file() else None
    if isinstance(target, list):
        return next((t for t in (_types_of(root, x, depth + 1) for x in target) if t), None)
    if isinstance(target, dict):
        keys = ["types", *[k for k in target if k != "types"]]
        return next((t for t in (_types_of(root, target[k], depth + 1) for k in keys if k in target) if t), None)
    return None


def _parser() -> Any:
    try:
        import tree_sitter_typescript
        from tree_sitter import Language, Parser
    except ImportError:
        raise ContextError(INSTALL_HINT) from None
    return Parser(Language(tree_sitter_typescript.language_typescript()))


class _Reader:
    def __init__(self, root: Path, parser: Any, notes: list[str], deadline: float, own_name: str,
                 entries: dict[str, str], dependencies: Callable[[str, str], Path | None] | None = None) -> None:
        self.root, self.parser, self.notes, self.deadline = root, parser, notes, deadline
        self.own_name = own_name  # `next/dist/...` inside next is a path in this package
        self.entries = entries  # public module -> its declaration file (`declare module "mongoose"` names one)
        self.dependencies = dependencies
        # Where files are: "" this package, "node_modules/NAME/" a package it re-exports (None: not got).
        self.roots: dict[str, Path | None] = {"": root}
        self.wanted: dict[str, dict[str, str]] = {"": _dependencies_of(root)}  # prefix -> package -> range
        self.modules: dict[str, dict[str, str]] = {}  # prefix -> a fetched package's entry points
        self.files: dict[str, FileInfo | None] = {}

    def _place(self, rel: str) -> tuple[Path, Path] | None:
        """(the folder `rel` is in, its path) for a path of this package or a fetched one."""
        prefix = _prefix(rel)
        folder = self.roots.get(prefix)
        return (folder, folder / rel[len(prefix):]) if folder is not None else None

    def _exists(self, rel: str) -> bool:
        place = self._place(rel)
        return place is not None and place[1].is_file()

    def dependency(self, base: str, spec: str) -> str | None:
        """`export * from '@vue/runtime-dom'`: that package's declaration file for `spec`,
        fetched at the version the package of `base` depends on; None when it cannot be."""
        name = "/".join(spec.split("/")[:2 if spec.startswith("@") else 1])
        prefix = f"node_modules/{name}/"
        if prefix not in self.roots:
            wanted = self.wanted.get(_prefix(base), {}).get(name)
            folder = self.dependencies(name, wanted) if self.dependencies and wanted is not None else None
            self.roots[prefix] = folder
            self.wanted[prefix] = _dependencies_of(folder) if folder is not None else {}
            self.modules[prefix] = entry_points(folder, name) if folder is not None else {}
        found = self.modules[prefix].get(spec)
        return prefix + found if found else None

    def file(self, rel: str) -> FileInfo | None:
        if rel in self.files:
            return self.files[rel]
        self.files[rel] = None  # (a cycle meets None: nothing more from there)
        place = self._place(rel)
        if place is None:
            return None
        folder, path = place
        if len(self.files) > MAX_FILES or time.monotonic() > self.deadline:
            self.notes.append(f"API: stopped reading declarations at {rel} (file or time limit)")
            return None
        try:
            if not path.is_file() or path.is_symlink() or not path.resolve().is_relative_to(folder.resolve()):
                return None  # (a linked folder may lead out of the package)
            size = path.stat().st_size
            if size > MAX_FILE_BYTES:
                self.notes.append(f"API: skipped {rel} ({size // 1_000_000} MB; larger than "
                                  f"{MAX_FILE_BYTES // 1_000_000} MB)")
                return None
            data = path.read_bytes()
        except OSError:
            return None
        info = FileInfo(rel)
        tree = self.parser.parse(data)
        _Summary(info, data, self).statements(tree.root_node)
        self.files[rel] = info
        return info

    def resolve_module(self, base: str, spec: str) -> str | None:
        """A relative import's declaration file, or one naming this package itself
        (`next/dist/server/web/types` inside next), as TypeScript finds it."""
        if spec.startswith(self.own_name + "/"):
            target = posixpath.normpath(spec[len(self.own_name) + 1:])
        elif spec.startswith("."):
            target = posixpath.normpath(posixpath.join(posixpath.dirname(base), spec))
        else:
            return None
        stem, ext = posixpath.splitext(target)
        if target.endswith(_DECLARATION):
            candidates: tuple[str, ...] = (target,)
        elif ext in (".js", ".mjs", ".cjs", ".jsx"):  # the code's declarations, never the code itself
            candidates = (f"{stem}.d.ts", f"{stem}.d.mts", f"{stem}.d.cts", f"{stem}.ts", f"{stem}.tsx")
        else:
            candidates = (f"{target}.d.ts", f"{target}.ts", f"{target}.tsx", f"{target}/index.d.ts")
        for candidate in candidates:
            if not candidate.startswith("..") and _prefix(candidate) == _prefix(base) and self._exists(candidate):
                return candidate
        return None

    def exports(self, rel: str, seen: frozenset[str] = frozenset()) -> dict[str, tuple[str, Decl] | str]:
        """Exported name -> (file, declaration), or a file for a namespace re-export."""
        info = self.file(rel)
        if info is None or rel in seen or len(seen) > 32:
            return {}
        out: dict[str, tuple[str, Decl] | str] = {}
        for star in info.stars:
            for k, v in self.exports(star, seen | {rel}).items():
                out.setdefault(k, v)
        for name, target in info.namespaces.items():
            out[name] = target
        for name, (src, orig) in info.exports.items():
            if src is None:
                local = self._local(info, orig, seen | {rel})
                if local is not None:
                    out[name] = local
            else:
                found = self.exports(src, seen | {rel}).get(orig)
                if found is not None:
                    out[name] = found
        return out

    def _local(self, info: FileInfo, name: str, seen: frozenset[str]) -> tuple[str, Decl] | str | None:
        if name in info.decls:
            return info.path, info.decls[name]
        if name in info.imports:
            src, orig = info.imports[name]
            return src if orig == "*" else self.exports(src, seen).get(orig)
        return None

    def symbols(self) -> list[Symbol]:
        found: dict[int, tuple[str, Decl, list[str]]] = {}
        out: list[Symbol] = []

        def visit(module: str, rel: str, depth: int, seen: frozenset[str]) -> None:
            for name, target in self.exports(rel).items():
                public = f"{module}.{name}"
                if isinstance(target, str):
                    if depth < 3 and target not in seen and name != "default":
                        visit(public, target, depth + 1, seen | {target})
                    continue
                src, decl = target
                found.setdefault(id(decl), (src, decl, []))[2].append(public)

        for module, rel in self.entries.items():
            info = self.file(rel)
            if info is not None:
                out.append(Symbol(module, "module", source=rel, line=1))
                visit(module, rel, 0, frozenset({rel}))
        for src, decl, names in found.values():
            names = sorted(dict.fromkeys(names), key=lambda n: (n.count("."), n))
            out.extend(_symbols(decl, names[0], tuple(names[1:]), src, set(found)))
        return out


def _symbols(decl: Decl, name: str, aliases: tuple[str, ...], source: str, listed: set[int]) -> Iterator[Symbol]:
    """The entry of `decl` and its members (but those `listed` as entries of their own)."""
    rendered = render_jsdoc(decl.doc) if decl.doc else None
    yield Symbol(name=name, kind=decl.kind, signature=decl.signature, doc=rendered.markdown if rendered else "",
                 deprecated=rendered.deprecated if rendered else None, since=rendered.since if rendered else None,
                 source=source, line=decl.line, aliases=aliases)
    for member in decl.members.values():
        if id(member) not in listed:
            yield from _symbols(member, f"{name}.{member.name}", tuple(f"{a}.{member.name}" for a in aliases), source,
                                listed)


class _Summary:
    """Walks one file's syntax tree into its FileInfo."""

    def __init__(self, info: FileInfo, data: bytes, reader: _Reader) -> None:
        self.info, self.data, self.reader = info, data, reader
        self.equals = ""  # the name of `export = NAME`

    def text(self, node: Any) -> str:
        return self.data[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def statements(self, root: Any) -> None:
        for node in root.named_children:
            self.statement(node, self.doc_before(node))
        decl = self.info.decls.get(self.equals) if self.equals else None
        self.augmented(decl.members if decl is not None else self.info.decls)
        if decl is None:
            return
        if decl.kind != "namespace":  # the module is callable (or constructible) itself
            self.info.exports[decl.name] = (None, decl.name)
        for member in decl.members.values():  # the namespace's members are the module's exports
            self.info.decls.setdefault(member.name, member)
            self.info.exports[member.name] = (None, member.name)
        owner, members = self.value_type(decl)
        for member in members.values():  # `export = _` of `const _: LoDashStatic`: its members, as functions
            if member.kind == "method":
                member.kind = "function"
                member.signature = "\n".join("function " + line.removeprefix(f"{owner}.")
                                             for line in member.signature.split("\n"))
            self.info.decls.setdefault(member.name, member)
            self.info.exports.setdefault(member.name, (None, member.name))

    def augmented(self, scope: dict[str, Decl]) -> None:
        """Merge into `scope` what this file and the files it references declare into it
        (`declare module "../index" { interface LoDashStatic {...} }`: @types/lodash); what a
        block naming one of the package's modules declares is exported (mongoose's
        `declare module 'mongoose' {...}` in its index and the files it references)."""
        for other in [self.info, *(self.reader.file(ref) for ref in self.info.references)]:
            for decl, exported in other.augments.get(self.info.path, []) if other is not None else []:
                _add(scope, decl)
                if exported:
                    self.info.exports.setdefault(decl.name, (None, decl.name))

    def value_type(self, decl: Decl) -> tuple[str, dict[str, Decl]]:
        """The interface a variable is declared as (`const _: _.LoDashStatic`): its name and members."""
        m = _TYPED.search(decl.signature) if decl.kind == "variable" else None
        found = (decl.members.get(m.group(1)) or self.info.decls.get(m.group(1))) if m else None
        return (found.name, found.members) if found is not None and found.kind == "interface" else ("", {})

    def doc_before(self, node: Any) -> str:
        prev = node.prev_named_sibling
        if prev is not None and prev.type == "comment" and self.text(prev).startswith("/**"):
            return self.text(prev)
        return ""

    def statement(self, node: Any, doc: str, exported: bool = False) -> None:
        kind = node.type
        if kind == "export_statement":
            self.export(node, doc)
        elif kind == "ambient_declaration" or kind == "expression_statement":
            for child in node.named_children:
                self.statement(child, doc, exported)
        elif kind == "import_statement":
            self.import_(node)
        elif kind == "comment":
            ref = _REFERENCE.match(self.text(node))
            target = self.reader.resolve_module(self.info.path, ref.group(1)) if ref else None
            if target is not None:
                self.info.references.append(target)
        elif kind == "module" and self.augments(node, doc):
            return
        else:
            for decl in self.declarations(node, doc, 0):
                _add(self.info.decls, decl)
                if exported:
                    self.info.exports[decl.name] = (None, decl.name)

    def augments(self, node: Any, doc: str) -> bool:
        """`declare module "../index" {...}` naming a file of this package, or `declare module
        "mongoose" {...}` naming one of its public modules: its declarations are that file's,
        once that file references this one or is this one (`augmented`)."""
        name = node.child_by_field_name("name")
        spec = self.text(name).strip("'\"") if name is not None and name.type == "string" else ""
        public = spec in self.reader.entries
        target = self.reader.entries[spec] if public else \
            self.reader.resolve_module(self.info.path, spec) if spec.startswith(".") else None
        if target is None:
            return False
        for decl in self.declarations(node, doc, 0):
            self.info.augments.setdefault(target, []).extend((d, public) for d in decl.members.values())
        return True

    def export(self, node: Any, doc: str) -> None:
        source = node.child_by_field_name("source")
        spec = self.text(source).strip("'\"") if source else ""
        target = self.reader.resolve_module(self.info.path, spec) if spec else None
        if target is None and spec and not spec.startswith((".", "/")):  # from another package
            target = self.reader.dependency(self.info.path, spec)
        declaration = node.child_by_field_name("declaration")
        if declaration is not None:
            self.statement(declaration, doc, exported=True)
            return
        children = [c.type for c in node.children]
        value = node.child_by_field_name("value")
        if "default" in children and value is not None:
            if value.type == "identifier":
                self.info.exports["default"] = (None, self.text(value))
            return
        if "=" in children:  # `export = React`: resolved once the file is read (it may come first)
            ident = next((c for c in node.named_children if c.type == "identifier"), None)
            if ident is not None:
                self.equals = self.text(ident)
            return
        for child in node.named_children:
            if child.type == "export_clause":
                for spec in child.named_children:
                    name = spec.child_by_field_name("name")
                    alias = spec.child_by_field_name("alias")
                    if name is not None:
                        self.info.exports[self.text(alias or name)] = (target, self.text(name))
            elif child.type == "namespace_export" and target:
                ident = next((c for c in child.named_children), None)
                if ident is not None:
                    self.info.namespaces[self.text(ident)] = target
        if target and "*" in children and not any(c.type in ("export_clause", "namespace_export")
                                                 for c in node.named_children):
            self.info.stars.append(target)

    def import_(self, node: Any) -> None:
        source = node.child_by_field_name("source")
        target = self.reader.resolve_module(self.info.path, self.text(source).strip("'\"")) if source else None
        if target is None:
            return
        for clause in (c for c in node.named_children if c.type == "import_clause"):
            for part in clause.named_children:
                if part.type == "namespace_import":
                    ident = next(iter(part.named_children), None)
                    if ident is not None:
                        self.info.imports[self.text(ident)] = (target, "*")
                elif part.type == "named_imports":
                    for spec in part.named_children:
                        name, alias = spec.child_by_field_name("name"), spec.child_by_field_name("alias")
                        if name is not None:
                            self.info.imports[self.text(alias or name)] = (target, self.text(name))

    def declarations(self, node: Any, doc: str, depth: int) -> list[Decl]:
        kind = _DECLARATIONS.get(node.type)
        line = node.start_point[0] + 1
        if node.type in ("lexical_declaration", "variable_declaration"):
            out = []
            keyword = self.text(node).split(None, 1)[0]  # const, let, var
            for d in (c for c in node.named_children if c.type == "variable_declarator"):
                name, value = d.child_by_field_name("name"), d.child_by_field_name("value")
                if name is not None and name.type == "identifier":
                    end = value.start_byte if value is not None else d.end_byte
                    text = self.data[d.start_byte:end].decode("utf-8", "replace").rstrip().rstrip("=")
                    out.append(Decl(self.text(name), "variable", _squash(f"{keyword} {text}"), doc, line))
            return out
        if kind is None:
            return []
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return []
        name = self.text(name_node).strip("'\"")
        body = node.child_by_field_name("body")
        head = self.data[node.start_byte:body.start_byte if body is not None else node.end_byte]
        decl = Decl(name, kind, _squash(head.decode("utf-8", "replace")), doc, line)
        if node.type == "enum_declaration":  # its members, with their values, are its signature
            decl.signature = _squash(self.text(node))
        elif node.type == "type_alias_declaration":
            value = node.child_by_field_name("value")
            if value is not None and value.type == "object_type":
                decl.signature = _squash(self.data[node.start_byte:value.start_byte].decode("utf-8", "replace")) + " {...}"
                self.members(value, decl, depth)
            else:
                decl.signature = _squash(self.text(node))
        elif body is not None and depth < MAX_DEPTH:
            if kind == "namespace":
                for child in body.named_children:
                    inner = child.child_by_field_name("declaration") if child.type == "export_statement" else child
                    if inner is not None and inner.type == "ambient_declaration":
                        inner = next(iter(inner.named_children), None)
                    for member in self.declarations(inner, self.doc_before(child), depth + 1) if inner else ():
                        _add(decl.members, member)
            else:
                self.members(body, decl, depth)
        return [decl]

    def members(self, body: Any, owner: Decl, depth: int) -> None:
        for child in body.named_children:
            kind = _MEMBERS.get(child.type)
            if kind is None:
                if child.type in ("call_signature", "construct_signature"):
                    owner.signature += "\n" + _squash(self.text(child))
                continue
            if any(c.type == "accessibility_modifier" and self.text(c) in ("private", "protected")
                   for c in child.children):
                continue
            name_node = child.child_by_field_name("name")
            if name_node is None or self.text(name_node).startswith("#"):
                continue
            name = self.text(name_node)
            modifiers = self.data[child.start_byte:name_node.start_byte].decode("utf-8", "replace")
            rest = self.data[name_node.start_byte:child.end_byte].decode("utf-8", "replace")
            signature = _squash(f"{modifiers}{owner.name}.{rest}").rstrip(";")
            old = owner.members.get(name)
            if old is not None and old.kind == "method":
                old.signature += "\n" + signature
                continue
            owner.members[name] = Decl(name, kind, signature, self.doc_before(child), child.start_point[0] + 1)


def _add(table: dict[str, Decl], new: Decl) -> None:
    """`new` into `table`. A second declaration of a name is an overload, or declaration
    merging (interfaces, namespaces, a function or class and the namespace or interface of
    its name, where the function or class gives the entry its kind)."""
    old = table.setdefault(new.name, new)
    if old is new:
        return
    if old.kind == new.kind == "function" and new.signature not in old.signature:
        old.signature += "\n" + new.signature
        old.doc = old.doc or new.doc
    elif old.kind in ("namespace", "interface") and new.kind in ("function", "class"):  # the value side
        old.kind, old.signature, old.doc, old.line = new.kind, new.signature, new.doc or old.doc, new.line
        for k, v in new.members.items():
            old.members.setdefault(k, v)
    elif new.kind in ("interface", "namespace"):
        for k, v in new.members.items():
            old.members.setdefault(k, v)


_DECLARATION = (".d.ts", ".d.mts", ".d.cts", ".ts", ".mts", ".cts", ".tsx")


def _squash(text: str) -> str:
    text = " ".join(text.split()).replace("( ", "(").replace(",)", ")").replace(", )", ")").replace(" )", ")")
    text = text.replace("{ ", "{").replace(" }", "}").rstrip(" {;")
    return text if len(text) <= MAX_SIGNATURE else text[:MAX_SIGNATURE] + " ..."
