"""Registry definitions: which packages to build, for which versions, from which source.

Two layouts on disk, one model in memory.

**A directory tree** in Neuledge Context's layout, read as they read it:
`<root>/<registry>/<name>.yaml`, a scoped npm name as `<root>/npm/@scope/name.yaml`, a Maven
`group:artifact` as `<root>/maven/group_artifact.yaml`. The registry is the first folder; the
file's path must spell the `name` field.

**One `packages.yaml`**, keyed by registry; each list item is exactly the content of one
Neuledge file, so definitions move between the two layouts by copy and paste::

    npm:
      - name: react                      # unversioned: built from the default branch
        description: A JavaScript library for building user interfaces
        repository: https://github.com/facebook/react
        source: {type: git, url: https://github.com/reactjs/react.dev, docs_path: src/content}
      - name: next                       # versioned: ranges, first match wins
        versions:
          - min_version: "15.0.0"        # inclusive
            tag_pattern: "v{version}"    # default; the git tag of a release
            source: {type: git, url: https://github.com/vercel/next.js, docs_path: docs}
          - min_version: "9.0.0"
            max_version: "15.0.0"        # exclusive
            source: {type: git, url: https://github.com/vercel/next.js, docs_path: docs}
    pip:
      - name: click                      # ours: docs from each release's sdist
        source: {type: pypi, docs_path: docs}
    python:
      - name: python                     # explicit releases of a zipped doc site
        versions:
          - versions: ["3.13", "3.12"]
            source:
              type: zip
              url: "https://docs.python.org/{version}/archives/python-{version}-docs-html.zip"
              docs_path: "python-{version}-docs-html"
              exclude_paths: ["whatsnew/**"]

Ours too, beside a definition's source: `site`, the project's documentation site, read by the
docs-source ladder when the source gave no more than a README (a repository too large or out of
reach, a tarball without docs): `site: https://…` takes only the site's build of the exact
version (`/en/1.2.3/`, `/v1.2.3/`, its llms.txt there), and `site: {url: https://…, latest: true}`
also takes the site as it is now, labelled `latest` in the package (meta `docs_version`)::

    npm:
      - name: next
        site: {url: "https://nextjs.org/docs", latest: true}
        versions: [...]

Ours too, in a version range: `docs_version`, for a docs repository that is not tagged per
release but keeps one folder (or branch) per major version. The range's git source is read at
its `ref` (default branch when none) instead of a tag, and the package says what it covers::

    npm:
      - name: express
        versions:
          - min_version: "4.0.0"
            max_version: "5.0.0"
            docs_version: "4.x"
            source: {type: git, url: https://github.com/expressjs/expressjs.com, docs_path: src/content/docs/en/4x}

Sources: `git` (url, docs_path, ref only when unversioned or in a docs_version range, lang, exclude_paths), `zip` (url
and docs_path may hold `{version}`, exclude_paths), and ours, `pypi` and `npm` (docs_path,
`package` when the artefact's name differs from the definition's, exclude_paths). An artefact
source is versioned by nature: at the top level it means "every release", and in a range it
needs no `min_version`. `exclude_paths` are globs (`*` within a folder, `**` across folders)
relative to docs_path.

Unknown keys are tolerated with a warning, because Neuledge adds fields over time and a file
written for a newer schema should still load; `context-registry validate --strict` turns the
warnings into errors. An unknown source *type* is an error: it could not be built.
Version strings must be quoted in YAML (an unquoted `4.10` is the number 4.1).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

import yaml
from packaging.version import InvalidVersion, Version

from context_cli.errors import ContextError
from context_cli.package.identity import REGISTRY_RE
from context_cli.versions import VERSION_RE

DEFAULT_TAG_PATTERN = "v{version}"
SOURCE_TYPES = ("git", "zip", "pypi", "npm")
ARTEFACT_TYPES = ("pypi", "npm")

# Like identity.NAME_RE, plus ':' for Maven's group:artifact names.
NAME_RE = re.compile(r"^(@[A-Za-z0-9_][A-Za-z0-9._-]{0,99}/)?[A-Za-z0-9_][A-Za-z0-9._:-]{0,213}\Z")
_REF_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._/+-]{0,199}\Z")  # a branch or tag; never an option
_DOCS_VERSION_RE = re.compile(r"^\d[0-9A-Za-z.+-]{0,31}\Z")  # 4.x, 5, 2.0-2.7
# Maven's stable qualifiers (Spring's 5.3.0.RELEASE, Hibernate's 6.4.0.Final).
_MAVEN_FINAL_RE = re.compile(r"^(\d+(?:\.\d+)*)[.-](RELEASE|Final|GA)$", re.IGNORECASE)


class DefinitionError(ContextError):
    """Definitions that failed to load, or a request no definition can answer."""


# ---- model -------------------------------------------------------------------------------


@dataclass(frozen=True)
class GitSource:
    url: str
    docs_path: str | None = None
    ref: str | None = None  # unversioned only; in a range the tag comes from tag_pattern
    lang: str = "en"
    exclude_paths: tuple[str, ...] = ()
    type: ClassVar[str] = "git"


@dataclass(frozen=True)
class ZipSource:
    url: str  # may hold {version}
    docs_path: str | None = None  # may hold {version}
    lang: str = "en"
    exclude_paths: tuple[str, ...] = ()
    type: ClassVar[str] = "zip"


@dataclass(frozen=True)
class PypiSource:
    """Docs from the release's sdist: its docs folder, or `docs_path` inside it."""

    docs_path: str | None = None
    package: str | None = None  # PyPI name when it differs from the definition's
    lang: str = "en"
    exclude_paths: tuple[str, ...] = ()
    type: ClassVar[str] = "pypi"


@dataclass(frozen=True)
class NpmSource:
    """Docs from the release's tarball: its docs folder, else its README."""

    docs_path: str | None = None
    package: str | None = None
    lang: str = "en"
    exclude_paths: tuple[str, ...] = ()
    type: ClassVar[str] = "npm"


Source = GitSource | ZipSource | PypiSource | NpmSource


@dataclass(frozen=True)
class DocsSite:
    """A definition's documentation site: its build of the exact version, else (only when
    `latest`) the site as it is now, said to be so."""

    url: str
    latest: bool = False


@dataclass(frozen=True)
class VersionRange:
    """Releases min_version <= v < max_version, or an explicit list, built from one source.

    A range with neither bound nor list (only for artefact sources) covers every release.
    A range with `docs_version` reads a docs repository that is not tagged per release (one
    folder or branch per major version: expressjs.com's `4x/`): its git source is read at its
    `ref` (a branch or tag; the default branch when none), and the package records what the
    docs cover (`docs_version: 4.x`) instead of claiming the exact release.
    """

    source: Source
    min_version: str | None = None
    max_version: str | None = None
    versions: tuple[str, ...] = ()
    tag_pattern: str = DEFAULT_TAG_PATTERN
    docs_version: str | None = None

    @property
    def explicit(self) -> bool:
        return bool(self.versions)

    def contains(self, version: str) -> bool:
        if self.explicit:
            return version in self.versions
        v = parse_version(version)
        if v is None:
            return False
        if self.min_version is not None and v < _version(self.min_version):
            return False
        return self.max_version is None or v < _version(self.max_version)

    def tag_for(self, version: str) -> str:
        return self.tag_pattern.replace("{version}", version, 1)

    def describe(self) -> str:
        if self.explicit:
            return ", ".join(self.versions)
        if self.min_version is None:
            return "all releases"
        if self.max_version is None:
            return f"{self.min_version}+"
        return f"{self.min_version}-{self.max_version}"


@dataclass(frozen=True)
class Definition:
    registry: str
    name: str
    description: str | None = None
    repository: str | None = None
    versions: tuple[VersionRange, ...] = ()
    source: Source | None = None  # set only for unversioned definitions (built as "latest")
    origin: str = ""  # where it was read, for messages ("npm/react.yaml")
    site: DocsSite | None = None  # ours: the docs site the ladder may read (see the module doc)

    @property
    def key(self) -> str:
        return f"{self.registry}/{self.name}"

    @property
    def versioned(self) -> bool:
        return bool(self.versions)

    def range_for(self, version: str) -> VersionRange | None:
        """The first range (top to bottom) that covers `version`, as Neuledge resolves it."""
        return next((r for r in self.versions if r.contains(version)), None)

    def resolve_source(self, version: str | None = None) -> Source:
        """The source to build `version` from, with the tag and `{version}` filled in."""
        if not self.versioned:
            assert self.source is not None
            return self.source
        if version is None or version == "latest":
            raise DefinitionError(f"{self.key} is versioned; give a version to build")
        chosen = self.range_for(version)
        if chosen is None:
            ranges = "; ".join(r.describe() for r in self.versions)
            raise DefinitionError(f"{self.key}: no version range covers {version} ({ranges})")
        src = chosen.source
        if isinstance(src, GitSource) and chosen.docs_version is None:
            return replace(src, ref=chosen.tag_for(version))
        if isinstance(src, ZipSource):
            return replace(
                src,
                url=src.url.replace("{version}", version),
                docs_path=src.docs_path.replace("{version}", version) if src.docs_path else None,
            )
        return src


# ---- versions ------------------------------------------------------------------------------


def parse_version(text: str) -> Version | None:
    """An orderable version, or None for strings no registry would call a release number."""
    m = _MAVEN_FINAL_RE.match(text)
    try:
        return Version(m.group(1) if m else text)
    except (InvalidVersion, TypeError):
        return None


def is_stable(text: str) -> bool:
    """A release: an orderable release number (Maven's `.Final`/`.RELEASE` count) that is not a
    local build and that the project's one pre-release rule (`store.versions.is_prerelease`)
    does not call a pre-release."""
    from context_cli.versions import is_prerelease

    m = _MAVEN_FINAL_RE.match(text)
    v = parse_version(text)
    return v is not None and v.local is None and not is_prerelease(m.group(1) if m else text)


def matching_versions(
    vrange: VersionRange, tags: Iterable[str], *, include_prereleases: bool = False
) -> list[tuple[str, str]]:
    """The (version, tag) pairs among git `tags` that `vrange` builds, newest first.

    `tag_pattern` is Neuledge's template: `{version}` stands for the release number, the rest
    is literal (`v{version}`, `@tanstack/react-query@{version}`), and the version starts with
    a digit (so `{version}` does not take `v4.3.0` as version `v4.3.0`). Tags that do not fit the
    template, carry no parsable version or fall outside the bounds are left out; so are
    pre-releases unless asked for. When two tags name the same version (`v1.0`, `v1.0.0`)
    the first one seen wins.
    """
    prefix, _, suffix = vrange.tag_pattern.partition("{version}")
    pattern = re.compile(re.escape(prefix) + r"(?P<v>\d.*?)" + re.escape(suffix) + r"\Z")
    found: dict[Version, tuple[str, str]] = {}
    for tag in tags:
        m = pattern.match(tag)
        if not m:
            continue
        version = m.group("v")
        parsed = parse_version(version)
        if parsed is None or not vrange.contains(version):
            continue
        if not include_prereleases and not is_stable(version):
            continue
        found.setdefault(parsed, (version, tag))
    return [found[v] for v in sorted(found, reverse=True)]


def is_excluded(rel_path: str, patterns: Iterable[str]) -> bool:
    """Whether a file (its path relative to docs_path) matches one of `exclude_paths`.

    Neuledge's globs: `*` matches within one folder, `**` across folders, the rest is literal,
    and a pattern must match the whole path (`whatsnew/**`, `**/*-index.html`).
    """
    path = rel_path.replace("\\", "/").lstrip("/")
    return any(_glob_re(p).match(path) for p in patterns)


def _glob_re(pattern: str) -> re.Pattern[str]:
    parts = re.split(r"(\*\*|\*)", pattern)
    body = "".join(".*" if p == "**" else "[^/]*" if p == "*" else re.escape(p) for p in parts)
    return re.compile(body + r"\Z")


def _version(text: str) -> Version:
    v = parse_version(text)
    assert v is not None, text  # bounds are checked when definitions load
    return v


# ---- loading -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """One error or warning: where (file, field) and what."""

    file: str
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}: {self.field}" if self.field else self.file
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class LoadResult:
    definitions: tuple[Definition, ...]
    errors: tuple[Problem, ...] = ()
    warnings: tuple[Problem, ...] = ()


def load(path: Path | str) -> LoadResult:
    """Read a `packages.yaml`, a single definition file, or a Neuledge tree. Never raises
    for bad content: every problem is returned with its file and field."""
    path = Path(path)
    if path.is_dir():
        return _load_tree(path)
    if not path.is_file():
        return LoadResult((), (Problem(str(path), "", "no such file or folder"),))
    data, problem = read_yaml(path, path.name)
    if problem:
        return LoadResult((), (problem,))
    if isinstance(data, dict) and isinstance(data.get("name"), str):
        return _load_single(path, data)
    return _load_packages_yaml(path, data)


def load_definitions(path: Path | str) -> list[Definition]:
    """Like `load`, but all-or-nothing: any error raises `DefinitionError`."""
    result = load(path)
    if result.errors:
        more = f" (and {len(result.errors) - 1} more)" if len(result.errors) > 1 else ""
        raise DefinitionError(
            f"{result.errors[0]}{more}; run `context-registry validate {path}` to see all"
        )
    return list(result.definitions)


def find_definition(definitions: Iterable[Definition], spec: str) -> Definition:
    """The definition named `REGISTRY/NAME` (a bare NAME works when it is unambiguous)."""
    defs = list(definitions)
    registry, sep, name = spec.partition("/")
    if sep and not spec.startswith("@"):
        hits = [d for d in defs if d.registry == registry and d.name == name]
    else:
        hits = [d for d in defs if d.name == spec]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise DefinitionError(f"no definition for {spec}; see `context-registry list`")
    keys = ", ".join(d.key for d in hits)
    raise DefinitionError(f"{spec} is ambiguous ({keys}); write it as REGISTRY/NAME")


def parse_definition(
    data: Any, *, registry: str, label: str, expected_stem: str | None = None
) -> tuple[Definition | None, list[Problem], list[Problem]]:
    """Check one definition's fields; return it (or None) with its errors and warnings."""
    checker = _Checker(label)
    definition = checker.definition(data, registry, expected_stem)
    return (None if checker.errors else definition), checker.errors, checker.warnings


class _Checker:
    """Collects problems while turning one parsed YAML mapping into a `Definition`."""

    DEF_KEYS = {"name", "description", "repository", "versions", "source", "site"}
    RANGE_KEYS = {"min_version", "max_version", "versions", "tag_pattern", "source", "docs_version"}
    SOURCE_KEYS = {
        "git": {"type", "url", "docs_path", "ref", "lang", "exclude_paths"},
        "zip": {"type", "url", "docs_path", "lang", "exclude_paths"},
        "pypi": {"type", "docs_path", "package", "lang", "exclude_paths"},
        "npm": {"type", "docs_path", "package", "lang", "exclude_paths"},
    }

    def __init__(self, label: str):
        self.label = label
        self.errors: list[Problem] = []
        self.warnings: list[Problem] = []

    def error(self, where: str, message: str) -> None:
        self.errors.append(Problem(self.label, where, message))

    def unknown_keys(self, data: dict[str, Any], allowed: set[str], where: str) -> None:
        for key in data:
            if key not in allowed:
                at = f"{where}.{key}" if where else str(key)
                self.warnings.append(Problem(self.label, at, "unknown key (ignored)"))

    def definition(self, data: Any, registry: str, expected_stem: str | None) -> Definition | None:
        if not isinstance(data, dict):
            self.error("", "not a mapping of definition fields")
            return None
        self.unknown_keys(data, self.DEF_KEYS, "")
        name = self.string(data, "name", "name", required=True)
        if name is not None:
            if not NAME_RE.match(name) or ".." in name:
                self.error("name", f"{name!r} is not a valid package name")
            elif expected_stem is not None and expected_stem not in (name, name.replace(":", "_")):
                self.error(
                    "name", f"{name!r} does not match the file name (expected {expected_stem!r})"
                )
        description = self.string(data, "description", "description")
        repository = self.string(data, "repository", "repository")
        if repository is not None and not re.match(r"^https?://\S+$", repository):
            self.error("repository", f"{repository!r} is not an http(s) URL")
        versions: tuple[VersionRange, ...] = ()
        source = None
        if "versions" in data and "source" in data:
            self.error("source", "not allowed together with versions (use one or the other)")
        elif "versions" in data:
            versions = self.ranges(data["versions"])
        elif "source" in data:
            source = self.source(data["source"], "source", in_range=False)
            if isinstance(source, (PypiSource, NpmSource)):
                versions, source = (VersionRange(source=source),), None
        else:
            self.error("versions", "required (or one unversioned source)")
        site = self.site(data.get("site"))
        if name is None or self.errors:
            return None
        return Definition(registry, name, description, repository, versions, source, self.label, site)

    def site(self, data: Any) -> DocsSite | None:
        if data is None:
            return None
        if isinstance(data, str):
            data = {"url": data}
        if not isinstance(data, dict):
            self.error("site", "must be a URL or a mapping (url, latest)")
            return None
        self.unknown_keys(data, {"url", "latest"}, "site")
        url = self.string(data, "url", "site.url", required=True)
        latest = data.get("latest", False)
        if not isinstance(latest, bool):
            self.error("site.latest", f"must be true or false, not {latest!r}")
        if url is not None and not re.match(r"^https?://[^\s/]+\S*$", url):
            self.error("site.url", f"{url!r} is not an http(s) URL")
            return None
        return DocsSite(url, latest is True) if url is not None else None

    def ranges(self, data: Any) -> tuple[VersionRange, ...]:
        if not isinstance(data, list) or not data:
            self.error("versions", "must be a non-empty list of version ranges")
            return ()
        out = []
        for i, item in enumerate(data):
            r = self.range(item, f"versions[{i}]")
            if r is not None:
                out.append(r)
        return tuple(out)

    def range(self, data: Any, where: str) -> VersionRange | None:
        if not isinstance(data, dict):
            self.error(where, "must be a mapping (min_version, source, ...)")
            return None
        self.unknown_keys(data, self.RANGE_KEYS, where)
        before = len(self.errors)
        min_v = self.version_field(data, "min_version", where)
        max_v = self.version_field(data, "max_version", where)
        explicit = self.explicit_versions(data, where)
        pattern = self.string(data, "tag_pattern", f"{where}.tag_pattern") or DEFAULT_TAG_PATTERN
        if pattern.count("{version}") != 1:
            self.error(f"{where}.tag_pattern", "must contain {version} exactly once")
        if "source" not in data:
            self.error(f"{where}.source", "required")
            return None
        docs_version = self.docs_version(data, where)
        source = self.source(data["source"], f"{where}.source", in_range=True, at_ref=docs_version is not None)
        if docs_version is not None and source is not None and not isinstance(source, GitSource):
            self.error(f"{where}.docs_version", "only for a git source (a docs repository read at a branch)")
        if docs_version is not None and "tag_pattern" in data:
            self.error(f"{where}.tag_pattern", "not with docs_version (a docs repository is not tagged per release)")
        if explicit and (min_v or max_v):
            self.error(f"{where}.versions", "use either versions or min_version/max_version")
        elif "versions" not in data and "min_version" not in data and source is not None:
            if not isinstance(source, (PypiSource, NpmSource)):
                self.error(f"{where}.min_version", "required (or an explicit versions list)")
        if min_v and max_v and _version(max_v) <= _version(min_v):
            self.error(f"{where}.max_version", f"{max_v!r} is not above min_version {min_v!r}")
        if source is None or len(self.errors) > before:
            return None
        return VersionRange(source, min_v, max_v, explicit, pattern, docs_version)

    def docs_version(self, data: dict[str, Any], where: str) -> str | None:
        value = self.string(data, "docs_version", f"{where}.docs_version")
        if value is None:
            return None
        if value == "latest" or not _DOCS_VERSION_RE.match(value):
            self.error(f"{where}.docs_version", f"{value!r} is not a version label such as \"4.x\" "
                       "(an unversioned source is what `latest` means)")
            return None
        return value

    def version_field(self, data: dict[str, Any], key: str, where: str) -> str | None:
        if key not in data or data[key] is None:
            return None
        value = data[key]
        if not isinstance(value, str):
            self.error(
                f"{where}.{key}",
                f"must be a quoted string, not {value!r} (YAML reads 4.10 as 4.1)",
            )
            return None
        if parse_version(value) is None:
            self.error(f"{where}.{key}", f"{value!r} is not a version number")
            return None
        return value

    def explicit_versions(self, data: dict[str, Any], where: str) -> tuple[str, ...]:
        if "versions" not in data:
            return ()
        value = data["versions"]
        at = f"{where}.versions"
        if not isinstance(value, list) or not value:
            self.error(at, "must be a non-empty list of quoted version strings")
            return ()
        out = []
        for i, v in enumerate(value):
            if not isinstance(v, str):
                self.error(f"{at}[{i}]", f"must be a quoted string, not {v!r}")
            elif v == "latest" or not VERSION_RE.match(v) or ".." in v:
                self.error(f"{at}[{i}]", f"{v!r} cannot be a release version")
            else:
                out.append(v)
        return tuple(out)

    def source(self, data: Any, where: str, *, in_range: bool, at_ref: bool = False) -> Source | None:
        """One source; `at_ref`: a docs range's git source, read at its `ref` (not a tag per release)."""
        if not isinstance(data, dict):
            self.error(where, "must be a mapping with a type")
            return None
        kind = data.get("type")
        if kind is None:
            self.error(f"{where}.type", f"required ({', '.join(SOURCE_TYPES)})")
            return None
        if kind not in SOURCE_TYPES:
            expected = ", ".join(SOURCE_TYPES)
            self.error(f"{where}.type", f"unknown type {kind!r} (expected {expected})")
            return None
        self.unknown_keys(data, self.SOURCE_KEYS[kind], where)
        before = len(self.errors)
        docs_path = self.rel_path(data, "docs_path", where)
        lang = self.string(data, "lang", f"{where}.lang") or "en"
        excludes = self.globs(data, where)
        if kind in ("git", "zip"):
            url = self.url(data, where, kind)
            if kind == "zip" and not in_range and url and "{version}" in url + (docs_path or ""):
                self.error(f"{where}.url", "uses {version} but the definition has no versions")
            if kind == "git":
                ref = self.string(data, "ref", f"{where}.ref")
                if ref is not None and (not _REF_RE.match(ref) or ".." in ref):
                    self.error(f"{where}.ref", f"{ref!r} is not a branch or tag name")
                if ref is not None and in_range and not at_ref:
                    self.error(f"{where}.ref", "not allowed in a version range (tag_pattern names the tag) "
                               "unless the range has docs_version")
                if len(self.errors) > before or url is None:
                    return None
                return GitSource(url, docs_path, ref, lang, excludes)
            if len(self.errors) > before or url is None:
                return None
            return ZipSource(url, docs_path, lang, excludes)
        package = self.string(data, "package", f"{where}.package")
        if package is not None and not NAME_RE.match(package):
            self.error(f"{where}.package", f"{package!r} is not a valid package name")
        if len(self.errors) > before:
            return None
        cls = PypiSource if kind == "pypi" else NpmSource
        return cls(docs_path, package, lang, excludes)

    def string(self, data: dict[str, Any], key: str, where: str, *, required: bool = False) -> str | None:
        value = data.get(key)
        if value is None:
            if required:
                self.error(where, "required")
            return None
        if not isinstance(value, str) or not value.strip():
            self.error(where, f"must be a non-empty string, not {value!r}")
            return None
        return value

    def url(self, data: dict[str, Any], where: str, kind: str) -> str | None:
        url = self.string(data, "url", f"{where}.url", required=True)
        if url is None:
            return None
        schemes = r"(https?|file|ssh|git)://" if kind == "git" else r"(https?|file)://"
        scp_like = kind == "git" and re.match(r"^[\w.-]+@[\w.-]+:\S+$", url)
        if not (re.match(schemes + r"\S+$", url) or scp_like):
            self.error(f"{where}.url", f"{url!r} is not a {kind} URL")
            return None
        return url

    def rel_path(self, data: dict[str, Any], key: str, where: str) -> str | None:
        value = self.string(data, key, f"{where}.{key}")
        if value is None:
            return None
        parts = value.replace("\\", "/").split("/")
        if value.startswith(("/", "\\")) or ".." in parts or re.match(r"^[A-Za-z]:", value):
            self.error(f"{where}.{key}", f"{value!r} must be a relative path inside the source")
            return None
        return value.strip("/")

    def globs(self, data: dict[str, Any], where: str) -> tuple[str, ...]:
        value = data.get("exclude_paths")
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            self.error(f"{where}.exclude_paths", "must be a list of glob strings")
            return ()
        return tuple(value)


MAX_YAML_DEPTH = 64  # definitions need about six levels
_OPENS = (yaml.FlowSequenceStartToken, yaml.FlowMappingStartToken, yaml.BlockSequenceStartToken,
          yaml.BlockMappingStartToken)
_CLOSES = (yaml.FlowSequenceEndToken, yaml.FlowMappingEndToken, yaml.BlockEndToken)


def _yaml_error(e: yaml.YAMLError) -> str:
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None) or str(e)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
    return "invalid YAML (" + where + " ".join(str(problem).split()) + ")"


def read_yaml(path: Path, label: str) -> tuple[Any, Problem | None]:
    """Parse one YAML file; a syntax or read error becomes a `Problem`, never an exception.

    Aliases are refused: definitions never need them, and nested aliases (a "billion laughs"
    file) make a small file expand into an unbounded amount of work for every check. So is
    nesting past `MAX_YAML_DEPTH`: PyYAML's scanner slows quadratically with depth (3,000
    nested `[` take seconds), so the token scan stops as soon as it gets that deep.
    """
    try:
        text = path.read_text(encoding="utf-8")
        depth = 0
        for t in yaml.scan(text):
            if isinstance(t, yaml.AliasToken):
                return None, Problem(label, "", "YAML aliases (*name) are not allowed in definitions; write them out")
            depth += isinstance(t, _OPENS) - isinstance(t, _CLOSES)
            if depth > MAX_YAML_DEPTH:
                return None, Problem(label, "", "YAML nested too deeply")
        return yaml.safe_load(text), None
    except yaml.YAMLError as e:
        return None, Problem(label, "", _yaml_error(e))
    except RecursionError:
        return None, Problem(label, "", "YAML nested too deeply")
    except (OSError, UnicodeDecodeError) as e:
        return None, Problem(label, "", f"cannot read: {getattr(e, 'strerror', None) or e}")


def is_registry_name(name: str) -> bool:
    return bool(REGISTRY_RE.match(name))


@dataclass
class _Collected:
    """Definitions gathered across files, with duplicate detection."""

    definitions: list[Definition] = field(default_factory=list)
    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    seen: dict[str, str] = field(default_factory=dict)

    def add(self, result: tuple[Definition | None, list[Problem], list[Problem]]) -> None:
        definition, errors, warnings = result
        self.errors += errors
        self.warnings += warnings
        if definition is None:
            return
        if definition.key in self.seen:
            self.errors.append(
                Problem(
                    definition.origin,
                    "name",
                    f"duplicate of {definition.key} in {self.seen[definition.key]}",
                )
            )
            return
        self.seen[definition.key] = definition.origin
        self.definitions.append(definition)

    def result(self) -> LoadResult:
        defs = sorted(self.definitions, key=lambda d: (d.registry, d.name))
        return LoadResult(tuple(defs), tuple(self.errors), tuple(self.warnings))


_SUFFIXES = (".yaml", ".yml")
_NOT_A_REGISTRY = "not a registry name (lowercase letters, digits, - and _)"


def _load_tree(root: Path) -> LoadResult:
    """Neuledge's layout: `<registry>/<name>.yaml` and `<registry>/@scope/<name>.yaml`."""
    found = _Collected()
    for reg_dir in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        registry = reg_dir.name
        if not is_registry_name(registry):
            found.errors.append(Problem(f"{registry}/", "", _NOT_A_REGISTRY))
            continue
        for path in _yaml_files(reg_dir, found):
            label = path.relative_to(root).as_posix()
            stem = path.relative_to(reg_dir).with_suffix("").as_posix()
            data, problem = read_yaml(path, label)
            if problem:
                found.errors.append(problem)
                continue
            found.add(parse_definition(data, registry=registry, label=label, expected_stem=stem))
    if not found.definitions and not found.errors:
        found.errors.append(
            Problem(str(root), "", "no definitions found (expected <registry>/<name>.yaml)")
        )
    return found.result()


def _yaml_files(reg_dir: Path, found: _Collected) -> list[Path]:
    files = []
    for entry in sorted(reg_dir.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_file() and entry.suffix in _SUFFIXES:
            files.append(entry)
        elif entry.is_dir() and entry.name.startswith("@"):
            files += sorted(p for p in entry.iterdir() if p.is_file() and p.suffix in _SUFFIXES)
        elif entry.is_dir():
            label = f"{reg_dir.name}/{entry.name}/"
            found.warnings.append(
                Problem(label, "", "ignored (only @scope folders hold definitions)")
            )
    return files


def _load_single(path: Path, data: dict[str, Any]) -> LoadResult:
    """One Neuledge file given on its own: the registry is its folder (or its scope's parent)."""
    parent = path.parent
    scope = parent.name if parent.name.startswith("@") else None
    reg_dir = parent.parent if scope else parent
    stem = f"{scope}/{path.stem}" if scope else path.stem
    label = f"{reg_dir.name}/{stem}{path.suffix}"
    if not is_registry_name(reg_dir.name):
        problem = Problem(label, "", "a single definition file must sit in a <registry>/ folder")
        return LoadResult((), (problem,))
    found = _Collected()
    found.add(parse_definition(data, registry=reg_dir.name, label=label, expected_stem=stem))
    return found.result()


def _load_packages_yaml(path: Path, data: Any) -> LoadResult:
    """Our single file: `{registry: [definition, ...], ...}`."""
    found = _Collected()
    if data is None:
        data = {}
    if not isinstance(data, dict):
        problem = Problem(path.name, "", "must map registry names to lists of definitions")
        return LoadResult((), (problem,))
    for registry, items in data.items():
        if not isinstance(registry, str) or not is_registry_name(registry):
            found.errors.append(Problem(path.name, str(registry), _NOT_A_REGISTRY))
            continue
        if not isinstance(items, list):
            found.errors.append(Problem(path.name, registry, "must be a list of definitions"))
            continue
        for i, item in enumerate(items):
            name = item.get("name") if isinstance(item, dict) else None
            named = isinstance(name, str) and name.strip()
            where = f"{registry}/{name}" if named else f"{registry}[{i}]"
            found.add(parse_definition(item, registry=registry, label=f"{path.name}: {where}"))
    if not found.definitions and not found.errors:
        found.errors.append(Problem(path.name, "", "no definitions found"))
    return found.result()
