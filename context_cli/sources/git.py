"""Git repositories as documentation sources.

Accepted forms: `https://…` (a `.git` URL or a GitHub/GitLab/Bitbucket/Codeberg repository
page), `ssh://…`, `git://…`, `git@host:owner/repo`, `file://…`, and forge browse URLs
`…/tree/<ref>[/path]` (GitLab `/-/tree/`, Bitbucket `/src/<ref>`, Codeberg/Gitea
`/src/branch|tag|commit/<ref>`), which give the repository, a ref and a docs path at once.

Only the one ref is fetched: a shallow, blob-less, sparse clone narrowed to the docs path
(found from the tree listing when not given), falling back to a plain shallow clone where the
server refuses filters. Clones go to a temp dir; the user's own working trees are never
touched. `GIT_TERMINAL_PROMPT=0`, a batch-mode SSH and a closed stdin mean git can never hang
waiting for credentials.

Which ref, and which version:
* `--tag` or a ref in the URL wins; its version comes from the ref (`v1.2.3` -> `1.2.3`,
  `pkg@1.2.3` -> `1.2.3`, `release-1.2` -> `1.2`).
* otherwise the newest stable tag from `git ls-remote --tags` (a note says so); with only
  pre-release tags, the newest of those.
* a full commit id (`/tree/<sha>`) is fetched by id; its version is the first 12 hex digits.
* a repository without version tags is built from its default branch as version `latest`
  (its commit is recorded, so the registry can still tell builds apart); an explicit branch
  that is not version-like (`/tree/next`) becomes the version `next`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ..environment import GIT_ALLOW_PROTOCOL
from ..errors import SourceError, redact
from ..versions import VERSION_RE, is_prerelease, version_key
from .base import Fetched, SourceOptions
from .http import safe_url

FORGES = {"github.com", "gitlab.com", "bitbucket.org", "codeberg.org"}
DEFAULT_BRANCHES = {"main", "master", "trunk", "default", "develop", "HEAD"}
_SCP_RE = re.compile(r"^(?P<user>[A-Za-z0-9._-]+)@(?P<host>[A-Za-z0-9.-]+):(?P<path>[^/].*)\Z")
_VERSION_TAIL_RE = re.compile(r"[0-9]+(?:\.[0-9]+)*(?:[-._+]?[0-9A-Za-z][0-9A-Za-z.+_-]*)?")
_SHA_RE = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})\Z")  # full ids only: servers refuse short ones
_TRANSIENT = ("could not resolve host", "connection timed out", "connection reset",
              "early eof", "the remote end hung up unexpectedly", "rpc failed",
              "operation timed out", "temporary failure", "failed to connect",
              "connection refused", "gnutls", "ssl_read")
CLONE_TIMEOUT = 900
LS_TIMEOUT = 120


@dataclass(frozen=True)
class GitSpec:
    """A repository URL plus what the source string said about ref and docs path."""

    url: str
    ref: str | None = None
    path: str | None = None
    ref_tail: tuple[str, ...] = ()  # browse-URL segments after the ref's first one (ref or path)


def parse_git_url(source: str) -> GitSpec | None:
    """Recognise a git source; None when the string is no git URL form we know."""
    s = source.strip()
    m = _SCP_RE.match(s)
    if m and "://" not in s:
        return GitSpec(url=s)
    try:
        p = urlsplit(s)
    except ValueError:
        return None
    scheme = p.scheme.lower()
    if scheme in ("ssh", "git", "git+ssh", "git+https", "file"):
        url = s[4:] if scheme.startswith("git+") else s
        return GitSpec(url=url)
    if scheme not in ("http", "https") or not p.hostname:
        return None
    host = p.hostname.lower()
    parts = [unquote(x) for x in p.path.split("/") if x]
    if host in FORGES and len(parts) >= 2:
        return _forge_spec(p.scheme, p.netloc, host, parts)
    if p.path.endswith(".git") or ".git/" in p.path:
        repo_path = p.path.split(".git", 1)[0] + ".git"
        return GitSpec(url=f"{p.scheme}://{p.netloc}{repo_path}")
    return None


def _forge_spec(scheme: str, netloc: str, host: str, parts: list[str]) -> GitSpec:
    owner, repo = parts[0], parts[1]
    rest = parts[2:]
    if host == "gitlab.com":  # groups nest: owner/sub/repo/-/tree/ref
        if "-" in parts:
            i = parts.index("-")
            owner, repo, rest = "/".join(parts[:i - 1]), parts[i - 1], parts[i + 1:]
        else:
            owner, repo, rest = "/".join(parts[:-1]), parts[-1], []
    repo = repo[:-4] if repo.endswith(".git") else repo
    url = f"{scheme}://{netloc}/{owner}/{repo}.git"
    after: list[str] = []
    if len(rest) >= 3 and rest[:2] == ["releases", "tag"]:
        return GitSpec(url=url, ref=rest[2])
    if len(rest) >= 2 and rest[0] in ("tree", "blob"):
        after = rest[1:]
    elif len(rest) >= 2 and rest[0] == "src":
        after = rest[1:]
        if after and after[0] in ("branch", "tag", "commit") and len(after) >= 2 and host != "bitbucket.org":
            after = after[1:]
    if not after:
        return GitSpec(url=url)
    path = "/".join(after[1:]) or None
    return GitSpec(url=url, ref=after[0], path=path, ref_tail=tuple(after[1:]))


def clean_url(url: str) -> str:
    """The remote URL as stored in a package: no credentials, no query, no local paths."""
    if _SCP_RE.match(url) and "://" not in url:
        return url
    try:
        p = urlsplit(url)
        p.port  # noqa: B018 - `ssh://git@host:owner/repo` (scp-style after a scheme) has no port
    except ValueError:
        return redact(url.split("?")[0].split("#")[0])
    if p.scheme == "file":
        return repo_name(url) or "repository"
    return safe_url(url)


def repo_name(url: str) -> str:
    """`https://github.com/pallets/flask.git` -> `flask`."""
    m = _SCP_RE.match(url)
    path = m.group("path") if m and "://" not in url else urlsplit(url).path
    last = [x for x in path.rstrip("/").split("/") if x]
    name = last[-1] if last else ""
    name = name[:-4] if name.endswith(".git") else name
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.").lower()


def version_from_ref(ref: str) -> str | None:
    """The version a tag or branch names, or None when it names none.

    `v1.2.3` -> `1.2.3`; `pkg@1.2.3` and `@scope/pkg@1.2.3` -> `1.2.3`; `release-1.2` ->
    `1.2`; `foo2-1.0` -> `1.0` (a version starts after a separator or a lone `v`).
    """
    s = ref.removeprefix("refs/tags/").removeprefix("refs/heads/")
    if "@" in s.lstrip("@"):
        s = s.rsplit("@", 1)[1]
    for i, ch in enumerate(s):
        if ch not in "0123456789":  # ASCII digits only: a `²` in a tag is no version
            continue
        prev = s[i - 1] if i else ""
        if i and prev not in "-_/@v":
            continue
        if prev == "v" and i >= 2 and s[i - 2] not in "-_/@":
            continue
        cand = s[i:]
        if _VERSION_TAIL_RE.fullmatch(cand) and VERSION_RE.match(cand):
            return cand
    return None


def ls_remote(url: str, *patterns: str, options: tuple[str, ...] = (),
              symref: bool = False, untrusted: bool = False) -> list[tuple[str, str]]:
    """`git ls-remote` lines as (sha, ref); with `symref`, a `ref: refs/heads/x` line has sha ''.

    The one way this project asks a remote what it has (the publisher too): same environment,
    retries and one-line errors as every other git call here.
    """
    guard = untrusted_config() if untrusted else []
    args = [*guard, "ls-remote", *options, *(["--symref"] if symref else []), "--", url, *patterns]
    out = []
    for line in run_git(args, timeout=LS_TIMEOUT, what=url).splitlines():
        left, _, right = line.partition("\t")
        if left.startswith("ref: "):
            out.append(("", left))
        elif right:
            out.append((left.strip(), right.strip()))
    return out


def list_tags(url: str, *, untrusted: bool = False) -> list[str]:
    """Tag names of a remote (peeled duplicates folded), via `git ls-remote --tags`."""
    return [ref[len("refs/tags/"):] for _, ref in ls_remote(url, options=("--tags", "--refs"), untrusted=untrusted)
            if ref.startswith("refs/tags/")]


def list_refs(url: str) -> set[str]:
    """Branch and tag names (used to split `/tree/feature/x/docs` into ref and path)."""
    refs = set()
    for _, ref in ls_remote(url, options=("--heads", "--tags", "--refs")):
        for prefix in ("refs/heads/", "refs/tags/"):
            if ref.startswith(prefix):
                refs.add(ref[len(prefix):])
    return refs


def newest_tag(tags: list[str]) -> tuple[str, str, bool] | None:
    """(tag, version, is_prerelease) of the newest version-like tag, preferring stable ones."""
    versioned = [(t, v) for t in tags if (v := version_from_ref(t))]
    if not versioned:
        return None
    stable = [(t, v) for t, v in versioned if not is_prerelease(v)]
    pool = stable or versioned
    tag, version = max(pool, key=lambda tv: (version_key(tv[1]), -len(tv[0])))
    return tag, version, not stable


def fetch_git(source: str, opts: SourceOptions) -> Fetched:
    """Clone one ref of the repository into a temp dir and describe it as a Fetched."""
    spec = parse_git_url(source)
    if spec is None:
        raise SourceError(f"{source}: not a git URL")
    notes: list[str] = []
    ref, docs_path = spec.ref, opts.path or spec.path
    if spec.ref_tail and ref and not opts.tag:
        ref, url_path = _split_ref(spec)
        docs_path = opts.path or url_path
    ref = opts.tag or ref
    version: str | None = None
    if ref and _SHA_RE.match(ref):
        version = ref[:12]
    elif ref:
        version = version_from_ref(ref)
        if version is None:
            version = "latest" if ref in DEFAULT_BRANCHES else _ref_label(ref)
    else:
        picked = _pick_tag(spec.url, opts, notes)
        if picked:
            ref, version = picked
        else:
            version = "latest"
            notes.append("no version tags found; building the default branch as version 'latest'")

    tmp = Path(tempfile.mkdtemp(prefix="context-git-"))
    checkout = tmp / "repo"
    try:
        docs_path = _clone(spec.url, ref, checkout, docs_path, near=opts.near, untrusted=opts.untrusted,
                           whole=not opts.require_docs)
        if opts.require_docs and not docs_path:
            raise SourceError(f"{clean_url(spec.url)} has no docs tree at {ref or 'its default branch'}")
        commit = run_git(["-C", str(checkout), "rev-parse", "HEAD"], timeout=60, what=source).strip()
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return Fetched(
        source_type="git", source_url=clean_url(spec.url), folder=checkout, docs_path=docs_path,
        name=repo_name(spec.url) or None, version=version, source_commit=commit or None,
        notes=notes, temp_dirs=[tmp],
    )


def _ref_label(ref: str) -> str:
    label = re.sub(r"[^A-Za-z0-9._+-]+", "-", ref).strip("-.")[:64]
    return label or "latest"


def _split_ref(spec: GitSpec) -> tuple[str, str | None]:
    """A browse URL's `a/b/c`: the longest prefix that is a real branch or tag is the ref."""
    segments = (spec.ref or "",) + spec.ref_tail
    try:
        refs = list_refs(spec.url)
    except SourceError:
        refs = set()
    for n in range(len(segments), 0, -1):
        cand = "/".join(segments[:n])
        if cand in refs:
            return cand, "/".join(segments[n:]) or None
    return segments[0], "/".join(segments[1:]) or None


def _pick_tag(url: str, opts: SourceOptions, notes: list[str]) -> tuple[str, str] | None:
    tags = list_tags(url, untrusted=opts.untrusted)
    best = newest_tag(tags)
    if best is None:
        return None
    tag, version, pre = best
    chooser = opts.choose_tag
    if opts.interactive and chooser is not None and sys.stdin.isatty():
        choice = chooser(sorted((t for t in tags if version_from_ref(t)),
                                key=lambda t: version_key(version_from_ref(t) or ""), reverse=True), tag)
        if choice and choice != tag:
            return choice, version_from_ref(choice) or _ref_label(choice)
    kind = "pre-release tag (no stable tag exists)" if pre else "stable tag"
    notes.append(f"no --tag given; using the newest {kind} {tag} (version {version})")
    return tag, version


def _clone(url: str, ref: str | None, dest: Path, docs_path: str | None, *, near: str | None = None,
           untrusted: bool = False, whole: bool = True) -> str | None:
    """Partial sparse clone of one ref (plain shallow clone where the server refuses that);
    returns the docs path: the one given, else the docs tree found in the listing. Without a
    docs tree the whole ref is checked out, unless not `whole`."""
    guard = untrusted_config() if untrusted else []
    branch = ["--branch", ref] if ref and not _SHA_RE.match(ref) else []
    if ref and _SHA_RE.match(ref):
        _fetch_commit(url, ref, dest, guard)
    else:
        try:
            run_git([*guard, "clone", "--quiet", "--depth", "1", "--no-tags", "--single-branch",
                      "--filter=blob:none", "--sparse", *branch, url, str(dest)],
                     timeout=CLONE_TIMEOUT, what=url, ref=ref)
        except SourceError as e:
            if getattr(e, "fatal", False):
                raise
            shutil.rmtree(dest, ignore_errors=True)
            run_git([*guard, "clone", "--quiet", "--depth", "1", "--no-tags", "--single-branch", *branch,
                      url, str(dest)], timeout=CLONE_TIMEOUT, what=url, ref=ref)
            _keep_guard(dest, guard)
            return docs_path or _docs_tree(dest, near)
    _keep_guard(dest, guard)
    return _narrow(dest, docs_path, near, whole, shown=url)


def check_out(dest: Path, folders: list[str]) -> None:
    """Add `folders` to a sparse checkout made by `fetch_git` (their files are fetched from
    its remote under the rules it was cloned with); a full checkout has them already."""
    if folders and (dest / ".git" / "info" / "sparse-checkout").exists():
        cone = run_git(["-C", str(dest), "config", "--default", "true", "--get", "core.sparseCheckoutCone"],
                       timeout=60, what=str(dest)).strip() == "true"
        patterns = folders if cone else [f"/{_literal(f.strip('/'))}/" for f in folders]
        run_git(["-C", str(dest), "sparse-checkout", "add", *patterns], timeout=CLONE_TIMEOUT, what=str(dest))


def _keep_guard(dest: Path, guard: list[str]) -> None:
    """Write the untrusted rules into the clone's config: the files a sparse checkout fetches
    later (its docs tree, the API's code) come from the remote under the same rules."""
    for key, _, value in (o.partition("=") for o in guard[1::2]):
        run_git(["-C", str(dest), "config", "--local", key, value], timeout=60, what=str(dest))


def _fetch_commit(url: str, sha: str, dest: Path, guard: list[str]) -> None:
    dest.mkdir(parents=True)
    run_git(["-C", str(dest), "init", "--quiet"], timeout=60, what=url)
    run_git(["-C", str(dest), "remote", "add", "origin", url], timeout=60, what=url)
    run_git([*guard, "-C", str(dest), "fetch", "--quiet", "--depth", "1", "origin", sha],
             timeout=CLONE_TIMEOUT, what=url, ref=sha)
    run_git([*guard, "-C", str(dest), "checkout", "--quiet", "FETCH_HEAD"], timeout=CLONE_TIMEOUT, what=url)


def _narrow(dest: Path, docs_path: str | None, near: str | None, whole: bool, *, shown: str) -> str | None:
    """Check out only the docs tree (plus top-level files) when it is given or found; a failure
    names `shown` (the repository), whose server sends the files' contents now, under the rules
    the clone keeps in its config (`_keep_guard`)."""
    if not (dest / ".git" / "info" / "sparse-checkout").exists():
        return docs_path or _docs_tree(dest, near)
    target = docs_path.strip("/") if docs_path else _docs_tree(dest, near)
    if target and target != ".":
        run_git(["-C", str(dest), "sparse-checkout", "set", *_docs_patterns(target)], timeout=CLONE_TIMEOUT,
                what=shown)
    elif target == "." or whole:  # (the root: a cone-mode `set .` would check out its top-level files only)
        run_git(["-C", str(dest), "sparse-checkout", "disable"], timeout=CLONE_TIMEOUT, what=shown)
    return docs_path or target


# Files of a docs tree that no parser reads (screenshots, recordings, fonts, archives): never
# fetched. A 4K wallpaper or a demo GIF costs more than the tree's every page (vitest's
# `docs/public/on-task-update.gif`, cva's `docs/latest/public/assets/img/wallpaper-4k.png`).
MEDIA = ("png", "jpg", "jpeg", "gif", "webp", "avif", "bmp", "ico", "tif", "tiff", "psd", "mp4", "webm",
         "mov", "avi", "mp3", "wav", "ogg", "woff", "woff2", "ttf", "otf", "eot", "pdf", "zip", "gz")


def _docs_patterns(target: str) -> list[str]:
    """`sparse-checkout set` arguments for the docs tree `target` and the top-level files, its
    media left out (non-cone patterns, in gitignore syntax: the last match wins); a name that
    patterns cannot say literally (a line break) keeps the cone-mode set of the whole tree."""
    if any(c in target for c in "\n\r"):
        return [target]
    folder = "/" + _literal(target) + "/"
    return ["--no-cone", "/*", "!/*/", folder, *(f"!{folder}**/*.{_any_case(ext)}" for ext in MEDIA)]


def _any_case(ext: str) -> str:
    """`ext` as a pattern of any letter case (`.Png` is as much an image as `.png`)."""
    return "".join(f"[{c}{c.upper()}]" if c.isalpha() else c for c in ext)


def _literal(path: str) -> str:
    """`path` as a gitignore pattern matching itself only (`docs/[lang]` has a glob in it)."""
    return re.sub(r"([\\*?\[\]!# ])", r"\\\1", path)


def _docs_tree(dest: Path, near: str | None) -> str | None:
    """The folder with the most doc pages (docsources.tree), from the full tree listing."""
    from .docsources.tree import best_tree

    listing = run_git(["-C", str(dest), "ls-tree", "-r", "--name-only", "-z", "HEAD"],
                      timeout=120, what=str(dest)).split("\0")
    return best_tree((p for p in listing if p), near=near)


def untrusted_config() -> list[str]:
    """git options for a repository named by package metadata: https and git transports only
    (plus what CONTEXT_GIT_ALLOW_PROTOCOL adds, e.g. `file` for tests serving snapshots through
    `url.<folder>.insteadOf`), no redirects (each hop would need the guard's check), no hooks,
    no submodules."""
    extra = [p for p in (GIT_ALLOW_PROTOCOL.value() or "").split(":") if re.fullmatch(r"[a-z+]+", p)]
    opts = ["protocol.allow=never", "http.followRedirects=false", "core.hooksPath=/dev/null",
            "submodule.recurse=false", "fetch.recurseSubmodules=false",
            *(f"protocol.{p}.allow=always" for p in ("https", "git", *extra))]
    return [arg for o in opts for arg in ("-c", o)]


def _git_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "",
        "SSH_ASKPASS": "",
        "GIT_SSH_COMMAND": env.get("GIT_SSH_COMMAND", "ssh") + " -o BatchMode=yes -o ConnectTimeout=20",
        "GIT_LFS_SKIP_SMUDGE": "1",
        "GIT_CONFIG_NOSYSTEM": "1",
        "LC_ALL": "C",
    })
    return env


class GitError(SourceError):
    """A git command that failed; `fatal` marks failures a fallback clone cannot fix."""

    def __init__(self, message: str, fatal: bool):
        super().__init__(message)
        self.fatal = fatal


def run_git(args: list[str], *, timeout: float, what: str, ref: str | None = None,
            retries: int = 2) -> str:
    """Run git; transient network failures are retried, the rest become one clear line."""
    shown = clean_url(what) if "://" in what or "@" in what else what
    for attempt in range(retries + 1):
        try:
            proc = subprocess.run(["git", *args], stdin=subprocess.DEVNULL, capture_output=True,
                                  text=True, timeout=timeout, env=_git_env())
        except FileNotFoundError:
            raise GitError("git is not installed; install git to add git sources", True) from None
        except subprocess.TimeoutExpired:
            raise GitError(f"{shown}: git timed out after {timeout:.0f}s", True) from None
        if proc.returncode == 0:
            return proc.stdout
        err = proc.stderr.lower()
        if any(t in err for t in _TRANSIENT) and attempt < retries:
            time.sleep(1.0 * (2 ** attempt))
            continue
        raise _explain(proc.stderr, shown, ref)
    raise AssertionError("unreachable")


def _host(url: str) -> str:
    m = _SCP_RE.match(url)
    if m and "://" not in url:
        return m.group("host")
    try:
        return urlsplit(url).hostname or "the git server"
    except ValueError:
        return "the git server"


def _explain(stderr: str, shown: str, ref: str | None) -> GitError:
    err = stderr.lower()
    missing = re.search(r"not our ref ([0-9a-f]{40})", err)
    if missing and (ref is None or not missing.group(1).startswith(ref.lower())):
        # A partial clone's checkout asked for a file the server does not have (a damaged or
        # trimmed copy of the repository): no ref was wrong.
        return GitError(f"{shown}: the server cannot send object {missing.group(1)[:12]}, which the "
                        "checkout needs (its copy of the repository is incomplete)", True)
    if "remote branch" in err and "not found" in err or "couldn't find remote ref" in err \
            or "not our ref" in err or "unadvertised object" in err:
        return GitError(f"{shown}: no branch, tag or commit named {ref!r}", True)
    if "does not appear to be a git repository" in err or "not a git repository" in err:
        return GitError(f"{shown}: not a git repository", True)
    if "repository not found" in err or "not found" in err and "repository" in err:
        return GitError(f"{shown}: repository not found (private? check the URL or your git credentials)", True)
    if "could not read username" in err or "authentication failed" in err or "permission denied" in err:
        return GitError(f"{shown}: access denied (the repository needs credentials git could not supply)", True)
    if "could not resolve host" in err or "failed to connect" in err or "connection refused" in err \
            or "timed out" in err:
        return GitError(f"{_host(shown)} unreachable (git could not connect for {shown})", True)
    if "filter" in err or "sparse" in err:
        return GitError(f"{shown}: server refused a partial clone", False)
    last = next((ln.strip() for ln in reversed(stderr.splitlines()) if ln.strip()), "git failed")
    return GitError(f"{shown}: {last.removeprefix('fatal: ')}", False)
