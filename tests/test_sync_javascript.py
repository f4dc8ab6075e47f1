"""JavaScript dependency files: each format read from a fixture shaped like a real project's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from context_cli.sync import javascript as js
from context_cli.sync.model import Dep, LockfileError

FIX = Path(__file__).parent / "fixtures" / "lockfiles"


def rows(deps: list[Dep], direct: bool | None = None) -> set[tuple[str, str | None]]:
    return {(d.name, d.version) for d in deps if not d.skip and (direct is None or d.direct == direct)}


def skipped(deps: list[Dep]) -> dict[str, str]:
    return {d.name: d.skip or "" for d in deps if d.skip}


def manifest(folder: str) -> dict:
    return json.loads((FIX / folder / "package.json").read_text())


def test_classify_specs():
    assert js.classify("^1.2.0") == (None, None, "^1.2.0")
    assert js.classify("npm:@scope/real@^2") == (None, "@scope/real", "^2")
    assert js.classify("workspace:*")[0] == "workspace: workspace:*"
    assert js.classify("file:../x")[0] == "path: file:../x"
    assert js.classify("link:../x")[0] == "path: link:../x"
    assert js.classify("github:a/b#v1")[0] == "git: github:a/b#v1"
    assert js.classify("acme/repo")[0] == "git: acme/repo"
    assert js.classify("https://example.com/x.tgz")[0] == "url: https://example.com/x.tgz"
    assert js.split_name("@tanstack/react-query@5.0.0") == ("@tanstack/react-query", "5.0.0")


def test_package_lock_v1_aliases_nested_and_git():
    deps = js.package_lock_deps(FIX / "npm-v1" / "package-lock.json", "package-lock.json",
                                {"": manifest("npm-v1")})
    assert rows(deps, direct=True) == {("express", "4.17.1"), ("lodash-es", "4.17.21"), ("mocha", "8.4.0")}
    assert rows(deps, direct=False) == {("accepts", "1.3.7"), ("debug", "2.6.9"), ("debug", "4.3.1")}
    assert skipped(deps) == {"my-fork": "git: github:acme/my-fork#v2"}


def test_package_lock_v3_workspaces_each_member_at_its_own_version():
    deps = js.package_lock_deps(FIX / "npm-v3" / "package-lock.json", "package-lock.json", {})
    direct = {(d.name, d.version, d.origin) for d in deps if d.direct and not d.skip}
    assert direct == {
        ("typescript", "5.4.5", "package-lock.json"),
        ("@tanstack/react-query", "5.40.0", "package-lock.json (apps/web)"),
        ("react", "18.3.1", "package-lock.json (apps/web)"),
        ("react", "17.0.2", "package-lock.json (apps/admin)"),
        ("react-query", "3.39.3", "package-lock.json (apps/admin)"),  # the alias old-query
        ("react", "18.3.1", "package-lock.json (packages/ui)"),  # a peer dependency
    }
    assert rows(deps, direct=False) == {("@tanstack/query-core", "5.40.0")}
    assert skipped(deps) == {"@acme/ui": "workspace member", "legacy-utils": "path: file:../../vendor/legacy-utils"}


def test_package_lock_unknown_version_refused(tmp_path):
    lock = tmp_path / "package-lock.json"
    lock.write_text('{"lockfileVersion": 4, "packages": {}}')
    with pytest.raises(LockfileError, match=r"lockfileVersion 4 is not supported \(1, 2 and 3 are\)"):
        js.package_lock_deps(lock, "package-lock.json", {})


def test_package_lock_truncated_names_line(tmp_path):
    lock = tmp_path / "package-lock.json"
    lock.write_text("\n".join((FIX / "npm-v3" / "package-lock.json").read_text().splitlines()[:30]))
    with pytest.raises(LockfileError, match=r"^package-lock.json line 30: invalid JSON"):
        js.package_lock_deps(lock, "package-lock.json", {})


def test_pnpm_v6_single_project_alias_peers_git():
    deps = js.pnpm_lock_deps(FIX / "pnpm-v6" / "pnpm-lock.yaml", "pnpm-lock.yaml")
    assert rows(deps, direct=True) == {("@trpc/server", "10.45.2"), ("next", "14.2.3"), ("react", "18.3.1"),
                                        ("string-width", "4.2.3"), ("typescript", "5.4.5")}
    assert rows(deps, direct=False) == {("loose-envify", "1.4.0")}
    assert skipped(deps) == {"tiny-lib": "git: github.com/acme/tiny-lib/5f6e7d8c"}


def test_pnpm_v9_workspace_members_pin_different_versions():
    deps = js.pnpm_lock_deps(FIX / "pnpm-v9" / "pnpm-lock.yaml", "pnpm-lock.yaml")
    direct = {(d.name, d.version, d.origin) for d in deps if d.direct and not d.skip}
    assert direct == {
        ("turbo", "2.0.4", "pnpm-lock.yaml"),
        ("zod", "3.22.4", "pnpm-lock.yaml (apps/docs)"),
        ("zod", "3.23.8", "pnpm-lock.yaml (apps/web)"),
        ("react", "18.3.1", "pnpm-lock.yaml (apps/web)"),  # alias my-react
        ("react", "18.3.1", "pnpm-lock.yaml (packages/ui)"),
    }
    assert rows(deps, direct=False) == {("js-tokens", "4.0.0")}
    assert skipped(deps) == {"@repo/ui": "workspace member", "local-thing": "path: file:vendor/local-thing"}


def test_pnpm_v5_is_refused(tmp_path):
    lock = tmp_path / "pnpm-lock.yaml"
    lock.write_text("lockfileVersion: 5.4\n\nspecifiers:\n  react: ^18\n")
    with pytest.raises(LockfileError, match=r"lockfileVersion '5.4' is not supported \(6.0 to 9.0 are\)"):
        js.pnpm_lock_deps(lock, "pnpm-lock.yaml")


def test_pnpm_bad_yaml_names_line(tmp_path):
    lock = tmp_path / "pnpm-lock.yaml"
    lock.write_text("lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies: [unclosed\n")
    with pytest.raises(LockfileError, match=r"^pnpm-lock.yaml line \d+: invalid YAML"):
        js.pnpm_lock_deps(lock, "pnpm-lock.yaml")


def test_yarn_classic_aliases_git_and_shared_entries():
    deps = js.yarn_lock_deps(FIX / "yarn-classic" / "yarn.lock", "yarn.lock", {"": manifest("yarn-classic")})
    assert rows(deps, direct=True) == {("@babel/runtime", "7.24.7"), ("chalk", "4.1.2"),
                                        ("left-pad", "1.3.0"), ("jest", "29.7.0")}
    assert rows(deps, direct=False) == {("ansi-styles", "4.3.0"), ("regenerator-runtime", "0.14.1")}
    assert skipped(deps) == {"shared": "git: git+https://github.com/acme/shared.git#v1.2.0"}


def test_yarn_classic_garbage_names_line(tmp_path):
    lock = tmp_path / "yarn.lock"
    lock.write_text("# yarn lockfile v1\n\nchalk@^4.1.2:\n  version \"4.1.2\"\nthis is not yarn\n")
    with pytest.raises(LockfileError, match=r"^yarn.lock line 5: not a yarn.lock entry header"):
        js.yarn_lock_deps(lock, "yarn.lock", {})


def test_yarn_berry_workspaces_alias_patch_git():
    root = FIX / "yarn-berry"
    manifests = {"": manifest("yarn-berry"),
                 "packages/server": json.loads((root / "packages/server/package.json").read_text()),
                 "packages/client": json.loads((root / "packages/client/package.json").read_text())}
    deps = js.yarn_lock_deps(root / "yarn.lock", "yarn.lock", manifests)
    direct = {(d.name, d.version, d.origin) for d in deps if d.direct and not d.skip}
    assert direct == {("lodash", "4.17.21", "yarn.lock"), ("fastify", "4.28.1", "yarn.lock (packages/server)"),
                      ("dayjs", "1.10.0", "yarn.lock (packages/server)"),
                      ("axios", "1.7.2", "yarn.lock (packages/client)")}
    assert rows(deps, direct=False) == {("follow-redirects", "1.15.6"), ("resolve", "1.22.8")}
    assert skipped(deps) == {"client": "workspace member",
                             "utils": "url: https://github.com/acme/utils.git#commit=abc123"}


def test_yarn_berry_unknown_metadata_version(tmp_path):
    lock = tmp_path / "yarn.lock"
    lock.write_text("__metadata:\n  version: 99\n")
    with pytest.raises(LockfileError, match="yarn berry lockfile version 99 is not supported"):
        js.yarn_lock_deps(lock, "yarn.lock", {})


def test_bun_lock_jsonc_workspaces_nested_versions_alias_git():
    deps = js.bun_lock_deps(FIX / "bun" / "bun.lock", "bun.lock")
    direct = {(d.name, d.version, d.origin) for d in deps if d.direct and not d.skip}
    assert direct == {("hono", "4.4.7", "bun.lock"), ("@types/bun", "1.1.6", "bun.lock"),
                      ("hono", "3.12.12", "bun.lock (packages/shared)"),
                      ("zod", "3.23.8", "bun.lock (packages/shared)")}
    assert rows(deps, direct=False) == {("bun-types", "1.1.17")}
    assert skipped(deps) == {"from-git": "git: github:acme/from-git#main"}


def test_bun_lock_jsonc_keeps_comment_like_strings(tmp_path):
    lock = tmp_path / "bun.lock"
    lock.write_text('{"lockfileVersion": 1, "workspaces": {"": {"dependencies": {"x": "^1",},},},\n'
                    ' "packages": {"x": ["x@1.0.0", "https://r.example//path, ]", {}, "sha"],}}')
    deps = js.bun_lock_deps(lock, "bun.lock")
    assert rows(deps) == {("x", "1.0.0")}


def test_manifest_alone_gives_ranges_and_exact_pins():
    data = {"dependencies": {"react": "^18.2.0", "zod": "3.23.8", "ui": "workspace:*", "x": "npm:real@~1.1"},
            "devDependencies": {"vitest": "*"}}
    deps = {d.name: d for d in js.manifest_deps(data, "package.json", set())}
    assert deps["react"].wanted == "^18.2.0" and deps["react"].version is None
    assert deps["zod"].version == "3.23.8"
    assert deps["ui"].skip == "workspace: workspace:*"
    assert deps["real"].wanted == "~1.1"
    assert deps["vitest"].wanted == "*"


@pytest.mark.parametrize("folder", ["pnpm-v6", "pnpm-v9"])
def test_pnpm_fast_scanner_reads_what_yaml_reads(folder):
    import yaml

    from context_cli.sync.pnpm_scan import scan

    text = (FIX / folder / "pnpm-lock.yaml").read_text()
    full = yaml.safe_load(text)
    wanted = {k: ({p: {} for p in v} if k == "packages" else v) for k, v in full.items()
              if k in ("lockfileVersion", "importers", "packages", "dependencies", "devDependencies")}
    assert scan(text) == wanted


def test_pnpm_outside_the_fast_layout_falls_back_to_yaml(tmp_path):
    lock = tmp_path / "pnpm-lock.yaml"
    lock.write_text("lockfileVersion: '9.0'\nimporters:\n  .: {dependencies: {zod: {specifier: ^3, version: 3.23.8}}}\n")
    assert rows(js.pnpm_lock_deps(lock, "pnpm-lock.yaml")) == {("zod", "3.23.8")}
