"""Generators of hostile projects for `context sync`: lockfiles that expand, lie about their
versions, lead out of the project, or carry credentials and terminal escapes.

Each function writes into a project folder and returns it (or the secret it hid), cheaply:
a billion-laughs file is a kilobyte, a too-large lockfile is sparse.
"""

from __future__ import annotations

import json
from pathlib import Path

SECRET = "adversarial-secret-line-9f3a"  # a line of a file outside the project that must never be shown
TOKEN = "ghp_adversarialToken1234"
ESCAPES = "\x1b]52;c;ZXZpbA==\x07\x1b[2J\x9b31m"  # OSC 52 (write the clipboard), clear screen, C1 CSI


def laughs(levels: int = 9, width: int = 9) -> tuple[str, str]:
    """YAML anchors, each a list of `width` aliases of the one before: `levels` levels stand for
    width**levels strings in a kilobyte. Returns (anchor lines, the last alias)."""
    lol = ", ".join(['"lol"'] * width)
    lines = [f"l0: &l0 [{lol}]"]
    for i in range(1, levels):
        refs = ", ".join([f"*l{i - 1}"] * width)
        lines.append(f"l{i}: &l{i} [{refs}]")
    return "\n".join(lines), f"*l{levels - 1}"


def pnpm_laughs(root: Path, levels: int = 9) -> Path:
    """A pnpm-lock.yaml whose one dependency's version is a billion laughs (flow style, so
    pnpm's own layout scanner hands it to the YAML parser)."""
    anchors, alias = laughs(levels)
    (root / "pnpm-lock.yaml").write_text(
        f"lockfileVersion: '9.0'\n{anchors}\n"
        f'importers: {{".": {{dependencies: {{left-pad: {{specifier: "1", version: {alias}}}}}}}}}\n', "utf-8")
    return root


def yarn_berry_laughs(root: Path, levels: int = 9) -> Path:
    """A yarn berry (YAML) lockfile whose entry's resolution is a billion laughs."""
    anchors, alias = laughs(levels)
    (root / "package.json").write_text(json.dumps({"name": "app", "dependencies": {"left-pad": "^1.0.0"}}), "utf-8")
    (root / "yarn.lock").write_text(
        f"__metadata:\n  version: 8\n{anchors}\n"
        f'"left-pad@npm:^1.0.0": {{version: 1.3.0, resolution: {alias}}}\n', "utf-8")
    return root


def long_version_lockfiles(root: Path, digits: int = 5000) -> Path:
    """A version of `digits` digits in each ecosystem's lockfile, and a range as long."""
    v = "1" * digits
    (root / "requirements.txt").write_text(f"httpx=={v}\n", "utf-8")
    (root / "package.json").write_text(json.dumps({"name": "app", "dependencies": {"zod": f"^{v}"}}), "utf-8")
    (root / "mix.lock").write_text(f'%{{"jason": {{:hex, :jason, "{v}", "abc", [:mix], [], "hexpm", "def"}}}}\n',
                                   "utf-8")
    return root


def outside_file(outside: Path) -> Path:
    """A file elsewhere on the machine (outside any project) holding a secret line."""
    outside.mkdir(parents=True, exist_ok=True)
    secret = outside / "secret.txt"
    secret.write_text(f"{SECRET}\n", "utf-8")
    return secret


def linked_requirements(root: Path, secret: Path) -> Path:
    """requirements.txt is a symbolic link to a file outside the project."""
    (root / "requirements.txt").symlink_to(secret)
    return root


def include_outside(root: Path, secret: Path, relative: bool) -> Path:
    """requirements.txt includes a file outside the project, by absolute or by ../ path."""
    target = Path("..") / ".." / secret.parent.name / secret.name if relative else secret
    (root / "requirements.txt").write_text(f"httpx==0.27.2\n-r {target}\n", "utf-8")
    return root


def linked_workspace_member(root: Path, outside: Path) -> Path:
    """An npm workspace member folder that is a link to a folder outside the project."""
    (outside / "member").mkdir(parents=True, exist_ok=True)
    (outside / "member" / "package.json").write_text(json.dumps({"name": SECRET}), "utf-8")
    (root / "packages").mkdir()
    (root / "packages" / "evil").symlink_to(outside / "member", target_is_directory=True)
    (root / "package.json").write_text(json.dumps({"name": "app", "workspaces": ["packages/*"]}), "utf-8")
    return root


def credentials_in_requirements(root: Path) -> Path:
    """Requirements whose URLs carry a password, a token as user, and a token parameter."""
    (root / "requirements.txt").write_text(
        f"private @ git+https://bob:{TOKEN}@github.com/acme/private.git\n"
        f"-e git+https://{TOKEN}@github.com/acme/other.git#egg=other\n"
        f"wheel @ https://files.example.com/wheel-1.0-py3-none-any.whl?token={TOKEN}\n"
        f"--extra-index-url https://bob:{TOKEN}@pypi.example.com/simple\n", "utf-8")
    return root


def escapes_in_lockfile(root: Path) -> Path:
    """A package-lock.json whose package names and versions carry terminal escapes."""
    name = f"evil{ESCAPES}"
    (root / "package.json").write_text(json.dumps({"name": "app", "dependencies": {name: "1.0.0"}}), "utf-8")
    (root / "package-lock.json").write_text(json.dumps({"lockfileVersion": 3, "packages": {
        "": {"name": "app", "dependencies": {name: "1.0.0"}},
        f"node_modules/{name}": {"version": f"1.0.0{ESCAPES}", "resolved": f"https://x/{ESCAPES}.tgz"}}}), "utf-8")
    return root


def oversized_lockfile(root: Path, name: str, size: int) -> Path:
    """A sparse lockfile of `size` bytes (no disk used): its size alone must refuse it."""
    with open(root / name, "wb") as f:
        f.truncate(size)
    return root
