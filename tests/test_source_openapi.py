"""OpenAPI 3 and Swagger 2 specs (YAML and JSON, file and URL) rendered into pages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from web_fixtures import Site, serve

from context_cli.build import BuildOptions, build
from context_cli.chunk.chunker import chunk_document
from context_cli.errors import SourceError
from context_cli.package.reader import open_package
from context_cli.sources.openapi import load_spec, spec_documents
from context_cli.sources.resolve import SourceOptions, fetch_source

OPENAPI3 = {
    "openapi": "3.0.3",
    "info": {"title": "Tree Store", "version": "2.4.0", "description": "Manage trees of nodes."},
    "servers": [{"url": "https://api.trees.example/v2"}],
    "tags": [{"name": "nodes", "description": "Node operations"}, {"name": "admin"}],
    "security": [{"bearer": []}],
    "paths": {
        "/nodes/{nodeId}": {
            "parameters": [{"$ref": "#/components/parameters/NodeId"}],
            "get": {
                "tags": ["nodes"], "operationId": "getNode", "summary": "Fetch one node",
                "description": "Returns the node with its children, recursively.",
                "parameters": [{"name": "depth", "in": "query", "schema": {"type": "integer", "format": "int32"},
                                "description": "How deep to expand children"}],
                "responses": {
                    "200": {"description": "The node",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}},
                    "404": {"$ref": "#/components/responses/NotFound"},
                },
            },
            "put": {
                "tags": ["nodes"], "operationId": "replaceNode", "summary": "Replace a node",
                "requestBody": {"$ref": "#/components/requestBodies/NodeBody"},
                "responses": {"204": {"description": "Replaced"}},
            },
        },
        "/admin/reindex": {
            "post": {"tags": ["admin"], "summary": "Rebuild the index", "deprecated": True,
                     "responses": {"202": {"description": "Accepted"}}},
        },
    },
    "components": {
        "parameters": {"NodeId": {"name": "nodeId", "in": "path", "required": True,
                                  "schema": {"type": "string"}, "description": "The node's id"}},
        "requestBodies": {"NodeBody": {"required": True, "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/NodeInput"}}}}},
        "responses": {"NotFound": {"description": "No such node",
                                   "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}},
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        "schemas": {
            "Node": {"type": "object", "required": ["id"], "properties": {
                "id": {"type": "string", "description": "Unique id"},
                "owner": {"$ref": "#/components/schemas/Owner"},
                "parent": {"$ref": "#/components/schemas/Node"},
                "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
            }},
            "NodeInput": {"allOf": [{"$ref": "#/components/schemas/Base"}, {
                "type": "object", "required": ["label"],
                "properties": {"label": {"type": "string", "enum": ["leaf", "branch"]},
                               "owner": {"$ref": "#/components/schemas/Owner"}}}]},
            "Base": {"type": "object", "properties": {"createdAt": {"type": "string", "format": "date-time"}}},
            "Owner": {"type": "object", "properties": {"name": {"type": "string", "description": "Display name"},
                                                       "address": {"$ref": "#/components/schemas/Address"}}},
            "Address": {"type": "object", "properties": {"city": {"type": "string"}}},
            "Error": {"type": "object", "properties": {"message": {"type": "string"}}},
        },
    },
}

SWAGGER2 = {
    "swagger": "2.0",
    "info": {"title": "Pet Shop", "version": "v1.0.5"},
    "host": "pets.example", "basePath": "/api", "schemes": ["https"],
    "consumes": ["application/json"],
    "securityDefinitions": {"api_key": {"type": "apiKey", "in": "header", "name": "X-Key"}},
    "paths": {
        "/pets": {
            "post": {
                "tags": ["pets"], "operationId": "addPet", "summary": "Add a pet",
                "parameters": [{"in": "body", "name": "body", "required": True,
                                "schema": {"$ref": "#/definitions/Pet"}},
                               {"in": "header", "name": "X-Trace", "type": "string"}],
                "responses": {"201": {"description": "Created", "schema": {"$ref": "#/definitions/Pet"}}},
            },
            "get": {
                "tags": ["pets"], "operationId": "listPets", "summary": "List pets",
                "parameters": [{"$ref": "#/parameters/Limit"}],
                "responses": {"200": {"description": "Pets", "schema": {"type": "array",
                                                                        "items": {"$ref": "#/definitions/Pet"}}}},
            },
        },
    },
    "parameters": {"Limit": {"name": "limit", "in": "query", "type": "integer", "description": "Max items"}},
    "definitions": {
        "Pet": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"},
            "friends": {"type": "array", "items": {"$ref": "#/definitions/Pet"}},
            "category": {"$ref": "#/definitions/Category"},
        }},
        "Category": {"type": "object", "properties": {"id": {"type": "integer", "format": "int64"},
                                                      "parent": {"$ref": "#/definitions/Category"}}},
    },
}


def by_path(docs) -> dict:
    return {d.path: d for d in docs}


def text_of(doc) -> str:
    return "\n".join(b.text for b in doc.blocks)


def test_openapi3_pages_and_refs() -> None:
    docs = by_path(spec_documents(OPENAPI3))
    assert set(docs) >= {"overview", "operations/nodes/getNode", "operations/nodes/replaceNode",
                         "schemas/Node", "schemas/NodeInput"}
    get = docs["operations/nodes/getNode"]
    assert get.title == "GET /nodes/{nodeId}: Fetch one node"
    body = text_of(get)
    assert "`nodeId` (path, string, required): The node's id" in body  # path-level $ref parameter
    assert "`depth` (query, integer(int32))" in body
    assert "`200`: The node — Node (" in body and "`404`: No such node — Error" in body
    assert "**Security**: bearer" in body
    assert get.embed_hint.startswith("GET /nodes/{nodeId}. Fetch one node")
    assert len(get.blocks) == 1 and get.blocks[0].level == 2

    put = text_of(docs["operations/nodes/replaceNode"])
    assert "(application/json, NodeInput, required)" in put
    assert "`createdAt` (string(date-time))" in put  # from allOf
    assert "`label` (string: leaf, branch, required)" in put
    assert "`owner.address.city` (string)" in put  # nested refs flattened

    node = text_of(docs["schemas/Node"])
    assert "`parent` ((recursive: Node))" in node
    assert "`children` (array of (recursive: Node))" in node
    assert "`owner.name` (string): Display name" in node

    admin = [d for p, d in docs.items() if p.startswith("operations/admin/")]
    assert admin and "deprecated" in text_of(admin[0])
    overview = text_of(docs["overview"])
    assert "https://api.trees.example/v2" in overview and "bearer" in overview


def test_each_operation_and_schema_is_one_chunk_embedding_its_hint() -> None:
    for doc in spec_documents(OPENAPI3) + spec_documents(SWAGGER2):
        if doc.path != "overview":
            chunks = chunk_document(doc)
            assert len(chunks) == 1, doc.path
            assert chunks[0].embed_text == doc.embed_hint


def test_swagger2_json() -> None:
    docs = by_path(spec_documents(SWAGGER2))
    add = text_of(docs["operations/pets/addPet"])
    assert "**Request body** (application/json, Pet, required)" in add
    assert "`friends` (array of (recursive: Pet))" in add
    assert "`category.parent` ((recursive: Category))" in add
    assert "`X-Trace` (header, string)" in add
    assert "`201`: Created — Pet" in add
    listing = text_of(docs["operations/pets/listPets"])
    assert "`limit` (query, integer): Max items" in listing
    assert "array of Pet" in listing
    assert "https://pets.example/api" in text_of(docs["overview"])


def test_local_yaml_file_builds_a_package(tmp_path: Path) -> None:
    spec_file = tmp_path / "trees.yaml"
    spec_file.write_text(yaml.safe_dump(OPENAPI3))
    fetched = fetch_source(str(spec_file))
    assert fetched.source_type == "openapi"
    assert (fetched.name, fetched.version) == ("tree-store", "2.4.0")
    assert fetched.source_url == "trees.yaml"
    result = build(fetched, tmp_path / "t.db", BuildOptions(embed=False))
    with open_package(result.path) as pkg:
        rows = pkg.db.execute("SELECT doc_path, doc_title FROM chunks").fetchall()
        assert pkg.meta["source_type"] == "openapi"
    assert ("operations/nodes/getNode", "GET /nodes/{nodeId}: Fetch one node") in rows


def test_local_json_swagger_file(tmp_path: Path) -> None:
    spec_file = tmp_path / "swagger.json"
    spec_file.write_text(json.dumps(SWAGGER2))
    fetched = fetch_source(str(spec_file))
    assert (fetched.name, fetched.version) == ("pet-shop", "1.0.5")


def test_spec_by_url_and_by_content() -> None:
    site = Site()
    site.add("/openapi.json", json.dumps(OPENAPI3), content_type="application/json")
    site.add("/v2/spec", yaml.safe_dump(SWAGGER2), content_type="application/yaml")
    site.add("/data.json", json.dumps({"not": "a spec"}), content_type="application/json")
    with serve(site) as base:
        a = fetch_source(base + "/openapi.json", SourceOptions(timeout=2))
        b = fetch_source(base + "/v2/spec", SourceOptions(timeout=2))
        with pytest.raises(SourceError) as e:
            fetch_source(base + "/data.json", SourceOptions(timeout=2))
    assert a.source_type == "openapi" and a.source_url == base + "/openapi.json"
    assert b.source_type == "openapi" and b.name == "pet-shop"
    assert "not an OpenAPI spec" in str(e.value)


def test_not_a_spec_file(tmp_path: Path) -> None:
    f = tmp_path / "config.yaml"
    f.write_text("name: x\nitems: [1, 2]\n")
    with pytest.raises(SourceError) as e:
        fetch_source(str(f))
    assert "not an OpenAPI" in str(e.value)


def test_self_referencing_yaml_alias_stays_bounded() -> None:
    text = ("openapi: 3.0.0\ninfo: {title: Loop, version: '1'}\npaths: {}\ncomponents:\n  schemas:\n"
            "    A: &a\n      type: object\n      properties:\n        me: *a\n")
    spec = load_spec(text)
    docs = spec_documents(spec)
    assert any(d.path == "schemas/A" for d in docs)
