"""The API of npm packages from their declaration files (tree-sitter), or from `@types/NAME`."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

from apiref_fixtures import FIXTURES, npm, write_tree  # noqa: F401 - a fixture
from click.testing import CliRunner

from context_cli.apiref.jsdoc import render_jsdoc
from context_cli.apiref.types_package import matching_version, types_name
from context_cli.apiref.typescript import entry_points, extract_declarations
from context_cli.surfaces.cli import cli


def unpack(name: str, dest: Path) -> Path:
    with tarfile.open(FIXTURES / name) as tar:
        tar.extractall(dest, filter="data")
    return next(dest.iterdir())


def test_declarations_found_through_exports_with_their_jsdoc(tmp_path: Path) -> None:
    root = unpack("p-limit-5.0.0.tgz", tmp_path)
    assert entry_points(root, "p-limit") == {"p-limit": "index.d.ts"}
    symbols = {s.name: s for s in extract_declarations(root, registry="npm", name="p-limit", version="5.0.0").symbols}
    p_limit = symbols["p-limit.pLimit"]
    assert p_limit.kind == "function" and p_limit.signature == "function pLimit(concurrency: number): LimitFunction"
    assert "- `concurrency`: Concurrency limit." in p_limit.doc and "**Returns:** A `limit` function." in p_limit.doc
    assert symbols["p-limit.LimitFunction.activeCount"].signature == "readonly LimitFunction.activeCount: number"


def test_reexports_namespaces_overloads_and_deprecation(tmp_path: Path) -> None:
    pkg = tmp_path / "package"
    pkg.mkdir()
    (pkg / "package.json").write_text(json.dumps({"name": "lib", "types": "./index.d.ts"}), "utf-8")
    (pkg / "index.d.ts").write_text(
        'import * as z from "./external";\nexport * from "./external";\nexport { z };\n'
        'export { helper as help } from "./more";\n', "utf-8")
    (pkg / "external.d.ts").write_text(
        "/** Make a string schema. */\nexport declare function string(): Str;\n"
        "export declare function string(msg: string): Str;\n"
        "export declare class Str {\n  /** @deprecated use min(1) */\n  nonempty(): Str;\n"
        "  private secret: number;\n  email(message?: string): Str;\n}\n"
        "export declare enum Kind { A, B }\nexport interface Opts { strict?: boolean }\n", "utf-8")
    (pkg / "more.d.ts").write_text('export * from "./index";\nexport declare const helper: () => void;\n', "utf-8")
    symbols = {s.name: s for s in extract_declarations(pkg, registry="npm", name="lib", version="1").symbols}
    assert symbols["lib.string"].signature.count("function string(") == 2 and "lib.z.string" in symbols["lib.string"].aliases
    assert symbols["lib.Str.nonempty"].deprecated == "use min(1)" and "lib.Str.secret" not in symbols
    assert symbols["lib.help"].kind == "variable"  # through a cycle back to index, bounded
    assert {symbols["lib.Kind"].kind, symbols["lib.Opts"].kind} == {"enum", "interface"}
    assert symbols["lib.Kind"].signature == "enum Kind {A, B}"  # its members are its signature


def test_jsdoc_and_types_helpers() -> None:
    doc = render_jsdoc("/**\n * Parse it.\n * @param {string} text - the text\n * @since 2.1\n"
                       " * @example\n * parse('x')\n */")
    assert "- `text`: the text" in doc.markdown and doc.since == "2.1" and "```ts\nparse('x')\n```" in doc.markdown
    assert types_name("@babel/core") == "@types/babel__core" and types_name("ms") == "@types/ms"
    assert matching_version(["0.7.31", "0.7.34", "2.1.0", "2.0.9"], "2.1.3") == "2.1.0"
    assert matching_version(["0.7.34"], "2.1.3") is None


def test_add_npm_without_declarations_uses_types_and_says_so(npm) -> None:  # noqa: F811
    result = CliRunner().invoke(cli, ["add", "npm:ms@2.1.3", "--no-embed"])
    assert result.exit_code == 0 and "from @types/ms@2.1.0" in result.output, result.output
    found = json.loads(CliRunner().invoke(cli, ["api", "ms", "--lib", "ms", "--format", "json"]).stdout)
    assert any(s["kind"] == "function" and "ms(" in s["signature"] for s in found["symbols"])
    result = CliRunner().invoke(cli, ["add", "npm:p-limit@5.0.0", "--no-embed"])
    assert result.exit_code == 0 and "API: 6 symbols in 1 module" in result.output
    found = CliRunner().invoke(cli, ["api", "pLimit", "--lib", "p-limit", "--format", "json"])
    assert json.loads(found.stdout)["symbols"][0]["signature"] == "function pLimit(concurrency: number): LimitFunction"


def test_scoped_package_without_declarations_uses_its_types_package(npm) -> None:  # noqa: F811
    result = CliRunner().invoke(cli, ["add", "npm:@babel/code-frame@7.24.7", "--no-embed"])
    assert result.exit_code == 0 and "from @types/babel__code-frame@7.27.0" in result.output, result.output
    found = json.loads(CliRunner().invoke(cli, ["api", "codeFrameColumns", "--format", "json"]).stdout)
    entry = found["symbols"][0]
    assert entry["name"] == "@babel/code-frame.codeFrameColumns" and entry["kind"] == "function"
    assert entry["signature"].startswith("function codeFrameColumns(rawLines: string, location: SourceLocation")


def test_subpaths_of_a_package_without_exports(tmp_path: Path) -> None:
    """As Node resolves `nx/server` without an `exports` map: the file beside the code; build
    output, private typings and `typesVersions` copies are no subpaths; `nx/dist/...` inside
    nx is this package's own file."""
    root = write_tree(tmp_path / "package", {
        "package.json": json.dumps({"name": "nx", "main": "./dist/index.js", "types": "index.d.ts"}),
        "index.d.ts": "export declare const version: string;\n",
        "server.d.ts": "export { NextResponse } from 'nx/dist/response'\n", "server.js": "",
        "font/google/index.d.ts": "export declare function Inter(): object;\n", "font/google/index.js": "",
        "dist/response.d.ts": "/** A response. */\nexport declare class NextResponse { json(): unknown }\n",
        "dist/response.js": "", "types/global.d.ts": "export {}\n", "ts5.0/server.d.ts": "export {}\n",
        "notes.d.ts": "export declare const stray: 1;\n"})  # no notes.js: not importable
    assert entry_points(root, "nx") == {"nx": "index.d.ts", "nx/server": "server.d.ts",
                                        "nx/font/google": "font/google/index.d.ts"}
    symbols = {s.name: s for s in extract_declarations(root, registry="npm", name="nx", version="1").symbols}
    assert symbols["nx/server.NextResponse"].doc == "A response."
    assert symbols["nx/server.NextResponse.json"].kind == "method" and "nx/font/google.Inter" in symbols


def test_types_package_subpaths_and_export_equals_before_its_namespace(tmp_path: Path) -> None:
    """@types/react's shape: `export = React` above `declare namespace React`, a class merged
    with an interface of its name; an @types package's subpath files have no code beside them."""
    root = write_tree(tmp_path / "react", {
        "package.json": json.dumps({"name": "@types/react", "types": "index.d.ts"}),
        "index.d.ts": "export = React;\nexport as namespace React;\ndeclare namespace React {\n"
                      "  interface Component<P = {}> { refs: object }\n"
                      "  class Component<P> { render(): unknown }\n"
                      "  /** Runs effects. */\n  function useEffect(effect: () => void): void;\n}\n",
        "jsx-runtime.d.ts": "export declare function jsx(type: unknown): unknown;\n"})
    assert entry_points(root, "react") == {"react": "index.d.ts", "react/jsx-runtime": "jsx-runtime.d.ts"}
    symbols = {s.name: s for s in extract_declarations(root, registry="npm", name="react", version="18").symbols}
    assert symbols["react.useEffect"].doc == "Runs effects." and symbols["react.Component"].kind == "class"
    assert {"react.Component.render", "react.Component.refs", "react/jsx-runtime.jsx"} <= set(symbols)


def test_a_jsdoc_since_shows_in_the_entry(tmp_path: Path) -> None:
    from context_cli.apiref.pages import entry_text

    root = write_tree(tmp_path / "package", {
        "package.json": json.dumps({"name": "lib", "types": "index.d.ts"}),
        "index.d.ts": "/**\n * Parse it.\n * @since 2.1\n * @example\n * parse('x')\n */\n"
                      "export declare function parse(text: string): object;\n"})
    [parse] = [s for s in extract_declarations(root, registry="npm", name="lib", version="3").symbols
               if s.name == "lib.parse"]
    text = entry_text(parse)
    assert parse.since == "2.1" and "*Added in version 2.1.*" in text and "```ts\nparse('x')\n```" in text
    assert text.startswith("```ts\nfunction parse(text: string): object\n```")


def test_a_js_specifier_reads_the_declarations_beside_the_code(tmp_path: Path) -> None:
    """zod 4 writes `export * from "./v4/classic/external.js"` in `index.d.cts`, with the
    `.js` file beside its `.d.ts`: the declarations are read, never the code (zod 4.6.7 gave
    10 entries, its entry points alone, before)."""
    root = write_tree(tmp_path / "package", {
        "package.json": json.dumps({"name": "lib", "exports": {".": {"types": "./index.d.cts", "require": "./index.cjs"}}}),
        "index.d.cts": 'import * as z from "./v4/external.js";\nexport * from "./v4/external.js";\nexport { z };\n'
                       'export * from "./more.cjs";\nexport * from "./bare";\n',
        "index.cjs": "module.exports = require('./v4/external.js');\n",
        "v4/external.js": "export function string() { return 1; }\n",
        "v4/external.d.ts": "/** A string schema. */\nexport declare function string(): Schema;\n"
                            "export interface Schema { parse(x: unknown): string }\n",
        "more.cjs": "exports.more = 1;\n", "more.d.cts": "export declare const more: number;\n",
        "bare.d.ts": "export declare function bare(): void;\n"})
    symbols = {s.name: s for s in extract_declarations(root, registry="npm", name="lib", version="1.0.0").symbols}
    assert symbols["lib.string"].signature == "function string(): Schema" and "A string schema." in symbols["lib.string"].doc
    assert "lib.z.string" in symbols["lib.string"].aliases
    assert {"lib.Schema.parse", "lib.more", "lib.bare"} <= set(symbols)


def test_a_types_package_that_augments_its_index_from_referenced_files(tmp_path: Path) -> None:
    """@types/lodash's shape: `index.d.ts` references `common/*.d.ts`, which add the methods to
    its `LoDashStatic` with `declare module "../index"`, and exports `const _: LoDashStatic`:
    `_.debounce` is `lodash.debounce`, with its JSDoc and overloads."""
    root = write_tree(tmp_path / "lodash", {
        "package.json": json.dumps({"name": "@types/lodash", "types": "index.d.ts"}),
        "index.d.ts": '/// <reference path="./common/function.d.ts" />\n/// <reference types="node" />\n'
                      '/// <reference path="../outside.d.ts" />\n'
                      "export = _;\nexport as namespace _;\ndeclare const _: _.LoDashStatic;\n"
                      "declare namespace _ {\n    interface LoDashStatic {}\n    interface Settings { wait: number }\n}\n",
        "common/function.d.ts": 'import _ = require("../index");\ndeclare module "../index" {\n'
                                "    interface LoDashStatic {\n        /** Delays `func`. */\n"
                                "        debounce(func: () => void): () => void;\n"
                                "        debounce(func: () => void, wait: number): () => void;\n    }\n}\n"
                                'declare module "elsewhere" {\n    export function ignored(): void;\n}\n'})
    (tmp_path / "outside.d.ts").write_text("export declare function outside(): void;\n", "utf-8")  # not the package's
    symbols = {s.name: s for s in extract_declarations(root, registry="npm", name="lodash", version="4").symbols}
    debounce = symbols["lodash.debounce"]
    assert debounce.kind == "function" and debounce.doc == "Delays `func`."
    assert debounce.signature == ("function debounce(func: () => void): () => void\n"
                                  "function debounce(func: () => void, wait: number): () => void")
    assert "lodash.Settings.wait" in symbols and not any("ignored" in n or "outside" in n for n in symbols)


def test_declare_module_of_the_packages_own_name_is_its_api(tmp_path: Path) -> None:
    """mongoose's shape: `types/index.d.ts` and the files it references each write
    `declare module 'mongoose' {...}`; what those blocks declare is the module's API."""
    root = write_tree(tmp_path / "package", {
        "package.json": json.dumps({"name": "mongoose", "types": "./types/index.d.ts"}),
        "types/index.d.ts": '/// <reference path="./query.d.ts" />\n'
                            "declare module 'mongoose' {\n  import events = require('events');\n"
                            "  /** Opens the default connection. */\n"
                            "  export function connect(uri: string): Promise<void>;\n"
                            "  class Schema { constructor(definition?: object); }\n}\n",
        "types/query.d.ts": "declare module 'mongoose' {\n  class Query {\n    /** Finds documents. */\n"
                            "    find(filter: object): this;\n  }\n}\n"
                            "declare module 'other-package' {\n  function notOurs(): void;\n}\n"})
    symbols = {s.name: s for s in extract_declarations(root, registry="npm", name="mongoose", version="9").symbols}
    assert symbols["mongoose.connect"].doc == "Opens the default connection."
    assert symbols["mongoose.Schema"].kind == "class" and symbols["mongoose.Query.find"].doc == "Finds documents."
    assert not any("notOurs" in n for n in symbols)


def test_newest_allowed_reads_the_ranges_packages_pin() -> None:
    from context_cli.apiref.npm_dependencies import newest_allowed

    versions = ["0.2.1", "0.2.9", "0.3.0", "1.0.0", "1.2.3", "1.2.9", "1.4.0", "2.0.0", "2.1.0-beta.1"]
    assert newest_allowed(versions, "1.2.3") == "1.2.3"
    assert newest_allowed(versions, "^1.2.3") == "1.4.0" and newest_allowed(versions, "~1.2.3") == "1.2.9"
    assert newest_allowed(versions, "^0.2.1") == "0.2.9"  # a 0.x caret stays on its minor
    assert newest_allowed(versions, "*", latest="2.0.0") == "2.0.0" and newest_allowed(versions, "^3.0.0") is None
    assert newest_allowed(versions, ">=1.0.0 <2") is None and newest_allowed(versions, "workspace:*") is None


def test_what_a_package_re_exports_from_its_dependencies_is_read_from_them(npm, tmp_path: Path) -> None:  # noqa: F811
    """vue's shape: `export * from '@vue/runtime-dom'`, which re-exports `@vue/runtime-core`:
    each got from the registry at the version its re-exporter depends on. Imports fetch
    nothing, nor do peer dependencies."""
    from apiref_fixtures import npm_tarball, serve_npm

    from context_cli.apiref.extract import extract_release

    serve_npm(npm, "@lib/dom", "3.5.1", npm_tarball({
        "package.json": json.dumps({"name": "@lib/dom", "types": "dom.d.ts", "dependencies": {"@lib/core": "~3.5.0"}}),
        "dom.d.ts": 'export * from "@lib/core";\n/** Mounts an app. */\nexport declare function mount(): void;\n'}))
    for version in ("3.5.0", "3.5.2", "3.6.0"):  # ~3.5.0 allows 3.5.2, the newest of its minor
        serve_npm(npm, "@lib/core", version, npm_tarball({
            "package.json": json.dumps({"name": "@lib/core", "version": version, "types": "core.d.ts"}),
            "core.d.ts": f"/** Makes a ref ({version}). */\nexport declare function ref<T>(value: T): T;\n"}))
    root = write_tree(tmp_path / "package", {
        "package.json": json.dumps({"name": "lib", "types": "index.d.ts", "dependencies": {"@lib/dom": "3.5.1"},
                                    "peerDependencies": {"peer-lib": "^1.0.0"}}),
        "index.d.ts": 'import { Thing } from "never-fetched";\nexport * from "@lib/dom";\nexport * from "peer-lib";\n'
                      'export declare function own(t: Thing): void;\n'})
    ref = extract_release(root, source_type="npm", registry="npm", name="lib", version="3.5.1")
    assert ref is not None
    symbols = {s.name: s for s in ref.symbols}
    assert symbols["lib.ref"].doc == "Makes a ref (3.5.2)." and symbols["lib.mount"].doc == "Mounts an app."
    assert symbols["lib.ref"].source == "node_modules/@lib/core/core.d.ts" and "lib.own" in symbols
    assert "API: read @lib/core@3.5.2 for what it re-exports" in ref.notes
    assert not any("peer-lib" in n or "never-fetched" in n for n in ref.notes)
