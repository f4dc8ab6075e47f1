"""Signatures written as Python writes them (`inspect.signature` style), from `ast` nodes."""

from __future__ import annotations

import ast

MAX_EXPR_CHARS = 200  # a longer default or annotation is shown as `...`


def expr(node: ast.expr | None) -> str:
    """Source text of an expression, clipped; `...` when it is too long or too deep to write."""
    if node is None:
        return ""
    try:
        text = ast.unparse(node)
    except (RecursionError, ValueError):
        return "..."
    return text if len(text) <= MAX_EXPR_CHARS else "..."


def parameters(args: ast.arguments, *, drop_first: bool = False) -> str:
    """`a, /, b: int = 1, *args, c, **kw`: the parameter list, `self`/`cls` dropped if asked."""
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    parts: list[str] = []
    skip = 1 if drop_first and positional else 0
    for i, (arg, default) in enumerate(zip(positional, defaults, strict=True)):
        if i < skip:
            continue
        parts.append(_param(arg, default))
        if args.posonlyargs and i == len(args.posonlyargs) - 1:
            parts.append("/")
    if parts == ["/"]:  # only `self` was positional-only
        parts = []
    if args.vararg is not None:
        parts.append("*" + _param(args.vararg, None))
    elif args.kwonlyargs:
        parts.append("*")
    for arg, kw_default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        parts.append(_param(arg, kw_default))
    if args.kwarg is not None:
        parts.append("**" + _param(args.kwarg, None))
    return ", ".join(parts)


def _param(arg: ast.arg, default: ast.expr | None) -> str:
    text = arg.arg
    if arg.annotation is not None:
        text += f": {expr(arg.annotation)}"
        if default is not None:
            text += f" = {expr(default)}"
    elif default is not None:
        text += f"={expr(default)}"
    return text


def function(name: str, node: ast.FunctionDef | ast.AsyncFunctionDef, *, drop_first: bool = False) -> str:
    """`async def`-less `name(params) -> ret`, with `async ` in front for coroutines."""
    prefix = "async " if isinstance(node, ast.AsyncFunctionDef) else ""
    ret = f" -> {expr(node.returns)}" if node.returns is not None else ""
    return f"{prefix}{name}({parameters(node.args, drop_first=drop_first)}){ret}"


def decorator_name(node: ast.expr) -> str:
    """`functools.cached_property` for `@functools.cached_property` or `@x.cached_property(...)`."""
    if isinstance(node, ast.Call):
        node = node.func
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))
