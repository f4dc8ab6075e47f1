"""OpenAPI 3.x and Swagger 2 specs (JSON or YAML, file or URL) as documentation.

A spec is reference data, not prose, so it is rendered into pages an agent can search:

* `overview`: title, description, servers, security schemes, tags;
* `operations/<tag>/<operationId>`: ONE page per operation holding one section (method,
  path, summary, description, parameters, request body fields, responses, security). One
  page per operation keeps every operation one chunk, so `Document.embed_hint` (the
  operation flattened to a sentence-like line) is what the dense model embeds for it;
* `schemas/<Name>`: one page per schema component, its fields flattened (`owner.name`).

Local `$ref`s (`#/components/...`, `#/definitions/...`) are resolved; a reference back into
a schema already being expanded renders as `(recursive: Name)`; nesting is depth-limited and
field lists are capped so hostile or huge specs stay bounded. External refs are named, not
fetched.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..document import Block, Document
from ..errors import SourceError
from ..versions import VERSION_RE
from .base import Fetched

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
MAX_DEPTH = 4  # nesting levels of object fields shown
MAX_FIELDS = 80  # field rows per schema
MAX_SPEC_BYTES = 50 * 1024 * 1024
MAX_HINT_CHARS = 2000
SPEC_SUFFIXES = (".json", ".yaml", ".yml")
SPEC_NAMES = ("openapi.json", "openapi.yaml", "openapi.yml", "swagger.json", "swagger.yaml", "swagger.yml")

Json = dict[str, Any]


def _dict(obj: Json, key: str) -> Json:
    """`obj[key]` when it is an object, else {}: specs from strangers have any shape."""
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


def _list(obj: Json, key: str) -> list[Any]:
    value = obj.get(key)
    return value if isinstance(value, list) else []


def load_spec(text: str) -> Json | None:
    """Parse JSON or YAML; return the mapping if it is an OpenAPI/Swagger spec, else None."""
    stripped = text.lstrip()
    try:
        if stripped.startswith("{"):
            data = json.loads(stripped)
        else:
            import yaml

            data = yaml.safe_load(stripped)
    except Exception:  # noqa: BLE001 - any parse failure just means "not a spec"
        return None
    if isinstance(data, dict) and ("openapi" in data or "swagger" in data) and isinstance(data.get("paths", {}), dict):
        return data
    return None


def sniff_file(path: Path) -> Json | None:
    """A local .json/.yaml/.yml file that holds a spec, else None (cheap check first)."""
    if path.suffix.lower() not in SPEC_SUFFIXES or not path.is_file():
        return None
    try:
        if path.stat().st_size > MAX_SPEC_BYTES:
            return None
        with open(path, "rb") as f:
            head = f.read(4096).decode("utf-8", "replace")
        if not re.search(r"""(^|[{,\s])["']?(openapi|swagger)["']?\s*:""", head):
            return None
        return load_spec(path.read_text("utf-8", "replace"))
    except OSError:
        return None


def fetch_openapi_file(path: Path) -> Fetched:
    spec = sniff_file(path)
    if spec is None:
        raise SourceError(f"{path.name}: not an OpenAPI or Swagger spec")
    return fetched_from_spec(spec, path.name)


def fetch_openapi_url(url: str, client: Any) -> Fetched:
    from .http import safe_url

    resp = client.get(url)
    spec = load_spec(resp.text)
    if spec is None:
        raise SourceError(f"{safe_url(url)}: not an OpenAPI or Swagger spec")
    return fetched_from_spec(spec, safe_url(resp.url))


def fetched_from_spec(spec: Json, source_url: str) -> Fetched:
    info = _dict(spec, "info")
    title = str(info.get("title") or "api")
    name = re.sub(r"[^a-z0-9._-]+", "-", title.lower()).strip("-.") or "api"
    version = str(info.get("version") or "").strip().lstrip("v")
    if not VERSION_RE.match(version or "") or ".." in version:
        version = re.sub(r"[^A-Za-z0-9._+-]+", "-", version).strip("-.")[:64] or "latest"
    docs = spec_documents(spec)
    if not docs:
        raise SourceError(f"{source_url}: the spec has no operations or schemas")
    desc = _one_line(str(info.get("description") or ""))[:200] or None
    n_ops = sum(1 for d in docs if d.path.startswith("operations/"))
    return Fetched(source_type="openapi", source_url=source_url, documents=docs, name=name[:100],
                   version=version, description=desc,
                   notes=[f"OpenAPI spec: {n_ops} operations, {len(docs) - n_ops - 1} schemas"])


def spec_documents(spec: Json) -> list[Document]:
    """Every page of a spec: overview, operations grouped by tag, then schemas."""
    r = _Resolver(spec)
    docs = [_overview(spec)]
    docs.extend(_operations(spec, r))
    docs.extend(_schemas(spec, r))
    return docs


class _Resolver:
    """Local JSON-pointer `$ref`s."""

    def __init__(self, spec: Json):
        self.spec = spec

    def deref(self, obj: Any, depth: int = 0) -> tuple[Any, str | None]:
        """Follow refs (a chain of them too); returns the target and the last ref's name."""
        name = None
        while isinstance(obj, dict) and isinstance(obj.get("$ref"), str) and depth < 20:
            ref = obj["$ref"]
            name = ref.rsplit("/", 1)[-1]
            if not ref.startswith("#/"):
                return {"description": f"(external: {ref})"}, name
            target: Any = self.spec
            for part in ref[2:].split("/"):
                part = part.replace("~1", "/").replace("~0", "~")
                target = target.get(part) if isinstance(target, dict) else None
            if target is None:
                return {"description": f"(unresolved: {ref})"}, name
            obj, depth = target, depth + 1
        return obj, name


# -- schemas ------------------------------------------------------------------------------

def type_label(schema: Any, r: _Resolver, depth: int = 0) -> str:
    """`string(date-time)`, `array of Pet`, `Pet`, `one of Cat | Dog`, `string: a, b`."""
    if depth > 3:
        return "…"
    target, name = r.deref(schema)
    if not isinstance(target, dict):
        return "any"
    if name:
        return name
    for key, word in (("oneOf", "one of"), ("anyOf", "any of")):
        if isinstance(target.get(key), list):
            return f"{word} " + " | ".join(type_label(s, r, depth + 1) for s in target[key][:8])
    if isinstance(target.get("allOf"), list):
        return " & ".join(type_label(s, r, depth + 1) for s in target["allOf"][:8])
    t = target.get("type")
    if isinstance(t, list):
        t = "|".join(str(x) for x in t)
    if t == "array" or "items" in target:
        return f"array of {type_label(target.get('items', {}), r, depth + 1)}"
    label = str(t or ("object" if "properties" in target else "any"))
    if target.get("format"):
        label += f"({target['format']})"
    if isinstance(target.get("enum"), list):
        label += ": " + ", ".join(str(v) for v in target["enum"][:12])
    return label


def schema_fields(schema: Any, r: _Resolver, prefix: str = "", depth: int = 0,
                  stack: tuple[str, ...] = ()) -> Iterator[tuple[str, str, bool, str]]:
    """(field path, type, required, description) rows of an object schema, flattened."""
    target, name = r.deref(schema)
    if name:
        if name in stack:
            yield (prefix.rstrip(".") or "(self)", f"(recursive: {name})", False, "")
            return
        stack = stack + (name,)
    if not isinstance(target, dict) or depth > MAX_DEPTH:
        return
    props, required = _merged_properties(target, r, stack)
    if target.get("type") == "array" or "items" in target:
        yield from schema_fields(target.get("items", {}), r, prefix.rstrip(".") + "[].", depth + 1, stack)
        return
    for key, prop in props.items():
        pt, _ = r.deref(prop)
        is_array = isinstance(pt, dict) and (pt.get("type") == "array" or "items" in pt)
        inner = pt.get("items", {}) if is_array else prop
        it, iname = r.deref(inner)
        path = f"{prefix}{key}"
        req = key in required
        desc = _one_line(str(pt.get("description") or "")) if isinstance(pt, dict) else ""
        if iname and iname in stack:
            yield (path, ("array of " if is_array else "") + f"(recursive: {iname})", req, desc)
            continue
        yield (path, type_label(prop, r), req, desc)
        if depth < MAX_DEPTH and isinstance(it, dict) and (it.get("properties") or it.get("allOf")):
            yield from schema_fields(inner, r, path + ("[]." if is_array else "."), depth + 1, stack)


def _merged_properties(target: Json, r: _Resolver, stack: tuple[str, ...]) -> tuple[dict[str, Any], set[str]]:
    props: dict[str, Any] = {}
    required: set[str] = set()
    for part in target.get("allOf", []) if isinstance(target.get("allOf"), list) else []:
        pt, pname = r.deref(part)
        if isinstance(pt, dict) and not (pname and pname in stack):
            sub_props, sub_req = _merged_properties(pt, r, stack + ((pname,) if pname else ()))
            props.update(sub_props)
            required |= sub_req
    if isinstance(target.get("properties"), dict):
        props.update(target["properties"])
    if isinstance(target.get("required"), list):
        required |= {str(x) for x in target["required"]}
    return props, required


def _field_lines(schema: Any, r: _Resolver) -> list[str]:
    rows = []
    for n, (path, typ, req, desc) in enumerate(schema_fields(schema, r)):
        if n >= MAX_FIELDS:
            rows.append("… more fields not shown")
            break
        rows.append(f"`{path}` ({typ}{', required' if req else ''})" + (f": {desc}" if desc else ""))
    return rows


# -- operations ---------------------------------------------------------------------------

def _operations(spec: Json, r: _Resolver) -> Iterator[Document]:
    paths = _dict(spec, "paths")
    tag_order = [t.get("name") for t in spec.get("tags", []) if isinstance(t, dict)] \
        if isinstance(spec.get("tags"), list) else []
    ops = []
    for path, item in paths.items():
        item, _ = r.deref(item)
        if not isinstance(item, dict):
            continue
        for method in METHODS:
            op = item.get(method)
            if isinstance(op, dict):
                tags = _list(op, "tags") or ["default"]
                ops.append((str(tags[0]), str(path), method, op, item))
    ops.sort(key=lambda o: (tag_order.index(o[0]) if o[0] in tag_order else len(tag_order), o[0]))
    used: set[str] = set()
    for tag, path, method, op, item in ops:
        yield _operation_doc(spec, r, tag, path, method, op, item, used)


def _operation_doc(spec: Json, r: _Resolver, tag: str, path: str, method: str, op: Json,
                   item: Json, used: set[str]) -> Document:
    head = f"{method.upper()} {path}"
    summary = _one_line(str(op.get("summary") or ""))
    title = f"{head}: {summary}" if summary else head
    op_id = str(op.get("operationId") or "")
    doc_path = f"operations/{_slug(tag) or 'default'}/{_slug(op_id or f'{method} {path}') or method}"
    base, n = doc_path, 2
    while doc_path in used:
        doc_path, n = f"{base}-{n}", n + 1
    used.add(doc_path)

    parts = [f"`{head}`" + (f" · tag: {tag}" if tag != "default" else "")
             + (f" · operationId: `{op_id}`" if op_id else "")
             + (" · **deprecated**" if op.get("deprecated") else "")]
    if op.get("description"):
        parts.append(str(op["description"]).strip())
    params, body = _parameters(item, op, r)
    hint = [head, summary, _one_line(str(op.get("description") or ""))]
    if params:
        parts.append("**Parameters**\n\n" + "\n".join(params))
        hint.append("Parameters: " + "; ".join(_plain(p) for p in params))
    body_lines, body_head = _request_body(spec, op, body, r)
    if body_lines or body_head:
        parts.append(f"**Request body**{body_head}\n\n" + "\n".join(body_lines))
        hint.append("Request body: " + "; ".join(_plain(b) for b in body_lines))
    responses = _responses(op, r)
    if responses:
        parts.append("**Responses**\n\n" + "\n".join(responses))
        hint.append("Responses: " + "; ".join(_plain(x) for x in responses))
    security = op.get("security", spec.get("security"))
    if isinstance(security, list) and security:
        names = sorted({k for req in security if isinstance(req, dict) for k in req})
        if names:
            parts.append("**Security**: " + ", ".join(names))
    text = "\n\n".join(p for p in parts if p)
    embed = ". ".join(h.rstrip(". ") for h in hint if h)[:MAX_HINT_CHARS]
    return Document(path=doc_path, title=title, blocks=[Block(2, title, text)],
                    description=summary, embed_hint=embed)


def _parameters(item: Json, op: Json, r: _Resolver) -> tuple[list[str], Any]:
    """Rendered parameter lines (path-level ones merged, operation wins) and a Swagger-2 body."""
    merged: dict[tuple[str, str], Json] = {}
    for source in (item.get("parameters"), op.get("parameters")):
        for raw in source if isinstance(source, list) else []:
            p, _ = r.deref(raw)
            if isinstance(p, dict) and p.get("name"):
                merged[(str(p.get("name")), str(p.get("in")))] = p
    lines, body = [], None
    for (name, where), p in merged.items():
        if where == "body":
            body = p
            continue
        schema = p.get("schema") if "schema" in p else p  # Swagger 2 puts type on the parameter
        typ = type_label(schema, r) if isinstance(schema, dict) else "any"
        req = ", required" if p.get("required") else ""
        desc = _one_line(str(p.get("description") or ""))
        lines.append(f"`{name}` ({where}, {typ}{req})" + (f": {desc}" if desc else ""))
    return lines, body


def _request_body(spec: Json, op: Json, swagger_body: Any, r: _Resolver) -> tuple[list[str], str]:
    if swagger_body is not None:
        consumes = op.get("consumes") or spec.get("consumes") or ["application/json"]
        req = ", required" if swagger_body.get("required") else ""
        schema = swagger_body.get("schema", {})
        return _schema_summary(schema, r), f" ({consumes[0]}, {type_label(schema, r)}{req})"
    body, _ = r.deref(op.get("requestBody"))
    if not isinstance(body, dict):
        return [], ""
    media, schema = _pick_media(body.get("content"))
    req = ", required" if body.get("required") else ""
    desc = _one_line(str(body.get("description") or ""))
    head = f" ({media}, {type_label(schema, r)}{req})" if media else ""
    lines = ([desc] if desc else []) + _schema_summary(schema, r)
    return lines, head


def _schema_summary(schema: Any, r: _Resolver) -> list[str]:
    rows = _field_lines(schema, r)
    return rows or ([type_label(schema, r)] if schema else [])


def _responses(op: Json, r: _Resolver) -> list[str]:
    responses = _dict(op, "responses")
    lines = []
    for status, raw in responses.items():
        resp, _ = r.deref(raw)
        if not isinstance(resp, dict):
            continue
        desc = _one_line(str(resp.get("description") or ""))
        schema = resp.get("schema")  # Swagger 2
        if schema is None:
            _, schema = _pick_media(resp.get("content"))
        line = f"`{status}`" + (f": {desc}" if desc else "")
        if schema:
            fields = [p for p, *_ in schema_fields(schema, r)][:12]
            line += f" — {type_label(schema, r)}" + (f" ({', '.join(fields)})" if fields else "")
        lines.append(line)
    return lines


def _pick_media(content: Any) -> tuple[str, Any]:
    if not isinstance(content, dict) or not content:
        return "", None
    media = next((m for m in content if "json" in m), next(iter(content)))
    entry = content.get(media)
    return str(media), (entry.get("schema") if isinstance(entry, dict) else None)


# -- overview and schemas -----------------------------------------------------------------

def _overview(spec: Json) -> Document:
    info = _dict(spec, "info")
    title = str(info.get("title") or "API")
    blocks = []
    if info.get("description"):
        blocks.append(Block(0, "", str(info["description"]).strip()))
    servers = [s.get("url") for s in spec.get("servers", []) if isinstance(s, dict) and s.get("url")] \
        if isinstance(spec.get("servers"), list) else []
    if spec.get("host"):
        servers.append(f"{(spec.get('schemes') or ['https'])[0]}://{spec['host']}{spec.get('basePath', '')}")
    if servers:
        blocks.append(Block(2, "Servers", "\n".join(f"- {s}" for s in servers)))
    schemes = (spec.get("components") or {}).get("securitySchemes") if isinstance(spec.get("components"), dict) \
        else spec.get("securityDefinitions")
    if isinstance(schemes, dict) and schemes:
        rows = []
        for name, s in schemes.items():
            if isinstance(s, dict):
                kind = " ".join(str(s.get(k)) for k in ("type", "scheme", "in", "name") if s.get(k))
                rows.append(f"`{name}`: {kind}" + (f" — {_one_line(str(s['description']))}" if s.get("description") else ""))
        blocks.append(Block(2, "Authentication", "\n".join(rows)))
    tags = [t for t in spec.get("tags", []) if isinstance(t, dict)] if isinstance(spec.get("tags"), list) else []
    if tags:
        blocks.append(Block(2, "Tags", "\n".join(
            f"**{t.get('name')}**" + (f": {_one_line(str(t['description']))}" if t.get("description") else "")
            for t in tags)))
    version = info.get("version")
    intro = f"{title}" + (f", version {version}" if version else "") + \
        (f" (OpenAPI {spec['openapi']})" if "openapi" in spec else f" (Swagger {spec.get('swagger')})")
    blocks.insert(0, Block(0, "", intro + "."))
    return Document(path="overview", title=title, blocks=blocks, description=_one_line(str(info.get("description") or "")))


def _schemas(spec: Json, r: _Resolver) -> Iterator[Document]:
    comps = _dict(spec, "components")
    schemas = comps.get("schemas") if "openapi" in spec else spec.get("definitions")
    if not isinstance(schemas, dict):
        return
    prefix = "#/components/schemas/" if "openapi" in spec else "#/definitions/"
    used: set[str] = set()
    for name, schema in schemas.items():
        if not isinstance(schema, dict):
            continue
        desc = _one_line(str(schema.get("description") or ""))
        rows = _field_lines({"$ref": prefix + str(name).replace("~", "~0").replace("/", "~1")}, r)
        label = type_label(schema, r)
        text = "\n\n".join(x for x in (f"Type: {label}", desc, "\n".join(rows)) if x)
        title = f"Schema: {name}"
        hint = f"{name} schema. " + (f"{desc.rstrip('.')}. " if desc else "") + "Fields: " + "; ".join(_plain(x) for x in rows)
        path, n = f"schemas/{_slug(str(name)) or 'schema'}", 2
        while path.lower() in used:
            path, n = f"schemas/{_slug(str(name)) or 'schema'}-{n}", n + 1
        used.add(path.lower())
        yield Document(path=path, title=title,
                       blocks=[Block(2, title, text)], description=desc, embed_hint=hint[:MAX_HINT_CHARS])


def _plain(line: str) -> str:
    return line.replace("`", "")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _slug(text: str) -> str:
    return re.sub(r"-{2,}", "-", re.sub(r"[^A-Za-z0-9._-]+", "-", text)).strip("-.")[:100]
