"""What Sphinx's directive and role names mean for text, for the rst and MyST readers.

Which directives hold code, which describe an API object (a signature line), which add a
version note, which are navigation to drop; how a role shows (`:func:` as code `foo()`,
`:ref:` as plain text). Free of docutils so Markdown (MyST) pages never import it.
"""

from __future__ import annotations

import re

# Directives, by what they become.
CODE = {
    "code", "code-block", "sourcecode", "ipython", "testcode", "testsetup", "testcleanup",
    "testoutput", "doctest", "jupyter-execute", "code-cell", "prompt", "productionlist",
    "mermaid", "graphviz", "digraph", "graph", "uml", "plantuml", "literal",
}
CODE_LANG = {"doctest": "pycon", "testcode": "python", "testsetup": "python", "testcleanup": "python",
             "ipython": "ipython", "jupyter-execute": "python", "mermaid": "mermaid",
             "graphviz": "dot", "digraph": "dot", "graph": "dot", "prompt": "console"}
DROP = {
    "toctree", "index", "tabularcolumns", "sectionauthor", "codeauthor", "moduleauthor",
    "currentmodule", "default-domain", "program", "auto-toc", "contents-local",
    "spelling:word-list", "only-toc", "include-toc", "changelog_imports", "redirect-from",
}
SIGNATURE = {
    "function", "class", "method", "attribute", "data", "exception", "decorator",
    "decoratormethod", "staticmethod", "classmethod", "property", "type", "module",
    "envvar", "option", "cmdoption", "confval", "describe", "object", "event", "setting",
    "abstractmethod", "coroutinefunction", "coroutinemethod", "macro", "member", "var",
    "struct", "union", "enum", "enumerator", "typedef", "concept", "directive", "role",
}
VERSION = {"versionadded": "Added in version", "versionchanged": "Changed in version",
           "deprecated": "Deprecated since version", "versionremoved": "Removed in version"}
LABELS = {"seealso": "See also", "todo": "Todo"}
# The class a glossary's definition lists carry: "what is X" should find X's own entry,
# so each term becomes a heading of its own rather than one line in a long list.
GLOSSARY = "glossary"
HIDE_ARGUMENT = {"only", "ifconfig", "grid", "tab-set", "glossary", "autosummary", "hlist", "cssclass"}
# docutils knows these for rst; MyST pages need them handled here.
MYST_DROP = DROP | {"contents", "include", "literalinclude", "image", "raw", "meta", "sectnum", "target-notes"}
ADMONITIONS = {"note", "warning", "tip", "hint", "caution", "important", "danger", "attention",
               "error", "admonition", "seealso", "todo"}

# Roles, by how their text shows.
_PLAIN_ROLES = {"ref", "doc", "term", "numref", "keyword", "token", "download", "abbr", "guilabel",
          "menuselection", "dfn", "manpage", "eq", "pep", "rfc", "issue", "pull", "pr", "user",
          "commit", "gh", "cite", "footcite", "sub", "sup", "emphasis", "strong"}
_CODE_ROLES = {"func", "meth", "class", "attr", "data", "exc", "obj", "mod", "const", "member",
         "var", "type", "struct", "union", "enum", "enumerator", "macro", "expr", "texpr",
         "program", "option", "envvar", "file", "samp", "command", "makevar", "mailheader",
         "regexp", "kbd", "confval", "setting", "dir", "role", "any", "py", "js", "c", "cpp",
         "event", "decorator", "property", "code", "literal", "math"}
_CALLABLE = {"func", "meth"}
_TITLED = re.compile(r"^(.*?)\s*<([^<>]*)>$", re.S)


def role_text(name: str, text: str) -> tuple[str, bool]:
    """(text to show, whether it is code) for role `name` applied to `text`."""
    m = _TITLED.match(text)
    title, target = (m.group(1).strip(), m.group(2).strip()) if m and m.group(1).strip() else ("", text.strip())
    base = name.lower().rsplit(":", 1)[-1]
    code = base in _CODE_ROLES or (":" in name and base not in _PLAIN_ROLES)
    if not code:
        return title or target, False
    shown = title or _short_target(target)
    if base in _CALLABLE and not title and not shown.endswith(")"):
        shown += "()"
    return shown, True


def _short_target(target: str) -> str:
    """`~a.b.C` shows `C`; a leading `!` or `.` is lookup syntax, not text."""
    target = target.lstrip("!")
    if target.startswith("~"):
        return target[1:].rsplit(".", 1)[-1]
    return target.lstrip(".") or target


_CODE_LIKE = re.compile(
    r"^\s*(?:@\w|def |class |import |from \S+ import|return\b|>>> |\$ |#|//)|[(){}\[\];=]\s*$|\w\(.*\)"
)
_PYTHON = re.compile(r"^\s*(?:@\w|def |class |import |from \S+ import|>>> )")


def looks_like_code(lines: list[str]) -> tuple[bool, str]:
    """Whether the body of an unknown directive is code (most lines look like it), and a language guess."""
    body = [line for line in lines if line.strip()]
    if not body:
        return False, ""
    hits = sum(1 for line in body if _CODE_LIKE.search(line))
    if hits * 10 < len(body) * 6:
        return False, ""
    return True, "python" if any(_PYTHON.match(line) for line in body) else ""
