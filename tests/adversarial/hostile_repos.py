"""Generators of hostile repositories: documentation trees whose links (symbolic, absolute or
by `..`) lead to files of the building machine, as a git repository, a plain folder, or an
archive of one. A secret word lives only in the files outside; a package built from any of
these must never contain it.
"""

from __future__ import annotations

import io
import os
import stat
import subprocess
import tarfile
import zipfile
from pathlib import Path

SECRET = "exfiltratedsecretword"
GOOD = "# Guide\n\nThe honest guide explains streaming and cancellation.\n"

# trick -> {path in the repository: link target}; "{out}" is the outside folder's absolute path,
# relative targets climb out of the repository (which sits two levels below the outside folder's parent).
TRICKS: dict[str, dict[str, str]] = {
    "docs_absolute": {"docs": "{out}"},
    "docs_dotdot": {"docs": "../outside"},
    "file_absolute": {"docs/leak.md": "{out}/secret.md"},
    "file_dotdot": {"docs/leak.md": "../../outside/secret.md"},
    "folder_in_docs": {"docs/more": "{out}"},
    "readme_link": {"README.md": "{out}/secret.md"},
    "gallery_header": {"examples/README.txt": "{out}/secret.md"},  # sphinx-gallery's folder header
}
# Files a trick needs besides its links: a Sphinx tree that loads sphinx-gallery, and one gallery script.
EXTRA: dict[str, dict[str, str]] = {
    "gallery_header": {"docs/conf.py": 'extensions = ["sphinx_gallery.gen_gallery"]\n',
                       "examples/plot_streams.py": '"""\nStreaming\n=========\n\nStreams records.\n"""\nprint(1)\n'},
}


def outside(parent: Path) -> Path:
    """A folder beside the repository holding the secret, as Markdown and as reStructuredText."""
    out = parent / "outside"
    out.mkdir(parents=True, exist_ok=True)
    (out / "secret.md").write_text(f"# Secret\n\nThe {SECRET} must never be indexed.\n", "utf-8")
    (out / "secret.rst").write_text(f"Secret\n======\n\nThe {SECRET} again.\n", "utf-8")
    return out


def repository(root: Path, trick: str, out: Path) -> Path:
    """A project (pyproject.toml, README, docs/guide.md) with the trick's links added."""
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "hostile"\nversion = "1.0.0"\n', "utf-8")
    links = TRICKS[trick]
    if "README.md" not in links:
        (root / "README.md").write_text("# Hostile\n\nA project whose readme explains streaming.\n\n"
                                        "## Usage\n\nCall `run()` to start and `cancel()` to stop.\n", "utf-8")
    if "docs" not in links:
        (root / "docs").mkdir()
        (root / "docs" / "guide.md").write_text(GOOD, "utf-8")
        (root / "docs" / "include.rst").write_text(  # includes resolve inside the root only
            f"Include\n=======\n\nText.\n\n.. include:: {out}/secret.rst\n\n.. literalinclude:: {out}/secret.md\n\n"
            ".. include:: ../../outside/secret.rst\n", "utf-8")
        (root / "docs" / "snippet.md").write_text(
            f'# Snippet\n\nText.\n\n--8<-- "../../outside/secret.md"\n\n--8<-- "{out}/secret.md"\n', "utf-8")
    for path, text in EXTRA.get(trick, {}).items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, "utf-8")
    for path, target in links.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target.format(out=out), root / path)
    return root


def git_repository(root: Path, trick: str, out: Path) -> Path:
    """The same project committed to a git repository (git keeps the links as links)."""
    repository(root, trick, out)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "hostile"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=env, capture_output=True)
    return root


def zip_of(root: Path) -> bytes:
    """A zip of the tree as GitHub's archives store it: links as members whose mode says link
    and whose content is the target."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for path in sorted(root.rglob("*")):
            rel = f"repo-main/{path.relative_to(root).as_posix()}"
            if ".git" in path.relative_to(root).parts:
                continue
            if path.is_symlink():
                info = zipfile.ZipInfo(rel)
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
                z.writestr(info, os.readlink(path))
            elif path.is_file():
                z.writestr(rel, path.read_bytes())
    return buf.getvalue()


def tgz_with_inside_link() -> bytes:
    """An npm tarball whose docs hold a link to another page of the same tree."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in (("package/package.json", b'{"name": "evil", "version": "1.0.0"}'),
                           ("package/docs/guide.md", GOOD.encode())):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("package/docs/alias.md")
        link.type, link.linkname = tarfile.SYMTYPE, "guide.md"
        tar.addfile(link)
    return buf.getvalue()
